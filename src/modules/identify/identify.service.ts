import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { EventLog } from '../events/event-log.ts';
import type { Database } from '../../db/schema.ts';
import { invalidField, notFound } from '../../errors.ts';
import { safeFieldName } from '../../http/validation.ts';
import { presentIdentified } from './identify.presenter.ts';
import * as repo from './identify.repository.ts';
import { type IdentifiedView, type IdentityInput, PROFILE_METADATA_KEY, PROFILE_METADATA_MAX_KEYS } from './identify.schemas.ts';

// A visitor's profile, from the website's backend (POST /api/v1/identify) or from the browser
// (an `identify` event of POST /api/events): one path for both. The visitor must have been seen on
// the website (any event), as for server-side goals; the profile then shows on GET
// /api/v1/visitors/{id}.

const NAMED = new Set(['user_id', 'name', 'image']);

/** What an identify says about the visitor, checked. */
export interface Identity {
  userId: string;
  name: string | null;
  image: string | null;
  metadata: Record<string, string> | null;
}

/**
 * The profile's id: 24 hex characters derived from the website and the visitor, so it is the
 * same for every identify of that visitor (the profile is keyed by them and stores no id).
 */
export function profileIdOf(websiteId: string, visitorId: string): string {
  return createHash('sha256').update(`${websiteId}\u0000${visitorId}`).digest('hex').slice(0, 24);
}

/** The fields beyond the named ones, checked; null when there are none. */
function metadataOf(input: IdentityInput, field: string): Record<string, string> | null {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(input)) {
    if (NAMED.has(key)) continue;
    if (!PROFILE_METADATA_KEY.test(key)) {
      throw invalidField(`${field}.${safeFieldName(key)}`, 'extra profile fields need names of 1-64 characters of a-z, 0-9, _ and -');
    }
    metadata[key] = value as string;
  }
  const count = Object.keys(metadata).length;
  if (count > PROFILE_METADATA_MAX_KEYS) {
    throw invalidField(field, `holds ${count} extra profile fields; at most ${PROFILE_METADATA_MAX_KEYS} are kept as metadata`);
  }
  return count === 0 ? null : metadata;
}

/**
 * The identity in `input` (already valid against IdentityBody), or a 400 naming the field under
 * `field` (where the request carried it: `body`, or `body.extraData` for an event). An empty name
 * or image is none: the SDK sends "" for those it was not given.
 */
export function readIdentity(input: IdentityInput, field: string): Identity {
  return { userId: input.user_id, name: input.name || null, image: input.image || null, metadata: metadataOf(input, field) };
}

/** Creates or replaces the visitor's profile; 404 when the visitor has no event on the website. */
export async function identifyVisitor(db: Kysely<Database>, events: EventLog, websiteId: string, visitorId: string, identity: Identity): Promise<IdentifiedView> {
  if (!(await events.visitorHasEvent(websiteId, visitorId))) {
    throw notFound('Visitor not found: this visitor has no event on this website');
  }
  await repo.upsertProfile(db, {
    website_id: websiteId,
    visitor_id: visitorId,
    user_id: identity.userId,
    name: identity.name,
    image: identity.image,
    metadata: identity.metadata,
    identified_at: new Date().toISOString(),
  });
  return presentIdentified(profileIdOf(websiteId, visitorId));
}
