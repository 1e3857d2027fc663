import { describe, expect, it } from 'vitest';
import { classifyReferrer } from '../src/modules/events/ingest.referrer.ts';

const DIRECT = { host: null, source: 'Direct/None' };
const PAGE = 'example.com';

describe('classifyReferrer: well-known sources', () => {
  it.each([
    ['https://www.google.com/', 'google.com', 'Google'],
    ['https://google.com/search?q=x', 'google.com', 'Google'],
    ['https://www.google.co.uk/', 'google.co.uk', 'Google'],
    ['https://www.google.de/', 'google.de', 'Google'],
    ['https://www.google.com.au/url?q=x', 'google.com.au', 'Google'],
    ['https://www.google.co.jp/', 'google.co.jp', 'Google'],
    ['https://google.cat/', 'google.cat', 'Google'],
    ['https://news.google.com/', 'news.google.com', 'Google'],
    ['https://gemini.google.com/app', 'gemini.google.com', 'Gemini'],
    ['https://www.bing.com/search?q=x', 'bing.com', 'Bing'],
    ['https://cn.bing.com/', 'cn.bing.com', 'Bing'],
    ['https://duckduckgo.com/', 'duckduckgo.com', 'DuckDuckGo'],
    ['https://search.yahoo.com/', 'search.yahoo.com', 'Yahoo!'],
    ['https://fr.search.yahoo.com/', 'fr.search.yahoo.com', 'Yahoo!'],
    ['https://search.yahoo.co.jp/', 'search.yahoo.co.jp', 'Yahoo!'],
    ['https://yandex.ru/search/', 'yandex.ru', 'Yandex'],
    ['https://yandex.com/', 'yandex.com', 'Yandex'],
    ['https://yandex.com.tr/', 'yandex.com.tr', 'Yandex'],
    ['https://www.baidu.com/link?url=x', 'baidu.com', 'Baidu'],
    ['https://m.baidu.com/', 'm.baidu.com', 'Baidu'],
    ['https://www.ecosia.org/search', 'ecosia.org', 'Ecosia'],
    ['https://search.brave.com/search?q=x', 'search.brave.com', 'Brave Search'],
    ['https://news.ycombinator.com/item?id=1', 'news.ycombinator.com', 'Hacker News'],
    ['https://www.reddit.com/r/x', 'reddit.com', 'Reddit'],
    ['https://old.reddit.com/', 'old.reddit.com', 'Reddit'],
    ['https://out.reddit.com/t3_x', 'out.reddit.com', 'Reddit'],
    ['https://t.co/abc', 't.co', 'Twitter'],
    ['https://twitter.com/x', 'twitter.com', 'Twitter'],
    ['https://x.com/x', 'x.com', 'Twitter'],
    ['https://www.facebook.com/', 'facebook.com', 'Facebook'],
    ['https://m.facebook.com/', 'm.facebook.com', 'Facebook'],
    ['https://l.facebook.com/l.php?u=x', 'l.facebook.com', 'Facebook'],
    ['https://lm.facebook.com/', 'lm.facebook.com', 'Facebook'],
    ['https://www.linkedin.com/feed/', 'linkedin.com', 'LinkedIn'],
    ['https://lnkd.in/abc', 'lnkd.in', 'LinkedIn'],
    ['https://l.instagram.com/', 'l.instagram.com', 'Instagram'],
    ['https://www.youtube.com/watch?v=x', 'youtube.com', 'YouTube'],
    ['https://m.youtube.com/', 'm.youtube.com', 'YouTube'],
    ['https://youtu.be/x', 'youtu.be', 'YouTube'],
    ['https://github.com/o/r', 'github.com', 'GitHub'],
    ['https://www.producthunt.com/posts/x', 'producthunt.com', 'Product Hunt'],
    ['https://www.pinterest.com/', 'pinterest.com', 'Pinterest'],
    ['https://www.tiktok.com/', 'tiktok.com', 'TikTok'],
    ['https://chatgpt.com/', 'chatgpt.com', 'ChatGPT'],
    ['https://chat.openai.com/', 'chat.openai.com', 'ChatGPT'],
    ['https://www.perplexity.ai/', 'perplexity.ai', 'Perplexity'],
    ['https://claude.ai/chat/x', 'claude.ai', 'Claude'],
    ['https://stackoverflow.com/questions/1', 'stackoverflow.com', 'Stack Overflow'],
    ['https://medium.com/@x/y', 'medium.com', 'Medium'],
    ['https://someone.substack.com/p/x', 'someone.substack.com', 'Substack'],
    ['https://t.me/channel', 't.me', 'Telegram'],
    ['https://web.telegram.org/', 'web.telegram.org', 'Telegram'],
    ['https://web.whatsapp.com/', 'web.whatsapp.com', 'WhatsApp'],
    ['https://app.slack.com/client/x', 'app.slack.com', 'Slack'],
    ['https://discord.com/channels/1', 'discord.com', 'Discord'],
  ])('%s is %s, %s', (referrer, host, source) => {
    expect(classifyReferrer(referrer, PAGE)).toEqual({ host, source });
  });
});

