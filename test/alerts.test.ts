import { describe, expect, it } from 'vitest';
import type { AlertHistoryStatus } from '../src/modules/alerts/alerts.schemas.ts';
import { newId } from '../src/lib/ids.ts';
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
const ALERT_KEYS = [
  '_id',
  'createdAt',
  'destination',
  'id',
  'isEnabled',
  'lastTriggeredAt',
  'name',
  'template',
  'trigger',
  'updatedAt',
  'websiteId',
];

const alertsUrl = (websiteId: string) => `/api/v1/admin/websites/${websiteId}/alerts`;
const alertUrl = (websiteId: string, alertId: string) => `${alertsUrl(websiteId)}/${alertId}`;
const historyUrl = (websiteId: string) => `${alertsUrl(websiteId)}/history`;

interface AlertItem {
  id: string;
  name: string;
  trigger: { type: string; goalName: string };
  template: { subject: string | null; message: string };
  isEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

const validBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'New signup',
  trigger: { goalName: 'signup' },
  template: { subject: 'Someone signed up', message: 'A visitor just signed up.' },
  ...overrides,
});

/** The alerts of a website as stored, oldest first. */
async function storedAlerts(t: TestApp, websiteId: string) {
  return t.db.selectFrom('alerts').selectAll().where('website_id', '=', websiteId).orderBy('created_at').orderBy('id').execute();
}

async function storedHistory(t: TestApp, websiteId: string) {
  return t.db.selectFrom('alert_history').selectAll().where('website_id', '=', websiteId).orderBy('id').execute();
}

async function ownerWithWebsite(t: TestApp) {
  const owner = await createAccount(t);
  const website = await createWebsite(t, owner.token);
  return { owner, website };
}

async function createAlert(t: TestApp, token: string, websiteId: string, overrides: Record<string, unknown> = {}): Promise<AlertItem> {
  const response = await t.request('POST', alertsUrl(websiteId), { token, body: validBody(overrides) });
  expect(response.status, response.raw).toBe(200);
  return response.body.data[0] as AlertItem;
}

/** Writes a history row the way the goal-event path does, `minutesAgo` before now. */
async function recordHistory(
  t: TestApp,
  websiteId: string,
  alert: Pick<AlertItem, 'id' | 'name' | 'trigger'>,
  minutesAgo: number,
  status: AlertHistoryStatus = 'sent',
  extra: { error?: string | null; visitorId?: string | null } = {},
) {
  const row = {
    id: newId(),
    website_id: websiteId,
    alert_id: alert.id,
    alert_name: alert.name,
    goal_name: alert.trigger.goalName,
    status,
    error: extra.error ?? null,
    visitor_id: extra.visitorId ?? null,
    triggered_at: new Date(Date.UTC(2026, 4, 21, 12, 0, 0) - minutesAgo * 60_000).toISOString(),
  };
  // Firing is the events work's; these tests write history rows directly.
  await t.db.insertInto('alert_history').values(row).execute();
  return row;
}

