import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/modules/events/event.types.ts';
import { expectExit, parseJson, useCliHarness } from './helpers/cli-client.ts';
import { createAccount, createWebsite, newEvent } from './helpers/factories.ts';

// goals, funnels and alerts as processes against a listening server.

// These tests read whole cells: the commands run 250 columns wide, in UTC (times in tables are
// shortened to the terminal's local time). Fitting tables to 80 columns is tested in cli-output.test.ts.
// Tables as a 250-column terminal shows them (into a pipe they would be tab-separated values).
process.env.SIGHTLINE_FORCE_TTY = '250';
process.env.TZ = 'UTC';

function event(websiteId: string, name: string | null, visitorId: string): NewEvent {
  return newEvent(websiteId, visitorId, { type: name ? 'custom' : 'pageview', name, source: 'api' });
}

describe('sightline goals, funnels and alerts', { timeout: 90_000 }, () => {
  const cli = useCliHarness();
  const { t } = cli;

  async function ownerWithWebsite() {
    const owner = await createAccount(t);
    const website = await createWebsite(t, owner.token);
    return { owner, website };
  }

  async function track(websiteId: string, goals: string[]) {
    const visitor = `v-${randomBytes(4).toString('hex')}`;
    await t.app.events.write([event(websiteId, null, visitor), ...goals.map((goal) => event(websiteId, goal, visitor))]);
  }

  describe('goals', () => {
    it('list shows the tracked goals, most completions first, in a table and as JSON', async () => {
      const { owner, website } = await ownerWithWebsite();
      await track(website.id, ['signup', 'purchase', 'signup']);

      const table = await cli.run(['goals', 'list', '-w', website.domain], { token: owner.token });
      expectExit(table, 0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^GOAL +COMPLETIONS +VISITORS +LAST COMPLETED +DISPLAY NAME +COLOR$/);
      expect(lines.slice(1)).toEqual([expect.stringMatching(/^signup +2 +1 +\d{4}-\d{2}-\d{2} \d{2}:\d{2} +- +-$/), expect.stringMatching(/^purchase +1 +1 +\d{4}-\d{2}-\d{2} \d{2}:\d{2} +- +-$/)]);

      const json = await cli.run(['goals', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(json, 0);
      expect(parseJson(json)).toEqual((await t.request('GET', `/api/v1/admin/websites/${website.id}/goals`, { token: owner.token })).body.data);
    });

    it('customize sets display fields, --no- clears one; customizations --json carries the palette; reset removes it', async () => {
      const { owner, website } = await ownerWithWebsite();
      const colors = await cli.run(['goals', 'colors', '-w', website.id], { token: owner.token });
      expectExit(colors, 0);
      expect(colors.stdout.split('\n')[0]).toMatch(/^COLOR +FAMILY +LABEL$/);
      const color = /^(#[0-9a-f]{6}) +blue /m.exec(colors.stdout)?.[1];
      expect(color, colors.stdout).toBeDefined();

      const customized = await cli.run(
        ['goals', 'customize', '-w', website.id, '--goal', 'signup', '--display-name', 'Sign-up', '--color', color!, '--description', 'New account'],
        { token: owner.token },
      );
      expectExit(customized, 0);
      expect(customized.stderr).toBe(`Goal signup: display name Sign-up, color ${color}, description New account.\n`);

      const cleared = await cli.run(['goals', 'customize', '-w', website.id, '--goal', 'signup', '--no-description', '--json'], {
        token: owner.token,
      });
      expectExit(cleared, 0);
      expect(parseJson(cleared)).toEqual([expect.objectContaining({ goalName: 'signup', displayName: 'Sign-up', color, description: null })]);

      const table = await cli.run(['goals', 'customizations', '-w', website.id], { token: owner.token });
      expectExit(table, 0);
      expect(table.stdout).toMatch(new RegExp(`^signup +Sign-up +${color} +- +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}$`, 'm'));

      const json = await cli.run(['goals', 'customizations', '-w', website.id, '--json'], { token: owner.token });
      expectExit(json, 0);
      const body = parseJson(json);
      expect(Object.keys(body).sort()).toEqual(['colors', 'data']);
      expect(body.data).toEqual([expect.objectContaining({ goalName: 'signup' })]);
      expect(body.colors).toContainEqual({ color, family: 'blue', label: expect.any(String) });

      const reset = await cli.run(['goals', 'reset', '-w', website.id, '--goal', 'signup', '--json'], { token: owner.token });
      expectExit(reset, 0);
      expect(parseJson(reset)).toEqual([{ deleted: true, goalName: 'signup' }]);
      const rows = await t.db.selectFrom('goal_customizations').selectAll().where('website_id', '=', website.id).execute();
      expect(rows).toEqual([]);
    });

    it('customize with nothing to change exits 2; a color outside the palette exits 1 with the server message', async () => {
      const { owner, website } = await ownerWithWebsite();
      const nothing = await cli.run(['goals', 'customize', '-w', website.id, '--goal', 'signup'], { token: owner.token });
      expectExit(nothing, 2);
      expect(nothing.stderr).toMatch(/^sightline: nothing to change/);

      const bad = await cli.run(['goals', 'customize', '-w', website.id, '--goal', 'signup', '--color', '#123456'], { token: owner.token });
      expectExit(bad, 1);
      expect(bad.stderr).toMatch(/^sightline: body\.color: .*palette.*\(HTTP 400\)\n$/);
    });
  });

  describe('funnels', () => {
    it('create from --step options, list as a table and as JSON', async () => {
      const { owner, website } = await ownerWithWebsite();
      const created = await cli.run(
        ['funnels', 'create', '-w', website.id, '--name', 'Checkout', '--step', 'pageview:/pricing', '--step', 'goal:signup', '--step', 'page:https://example.com/thanks'],
        { token: owner.token },
      );
      expectExit(created, 0);
      expect(created.stdout).toMatch(/^[0-9a-f]{24} +Checkout +\/pricing > goal:signup > https:\/\/example\.com\/thanks +yes +\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/m);
      expect(created.stderr).toMatch(/^Created funnel "Checkout" \([0-9a-f]{24}\)\.\n$/);

      const json = await cli.run(['funnels', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(json, 0);
      const [funnel] = parseJson(json);
      expect(funnel).toMatchObject({
        name: 'Checkout',
        isActive: true,
        steps: [
          { type: 'pageview', url: '/pricing' },
          { type: 'goal', goalName: 'signup' },
          { type: 'pageview', url: 'https://example.com/thanks' },
        ],
      });
    });

    it('create --body - reads the funnel from stdin; update renames it; delete needs --yes, then it leaves the list', async () => {
      const { owner, website } = await ownerWithWebsite();
      const body = { name: 'From stdin', steps: [{ type: 'pageview', url: '/', name: 'Home' }, { type: 'goal', goalName: 'signup', name: 'Signed up' }] };
      const created = await cli.run(['funnels', 'create', '-w', website.id, '--body', '-', '--json'], { token: owner.token, input: JSON.stringify(body) });
      expectExit(created, 0);
      const [funnel] = parseJson(created);
      expect(funnel.steps.map((step: any) => step.name)).toEqual(['Home', 'Signed up']);

      const renamed = await cli.run(['funnels', 'update', '-w', website.id, funnel.id, '--name', 'Renamed'], { token: owner.token });
      expectExit(renamed, 0);
      expect(renamed.stdout).toMatch(/ Renamed +\/ > goal:signup +yes /);

      const unconfirmed = await cli.run(['funnels', 'delete', '-w', website.id, funnel.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect(unconfirmed.stderr).toMatch(/add --yes to confirm/);

      const deleted = await cli.run(['funnels', 'delete', '-w', website.id, funnel.id, '--yes'], { token: owner.token });
      expectExit(deleted, 0);
      const list = await t.request('GET', `/api/v1/admin/websites/${website.id}/funnels`, { token: owner.token });
      expect(list.body.data).toEqual([]);

      const empty = await cli.run(['funnels', 'list', '-w', website.id], { token: owner.token });
      expectExit(empty, 0);
      expect(empty.stdout).toBe('');
      expect(empty.stderr).toBe('No active funnels.\n');
    });

    it('a malformed --step is a usage error (exit 2); one step only is refused by the server (exit 1)', async () => {
      const { owner, website } = await ownerWithWebsite();
      const malformed = await cli.run(['funnels', 'create', '-w', website.id, '--name', 'Bad', '--step', '/pricing'], { token: owner.token });
      expectExit(malformed, 2);
      expect(malformed.stderr).toMatch(/^sightline: --step "\/pricing": expected pageview:<path or URL> or goal:<goal name>/);

      const short = await cli.run(['funnels', 'create', '-w', website.id, '--name', 'Short', '--step', 'goal:signup'], { token: owner.token });
      expectExit(short, 1);
      expect(short.stderr).toMatch(/^sightline: body\.steps: .*\(HTTP 400\)\n$/);
      const rows = await t.db.selectFrom('funnels').selectAll().where('website_id', '=', website.id).execute();
      expect(rows).toEqual([]);
    });
  });

  describe('alerts', () => {
    it('create from options, list as a table and as JSON, update --disable, delete --yes', async () => {
      const { owner, website } = await ownerWithWebsite();
      const created = await cli.run(
        ['alerts', 'create', '-w', website.id, '--name', 'New sale', '--goal', 'purchase', '--subject', 'Ka-ching', '--message', 'Someone bought something.'],
        { token: owner.token },
      );
      expectExit(created, 0);
      expect(created.stdout).toMatch(/^[0-9a-f]{24} +New sale +purchase +yes +Ka-ching +never$/m);
      const id = /^([0-9a-f]{24}) /m.exec(created.stdout)![1]!;

      const json = await cli.run(['alerts', 'list', '-w', website.id, '--json'], { token: owner.token });
      expectExit(json, 0);
      expect(parseJson(json)).toEqual([
        expect.objectContaining({
          id,
          trigger: { type: 'goal', goalName: 'purchase' },
          template: { subject: 'Ka-ching', message: 'Someone bought something.' },
          isEnabled: true,
        }),
      ]);

      const disabled = await cli.run(['alerts', 'update', '-w', website.id, id, '--disable', '--no-subject', '--json'], { token: owner.token });
      expectExit(disabled, 0);
      expect(parseJson(disabled)[0]).toMatchObject({ isEnabled: false, template: { subject: null, message: 'Someone bought something.' } });

      const deleted = await cli.run(['alerts', 'delete', '-w', website.id, id, '--yes', '--json'], { token: owner.token });
      expectExit(deleted, 0);
      expect(parseJson(deleted)).toEqual([{ message: expect.any(String) }]);
      expect((await t.request('GET', `/api/v1/admin/websites/${website.id}/alerts`, { token: owner.token })).body.data).toEqual([]);
    });

    it('create --body - reads the alert from stdin; a too-short message is refused by the server (exit 1); delete without --yes exits 2', async () => {
      const { owner, website } = await ownerWithWebsite();
      const fromStdin = await cli.run(['alerts', 'create', '-w', website.id, '--body', '-', '--disabled', '--json'], {
        token: owner.token,
        input: JSON.stringify({ name: 'From stdin', trigger: { goalName: 'signup' }, template: { message: 'A new account was made.' } }),
      });
      expectExit(fromStdin, 0);
      const [alert] = parseJson(fromStdin);
      expect(alert).toMatchObject({ name: 'From stdin', isEnabled: false, template: { subject: null } });

      const short = await cli.run(['alerts', 'create', '-w', website.id, '--name', 'Short', '--goal', 'signup', '--message', 'hi'], { token: owner.token });
      expectExit(short, 1);
      expect(short.stderr).toMatch(/^sightline: body\.template\.message: .*\(HTTP 400\)\n$/);

      const unconfirmed = await cli.run(['alerts', 'delete', '-w', website.id, alert.id], { token: owner.token });
      expectExit(unconfirmed, 2);
      expect((await t.request('GET', `/api/v1/admin/websites/${website.id}/alerts`, { token: owner.token })).body.data).toHaveLength(1);
    });

    it('history lists firings with counts: a table with a summary line, and {data, counts} as JSON', async () => {
      const { owner, website } = await ownerWithWebsite();
      const created = await t.request('POST', `/api/v1/admin/websites/${website.id}/alerts`, {
        token: owner.token,
        body: { name: 'On signup', trigger: { goalName: 'signup' }, template: { message: 'Someone signed up.' } },
      });
      const alertId = created.body.data[0].id;
      await track(website.id, ['signup']);
      await track(website.id, ['signup']);

      const table = await cli.run(['alerts', 'history', '-w', website.id, '--limit', '1'], { token: owner.token });
      expectExit(table, 0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^TRIGGERED +ALERT +GOAL +STATUS +VISITOR +ERROR$/);
      expect(lines.slice(1)).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} +On signup +signup +\w+ +v-[0-9a-f]{8} +/)]);
      expect(table.stderr).toMatch(/^2 in all: \d+ queued, \d+ sent, \d+ failed, \d+ skipped, \d+ throttled\.\n$/);

      const json = await cli.run(['alerts', 'history', '-w', website.id, '--alert', alertId, '--json'], { token: owner.token });
      expectExit(json, 0);
      const body = parseJson(json);
      expect(body.data).toHaveLength(2);
      expect(body.data[0]).toMatchObject({ alertId, alertName: 'On signup', goalName: 'signup' });
      expect(body.counts.total).toBe(2);

      const badLimit = await cli.run(['alerts', 'history', '-w', website.id, '--limit', '0'], { token: owner.token });
      expectExit(badLimit, 2);
      expect(badLimit.stderr).toMatch(/--limit <n>' argument '0' is invalid/);
    });
  });
});
