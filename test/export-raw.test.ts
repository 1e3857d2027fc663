import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { newId } from '../src/lib/ids.ts';
import { EXPORT_FORMAT, EXPORT_VERSION, rawExportBody, rawExportHeader } from '../src/modules/export/raw-export.ts';
import { insertPaymentOnce } from '../src/modules/events/server-events.repository.ts';
import { type TestApp, useTestApp, writeAndDerive } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { addMember, createAccount, createApiKey, createToken, createWebsite, expectError, newEvent } from './helpers/factories.ts';

// The raw export (issue 37 item 2): NDJSON of every event and payment of the website, exactly
// once however the keyset pages fall, after a versioned header line.

const RAW = '/api/v1/export/raw';
const EVENTS = 23;
const PAYMENTS = 9;

describeEachEventEngine('raw export', (engine) => {
  const t: TestApp = useTestApp(engine);

  /** A website with EVENTS events (several sharing one instant, so pages split ties) and PAYMENTS payments. */
  async function seeded() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    const other = await createWebsite(t, owner.token);
    const events = Array.from({ length: EVENTS }, (_, i) =>
      newEvent(website.id, `v${i % 5}`, {
        sessionId: `s${i % 5}`,
        path: `/p${i}`,
        hostname: website.domain,
        // Groups of four events at the same second: every page boundary of 3, 5 or 7 cuts a tie.
        occurredAt: new Date(Date.UTC(2026, 2, 2, 10, Math.floor(i / 4))).toISOString(),
        details: { utmSource: i === 0 ? 'news,letter "x"' : null, city: i === 1 ? 'São Paulo' : null },
      }),
    );
    const recorded = await writeAndDerive(t, events);
    await writeAndDerive(t, [newEvent(other.id, 'elsewhere', { path: '/', occurredAt: '2026-03-02T10:00:00.000Z' })]);
    const payments: string[] = [];
    for (let i = 0; i < PAYMENTS; i++) {
      const id = newId();
      payments.push(id);
      await insertPaymentOnce(t.db, {
        id,
        website_id: website.id,
        transaction_id: `tx-${i}`,
        amount_minor: 100 * (i + 1),
        currency: 'USD',
        visitor_id: `v${i % 5}`,
        email: null,
        renewal: i % 2 === 0,
        refunded: false,
        occurred_at: '2026-03-03T00:00:00.000Z',
        created_at: '2026-03-03T00:00:00.000Z',
      });
    }
    return { owner, website, eventIds: recorded.map((event) => event.id).sort(), payments: payments.sort() };
  }

  const parseLines = (text: string) => text.trimEnd().split('\n').map((line) => JSON.parse(line) as { type?: string; data?: Record<string, unknown>; [k: string]: unknown });

  it.each([1, 3, 7, 1000])('holds every event and payment exactly once with pages of %i', async (pageSize) => {
    const { website, eventIds, payments } = await seeded();
    const deps = { db: t.db, eventLog: t.app.eventLog, pageSize };
    const { header, website: row } = await rawExportHeader(deps, website.id);
    let text = header;
    for await (const chunk of rawExportBody(deps, website.id, row)) text += chunk;
    const lines = parseLines(text);
    expect(lines[0]).toMatchObject({ format: EXPORT_FORMAT, version: EXPORT_VERSION, websiteId: website.id });
    const of = (type: string) => lines.filter((line) => line.type === type).map((line) => line.data!);
    expect(of('event').map((event) => event.id).sort()).toEqual(eventIds);
    expect(of('payment').map((payment) => payment.id).sort()).toEqual(payments);
    expect(lines.at(-1)).toEqual({ type: 'end', counts: expect.objectContaining({ event: EVENTS, payment: PAYMENTS, website: 1 }) });
    // Every stored column, as stored; booleans as booleans on both engines.
    const first = of('event').find((event) => event.path === '/p0')!;
    expect(first).toMatchObject({ website_id: website.id, type: 'pageview', visitor_id: 'v0', session_id: 's0', utm_source: 'news,letter "x"', occurred_at: '2026-03-02T10:00:00.000Z' });
    expect(Object.keys(first)).toEqual(expect.arrayContaining(['referrer_source', 'viewport_width', 'link_url', 'description', 'metadata']));
    expect(of('event').find((event) => event.path === '/p1')!.city).toBe('São Paulo');
    expect(of('payment').find((payment) => payment.transaction_id === 'tx-0')).toMatchObject({ amount_minor: 100, renewal: true, refunded: false });
    expect(of('website')).toEqual([expect.objectContaining({ id: website.id, domain: website.domain, is_cookieless: false })]);
  });

  it('streams the owner the NDJSON over HTTP, gzip-compressed when asked', async () => {
    const { owner, website, eventIds } = await seeded();
    const plain = await t.app.inject({ method: 'GET', url: RAW, query: { websiteId: website.id }, headers: { authorization: `Bearer ${owner.token}` } });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(String(plain.headers['content-disposition'])).toMatch(/^attachment; filename="sightline-.*\.ndjson"$/);
    const lines = parseLines(plain.body);
    expect(lines.filter((line) => line.type === 'event')).toHaveLength(eventIds.length);

    const zipped = await t.app.inject({ method: 'GET', url: RAW, query: { websiteId: website.id, gzip: 'true' }, headers: { authorization: `Bearer ${owner.token}` } });
    expect(zipped.statusCode).toBe(200);
    expect(zipped.headers['content-type']).toBe('application/gzip');
    const unzipped = parseLines(gunzipSync(zipped.rawPayload).toString('utf8'));
    expect(unzipped.slice(1)).toEqual(lines.slice(1));
  });

  it('answers 401, 403 (permission, role, website scope, df_ key) and 404 like every website route', async () => {
    const { owner, website } = await seeded();
    const query = { websiteId: website.id };
    expectError(await t.request('GET', RAW, { query }), 401);
    expectError(await t.request('GET', RAW, { query, token: await createToken(t, owner, ['analytics:read', 'payments:read']) }), 403, /exports:read/);
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    expectError(await t.request('GET', RAW, { query, token: member.token }), 403, /owner only/);
    const other = await createWebsite(t, owner.token);
    expectError(await t.request('GET', RAW, { query, token: await createToken(t, owner, ['exports:read'], [other.id]) }), 403, /not allowed/);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    expectError(await t.request('GET', RAW, { query, token: key }), 403);
    const stranger = await createAccount(t);
    expectError(await t.request('GET', RAW, { query, token: stranger.token }), 404);
    // A token with exports:read alone is enough for the owner.
    const narrow = await createToken(t, owner, ['exports:read'], [website.id]);
    expect((await t.app.inject({ method: 'GET', url: RAW, query, headers: { authorization: `Bearer ${narrow}` } })).statusCode).toBe(200);
    expect(PERMISSIONS).toContain('exports:read');
  });

  it('answers 400 naming the field for bad input', async () => {
    const { owner, website } = await seeded();
    expectError(await t.request('GET', RAW, { token: owner.token, query: {} }), 400, /websiteId/);
    expectError(await t.request('GET', RAW, { token: owner.token, query: { websiteId: website.id, gzip: 'maybe' } }), 400, /query\.gzip/);
    expectError(await t.request('GET', RAW, { token: owner.token, query: { websiteId: website.id, format: 'csv' } }), 400, /query\.format/);
  });
});
