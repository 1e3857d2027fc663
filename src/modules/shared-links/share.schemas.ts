import { Type } from 'typebox';
import { PASSWORD_MAX_LENGTH } from '../../auth/passwords.ts';
import { SLUG_PATTERN } from './shared-links.schemas.ts';

// The public side of a shared dashboard: the slug in the path is the credential. A slug of the
// wrong form answers 404 like an unknown one (see share-access.ts), so the pattern here is loose.

export const SlugParams = Type.Object(
  { slug: Type.String({ minLength: 1, maxLength: 64, description: `the link's secret (${SLUG_PATTERN})` }) },
  { additionalProperties: false },
);

export const SlugFunnelParams = Type.Object(
  { slug: SlugParams.properties.slug, funnelId: Type.String({ pattern: '^[0-9a-f]{24}$' }) },
  { additionalProperties: false },
);

export const ShareState = Type.Object({
  linkName: Type.String(),
  passwordRequired: Type.Boolean({ description: 'whether the link has a password' }),
  unlocked: Type.Boolean({ description: 'whether this browser may read the dashboard now' }),
});

export const UnlockBody = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }) },
  { additionalProperties: false, examples: [{ password: 'correct horse battery' }] },
);

export const Unlocked = Type.Object({ unlocked: Type.Literal(true) });
