import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { LivePayment, VisitorPerson } from '../event-store.ts';
import { num } from './scope-sql.ts';
import { iso } from './visitor-rows.ts';

// What the relational engine knows of visitors whatever engine holds their events (payments
// and identify profiles stay there beside ClickHouse too): who paid and under which name and
// email, who identified, and the latest payments.

/** The people behind `visitorIds`: what they paid under (their latest payment) and their profile; none for an anonymous visitor. */
export async function visitorPeople(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, VisitorPerson>> {
  const people = new Map<string, VisitorPerson>();
  if (visitorIds.length === 0) return people;
  const [paid, profiles] = await Promise.all([
    db
      .selectFrom('payments')
      .select(['visitor_id', 'customer_name', 'email'])
      .where('website_id', '=', websiteId)
      .where('visitor_id', 'in', visitorIds)
      .orderBy('occurred_at', 'desc')
      .execute(),
    db.selectFrom('visitor_profiles').select(['visitor_id', 'user_id', 'name']).where('website_id', '=', websiteId).where('visitor_id', 'in', visitorIds).execute(),
  ]);
  const personOf = (visitorId: string): VisitorPerson => people.get(visitorId) ?? people.set(visitorId, {}).get(visitorId)!;
  for (const row of profiles) personOf(row.visitor_id).profile = { userId: row.user_id, name: row.name };
  for (const row of paid) {
    const person = personOf(row.visitor_id!);
    person.customer ??= { name: row.customer_name ?? person.profile?.name ?? null, email: row.email };
  }
  return people;
}

/** The website's payments at or after `since`, newest first. */
export async function recentPayments(db: Kysely<Database>, websiteId: string, since: string, limit: number): Promise<LivePayment[]> {
  const rows = await db
    .selectFrom('payments')
    .select(['id', 'occurred_at', 'amount_minor', 'currency', 'customer_name', 'email', 'renewal', 'visitor_id'])
    .where('website_id', '=', websiteId)
    .where('occurred_at', '>=', since)
    .orderBy('occurred_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    occurredAt: iso(row.occurred_at),
    amountMinor: num(row.amount_minor),
    currency: row.currency,
    customerName: row.customer_name,
    email: row.email,
    renewal: Boolean(row.renewal),
    visitorId: row.visitor_id,
  }));
}
