// Account API tokens (dft_): created with a name, permissions, websites and an optional expiry;
// the raw token is shown once, then only its masked display key.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { PERMISSIONS } from '../../../../src/auth/permissions.ts';
import { api } from '../../api.ts';
import { ActionButton, Card, CheckboxField, CopyBox, DataTable, ErrorMessage, Loaded, SubmitButton, TextField, fieldErrors, formatDate, formatDateTime, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import type { AccessToken, WebsiteSummary } from '../../types.ts';

/** How the token form names each area of permissions; the permissions come from the server's list. */
const AREA_LABELS: Record<string, string> = {
  analytics: 'Analytics',
  websites: 'Websites',
  settings: 'Settings and integrations',
  'api-keys': 'Tokens and API keys',
  goals: 'Goals',
  funnels: 'Funnels',
  alerts: 'Alerts',
  team: 'Team',
  notes: 'Notes',
  payments: 'Payments',
  identify: 'Visitor identification',
};

/** Every permission a token can hold (src/auth/permissions.ts), grouped by area in the list's order. */
const PERMISSION_GROUPS: Array<{ label: string; permissions: string[] }> = [];
for (const permission of PERMISSIONS) {
  const area = permission.split(':')[0]!;
  const label = AREA_LABELS[area] ?? area;
  const group = PERMISSION_GROUPS.find((candidate) => candidate.label === label);
  if (group) group.permissions.push(permission);
  else PERMISSION_GROUPS.push({ label, permissions: [permission] });
}

function NewTokenForm({
  websites,
  onCreated,
  onCancel,
}: {
  websites: WebsiteSummary[];
  onCreated: (token: AccessToken) => void;
  onCancel: () => void;
}): JSX.Element {
  const [name, setName] = useState('');
  const [fullAccess, setFullAccess] = useState(true);
  const [permissions, setPermissions] = useState<Set<string>>(() => new Set(['analytics:read']));
  const [allWebsites, setAllWebsites] = useState(true);
  const [websiteIds, setWebsiteIds] = useState<Set<string>>(() => new Set());
  const [expires, setExpires] = useState('');
  const { busy, error, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const today = new Date().toISOString().slice(0, 10);

  const toggle = (set: Set<string>, value: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

  const submit = onSubmit(
    async () => {
      const body: Record<string, unknown> = {
        name: name.trim(),
        permissions: fullAccess ? ['*'] : [...permissions],
        websiteIds: allWebsites ? [] : [...websiteIds],
      };
      // The end of the chosen day, in the reader's time zone.
      if (expires) body.expiresAt = new Date(`${expires}T23:59:59.999`).toISOString();
      const created = await api.post<AccessToken>('/api/v1/admin/access-tokens', body);
      onCreated(created);
      setName('');
      setExpires('');
    },
    {
      check: () =>
        !fullAccess && permissions.size === 0
          ? 'Choose at least one permission, or full access.'
          : !allWebsites && websiteIds.size === 0 && 'Choose at least one website, or all websites.',
    },
  );

  return (
    <form onSubmit={submit} class="stack token-form">
      <h3>New token</h3>
      <div class="form-grid">
        <TextField label="Name" value={name} onValue={setName} required maxLength={100} placeholder="Deploy script" error={fields.name} />
        <TextField
          label="Expires (optional)"
          type="date"
          value={expires}
          onValue={setExpires}
          min={today}
          hint="Left empty, the token works until it is revoked."
          error={fields.expiresAt}
        />
      </div>
      <fieldset>
        <legend>Permissions</legend>
        <CheckboxField label="Full access (*): everything your account may do" checked={fullAccess} onChecked={setFullAccess} />
        {!fullAccess && (
          <div class="permission-grid">
            {PERMISSION_GROUPS.map((group) => (
              <fieldset key={group.label} class="permission-group">
                <legend>{group.label}</legend>
                {group.permissions.map((permission) => (
                  <CheckboxField
                    key={permission}
                    label={<code>{permission}</code>}
                    checked={permissions.has(permission)}
                    onChecked={(on) => setPermissions((current) => toggle(current, permission, on))}
                  />
                ))}
              </fieldset>
            ))}
          </div>
        )}
        {fields.permissions && <p class="field-error">{fields.permissions}</p>}
      </fieldset>
      <fieldset>
        <legend>Websites</legend>
        <CheckboxField
          label="All websites, including those added later"
          checked={allWebsites}
          onChecked={setAllWebsites}
        />
        {!allWebsites && (
          <div class="website-picks">
            {websites.length === 0 && <p class="muted">You have no website yet.</p>}
            {websites.map((website) => (
              <CheckboxField
                key={website.id}
                label={website.name && website.name !== website.domain ? `${website.name} (${website.domain})` : website.domain}
                checked={websiteIds.has(website.id)}
                onChecked={(on) => setWebsiteIds((current) => toggle(current, website.id, on))}
              />
            ))}
          </div>
        )}
        {fields.websiteIds && <p class="field-error">{fields.websiteIds}</p>}
      </fieldset>
      <ErrorMessage error={fields.name || fields.expiresAt || fields.permissions || fields.websiteIds ? null : error} />
      <div class="row">
        <SubmitButton busy={busy} busyLabel="Creating…" label="Create token" />
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function TokensCard(): JSX.Element {
  const tokens = useAsync(() => api.list<AccessToken>('/api/v1/admin/access-tokens'), []);
  const websites = useAsync(() => api.list<WebsiteSummary>('/api/v1/admin/websites'), []);
  const [created, setCreated] = useState<AccessToken | null>(null);
  const [adding, setAdding] = useState(false);
  const revocation = useConfirm((token: AccessToken) => ({
    title: `Revoke the token "${token.name}"?`,
    message: 'Anything using it is refused from its next request. This cannot be undone.',
    confirmLabel: 'Revoke token',
    onConfirm: async () => {
      await api.delete(`/api/v1/admin/access-tokens/${token.id}`);
      tokens.reload();
    },
  }));
  const domainOf = new Map((websites.data ?? []).map((website) => [website.id, website.domain]));

  return (
    <Card
      title="API tokens"
      actions={
        !adding && (
          <button type="button" class="button primary small" onClick={() => setAdding(true)}>
            New token
          </button>
        )
      }
    >
      <p class="muted">
        An account token (<code>dft_…</code>) lets a script, the <code>sightline</code> command or an agent act for you, within the
        permissions and websites you give it.
      </p>
      {created?.token && (
        <div class="secret-once" role="status">
          <p>
            <strong>The token "{created.name}":</strong> copy it now, it will not be shown again.
          </p>
          <CopyBox text={created.token} label={`Token ${created.name}`} />
          <button type="button" class="button small" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      {adding && (
        <NewTokenForm
          websites={websites.data ?? []}
          onCreated={(token) => {
            setCreated(token);
            setAdding(false);
            tokens.reload();
          }}
          onCancel={() => setAdding(false)}
        />
      )}
      <Loaded state={tokens} empty={<p>No token yet.</p>}>
        {(list) => (
          <DataTable label="API tokens" columns={['Name', 'Token', 'Permissions', 'Websites', 'Expires', 'Last used']} actions>
            {list.map((token) => (
              <tr key={token.id}>
                <td>{token.name}</td>
                <td>
                  <code>{token.displayKey}</code>
                </td>
                <td class="wrap">{token.permissions.includes('*') ? 'Full access' : token.permissions.join(', ')}</td>
                <td class="wrap">{token.websiteIds.length ? token.websiteIds.map((id) => domainOf.get(id) ?? id).join(', ') : 'All'}</td>
                <td>{token.expiresAt ? formatDate(token.expiresAt) : 'Never'}</td>
                <td>{token.lastUsedAt ? formatDateTime(token.lastUsedAt) : 'Never'}</td>
                <td class="actions">
                  <ActionButton label="Revoke" about={token.name} danger onClick={() => revocation.ask(token)} />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Loaded>
      {revocation.dialog}
    </Card>
  );
}
