import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Keyring } from '../../crypto/keyring.ts';
import type { Database } from '../../db/schema.ts';
import { conflict, invalidField, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { emptySourceReport } from './import-report.ts';
import { presentImport } from './imports.presenter.ts';
import * as repo from './imports.repository.ts';
import type { ImportViewType } from './imports.schemas.ts';
import { AGGREGATE_TABLES } from './umami-aggregates.ts';
import { sealUmamiSource } from './umami-connection.ts';
import type { UmamiCursor } from './umami-job.ts';
import { type UmamiWebsite, describeTarget, listUmamiWebsites, openCheckedSource, parseUmamiUrl, readOnly } from './umami-source.ts';

// Imports read from an Umami database: the URL is checked (an allowed host, a reachable Umami
// database, the chosen website in it, with events) before anything is stored, then the import,
// its sealed connection and its job (the days to read as its cursor) are stored in one
// transaction; the job reads Umami in the background (umami-job.ts). The same Umami website
// imported again into the same website while its earlier import stands is refused (409).

/** Umami's websites at the URL, to map one to the Sightline website. */
export async function listSourceWebsites(allowedHosts: readonly string[], databaseUrl: string): Promise<UmamiWebsite[]> {
  const connection = await openCheckedSource(parseUmamiUrl(databaseUrl, allowedHosts));
  try {
    return await readOnly(connection, (client) => listUmamiWebsites(client));
  } catch (error) {
    throw invalidField('body.databaseUrl', (error as Error).message);
  } finally {
    await connection.close();
  }
}

export interface CreateUmamiImport {
  databaseUrl: string;
  umamiWebsiteId: string;
  label?: string;
}

const localDay = (iso: string, zone: string) => DateTime.fromISO(iso, { zone: 'utc' }).setZone(zone).toISODate()!;

/** What makes two imports the same: the Umami website (a UUID, the same in every copy of its database). */
const digestOf = (umamiWebsiteId: string) => createHash('sha256').update(`umami-website:${umamiWebsiteId.toLowerCase()}`).digest('hex');

export async function createUmamiImport(
  db: Kysely<Database>,
  keyring: Keyring,
  allowedHosts: readonly string[],
  websiteId: string,
  accountId: string | null,
  input: CreateUmamiImport,
): Promise<ImportViewType> {
  const target = parseUmamiUrl(input.databaseUrl, allowedHosts);
  const website = await db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst();
  if (!website) throw notFound('Website not found');
  const connection = await openCheckedSource(target);
  let found: UmamiWebsite | undefined;
  try {
    found = (await readOnly(connection, (client) => listUmamiWebsites(client, input.umamiWebsiteId)))[0];
  } catch (error) {
    throw invalidField('body.databaseUrl', (error as Error).message);
  } finally {
    await connection.close();
  }
  if (!found) throw invalidField('body.umamiWebsiteId', `is not a website of the Umami database at ${describeTarget(target)}`);
  if (found.events === 0 || !found.firstEventAt || !found.lastEventAt) throw invalidField('body.umamiWebsiteId', `(${found.name}) has no page views nor events to import`);

  const cursor: UmamiCursor = { next: localDay(found.firstEventAt, website.timezone), last: localDay(found.lastEventAt, website.timezone), zone: website.timezone };
  const daysTotal = Math.round(DateTime.fromISO(cursor.last).diff(DateTime.fromISO(cursor.next), 'days').days) + 1;
  const digest = digestOf(found.id);
  const at = new Date().toISOString();
  const id = newId();
  const job = { ...repo.newImportJob(websiteId, repo.IMPORT_JOB, at), cursor: JSON.stringify(cursor) };
  const report = emptySourceReport(AGGREGATE_TABLES, { kind: 'umami', database: describeTarget(target), websiteId: found.id, websiteName: found.name, eventsRead: 0 });
  await db.transaction().execute(async (trx) => {
    const earlier = await repo.findStandingByDigest(trx, websiteId, digest);
    if (earlier) throw conflict(`This Umami website was already imported into the website (import ${earlier.id}); delete that import to import it again`);
    await trx
      .insertInto('imports')
      .values({
        id,
        website_id: websiteId,
        source: repo.UMAMI_SOURCE,
        label: input.label?.trim() ?? '',
        content_digest: digest,
        upload_bytes: 0,
        status: 'queued',
        job_id: job.id,
        first_day: null,
        last_day: null,
        files_total: AGGREGATE_TABLES.length,
        files_done: 0,
        days_total: daysTotal,
        days_done: 0,
        rows_read: 0,
        rows_kept: 0,
        rows_skipped: 0,
        report: JSON.stringify(report),
        error: null,
        created_by: accountId,
        created_at: at,
        updated_at: at,
        finished_at: null,
      })
      .execute();
    await trx.insertInto('import_connections').values(sealUmamiSource(keyring, id, websiteId, { databaseUrl: input.databaseUrl, umamiWebsiteId: found.id })).execute();
    await trx.insertInto('integration_jobs').values(job).execute();
  });
  return presentImport((await repo.findImport(db, websiteId, id))!);
}
