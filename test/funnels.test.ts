import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEventEngine } from './helpers/clickhouse.ts';
import {
  UNKNOWN_ID,
  addMember,
  createAccount,
  createApiKey,
  createToken,
  createWebsite,
  expectError,
} from './helpers/factories.ts';
import { isActiveNameViolation } from '../src/modules/funnels/funnels.repository.ts';

const ID = /^[0-9a-f]{24}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FUNNEL_KEYS = ['_id', 'createdAt', 'id', 'isActive', 'name', 'slug', 'steps', 'updatedAt', 'websiteId'];

const funnelsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/funnels`;
const funnelUrl = (websiteId: string, funnelId: string) => `${funnelsUrl(websiteId)}/${funnelId}`;

const STEPS = [
  { type: 'pageview', url: '/pricing' },
  { type: 'goal', goalName: 'signup' },
];

/** The rows of a website's funnels as stored, deleted ones included. */
async function storedFunnels(t: TestApp, websiteId: string) {
  return t.db.selectFrom('funnels').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('id').execute();
}

async function ownerWithWebsite(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

async function createFunnel(t: TestApp, token: string, websiteId: string, name = 'Signup', steps: unknown[] = STEPS) {
  const response = await t.request('POST', funnelsUrl(websiteId), { token, body: { name, steps } });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0];
}

async function listFunnels(t: TestApp, token: string, websiteId: string) {
  const response = await t.request('GET', funnelsUrl(websiteId), { token });
  expect(response.status, response.raw).toBe(200);
  return response.body.data;
}

describeEachEventEngine('funnels', (engine) => {
  const t = useTestApp(engine);

  describe('create and list', () => {
    it('creates a funnel with generated step ids and default step names, and lists it unchanged', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await t.request('POST', funnelsUrl(website.id), { token: owner.token, body: { name: 'Signup Flow', steps: STEPS } });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.status).toBe('success');
      expect(created.body.data).toHaveLength(1);
      const funnel = created.body.data[0];
      expect(Object.keys(funnel).sort()).toEqual(FUNNEL_KEYS);
      expect(funnel.id).toMatch(ID);
      expect(funnel._id).toBe(funnel.id);
      expect(funnel).toMatchObject({ websiteId: website.id, name: 'Signup Flow', slug: 'signup-flow', isActive: true });
      expect(funnel.steps).toEqual([
        { id: expect.stringMatching(ID), name: '/pricing', type: 'pageview', url: '/pricing' },
        { id: expect.stringMatching(ID), name: 'signup', type: 'goal', goalName: 'signup' },
      ]);
      expect(funnel.steps[0].id).not.toBe(funnel.steps[1].id);
      expect(funnel.createdAt).toMatch(ISO_MS);
      expect(funnel.updatedAt).toBe(funnel.createdAt);
      expect(Date.parse(funnel.createdAt)).toBeGreaterThan(Date.now() - 60_000);

      const list = await t.request('GET', funnelsUrl(website.id), { token: owner.token });
      expect(list.status, list.raw).toBe(200);
      expect(list.body).toEqual({ status: 'success', data: [funnel] });

      const [row] = await storedFunnels(t, website.id);
      expect(row).toMatchObject({ id: funnel.id, name: 'Signup Flow', slug: 'signup-flow' });
      expect(Boolean(row!.is_active)).toBe(true);
      expect(JSON.parse(row!.steps)).toEqual(funnel.steps);
    });

    it('keeps given step names and accepts absolute URLs, 8 steps and 100-character names', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const name = 'n'.repeat(100);
      const steps = [
        { type: 'pageview', url: 'https://example.com/landing?utm_source=x', name: 'Landing' },
        { type: 'pageview', url: 'http://shop.example.com/cart' },
        { type: 'pageview', url: '/' },
        { type: 'pageview', url: `/${'a'.repeat(2047)}` },
        { type: 'goal', goalName: 'add_to_cart', name: 'Added to cart' },
        { type: 'goal', goalName: 'checkout:start' },
        { type: 'goal', goalName: 'pay-now' },
        { name: 's'.repeat(100), type: 'goal', goalName: 'thank_you' },
      ];
      const funnel = await createFunnel(t, owner.token, website.id, name, steps);
      expect(funnel.name).toBe(name);
      expect(funnel.steps.map((s: any) => s.name)).toEqual([
        'Landing',
        'http://shop.example.com/cart',
        '/',
        `/${'a'.repeat(2047)}`,
        'Added to cart',
        'checkout:start',
        'pay-now',
        's'.repeat(100),
      ]);
      expect(funnel.steps[0]).toEqual({ id: expect.stringMatching(ID), name: 'Landing', type: 'pageview', url: steps[0]!.url });
      expect(funnel.steps[4]).toEqual({ id: expect.stringMatching(ID), name: 'Added to cart', type: 'goal', goalName: 'add_to_cart' });
      expect(new Set(funnel.steps.map((s: any) => s.id)).size).toBe(8);
    });

    it('lists only the active funnels of the website asked for, oldest first', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const first = await createFunnel(t, owner.token, website.id, 'First');
      const dropped = await createFunnel(t, owner.token, website.id, 'Dropped');
      const third = await createFunnel(t, owner.token, website.id, 'Third');
      await createFunnel(t, owner.token, other.id, 'Elsewhere');
      expect((await t.request('DELETE', funnelUrl(website.id, dropped.id), { token: owner.token })).status).toBe(200);
      const list = await listFunnels(t, owner.token, website.id);
      expect(list.map((f: any) => f.id)).toEqual([first.id, third.id]);
      expect(list.map((f: any) => f.name)).toEqual(['First', 'Third']);
    });

    it('lists an empty array for a website without funnels', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const list = await t.request('GET', funnelsUrl(website.id), { token: owner.token });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ status: 'success', data: [] });
    });

    it('derives the slug from the name and makes it unique among active funnels', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const slugOf = async (name: string) => (await createFunnel(t, owner.token, website.id, name)).slug;
      expect(await slugOf('  --Checkout: Step 2 / 2026!--  ')).toBe('checkout-step-2-2026');
      expect(await slugOf('Café Visits')).toBe('caf-visits');
      expect(await slugOf('日本語')).toBe('funnel');
      expect(await slugOf('Pricing Page')).toBe('pricing-page');
      expect(await slugOf('pricing-page')).toBe('pricing-page-2');
      expect(await slugOf('Pricing  page!')).toBe('pricing-page-3');
      // A deleted funnel's slug is free again.
      const [, , , first] = await listFunnels(t, owner.token, website.id);
      expect(first.slug).toBe('pricing-page');
      expect((await t.request('DELETE', funnelUrl(website.id, first.id), { token: owner.token })).status).toBe(200);
      expect(await slugOf('PRICING PAGE')).toBe('pricing-page');
    });
  });

  describe('update', () => {
    it('renames a funnel: new name and slug, steps and createdAt unchanged', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Signup');
      const updated = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { name: 'Trial Signup' } });
      expect(updated.status, updated.raw).toBe(200);
      const item = updated.body.data[0];
      expect(Object.keys(item).sort()).toEqual(FUNNEL_KEYS);
      expect(item).toEqual({ ...funnel, name: 'Trial Signup', slug: 'trial-signup', updatedAt: expect.stringMatching(ISO_MS) });
      expect(Date.parse(item.updatedAt)).toBeGreaterThanOrEqual(Date.parse(funnel.updatedAt));
      expect(await listFunnels(t, owner.token, website.id)).toEqual([item]);
    });

    it('keeps the slug on a case-only rename and lets a funnel keep its own name', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Signup');
      const upper = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { name: 'SIGNUP' } });
      expect(upper.status, upper.raw).toBe(200);
      expect(upper.body.data[0]).toMatchObject({ name: 'SIGNUP', slug: 'signup' });
      const same = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { name: 'SIGNUP' } });
      expect(same.status, same.raw).toBe(200);
    });

    it('replaces the steps whole, keeping the ids a step sends and giving new steps new ids', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Signup', [
        { type: 'pageview', url: '/a' },
        { type: 'pageview', url: '/b' },
        { type: 'goal', goalName: 'signup' },
      ]);
      const [a, b, goal] = funnel.steps;
      const updated = await t.request('PUT', funnelUrl(website.id, funnel.id), {
        token: owner.token,
        body: {
          steps: [
            { id: goal.id, type: 'goal', goalName: 'signup', name: 'Signed up' },
            { type: 'pageview', url: 'https://example.com/welcome' },
            { id: a.id, type: 'pageview', url: '/a2' },
          ],
        },
      });
      expect(updated.status, updated.raw).toBe(200);
      const item = updated.body.data[0];
      expect(item.steps).toEqual([
        { id: goal.id, name: 'Signed up', type: 'goal', goalName: 'signup' },
        { id: expect.stringMatching(ID), name: 'https://example.com/welcome', type: 'pageview', url: 'https://example.com/welcome' },
        { id: a.id, name: '/a2', type: 'pageview', url: '/a2' },
      ]);
      expect([a.id, b.id, goal.id]).not.toContain(item.steps[1].id);
      expect(item).toMatchObject({ name: 'Signup', slug: 'signup', isActive: true });
      expect(await listFunnels(t, owner.token, website.id)).toEqual([item]);
      expect(JSON.parse((await storedFunnels(t, website.id))[0]!.steps)).toEqual(item.steps);
    });

    it('changes a step from one type to the other', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const [page, goal] = funnel.steps;
      const updated = await t.request('PUT', funnelUrl(website.id, funnel.id), {
        token: owner.token,
        body: {
          steps: [
            { id: page.id, type: 'goal', goalName: 'viewed_pricing' },
            { id: goal.id, type: 'pageview', url: '/thanks' },
          ],
        },
      });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0].steps).toEqual([
        { id: page.id, name: 'viewed_pricing', type: 'goal', goalName: 'viewed_pricing' },
        { id: goal.id, name: '/thanks', type: 'pageview', url: '/thanks' },
      ]);
    });

    it('edits a deleted funnel without reviving it', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Old');
      expect((await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: owner.token })).status).toBe(200);
      const updated = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { name: 'Older' } });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0]).toMatchObject({ id: funnel.id, name: 'Older', slug: 'older', isActive: false });
      expect(await listFunnels(t, owner.token, website.id)).toEqual([]);
    });

    it('hides a funnel on PUT {isActive: false}', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const updated = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { isActive: false } });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0]).toMatchObject({ id: funnel.id, isActive: false, steps: funnel.steps });
      expect(await listFunnels(t, owner.token, website.id)).toEqual([]);
    });
  });

  describe('delete and revival', () => {
    it('soft-deletes: answers a message, hides the funnel, keeps the row, and a second delete is 404', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const keep = await createFunnel(t, owner.token, website.id, 'Keep');
      const drop = await createFunnel(t, owner.token, website.id, 'Drop');
      const deleted = await t.request('DELETE', funnelUrl(website.id, drop.id), { token: owner.token });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.body).toEqual({ status: 'success', data: [{ message: expect.stringMatching(/deleted/i) }] });

      expect((await listFunnels(t, owner.token, website.id)).map((f: any) => f.id)).toEqual([keep.id]);
      const rows = await storedFunnels(t, website.id);
      expect(rows.map((r) => [r.id, Boolean(r.is_active)])).toEqual([
        [keep.id, true],
        [drop.id, false],
      ]);
      expect(JSON.parse(rows[1]!.steps)).toEqual(drop.steps);

      expectError(await t.request('DELETE', funnelUrl(website.id, drop.id), { token: owner.token }), 404, /Funnel not found/);
    });

    it('revives a deleted funnel with PUT {isActive: true}: same id, name, slug and steps, listed again', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Comeback');
      expect((await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: owner.token })).status).toBe(200);
      const revived = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { isActive: true } });
      expect(revived.status, revived.raw).toBe(200);
      const item = revived.body.data[0];
      expect(item).toEqual({ ...funnel, updatedAt: expect.stringMatching(ISO_MS) });
      expect(await listFunnels(t, owner.token, website.id)).toEqual([item]);
    });

    it('gives a revived funnel a new slug when an active funnel took its slug meanwhile', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Sign up');
      expect((await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: owner.token })).status).toBe(200);
      const taker = await createFunnel(t, owner.token, website.id, 'Sign-up');
      expect(taker.slug).toBe('sign-up');
      const revived = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: { isActive: true } });
      expect(revived.status, revived.raw).toBe(200);
      expect(revived.body.data[0]).toMatchObject({ name: 'Sign up', slug: 'sign-up-2', isActive: true });
    });

    it('revives and renames in one request', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Signup');
      expect((await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: owner.token })).status).toBe(200);
      await createFunnel(t, owner.token, website.id, 'Signup');
      const revived = await t.request('PUT', funnelUrl(website.id, funnel.id), {
        token: owner.token,
        body: { isActive: true, name: 'Signup (old)' },
      });
      expect(revived.status, revived.raw).toBe(200);
      expect(revived.body.data[0]).toMatchObject({ name: 'Signup (old)', slug: 'signup-old', isActive: true });
      expect((await listFunnels(t, owner.token, website.id)).map((f: any) => f.name)).toEqual(['Signup (old)', 'Signup']);
    });
  });

  describe('duplicate names', () => {
    it('answers 409 for a second active funnel of the same name in another case, and creates nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      await createFunnel(t, owner.token, website.id, 'Signup');
      const before = await storedFunnels(t, website.id);
      expectError(
        await t.request('POST', funnelsUrl(website.id), { token: owner.token, body: { name: 'SIGNUP', steps: STEPS } }),
        409,
        /already named "Signup"/,
      );
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('answers 409 when renaming to the name of another active funnel, and changes nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      await createFunnel(t, owner.token, website.id, 'Signup');
      const other = await createFunnel(t, owner.token, website.id, 'Checkout');
      const before = await storedFunnels(t, website.id);
      expectError(
        await t.request('PUT', funnelUrl(website.id, other.id), { token: owner.token, body: { name: 'signup', steps: STEPS } }),
        409,
        /already named "Signup"/,
      );
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('answers 409 when reviving a funnel whose name an active funnel now has, and leaves it deleted', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const old = await createFunnel(t, owner.token, website.id, 'Signup');
      expect((await t.request('DELETE', funnelUrl(website.id, old.id), { token: owner.token })).status).toBe(200);
      // A name used only by a deleted funnel is free.
      const current = await createFunnel(t, owner.token, website.id, 'signup');
      expect(current.slug).toBe('signup');
      const before = await storedFunnels(t, website.id);
      expectError(
        await t.request('PUT', funnelUrl(website.id, old.id), { token: owner.token, body: { isActive: true } }),
        409,
        /already named "signup"/,
      );
      expect(await storedFunnels(t, website.id)).toEqual(before);
      expect((await listFunnels(t, owner.token, website.id)).map((f: any) => f.id)).toEqual([current.id]);
    });

    it('allows the same name on another website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const stranger = await ownerWithWebsite(t);
      const here = await createFunnel(t, owner.token, website.id, 'Signup');
      const there = await createFunnel(t, owner.token, other.id, 'Signup');
      const foreign = await createFunnel(t, stranger.owner.token, stranger.website.id, 'Signup');
      expect([here.slug, there.slug, foreign.slug]).toEqual(['signup', 'signup', 'signup']);
    });

    it('answers one 200 and otherwise 409, never 500, for concurrent creations of one name', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.request('POST', funnelsUrl(website.id), { token: owner.token, body: { name: i % 2 ? 'Race' : 'RACE', steps: STEPS } }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, /already named/);
      expect(await storedFunnels(t, website.id)).toHaveLength(1);
    });

    it('recognises a violation of the active-name index on this engine, and nothing else', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id, 'Signup');
      const [row] = await storedFunnels(t, website.id);
      const insert = (values: Partial<typeof row>) =>
        t.db
          .insertInto('funnels')
          .values({ ...row!, is_active: true, ...values } as any)
          .execute()
          .then(
            () => null,
            (error: unknown) => error,
          );
      const duplicateName = await insert({ id: UNKNOWN_ID, name: 'SIGNUP' });
      expect(duplicateName).toBeInstanceOf(Error);
      expect(isActiveNameViolation(duplicateName)).toBe(true);
      const duplicateId = await insert({ id: funnel.id, name: 'Other' });
      expect(duplicateId).toBeInstanceOf(Error);
      expect(isActiveNameViolation(duplicateId)).toBe(false);
      expect(isActiveNameViolation(new Error('funnels_active_name'))).toBe(false);
      expect(await storedFunnels(t, website.id)).toEqual([row]);
    });
  });

  describe('bad input', () => {
    const step = (i: number) => ({ type: 'pageview', url: `/step-${i}` });
    const createCases: { label: string; body?: unknown; pattern: RegExp }[] = [
      { label: 'one step', body: { name: 'F', steps: [step(1)] }, pattern: /body\.steps: must NOT have fewer than 2 items/ },
      {
        label: 'nine steps',
        body: { name: 'F', steps: Array.from({ length: 9 }, (_, i) => step(i)) },
        pattern: /body\.steps: must NOT have more than 8 items/,
      },
      { label: 'steps missing', body: { name: 'F' }, pattern: /body\.steps: is required/ },
      { label: 'name missing', body: { steps: STEPS }, pattern: /body\.name: is required/ },
      { label: 'no body at all', body: undefined, pattern: /^body\.name: is required$/ },
      {
        label: 'a pageview step without url',
        body: { name: 'F', steps: [step(1), { type: 'pageview', name: 'No url' }] },
        pattern: /body\.steps\[1\]\.url: is required for a pageview step/,
      },
      {
        label: 'a goal step without goalName',
        body: { name: 'F', steps: [{ type: 'goal' }, step(1)] },
        pattern: /body\.steps\[0\]\.goalName: is required for a goal step/,
      },
      {
        label: 'a pageview step with goalName',
        body: { name: 'F', steps: [step(1), { type: 'pageview', url: '/x', goalName: 'signup' }] },
        pattern: /body\.steps\[1\]\.goalName: is not allowed on a pageview step/,
      },
      {
        label: 'a goal step with url',
        body: { name: 'F', steps: [step(1), { type: 'goal', goalName: 'signup', url: '/x' }] },
        pattern: /body\.steps\[1\]\.url: is not allowed on a goal step/,
      },
      {
        label: 'an upper-case goalName',
        body: { name: 'F', steps: [step(1), { type: 'goal', goalName: 'SignUp' }] },
        pattern: /body\.steps\[1\]\.goalName: must match pattern/,
      },
      {
        label: 'the reserved goalName identify',
        body: { name: 'F', steps: [step(1), { type: 'goal', goalName: 'identify' }] },
        pattern: /body\.steps\[1\]\.goalName: must match pattern/,
      },
      {
        label: 'a goalName over 64 characters',
        body: { name: 'F', steps: [step(1), { type: 'goal', goalName: 'g'.repeat(65) }] },
        pattern: /body\.steps\[1\]\.goalName: must match pattern/,
      },
      ...['pricing', 'ftp://example.com/a', '//evil.example.com/a', '/with space', 'https://', 'javascript:alert(1)', '/tab\there'].map(
        (url) => ({
          label: `the url ${JSON.stringify(url)}`,
          body: { name: 'F', steps: [step(1), { type: 'pageview', url }] },
          pattern: /body\.steps\[1\]\.url: must be a path starting with \/ or an absolute http\(s\) URL/,
        }),
      ),
      {
        label: 'a url over 2048 characters',
        body: { name: 'F', steps: [step(1), { type: 'pageview', url: `/${'a'.repeat(2048)}` }] },
        pattern: /body\.steps\[1\]\.url: must NOT have more than 2048 characters/,
      },
      {
        label: 'an empty url',
        body: { name: 'F', steps: [step(1), { type: 'pageview', url: '' }] },
        pattern: /body\.steps\[1\]\.url: must NOT have fewer than 1 characters/,
      },
      { label: 'an unknown body field', body: { name: 'F', steps: STEPS, isActive: true }, pattern: /body\.isActive: is not an allowed field/ },
      {
        label: 'an unknown step field',
        body: { name: 'F', steps: [step(1), { type: 'pageview', url: '/x', selector: '#buy' }] },
        pattern: /body\.steps\[1\]\.selector: is not an allowed field/,
      },
      { label: 'an unknown step type', body: { name: 'F', steps: [step(1), { type: 'click', url: '/x' }] }, pattern: /body\.steps\[1\]\.type: must be one of: "pageview", "goal"/ },
      { label: 'a step without type', body: { name: 'F', steps: [step(1), { url: '/x' }] }, pattern: /body\.steps\[1\]\.type: is required/ },
      { label: 'a name that is a number', body: { name: 42, steps: STEPS }, pattern: /body\.name: must be string/ },
      { label: 'an empty name', body: { name: '', steps: STEPS }, pattern: /body\.name: must NOT have fewer than 1 characters/ },
      { label: 'a name over 100 characters', body: { name: 'n'.repeat(101), steps: STEPS }, pattern: /body\.name: must NOT have more than 100 characters/ },
      { label: 'steps that are not an array', body: { name: 'F', steps: 'a,b' }, pattern: /body\.steps: must be array/ },
      { label: 'a step that is a string', body: { name: 'F', steps: [step(1), '/x'] }, pattern: /body\.steps\[1\]: must be object/ },
      { label: 'a url that is a number', body: { name: 'F', steps: [step(1), { type: 'pageview', url: 7 }] }, pattern: /body\.steps\[1\]\.url: must be string/ },
      { label: 'an empty step name', body: { name: 'F', steps: [step(1), { type: 'pageview', url: '/x', name: '' }] }, pattern: /body\.steps\[1\]\.name: must NOT have fewer than 1 characters/ },
      { label: 'a step name over 100 characters', body: { name: 'F', steps: [step(1), { type: 'pageview', url: '/x', name: 's'.repeat(101) }] }, pattern: /body\.steps\[1\]\.name: must NOT have more than 100 characters/ },
      { label: 'a malformed step id', body: { name: 'F', steps: [step(1), { id: 'abc', type: 'pageview', url: '/x' }] }, pattern: /body\.steps\[1\]\.id: must match pattern/ },
      { label: 'a step id on creation', body: { name: 'F', steps: [step(1), { id: UNKNOWN_ID, type: 'pageview', url: '/x' }] }, pattern: /body\.steps\[1\]\.id: is not the id of a step of this funnel/ },
      { label: 'a body that is an array', body: [{ name: 'F', steps: STEPS }], pattern: /^body: must be object$/ },
    ];

    for (const { label, body, pattern } of createCases) {
      it(`answers 400 naming the field on creation for ${label}, and creates nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        expectError(await t.request('POST', funnelsUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await storedFunnels(t, website.id)).toEqual([]);
      });
    }

    const updateCases: { label: string; body?: (funnel: any, other: any) => unknown; pattern: RegExp }[] = [
      { label: 'an empty body', body: () => ({}), pattern: /^body: must contain at least one field$/ },
      { label: 'no body at all', body: undefined, pattern: /^body: must contain at least one field$/ },
      { label: 'a body that is an array', body: () => [{ name: 'X' }], pattern: /^body: must be object$/ },
      { label: 'isActive as a string', body: () => ({ isActive: 'yes' }), pattern: /body\.isActive: must be boolean/ },
      { label: 'a null name', body: () => ({ name: null }), pattern: /body\.name: must be string/ },
      { label: 'an unknown field', body: () => ({ slug: 'custom' }), pattern: /body\.slug: is not an allowed field/ },
      { label: 'one step', body: () => ({ steps: [STEPS[0]] }), pattern: /body\.steps: must NOT have fewer than 2 items/ },
      {
        label: 'a goal step with url',
        body: () => ({ steps: [STEPS[0], { type: 'goal', goalName: 'signup', url: '/x' }] }),
        pattern: /body\.steps\[1\]\.url: is not allowed on a goal step/,
      },
      {
        label: 'an unknown step id',
        body: () => ({ steps: [STEPS[0], { id: UNKNOWN_ID, ...STEPS[1] }] }),
        pattern: /body\.steps\[1\]\.id: is not the id of a step of this funnel/,
      },
      {
        label: 'the step id of another funnel',
        body: (_funnel, other) => ({ steps: [{ id: other.steps[0].id, ...STEPS[0] }, STEPS[1]] }),
        pattern: /body\.steps\[0\]\.id: is not the id of a step of this funnel/,
      },
      {
        label: 'one step id twice',
        body: (funnel) => ({ steps: [{ id: funnel.steps[0].id, ...STEPS[0] }, { id: funnel.steps[0].id, ...STEPS[1] }] }),
        pattern: /body\.steps\[1\]\.id: is already used by an earlier step/,
      },
      {
        label: 'a valid rename with a bad step',
        body: () => ({ name: 'Renamed', steps: [STEPS[0], { type: 'goal' }] }),
        pattern: /body\.steps\[1\]\.goalName: is required/,
      },
    ];

    for (const { label, body, pattern } of updateCases) {
      it(`answers 400 naming the field on update for ${label}, and changes nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        const funnel = await createFunnel(t, owner.token, website.id, 'Signup');
        const other = await createFunnel(t, owner.token, website.id, 'Other');
        const before = await storedFunnels(t, website.id);
        const response = await t.request('PUT', funnelUrl(website.id, funnel.id), { token: owner.token, body: body?.(funnel, other) });
        expectError(response, 400, pattern);
        expect(await storedFunnels(t, website.id)).toEqual(before);
      });
    }

    it('answers 400 for malformed JSON and 415 for another content type', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const json = { 'content-type': 'application/json' };
      expectError(await t.request('POST', funnelsUrl(website.id), { token: owner.token, payload: '{"name":', headers: json }), 400, /not valid JSON/);
      expectError(
        await t.request('POST', funnelsUrl(website.id), { token: owner.token, payload: 'name=x', headers: { 'content-type': 'text/plain' } }),
        415,
      );
      expect(await storedFunnels(t, website.id)).toEqual([]);
    });

    it('answers 400 for a malformed funnelId on update and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const before = await storedFunnels(t, website.id);
      for (const bad of ['not-an-id', funnel.id.toUpperCase(), `${funnel.id}0`]) {
        expectError(await t.request('PUT', funnelUrl(website.id, bad), { token: owner.token, body: { name: 'X' } }), 400, /path\.funnelId/);
        expectError(await t.request('DELETE', funnelUrl(website.id, bad), { token: owner.token }), 400, /path\.funnelId/);
      }
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('answers 400 for a malformed websiteId', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', funnelsUrl('12345'), { token: owner.token }), 400, /websiteId/);
    });
  });

  describe('unknown and foreign ids', () => {
    it("answers 404 on every route for another account's website, even with a bad body, and changes nothing", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await createAccount(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const before = await storedFunnels(t, website.id);
      expectError(await t.request('GET', funnelsUrl(website.id), { token: stranger.token }), 404, /Website not found/);
      expectError(await t.request('POST', funnelsUrl(website.id), { token: stranger.token, body: { name: 'X', steps: STEPS } }), 404, /Website not found/);
      expectError(await t.request('POST', funnelsUrl(website.id), { token: stranger.token, body: { steps: [] } }), 404, /Website not found/);
      expectError(await t.request('PUT', funnelUrl(website.id, funnel.id), { token: stranger.token, body: { name: 'X' } }), 404, /Website not found/);
      expectError(await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: stranger.token }), 404, /Website not found/);
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('answers 404 for an unknown website id', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', funnelsUrl(UNKNOWN_ID), { token: owner.token }), 404, /Website not found/);
    });

    it('answers 404 on update and delete for a funnel of another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const foreign = await createFunnel(t, owner.token, other.id);
      const before = await storedFunnels(t, other.id);
      expectError(await t.request('PUT', funnelUrl(website.id, foreign.id), { token: owner.token, body: { name: 'X' } }), 404, /Funnel not found/);
      expectError(await t.request('PUT', funnelUrl(website.id, foreign.id), { token: owner.token, body: { isActive: false } }), 404, /Funnel not found/);
      expectError(await t.request('DELETE', funnelUrl(website.id, foreign.id), { token: owner.token }), 404, /Funnel not found/);
      expect(await storedFunnels(t, other.id)).toEqual(before);
      expect(await storedFunnels(t, website.id)).toEqual([]);
    });

    it("answers 404 on update and delete for a funnel of another account's website", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await ownerWithWebsite(t);
      const foreign = await createFunnel(t, stranger.owner.token, stranger.website.id);
      const before = await storedFunnels(t, stranger.website.id);
      expectError(await t.request('PUT', funnelUrl(website.id, foreign.id), { token: owner.token, body: { name: 'X' } }), 404, /Funnel not found/);
      expectError(await t.request('DELETE', funnelUrl(website.id, foreign.id), { token: owner.token }), 404, /Funnel not found/);
      expect(await storedFunnels(t, stranger.website.id)).toEqual(before);
    });

    it('answers 404 on update and delete for an unknown funnel id', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(await t.request('PUT', funnelUrl(website.id, UNKNOWN_ID), { token: owner.token, body: { isActive: true } }), 404, /Funnel not found/);
      expectError(await t.request('DELETE', funnelUrl(website.id, UNKNOWN_ID), { token: owner.token }), 404, /Funnel not found/);
      expect(await storedFunnels(t, website.id)).toEqual([]);
    });

    it('answers 404 before 400: an unknown funnel with bad steps is 404', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(
        await t.request('PUT', funnelUrl(website.id, UNKNOWN_ID), { token: owner.token, body: { steps: [STEPS[0], { id: UNKNOWN_ID, ...STEPS[1] }] } }),
        404,
        /Funnel not found/,
      );
    });
  });

  describe('who may manage funnels', () => {
    it('answers 401 with WWW-Authenticate without a token on every route', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const before = await storedFunnels(t, website.id);
      const calls: [string, string, unknown][] = [
        ['GET', funnelsUrl(website.id), undefined],
        ['POST', funnelsUrl(website.id), { name: 'X', steps: STEPS }],
        ['PUT', funnelUrl(website.id, funnel.id), { name: 'X' }],
        ['DELETE', funnelUrl(website.id, funnel.id), undefined],
      ];
      for (const [method, url, body] of calls) {
        const response = await t.request(method, url, { body });
        expectError(response, 401, /missing/);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('needs funnels:read to list and funnels:write to create, update and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const funnel = await createFunnel(t, owner.token, website.id);
      const readOnly = await createToken(t, owner, ['funnels:read']);
      const writeOnly = await createToken(t, owner, ['funnels:write']);
      const unrelated = await createToken(t, owner, ['goals:read', 'goals:write']);
      const before = await storedFunnels(t, website.id);

      expect((await listFunnels(t, readOnly, website.id)).map((f: any) => f.id)).toEqual([funnel.id]);
      expectError(await t.request('GET', funnelsUrl(website.id), { token: writeOnly }), 403, /lacks the permission funnels:read/);
      expectError(await t.request('GET', funnelsUrl(website.id), { token: unrelated }), 403, /lacks the permission funnels:read/);
      for (const token of [readOnly, unrelated]) {
        expectError(await t.request('POST', funnelsUrl(website.id), { token, body: { name: 'X', steps: STEPS } }), 403, /lacks the permission funnels:write/);
        expectError(await t.request('PUT', funnelUrl(website.id, funnel.id), { token, body: { name: 'X' } }), 403, /funnels:write/);
        expectError(await t.request('DELETE', funnelUrl(website.id, funnel.id), { token }), 403, /funnels:write/);
      }
      expect(await storedFunnels(t, website.id)).toEqual(before);

      const created = await createFunnel(t, writeOnly, website.id, 'By writer');
      expect(created.name).toBe('By writer');
      expect((await t.request('PUT', funnelUrl(website.id, funnel.id), { token: writeOnly, body: { name: 'Renamed' } })).status).toBe(200);
      expect((await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: writeOnly })).status).toBe(200);
      expect((await listFunnels(t, owner.token, website.id)).map((f: any) => f.id)).toEqual([created.id]);
    });

    it('lets a viewer list but not create, update or delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const funnel = await createFunnel(t, owner.token, website.id);
      const before = await storedFunnels(t, website.id);

      expect(await listFunnels(t, viewer.token, website.id)).toEqual([funnel]);
      expectError(await t.request('POST', funnelsUrl(website.id), { token: viewer.token, body: { name: 'X', steps: STEPS } }), 403, /role \(viewer\)/);
      expectError(await t.request('PUT', funnelUrl(website.id, funnel.id), { token: viewer.token, body: { name: 'X' } }), 403, /role \(viewer\)/);
      expectError(await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: viewer.token }), 403, /role \(viewer\)/);
      expect(await storedFunnels(t, website.id)).toEqual(before);
    });

    it('lets a member create, list, update, delete and revive', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const created = await createFunnel(t, member.token, website.id, 'Member funnel');
      expect(await listFunnels(t, member.token, website.id)).toEqual([created]);
      const renamed = await t.request('PUT', funnelUrl(website.id, created.id), { token: member.token, body: { name: 'Renamed' } });
      expect(renamed.status, renamed.raw).toBe(200);
      const deleted = await t.request('DELETE', funnelUrl(website.id, created.id), { token: member.token });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(await listFunnels(t, owner.token, website.id)).toEqual([]);
      const revived = await t.request('PUT', funnelUrl(website.id, created.id), { token: member.token, body: { isActive: true } });
      expect(revived.status, revived.raw).toBe(200);
      expect((await listFunnels(t, owner.token, website.id)).map((f: any) => f.name)).toEqual(['Renamed']);
    });

    it('answers 403 for a token limited to other websites', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const funnel = await createFunnel(t, owner.token, website.id);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      const before = await storedFunnels(t, website.id);
      expectError(await t.request('GET', funnelsUrl(website.id), { token: limited }), 403, /not allowed to access this website/);
      expectError(await t.request('POST', funnelsUrl(website.id), { token: limited, body: { name: 'X', steps: STEPS } }), 403, /not allowed/);
      expectError(await t.request('PUT', funnelUrl(website.id, funnel.id), { token: limited, body: { name: 'X' } }), 403, /not allowed/);
      expectError(await t.request('DELETE', funnelUrl(website.id, funnel.id), { token: limited }), 403, /not allowed/);
      expect(await storedFunnels(t, website.id)).toEqual(before);
      expect(await listFunnels(t, limited, other.id)).toEqual([]);
    });

    it('lets a df_ key manage the funnels of its own website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const created = await createFunnel(t, key.key, website.id, 'By key');
      expect(created.websiteId).toBe(website.id);
      expect(await listFunnels(t, key.key, website.id)).toEqual([created]);
      const updated = await t.request('PUT', funnelUrl(website.id, created.id), { token: key.key, body: { steps: [...STEPS].reverse() } });
      expect(updated.status, updated.raw).toBe(200);
      const deleted = await t.request('DELETE', funnelUrl(website.id, created.id), { token: key.key });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(await listFunnels(t, owner.token, website.id)).toEqual([]);
    });

    it('answers 403 to a df_ key on another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      const funnel = await createFunnel(t, owner.token, other.id);
      const before = await storedFunnels(t, other.id);
      expectError(await t.request('GET', funnelsUrl(other.id), { token: key.key }), 403, /another website/);
      expectError(await t.request('POST', funnelsUrl(other.id), { token: key.key, body: { name: 'X', steps: STEPS } }), 403, /another website/);
      expectError(await t.request('PUT', funnelUrl(other.id, funnel.id), { token: key.key, body: { name: 'X' } }), 403, /another website/);
      expectError(await t.request('DELETE', funnelUrl(other.id, funnel.id), { token: key.key }), 403, /another website/);
      expect(await storedFunnels(t, other.id)).toEqual(before);
    });
  });
});
