import { type Api, dataOf, describeFailure } from './api.ts';
import type { ToolDefinition } from './catalogue.ts';

// What a confirm-gated tool would do, said before it is done. A preview reads what it names when
// one cheap GET can (the token, key, funnel, member or connection about to go), and never writes.

type Args = Record<string, unknown>;
type Preview = (args: Args, api: Api, tool: ToolDefinition) => Promise<string>;

const q = (value: unknown): string => JSON.stringify(value);
const ADMIN = '/api/v1/admin';
const WEBSITE = `${ADMIN}/websites/{websiteId}`;

/** One item of a list endpoint, or a sentence saying why it could not be read. */
async function lookUp(
  api: Api,
  path: string,
  pathParams: Args,
  matches: (item: Record<string, unknown>) => boolean,
): Promise<{ item: Record<string, unknown> | undefined; list: Array<Record<string, unknown>>; problem?: string }> {
  try {
    const response = await api({ method: 'GET', path, pathParams });
    const list = dataOf(response);
    if (!list) return { item: undefined, list: [], problem: `its details could not be read (${describeFailure(response)})` };
    return { item: list.find(matches), list };
  } catch (error) {
    return { item: undefined, list: [], problem: `its details could not be read (${(error as Error).message})` };
  }
}

function websiteLabel(args: Args): string {
  return `website ${args.websiteId}`;
}

