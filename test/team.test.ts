import { expect, it } from 'vitest';
import { useTestApp } from './helpers/app.ts';
import { describeEachEngine } from './helpers/engines.ts';
import { UNKNOWN_ID, addMember, createAccount, createApiKey, createToken, createWebsite, expectError } from './helpers/factories.ts';

describeEachEngine('team and invitations', (engine) => {
  const t = useTestApp(engine);
  const team = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/team`;

  async function setup() {
    const owner = await createAccount(t, 'Owner');
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function invitationsOf(websiteId: string) {
    return t.db.selectFrom('invitations').selectAll().where('website_id', '=', websiteId).execute();
  }

  it('lists the owner with name, email, role and joinedAt, and no invitations at first', async () => {
    const { owner, website } = await setup();
    const response = await t.request('GET', team(website.id), { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'success',
      data: [{ userId: owner.id, name: 'Owner', email: owner.email, role: 'owner', joinedAt: expect.any(String) }],
      invitations: [],
    });
  });

  it('invites with role viewer by default, and the invitee accepts and joins with that role', async () => {
    const { owner, website } = await setup();
    const invitee = await createAccount(t, 'Invitee');
    const invited = await t.request('POST', team(website.id), { token: owner.token, body: { email: invitee.email.toUpperCase() } });
    expect(invited.status, invited.raw).toBe(200);
    const [created] = invited.body.data;
    expect(created).toMatchObject({ email: invitee.email, role: 'viewer', message: expect.stringContaining('accept') });

    const mine = await t.request('GET', '/api/v1/admin/invitations', { token: invitee.token });
    expect(mine.body.data).toEqual([
      { invitationId: created.invitationId, websiteId: website.id, domain: website.domain, role: 'viewer', invitedAt: expect.any(String) },
    ]);
    // Not a member yet: the website is invisible.
    expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: invitee.token }), 404);

    const accepted = await t.request('POST', `/api/v1/admin/invitations/${created.invitationId}/accept`, { token: invitee.token });
    expect(accepted.status, accepted.raw).toBe(200);
    expect(accepted.body.data).toEqual([{ message: expect.any(String), websiteId: website.id, role: 'viewer' }]);
    expect((await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: invitee.token })).body.data[0].role).toBe('viewer');
    expect(await invitationsOf(website.id)).toHaveLength(0);

    const list = await t.request('GET', team(website.id), { token: invitee.token });
    expect(list.body.data.map((m: { role: string }) => m.role)).toEqual(['owner', 'viewer']);
  });

  it('answers one 200 and 409s, never a 5xx, for the same invitation sent concurrently', async () => {
    const { owner, website } = await setup();
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => t.request('POST', team(website.id), { token: owner.token, body: { email: 'race@example.org' } })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect(await invitationsOf(website.id)).toHaveLength(1);
  });

  it('makes a member once when an invitation is accepted concurrently', async () => {
    const { owner, website } = await setup();
    const invitee = await createAccount(t);
    const invited = await t.request('POST', team(website.id), { token: owner.token, body: { email: invitee.email } });
    const accept = `/api/v1/admin/invitations/${invited.body.data[0].invitationId}/accept`;
    const responses = await Promise.all(Array.from({ length: 3 }, () => t.request('POST', accept, { token: invitee.token })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 404, 404]);
  });

  it('shows pending invitations beside the members', async () => {
    const { owner, website } = await setup();
    await t.request('POST', team(website.id), { token: owner.token, body: { email: 'someone@example.org', role: 'member' } });
    const list = await t.request('GET', team(website.id), { token: owner.token });
    expect(list.body.invitations).toEqual([
      { invitationId: expect.any(String), email: 'someone@example.org', role: 'member', invitedAt: expect.any(String) },
    ]);
  });

  it('refuses owner as a role, bad e-mails, yourself and unknown fields with 400, inviting nobody', async () => {
    const { owner, website } = await setup();
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: 'a@b.co', role: 'owner' } }), 400, /body\.role/);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: 'not-an-email' } }), 400, /body\.email/);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: owner.email } }), 400, /yourself/);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: 'a@b.co', extra: 1 } }), 400, /body\.extra/);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: {} }), 400, /body\.email/);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: 42 } }), 400, /body\.email/);
    expect(await invitationsOf(website.id)).toHaveLength(0);
  });

  it('answers 409 for a second invitation and for an existing member', async () => {
    const { owner, website } = await setup();
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: member.email } }), 409, /already a member/);
    expect((await t.request('POST', team(website.id), { token: owner.token, body: { email: 'x@example.org' } })).status).toBe(200);
    expectError(await t.request('POST', team(website.id), { token: owner.token, body: { email: 'x@example.org' } }), 409, /already been invited/);
    expect(await invitationsOf(website.id)).toHaveLength(1);
  });

  it('removes a member by userId and by email, and withdraws a pending invitation by email', async () => {
    const { owner, website } = await setup();
    const first = await createAccount(t);
    const second = await createAccount(t);
    await addMember(t, website.id, first.id, 'member');
    await addMember(t, website.id, second.id, 'viewer');
    await t.request('POST', team(website.id), { token: owner.token, body: { email: 'pending@example.org' } });

    const byId = await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: first.id } });
    expect(byId.body.data).toEqual([{ message: 'Member removed', removed: 'member' }]);
    const byEmail = await t.request('DELETE', team(website.id), { token: owner.token, body: { email: second.email } });
    expect(byEmail.body.data[0].removed).toBe('member');
    const pending = await t.request('DELETE', team(website.id), { token: owner.token, body: { email: 'pending@example.org' } });
    expect(pending.body.data[0].removed).toBe('invitation');

    const list = await t.request('GET', team(website.id), { token: owner.token });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.invitations).toEqual([]);
  });

  it('never removes the owner, and answers 404 for nobody and 400 for an ambiguous body', async () => {
    const { owner, website } = await setup();
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: owner.id } }), 400, /owner/);
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: { email: 'nobody@example.org' } }), 404);
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: UNKNOWN_ID } }), 404);
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: {} }), 400, /exactly one/);
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: owner.id, email: owner.email } }), 400, /exactly one/);
    expectError(await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: 'nope' } }), 400, /body\.userId/);
    const list = await t.request('GET', team(website.id), { token: owner.token });
    expect(list.body.data[0]).toMatchObject({ userId: owner.id, role: 'owner' });
  });

  it('lets only the owner invite and remove: members and viewers get 403 and change nothing', async () => {
    const { website } = await setup();
    for (const role of ['member', 'viewer'] as const) {
      const account = await createAccount(t);
      await addMember(t, website.id, account.id, role);
      expectError(await t.request('POST', team(website.id), { token: account.token, body: { email: 'z@example.org' } }), 403, /owner/);
      expectError(await t.request('DELETE', team(website.id), { token: account.token, body: { userId: account.id } }), 403, /owner/);
      expect((await t.request('GET', team(website.id), { token: account.token })).status).toBe(200);
    }
    expect(await invitationsOf(website.id)).toHaveLength(0);
  });

  it('applies a removal and a role change on the very next request of every token of the member', async () => {
    const { owner, website } = await setup();
    const member = await createAccount(t);
    await addMember(t, website.id, member.id, 'member');
    const narrow = await createToken(t, member, ['settings:write', 'settings:read'], [website.id]);
    const put = (token: string) => t.request('PUT', `/api/v1/admin/websites/${website.id}`, { token, body: { name: 'changed' } });
    expect((await put(member.token)).status).toBe(200);
    expect((await put(narrow)).status).toBe(200);

    await t.db.updateTable('website_members').set({ role: 'viewer' }).where('account_id', '=', member.id).execute();
    expectError(await put(member.token), 403, /viewer/);
    expectError(await put(narrow), 403, /viewer/);

    await t.request('DELETE', team(website.id), { token: owner.token, body: { userId: member.id } });
    expectError(await put(member.token), 404);
    expectError(await t.request('GET', `/api/v1/admin/websites/${website.id}`, { token: narrow }), 404);
  });

  it('answers 401, 403 for permissions, website scope and df_ keys, and 404 for another account', async () => {
    const { owner, website } = await setup();
    const stranger = await createAccount(t);
    expectError(await t.request('GET', team(website.id)), 401);
    expectError(await t.request('POST', team(website.id), { body: { email: 'a@b.co' } }), 401);
    expectError(await t.request('DELETE', team(website.id), { body: { email: 'a@b.co' } }), 401);

    const noRead = await createToken(t, owner, ['team:write']);
    const noWrite = await createToken(t, owner, ['team:read']);
    expectError(await t.request('GET', team(website.id), { token: noRead }), 403, /team:read/);
    expectError(await t.request('POST', team(website.id), { token: noWrite, body: { email: 'a@b.co' } }), 403, /team:write/);
    expectError(await t.request('DELETE', team(website.id), { token: noWrite, body: { email: 'a@b.co' } }), 403, /team:write/);

    const other = await createWebsite(t, owner.token);
    const elsewhere = await createToken(t, owner, ['*'], [other.id]);
    expectError(await t.request('GET', team(website.id), { token: elsewhere }), 403, /not allowed/);

    const key = await createApiKey(t, owner.token, website.id);
    expect((await t.request('GET', team(website.id), { token: key.key })).status).toBe(200);
    expectError(await t.request('GET', team(other.id), { token: key.key }), 403);
    expectError(await t.request('POST', team(website.id), { token: key.key, body: { email: 'a@b.co' } }), 403, /df_/);
    expectError(await t.request('DELETE', team(website.id), { token: key.key, body: { email: 'a@b.co' } }), 403, /df_/);

    expectError(await t.request('GET', team(website.id), { token: stranger.token }), 404);
    expectError(await t.request('POST', team(website.id), { token: stranger.token, body: { email: 'a@b.co' } }), 404);
    expectError(await t.request('DELETE', team(website.id), { token: stranger.token, body: { userId: owner.id } }), 404);
    expect(await invitationsOf(website.id)).toHaveLength(0);
  });

  it('accepts only invitations addressed to the caller, once', async () => {
    const { owner, website } = await setup();
    const invitee = await createAccount(t);
    const intruder = await createAccount(t);
    const invited = await t.request('POST', team(website.id), { token: owner.token, body: { email: invitee.email, role: 'member' } });
    const accept = `/api/v1/admin/invitations/${invited.body.data[0].invitationId}/accept`;

    expectError(await t.request('POST', accept, { token: intruder.token }), 404);
    expect((await t.request('GET', '/api/v1/admin/invitations', { token: intruder.token })).body.data).toEqual([]);
    expectError(await t.request('POST', accept, { token: invitee.token, body: { extra: true } }), 400, /body\.extra/);
    const readOnly = await createToken(t, invitee, ['websites:read']);
    expectError(await t.request('POST', accept, { token: readOnly }), 403, /websites:write/);
    expectError(await t.request('GET', '/api/v1/admin/invitations', { token: await createToken(t, invitee, ['team:read']) }), 403);
    const key = await createApiKey(t, owner.token, website.id);
    expectError(await t.request('GET', '/api/v1/admin/invitations', { token: key.key }), 403);
    expectError(await t.request('POST', accept, { token: key.key }), 403);
    expectError(await t.request('POST', accept), 401);
    expectError(await t.request('GET', '/api/v1/admin/invitations'), 401);
    expectError(await t.request('POST', '/api/v1/admin/invitations/nope/accept', { token: invitee.token }), 400, /invitationId/);

    expect((await t.request('POST', accept, { token: invitee.token })).status).toBe(200);
    expectError(await t.request('POST', accept, { token: invitee.token }), 404);
    const list = await t.request('GET', team(website.id), { token: invitee.token });
    expect(list.body.data.find((m: { userId: string }) => m.userId === invitee.id).role).toBe('member');
  });
});
