import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

// Cookieless visitors: the server derives the visitor id from a salted hash of the client
// address and user agent. The salt is random, one per UTC day, and deleted once its day is over
// (yesterday's is kept a day for requests straddling midnight), so an id cannot be linked to the
// address or to the same visitor on another day. The raw address is used for the hash only and
// never stored.

const DAY_MS = 24 * 60 * 60 * 1000;
const utcDay = (time: number) => new Date(time).toISOString().slice(0, 10);

export class DailySalts {
  private cached: { day: string; salt: string } | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Today's salt, created on first use; every server sharing the database reads the same one. */
  async current(): Promise<string> {
    const now = this.now();
    const day = utcDay(now);
    if (this.cached?.day === day) return this.cached.salt;
    await this.db
      .insertInto('daily_salts')
      .values({ day, salt: randomBytes(32).toString('hex') })
      .onConflict((oc) => oc.column('day').doNothing())
      .execute();
    const row = await this.db.selectFrom('daily_salts').select('salt').where('day', '=', day).executeTakeFirstOrThrow();
    await this.db.deleteFrom('daily_salts').where('day', '<', utcDay(now - DAY_MS)).execute();
    this.cached = { day, salt: row.salt };
    return row.salt;
  }
}

/**
 * hash(salt, website, address, user agent), shaped like the UUIDs the SDK makes, so clients that
 * check the SDK's visitor-id format accept it.
 */
export function cookielessVisitorId(salt: string, websiteId: string, address: string, userAgent: string): string {
  const hex = createHash('sha256').update([salt, websiteId, address, userAgent].join('\n')).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
