import { type Static, Type } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.ts';

const Email = Type.String({ minLength: 3, maxLength: 254, description: 'an e-mail address' });
export const InvitedRole = Type.Enum(['viewer', 'member'], { description: 'the owner role cannot be given' });

export const TeamMember = Type.Object({
  userId: Id,
  name: Type.String(),
  email: Type.String(),
  role: Type.Enum(['owner', 'member', 'viewer']),
  joinedAt: Timestamp,
});

export const PendingInvitation = Type.Object({
  invitationId: Id,
  email: Type.String(),
  role: Type.String(),
  invitedAt: Timestamp,
});

export const InviteBody = Type.Object(
  { email: Email, role: Type.Optional(InvitedRole) },
  { additionalProperties: false, examples: [{ email: 'teammate@example.com', role: 'viewer' }] },
);
export type InviteInput = Static<typeof InviteBody>;

export const Invited = Type.Object({
  invitationId: Id,
  email: Type.String(),
  role: Type.String(),
  message: Type.String(),
});

export const RemoveBody = Type.Object(
  { userId: Type.Optional(Id), email: Type.Optional(Email) },
  { additionalProperties: false, description: 'exactly one of userId or email', examples: [{ email: 'teammate@example.com' }] },
);
export type RemoveInput = Static<typeof RemoveBody>;

export const Removed = Type.Object({ message: Type.String(), removed: Type.Enum(['member', 'invitation']) });

export const MyInvitation = Type.Object({
  invitationId: Id,
  websiteId: Id,
  domain: Type.String(),
  role: Type.String(),
  invitedAt: Timestamp,
});

export const InvitationParams = Type.Object({ invitationId: Id }, { additionalProperties: false });

export const Accepted = Type.Object({ message: Type.String(), websiteId: Id, role: Type.String() });
