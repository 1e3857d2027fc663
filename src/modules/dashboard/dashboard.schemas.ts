import { Type } from 'typebox';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/passwords.ts';
import { Id, Timestamp } from '../../http/schemas.ts';
import { InvitedRole } from '../team/team.schemas.ts';

export const Email = Type.String({ minLength: 3, maxLength: 254, description: 'an e-mail address', examples: ['ada@example.com'] });
export const Password = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`,
  examples: ['correct horse battery staple'],
});
/** What a sign-in checks: any length, so a wrong password is a 401, not a hint about the rules. */
const PasswordAttempt = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, examples: ['correct horse battery staple'] });
const Name = Type.String({ minLength: 1, maxLength: 100, examples: ['Ada Lovelace'] });

export const SessionAccount = Type.Object({ id: Id, email: Type.String(), name: Type.String() });

export const SessionInfo = Type.Object({
  account: SessionAccount,
  sessionId: Id,
  csrfToken: Type.String({ description: 'send it as X-CSRF-Token on every signed-in write' }),
  signedInAt: Timestamp,
  expiresAt: Timestamp,
});

export const SetupState = Type.Object({
  setupRequired: Type.Boolean({ description: 'no account exists yet: the first-run setup page creates one' }),
  signUpOpen: Type.Boolean({ description: 'SIGNUP=open: anyone may create an account' }),
});

export const NewAccountBody = Type.Object({ email: Email, name: Name, password: Password }, { additionalProperties: false });
export const SignInBody = Type.Object({ email: Email, password: PasswordAttempt }, { additionalProperties: false });
export const PasswordBody = Type.Object({ password: PasswordAttempt }, { additionalProperties: false });
export const ChangePasswordBody = Type.Object(
  { currentPassword: PasswordAttempt, newPassword: Password },
  { additionalProperties: false },
);

export const DashboardSession = Type.Object({
  id: Id,
  current: Type.Boolean(),
  userAgent: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  signedInAt: Timestamp,
  lastSeenAt: Timestamp,
  expiresAt: Timestamp,
});

export const SessionParams = Type.Object({ sessionId: Id }, { additionalProperties: false });

/** A token as generateLinkToken makes it (the examples of the OpenAPI document use this one). */
export const LINK_TOKEN_EXAMPLE = '6WsIRBC5vhEh6LgHgN050biqKAxcT2aQ1fjv97dDV85';
const LinkToken = Type.String({
  pattern: '^[0-9A-Za-z]{43}$',
  description: 'the one-time token of a mailed link: what follows the # of /reset-password#... or /invite#...',
  examples: [LINK_TOKEN_EXAMPLE],
});

export const PasswordResetBody = Type.Object({ email: Email }, { additionalProperties: false });
export const ConfirmPasswordResetBody = Type.Object({ token: LinkToken, password: Password }, { additionalProperties: false });

export const InvitationLinkParams = Type.Object({ token: LinkToken }, { additionalProperties: false });
export const InvitationLink = Type.Object({
  email: Type.String({ description: 'the invited address' }),
  websiteDomain: Type.String(),
  role: InvitedRole,
  accountExists: Type.Boolean({
    description: "an account has the invited address: accepting asks for its password; otherwise for a name and the new account's password",
  }),
});
export const AcceptInvitationLinkBody = Type.Object(
  {
    token: LinkToken,
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'the name of the new account; needed only when no account has the invited address', examples: ['Ada Lovelace'] }),
    ),
    password: Type.String({
      minLength: 1,
      maxLength: PASSWORD_MAX_LENGTH,
      description: `the password of the account with the invited address; without one, the new account's password (${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters)`,
      examples: ['correct horse battery staple'],
    }),
  },
  { additionalProperties: false },
);

export const DeleteWebsiteBody = Type.Object(
  { confirmDomain: Type.String({ minLength: 1, maxLength: 253, description: "the website's domain, typed again", examples: ['www.example.com'] }) },
  { additionalProperties: false },
);
