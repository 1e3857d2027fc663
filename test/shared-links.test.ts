import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError, ownerWithWebsite } from './helpers/factories.ts';

// The administration of shared dashboards (issue 37 item 3): a website's named public links,
// under /api/v1/admin/websites/{websiteId}/shared-links, and the website setting
// isPublicDashboardEnabled that lets them open.

const SLUG = /^shr_[0-9A-Za-z]{32}$/;
const linksUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/shared-links`;
const linkUrl = (websiteId: string, linkId: string) => `${linksUrl(websiteId)}/${linkId}`;

async function storedLinks(t: TestApp, websiteId: string) {
  return t.db.selectFrom('shared_links').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('id').execute();
}

async function createLink(t: TestApp, token: string, websiteId: string, body: Record<string, unknown> = { name: 'Investors' }) {
  const response = await t.request('POST', linksUrl(websiteId), { token, body });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0] as { id: string; slug: string; url: string; name: string; hasPassword: boolean; displaySlug: string };
}

describeEachEngine('shared dashboard links', (engine) => {
  const t = useTestApp(engine);

  describe('create, list, update, revoke', () => {
    it('answers the URL once on creation, stores only a digest, and lists the link masked', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await t.request('POST', linksUrl(website.id), { token: owner.token, body: { name: 'Investors' } });
      expect(created.status, created.raw).toBe(200);
      const item = created.body.data[0];
      expect(Object.keys(item).sort()).toEqual(['_id', 'createdAt', 'displaySlug', 'hasPassword', 'id', 'name', 'slug', 'updatedAt', 'url', 'websiteId']);
      expect(item.slug).toMatch(SLUG);
      expect(item.url).toBe(`${t.config.publicUrl}/share/${item.slug}`);
      expect(item.displaySlug).toBe(`${item.slug.slice(0, 8)}...${item.slug.slice(-4)}`);
      expect(item.hasPassword).toBe(false);
      expect(item._id).toBe(item.id);

      const [row] = await storedLinks(t, website.id);
      expect(row!.digest).toBe(createHash('sha256').update(`sightline-share:${item.slug}`).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(item.slug);

      const list = await t.request('GET', linksUrl(website.id), { token: owner.token });
      expect(list.status, list.raw).toBe(200);
      const { slug, url, ...masked } = item;
      expect(list.body).toEqual({ status: 'success', data: [masked] });
      expect(list.raw).not.toContain(slug);
      expect(url).toContain(slug);
    });

    it('hashes a password with scrypt and never answers it', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await t.request('POST', linksUrl(website.id), { token: owner.token, body: { name: 'Board', password: 'a long secret phrase' } });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.data[0].hasPassword).toBe(true);
      expect(created.raw).not.toContain('a long secret phrase');
      const [row] = await storedLinks(t, website.id);
      expect(row!.password_hash).toMatch(/^scrypt\$/);
      expect(t.logLines.join('\n')).not.toContain('a long secret phrase');
    });

    it('renames, sets and clears the password, changing only what is sent', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      const renamed = await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: { name: 'Wall screen' } });
      expect(renamed.status, renamed.raw).toBe(200);
      expect(renamed.body.data[0]).toMatchObject({ id: link.id, name: 'Wall screen', hasPassword: false });
      const protectedLink = await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: { password: 'another long one' } });
      expect(protectedLink.body.data[0]).toMatchObject({ name: 'Wall screen', hasPassword: true });
      const cleared = await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: { password: null } });
      expect(cleared.body.data[0]).toMatchObject({ name: 'Wall screen', hasPassword: false });
      expect(Object.keys(cleared.body.data[0])).not.toContain('slug');
    });

    it('revokes a link: it leaves the list, and a second revoke or update answers 404', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      const revoked = await t.request('DELETE', linkUrl(website.id, link.id), { token: owner.token });
      expect(revoked.status, revoked.raw).toBe(200);
      expect(revoked.body).toEqual({ status: 'success', data: [{ revoked: true }] });
      expect((await t.request('GET', linksUrl(website.id), { token: owner.token })).body.data).toEqual([]);
      expect((await storedLinks(t, website.id))[0]!.revoked_at).not.toBeNull();
      expectError(await t.request('DELETE', linkUrl(website.id, link.id), { token: owner.token }), 404, /Shared link not found/);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: { name: 'x' } }), 404);
    });

    it('refuses the 21st active link with 400 naming the limit', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      for (let i = 0; i < 20; i++) await createLink(t, owner.token, website.id, { name: `link ${i}` });
      expectError(await t.request('POST', linksUrl(website.id), { token: owner.token, body: { name: 'one more' } }), 400, /at most 20 links/);
      expect(await storedLinks(t, website.id)).toHaveLength(20);
    });
  });

  describe('the website setting isPublicDashboardEnabled', () => {
    it('starts false, is shown by GET, and PUT turns it on and off', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const url = `/api/v1/admin/websites/${website.id}`;
      expect((await t.request('GET', url, { token: owner.token })).body.data[0].isPublicDashboardEnabled).toBe(false);
      const on = await t.request('PUT', url, { token: owner.token, body: { isPublicDashboardEnabled: true } });
      expect(on.status, on.raw).toBe(200);
      expect(on.body.data[0].isPublicDashboardEnabled).toBe(true);
      expect((await t.request('GET', url, { token: owner.token })).body.data[0].isPublicDashboardEnabled).toBe(true);
      const off = await t.request('PUT', url, { token: owner.token, body: { isPublicDashboardEnabled: false } });
      expect(off.body.data[0].isPublicDashboardEnabled).toBe(false);
    });

    it('answers 400 naming the field for a value that is not a boolean, and changes nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const url = `/api/v1/admin/websites/${website.id}`;
      expectError(await t.request('PUT', url, { token: owner.token, body: { isPublicDashboardEnabled: 'yes' } }), 400, /isPublicDashboardEnabled/);
      expect((await t.request('GET', url, { token: owner.token })).body.data[0].isPublicDashboardEnabled).toBe(false);
    });
  });

  describe('who may', () => {
    it('answers 401 without a credential or with a malformed one', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      expectError(await t.request('GET', linksUrl(website.id)), 401);
      expectError(await t.request('POST', linksUrl(website.id), { body: { name: 'x' } }), 401);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: 'dft_nonsense', body: { name: 'x' } }), 401);
      expectError(await t.request('DELETE', linkUrl(website.id, link.id)), 401);
      expect(await storedLinks(t, website.id)).toHaveLength(1);
    });

    it('answers 403 for a token without settings:read or settings:write', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      const readOnly = await createToken(t, owner, ['settings:read']);
      const noSettings = await createToken(t, owner, ['analytics:read']);
      expectError(await t.request('GET', linksUrl(website.id), { token: noSettings }), 403, /settings:read/);
      expect((await t.request('GET', linksUrl(website.id), { token: readOnly })).status).toBe(200);
      expectError(await t.request('POST', linksUrl(website.id), { token: readOnly, body: { name: 'x' } }), 403, /settings:write/);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: readOnly, body: { name: 'x' } }), 403, /settings:write/);
      expectError(await t.request('DELETE', linkUrl(website.id, link.id), { token: readOnly }), 403, /settings:write/);
      expect(await storedLinks(t, website.id)).toHaveLength(1);
      expect((await storedLinks(t, website.id))[0]!.name).toBe('Investors');
    });

    it('answers 403 for a token not allowed this website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const scoped = await createToken(t, owner, ['*'], [other.id]);
      expectError(await t.request('GET', linksUrl(website.id), { token: scoped }), 403);
      expectError(await t.request('POST', linksUrl(website.id), { token: scoped, body: { name: 'x' } }), 403);
      expect(await storedLinks(t, website.id)).toHaveLength(0);
    });

    it('lets a viewer list but not create, change or revoke; a member manages', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      const viewer = await createAccount(t);
      const member = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      await addMember(t, website.id, member.id, 'member');
      expect((await t.request('GET', linksUrl(website.id), { token: viewer.token })).status).toBe(200);
      expectError(await t.request('POST', linksUrl(website.id), { token: viewer.token, body: { name: 'x' } }), 403, /change this website/);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: viewer.token, body: { password: null } }), 403);
      expectError(await t.request('DELETE', linkUrl(website.id, link.id), { token: viewer.token }), 403);
      expectError(await t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token: viewer.token, body: { isPublicDashboardEnabled: true } }), 403);
      const byMember = await t.request('POST', linksUrl(website.id), { token: member.token, body: { name: 'From a member' } });
      expect(byMember.status, byMember.raw).toBe(200);
      expect((await storedLinks(t, website.id)).map((row) => row.name)).toEqual(['Investors', 'From a member']);
    });

    it("answers 404 for another account's website and another website's link, changing nothing", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      const stranger = await ownerWithWebsite(t);
      expectError(await t.request('GET', linksUrl(website.id), { token: stranger.owner.token }), 404);
      expectError(await t.request('POST', linksUrl(website.id), { token: stranger.owner.token, body: { name: 'x' } }), 404);
      expectError(await t.request('DELETE', linkUrl(website.id, link.id), { token: stranger.owner.token }), 404);
      // The stranger's own website does not reach the link either.
      expectError(await t.request('DELETE', linkUrl(stranger.website.id, link.id), { token: stranger.owner.token }), 404);
      expectError(await t.request('DELETE', linkUrl(website.id, UNKNOWN_ID), { token: owner.token }), 404);
      expect((await storedLinks(t, website.id))[0]!.revoked_at).toBeNull();
    });

    it("lets a website's df_ key manage its own website's links, and no other website's", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      expect((await t.request('POST', linksUrl(website.id), { token: key.key, body: { name: 'From a key' } })).status).toBe(200);
      expectError(await t.request('GET', linksUrl(other.id), { token: key.key }), 403, /another website/);
    });
  });

  describe('bad input', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['a missing name', {}, /name/],
      ['an empty name', { name: '' }, /name/],
      ['a name over 100 characters', { name: 'x'.repeat(101) }, /name/],
      ['a short password', { name: 'x', password: 'short' }, /password/],
      ['a password that is not a string', { name: 'x', password: 12345678901 }, /password/],
      ['an unknown field', { name: 'x', slug: 'mine' }, /slug/],
    ];
    for (const [label, body, pattern] of cases) {
      it(`answers 400 naming the field for ${label} and creates nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        expectError(await t.request('POST', linksUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await storedLinks(t, website.id)).toHaveLength(0);
      });
    }

    it('answers 400 for an empty update, an unknown field or a bad id, and changes nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const link = await createLink(t, owner.token, website.id);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: {} }), 400);
      expectError(await t.request('PUT', linkUrl(website.id, link.id), { token: owner.token, body: { name: 'x', revoked: true } }), 400, /revoked/);
      expectError(await t.request('PUT', linkUrl(website.id, 'not-an-id'), { token: owner.token, body: { name: 'x' } }), 400, /sharedLinkId/);
      expectError(await t.request('POST', linksUrl(website.id), { token: owner.token, payload: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
      const [row] = await storedLinks(t, website.id);
      expect(row).toMatchObject({ name: 'Investors', password_hash: null, revoked_at: null });
    });
  });
});

describe('shared links and website deletion', () => {
  const t = useTestApp('sqlite');
  it('are deleted with their website', async () => {
    const { owner, website } = await ownerWithWebsite(t);
    await createLink(t, owner.token, website.id);
    const { deleteWebsite } = await import('../src/modules/websites/website-deletion.ts');
    expect(await storedLinks(t, website.id)).toHaveLength(1);
    await deleteWebsite(t.db, website.id);
    expect(await storedLinks(t, website.id)).toHaveLength(0);
  });
});
