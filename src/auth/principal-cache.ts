import { LRUCache } from 'lru-cache';
import type { OtherWriters } from '../db/database.ts';
import type { WriteWatch } from '../db/write-watch.ts';

// What authentication read for a credential digest (its row, and the account's role on each
// website asked about), kept so the next request with the same credential reads nothing.
//
// Every entry carries the generation of the credential tables it was read under: the count of
// writes to them (src/db/write-watch.ts), which this process's own writes move before and after
// they run and when they commit, and which other writers move through OtherWriters (another
// process on the SQLite file, another instance on PostgreSQL by notification). An entry is
// used only while the generation has not moved, so a revocation, a key roll, a role change or a
// removed member is refused on the very next request here, and on another instance as soon as
// its notification arrives. While the notifications cannot be trusted (their connection is
// down), nothing is cached or used. The TTL is a backstop, not the mechanism.

const MAX_CREDENTIALS = 10_000;
/** Roles kept per credential: a token used across more websites than this reads the rest. */
const MAX_ROLES_PER_CREDENTIAL = 1_000;
const ENTRY_TTL_MS = 5 * 60_000;

export interface CachedCredential<Row> {
  /** The generation it was read under; null: read while nothing could be cached (never kept). */
  readonly generation: number | null;
  readonly row: Row;
  /** The account's role per website id (null: not a member). */
  readonly roles: Map<string, string | null>;
}

export class PrincipalCache {
  private readonly entries = new LRUCache<string, CachedCredential<object>>({ max: MAX_CREDENTIALS, ttl: ENTRY_TTL_MS });
  private readonly websiteIds = new LRUCache<string, { websiteId: string; generation: number }>({ max: MAX_CREDENTIALS, ttl: ENTRY_TTL_MS });

  constructor(
    private readonly writes: WriteWatch,
    private readonly others: OtherWriters,
  ) {}

  /** The generation a read starts under; null when nothing may be cached or used now. */
  generation(): number | null {
    return this.others.upToDate() ? this.writes.version : null;
  }

  /** The credential's entry, when it was read under `generation` and nothing changed since. */
  find<Row extends object>(digest: string, generation: number | null): CachedCredential<Row> | undefined {
    if (generation === null) return undefined;
    const entry = this.entries.get(digest);
    if (!entry) return undefined;
    if (entry.generation !== generation) {
      this.entries.delete(digest);
      return undefined;
    }
    return entry as CachedCredential<Row>;
  }

  /** Keeps what was read, unless a write may have overlapped the read. */
  remember(digest: string, entry: CachedCredential<object>): void {
    if (entry.generation !== null && this.writes.version === entry.generation) this.entries.set(digest, entry);
  }

  /** Keeps a role read after the entry was, if nothing changed since the entry was read. */
  rememberRole(entry: CachedCredential<object>, websiteId: string, role: string | null): void {
    if (this.writes.version !== entry.generation || entry.roles.size >= MAX_ROLES_PER_CREDENTIAL) return;
    entry.roles.set(websiteId, role);
  }

  /**
   * The website id of a trackingId (`?websiteId=dfid_...`), when it was read under `generation`.
   * A trackingId is set once and never reused; deleting a website moves the generation (a
   * watched write), so a deleted website's id is not given out. Only found ids are kept.
   */
  websiteIdOf(trackingId: string, generation: number | null): string | undefined {
    if (generation === null) return undefined;
    const entry = this.websiteIds.get(trackingId);
    return entry?.generation === generation ? entry.websiteId : undefined;
  }

  rememberWebsiteId(trackingId: string, websiteId: string, generation: number | null): void {
    if (generation !== null && this.writes.version === generation) this.websiteIds.set(trackingId, { websiteId, generation });
  }

  close(): Promise<void> {
    this.entries.clear();
    this.websiteIds.clear();
    return this.others.close();
  }
}
