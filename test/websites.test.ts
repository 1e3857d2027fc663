import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  type TestAccount,
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

const WEBSITES = '/api/v1/admin/websites';
const websiteUrl = (id: string) => `${WEBSITES}/${id}`;
const uniqueDomain = () => `site-${randomBytes(5).toString('hex')}.example.com`;

const ID = /^[0-9a-f]{24}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SUMMARY_KEYS = ['_id', 'currency', 'domain', 'id', 'name', 'role', 'timezone', 'trackingId'];
const WEBSITE_KEYS = [
  '_id',
  'allowedHostnames',
  'createdAt',
  'currency',
  'domain',
  'excludedCountries',
  'excludedHostnames',
  'excludedIps',
  'excludedPaths',
  'id',
  'includeRenewalRevenue',
  'isCookieless',
  'kpi',
  'kpiColorScheme',
  'name',
  'revenueMetric',
  'role',
  'sendViralTrafficAlerts',
  'sendWeeklyReports',
  'timezone',
  'trackingId',
  'updatedAt',
];

/** Every permission but one, so a refusal can only come from the one left out. */
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);

const json = { 'content-type': 'application/json' };

describeEachEngine('websites', (engine) => {
  const t: TestApp = useTestApp(engine);

  /** The website as its owner reads it over the API. */
  async function read(account: TestAccount, id: string) {
    const response = await t.request('GET', websiteUrl(id), { token: account.token });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0];
  }

  async function countWithDomain(domain: string): Promise<number> {
    const rows = await t.db.selectFrom('websites').select('id').where('domain', '=', domain).execute();
    return rows.length;
  }

  /** An owner with one website, and that website as read before anything else happens. */
  async function ownerWithWebsite() {
    const owner = await createAccount(t);
    const { id } = await createWebsite(t, owner.token);
    return { owner, id, before: await read(owner, id) };
  }

  describe('GET /websites', () => {
    it('lists the websites of the account with the summary shape and the caller role', async () => {
      const owner = await createAccount(t);
      const first = await createWebsite(t, owner.token);
      const second = await createWebsite(t, owner.token);
      const response = await t.request('GET', WEBSITES, { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.status).toBe('success');
      expect(response.body.data).toHaveLength(2);
      for (const item of response.body.data) expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
      expect(response.body.data[0]).toEqual({
        id: first.id,
        _id: first.id,
        domain: first.domain,
        name: 'Test site',
        trackingId: first.trackingId,
        timezone: 'Europe/Paris',
        currency: 'USD',
        role: 'owner',
      });
      expect(response.body.data[1].id).toBe(second.id);
    });

    it('answers an empty list for an account without websites', async () => {
      const account = await createAccount(t);
      const response = await t.request('GET', WEBSITES, { token: account.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [] });
    });

    it('includes websites the account is a member or viewer of, with that role, and never another account’s', async () => {
      const owner = await createAccount(t);
      const caller = await createAccount(t);
      const asMember = await createWebsite(t, owner.token);
      const asViewer = await createWebsite(t, owner.token);
      await createWebsite(t, owner.token);
      await addMember(t, asMember.id, caller.id, 'member');
      await addMember(t, asViewer.id, caller.id, 'viewer');
      const response = await t.request('GET', WEBSITES, { token: caller.token });
      expect(response.status, response.raw).toBe(200);
      const roles = Object.fromEntries(response.body.data.map((w: any) => [w.id, w.role]));
      expect(roles).toEqual({ [asMember.id]: 'member', [asViewer.id]: 'viewer' });
    });

    it('lists only the websites a limited token is allowed', async () => {
      const owner = await createAccount(t);
      const allowed = await createWebsite(t, owner.token);
      await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['websites:read'], [allowed.id]);
      const response = await t.request('GET', WEBSITES, { token: limited });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data.map((w: any) => w.id)).toEqual([allowed.id]);
    });

    it('answers 403 without websites:read', async () => {
      const owner = await createAccount(t);
      await createWebsite(t, owner.token);
      const token = await createToken(t, owner, allBut('websites:read'));
      expectError(await t.request('GET', WEBSITES, { token }), 403, /websites:read/);
    });

    it('answers 403 to a website API key', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      expectError(await t.request('GET', WEBSITES, { token: key.key }), 403, /df_/);
    });
  });

  describe('POST /websites', () => {
    it('creates a website with the defaults and answers the full website', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const response = await t.request('POST', WEBSITES, {
        token: owner.token,
        body: { domain, timezone: 'Europe/Berlin', name: 'My shop' },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.status).toBe('success');
      expect(response.body.data).toHaveLength(1);
      const website = response.body.data[0];
      expect(Object.keys(website).sort()).toEqual(WEBSITE_KEYS);
      expect(website).toEqual({
        id: expect.stringMatching(ID),
        _id: website.id,
        domain,
        name: 'My shop',
        trackingId: expect.any(String),
        timezone: 'Europe/Berlin',
        currency: 'USD',
        kpi: null,
        kpiColorScheme: null,
        revenueMetric: 'revenue',
        isCookieless: false,
        includeRenewalRevenue: true,
        allowedHostnames: [],
        excludedIps: [],
        excludedPaths: [],
        excludedCountries: [],
        excludedHostnames: [],
        sendWeeklyReports: false,
        sendViralTrafficAlerts: false,
        role: 'owner',
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: website.createdAt,
      });
      expect(website.trackingId.length).toBeGreaterThan(8);
      expect(Math.abs(Date.parse(website.createdAt) - Date.now())).toBeLessThan(60_000);
      // What was answered is what was stored.
      expect(await read(owner, website.id)).toEqual(website);
    });

    it('gives each website its own id and tracking id', async () => {
      const owner = await createAccount(t);
      const a = await createWebsite(t, owner.token);
      const b = await createWebsite(t, owner.token);
      expect(a.id).not.toBe(b.id);
      expect(a.trackingId).not.toBe(b.trackingId);
    });

    it('names the website after its domain when no name is given', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const response = await t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone: 'UTC' } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].name).toBe(domain);
    });

    it('lower-cases the domain', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const response = await t.request('POST', WEBSITES, {
        token: owner.token,
        body: { domain: domain.toUpperCase(), timezone: 'UTC' },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].domain).toBe(domain);
      expect(response.body.data[0].name).toBe(domain);
    });

    it.each([
      ['a scheme', 'https://example.com'],
      ['a path', 'example.com/blog'],
      ['a port', 'example.com:8080'],
      ['a space inside', 'my site.example.com'],
      ['a single label', 'example'],
      ['an underscore', 'my_site.example.com'],
      ['a trailing dot', 'example.com.'],
      ['an empty string', ''],
    ])('refuses a domain with %s (400 naming body.domain) and creates nothing', async (_what, domain) => {
      const owner = await createAccount(t);
      const response = await t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone: 'UTC' } });
      expectError(response, 400, /body\.domain/);
      const list = await t.request('GET', WEBSITES, { token: owner.token });
      expect(list.body.data).toEqual([]);
    });

    it.each([
      ['an unknown zone', 'Mars/Phobos'],
      ['a UTC offset', '+02:00'],
      ['free text', 'Paris time'],
      ['an empty string', ''],
    ])('refuses a timezone that is %s (400 naming body.timezone)', async (_what, timezone) => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      expectError(await t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone } }), 400, /body\.timezone/);
      expect(await countWithDomain(domain)).toBe(0);
    });

    it.each([
      ['europe/paris', 'Europe/Paris'],
      ['america/new_york', 'America/New_York'],
      ['US/Eastern', 'America/New_York'],
      ['utc', 'UTC'],
    ])('stores the timezone %s in its canonical spelling %s', async (timezone, canonical) => {
      const owner = await createAccount(t);
      const response = await t.request('POST', WEBSITES, { token: owner.token, body: { domain: uniqueDomain(), timezone } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].timezone).toBe(canonical);
      expect((await read(owner, response.body.data[0].id)).timezone).toBe(canonical);
    });

    it.each([
      ['currency', { currency: 'EUR' }],
      ['isCookieless', { isCookieless: true }],
      ['id', { id: UNKNOWN_ID }],
    ])('refuses the unknown field %s (400 naming it)', async (field, extra) => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const response = await t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone: 'UTC', ...extra } });
      expectError(response, 400, new RegExp(`body\\.${field}`));
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('refuses a missing domain (400 naming body.domain)', async () => {
      const owner = await createAccount(t);
      expectError(await t.request('POST', WEBSITES, { token: owner.token, body: { timezone: 'UTC' } }), 400, /body\.domain/);
    });

    it('refuses a missing timezone (400 naming body.timezone)', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      expectError(await t.request('POST', WEBSITES, { token: owner.token, body: { domain } }), 400, /body\.timezone/);
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('refuses a request without a body (400 naming a required field)', async () => {
      const owner = await createAccount(t);
      expectError(await t.request('POST', WEBSITES, { token: owner.token }), 400, /body\.(domain|timezone)/);
    });

    it.each([
      ['domain', { domain: 42, timezone: 'UTC' }],
      ['timezone', { domain: 'typed.example.com', timezone: ['UTC'] }],
      ['name', { domain: 'typed.example.com', timezone: 'UTC', name: 7 }],
      ['name', { domain: 'typed.example.com', timezone: 'UTC', name: '' }],
      ['name', { domain: 'typed.example.com', timezone: 'UTC', name: 'x'.repeat(101) }],
    ])('refuses a wrong type or length for %s (400 naming it)', async (field, body) => {
      const owner = await createAccount(t);
      expectError(await t.request('POST', WEBSITES, { token: owner.token, body }), 400, new RegExp(`body\\.${field}`));
      const list = await t.request('GET', WEBSITES, { token: owner.token });
      expect(list.body.data).toEqual([]);
    });

    it('answers 409 for a domain the account already has, whatever its case, and creates nothing', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      await createWebsite(t, owner.token, domain);
      expectError(await t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone: 'UTC' } }), 409, /domain/);
      expectError(
        await t.request('POST', WEBSITES, { token: owner.token, body: { domain: domain.toUpperCase(), timezone: 'UTC' } }),
        409,
      );
      expect(await countWithDomain(domain)).toBe(1);
    });

    it('creates one website when the same domain is posted several times at once', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => t.request('POST', WEBSITES, { token: owner.token, body: { domain, timezone: 'UTC' } })),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      expect(await countWithDomain(domain)).toBe(1);
    });

    it('lets two accounts each have a website with the same domain', async () => {
      const first = await createAccount(t);
      const second = await createAccount(t);
      const domain = uniqueDomain();
      const a = await createWebsite(t, first.token, domain);
      const b = await createWebsite(t, second.token, domain);
      expect(a.id).not.toBe(b.id);
      expect(await countWithDomain(domain)).toBe(2);
    });

    it('answers 403 without websites:write and creates nothing', async () => {
      const owner = await createAccount(t);
      const token = await createToken(t, owner, allBut('websites:write'));
      const domain = uniqueDomain();
      expectError(await t.request('POST', WEBSITES, { token, body: { domain, timezone: 'UTC' } }), 403, /websites:write/);
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('answers 403 to a website API key and creates nothing', async () => {
      const owner = await createAccount(t);
      const website = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      const domain = uniqueDomain();
      expectError(await t.request('POST', WEBSITES, { token: key.key, body: { domain, timezone: 'UTC' } }), 403, /df_/);
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('answers 413 for a body over 64 KiB and creates nothing', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const payload = JSON.stringify({ domain, timezone: 'UTC', name: 'x'.repeat(65 * 1024) });
      expectError(await t.request('POST', WEBSITES, { token: owner.token, payload, headers: json }), 413, /too large/);
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('answers 415 for a text/plain body and creates nothing', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const payload = JSON.stringify({ domain, timezone: 'UTC' });
      expectError(
        await t.request('POST', WEBSITES, { token: owner.token, payload, headers: { 'content-type': 'text/plain' } }),
        415,
        /application\/json/,
      );
      expect(await countWithDomain(domain)).toBe(0);
    });

    it('accepts application/json with a charset', async () => {
      const owner = await createAccount(t);
      const domain = uniqueDomain();
      const payload = JSON.stringify({ domain, timezone: 'UTC' });
      const response = await t.request('POST', WEBSITES, {
        token: owner.token,
        payload,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0].domain).toBe(domain);
    });

    it('answers 400 for malformed JSON', async () => {
      const owner = await createAccount(t);
      expectError(
        await t.request('POST', WEBSITES, { token: owner.token, payload: '{"domain": "a.example.com",', headers: json }),
        400,
        /not valid JSON/,
      );
    });
  });

  describe('GET /websites/{websiteId}', () => {
    it('answers the full website to its owner', async () => {
      const owner = await createAccount(t);
      const created = await createWebsite(t, owner.token);
      const response = await t.request('GET', websiteUrl(created.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.status).toBe('success');
      expect(response.body.data).toHaveLength(1);
      const website = response.body.data[0];
      expect(Object.keys(website).sort()).toEqual(WEBSITE_KEYS);
      expect(website).toMatchObject({
        id: created.id,
        _id: created.id,
        domain: created.domain,
        name: 'Test site',
        trackingId: created.trackingId,
        timezone: 'Europe/Paris',
        currency: 'USD',
        role: 'owner',
      });
    });

    it.each(['member', 'viewer'] as const)('answers the website to a %s, with that role', async (role) => {
      const { owner, id } = await ownerWithWebsite();
      const other = await createAccount(t);
      await addMember(t, id, other.id, role);
      const response = await t.request('GET', websiteUrl(id), { token: other.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0]).toEqual({ ...(await read(owner, id)), role });
    });

    it('answers the website to its own df_ key', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const key = await createApiKey(t, owner.token, id);
      const response = await t.request('GET', websiteUrl(id), { token: key.key });
      expect(response.status, response.raw).toBe(200);
      const { role: _role, ...rest } = response.body.data[0];
      const { role: _ownerRole, ...expected } = before;
      expect(rest).toEqual(expected);
    });

    it('answers 403 to a df_ key of another website of the same account', async () => {
      const owner = await createAccount(t);
      const mine = await createWebsite(t, owner.token);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, mine.id);
      expectError(await t.request('GET', websiteUrl(other.id), { token: key.key }), 403, /another website/);
    });

    it('answers 403 without settings:read', async () => {
      const { owner, id } = await ownerWithWebsite();
      const token = await createToken(t, owner, allBut('settings:read'));
      expectError(await t.request('GET', websiteUrl(id), { token }), 403, /settings:read/);
    });

    it('answers 403 to a token limited to other websites', async () => {
      const owner = await createAccount(t);
      const allowed = await createWebsite(t, owner.token);
      const other = await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['settings:read'], [allowed.id]);
      expect((await t.request('GET', websiteUrl(allowed.id), { token: limited })).status).toBe(200);
      expectError(await t.request('GET', websiteUrl(other.id), { token: limited }), 403, /not allowed/);
    });

    it('answers 404 for a website of another account', async () => {
      const { id } = await ownerWithWebsite();
      const stranger = await createAccount(t);
      expectError(await t.request('GET', websiteUrl(id), { token: stranger.token }), 404, /not found/i);
    });

    it('answers 404 for a well-formed unknown id', async () => {
      const account = await createAccount(t);
      expectError(await t.request('GET', websiteUrl(UNKNOWN_ID), { token: account.token }), 404, /not found/i);
    });

    it.each(['not-an-id', 'FFFFFFFFFFFFFFFFFFFFFFFF', 'fffffffffffffffffffffff'])(
      'answers 400 naming websiteId for the malformed id %s',
      async (badId) => {
        const account = await createAccount(t);
        expectError(await t.request('GET', websiteUrl(badId), { token: account.token }), 400, /websiteId/);
      },
    );
  });

  describe('PUT /websites/{websiteId}', () => {
    it('updates every settable field, normalising values, and answers the full website', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const domain = uniqueDomain();
      const response = await t.request('PUT', websiteUrl(id), {
        token: owner.token,
        body: {
          domain: domain.toUpperCase(),
          name: 'Renamed',
          timezone: 'america/new_york',
          currency: 'eur',
          kpiColorScheme: 'teal',
          revenueMetric: 'mrr',
          isCookieless: true,
          includeRenewalRevenue: false,
          allowedHostnames: ['App.Example.com', '*.example.org'],
          excludedHostnames: ['staging.example.com'],
          excludedIps: ['10.0.0.1', '192.168.0.0/16', '2001:DB8::1', '2001:db8::/32'],
          excludedPaths: ['/admin/*', '/preview'],
          excludedCountries: ['de', 'FR'],
        },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.status).toBe('success');
      expect(response.body.data).toHaveLength(1);
      const expected = {
        ...before,
        domain,
        name: 'Renamed',
        timezone: 'America/New_York',
        currency: 'EUR',
        kpiColorScheme: 'teal',
        revenueMetric: 'mrr',
        isCookieless: true,
        includeRenewalRevenue: false,
        allowedHostnames: ['app.example.com', '*.example.org'],
        excludedHostnames: ['staging.example.com'],
        excludedIps: ['10.0.0.1', '192.168.0.0/16', '2001:db8::1', '2001:db8::/32'],
        excludedPaths: ['/admin/*', '/preview'],
        excludedCountries: ['DE', 'FR'],
        updatedAt: expect.stringMatching(ISO_MS),
      };
      expect(response.body.data[0]).toEqual(expected);
      expect(await read(owner, id)).toEqual(response.body.data[0]);
    });

    it('changes only the fields sent', async () => {
      const { owner, id } = await ownerWithWebsite();
      const setup = await t.request('PUT', websiteUrl(id), {
        token: owner.token,
        body: { currency: 'GBP', kpiColorScheme: 'red', isCookieless: true, excludedPaths: ['/private'], excludedCountries: ['NL'] },
      });
      expect(setup.status, setup.raw).toBe(200);
      const before = await read(owner, id);

      const response = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { name: 'Only the name' } });
      expect(response.status, response.raw).toBe(200);
      const after = await read(owner, id);
      expect(after).toEqual({ ...before, name: 'Only the name', updatedAt: after.updatedAt });

      const second = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { excludedIps: ['1.2.3.4'] } });
      expect(second.status, second.raw).toBe(200);
      expect(await read(owner, id)).toEqual({ ...after, excludedIps: ['1.2.3.4'], updatedAt: expect.stringMatching(ISO_MS) });
    });

    it('clears kpi and kpiColorScheme with null, leaving the rest', async () => {
      const { owner, id } = await ownerWithWebsite();
      await t.db.updateTable('websites').set({ kpi: 'signup', kpi_color_scheme: 'green' }).where('id', '=', id).execute();
      const before = await read(owner, id);
      expect(before).toMatchObject({ kpi: 'signup', kpiColorScheme: 'green' });

      const response = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { kpi: null, kpiColorScheme: null } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0]).toEqual({ ...before, kpi: null, kpiColorScheme: null, updatedAt: expect.stringMatching(ISO_MS) });
      expect(await read(owner, id)).toEqual(response.body.data[0]);
    });

    it('empties a list sent as null or []', async () => {
      const { owner, id } = await ownerWithWebsite();
      await t.request('PUT', websiteUrl(id), { token: owner.token, body: { excludedIps: ['1.1.1.1'], excludedPaths: ['/x'] } });
      const response = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { excludedIps: null, excludedPaths: [] } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0]).toMatchObject({ excludedIps: [], excludedPaths: [] });
    });

    it('keeps one copy of a value listed twice', async () => {
      const { owner, id } = await ownerWithWebsite();
      const response = await t.request('PUT', websiteUrl(id), {
        token: owner.token,
        body: { excludedCountries: ['de', 'DE'], excludedPaths: ['/a', '/a'] },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0]).toMatchObject({ excludedCountries: ['DE'], excludedPaths: ['/a'] });
    });

    it('accepts a list of exactly 100 items', async () => {
      const { owner, id } = await ownerWithWebsite();
      const paths = Array.from({ length: 100 }, (_, i) => `/page-${i}`);
      const response = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { excludedPaths: paths } });
      expect(response.status, response.raw).toBe(200);
      expect((await read(owner, id)).excludedPaths).toEqual(paths);
    });

    it('moves updatedAt and keeps createdAt', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const past = '2020-01-01T00:00:00.000Z';
      await t.db.updateTable('websites').set({ updated_at: past }).where('id', '=', id).execute();
      const response = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { name: 'Touched' } });
      expect(response.status, response.raw).toBe(200);
      const { createdAt, updatedAt } = response.body.data[0];
      expect(createdAt).toBe(before.createdAt);
      expect(updatedAt).toMatch(ISO_MS);
      expect(Date.parse(updatedAt)).toBeGreaterThan(Date.parse(past));
      expect(Date.parse(updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.createdAt));
      expect((await read(owner, id)).updatedAt).toBe(updatedAt);
    });

    const tooMany = Array.from({ length: 101 }, (_, i) => `/p${i}`);
    const invalidBodies: [string, Record<string, unknown>, RegExp][] = [
      ['currency not in ISO-4217', { currency: 'ZZZ' }, /body\.currency/],
      ['currency of two letters', { currency: 'US' }, /body\.currency/],
      ['currency as a number', { currency: 840 }, /body\.currency/],
      ['currency null', { currency: null }, /body\.currency/],
      ['kpiColorScheme outside the enum', { kpiColorScheme: 'magenta' }, /body\.kpiColorScheme/],
      ['revenueMetric outside the enum', { revenueMetric: 'profit' }, /body\.revenueMetric/],
      ['revenueMetric null', { revenueMetric: null }, /body\.revenueMetric/],
      ['kpi that is not a goal name', { kpi: 'Sign Up!' }, /body\.kpi/],
      ['kpi "identify"', { kpi: 'identify' }, /body\.kpi/],
      ['timezone unknown', { timezone: 'Mars/Phobos' }, /body\.timezone/],
      ['domain with a scheme', { domain: 'https://example.com' }, /body\.domain/],
      ['domain with a port', { domain: 'example.com:443' }, /body\.domain/],
      ['domain with a path', { domain: 'example.com/x' }, /body\.domain/],
      ['name empty', { name: '' }, /body\.name/],
      ['name over 100 characters', { name: 'x'.repeat(101) }, /body\.name/],
      ['name as a number', { name: 5 }, /body\.name/],
      ['name null', { name: null }, /body\.name/],
      ['isCookieless as a string', { isCookieless: 'true' }, /body\.isCookieless/],
      ['includeRenewalRevenue as a number', { includeRenewalRevenue: 1 }, /body\.includeRenewalRevenue/],
      ['allowedHostnames with a scheme', { allowedHostnames: ['https://app.example.com'] }, /body\.allowedHostnames\[0\]/],
      ['allowedHostnames with a wildcard inside', { allowedHostnames: ['app.*.example.com'] }, /body\.allowedHostnames\[0\]/],
      ['allowedHostnames with a bare *', { allowedHostnames: ['*example.com'] }, /body\.allowedHostnames\[0\]/],
      ['allowedHostnames as a string', { allowedHostnames: 'example.com' }, /body\.allowedHostnames/],
      ['excludedHostnames with a path', { excludedHostnames: ['ok.example.com', 'example.com/x'] }, /body\.excludedHostnames\[1\]/],
      ['excludedIps with a bad IPv4', { excludedIps: ['999.1.1.1'] }, /body\.excludedIps\[0\]/],
      ['excludedIps with a bad IPv4 prefix', { excludedIps: ['10.0.0.0/33'] }, /body\.excludedIps\[0\]/],
      ['excludedIps with a bad IPv6 prefix', { excludedIps: ['2001:db8::/129'] }, /body\.excludedIps\[0\]/],
      ['excludedIps with a host name', { excludedIps: ['1.1.1.1', 'localhost'] }, /body\.excludedIps\[1\]/],
      ['excludedIps with a number', { excludedIps: [1234] }, /body\.excludedIps\[0\]/],
      ['excludedPaths without a leading /', { excludedPaths: ['blog/*'] }, /body\.excludedPaths\[0\]/],
      ['excludedPaths with a space', { excludedPaths: ['/a b'] }, /body\.excludedPaths\[0\]/],
      ['excludedPaths with a full URL', { excludedPaths: ['https://example.com/a'] }, /body\.excludedPaths\[0\]/],
      ['excludedCountries alpha-3', { excludedCountries: ['DEU'] }, /body\.excludedCountries\[0\]/],
      ['excludedCountries unknown code', { excludedCountries: ['XX'] }, /body\.excludedCountries\[0\]/],
      ['excludedCountries not a country', { excludedCountries: ['FR', 'EU'] }, /body\.excludedCountries\[1\]/],
      ['excludedCountries digits', { excludedCountries: ['12'] }, /body\.excludedCountries\[0\]/],
      ['a list of 101 items', { excludedPaths: tooMany }, /body\.excludedPaths.*100/],
      ['an unknown field', { color: 'red' }, /body\.color/],
      ['a read-only field', { trackingId: 'dfid_x' }, /body\.trackingId/],
      ['a role', { role: 'owner' }, /body\.role/],
      ['an empty body', {}, /^body/],
      // A valid field next to a bad one changes nothing either.
      ['a good field next to a bad one', { name: 'Half applied', currency: 'ZZZ' }, /body\.currency/],
      ['a good list next to a bad list', { excludedPaths: ['/ok'], excludedIps: ['nope'] }, /body\.excludedIps\[0\]/],
    ];

    it.each(invalidBodies)('answers 400 for %s, naming the field, and changes nothing', async (_what, body, pattern) => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(await t.request('PUT', websiteUrl(id), { token: owner.token, body }), 400, pattern);
      expect(await read(owner, id)).toEqual(before);
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"name"'],
      ['null', 'null'],
    ])('answers 400 for a body that is %s and changes nothing', async (_what, payload) => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(await t.request('PUT', websiteUrl(id), { token: owner.token, payload, headers: json }), 400, /body/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 400 for a request without a body', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(await t.request('PUT', websiteUrl(id), { token: owner.token }), 400, /^body/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 409 for the domain of another website of the same owner, and changes nothing', async () => {
      const owner = await createAccount(t);
      const taken = await createWebsite(t, owner.token);
      const { id } = await createWebsite(t, owner.token);
      const before = await read(owner, id);
      expectError(
        await t.request('PUT', websiteUrl(id), { token: owner.token, body: { domain: taken.domain.toUpperCase(), name: 'Clash' } }),
        409,
        /domain/,
      );
      expect(await read(owner, id)).toEqual(before);
    });

    it('lets only one of several websites of an owner move to the same domain at once', async () => {
      const owner = await createAccount(t);
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push((await createWebsite(t, owner.token)).id);
      const domain = uniqueDomain();
      const responses = await Promise.all(ids.map((id) => t.request('PUT', websiteUrl(id), { token: owner.token, body: { domain } })));
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      expect(await countWithDomain(domain)).toBe(1);
    });

    it('answers 409 when a member moves a website to a domain its owner already has', async () => {
      const owner = await createAccount(t);
      const member = await createAccount(t);
      const taken = await createWebsite(t, owner.token);
      const { id } = await createWebsite(t, owner.token);
      await addMember(t, id, member.id, 'member');
      const before = await read(owner, id);
      expectError(await t.request('PUT', websiteUrl(id), { token: member.token, body: { domain: taken.domain } }), 409);
      expect(await read(owner, id)).toEqual(before);
    });

    it('accepts the website’s own domain and a domain another account uses', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const same = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { domain: before.domain } });
      expect(same.status, same.raw).toBe(200);
      const stranger = await createAccount(t);
      const theirs = await createWebsite(t, stranger.token);
      const moved = await t.request('PUT', websiteUrl(id), { token: owner.token, body: { domain: theirs.domain } });
      expect(moved.status, moved.raw).toBe(200);
      expect((await read(owner, id)).domain).toBe(theirs.domain);
    });

    it('lets a member change the settings', async () => {
      const { owner, id } = await ownerWithWebsite();
      const member = await createAccount(t);
      await addMember(t, id, member.id, 'member');
      const response = await t.request('PUT', websiteUrl(id), { token: member.token, body: { name: 'By a member' } });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data[0]).toMatchObject({ name: 'By a member', role: 'member' });
      expect((await read(owner, id)).name).toBe('By a member');
    });

    it('answers 403 to a viewer and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const viewer = await createAccount(t);
      await addMember(t, id, viewer.id, 'viewer');
      expectError(await t.request('PUT', websiteUrl(id), { token: viewer.token, body: { name: 'By a viewer' } }), 403, /viewer/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('lets the website’s own df_ key change the settings', async () => {
      const { owner, id } = await ownerWithWebsite();
      const key = await createApiKey(t, owner.token, id);
      const response = await t.request('PUT', websiteUrl(id), { token: key.key, body: { currency: 'JPY' } });
      expect(response.status, response.raw).toBe(200);
      expect((await read(owner, id)).currency).toBe('JPY');
    });

    it('answers 403 to a df_ key of another website of the same account, and changes nothing', async () => {
      const owner = await createAccount(t);
      const mine = await createWebsite(t, owner.token);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, mine.id);
      const before = await read(owner, other.id);
      expectError(await t.request('PUT', websiteUrl(other.id), { token: key.key, body: { name: 'Hijacked' } }), 403, /another website/);
      expect(await read(owner, other.id)).toEqual(before);
    });

    it('answers 403 without settings:write (even with settings:read), and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const token = await createToken(t, owner, allBut('settings:write'));
      expectError(await t.request('PUT', websiteUrl(id), { token, body: { name: 'No right' } }), 403, /settings:write/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 403 to a token limited to other websites, and changes nothing', async () => {
      const owner = await createAccount(t);
      const allowed = await createWebsite(t, owner.token);
      const other = await createWebsite(t, owner.token);
      const before = await read(owner, other.id);
      const limited = await createToken(t, owner, ['settings:write'], [allowed.id]);
      expect((await t.request('PUT', websiteUrl(allowed.id), { token: limited, body: { name: 'Allowed' } })).status).toBe(200);
      expectError(await t.request('PUT', websiteUrl(other.id), { token: limited, body: { name: 'Not allowed' } }), 403, /not allowed/);
      expect(await read(owner, other.id)).toEqual(before);
    });

    it('answers 404 for a website of another account, and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const stranger = await createAccount(t);
      expectError(await t.request('PUT', websiteUrl(id), { token: stranger.token, body: { name: 'Stranger' } }), 404, /not found/i);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 404 for a well-formed unknown id', async () => {
      const account = await createAccount(t);
      expectError(await t.request('PUT', websiteUrl(UNKNOWN_ID), { token: account.token, body: { name: 'x' } }), 404);
    });

    it('answers 400 naming websiteId for a malformed id', async () => {
      const account = await createAccount(t);
      expectError(await t.request('PUT', websiteUrl('123'), { token: account.token, body: { name: 'x' } }), 400, /websiteId/);
    });

    it('answers 413 for a body over 64 KiB and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const payload = JSON.stringify({ name: 'Big', excludedPaths: [`/${'a'.repeat(65 * 1024)}`] });
      expectError(await t.request('PUT', websiteUrl(id), { token: owner.token, payload, headers: json }), 413, /too large/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 415 for a text/plain body and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const payload = JSON.stringify({ name: 'Plain' });
      expectError(
        await t.request('PUT', websiteUrl(id), { token: owner.token, payload, headers: { 'content-type': 'text/plain' } }),
        415,
      );
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 400 for malformed JSON and changes nothing', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(
        await t.request('PUT', websiteUrl(id), { token: owner.token, payload: "{'name': 'x'}", headers: json }),
        400,
        /not valid JSON/,
      );
      expect(await read(owner, id)).toEqual(before);
    });
  });

  describe('DELETE /websites/{websiteId}', () => {
    it('answers 403 to the owner, pointing to the dashboard, and the website stays', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(await t.request('DELETE', websiteUrl(id), { token: owner.token }), 403, /dashboard/);
      expect(await read(owner, id)).toEqual(before);
      const list = await t.request('GET', WEBSITES, { token: owner.token });
      expect(list.body.data.map((w: any) => w.id)).toEqual([id]);
    });

    it.each(['member', 'viewer'] as const)('answers 403 pointing to the dashboard to a %s', async (role) => {
      const { owner, id, before } = await ownerWithWebsite();
      const other = await createAccount(t);
      await addMember(t, id, other.id, role);
      expectError(await t.request('DELETE', websiteUrl(id), { token: other.token }), 403, /dashboard/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 403 without websites:write, and the website stays', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const token = await createToken(t, owner, allBut('websites:write'));
      expectError(await t.request('DELETE', websiteUrl(id), { token }), 403, /websites:write/);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 403 to the website’s own df_ key, and the website stays', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const key = await createApiKey(t, owner.token, id);
      expectError(await t.request('DELETE', websiteUrl(id), { token: key.key }), 403);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 404 for a website of another account, and the website stays', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      const stranger = await createAccount(t);
      expectError(await t.request('DELETE', websiteUrl(id), { token: stranger.token }), 404, /not found/i);
      expect(await read(owner, id)).toEqual(before);
    });

    it('answers 404 for a well-formed unknown id', async () => {
      const account = await createAccount(t);
      expectError(await t.request('DELETE', websiteUrl(UNKNOWN_ID), { token: account.token }), 404);
    });

    it('answers 400 naming websiteId for a malformed id', async () => {
      const account = await createAccount(t);
      expectError(await t.request('DELETE', websiteUrl('zzz'), { token: account.token }), 400, /websiteId/);
    });
  });

  describe('without a credential', () => {
    it.each([
      ['GET', WEBSITES, undefined],
      ['POST', WEBSITES, { domain: 'anonymous.example.com', timezone: 'UTC' }],
      ['GET', websiteUrl(UNKNOWN_ID), undefined],
      ['PUT', websiteUrl(UNKNOWN_ID), { name: 'anonymous' }],
      ['DELETE', websiteUrl(UNKNOWN_ID), undefined],
    ])('%s %s answers 401 with WWW-Authenticate', async (method, url, body) => {
      const response = await t.request(method, url, { body });
      expectError(response, 401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it('does not reveal or change an existing website', async () => {
      const { owner, id, before } = await ownerWithWebsite();
      expectError(await t.request('PUT', websiteUrl(id), { body: { name: 'anonymous' } }), 401);
      expectError(await t.request('DELETE', websiteUrl(id)), 401);
      expect(await read(owner, id)).toEqual(before);
    });
  });
});
