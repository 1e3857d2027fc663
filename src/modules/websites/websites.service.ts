import type { Insertable, Kysely } from 'kysely';
import type { AccountPrincipal, WebsiteAccess } from '../../auth/principal.ts';
import type { Database, WebsitesTable } from '../../db/schema.ts';
import { lockAccount } from '../../db/locks.ts';
import { conflict, forbidden, invalidField, notFound } from '../../errors.ts';
import { randomBase62 } from '../../lib/base62.ts';
import { normaliseHostname, normaliseTimezone } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import { startRelocation } from '../analytics/day-relocation.ts';
import { hasTrackedGoal } from '../goals/tracked-goals.repository.ts';
import { presentWebsite, presentWebsiteSummary } from './websites.presenter.ts';
import * as repo from './websites.repository.ts';
import type { CreateWebsiteInput, UpdateWebsiteInput, WebsiteView } from './websites.schemas.ts';
import { DOMAIN_RULE, TIMEZONE_RULE, requireValue, settingsChanges } from './website-settings.ts';

export async function listWebsites(db: Kysely<Database>, principal: AccountPrincipal) {
  const rows = await repo.listWebsitesForAccount(db, principal.accountId, principal.websiteIds);
  return rows.map((row) => presentWebsiteSummary(row, row.role));
}

export async function createWebsite(db: Kysely<Database>, principal: AccountPrincipal, input: CreateWebsiteInput): Promise<WebsiteView> {
  const domain = requireValue('body.domain', input.domain, normaliseHostname, DOMAIN_RULE);
  const timezone = requireValue('body.timezone', input.timezone, normaliseTimezone, TIMEZONE_RULE);
  const now = new Date().toISOString();
  const row: repo.WebsiteRow & Insertable<WebsitesTable> = {
    id: newId(),
    domain,
    name: input.name ?? domain,
    tracking_id: `dfid_${randomBase62(21)}`,
    timezone,
    currency: 'USD',
    kpi: null,
    kpi_color_scheme: null,
    revenue_metric: 'revenue',
    is_cookieless: false,
    include_renewal_revenue: true,
    allowed_hostnames: '[]',
    excluded_ips: '[]',
    excluded_paths: '[]',
    excluded_countries: '[]',
    excluded_hostnames: '[]',
    send_weekly_reports: false,
    send_viral_traffic_alerts: false,
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (trx) => {
    await lockAccount(trx, principal.accountId);
    if (await repo.ownerHasDomain(trx, principal.accountId, domain)) {
      throw conflict(`You already have a website with the domain ${domain}`);
    }
    await repo.insertWebsite(trx, row, principal.accountId);
  });
  return presentWebsite(row, 'owner');
}

export async function getWebsite(db: Kysely<Database>, access: WebsiteAccess): Promise<WebsiteView> {
  const row = await repo.findWebsite(db, access.websiteId);
  if (!row) throw notFound('Website not found');
  return presentWebsite(row, access.role);
}

export async function updateWebsite(db: Kysely<Database>, access: WebsiteAccess, input: UpdateWebsiteInput): Promise<WebsiteView> {
  const changes = settingsChanges(input);
  // `kpi` names a goal the website has tracked (null clears it); goals are never untracked.
  if (typeof changes.kpi === 'string' && !(await hasTrackedGoal(db, access.websiteId, changes.kpi))) {
    throw invalidField('body.kpi', `must be a goal this website has tracked; "${changes.kpi}" has no completion yet (GET /websites/{websiteId}/goals lists them)`);
  }
  return db.transaction().execute(async (trx) => {
    if (changes.domain !== undefined) {
      const ownerId = await repo.findOwnerId(trx, access.websiteId);
      await lockAccount(trx, ownerId);
      if (await repo.ownerHasDomain(trx, ownerId, changes.domain as string, access.websiteId)) {
        throw conflict(`The owner already has a website with the domain ${String(changes.domain)}`);
      }
    }
    // The day rollups move to the new zone in the background (day-relocation.ts); reads use the raw events meanwhile.
    if (changes.timezone !== undefined) await startRelocation(trx, access.websiteId, changes.timezone as string);
    await repo.updateWebsite(trx, access.websiteId, { ...changes, updated_at: new Date().toISOString() });
    const row = await repo.findWebsite(trx, access.websiteId);
    if (!row) throw notFound('Website not found');
    return presentWebsite(row, access.role);
  });
}

export function refuseWebsiteDeletion(): never {
  throw forbidden('Websites can only be deleted in the dashboard; nothing was changed');
}
