import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, request } from '../../api.ts';
import { ActionButton, Card, DataTable, ErrorMessage, Loaded, Notice, SelectField, SubmitButton, TextField, fieldErrors, formatDate, useAsync, useConfirm, useSubmit } from '../../components/index.ts';
import { useSession } from '../../session.tsx';
import { canManageTeam } from '../../types.ts';
import type { SectionProps } from './section-props.ts';

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
  const { busy, error, notice, onSubmit } = useSubmit();
  const fields = fieldErrors(error);
  const removal = useConfirm((removing: Removal) => ({
    title: removing.kind === 'member' ? `Remove ${removing.member.email}?` : 'Cancel this invitation?',
    message:
      removing.kind === 'member'
        ? 'They lose access to this website at once, with every token they have.'
        : `The link sent to ${removing.invitation.email} will no longer work.`,
    confirmLabel: removing.kind === 'member' ? 'Remove' : 'Cancel invitation',
    onConfirm: async () => {
      await api.delete(base, removing.kind === 'member' ? { userId: removing.member.userId } : { email: removing.invitation.email });
      team.reload();
    },
  }));

  const invite = onSubmit(async () => {
    const answer = await api.post<{ email: string; message?: string }>(base, { email: email.trim(), role });
    setEmail('');
    team.reload();
    return answer?.message ?? `Invitation sent to ${answer?.email ?? email}.`;
  });

  return (
    <>
      <Card title="Team">
        <Loaded state={team}>
          {({ members }) => (
            <DataTable label="Team members" columns={['Name', 'Email', 'Role', 'Joined']} actions={manage}>
              {members.map((member) => (
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
                        <ActionButton label="Remove" about={member.email} danger onClick={() => removal.ask({ kind: 'member', member })} />
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </DataTable>
          )}
        </Loaded>
      </Card>
      {team.data && (manage || team.data.invitations.length > 0) && (
        <Card title="Pending invitations">
          {team.data.invitations.length === 0 ? (
            <p>No pending invitation.</p>
          ) : (
            <DataTable label="Pending invitations" columns={['Email', 'Role', 'Invited']} actions={manage}>
              {team.data.invitations.map((invitation) => (
                <tr key={invitation.invitationId}>
                  <td>{invitation.email}</td>
                  <td>
                    <span class="badge">{invitation.role}</span>
                  </td>
                  <td>{formatDate(invitation.invitedAt)}</td>
                  {manage && (
                    <td class="actions">
                      <ActionButton
                        label="Cancel invitation"
                        about={`for ${invitation.email}`}
                        danger
                        onClick={() => removal.ask({ kind: 'invitation', invitation })}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </DataTable>
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
              <SubmitButton busy={busy} busyLabel="Inviting…" label="Invite" />
            </form>
          )}
          {manage && <p class="hint">{ROLE_HINT}</p>}
          <ErrorMessage error={Object.keys(fields).length ? null : error} />
          <Notice>{notice}</Notice>
        </Card>
      )}
      {removal.dialog}
    </>
  );
}
