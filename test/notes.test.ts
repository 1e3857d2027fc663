import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

const ID = /^[0-9a-f]{24}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOTE_KEYS = ['_id', 'author', 'createdAt', 'id', 'text', 'timestamp', 'updatedAt', 'websiteId'];
const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const notesUrl = (websiteId: string, noteId?: string) => `/api/v1/admin/websites/${websiteId}/notes${noteId ? `/${noteId}` : ''}`;

describeEachEventEngine('notes', (engine) => {
  const t: TestApp = useTestApp(engine);

  async function ownerWithWebsite(name = 'Note Owner') {
    const owner = await createAccount(t, name);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function create(token: string, websiteId: string, body: Record<string, unknown>) {
    const response = await t.request('POST', notesUrl(websiteId), { token, body });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.data).toHaveLength(1);
    return response.body.data[0];
  }

  async function list(token: string, websiteId: string, query: Record<string, string> = {}) {
    const response = await t.request('GET', notesUrl(websiteId), { token, query });
    expect(response.status, response.raw).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'pagination', 'status']);
    return response.body as { data: any[]; pagination: { limit: number; offset: number; total: number } };
  }

  const rows = (websiteId: string) => t.db.selectFrom('notes').selectAll().where('website_id', '=', websiteId).orderBy('id').execute();

  describe('create and read', () => {
    it('creates a note with an account token, dated now by default, and answers the documented shape', async () => {
      const { owner, website } = await ownerWithWebsite('Ada');
      const note = await create(owner.token, website.id, { text: 'Launched the pricing page' });
      expect(Object.keys(note).sort()).toEqual(NOTE_KEYS);
      expect(note).toEqual({
        id: expect.stringMatching(ID),
        _id: note.id,
        websiteId: website.id,
        text: 'Launched the pricing page',
        timestamp: expect.stringMatching(ISO_MS),
        author: { id: owner.id, name: 'Ada' },
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: note.createdAt,
      });
      expect(Math.abs(Date.parse(note.timestamp) - Date.now())).toBeLessThan(60_000);
      const [row] = await rows(website.id);
      expect(row).toMatchObject({ id: note.id, author_id: owner.id, idempotency_key: null, request_digest: null });
    });

    it("creates a note with the website's df_ key, authored by the website's owner, and stores a timestamp in UTC", async () => {
      const { owner, website } = await ownerWithWebsite('Grace');
      const key = (await createApiKey(t, owner.token, website.id)).key;
      const note = await create(key, website.id, { text: 'Deploy', timestamp: '2026-03-10T10:00:00+01:00' });
      expect(note).toMatchObject({ timestamp: '2026-03-10T09:00:00.000Z', author: { id: owner.id, name: 'Grace' } });
      const listed = await list(key, website.id);
      expect(listed.data).toEqual([note]);
    });

    it('lists newest timestamp first, with pagination over the whole match', async () => {
      const { owner, website } = await ownerWithWebsite();
      const other = await createWebsite(t, owner.token);
      await create(owner.token, other.id, { text: 'elsewhere', timestamp: '2026-03-05T00:00:00Z' });
      const made = [];
      for (const day of ['03', '01', '04', '02']) made.push(await create(owner.token, website.id, { text: `day ${day}`, timestamp: `2026-03-${day}T12:00:00Z` }));
      const all = await list(owner.token, website.id);
      expect(all.data.map((n) => n.text)).toEqual(['day 04', 'day 03', 'day 02', 'day 01']);
      expect(all.pagination).toEqual({ limit: 100, offset: 0, total: 4 });
      const page = await list(owner.token, website.id, { limit: '2', offset: '1' });
      expect(page.data.map((n) => n.text)).toEqual(['day 03', 'day 02']);
      expect(page.pagination).toEqual({ limit: 2, offset: 1, total: 4 });
      expect((await list(owner.token, website.id, { offset: '10' })).data).toEqual([]);
      expect(made).toHaveLength(4);
    });

    it("filters by startAt and endAt on the timestamp, days in the website's time zone (Europe/Paris)", async () => {
      const { owner, website } = await ownerWithWebsite();
      // 2 March 23:30 in Paris is 22:30 UTC; 3 March 00:30 in Paris is 23:30 UTC on the 2nd.
      await create(owner.token, website.id, { text: 'late on the 2nd', timestamp: '2026-03-02T22:30:00Z' });
      await create(owner.token, website.id, { text: 'early on the 3rd', timestamp: '2026-03-02T23:30:00Z' });
      await create(owner.token, website.id, { text: 'the 4th', timestamp: '2026-03-04T12:00:00Z' });
      const texts = async (query: Record<string, string>) => (await list(owner.token, website.id, query)).data.map((n) => n.text);
      expect(await texts({ startAt: '2026-03-03', endAt: '2026-03-03' })).toEqual(['early on the 3rd']);
      expect(await texts({ startAt: '2026-03-02', endAt: '2026-03-03' })).toEqual(['early on the 3rd', 'late on the 2nd']);
      expect(await texts({ startAt: '2026-03-02T22:30:00Z', endAt: '2026-03-04T12:00:00Z' })).toEqual(['the 4th', 'early on the 3rd', 'late on the 2nd']);
      expect((await list(owner.token, website.id, { startAt: '2026-03-03', endAt: '2026-03-04' })).pagination.total).toBe(2);
    });

    it("reads a timestamp sent as a day as noon of that day in the website's time zone, on POST and PUT", async () => {
      const { owner, website } = await ownerWithWebsite();
      // Paris is UTC+1 in winter and UTC+2 from 29 March 2026.
      const winter = await create(owner.token, website.id, { text: 'winter day', timestamp: '2026-03-10' });
      expect(winter.timestamp).toBe('2026-03-10T11:00:00.000Z');
      const summer = await t.request('PUT', notesUrl(website.id, winter.id), { token: owner.token, body: { timestamp: '2026-07-14' } });
      expect(summer.status, summer.raw).toBe(200);
      expect(summer.body.data[0].timestamp).toBe('2026-07-14T10:00:00.000Z');
      // New York went to daylight saving time on 8 March 2026: noon there is 16:00 UTC on the 10th.
      await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: owner.token, body: { timezone: 'America/New_York' } });
      expect((await create(owner.token, website.id, { text: 'new york', timestamp: '2026-03-10' })).timestamp).toBe('2026-03-10T16:00:00.000Z');
      expect((await create(owner.token, website.id, { text: 'before dst', timestamp: '2026-03-07' })).timestamp).toBe('2026-03-07T17:00:00.000Z');
      // A replay with the same day is the same note; the day and its instant are the same content.
      const keyed = await create(owner.token, website.id, { text: 'keyed', timestamp: '2026-03-10', idempotencyKey: 'day-key' });
      expect(await create(owner.token, website.id, { text: 'keyed', timestamp: '2026-03-10T12:00:00-04:00', idempotencyKey: 'day-key' })).toEqual(keyed);
    });

    it('orders by timestamp: newest first by default and with order=desc, oldest first with order=asc, paging in that order', async () => {
      const { owner, website } = await ownerWithWebsite();
      for (const day of ['03', '01', '04', '02']) await create(owner.token, website.id, { text: `day ${day}`, timestamp: `2026-03-${day}T12:00:00Z` });
      const texts = async (query: Record<string, string>) => (await list(owner.token, website.id, query)).data.map((n) => n.text);
      expect(await texts({})).toEqual(['day 04', 'day 03', 'day 02', 'day 01']);
      expect(await texts({ order: 'desc' })).toEqual(['day 04', 'day 03', 'day 02', 'day 01']);
      expect(await texts({ order: 'asc' })).toEqual(['day 01', 'day 02', 'day 03', 'day 04']);
      expect(await texts({ order: 'asc', limit: '2', offset: '1' })).toEqual(['day 02', 'day 03']);
      expect(await texts({ order: 'asc', startAt: '2026-03-02', endAt: '2026-03-03' })).toEqual(['day 02', 'day 03']);
    });

    it('reads startAt and endAt days in the timezone sent, and still answers timestamps in UTC', async () => {
      const { owner, website } = await ownerWithWebsite();
      // 2 March 22:30 UTC is the 2nd in Paris (23:30) but the 3rd in Tokyo (07:30); 3 March 16:00 UTC is the 4th in Tokyo.
      const late = await create(owner.token, website.id, { text: 'late on the 2nd', timestamp: '2026-03-02T22:30:00Z' });
      await create(owner.token, website.id, { text: 'afternoon of the 3rd', timestamp: '2026-03-03T16:00:00Z' });
      const texts = async (query: Record<string, string>) => (await list(owner.token, website.id, query)).data.map((n) => n.text);
      expect(await texts({ startAt: '2026-03-02', endAt: '2026-03-02' })).toEqual(['late on the 2nd']);
      expect(await texts({ startAt: '2026-03-02', endAt: '2026-03-02', timezone: 'Asia/Tokyo' })).toEqual([]);
      expect(await texts({ startAt: '2026-03-03', endAt: '2026-03-03', timezone: 'Asia/Tokyo' })).toEqual(['late on the 2nd']);
      expect(await texts({ startAt: '2026-03-04', endAt: '2026-03-04', timezone: 'Asia/Tokyo' })).toEqual(['afternoon of the 3rd']);
      // An alias is read as its canonical zone; instants are instants whatever the zone.
      expect(await texts({ startAt: '2026-03-03', endAt: '2026-03-03', timezone: 'Japan' })).toEqual(['late on the 2nd']);
      expect(await texts({ startAt: '2026-03-02T22:30:00Z', endAt: '2026-03-02T22:30:00Z', timezone: 'Asia/Tokyo' })).toEqual(['late on the 2nd']);
      const listed = await list(owner.token, website.id, { timezone: 'Asia/Tokyo', startAt: '2026-03-03', endAt: '2026-03-03' });
      expect(listed.data).toEqual([late]);
      expect(listed.data[0].timestamp).toBe('2026-03-02T22:30:00.000Z');
    });

    it('filters by q, a case-insensitive substring, taking % and _ literally', async () => {
      const { owner, website } = await ownerWithWebsite();
      for (const text of ['Launched PRICING v2', 'pricing bug fixed', '50% off sale', 'snake_case rename', 'nothing here']) {
        await create(owner.token, website.id, { text });
      }
      const texts = async (q: string) => (await list(owner.token, website.id, { q })).data.map((n) => n.text).sort();
      expect(await texts('Pricing')).toEqual(['Launched PRICING v2', 'pricing bug fixed']);
      expect(await texts('%')).toEqual(['50% off sale']);
      expect(await texts('_')).toEqual(['snake_case rename']);
      expect(await texts('absent')).toEqual([]);
      expect((await list(owner.token, website.id, { q: 'PRICING', limit: '1' })).pagination).toEqual({ limit: 1, offset: 0, total: 2 });
    });

    it('lets a viewer and a read-only token read', async () => {
      const { owner, website } = await ownerWithWebsite();
      await create(owner.token, website.id, { text: 'hello' });
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expect((await list(viewer.token, website.id)).data).toHaveLength(1);
      expect((await list(await createToken(t, owner, ['notes:read'], [website.id]), website.id)).data).toHaveLength(1);
    });

    it('answers a null author once the account that wrote the note is gone', async () => {
      const { owner, website } = await ownerWithWebsite();
      const member = await createAccount(t, 'Leaving Member');
      await addMember(t, website.id, member.id, 'member');
      const note = await create(member.token, website.id, { text: 'by a member' });
      expect(note.author).toEqual({ id: member.id, name: 'Leaving Member' });
      await t.db.deleteFrom('accounts').where('id', '=', member.id).execute();
      expect((await list(owner.token, website.id)).data).toEqual([{ ...note, author: null }]);
    });
  });

  describe('idempotencyKey', () => {
    it('answers the same note for a replay with the same content, and 409 for the key with other content', async () => {
      const { owner, website } = await ownerWithWebsite();
      const body = { text: 'Launch', timestamp: '2026-03-10T09:00:00Z', idempotencyKey: 'launch-2026-03-10' };
      const first = await create(owner.token, website.id, body);
      const replay = await create(owner.token, website.id, { ...body, timestamp: '2026-03-10T10:00:00+01:00' });
      expect(replay).toEqual(first);
      expectError(await t.request('POST', notesUrl(website.id), { token: owner.token, body: { ...body, text: 'Other' } }), 409, /idempotencyKey/);
      // Leaving the timestamp out is other content than sending one.
      expectError(await t.request('POST', notesUrl(website.id), { token: owner.token, body: { text: 'Launch', idempotencyKey: body.idempotencyKey } }), 409);
      const stored = await rows(website.id);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ idempotency_key: 'launch-2026-03-10', request_digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    });

    it('replays a note sent without a timestamp, and creates one note when the same request arrives twice at once', async () => {
      const { owner, website } = await ownerWithWebsite();
      const body = { text: 'Now', idempotencyKey: 'k1' };
      const answers = await Promise.all([1, 2, 3].map(() => t.request('POST', notesUrl(website.id), { token: owner.token, body })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(new Set(answers.map((a) => a.body.data[0].id)).size).toBe(1);
      expect((await create(owner.token, website.id, body)).id).toBe(answers[0]!.body.data[0].id);
      expect(await rows(website.id)).toHaveLength(1);
    });

    it('keeps keys per author: another account may use the same key', async () => {
      const { owner, website } = await ownerWithWebsite();
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const a = await create(owner.token, website.id, { text: 'A', idempotencyKey: 'same' });
      const b = await create(member.token, website.id, { text: 'B', idempotencyKey: 'same' });
      expect(b.id).not.toBe(a.id);
    });
  });

  describe('update and delete', () => {
    it('changes only the fields sent on PUT and answers the note', async () => {
      const { owner, website } = await ownerWithWebsite();
      const note = await create(owner.token, website.id, { text: 'Draft', timestamp: '2026-03-10T09:00:00Z' });
      const put = async (body: Record<string, unknown>) => {
        const response = await t.request('PUT', notesUrl(website.id, note.id), { token: owner.token, body });
        expect(response.status, response.raw).toBe(200);
        return response.body.data[0];
      };
      const renamed = await put({ text: 'Final' });
      expect(renamed).toMatchObject({ id: note.id, text: 'Final', timestamp: '2026-03-10T09:00:00.000Z', createdAt: note.createdAt });
      expect(Date.parse(renamed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(note.updatedAt));
      const moved = await put({ timestamp: '2026-03-11T00:00:00-05:00' });
      expect(moved).toMatchObject({ text: 'Final', timestamp: '2026-03-11T05:00:00.000Z' });
      expect((await list(owner.token, website.id)).data).toEqual([moved]);
    });

    it('lets a member and the df_ key edit and delete any note of the website; DELETE answers [{message}]', async () => {
      const { owner, website } = await ownerWithWebsite();
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const key = (await createApiKey(t, owner.token, website.id)).key;
      const note = await create(owner.token, website.id, { text: 'By the owner' });
      const edited = await t.request('PUT', notesUrl(website.id, note.id), { token: member.token, body: { text: 'Edited by a member' } });
      expect(edited.status, edited.raw).toBe(200);
      expect(edited.body.data[0].author).toEqual(note.author);
      const deleted = await t.request('DELETE', notesUrl(website.id, note.id), { token: key });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.body).toEqual({ status: 'success', data: [{ message: 'Note deleted' }] });
      expect(await rows(website.id)).toEqual([]);
      expectError(await t.request('DELETE', notesUrl(website.id, note.id), { token: key }), 404, /Note not found/);
      expectError(await t.request('PUT', notesUrl(website.id, note.id), { token: key, body: { text: 'x' } }), 404, /Note not found/);
    });
  });

  describe('who may call', () => {
    it('answers 401 on every route without a credential, and changes nothing', async () => {
      const { owner, website } = await ownerWithWebsite();
      const note = await create(owner.token, website.id, { text: 'kept' });
      const before = await rows(website.id);
      for (const [method, url, body] of [
        ['GET', notesUrl(website.id), undefined],
        ['POST', notesUrl(website.id), { text: 'x' }],
        ['PUT', notesUrl(website.id, note.id), { text: 'x' }],
        ['DELETE', notesUrl(website.id, note.id), undefined],
      ] as const) {
        const response = await t.request(method, url, { body });
        expectError(response, 401);
        expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer/);
      }
      expect(await rows(website.id)).toEqual(before);
    });

    it('answers 403 for a missing permission, a viewer writing, a token of another website and a df_ key of another website', async () => {
      const { owner, website } = await ownerWithWebsite();
      const note = await create(owner.token, website.id, { text: 'kept' });
      const before = await rows(website.id);
      expectError(await t.request('GET', notesUrl(website.id), { token: await createToken(t, owner, allBut('notes:read')) }), 403, /notes:read/);
      const noWrite = await createToken(t, owner, allBut('notes:write'));
      expectError(await t.request('POST', notesUrl(website.id), { token: noWrite, body: { text: 'x' } }), 403, /notes:write/);
      expectError(await t.request('PUT', notesUrl(website.id, note.id), { token: noWrite, body: { text: 'x' } }), 403, /notes:write/);
      expectError(await t.request('DELETE', notesUrl(website.id, note.id), { token: noWrite }), 403, /notes:write/);

      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      expectError(await t.request('POST', notesUrl(website.id), { token: viewer.token, body: { text: 'x' } }), 403, /viewer/);
      expectError(await t.request('PUT', notesUrl(website.id, note.id), { token: viewer.token, body: { text: 'x' } }), 403, /viewer/);
      expectError(await t.request('DELETE', notesUrl(website.id, note.id), { token: viewer.token }), 403, /viewer/);

      const other = await createWebsite(t, owner.token);
      const elsewhere = await createToken(t, owner, ['notes:read', 'notes:write'], [other.id]);
      expectError(await t.request('GET', notesUrl(website.id), { token: elsewhere }), 403, /not allowed/);
      expectError(await t.request('POST', notesUrl(website.id), { token: elsewhere, body: { text: 'x' } }), 403, /not allowed/);
      const otherKey = (await createApiKey(t, owner.token, other.id)).key;
      expectError(await t.request('GET', notesUrl(website.id), { token: otherKey }), 403, /another website/);
      expectError(await t.request('DELETE', notesUrl(website.id, note.id), { token: otherKey }), 403, /another website/);
      expect(await rows(website.id)).toEqual(before);
    });

    it("answers 404 for another account's website, an unknown website and another website's note, even with a bad body", async () => {
      const { owner, website } = await ownerWithWebsite();
      const note = await create(owner.token, website.id, { text: 'kept' });
      const before = await rows(website.id);
      const stranger = await createAccount(t);
      expectError(await t.request('GET', notesUrl(website.id), { token: stranger.token }), 404);
      expectError(await t.request('POST', notesUrl(website.id), { token: stranger.token, body: { text: 'x' } }), 404);
      expectError(await t.request('POST', notesUrl(website.id), { token: stranger.token, body: { nope: 1 } }), 404);
      expectError(await t.request('PUT', notesUrl(website.id, note.id), { token: stranger.token, body: { text: 'x' } }), 404);
      expectError(await t.request('DELETE', notesUrl(website.id, note.id), { token: stranger.token }), 404);
      expectError(await t.request('GET', notesUrl(UNKNOWN_ID), { token: owner.token }), 404);

      // The stranger's own website does not reach this website's note either.
      const theirs = await createWebsite(t, stranger.token);
      expectError(await t.request('PUT', notesUrl(theirs.id, note.id), { token: stranger.token, body: { text: 'x' } }), 404, /Note not found/);
      expectError(await t.request('DELETE', notesUrl(theirs.id, note.id), { token: stranger.token }), 404, /Note not found/);
      // Nor does the owner's other website.
      const second = await createWebsite(t, owner.token);
      expectError(await t.request('DELETE', notesUrl(second.id, note.id), { token: owner.token }), 404, /Note not found/);
      expectError(await t.request('PUT', notesUrl(website.id, UNKNOWN_ID), { token: owner.token, body: { text: 'x' } }), 404, /Note not found/);
      expect(await rows(website.id)).toEqual(before);
    });
  });

  describe('bad input', () => {
    const badCreates: [string, unknown, RegExp][] = [
      ['no text', {}, /body\.text: is required/],
      ['an empty text', { text: '' }, /body\.text: must NOT have fewer than 1 characters/],
      ['a text of only white space', { text: '   \n' }, /body\.text: must not be only white space/],
      ['a text of 501 characters', { text: 'x'.repeat(501) }, /body\.text: must NOT have more than 500 characters/],
      ['a text that is a number', { text: 5 }, /body\.text: must be string/],
      ['a timestamp without a zone', { text: 'x', timestamp: '2026-03-10T09:00:00' }, /body\.timestamp/],
      ['a day that does not exist', { text: 'x', timestamp: '2026-02-30' }, /body\.timestamp: must be an ISO-8601 instant with a time zone, or a YYYY-MM-DD day/],
      ['a timestamp that is a word', { text: 'x', timestamp: 'yesterday' }, /body\.timestamp: must be an ISO-8601 instant/],
      ['a timestamp that is a month', { text: 'x', timestamp: '2026-03' }, /body\.timestamp: must be an ISO-8601 instant/],
      ['a day before 1970', { text: 'x', timestamp: '1969-12-31' }, /body\.timestamp: must be an instant between 1970 and 9999/],
      ['a timestamp of 41 characters', { text: 'x', timestamp: `2026-03-10T09:00:00.${'0'.repeat(20)}Z` }, /body\.timestamp/],
      ['a timestamp before 1970', { text: 'x', timestamp: '1969-12-31T23:59:59Z' }, /body\.timestamp: must be an instant between 1970 and 9999/],
      ['an empty idempotencyKey', { text: 'x', idempotencyKey: '' }, /body\.idempotencyKey/],
      ['an idempotencyKey of 129 characters', { text: 'x', idempotencyKey: 'k'.repeat(129) }, /body\.idempotencyKey/],
      ['an idempotencyKey with a line break', { text: 'x', idempotencyKey: 'a\nb' }, /body\.idempotencyKey: must match pattern/],
      ['an unknown field', { text: 'x', author: 'me' }, /body\.author: is not an allowed field/],
    ];
    for (const [label, body, pattern] of badCreates) {
      it(`answers 400 on POST for ${label}, and creates nothing`, async () => {
        const { owner, website } = await ownerWithWebsite();
        expectError(await t.request('POST', notesUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await rows(website.id)).toEqual([]);
      });
    }

    const badUpdates: [string, unknown, RegExp][] = [
      ['an empty body', {}, /body: must contain at least one field/],
      ['an empty text', { text: '' }, /body\.text/],
      ['a text of only white space', { text: ' ' }, /body\.text: must not be only white space/],
      ['a bad timestamp', { timestamp: 'yesterday' }, /body\.timestamp: must be an ISO-8601 instant/],
      ['a day that does not exist', { timestamp: '2026-13-01' }, /body\.timestamp: must be an ISO-8601 instant/],
      ['a null timestamp', { timestamp: null }, /body\.timestamp: must be string/],
      ['an idempotencyKey', { idempotencyKey: 'k' }, /body\.idempotencyKey: is not an allowed field/],
    ];
    for (const [label, body, pattern] of badUpdates) {
      it(`answers 400 on PUT for ${label}, and changes nothing`, async () => {
        const { owner, website } = await ownerWithWebsite();
        const note = await create(owner.token, website.id, { text: 'kept' });
        const before = await rows(website.id);
        expectError(await t.request('PUT', notesUrl(website.id, note.id), { token: owner.token, body }), 400, pattern);
        expect(await rows(website.id)).toEqual(before);
      });
    }

    const badQueries: [string, Record<string, string>, RegExp][] = [
      ['limit 0', { limit: '0' }, /query\.limit/],
      ['limit 1001', { limit: '1001' }, /query\.limit/],
      ['a negative offset', { offset: '-1' }, /query\.offset/],
      ['startAt without endAt', { startAt: '2026-03-01' }, /query\.endAt: is required/],
      ['a bad day', { startAt: '2026-13-01', endAt: '2026-03-02' }, /query\.startAt/],
      ['an empty q', { q: '' }, /query\.q/],
      ['a q of 201 characters', { q: 'q'.repeat(201) }, /query\.q/],
      ['a q with a NUL character', { q: 'a\u0000b' }, /query\.q/],
      ['an unknown parameter', { sort: 'asc' }, /query\.sort: is not an allowed field/],
      ['a time zone that is not one', { timezone: 'Mars/Olympus' }, /query\.timezone: must be an IANA time-zone name/],
      ['a UTC offset as time zone', { timezone: '+02:00' }, /query\.timezone: must be an IANA time-zone name/],
      ['a bad time zone without any day', { timezone: 'nowhere', q: 'x' }, /query\.timezone/],
      ['an empty time zone', { timezone: '' }, /query\.timezone/],
      ['an unknown order', { order: 'newest' }, /query\.order: must be one of: "desc", "asc"/],
      ['an order in capitals', { order: 'ASC' }, /query\.order/],
    ];
    for (const [label, query, pattern] of badQueries) {
      it(`answers 400 on GET for ${label}`, async () => {
        const { owner, website } = await ownerWithWebsite();
        expectError(await t.request('GET', notesUrl(website.id), { token: owner.token, query }), 400, pattern);
      });
    }

    it('answers 400 for a bad note id', async () => {
      const { owner, website } = await ownerWithWebsite();
      expectError(await t.request('DELETE', notesUrl(website.id, 'nope'), { token: owner.token }), 400, /path\.noteId/);
    });
  });
});