const previews: Record<string, Preview> = {
  async token_create(args) {
    const permissions = Array.isArray(args.permissions) ? args.permissions.join(', ') : '* (all that the calling token holds)';
    const websites = Array.isArray(args.websiteIds) && args.websiteIds.length > 0 ? `the websites ${args.websiteIds.join(', ')}` : 'every website of the account';
    const name = args.name === undefined ? 'an account token' : `an account token named ${q(args.name)}`;
    const expiry = args.expiresAt === undefined ? ' that does not expire' : ` that expires at ${args.expiresAt}`;
    return `Would create ${name}${expiry}, with the permissions ${permissions}, for ${websites}. Its raw dft_ value would be in the answer, once.`;
  },

  async token_revoke(args, api) {
    const { item, problem } = await lookUp(api, `${ADMIN}/access-tokens`, {}, (token) => token.id === args.tokenId);
    if (problem) return `Would revoke token ${args.tokenId} (${problem}).`;
    if (!item) return `Would revoke token ${args.tokenId}, but this credential sees no token with that id: the call would answer 404.`;
    const websites = (item.websiteIds as string[]).length > 0 ? `; websites: ${(item.websiteIds as string[]).join(', ')}` : '';
    return `Would revoke token ${item.id} (${q(item.name)}, ${item.displayKey}; permissions: ${(item.permissions as string[]).join(', ')}${websites}). Whatever uses it would get 401 from then on.`;
  },

  async website_delete(args, api) {
    const { item, problem } = await lookUp(api, `${ADMIN}/websites`, {}, (site) => site.id === args.websiteId);
    const label = item ? `website ${item.id} (${item.domain})` : `${websiteLabel(args)}${problem ? ` (${problem})` : ''}`;
    return `Would ask the server to delete ${label}. The server always refuses: websites are deleted in the dashboard only.`;
  },

  async apikey_create(args, api) {
    const { item } = await lookUp(api, `${ADMIN}/websites`, {}, (site) => site.id === args.websiteId);
    const label = item ? `website ${item.id} (${item.domain})` : websiteLabel(args);
    return `Would create an API key named ${q(args.name)} for ${label}. Its raw df_ value would be in the answer, once.`;
  },

  async apikey_roll(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/apikeys`, { websiteId: args.websiteId }, (key) => key.id === args.apiKeyId);
    if (problem) return `Would roll API key ${args.apiKeyId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would roll API key ${args.apiKeyId}, but ${websiteLabel(args)} has no such key: the call would answer 404.`;
    return `Would roll API key ${item.id} (${q(item.name)}, ${item.displayKey}) of ${websiteLabel(args)}: a new df_ secret would be in the answer, once, and the old secret would stop working at once.`;
  },

  async apikey_revoke(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/apikeys`, { websiteId: args.websiteId }, (key) => key.id === args.apiKeyId);
    if (problem) return `Would revoke API key ${args.apiKeyId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would revoke API key ${args.apiKeyId}, but ${websiteLabel(args)} has no such key: the call would answer 404.`;
    return `Would revoke API key ${item.id} (${q(item.name)}, ${item.displayKey}) of ${websiteLabel(args)}. Whatever uses it would get 401 from then on.`;
  },

  async shared_link_create(args, api) {
    const { item } = await lookUp(api, `${ADMIN}/websites`, {}, (site) => site.id === args.websiteId);
    const label = item ? `website ${item.id} (${item.domain})` : websiteLabel(args);
    const lock = args.password === undefined ? 'without a password' : 'with a password';
    return `Would create a shared dashboard link named ${q(args.name)} for ${label}, ${lock}. Anyone with its URL (in the answer, once) could read the website's analytics while its public dashboard is on.`;
  },

  async shared_link_revoke(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/shared-links`, { websiteId: args.websiteId }, (link) => link.id === args.sharedLinkId);
    if (problem) return `Would revoke shared link ${args.sharedLinkId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would revoke shared link ${args.sharedLinkId}, but ${websiteLabel(args)} has no such link: the call would answer 404.`;
    return `Would revoke shared link ${item.id} (${q(item.name)}, ${item.displaySlug}) of ${websiteLabel(args)}. Its URL would answer 404 from then on.`;
  },

  async goal_customization_reset(args, api) {
    const path = `${WEBSITE}/goals/customizations`;
    const { item, problem } = await lookUp(api, path, { websiteId: args.websiteId }, (c) => c.goalName === args.goalName);
    if (problem) return `Would reset the display customization of goal ${q(args.goalName)} on ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Goal ${q(args.goalName)} has no display customization on ${websiteLabel(args)}: the call would change nothing.`;
    return `Would reset the display customization of goal ${q(args.goalName)} on ${websiteLabel(args)} (now: displayName ${q(item.displayName)}, color ${q(item.color)}, description ${q(item.description)}) to the defaults.`;
  },

  async funnel_delete(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/funnels`, { websiteId: args.websiteId }, (f) => f.id === args.funnelId);
    if (problem) return `Would delete funnel ${args.funnelId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would delete funnel ${args.funnelId}, but ${websiteLabel(args)} has no active funnel with that id.`;
    return `Would delete funnel ${item.id} (${q(item.name)}, ${(item.steps as unknown[]).length} steps) of ${websiteLabel(args)}. It becomes inactive; funnel_update with isActive: true revives it.`;
  },

  async alert_delete(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/alerts`, { websiteId: args.websiteId }, (a) => a.id === args.alertId);
    if (problem) return `Would delete alert ${args.alertId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would delete alert ${args.alertId}, but ${websiteLabel(args)} has no such alert: the call would answer 404.`;
    const goal = (item.trigger as { goalName?: string } | undefined)?.goalName;
    return `Would delete alert ${item.id} (${q(item.name)}, on goal ${q(goal)}, ${item.isEnabled ? 'enabled' : 'disabled'}) of ${websiteLabel(args)}. Its history is kept.`;
  },

  async note_delete(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/notes`, { websiteId: args.websiteId }, (n) => n.id === args.noteId);
    if (problem) return `Would delete note ${args.noteId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would delete note ${args.noteId}, but ${websiteLabel(args)} has no such note among its latest: the call may answer 404.`;
    return `Would delete note ${item.id} (${q(String(item.text).slice(0, 80))}, at ${item.timestamp}) of ${websiteLabel(args)}.`;
  },

  async segment_delete(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/segments`, { websiteId: args.websiteId }, (segment) => segment.id === args.segmentId);
    if (problem) return `Would delete segment ${args.segmentId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would delete segment ${args.segmentId}, but this credential sees no such segment on ${websiteLabel(args)}: the call would answer 404.`;
    return `Would delete segment ${item.id} (${q(item.name)}, ${item.shared ? 'shared with the team' : 'personal'}) of ${websiteLabel(args)}.`;
  },

  async team_remove(args, api) {
    const who = args.userId !== undefined ? `user ${args.userId}` : `${args.email}`;
    try {
      const response = await api({ method: 'GET', path: `${WEBSITE}/team`, pathParams: { websiteId: args.websiteId } });
      const members = dataOf(response);
      if (!members) return `Would remove ${who} from ${websiteLabel(args)} (the team could not be read: ${describeFailure(response)}).`;
      const email = typeof args.email === 'string' ? args.email.toLowerCase() : undefined;
      const member = members.find((m) => m.userId === args.userId || (email !== undefined && String(m.email).toLowerCase() === email));
      if (member) return `Would remove ${member.name} <${member.email}> (${member.role}) from ${websiteLabel(args)}.`;
      const invitations = ((response.body as { invitations?: Array<Record<string, unknown>> }).invitations ?? []);
      const invitation = invitations.find((i) => email !== undefined && String(i.email).toLowerCase() === email);
      if (invitation) return `Would withdraw the pending invitation of ${invitation.email} (${invitation.role}) to ${websiteLabel(args)}.`;
      return `Would remove ${who} from ${websiteLabel(args)}, but nobody on its team or invited matches: the call would answer 404.`;
    } catch (error) {
      return `Would remove ${who} from ${websiteLabel(args)} (the team could not be read: ${(error as Error).message}).`;
    }
  },

  async import_delete(args, api) {
    const { item, problem } = await lookUp(api, `${WEBSITE}/imports`, { websiteId: args.websiteId }, (i) => i.id === args.importId);
    if (problem) return `Would delete import ${args.importId} of ${websiteLabel(args)} (${problem}).`;
    if (!item) return `Would delete import ${args.importId}, but ${websiteLabel(args)} has no such import: the call would answer 404.`;
    const days = item.firstDay ? `, ${item.firstDay} to ${item.lastDay}` : '';
    return `Would delete import ${item.id} (${q(String(item.label))}, ${item.status}${days}) of ${websiteLabel(args)}: its data would leave every read.`;
  },

  async currency_rate_delete(args, api) {
    const currency = String(args.currency).toUpperCase();
    const { item, problem } = await lookUp(api, `${WEBSITE}/currency-rates`, { websiteId: args.websiteId }, (rate) => rate.currency === currency);
    if (problem) return `Would delete the rate of ${currency} on ${websiteLabel(args)} (${problem}).`;
    if (!item) return `${currency} has no rate on ${websiteLabel(args)}: the call would change nothing.`;
    return `Would delete the rate of ${currency} (${item.rate}, set ${item.updatedAt}) on ${websiteLabel(args)}: its payments would count in no report until a rate is set again.`;
  },
};

async function disconnectPreview(args: Args, api: Api, tool: ToolDefinition): Promise<string> {
  const provider = tool.path.slice(tool.path.lastIndexOf('/') + 1);
  const { list, problem } = await lookUp(api, `${WEBSITE}/integrations`, { websiteId: args.websiteId }, () => true);
  if (problem) return `Would disconnect ${provider} from ${websiteLabel(args)} (${problem}).`;
  const status = list[0]?.[provider] as { connected?: boolean; connectedAt?: string | null } | undefined;
  if (status && !status.connected) return `${provider} is not connected to ${websiteLabel(args)}: the call would change nothing.`;
  const since = status?.connectedAt ? ` (connected since ${status.connectedAt})` : '';
  return `Would disconnect ${provider} from ${websiteLabel(args)}${since} and delete its stored credentials.`;
}

function genericPreview(args: Args, tool: ToolDefinition): string {
  const path = tool.path.replace(/\{(\w+)\}/g, (_match, name: string) => String(args[name]));
  return `Would call ${tool.method} ${path}: ${tool.summary}.`;
}

export const CONFIRM_HINT = 'Nothing was done. Call this tool again with the same arguments and confirm: true to do it.';

export async function preview(tool: ToolDefinition, args: Args, api: Api): Promise<string> {
  const describe = previews[tool.name] ?? (tool.name.startsWith('integration_disconnect_') ? disconnectPreview : undefined);
  const text = describe ? await describe(args, api, tool) : genericPreview(args, tool);
  return `${text}\n${CONFIRM_HINT}`;
}
