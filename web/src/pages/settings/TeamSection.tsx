import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import { Card, ConfirmDialog, ErrorMessage, Loading, Notice, SelectField, TextField, fieldErrors, formatDate, TableWrap, useAsync } from '../../components/index.ts';
import { useSession } from '../../session.tsx';
import { canManageTeam } from '../../types.ts';
import type { SectionProps } from './SettingsPage.tsx';

interface Member {
  userId: string;
  name: string;
  email: string;
  role: 'owner' | 'member' | 'viewer';
  joinedAt: string;
}

interface Invitation {
  invitationId: string;
  email: string;
  role: string;
  invitedAt: string;
}

type Removal = { kind: 'member'; member: Member } | { kind: 'invitation'; invitation: Invitation };

const ROLE_HINT = 'A viewer reads the reports and settings; a member can also change settings, keys, goals, funnels and alerts.';

export function TeamSection({ website }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/team`;
  const { session } = useSession();
  const manage = canManageTeam(website.role);
  const team = useAsync(async () => {
    const answer = await request<Member>('GET', base);
    return { members: answer.data, invitations: (answer.invitations as Invitation[] | undefined) ?? [] };
  }, [base]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Removal | null>(null);
  const fields = fieldErrors(error);

  async function invite(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      const answer = await api.post<{ email: string; message?: string }>(base, { email: email.trim(), role });
      setSent(answer?.message ?? `Invitation sent to ${answer?.email ?? email}.`);
      setEmail('');
      team.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    if (!removing) return;
    await api.delete(base, removing.kind === 'member' ? { userId: removing.member.userId } : { email: removing.invitation.email });
    team.reload();
  }

  return (
    <>
      <Card title="Team">
        <ErrorMessage error={team.error} onRetry={team.reload} />
        {!team.data && !team.error && <Loading />}
        {team.data && (
          <TableWrap label="Team members">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  {manage && <th scope="col"><span class="visually-hidden">Actions</span></th>}
                </tr>
              </thead>
              <tbody>
                {team.data.members.map((member) => (
                  <tr key={member.userId}>
                    <td>
                      {member.name}
                      {member.email === session?.account.email && <span class="muted"> (you)</span>}
                    </td>
                    <td>{member.email}</td>
                    <td>
                      <span class="badge">{member.role}</span>
                    </td>
                    <td>{formatDate(member.joinedAt)}</td>
                    {manage && (
                      <td class="actions">
                        {member.role !== 'owner' && (
                          <button type="button" class="button small danger-text" onClick={() => setRemoving({ kind: 'member', member })}>
                            Remove<span class="visually-hidden"> {member.email}</span>
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Card>
      {team.data && (manage || team.data.invitations.length > 0) && (
        <Card title="Pending invitations">
          {team.data.invitations.length === 0 ? (
            <p>No pending invitation.</p>
          ) : (
            <TableWrap label="Pending invitations">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Invited</th>
                    {manage && <th scope="col"><span class="visually-hidden">Actions</span></th>}
                  </tr>
                </thead>
                <tbody>
                  {team.data.invitations.map((invitation) => (
                    <tr key={invitation.invitationId}>
                      <td>{invitation.email}</td>
                      <td>
                        <span class="badge">{invitation.role}</span>
                      </td>
                      <td>{formatDate(invitation.invitedAt)}</td>
                      {manage && (
                        <td class="actions">
                          <button type="button" class="button small danger-text" onClick={() => setRemoving({ kind: 'invitation', invitation })}>
                            Cancel invitation<span class="visually-hidden"> for {invitation.email}</span>
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          {manage && <h3 class="subheading">Invite someone</h3>}
          {manage && (
            <form onSubmit={invite} class="inline-form">
              <TextField label="Email" type="email" value={email} onValue={setEmail} required maxLength={254} autocomplete="off" error={fields.email} />
              <SelectField
                fieldClass="narrow"
                label="Role"
                value={role}
                onValue={setRole}
                options={[
                  ['viewer', 'Viewer'],
                  ['member', 'Member'],
                ]}
                error={fields.role}
              />
              <button type="submit" class="button primary" disabled={busy}>
                {busy ? 'Inviting…' : 'Invite'}
              </button>
            </form>
          )}
          {manage && <p class="hint">{ROLE_HINT}</p>}
          <ErrorMessage error={Object.keys(fields).length ? null : error} />
          <Notice>{sent}</Notice>
        </Card>
      )}
      <ConfirmDialog
        open={removing !== null}
        title={removing?.kind === 'member' ? `Remove ${removing.member.email}?` : 'Cancel this invitation?'}
        message={
          removing?.kind === 'member'
            ? 'They lose access to this website at once, with every token they have.'
            : `The link sent to ${removing?.kind === 'invitation' ? removing.invitation.email : ''} will no longer work.`
        }
        confirmLabel={removing?.kind === 'member' ? 'Remove' : 'Cancel invitation'}
        danger
        onConfirm={remove}
        onClose={() => setRemoving(null)}
      />
    </>
  );
}
