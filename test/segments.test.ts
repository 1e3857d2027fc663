import { expect, it } from 'vitest';
import { PERMISSIONS } from '../src/auth/permissions.ts';
import { type TestApp, useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

// Segments (issue 37 item 5): saved filter sets, personal or shared with the team.

const allBut = (permission: string) => PERMISSIONS.filter((p) => p !== permission);
const url = (websiteId: string, segmentId?: string) => `/api/v1/admin/websites/${websiteId}/segments${segmentId ? `/${segmentId}` : ''}`;
const US_BLOG = { filter_country: 'is:US', filter_page: 'contains:/blog' };

describeEachEngine('segments', (engine) => {
  const t: TestApp = useTestApp(engine);

  async function ownerWithWebsite(name = 'Seg Owner') {
    const owner = await createAccount(t, name);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function create(token: string, websiteId: string, body: Record<string, unknown>) {
    const response = await t.request('POST', url(websiteId), { token, body });
    expect(response.status, response.raw).toBe(200);
    return response.body.data[0];
  }

  async function names(token: string, websiteId: string): Promise<string[]> {
    const response = await t.request('GET', url(websiteId), { token });
    expect(response.status, response.raw).toBe(200);
    return response.body.data.map((s: { name: string }) => s.name);
  }

  const rows = (websiteId: string) => t.db.selectFrom('segments').selectAll().where('website_id', '=', websiteId).orderBy('id').execute();

  it('saves, lists, changes and deletes a personal segment, answering the documented shape', async () => {
    const { owner, website } = await ownerWithWebsite('Ada');
    const segment = await create(owner.token, website.id, { name: ' US blog ', filters: US_BLOG });
    expect(segment).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      _id: segment.id,
      websiteId: website.id,
      name: 'US blog',
      filters: US_BLOG,
      shared: false,
      owner: { id: owner.id, name: 'Ada' },
      canEdit: true,
      createdAt: expect.any(String),
      updatedAt: segment.createdAt,
    });
    const listed = await t.request('GET', url(website.id), { token: owner.token });
    expect(listed.body.data).toEqual([segment]);

    const changed = await t.request('PUT', url(website.id, segment.id), { token: owner.token, body: { name: 'Blog, US', filters: { filter_device: 'is:mobile' } } });
    expect(changed.status, changed.raw).toBe(200);
    expect(changed.body.data[0]).toMatchObject({ name: 'Blog, US', filters: { filter_device: 'is:mobile' }, shared: false });

    const deleted = await t.request('DELETE', url(website.id, segment.id), { token: owner.token });
    expect(deleted.status, deleted.raw).toBe(200);
    expect(deleted.body.data).toEqual([{ message: 'Segment deleted' }]);
    expect(await rows(website.id)).toEqual([]);
  });

  it('shows a personal segment to its author alone and a shared one to the whole team', async () => {
    const { owner, website } = await ownerWithWebsite();
    const member = await createAccount(t, 'Member');
    const viewer = await createAccount(t, 'Viewer');
    await addMember(t, website.id, member.id, 'member');
    await addMember(t, website.id, viewer.id, 'viewer');
    await create(owner.token, website.id, { name: 'owner personal', filters: US_BLOG });
    const shared = await create(member.token, website.id, { name: 'member shared', filters: US_BLOG, shared: true });
    await create(viewer.token, website.id, { name: 'viewer personal', filters: { filter_country: 'DE' } });

    expect(await names(owner.token, website.id)).toEqual(['member shared', 'owner personal']);
    expect(await names(member.token, website.id)).toEqual(['member shared']);
    expect(await names(viewer.token, website.id)).toEqual(['member shared', 'viewer personal']);

    const seenByViewer = (await t.request('GET', url(website.id), { token: viewer.token })).body.data.find((s: { id: string }) => s.id === shared.id);
    expect(seenByViewer.canEdit).toBe(false);
    const seenByOwner = (await t.request('GET', url(website.id), { token: owner.token })).body.data.find((s: { id: string }) => s.id === shared.id);
    expect(seenByOwner.canEdit).toBe(true);
    // The website's owner may change a shared segment of someone else; the viewer may not.
    expect((await t.request('PUT', url(website.id, shared.id), { token: owner.token, body: { name: 'team' } })).status).toBe(200);
    expectError(await t.request('PUT', url(website.id, shared.id), { token: viewer.token, body: { name: 'mine' } }), 403, /author or the website's owner/);
    expectError(await t.request('DELETE', url(website.id, shared.id), { token: viewer.token }), 403, /author or the website's owner/);
  });

  it('answers 401 without a credential, changing nothing', async () => {
    const { owner, website } = await ownerWithWebsite();
    const segment = await create(owner.token, website.id, { name: 'kept', filters: US_BLOG });
    const before = await rows(website.id);
    for (const [method, path, body] of [
      ['GET', url(website.id), undefined],
      ['POST', url(website.id), { name: 'x', filters: US_BLOG }],
      ['PUT', url(website.id, segment.id), { name: 'x' }],
      ['DELETE', url(website.id, segment.id), undefined],
    ] as const) {
      expectError(await t.request(method, path, { body }), 401);
    }
    expect(await rows(website.id)).toEqual(before);
  });

  it('answers 403 for a missing permission, a viewer sharing, a token of another website and a df_ key', async () => {
    const { owner, website } = await ownerWithWebsite();
    const segment = await create(owner.token, website.id, { name: 'kept', filters: US_BLOG });
    const before = await rows(website.id);
    expectError(await t.request('GET', url(website.id), { token: await createToken(t, owner, allBut('segments:read')) }), 403, /segments:read/);
    const noWrite = await createToken(t, owner, allBut('segments:write'));
    expectError(await t.request('POST', url(website.id), { token: noWrite, body: { name: 'x', filters: US_BLOG } }), 403, /segments:write/);
    expectError(await t.request('PUT', url(website.id, segment.id), { token: noWrite, body: { name: 'x' } }), 403, /segments:write/);
    expectError(await t.request('DELETE', url(website.id, segment.id), { token: noWrite }), 403, /segments:write/);

    const viewer = await createAccount(t);
    await addMember(t, website.id, viewer.id, 'viewer');
    expectError(await t.request('POST', url(website.id), { token: viewer.token, body: { name: 'x', filters: US_BLOG, shared: true } }), 403, /share/);
    const own = await create(viewer.token, website.id, { name: 'mine', filters: US_BLOG });
    expectError(await t.request('PUT', url(website.id, own.id), { token: viewer.token, body: { shared: true } }), 403, /share/);

    const other = await createWebsite(t, owner.token);
    const elsewhere = await createToken(t, owner, ['segments:read', 'segments:write'], [other.id]);
    expectError(await t.request('GET', url(website.id), { token: elsewhere }), 403, /not allowed/);
    const key = (await createApiKey(t, owner.token, website.id)).key;
    expectError(await t.request('GET', url(website.id), { token: key }), 403);
    expectError(await t.request('POST', url(website.id), { token: key, body: { name: 'x', filters: US_BLOG } }), 403);
    expect((await rows(website.id)).filter((row) => row.owner_id === owner.id)).toEqual(before);
  });

  it("answers 404 for another account's website or segment, and for a personal segment of someone else", async () => {
    const { owner, website } = await ownerWithWebsite();
    const segment = await create(owner.token, website.id, { name: 'kept', filters: US_BLOG });
    const before = await rows(website.id);
    const stranger = await createAccount(t);
    expectError(await t.request('GET', url(website.id), { token: stranger.token }), 404);
    expectError(await t.request('POST', url(website.id), { token: stranger.token, body: { bad: 1 } }), 404);
    expectError(await t.request('PUT', url(website.id, segment.id), { token: stranger.token, body: { name: 'x' } }), 404);
    const theirs = await createWebsite(t, stranger.token);
    expectError(await t.request('DELETE', url(theirs.id, segment.id), { token: stranger.token }), 404, /Segment not found/);
    expectError(await t.request('PUT', url(website.id, UNKNOWN_ID), { token: owner.token, body: { name: 'x' } }), 404, /Segment not found/);

    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    expectError(await t.request('PUT', url(website.id, segment.id), { token: member.token, body: { name: 'x' } }), 404, /Segment not found/);
    expectError(await t.request('DELETE', url(website.id, segment.id), { token: member.token }), 404, /Segment not found/);
    expect(await rows(website.id)).toEqual(before);
  });

  const badBodies: [string, unknown, RegExp][] = [
    ['no name', { filters: US_BLOG }, /body\.name/],
    ['a name of only white space', { name: '  ', filters: US_BLOG }, /body\.name: must not be only white space/],
    ['a name of 101 characters', { name: 'x'.repeat(101), filters: US_BLOG }, /body\.name/],
    ['no filters', { name: 'x' }, /body\.filters/],
    ['empty filters', { name: 'x', filters: {} }, /body\.filters/],
    ['an unknown dimension', { name: 'x', filters: { filter_planet: 'is:Mars' } }, /body\.filters\.filter_planet: is not a filter/],
    ['a bare alias', { name: 'x', filters: { country: 'is:US' } }, /body\.filters\.country: is not a filter/],
    ['an unknown operator', { name: 'x', filters: { filter_country: 'near:US' } }, /body\.filters\.filter_country: "near" is not an operator/],
    ['an unknown country', { name: 'x', filters: { filter_country: 'is:Atlantis' } }, /body\.filters\.filter_country: "Atlantis" is not a country/],
    ['a filter value that is a number', { name: 'x', filters: { filter_country: 5 } }, /body\.filters/],
    ['shared that is a string', { name: 'x', filters: US_BLOG, shared: 'yes' }, /body\.shared/],
    ['an unknown field', { name: 'x', filters: US_BLOG, color: 'red' }, /body\.color/],
  ];

  it.each(badBodies)('answers 400 naming the field for %s, saving nothing', async (_label, body, message) => {
    const { owner, website } = await ownerWithWebsite();
    expectError(await t.request('POST', url(website.id), { token: owner.token, body }), 400, message);
    expect(await rows(website.id)).toEqual([]);
  });

  it('answers 400 naming the field for a bad change, changing nothing', async () => {
    const { owner, website } = await ownerWithWebsite();
    const segment = await create(owner.token, website.id, { name: 'kept', filters: US_BLOG });
    const before = await rows(website.id);
    expectError(await t.request('PUT', url(website.id, segment.id), { token: owner.token, body: {} }), 400);
    expectError(await t.request('PUT', url(website.id, segment.id), { token: owner.token, body: { filters: { filter_device: 'is:toaster' } } }), 400, /body\.filters\.filter_device: must be one of/);
    expect(await rows(website.id)).toEqual(before);
  });

  it('goes with its website when the website is deleted', async () => {
    const { owner, website } = await ownerWithWebsite();
    await create(owner.token, website.id, { name: 'kept', filters: US_BLOG });
    const { deleteWebsite } = await import('../src/modules/websites/website-deletion.ts');
    await deleteWebsite(t.db, website.id);
    expect(await rows(website.id)).toEqual([]);
  });
});
