// The tracking script served at GET /js/script.js, kept as a string so it is the same bytes under
// tsx/vitest (from src/) and in the esbuild bundle (dist/) without a loader or a file to copy.
// It is plain ES2017 with no dependency, and posts to /api/events what the public `datafast` web
// SDK (v3) posts: the same payload fields, the same cookies for the visitor and the session (so a
// site switching between the SDK and this script keeps its visitors), the same bot and localhost
// rules. Inside the string: no backquote and no dollar-brace, since it is a template literal.

export const TRACKER_SCRIPT = String.raw`/*! Sightline tracker: sends what the datafast SDK v3 sends. */
(function () {
  'use strict';
  var w = window, d = document, nav = navigator;
  var tag = d.currentScript || d.querySelector('script[data-website-id]');
  if (!tag || w.__sightlineLoaded) return;
  var websiteId = tag.getAttribute('data-website-id');
  if (!websiteId) return;
  w.__sightlineLoaded = true;

  var flag = function (name) {
    var value = tag.getAttribute(name);
    return value !== null && value !== 'false';
  };
  var domain = tag.getAttribute('data-domain') || location.hostname;
  var apiBase = tag.getAttribute('data-api-url') || new URL(tag.src, location.href).origin;
  var endpoint = apiBase.replace(/\/+$/, '') + '/api/events';
  var queued = (w.datafast && w.datafast.q) || [];

  // The SDK's isLikelyBot, rule for rule; the rule that matched, for data-debug ('' for none).
  function likelyBot() {
    try {
      if (nav.webdriver === true) return 'navigator.webdriver is true';
      if (w.callPhantom || w._phantom || w.__nightmare) return 'a PhantomJS or Nightmare global';
      var ua = (nav.userAgent || '').toLowerCase();
      if (ua.length < 5 || ua === 'undefined') return 'no user agent';
      var patterns = ['headlesschrome', 'phantomjs', 'selenium', 'webdriver', 'puppeteer', 'playwright',
        'python', 'curl', 'wget', 'java/', 'go-http', 'node.js', 'axios', 'postman'];
      for (var i = 0; i < patterns.length; i++) {
        if (ua.indexOf(patterns[i]) !== -1) return 'the user agent contains "' + patterns[i] + '"';
      }
      var globals = ['__webdriver_evaluate', '__selenium_evaluate', '__webdriver_script_function',
        '__webdriver_unwrapped', '__fxdriver_evaluate', '__driver_evaluate', '_Selenium_IDE_Recorder',
        '_selenium', 'calledSelenium', '$cdc_asdjflasutopfhvcZLmcfl_'];
      for (var j = 0; j < globals.length; j++) {
        if (w[globals[j]] !== undefined) return 'the automation global ' + globals[j];
      }
      var root = d.documentElement;
      if (root && (root.getAttribute('webdriver') || root.getAttribute('selenium') || root.getAttribute('driver'))) {
        return 'an automation attribute on <html>';
      }
    } catch (e) {
      return '';
    }
    return '';
  }

  function isLocalhost(host) {
    var h = (host || '').toLowerCase();
    return h === 'localhost' || h === '::1' || h === '[::1]' || /^127(\.\d+){0,3}$/.test(h) ||
      /\.local$/.test(h) || /\.localhost$/.test(h);
  }

  var debug = flag('data-debug');
  function disabled(reason) {
    // Calls still work (and do nothing), so a page never breaks on an untracked host.
    w.datafast = function () {};
    if (debug && w.console) console.log('[Sightline] not tracking: ' + reason);
  }

  var ignored = false;
  try { ignored = localStorage.getItem('datafast_ignore') === 'true'; } catch (e) { /* storage blocked */ }
  var bot = likelyBot();
  if (bot) return disabled('an automated browser or bot (' + bot + ')');
  if (ignored) return disabled('datafast_ignore is set');
  if (w !== w.parent && !flag('data-allow-iframe')) return disabled('inside an iframe');
  if ((isLocalhost(location.hostname) || location.protocol === 'file:') && !flag('data-allow-localhost')) {
    return disabled('localhost or file://');
  }

  // Cookies as the SDK's hybrid storage keeps them: on the site's domain, the session for 30 min.
  var DAY = 864e5, SESSION_MS = 30 * 60 * 1000;
  function setCookie(name, value, days) {
    var text = name + '=' + encodeURIComponent(value) + '; expires=' + new Date(Date.now() + days * DAY).toUTCString() + '; path=/';
    var host = location.hostname;
    if (!isLocalhost(host) && location.protocol !== 'file:') {
      var own = host === domain || host.slice(-domain.length - 1) === '.' + domain;
      text += '; domain=.' + (own ? domain : host).replace(/^\./, '');
    }
    text += '; SameSite=Lax';
    d.cookie = text;
  }
  function getCookie(name) {
    var parts = d.cookie.split(';');
    for (var i = 0; i < parts.length; i++) {
      var part = parts[i].replace(/^\s+/, '');
      if (part.indexOf(name + '=') === 0) {
        try { return decodeURIComponent(part.slice(name.length + 1)); } catch (e) { return null; }
      }
    }
    return null;
  }
  function newId(prefix) {
    return prefix + 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, function (c) {
      var r = (Math.random() * 16) | 0;
      return (c === 'x' ? r : (r & 3) | 8).toString(16);
    });
  }
  var VISITOR = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

  var visitorId = getCookie('datafast_visitor_id');
  if (!visitorId || !VISITOR.test(visitorId)) visitorId = newId('');
  setCookie('datafast_visitor_id', visitorId, 365);
  var firstSeen = getCookie('datafast_visitor_first_seen_at');
  if (!firstSeen || !(Date.parse(firstSeen) > 0)) firstSeen = new Date().toISOString();
  setCookie('datafast_visitor_first_seen_at', firstSeen, 365);
  var sessionNumber = parseInt(getCookie('datafast_visitor_session_count') || '', 10) || 0;
  var sessionId = null;

  // A session lasts while events come less than 30 minutes apart (the SDK's ensureActiveSession).
  function activeSession() {
    var stored = getCookie('datafast_session_id');
    var start = parseInt(getCookie('datafast_session_start') || '0', 10);
    var now = Date.now();
    if (!stored || !/^s[0-9a-f-]{36}$/i.test(stored) || now - start > SESSION_MS) {
      stored = newId('s');
      sessionNumber = Math.min(sessionNumber + 1, 1e6);
      setCookie('datafast_visitor_session_count', String(sessionNumber), 365);
    } else if (!sessionNumber) {
      sessionNumber = 1;
      setCookie('datafast_visitor_session_count', '1', 365);
    }
    sessionId = stored;
    setCookie('datafast_session_id', sessionId, 1 / 48);
    setCookie('datafast_session_start', String(now), 1 / 48);
    return sessionId;
  }

  var AD_CLICK_KEYS = ['gclid', 'gclsrc', 'wbraid', 'gbraid', 'li_fat_id', 'fbclid', 'msclkid', 'ttclid', 'twclid'];
  function payload(type, extraData) {
    var timezone = 'UTC';
    try { timezone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch (e) { /* old engine */ }
    var body = {
      websiteId: websiteId,
      domain: domain,
      visitorId: visitorId,
      sessionId: activeSession(),
      visitorFirstSeenAt: firstSeen,
      visitorSessionNumber: sessionNumber,
      href: location.href,
      referrer: null,
      type: type,
      viewport: { width: w.innerWidth || 0, height: w.innerHeight || 0 },
      language: nav.language || 'en',
      timezone: timezone,
      screenWidth: (w.screen && w.screen.width) || 0,
      screenHeight: (w.screen && w.screen.height) || 0,
      device: { platform: 'web', osVersion: nav.userAgent || 'Unknown', model: 'Browser' }
    };
    var params = new URL(location.href).searchParams, clicks = null;
    AD_CLICK_KEYS.forEach(function (key) {
      var value = params.get(key);
      if (value) (clicks = clicks || {})[key] = value;
    });
    if (clicks) body.adClickIds = clicks;
    if (extraData) body.extraData = extraData;
    return body;
  }

  // A beacon survives the page being left (an outbound click); text/plain needs no preflight.
  // With data-debug, fetch rather than a beacon, to read and say why the server kept nothing.
  function report(response) {
    if (!w.console) return;
    var dropped = response.headers.get('X-Sightline-Dropped');
    if (dropped) console.log('[Sightline] the server did not store the event: ' + dropped);
    else if (!response.ok) console.log('[Sightline] the server refused the event: HTTP ' + response.status);
  }
  function send(body) {
    var text = JSON.stringify(body);
    if (!debug) {
      try {
        if (nav.sendBeacon && nav.sendBeacon(endpoint, text)) return;
      } catch (e) { /* fall back to fetch */ }
    }
    if (w.fetch) {
      fetch(endpoint, { method: 'POST', body: text, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } })
        .then(function (response) { if (debug) report(response); })
        .catch(function (error) { if (debug && w.console) console.log('[Sightline] the event was not sent: ' + error); });
    }
  }

  var lastHref = null;
  function trackPageview() {
    if (location.href === lastHref) return;
    var body = payload('pageview');
    body.referrer = lastHref || d.referrer || null;
    lastHref = location.href;
    send(body);
  }

  var GOAL = /^(?!identify$)[a-z0-9_:-]{1,64}$/;
  function track(name, properties) {
    var goal = String(name || '').toLowerCase();
    if (goal === 'identify') return identify(properties);
    if (!GOAL.test(goal)) {
      if (w.console) console.warn('[Sightline] invalid goal name (a-z 0-9 _ - :, at most 64): ' + name);
      return;
    }
    var extra = { eventName: goal }, count = 0;
    Object.keys(properties || {}).forEach(function (key) {
      var value = properties[key];
      if (count >= 10 || value === undefined || value === null || typeof value === 'object') return;
      var propertyName = String(key).toLowerCase();
      if (!/^[a-z0-9_-]{1,64}$/.test(propertyName)) return;
      extra[propertyName] = String(value).slice(0, 255);
      count++;
    });
    send(payload('custom', extra));
  }
  function identify(properties) {
    var user = properties && properties.user_id;
    if (!user) return;
    var extra = { user_id: String(user) };
    Object.keys(properties).forEach(function (key) {
      var value = properties[key];
      if (key !== 'user_id' && (typeof value === 'string' || typeof value === 'number')) extra[key] = String(value);
    });
    send(payload('identify', extra));
  }

  // Goals from markup: data-fast-goal="name", properties from data-fast-goal-<property>="value".
  function goalFromElement(element) {
    var goal = element.getAttribute('data-fast-goal');
    var properties = {};
    for (var i = 0; i < element.attributes.length; i++) {
      var attribute = element.attributes[i];
      if (attribute.name.indexOf('data-fast-goal-') === 0) {
        properties[attribute.name.slice(15).replace(/-/g, '_')] = attribute.value;
      }
    }
    track(goal, properties);
  }

  function onClick(event) {
    var target = event.target;
    if (!target || !target.closest) return;
    var goalElement = target.closest('[data-fast-goal]');
    if (goalElement) goalFromElement(goalElement);
    var link = target.closest('a[href]');
    if (!link) return;
    var url;
    try { url = new URL(link.href, location.href); } catch (e) { return; }
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== location.hostname) {
      var extra = { url: url.href };
      var text = (link.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 200);
      if (text) extra.text = text;
      send(payload('external_link', extra));
    }
  }

  // SPA navigation: pushState, replaceState and popstate, debounced as the SDK does (100 ms);
  // only a change of path or query string is a new page view, as in the SDK.
  var timer = null;
  var currentPath = function () { return location.pathname + location.search; };
  var lastPath = currentPath();
  function scheduleNavigation() {
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (currentPath() === lastPath) return;
      lastPath = currentPath();
      trackPageview();
    }, 100);
  }
  ['pushState', 'replaceState'].forEach(function (method) {
    var original = history[method];
    history[method] = function () {
      var result = original.apply(this, arguments);
      scheduleNavigation();
      return result;
    };
  });
  w.addEventListener('popstate', scheduleNavigation);
  d.addEventListener('click', onClick, true);

  var api = function (name, properties) { track(name, properties); };
  api.q = [];
  api.visitorId = visitorId;
  w.datafast = api;

  trackPageview();
  // Calls made before the script loaded (the datafast snippet's queue), in order.
  for (var i = 0; i < queued.length; i++) track(queued[i][0], queued[i][1]);
})();
`;