describeEachEngine('alerts', (engine) => {
  const t = useTestApp(engine);

  describe('create and list', () => {
    it('answers the full item with defaults, and the list shows the same item', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const created = await t.request('POST', alertsUrl(website.id), {
        token: owner.token,
        body: { name: 'Purchases', trigger: { goalName: 'purchase' }, template: { message: 'Someone bought something.' } },
      });
      expect(created.status, created.raw).toBe(200);
      expect(created.body.status).toBe('success');
      expect(created.body.data).toHaveLength(1);
      const item = created.body.data[0];
      expect(Object.keys(item).sort()).toEqual(ALERT_KEYS);
      expect(item.id).toMatch(/^[0-9a-f]{24}$/);
      expect(item).toMatchObject({
        _id: item.id,
        websiteId: website.id,
        name: 'Purchases',
        trigger: { type: 'goal', goalName: 'purchase' },
        destination: { type: 'email' },
        template: { subject: null, message: 'Someone bought something.' },
        isEnabled: true,
        lastTriggeredAt: null,
      });
      expect(item.createdAt).toMatch(ISO_MS);
      expect(Date.parse(item.createdAt)).toBeGreaterThan(Date.now() - 60_000);
      expect(item.updatedAt).toBe(item.createdAt);

      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.status, list.raw).toBe(200);
      expect(list.body).toEqual({ status: 'success', data: [item] });

      const [row] = await storedAlerts(t, website.id);
      expect(row).toMatchObject({ name: 'Purchases', goal_name: 'purchase', subject: null, message: 'Someone bought something.' });
      expect(Boolean(row!.is_enabled)).toBe(true);
    });

    it('stores every field sent, isEnabled false and the explicit trigger and destination types included', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const item = await createAlert(t, owner.token, website.id, {
        trigger: { type: 'goal', goalName: 'trial:started' },
        destination: { type: 'email' },
        isEnabled: false,
        template: { subject: 'Trial', message: 'A trial has just started.' },
      });
      expect(item).toMatchObject({
        trigger: { type: 'goal', goalName: 'trial:started' },
        destination: { type: 'email' },
        template: { subject: 'Trial', message: 'A trial has just started.' },
        isEnabled: false,
      });
      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.body.data).toEqual([item]);
      const [row] = await storedAlerts(t, website.id);
      expect(Boolean(row!.is_enabled)).toBe(false);
    });

    it('accepts a null subject and the boundary lengths', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const nullSubject = await createAlert(t, owner.token, website.id, { template: { subject: null, message: 'ten chars!' } });
      expect(nullSubject.template).toEqual({ subject: null, message: 'ten chars!' });
      const longest = await createAlert(t, owner.token, website.id, {
        name: 'n'.repeat(100),
        trigger: { goalName: 'g'.repeat(64) },
        template: { subject: 's'.repeat(200), message: 'm'.repeat(2000) },
      });
      expect(longest.name).toBe('n'.repeat(100));
      expect(longest.trigger.goalName).toBe('g'.repeat(64));
      expect(longest.template).toEqual({ subject: 's'.repeat(200), message: 'm'.repeat(2000) });
    });

    it('lists only the alerts of the website asked for, oldest first', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const first = await createAlert(t, owner.token, website.id, { name: 'first' });
      const second = await createAlert(t, owner.token, website.id, { name: 'second' });
      await createAlert(t, owner.token, other.id, { name: 'elsewhere' });
      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.body.data.map((a: AlertItem) => a.id)).toEqual([first.id, second.id]);
      expect(list.body.data.map((a: AlertItem) => a.name)).toEqual(['first', 'second']);
    });

    it('lists an empty array for a website without alerts', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ status: 'success', data: [] });
    });
  });

  describe('update', () => {
    it('changes only the name and keeps every other field', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id, { isEnabled: false });
      const updated = await t.request('PUT', alertUrl(website.id, alert.id), { token: owner.token, body: { name: 'Renamed' } });
      expect(updated.status, updated.raw).toBe(200);
      const item = updated.body.data[0];
      const { name: _name, updatedAt: _updatedAt, ...untouched } = alert;
      expect(item).toMatchObject({ ...untouched, name: 'Renamed' });
      expect(Object.keys(item).sort()).toEqual(ALERT_KEYS);
      expect(item.updatedAt).toMatch(ISO_MS);
      expect(Date.parse(item.updatedAt)).toBeGreaterThanOrEqual(Date.parse(alert.updatedAt));
      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.body.data).toEqual([item]);
    });

    it('merges the template: sending only the message keeps the subject', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id, { template: { subject: 'Keep me', message: 'Original message.' } });
      const updated = await t.request('PUT', alertUrl(website.id, alert.id), {
        token: owner.token,
        body: { template: { message: 'A brand new message.' } },
      });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0].template).toEqual({ subject: 'Keep me', message: 'A brand new message.' });
      expect(updated.body.data[0].name).toBe(alert.name);
    });

    it('clears the subject with null and keeps the message', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      const updated = await t.request('PUT', alertUrl(website.id, alert.id), { token: owner.token, body: { template: { subject: null } } });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0].template).toEqual({ subject: null, message: alert.template.message });
      const [row] = await storedAlerts(t, website.id);
      expect(row!.subject).toBeNull();
    });

    it('changes the trigger and isEnabled, and accepts the email destination', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      const updated = await t.request('PUT', alertUrl(website.id, alert.id), {
        token: owner.token,
        body: { trigger: { type: 'goal', goalName: 'checkout' }, isEnabled: false, destination: { type: 'email' } },
      });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0]).toMatchObject({
        id: alert.id,
        name: alert.name,
        trigger: { type: 'goal', goalName: 'checkout' },
        template: alert.template,
        isEnabled: false,
      });
      const [row] = await storedAlerts(t, website.id);
      expect(row!.goal_name).toBe('checkout');
      expect(Boolean(row!.is_enabled)).toBe(false);

      const enabled = await t.request('PUT', alertUrl(website.id, alert.id), { token: owner.token, body: { isEnabled: true } });
      expect(enabled.body.data[0].isEnabled).toBe(true);
    });

    it('leaves the other alerts of the website alone', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const target = await createAlert(t, owner.token, website.id, { name: 'target' });
      const bystander = await createAlert(t, owner.token, website.id, { name: 'bystander' });
      await t.request('PUT', alertUrl(website.id, target.id), { token: owner.token, body: { name: 'changed', isEnabled: false } });
      const list = await t.request('GET', alertsUrl(website.id), { token: owner.token });
      expect(list.body.data[1]).toEqual(bystander);
    });
  });

  describe('delete', () => {
    it('answers [{message}], removes the alert, and a second delete is 404', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const keep = await createAlert(t, owner.token, website.id, { name: 'keep' });
      const drop = await createAlert(t, owner.token, website.id, { name: 'drop' });
      const deleted = await t.request('DELETE', alertUrl(website.id, drop.id), { token: owner.token });
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.body).toEqual({ status: 'success', data: [{ message: expect.stringMatching(/deleted/i) }] });
      expect((await storedAlerts(t, website.id)).map((row) => row.id)).toEqual([keep.id]);
      expectError(await t.request('DELETE', alertUrl(website.id, drop.id), { token: owner.token }), 404, /Alert not found/);
      expectError(await t.request('PUT', alertUrl(website.id, drop.id), { token: owner.token, body: { name: 'x' } }), 404, /Alert not found/);
    });
  });

  describe('the alert limit', () => {
    it('refuses the 26th alert with 403 naming the limit and creates nothing', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alerts = [];
      for (let i = 1; i <= 25; i++) alerts.push(await createAlert(t, owner.token, website.id, { name: `alert ${i}` }));
      const refused = await t.request('POST', alertsUrl(website.id), { token: owner.token, body: validBody({ name: 'alert 26' }) });
      expectError(refused, 403, /alert limit reached: at most 25 alerts/i);
      const stored = await storedAlerts(t, website.id);
      expect(stored).toHaveLength(25);
      expect(stored.map((row) => row.name)).not.toContain('alert 26');

      // Deleting one frees a slot.
      expect((await t.request('DELETE', alertUrl(website.id, alerts[0]!.id), { token: owner.token })).status).toBe(200);
      const again = await t.request('POST', alertsUrl(website.id), { token: owner.token, body: validBody({ name: 'alert 26' }) });
      expect(again.status, again.raw).toBe(200);
      expect(await storedAlerts(t, website.id)).toHaveLength(25);
    });

    it('counts per website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      for (let i = 1; i <= 25; i++) await createAlert(t, owner.token, website.id, { name: `alert ${i}` });
      const elsewhere = await t.request('POST', alertsUrl(other.id), { token: owner.token, body: validBody() });
      expect(elsewhere.status, elsewhere.raw).toBe(200);
    });

    it('holds under concurrent creation', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      for (let i = 1; i <= 23; i++) await createAlert(t, owner.token, website.id, { name: `alert ${i}` });
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.request('POST', alertsUrl(website.id), { token: owner.token, body: validBody({ name: `racer ${i}` }) }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 403, 403, 403, 403]);
      expect(await storedAlerts(t, website.id)).toHaveLength(25);
    });
  });

  describe('bad input on create', () => {
    const cases: { label: string; body?: unknown; pattern: RegExp }[] = [
      { label: 'no body at all', body: undefined, pattern: /body\.name: is required/ },
      { label: 'name missing', body: { trigger: { goalName: 'signup' }, template: { message: 'long enough' } }, pattern: /body\.name: is required/ },
      { label: 'name empty', body: validBody({ name: '' }), pattern: /body\.name: must NOT have fewer than 1 characters/ },
      { label: 'name over 100 characters', body: validBody({ name: 'n'.repeat(101) }), pattern: /body\.name: must NOT have more than 100 characters/ },
      { label: 'name a number', body: validBody({ name: 42 }), pattern: /body\.name: must be string/ },
      { label: 'trigger missing', body: { name: 'x', template: { message: 'long enough' } }, pattern: /body\.trigger: is required/ },
      { label: 'trigger a string', body: validBody({ trigger: 'signup' }), pattern: /body\.trigger: must be object/ },
      { label: 'goalName missing', body: validBody({ trigger: {} }), pattern: /body\.trigger\.goalName: is required/ },
      { label: 'goalName upper case', body: validBody({ trigger: { goalName: 'SignUp' } }), pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'goalName with a space', body: validBody({ trigger: { goalName: 'sign up' } }), pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'goalName "identify"', body: validBody({ trigger: { goalName: 'identify' } }), pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'goalName over 64 characters', body: validBody({ trigger: { goalName: 'g'.repeat(65) } }), pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'goalName empty', body: validBody({ trigger: { goalName: '' } }), pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'trigger type other than goal', body: validBody({ trigger: { type: 'pageview', goalName: 'signup' } }), pattern: /body\.trigger\.type: must be "goal"/ },
      { label: 'an unknown trigger field', body: validBody({ trigger: { goalName: 'signup', url: '/x' } }), pattern: /body\.trigger\.url: is not an allowed field/ },
      { label: 'template missing', body: { name: 'x', trigger: { goalName: 'signup' } }, pattern: /body\.template: is required/ },
      { label: 'message missing', body: validBody({ template: { subject: 'Hi' } }), pattern: /body\.template\.message: is required/ },
      { label: 'message under 10 characters', body: validBody({ template: { message: 'too short' } }), pattern: /body\.template\.message: must NOT have fewer than 10 characters/ },
      { label: 'message over 2000 characters', body: validBody({ template: { message: 'm'.repeat(2001) } }), pattern: /body\.template\.message: must NOT have more than 2000 characters/ },
      { label: 'subject over 200 characters', body: validBody({ template: { subject: 's'.repeat(201), message: 'long enough' } }), pattern: /body\.template\.subject: must NOT have more than 200 characters/ },
      { label: 'subject a number', body: validBody({ template: { subject: 7, message: 'long enough' } }), pattern: /body\.template\.subject: must be string or null/ },
      { label: 'an unknown template field', body: validBody({ template: { message: 'long enough', html: '<b>' } }), pattern: /body\.template\.html: is not an allowed field/ },
      { label: 'isEnabled a string', body: validBody({ isEnabled: 'yes' }), pattern: /body\.isEnabled: must be boolean/ },
      { label: 'destination other than email', body: validBody({ destination: { type: 'slack' } }), pattern: /body\.destination\.type: must be "email"/ },
      { label: 'destination without a type', body: validBody({ destination: {} }), pattern: /body\.destination\.type: is required/ },
      { label: 'an unknown destination field', body: validBody({ destination: { type: 'email', to: 'a@b.c' } }), pattern: /body\.destination\.to: is not an allowed field/ },
      { label: 'an unknown top-level field', body: validBody({ websiteId: UNKNOWN_ID }), pattern: /body\.websiteId: is not an allowed field/ },
      { label: 'a body that is an array', body: [validBody()], pattern: /body: must be object/ },
    ];

    for (const { label, body, pattern } of cases) {
      it(`answers 400 naming the field for ${label} and creates nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        expectError(await t.request('POST', alertsUrl(website.id), { token: owner.token, body }), 400, pattern);
        expect(await storedAlerts(t, website.id)).toEqual([]);
      });
    }

    it('answers 400 for malformed JSON and 415 for another content type', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(
        await t.request('POST', alertsUrl(website.id), { token: owner.token, payload: '{"name":', headers: { 'content-type': 'application/json' } }),
        400,
        /not valid JSON/,
      );
      expectError(
        await t.request('POST', alertsUrl(website.id), { token: owner.token, payload: 'name=x', headers: { 'content-type': 'text/plain' } }),
        415,
      );
      expect(await storedAlerts(t, website.id)).toEqual([]);
    });

    it('answers 400 for a malformed websiteId', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', alertsUrl('12345'), { token: owner.token }), 400, /websiteId/);
      expectError(await t.request('POST', alertsUrl('12345'), { token: owner.token, body: validBody() }), 400, /websiteId/);
    });
  });

  describe('bad input on update', () => {
    const cases: { label: string; body?: unknown; pattern: RegExp }[] = [
      { label: 'an empty body', body: {}, pattern: /^body: must contain at least one field/ },
      { label: 'no body at all', body: undefined, pattern: /^body: must contain at least one field/ },
      { label: 'an empty template', body: { template: {} }, pattern: /^body\.template: must contain at least one field/ },
      { label: 'name empty', body: { name: '' }, pattern: /body\.name: must NOT have fewer than 1 characters/ },
      { label: 'name over 100 characters', body: { name: 'n'.repeat(101) }, pattern: /body\.name: must NOT have more than 100 characters/ },
      { label: 'name null', body: { name: null }, pattern: /body\.name: must be string/ },
      { label: 'message under 10 characters', body: { template: { message: 'short' } }, pattern: /body\.template\.message: must NOT have fewer than 10 characters/ },
      { label: 'message over 2000 characters', body: { template: { message: 'm'.repeat(2001) } }, pattern: /body\.template\.message: must NOT have more than 2000 characters/ },
      { label: 'message null', body: { template: { message: null } }, pattern: /body\.template\.message: must be string/ },
      { label: 'subject over 200 characters', body: { template: { subject: 's'.repeat(201) } }, pattern: /body\.template\.subject: must NOT have more than 200 characters/ },
      { label: 'a bad goalName', body: { trigger: { goalName: 'Not Valid' } }, pattern: /body\.trigger\.goalName: must match pattern/ },
      { label: 'a trigger without goalName', body: { trigger: { type: 'goal' } }, pattern: /body\.trigger\.goalName: is required/ },
      { label: 'trigger type other than goal', body: { trigger: { type: 'event', goalName: 'signup' } }, pattern: /body\.trigger\.type: must be "goal"/ },
      { label: 'destination other than email', body: { destination: { type: 'webhook' } }, pattern: /body\.destination\.type: must be "email"/ },
      { label: 'isEnabled a number', body: { isEnabled: 1 }, pattern: /body\.isEnabled: must be boolean/ },
      { label: 'an unknown top-level field', body: { name: 'ok', lastTriggeredAt: null }, pattern: /body\.lastTriggeredAt: is not an allowed field/ },
      { label: 'an unknown template field', body: { template: { body: 'long enough text' } }, pattern: /body\.template\.body: is not an allowed field/ },
      { label: 'an unknown trigger field', body: { trigger: { goalName: 'signup', when: 'always' } }, pattern: /body\.trigger\.when: is not an allowed field/ },
      { label: 'an unknown destination field', body: { destination: { type: 'email', cc: 'x' } }, pattern: /body\.destination\.cc: is not an allowed field/ },
    ];

    for (const { label, body, pattern } of cases) {
      it(`answers 400 naming the field for ${label} and changes nothing`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        const alert = await createAlert(t, owner.token, website.id);
        const before = await storedAlerts(t, website.id);
        expectError(await t.request('PUT', alertUrl(website.id, alert.id), { token: owner.token, body }), 400, pattern);
        expect(await storedAlerts(t, website.id)).toEqual(before);
      });
    }

    it('answers 400 for a malformed alertId on update and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      expectError(await t.request('PUT', alertUrl(website.id, 'not-an-id'), { token: owner.token, body: { name: 'x' } }), 400, /path\.alertId/);
      expectError(await t.request('DELETE', alertUrl(website.id, alert.id.toUpperCase()), { token: owner.token }), 400, /path\.alertId/);
      expect(await storedAlerts(t, website.id)).toHaveLength(1);
    });
  });

  describe('history', () => {
    it('lists entries newest first with their exact shape and counts per status', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id, { name: 'Signups', trigger: { goalName: 'signup' } });
      const oldest = await recordHistory(t, website.id, alert, 30, 'sent', { visitorId: 'visitor-1' });
      const newest = await recordHistory(t, website.id, alert, 1, 'failed', { error: 'SMTP refused', visitorId: 'visitor-3' });
      const middle = await recordHistory(t, website.id, alert, 10, 'throttled', { visitorId: 'visitor-2' });

      const response = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      const entry = (row: typeof oldest) => ({
        id: row.id,
        alertId: alert.id,
        alertName: 'Signups',
        goalName: 'signup',
        status: row.status,
        error: row.error,
        visitorId: row.visitor_id,
        triggeredAt: row.triggered_at,
      });
      expect(response.body).toEqual({
        status: 'success',
        data: [entry(newest), entry(middle), entry(oldest)],
        counts: { queued: 0, sent: 1, failed: 1, skipped: 0, throttled: 1, total: 3 },
      });
      expect(response.body.data[0]).toMatchObject({ error: 'SMTP refused', triggeredAt: expect.stringMatching(ISO_MS) });
    });

    it('answers an empty list with zero counts for a website without history', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const response = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body).toEqual({ status: 'success', data: [], counts: { queued: 0, sent: 0, failed: 0, skipped: 0, throttled: 0, total: 0 } });
    });

    it('returns 50 entries by default, honours a smaller limit and caps larger ones at 100, counting every row', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      const rows = [];
      const statuses: AlertHistoryStatus[] = ['queued', 'sent', 'failed', 'skipped', 'throttled'];
      for (let i = 0; i < 105; i++) rows.push(await recordHistory(t, website.id, alert, i, statuses[i % 5]));
      // Every status is counted, so the counts add up to total (queued: the mail waits in the outbox).
      const counts = { queued: 21, sent: 21, failed: 21, skipped: 21, throttled: 21, total: 105 };

      const byDefault = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(byDefault.status, byDefault.raw).toBe(200);
      expect(byDefault.body.data.map((e: { id: string }) => e.id)).toEqual(rows.slice(0, 50).map((r) => r.id));
      expect(byDefault.body.counts).toEqual(counts);

      const three = await t.request('GET', historyUrl(website.id), { token: owner.token, query: { limit: '3' } });
      expect(three.body.data.map((e: { id: string }) => e.id)).toEqual(rows.slice(0, 3).map((r) => r.id));
      expect(three.body.counts).toEqual(counts);

      for (const limit of ['100', '101', '500']) {
        const capped = await t.request('GET', historyUrl(website.id), { token: owner.token, query: { limit } });
        expect(capped.status, capped.raw).toBe(200);
        expect(capped.body.data.map((e: { id: string }) => e.id)).toEqual(rows.slice(0, 100).map((r) => r.id));
        expect(capped.body.counts).toEqual(counts);
      }
    });

    for (const limit of ['0', '-1', '1.5', 'abc', '', 'true']) {
      it(`answers 400 naming query.limit for limit=${JSON.stringify(limit)}`, async () => {
        const { owner, website } = await ownerWithWebsite(t);
        expectError(await t.request('GET', historyUrl(website.id), { token: owner.token, query: { limit } }), 400, /^query\.limit: /);
      });
    }

    it('answers 400 for an unknown query parameter', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(await t.request('GET', historyUrl(website.id), { token: owner.token, query: { status: 'sent' } }), 400, /query\.status: is not an allowed field/);
    });

    it('filters by alertId, with counts over that alert only', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const signups = await createAlert(t, owner.token, website.id, { name: 'Signups', trigger: { goalName: 'signup' } });
      const orders = await createAlert(t, owner.token, website.id, { name: 'Orders', trigger: { goalName: 'order' } });
      const s1 = await recordHistory(t, website.id, signups, 5, 'sent');
      await recordHistory(t, website.id, orders, 4, 'failed', { error: 'no route' });
      const s2 = await recordHistory(t, website.id, signups, 3, 'skipped');
      await recordHistory(t, website.id, orders, 2, 'sent');
      const s3 = await recordHistory(t, website.id, signups, 1, 'sent');

      const filtered = await t.request('GET', historyUrl(website.id), { token: owner.token, query: { alertId: signups.id, limit: '2' } });
      expect(filtered.status, filtered.raw).toBe(200);
      expect(filtered.body.data.map((e: { id: string }) => e.id)).toEqual([s3.id, s2.id]);
      expect(filtered.body.data.every((e: { alertId: string; alertName: string }) => e.alertId === signups.id && e.alertName === 'Signups')).toBe(true);
      expect(filtered.body.counts).toEqual({ queued: 0, sent: 2, failed: 0, skipped: 1, throttled: 0, total: 3 });

      const all = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(all.body.data).toHaveLength(5);
      expect(all.body.data.at(-1).id).toBe(s1.id);
      expect(all.body.counts).toEqual({ queued: 0, sent: 3, failed: 1, skipped: 1, throttled: 0, total: 5 });
    });

    it('answers 404 for an alertId of another website, an unknown one, and 400 for a malformed one', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const foreign = await createAlert(t, owner.token, other.id);
      await recordHistory(t, other.id, foreign, 1);
      const stranger = await ownerWithWebsite(t);
      const strangers = await createAlert(t, stranger.owner.token, stranger.website.id);
      for (const alertId of [foreign.id, strangers.id, UNKNOWN_ID]) {
        expectError(await t.request('GET', historyUrl(website.id), { token: owner.token, query: { alertId } }), 404, /Alert not found/);
      }
      expectError(await t.request('GET', historyUrl(website.id), { token: owner.token, query: { alertId: 'nope' } }), 400, /query\.alertId/);
    });

    it("never lists another website's history", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const mine = await createAlert(t, owner.token, website.id);
      const theirs = await createAlert(t, owner.token, other.id);
      const kept = await recordHistory(t, website.id, mine, 2);
      await recordHistory(t, other.id, theirs, 1);
      const response = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(response.body.data.map((e: { id: string }) => e.id)).toEqual([kept.id]);
      expect(response.body.counts.total).toBe(1);
    });

    it('keeps the history of a deleted alert, with its name and goal', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id, { name: 'Gone soon', trigger: { goalName: 'farewell' } });
      const row = await recordHistory(t, website.id, alert, 1, 'sent', { visitorId: 'v-9' });
      expect((await t.request('DELETE', alertUrl(website.id, alert.id), { token: owner.token })).status).toBe(200);
      expect(await storedAlerts(t, website.id)).toEqual([]);
      expect(await storedHistory(t, website.id)).toHaveLength(1);

      const response = await t.request('GET', historyUrl(website.id), { token: owner.token });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toEqual([
        {
          id: row.id,
          alertId: alert.id,
          alertName: 'Gone soon',
          goalName: 'farewell',
          status: 'sent',
          error: null,
          visitorId: 'v-9',
          triggeredAt: row.triggered_at,
        },
      ]);
      // The filter asks for an alert of this website, and this one no longer exists.
      expectError(await t.request('GET', historyUrl(website.id), { token: owner.token, query: { alertId: alert.id } }), 404, /Alert not found/);
    });

    it('is not mistaken for an alert id by the routes that take one', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(await t.request('DELETE', historyUrl(website.id), { token: owner.token }), 400, /path\.alertId/);
      expectError(await t.request('PUT', historyUrl(website.id), { token: owner.token, body: { name: 'x' } }), 400, /path\.alertId/);
    });
  });

  describe('unknown and foreign ids', () => {
    it("answers 404 on every route for another account's website and changes nothing", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await createAccount(t);
      const alert = await createAlert(t, owner.token, website.id);
      await recordHistory(t, website.id, alert, 1);
      const before = await storedAlerts(t, website.id);
      const token = stranger.token;
      expectError(await t.request('GET', alertsUrl(website.id), { token }), 404, /Website not found/);
      expectError(await t.request('POST', alertsUrl(website.id), { token, body: validBody() }), 404, /Website not found/);
      expectError(await t.request('PUT', alertUrl(website.id, alert.id), { token, body: { name: 'x' } }), 404, /Website not found/);
      expectError(await t.request('DELETE', alertUrl(website.id, alert.id), { token }), 404, /Website not found/);
      expectError(await t.request('GET', historyUrl(website.id), { token }), 404, /Website not found/);
      expect(await storedAlerts(t, website.id)).toEqual(before);
    });

    it('answers 404 for an unknown website id', async () => {
      const { owner } = await ownerWithWebsite(t);
      expectError(await t.request('GET', alertsUrl(UNKNOWN_ID), { token: owner.token }), 404, /Website not found/);
      expectError(await t.request('GET', historyUrl(UNKNOWN_ID), { token: owner.token }), 404, /Website not found/);
    });

    it('answers 404 on update and delete for an alert of another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const foreign = await createAlert(t, owner.token, other.id);
      const before = await storedAlerts(t, other.id);
      expectError(await t.request('PUT', alertUrl(website.id, foreign.id), { token: owner.token, body: { name: 'x' } }), 404, /Alert not found/);
      expectError(await t.request('DELETE', alertUrl(website.id, foreign.id), { token: owner.token }), 404, /Alert not found/);
      expect(await storedAlerts(t, other.id)).toEqual(before);
    });

    it("answers 404 on update and delete for an alert of another account's website", async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const stranger = await ownerWithWebsite(t);
      const foreign = await createAlert(t, stranger.owner.token, stranger.website.id);
      const before = await storedAlerts(t, stranger.website.id);
      expectError(await t.request('PUT', alertUrl(website.id, foreign.id), { token: owner.token, body: { name: 'x' } }), 404, /Alert not found/);
      expectError(await t.request('DELETE', alertUrl(website.id, foreign.id), { token: owner.token }), 404, /Alert not found/);
      expect(await storedAlerts(t, stranger.website.id)).toEqual(before);
    });

    it('answers 404 on update and delete for an unknown alert id', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      expectError(await t.request('PUT', alertUrl(website.id, UNKNOWN_ID), { token: owner.token, body: { name: 'x' } }), 404, /Alert not found/);
      expectError(await t.request('DELETE', alertUrl(website.id, UNKNOWN_ID), { token: owner.token }), 404, /Alert not found/);
    });
  });

  describe('who may manage alerts', () => {
    it('answers 401 with WWW-Authenticate without a token on every route', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      const before = await storedAlerts(t, website.id);
      const calls: [string, string, unknown][] = [
        ['GET', alertsUrl(website.id), undefined],
        ['POST', alertsUrl(website.id), validBody()],
        ['PUT', alertUrl(website.id, alert.id), { name: 'x' }],
        ['DELETE', alertUrl(website.id, alert.id), undefined],
        ['GET', historyUrl(website.id), undefined],
      ];
      for (const [method, url, body] of calls) {
        const response = await t.request(method, url, { body });
        expectError(response, 401, /missing/);
        expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      expect(await storedAlerts(t, website.id)).toEqual(before);
    });

    it('needs alerts:read to list and read history and alerts:write to create, update and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const alert = await createAlert(t, owner.token, website.id);
      const readOnly = await createToken(t, owner, ['alerts:read']);
      const writeOnly = await createToken(t, owner, ['alerts:write']);
      const unrelated = await createToken(t, owner, ['goals:read', 'goals:write']);
      const before = await storedAlerts(t, website.id);

      expect((await t.request('GET', alertsUrl(website.id), { token: readOnly })).status).toBe(200);
      expect((await t.request('GET', historyUrl(website.id), { token: readOnly })).status).toBe(200);
      for (const token of [writeOnly, unrelated]) {
        expectError(await t.request('GET', alertsUrl(website.id), { token }), 403, /lacks the permission alerts:read/);
        expectError(await t.request('GET', historyUrl(website.id), { token }), 403, /lacks the permission alerts:read/);
      }
      for (const token of [readOnly, unrelated]) {
        expectError(await t.request('POST', alertsUrl(website.id), { token, body: validBody() }), 403, /lacks the permission alerts:write/);
        expectError(await t.request('PUT', alertUrl(website.id, alert.id), { token, body: { name: 'x' } }), 403, /alerts:write/);
        expectError(await t.request('DELETE', alertUrl(website.id, alert.id), { token }), 403, /alerts:write/);
      }
      expect(await storedAlerts(t, website.id)).toEqual(before);

      expect((await t.request('POST', alertsUrl(website.id), { token: writeOnly, body: validBody({ name: 'by writer' }) })).status).toBe(200);
      expect((await t.request('PUT', alertUrl(website.id, alert.id), { token: writeOnly, body: { name: 'renamed' } })).status).toBe(200);
      expect((await t.request('DELETE', alertUrl(website.id, alert.id), { token: writeOnly })).status).toBe(200);
      expect((await storedAlerts(t, website.id)).map((row) => row.name)).toEqual(['by writer']);
    });

    it('lets a viewer list alerts and history but not create, update or delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const viewer = await createAccount(t);
      await addMember(t, website.id, viewer.id, 'viewer');
      const alert = await createAlert(t, owner.token, website.id);
      const entry = await recordHistory(t, website.id, alert, 1);
      const before = await storedAlerts(t, website.id);

      const list = await t.request('GET', alertsUrl(website.id), { token: viewer.token });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data).toEqual([alert]);
      const history = await t.request('GET', historyUrl(website.id), { token: viewer.token });
      expect(history.body.data.map((e: { id: string }) => e.id)).toEqual([entry.id]);
      expectError(await t.request('POST', alertsUrl(website.id), { token: viewer.token, body: validBody() }), 403, /role \(viewer\)/);
      expectError(await t.request('PUT', alertUrl(website.id, alert.id), { token: viewer.token, body: { name: 'x' } }), 403, /role \(viewer\)/);
      expectError(await t.request('DELETE', alertUrl(website.id, alert.id), { token: viewer.token }), 403, /role \(viewer\)/);
      expect(await storedAlerts(t, website.id)).toEqual(before);
    });

    it('lets a member create, list, update and delete', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const member = await createAccount(t);
      await addMember(t, website.id, member.id, 'member');
      const created = await createAlert(t, member.token, website.id, { name: 'member alert' });
      const list = await t.request('GET', alertsUrl(website.id), { token: member.token });
      expect(list.body.data).toEqual([created]);
      const updated = await t.request('PUT', alertUrl(website.id, created.id), { token: member.token, body: { isEnabled: false } });
      expect(updated.status, updated.raw).toBe(200);
      expect(updated.body.data[0].isEnabled).toBe(false);
      expect((await t.request('DELETE', alertUrl(website.id, created.id), { token: member.token })).status).toBe(200);
      expect((await t.request('GET', alertsUrl(website.id), { token: owner.token })).body.data).toEqual([]);
    });

    it('answers 403 for a token limited to other websites', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const alert = await createAlert(t, owner.token, website.id);
      const limited = await createToken(t, owner, ['*'], [other.id]);
      const before = await storedAlerts(t, website.id);
      expectError(await t.request('GET', alertsUrl(website.id), { token: limited }), 403, /not allowed to access this website/);
      expectError(await t.request('POST', alertsUrl(website.id), { token: limited, body: validBody() }), 403, /not allowed/);
      expectError(await t.request('PUT', alertUrl(website.id, alert.id), { token: limited, body: { name: 'x' } }), 403, /not allowed/);
      expectError(await t.request('DELETE', alertUrl(website.id, alert.id), { token: limited }), 403, /not allowed/);
      expectError(await t.request('GET', historyUrl(website.id), { token: limited }), 403, /not allowed/);
      expect(await storedAlerts(t, website.id)).toEqual(before);
      expect((await t.request('GET', alertsUrl(other.id), { token: limited })).status).toBe(200);
    });

    it('lets a df_ key manage the alerts of its own website', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const key = await createApiKey(t, owner.token, website.id);
      const created = await createAlert(t, key.key, website.id, { name: 'by key' });
      expect(created).toMatchObject({ websiteId: website.id, name: 'by key' });
      expect((await t.request('GET', alertsUrl(website.id), { token: key.key })).body.data).toEqual([created]);
      const updated = await t.request('PUT', alertUrl(website.id, created.id), { token: key.key, body: { name: 'renamed by key' } });
      expect(updated.body.data[0].name).toBe('renamed by key');
      expect((await t.request('GET', historyUrl(website.id), { token: key.key })).status).toBe(200);
      expect((await t.request('DELETE', alertUrl(website.id, created.id), { token: key.key })).status).toBe(200);
      expect(await storedAlerts(t, website.id)).toEqual([]);
    });

    it('answers 403 to a df_ key on another website of the same account', async () => {
      const { owner, website } = await ownerWithWebsite(t);
      const other = await createWebsite(t, owner.token);
      const key = await createApiKey(t, owner.token, website.id);
      const otherAlert = await createAlert(t, owner.token, other.id);
      const before = await storedAlerts(t, other.id);
      expectError(await t.request('GET', alertsUrl(other.id), { token: key.key }), 403, /another website/);
      expectError(await t.request('POST', alertsUrl(other.id), { token: key.key, body: validBody() }), 403, /another website/);
      expectError(await t.request('PUT', alertUrl(other.id, otherAlert.id), { token: key.key, body: { name: 'x' } }), 403, /another website/);
      expectError(await t.request('DELETE', alertUrl(other.id, otherAlert.id), { token: key.key }), 403, /another website/);
      expectError(await t.request('GET', historyUrl(other.id), { token: key.key }), 403, /another website/);
      expect(await storedAlerts(t, other.id)).toEqual(before);
    });
  });
});