describe('classifyReferrer: other hosts', () => {
  it.each([
    ['https://blog.example.org/post', 'blog.example.org'],
    ['http://www.other.net/', 'other.net'],
    // label boundaries: no name for a host that merely ends or starts with a known one
    ['https://notreddit.com/', 'notreddit.com'],
    ['https://mygoogle.com/', 'mygoogle.com'],
    ['https://google.com.evil.example/', 'google.com.evil.example'],
    ['https://google.evil.com/', 'google.evil.com'],
    ['https://reddit.com.example.net/', 'reddit.com.example.net'],
    ['https://brave.com/', 'brave.com'],
    ['https://ycombinator.com/', 'ycombinator.com'],
    ['https://openai.com/', 'openai.com'],
    // a subdomain of the page's site is another host
    ['https://blog.example.com/', 'blog.example.com'],
    ['https://192.0.2.7:8080/x', '192.0.2.7'],
    ['http://[2001:db8::1]/', '[2001:db8::1]'],
    ['https://xn--bcher-kva.example/', 'xn--bcher-kva.example'],
    ['https://bücher.example/', 'xn--bcher-kva.example'],
    ['https://constructor/', 'constructor'],
    ['https://www./', 'www'],
  ])('%s is %s', (referrer, host) => {
    expect(classifyReferrer(referrer, PAGE)).toEqual({ host, source: host });
  });

  it('lower-cases the host, drops a port, credentials, a trailing dot and a leading www.', () => {
    expect(classifyReferrer('HTTPS://WWW.Google.COM:443/Search', PAGE)).toEqual({ host: 'google.com', source: 'Google' });
    expect(classifyReferrer('https://user:secret@www.Other.NET:8443/', PAGE)).toEqual({ host: 'other.net', source: 'other.net' });
    expect(classifyReferrer('https://news.ycombinator.com./', PAGE)).toEqual({ host: 'news.ycombinator.com', source: 'Hacker News' });
    expect(classifyReferrer('  https://x.com/  ', PAGE)).toEqual({ host: 'x.com', source: 'Twitter' });
  });
});

describe('classifyReferrer: Direct/None', () => {
  it.each([
    [null, PAGE],
    [undefined, PAGE],
    ['', PAGE],
    ['   ', PAGE],
    // the same site, with or without www., any port, case or path
    ['https://example.com/pricing', PAGE],
    ['https://www.example.com/', PAGE],
    ['http://EXAMPLE.com:8080/x?y=z', PAGE],
    ['https://example.com./', PAGE],
    ['https://example.com/', 'www.example.com'],
    ['https://www.example.com/', 'www.example.com'],
    ['https://example.com/', 'Example.COM'],
    ['https://example.com/', 'example.com:3000'],
    ['http://localhost:3000/', 'localhost'],
    ['http://[::1]:3000/', '[::1]'],
    // unparsable or not http(s)
    ['garbage', PAGE],
    ['google.com', PAGE],
    ['www.google.com/search', PAGE],
    ['//google.com/', PAGE],
    ['https://', PAGE],
    ['http://exa mple.com/', PAGE],
    ['android-app://com.google.android.gm/', PAGE],
    ['android-app://com.google.android.googlequicksearchbox/https/www.google.com', PAGE],
    ['ios-app://123/x', PAGE],
    ['file:///etc/passwd', PAGE],
    ['ftp://google.com/', PAGE],
    ['javascript:alert(1)', PAGE],
    ['data:text/html,hi', PAGE],
    ['about:blank', PAGE],
    ['chrome-extension://abc/page.html', PAGE],
    ['%%%', PAGE],
    ['\u0000', PAGE],
    ['x'.repeat(10_000), PAGE],
  ])('%j on %s', (referrer, page) => {
    expect(classifyReferrer(referrer, page)).toEqual(DIRECT);
  });

  it('returns a new object each time', () => {
    const first = classifyReferrer(null, PAGE);
    first.source = 'changed';
    expect(classifyReferrer(null, PAGE)).toEqual(DIRECT);
  });

  it('never throws on odd input', () => {
    for (const value of [42, {}, [], Symbol('x')]) {
      expect(classifyReferrer(value as unknown as string, PAGE)).toEqual(DIRECT);
    }
    expect(classifyReferrer('https://github.com/', undefined as unknown as string)).toEqual({ host: 'github.com', source: 'GitHub' });
    expect(classifyReferrer('https://github.com/', '%%%')).toEqual({ host: 'github.com', source: 'GitHub' });
  });
});
