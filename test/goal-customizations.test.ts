import { describe, expect, it } from 'vitest';
import { GOAL_PALETTE } from '../src/modules/goals/goal-palette.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FAMILIES = ['red', 'orange', 'yellow', 'green', 'purple', 'pink', 'gray', 'blue', 'teal', 'indigo'];
const ITEM_KEYS = ['color', 'description', 'displayName', 'goalName', 'updatedAt'];
const LONG_AGO = '2020-01-01T00:00:00.000Z';

const customizationsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/goals/customizations`;
const resetUrl = (websiteId: string, goalName: string) => `${customizationsUrl(websiteId)}?goalName=${encodeURIComponent(goalName)}`;

/** A website's customizations as stored, in code-point order of the goal name. */
async function stored(t: TestApp, websiteId: string) {
  const rows = await t.db.selectFrom('goal_customizations').selectAll().where('website_id', '=', websiteId).execute();
  return rows.sort((a, b) => (a.goal_name < b.goal_name ? -1 : a.goal_name > b.goal_name ? 1 : 0));
}

async function ownerWithWebsite(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

async function customize(t: TestApp, token: string, websiteId: string, body: Record<string, unknown>) {
  const response = await t.request('PATCH', customizationsUrl(websiteId), { token, body });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0];
}

/** An owner's website with one full customization of "signup", the usual starting point. */
async function customizedWebsite(t: TestApp) {
  const { owner, website } = await ownerWithWebsite(t);
  await customize(t, owner.token, website.id, {
    goalName: 'signup',
    displayName: 'Sign-up',
    color: '#22c55e',
    description: 'A visitor created an account',
  });
  return { owner, website, before: await stored(t, website.id) };
}

describeEachEngine('goal customizations', (engine) => {
  const t = useTestApp(engine);

  describe('the palette', () => {
    it("lists three shades of every kpiColorScheme family and the hosted service's colors as lower-case hex colors", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const response = await t.request('GET', customizationsUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [], colors: expect.any(Array) });
      const colors: { color: string; family: string; label: string }[] = response.body.colors;
      expect(colors).toHaveLength(32);
      for (const entry of colors) {
        expect(Object.keys(entry).sort()).toEqual(['color', 'family', 'label']);
        expect(entry.color).toMatch(/^#[0-9a-f]{6}$/);
      }
      expect(new Set(colors.map((c) => c.color)).size).toBe(32);
      expect([...new Set(colors.map((c) => c.family))]).toEqual(FAMILIES);
      for (const family of FAMILIES) expect(colors.filter((c) => c.family === family)).toHaveLength(family === 'green' || family === 'blue' ? 4 : 3);
      expect(colors.filter((c) => c.family === 'red').map((c) => c.label)).toEqual(['Red (light)', 'Red', 'Red (dark)']);
      expect(colors.filter((c) => c.family === 'indigo').map((c) => c.label)).toEqual(['Indigo (light)', 'Indigo', 'Indigo (dark)']);
      expect(colors.filter((c) => c.family === 'blue').map((c) => c.label)).toEqual(['Blue (light)', 'Blue', 'Blue (dark)', 'Sky']);
      expect(colors.filter((c) => c.family === 'green').map((c) => c.label)).toEqual(['Green (light)', 'Green', 'Green (dark)', 'Lime']);
      const hosted = ['#8dcdff', '#84cc16', '#f97316', '#eab308', '#ec4899', '#ef4444', '#a855f7', '#14b8a6'];
      for (const color of hosted) expect(colors.map((c) => c.color), color).toContain(color);
      expect(colors).toEqual(GOAL_PALETTE);
    });
  });

  describe('list', () => {
    it('lists the website customizations in code-point order of the goal name, and no other website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      for (const goalName of ['newsletter_signup', 'checkout_paid', 'checkout:done', 'checkout-start', 'a1']) {
        await customize(t, owner.token, website.id, { goalName, displayName: `Name of ${goalName}` });
      }
      await customize(t, owner.token, other.id, { goalName: 'elsewhere', color: '#ef4444' });

      const response = await t.request('GET', customizationsUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data.map((item: { goalName: string }) => item.goalName)).toEqual([
        'a1',
        'checkout-start',
        'checkout:done',
        'checkout_paid',
        'newsletter_signup',
      ]);
      expect(response.body.colors).toEqual(GOAL_PALETTE);
    });

    it('answers each item with exactly goalName, displayName, color, description and updatedAt', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await customize(t, owner.token, website.id, {
        goalName: 'signup',
        displayName: 'Sign-up',
        color: '#3b82f6',
        description: 'Account created',
      });
      await customize(t, owner.token, website.id, { goalName: 'purchase', color: '#b91c1c' });
      const response = await t.request('GET', customizationsUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['colors', 'data', 'status']);
      const [purchase, signup] = response.body.data;
      expect(Object.keys(purchase).sort()).toEqual(ITEM_KEYS);
      expect(purchase).toEqual({ goalName: 'purchase', displayName: null, color: '#b91c1c', description: null, updatedAt: expect.stringMatching(ISO_MS) });
      expect(signup).toEqual(created);
    });
  });

  describe('update (PATCH)', () => {
    it('creates a customization, answers it as one item and stores it', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const response = await t.request('PATCH', customizationsUrl(website.id), {
        token: owner.token,
        body: { goalName: 'signup', displayName: 'Sign-up', color: '#ef4444', description: 'A visitor created an account' },
      });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({
        status: 'success',
        data: [
          {
            goalName: 'signup',
            displayName: 'Sign-up',
            color: '#ef4444',
            description: 'A visitor created an account',
            updatedAt: expect.stringMatching(ISO_MS),
          },
        ],
      });
      const { updatedAt } = response.body.data[0];
      expect(Date.parse(updatedAt)).toBeGreaterThan(Date.now() - 60_000);
      expect(await stored(t, website.id)).toEqual([
        {
          website_id: website.id,
          goal_name: 'signup',
          display_name: 'Sign-up',
          color: '#ef4444',
          description: 'A visitor created an account',
          updated_at: updatedAt,
        },
      ]);
    });

    it('creates with only some fields and leaves the others null', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', description: 'Only a description' });
      expect(item).toMatchObject({ goalName: 'signup', displayName: null, color: null, description: 'Only a description' });
      const [row] = await stored(t, website.id);
      expect(row).toMatchObject({ display_name: null, color: null, description: 'Only a description' });
    });

    it('changes only the fields sent and moves updatedAt', async () => {
      const { owner, website } = await customizedWebsite(t);
      await t.db.updateTable('goal_customizations').set({ updated_at: LONG_AGO }).where('website_id', '=', website.id).execute();

      const item = await customize(t, owner.token, website.id, { goalName: 'signup', color: '#1d4ed8' });
      expect(item).toEqual({
        goalName: 'signup',
        displayName: 'Sign-up',
        color: '#1d4ed8',
        description: 'A visitor created an account',
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(item.updatedAt)).toBeGreaterThan(Date.parse(LONG_AGO));

      const again = await customize(t, owner.token, website.id, { goalName: 'signup', displayName: 'Account created' });
      expect(again).toMatchObject({ displayName: 'Account created', color: '#1d4ed8', description: 'A visitor created an account' });
      expect(await stored(t, website.id)).toEqual([
        {
          website_id: website.id,
          goal_name: 'signup',
          display_name: 'Account created',
          color: '#1d4ed8',
          description: 'A visitor created an account',
          updated_at: again.updatedAt,
        },
      ]);
    });

    it('clears a field sent as null and keeps the others', async () => {
      const { owner, website } = await customizedWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', description: null });
      expect(item).toMatchObject({ goalName: 'signup', displayName: 'Sign-up', color: '#22c55e', description: null });
      const [row] = await stored(t, website.id);
      expect(row).toMatchObject({ display_name: 'Sign-up', color: '#22c55e', description: null });

      const cleared = await customize(t, owner.token, website.id, { goalName: 'signup', color: null });
      expect(cleared).toMatchObject({ displayName: 'Sign-up', color: null, description: null });
      expect((await stored(t, website.id))[0]).toMatchObject({ display_name: 'Sign-up', color: null, description: null });
    });

    it('removes the customization once every field is null, as a reset does', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      await customize(t, owner.token, website.id, { goalName: 'signup', displayName: 'Sign-up' });
      await customize(t, owner.token, website.id, { goalName: 'purchase', color: '#ef4444' });

      const item = await customize(t, owner.token, website.id, { goalName: 'signup', displayName: null });
      expect(item).toEqual({ goalName: 'signup', displayName: null, color: null, description: null, updatedAt: expect.stringMatching(ISO_MS) });
      expect((await stored(t, website.id)).map((row) => row.goal_name)).toEqual(['purchase']);

      const list = await t.request('GET', customizationsUrl(website.id), { token: owner.token });
      expect(list.body.data.map((i: { goalName: string }) => i.goalName)).toEqual(['purchase']);
      const reset = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: owner.token });
      expect(reset.body.data).toEqual([{ deleted: false, goalName: 'signup' }]);
    });

    it('removes a full customization when all three fields are sent as null', async () => {
      const { owner, website } = await customizedWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', displayName: null, color: null, description: null });
      expect(item).toMatchObject({ goalName: 'signup', displayName: null, color: null, description: null });
      expect(await stored(t, website.id)).toEqual([]);
    });

    it('stores nothing when a goal without a customization is sent only nulls', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', color: null });
      expect(item).toMatchObject({ goalName: 'signup', displayName: null, color: null, description: null });
      expect(await stored(t, website.id)).toEqual([]);
    });

    it('accepts a palette color in upper case and stores it in lower case', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', color: '#EF4444' });
      expect(item.color).toBe('#ef4444');
      expect((await stored(t, website.id))[0]!.color).toBe('#ef4444');
    });

    it('accepts every palette color', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      for (const { color } of GOAL_PALETTE) {
        expect((await customize(t, owner.token, website.id, { goalName: 'signup', color })).color).toBe(color);
      }
    });

    it('accepts the longest goal name, display name and description, and an empty description', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const goalName = `${'g'.repeat(60)}:_-9`;
      const body = { goalName, displayName: 'd'.repeat(80), description: 'é'.repeat(300) };
      const item = await customize(t, owner.token, website.id, body);
      expect(item).toMatchObject(body);
      expect(await customize(t, owner.token, website.id, { goalName, description: '' })).toMatchObject({ description: '' });
    });

    it('keeps customizations of different goals and websites apart', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const other = await createWebsite(t, owner.token);
      await customize(t, owner.token, other.id, { goalName: 'signup', displayName: 'Elsewhere' });
      await customize(t, owner.token, website.id, { goalName: 'purchase', displayName: 'Purchase' });
      expect((await stored(t, website.id)).find((row) => row.goal_name === 'signup')).toEqual(before[0]);
      expect((await stored(t, other.id)).map((row) => [row.goal_name, row.display_name])).toEqual([['signup', 'Elsewhere']]);
    });

    it('accepts a body of exactly 4 KiB and answers 413 above it, changing nothing', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const head = '{"goalName":"signup","displayName":"Padded"';
      const payload = (size: number) => `${head}${' '.repeat(size - head.length - 1)}}`;
      const headers = { 'content-type': 'application/json' };

      const tooLarge = await t.request('PATCH', customizationsUrl(website.id), { token: owner.token, payload: payload(4097), headers });
      expectError(tooLarge, 413, /too large/);
      const fiveKiB = await t.request('PATCH', customizationsUrl(website.id), {
        token: owner.token,
        body: { goalName: 'signup', description: 'x'.repeat(5 * 1024) },
      });
      expectError(fiveKiB, 413, /too large/);
      expect(await stored(t, website.id)).toEqual(before);

      const fits = await t.request('PATCH', customizationsUrl(website.id), { token: owner.token, payload: payload(4096), headers });
      expect(fits.status, fits.raw).toBe(200);
      expect(fits.body.data[0].displayName).toBe('Padded');
    });
  });

  describe('name, the hosted spelling of displayName', () => {
    it('sets the display name from name, and null clears it', async () => {
      const { owner, website } = await customizedWebsite(t);
      const item = await customize(t, owner.token, website.id, { goalName: 'signup', name: 'Signed up' });
      expect(item).toMatchObject({ goalName: 'signup', displayName: 'Signed up', color: '#22c55e' });
      expect((await stored(t, website.id))[0]!.display_name).toBe('Signed up');
      const cleared = await customize(t, owner.token, website.id, { goalName: 'signup', name: null });
      expect(cleared.displayName).toBeNull();
    });

    it("accepts the hosted service's colors #8dcdff and #84cc16", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expect((await customize(t, owner.token, website.id, { goalName: 'a', color: '#8DCDFF' })).color).toBe('#8dcdff');
      expect((await customize(t, owner.token, website.id, { goalName: 'b', name: 'Lime', color: '#84cc16' })).color).toBe('#84cc16');
    });
  });

  describe('bad input on PATCH', () => {
    const palette = /body\.color: must be a palette color, one of: #fca5a5, #ef4444, #b91c1c, .*#4338ca$/;
    const cases: { label: string; body?: unknown; pattern: RegExp }[] = [
      { label: 'goalName missing', body: { displayName: 'x' }, pattern: /body\.goalName: is required/ },
      { label: 'no body at all', body: undefined, pattern: /body\.goalName: is required/ },
      { label: 'goalName "identify"', body: { goalName: 'identify', displayName: 'x' }, pattern: /body\.goalName: must match pattern/ },
      { label: 'goalName in upper case', body: { goalName: 'SignUp', displayName: 'x' }, pattern: /body\.goalName: must match pattern/ },
      { label: 'goalName with a space', body: { goalName: 'sign up', displayName: 'x' }, pattern: /body\.goalName: must match pattern/ },
      { label: 'goalName empty', body: { goalName: '', displayName: 'x' }, pattern: /body\.goalName: must match pattern/ },
      { label: 'goalName of 65 characters', body: { goalName: 'g'.repeat(65), displayName: 'x' }, pattern: /body\.goalName: must match pattern/ },
      { label: 'goalName a number', body: { goalName: 7, displayName: 'x' }, pattern: /body\.goalName: must be string/ },
      { label: 'goalName null', body: { goalName: null, displayName: 'x' }, pattern: /body\.goalName: must be string/ },
      { label: 'no field besides goalName', body: { goalName: 'signup' }, pattern: /body: send at least one of displayName, color or description besides goalName/ },
      { label: 'displayName empty', body: { goalName: 'signup', displayName: '' }, pattern: /body\.displayName: must NOT have fewer than 1 characters/ },
      { label: 'displayName over 80 characters', body: { goalName: 'signup', displayName: 'd'.repeat(81) }, pattern: /body\.displayName: must NOT have more than 80 characters/ },
      { label: 'description over 300 characters', body: { goalName: 'signup', description: 'd'.repeat(301) }, pattern: /body\.description: must NOT have more than 300 characters/ },
      { label: 'a color name', body: { goalName: 'signup', color: 'red' }, pattern: palette },
      { label: 'a hex color outside the palette', body: { goalName: 'signup', color: '#123456' }, pattern: palette },
      { label: 'a palette color with a space', body: { goalName: 'signup', color: '#ef4444 ' }, pattern: palette },
      { label: 'an unknown field', body: { goalName: 'signup', displayName: 'x', icon: 'star' }, pattern: /body\.icon: is not an allowed field/ },
      { label: 'displayName a number', body: { goalName: 'signup', displayName: 42 }, pattern: /body\.displayName: must be string or null/ },
      { label: 'color a boolean', body: { goalName: 'signup', color: true }, pattern: /body\.color: must be string or null/ },
      { label: 'description an array', body: { goalName: 'signup', description: ['x'] }, pattern: /body\.description: must be string or null/ },
      { label: 'a body that is an array', body: [{ goalName: 'signup', displayName: 'x' }], pattern: /body: must be object/ },
      { label: 'name and displayName together', body: { goalName: 'signup', name: 'A', displayName: 'A' }, pattern: /body\.name: is another spelling of displayName/ },
      { label: 'name empty', body: { goalName: 'signup', name: '' }, pattern: /body\.name: must NOT have fewer than 1 characters/ },
      { label: 'name over 80 characters', body: { goalName: 'signup', name: 'n'.repeat(81) }, pattern: /body\.name: must NOT have more than 80 characters/ },
      { label: 'name a number', body: { goalName: 'signup', name: 3 }, pattern: /body\.name: must be string or null/ },
    ];

    for (const { label, body, pattern } of cases) {
      it(`answers 400 naming the rule for ${label} and changes nothing`, async () => {
        const { owner, website, before } = await customizedWebsite(t);
        expectError(await t.request('PATCH', customizationsUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await stored(t, website.id)).toEqual(before);
      });
    }

    it('answers 400 for malformed JSON and 415 for another content type, changing nothing', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      expectError(
        await t.request('PATCH', customizationsUrl(website.id), {
          token: owner.token,
          payload: '{"goalName":"signup","color":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        /not valid JSON/,
      );
      expectError(
        await t.request('PATCH', customizationsUrl(website.id), {
          token: owner.token,
          payload: 'goalName=signup&color=red',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        415,
      );
      expect(await stored(t, website.id)).toEqual(before);
    });

    it('answers 400 for a malformed websiteId', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', customizationsUrl('12345'), { token: owner.token }), 400, /websiteId/);
    });
  });

  describe('reset (DELETE)', () => {
    it('deletes an existing customization and answers deleted: true; again it answers deleted: false', async () => {
      const { owner, website } = await customizedWebsite(t);
      await customize(t, owner.token, website.id, { goalName: 'purchase', color: '#ef4444' });
      const keep = (await stored(t, website.id)).filter((row) => row.goal_name === 'purchase');

      const response = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [{ deleted: true, goalName: 'signup' }] });
      expect(await stored(t, website.id)).toEqual(keep);

      const again = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: owner.token });
      expect(again.status, again.raw).toBe(200);
      expect(again.body).toEqual({ status: 'success', data: [{ deleted: false, goalName: 'signup' }] });
      expect(await stored(t, website.id)).toEqual(keep);
    });

    it('answers deleted: false for a goal that was never customized', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const response = await t.request('DELETE', resetUrl(website.id, 'checkout:done'), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [{ deleted: false, goalName: 'checkout:done' }] });
      expect(await stored(t, website.id)).toEqual(before);
    });

    it('resets only the website asked for', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const other = await createWebsite(t, owner.token);
      await customize(t, owner.token, other.id, { goalName: 'signup', color: '#ef4444' });
      const reset = await t.request('DELETE', resetUrl(other.id, 'signup'), { token: owner.token });
      expect(reset.body.data).toEqual([{ deleted: true, goalName: 'signup' }]);
      expect(await stored(t, website.id)).toEqual(before);
      expect(await stored(t, other.id)).toEqual([]);
    });

    const badQueries: { label: string; query: string; pattern: RegExp }[] = [
      { label: 'goalName missing', query: '', pattern: /query\.goalName: is required/ },
      { label: 'goalName empty', query: '?goalName=', pattern: /query\.goalName: must match pattern/ },
      { label: 'goalName in upper case', query: '?goalName=Signup', pattern: /query\.goalName: must match pattern/ },
      { label: 'goalName "identify"', query: '?goalName=identify', pattern: /query\.goalName: must match pattern/ },
      { label: 'goalName given twice', query: '?goalName=signup&goalName=purchase', pattern: /query\.goalName: must be string/ },
      { label: 'an unknown query field', query: '?goalName=signup&all=true', pattern: /query\.all: is not an allowed field/ },
    ];

    for (const { label, query, pattern } of badQueries) {
      it(`answers 400 for ${label} and deletes nothing`, async () => {
        const { owner, website, before } = await customizedWebsite(t);
        expectError(await t.request('DELETE', `${customizationsUrl(website.id)}${query}`, { token: owner.token }), 400, pattern);
        expect(await stored(t, website.id)).toEqual(before);
      });
    }
  });

  describe('who may read and change customizations', () => {
    /** Every route once, with a body that would change "signup" if it were accepted. */
    const calls = (websiteId: string): [string, string, unknown][] => [
      ['GET', customizationsUrl(websiteId), undefined],
      ['PATCH', customizationsUrl(websiteId), { goalName: 'signup', displayName: 'Changed' }],
      ['DELETE', resetUrl(websiteId, 'signup'), undefined],
    ];

    it('answers 401 with WWW-Authenticate without a token on every route', async () => {
      const { website, before } = await customizedWebsite(t);
      for (const [method, url, body] of calls(website.id)) {
        const response = await t.request(method, url, { body });
        expectError(response, 401, /missing/);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await stored(t, website.id)).toEqual(before);
    });

    it('needs goals:read to list and goals:write to update and reset', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const readOnly = await createToken(t, owner, ['goals:read']);
      const writeOnly = await createToken(t, owner, ['goals:write']);
      const unrelated = await createToken(t, owner, ['settings:read', 'settings:write']);

      expect((await t.request('GET', customizationsUrl(website.id), { token: readOnly })).status).toBe(200);
      expectError(await t.request('GET', customizationsUrl(website.id), { token: writeOnly }), 403, /lacks the permission goals:read/);
      expectError(await t.request('GET', customizationsUrl(website.id), { token: unrelated }), 403, /lacks the permission goals:read/);
      for (const token of [readOnly, unrelated]) {
        expectError(
          await t.request('PATCH', customizationsUrl(website.id), { token, body: { goalName: 'signup', displayName: 'Changed' } }),
          403,
          /lacks the permission goals:write/,
        );
        expectError(await t.request('DELETE', resetUrl(website.id, 'signup'), { token }), 403, /lacks the permission goals:write/);
      }
      expect(await stored(t, website.id)).toEqual(before);

      expect((await customize(t, writeOnly, website.id, { goalName: 'signup', displayName: 'By writer' })).displayName).toBe('By writer');
      const reset = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: writeOnly });
      expect(reset.body.data).toEqual([{ deleted: true, goalName: 'signup' }]);
    });

    it('lets a viewer list but not update or reset', async () => {
      const { website, before } = await customizedWebsite(t);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');

      const list = await t.request('GET', customizationsUrl(website.id), { token: viewer.token });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data.map((i: { goalName: string; displayName: string }) => [i.goalName, i.displayName])).toEqual([['signup', 'Sign-up']]);
      expectError(
        await t.request('PATCH', customizationsUrl(website.id), { token: viewer.token, body: { goalName: 'signup', displayName: 'Changed' } }),
        403,
        /role \(viewer\)/,
      );
      expectError(await t.request('DELETE', resetUrl(website.id, 'signup'), { token: viewer.token }), 403, /role \(viewer\)/);
      expect(await stored(t, website.id)).toEqual(before);
    });

    it('lets a member list, update and reset', async () => {
      const { website } = await customizedWebsite(t);
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');

      expect((await t.request('GET', customizationsUrl(website.id), { token: member.token })).body.data).toHaveLength(1);
      expect((await customize(t, member.token, website.id, { goalName: 'signup', color: '#6366f1' })).color).toBe('#6366f1');
      expect((await stored(t, website.id))[0]!.color).toBe('#6366f1');
      const reset = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: member.token });
      expect(reset.body.data).toEqual([{ deleted: true, goalName: 'signup' }]);
      expect(await stored(t, website.id)).toEqual([]);
    });

    it('answers 403 on every route for a token limited to other websites', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const other = await createWebsite(t, owner.token);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      for (const [method, url, body] of calls(website.id)) {
        expectError(await t.request(method, url, { token: limited, body }), 403, /not allowed to access this website/);
      }
      expect(await stored(t, website.id)).toEqual(before);
      expect((await t.request('GET', customizationsUrl(other.id), { token: limited })).status).toBe(200);
    });

    it("lets a website API key use its own website's routes", async () => {
      const { owner, website } = await customizedWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);

      const list = await t.request('GET', customizationsUrl(website.id), { token: key.key });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data.map((i: { goalName: string }) => i.goalName)).toEqual(['signup']);
      expect(list.body.colors).toEqual(GOAL_PALETTE);
      expect((await customize(t, key.key, website.id, { goalName: 'signup', displayName: 'By key' })).displayName).toBe('By key');
      expect((await stored(t, website.id))[0]!.display_name).toBe('By key');
      const reset = await t.request('DELETE', resetUrl(website.id, 'signup'), { token: key.key });
      expect(reset.body.data).toEqual([{ deleted: true, goalName: 'signup' }]);
    });

    it('answers 403 on every route for a website API key of another website', async () => {
      const { owner, website, before } = await customizedWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, other.id);
      for (const [method, url, body] of calls(website.id)) {
        expectError(await t.request(method, url, { token: key.key, body }), 403, /belongs to another website/);
      }
      expect(await stored(t, website.id)).toEqual(before);
    });

    it("answers 404 on every route for another account's website and changes nothing", async () => {
      const { website, before } = await customizedWebsite(t);
      const stranger = await createAccount(t);
      for (const [method, url, body] of calls(website.id)) {
        expectError(await t.request(method, url, { token: stranger.token, body }), 404, /Website not found/);
      }
      expect(await stored(t, website.id)).toEqual(before);
    });

    it('answers 404 for an unknown website id', async () => {
      const { owner } = await ownerWithWebsite(t);
      for (const [method, url, body] of calls(UNKNOWN_ID)) {
        expectError(await t.request(method, url, { token: owner.token, body }), 404, /Website not found/);
      }
    });

    it('refuses a caller before looking at the body: 404 and 403 come before 400 and 413', async () => {
      const { website, before } = await customizedWebsite(t);
      const stranger = await createAccount(t);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const tooLarge = { goalName: 'signup', description: 'x'.repeat(5 * 1024) };
      const url = customizationsUrl(website.id);

      expectError(await t.request('PATCH', url, { token: stranger.token, body: { goalName: 'Bad' } }), 404);
      expectError(await t.request('PATCH', url, { token: stranger.token, body: tooLarge }), 404);
      expectError(await t.request('PATCH', url, { token: viewer.token, body: { goalName: 'Bad' } }), 403);
      expectError(await t.request('PATCH', url, { token: viewer.token, body: tooLarge }), 403);
      expectError(await t.request('DELETE', url, { token: viewer.token }), 403);
      expect(await stored(t, website.id)).toEqual(before);
    });
  });
});
