import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyBody, Envelope, ErrorEnvelope, WebsiteParams, ok, withErrors } from '../../http/schemas.ts';
import { principalOf, websiteOf } from '../../http/request-context.ts';
import { invalidField } from '../../errors.ts';
import { DEFAULT_UMAMI_HOSTS } from '../../config.ts';
import { CreateImportQuery, CreateUmamiImportBody, ImportDeleted, ImportParams, ImportView, JsonImportBody, SightlineExportBody, UmamiConnectionBody, UmamiWebsiteView, ZipBody } from './imports.schemas.ts';
import { looksLikeSightlineExport } from './sightline-export.ts';
import { createSightlineImport } from './sightline-import.service.ts';
import * as service from './imports.service.ts';
import { createUmamiImport, listSourceWebsites } from './umami-imports.service.ts';

// Imports into a website (issue 37 item 1): Plausible's CSV export (the raw zip, application/zip,
// kept as bytes by this plugin alone) or an Umami database read directly; progress and report,
// deletion. Umami's connection URL carries a password: it is only ever in a request's body.

const tags = ['Imports'];
const read = { scope: 'website', permission: 'settings:read', action: 'read', apiKey: true } as const;
const write = { scope: 'website', permission: 'settings:write', action: 'manage', apiKey: true } as const;
const base = '/websites/:websiteId/imports';
const SIGHTLINE_EXPORT_TYPES = ['application/x-ndjson', 'application/gzip', 'application/x-gzip'];

/** The zip: the raw body, or the JSON body's zipBase64. */
function uploadOf(body: unknown): Buffer {
  if (Buffer.isBuffer(body) && body.length > 0) return body;
  if (body && typeof body === 'object' && typeof (body as { zipBase64?: unknown }).zipBase64 === 'string') {
    const zip = Buffer.from((body as { zipBase64: string }).zipBase64, 'base64');
    if (zip.length > 0) return zip;
    throw invalidField('body.zipBase64', 'must be the zip, base64-encoded');
  }
  throw invalidField('body', "must be the zip file, sent as application/zip, or Sightline's export, sent as application/x-ndjson or application/gzip");
}

export const importsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.db.kysely;
  const bodyLimit = app.config.imports.maxUploadBytes;
  app.addContentTypeParser(
    ['application/zip', 'application/x-zip-compressed', 'application/octet-stream', ...SIGHTLINE_EXPORT_TYPES],
    { parseAs: 'buffer', bodyLimit },
    (_request, body, done) => done(null, body),
  );

  app.post(base, {
    config: { access: write },
    bodyLimit,
    schema: {
      tags,
      summary:
        "Import Plausible's CSV export (the zip of imported_*.csv files) or Sightline's own raw export (NDJSON, or gzip) into the website; answers 202 and reads it in the background",
      description:
        `The body is the zip as Plausible exports it, sent as application/zip (at most ${Math.round(bodyLimit / 1024 / 1024)} MiB here; ` +
        'IMPORT_MAX_UPLOAD_MB). 400 when it is not a zip, holds no imported_*.csv file, or a file\'s header lacks a column the table ' +
        'needs; nothing is stored then. 409 when the same zip was already imported into the website and that import stands. Poll ' +
        'getImport for the progress and the report. Days on which the website has its own events are skipped (see the report). ' +
        "Sightline's own export (GET /api/v1/export/raw, sent as application/x-ndjson or application/gzip) brings its raw events, payments, " +
        'funnels, notes, goal customizations, currency rates and visitor profiles as the website\'s own rows; 400 when its header is not ' +
        'a sightline-export of a version this server reads, or its last line is not the end line, or the counts differ (a cut file). ' +
        'Rows the website already holds are skipped (already_present). The export\'s settings (time zone, currency...) are taken by a website with no data yet.',
      params: WebsiteParams,
      querystring: CreateImportQuery,
      body: {
        content: {
          'application/zip': { schema: ZipBody },
          'application/json': { schema: JsonImportBody },
          'application/x-ndjson': { schema: SightlineExportBody },
          'application/gzip': { schema: SightlineExportBody },
        },
      },
      response: { ...withErrors({ 202: Envelope(ImportView) }), 409: ErrorEnvelope },
    },
    handler: async (request, reply) => {
      const upload = uploadOf(request.body);
      const args = [db, websiteOf(request).websiteId, principalOf(request).accountId ?? null, upload, request.query.label] as const;
      // Sightline's own export (NDJSON or its gzip) by its bytes; a zip is Plausible's.
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const sightline = SIGHTLINE_EXPORT_TYPES.includes(type) || looksLikeSightlineExport(upload);
      const created = sightline ? await createSightlineImport(...args) : await service.createImport(...args);
      app.importJobs?.wake();
      reply.code(202);
      return ok([created]);
    },
  });

  const umamiHosts = app.config.imports.umamiHosts ?? DEFAULT_UMAMI_HOSTS;

  app.post(`${base}/umami/websites`, {
    config: { access: write },
    schema: {
      tags,
      summary: "The websites of an Umami database, to choose the one to import into this website",
      description:
        'Connects to the Umami database (PostgreSQL) at databaseUrl, read-only, and lists its websites with their number of events. ' +
        'A POST because the URL carries a password; nothing is stored. 400 names what is wrong: not a PostgreSQL URL, a host the ' +
        'operator does not allow (IMPORT_UMAMI_HOSTS, default the loopback addresses), the database unreachable or refusing the ' +
        'credential, or not an Umami database.',
      params: WebsiteParams,
      body: UmamiConnectionBody,
      response: withErrors({ 200: Envelope(UmamiWebsiteView) }),
    },
    handler: async (request) => ok(await listSourceWebsites(umamiHosts, request.body.databaseUrl)),
  });

  app.post(`${base}/umami`, {
    config: { access: write },
    schema: {
      tags,
      summary: 'Import an Umami website from its database into this website; answers 202 and reads it in the background',
      description:
        'Reads the Umami website umamiWebsiteId from the Umami database at databaseUrl (PostgreSQL, read-only), aggregated per local ' +
        "day of this website's time zone into the same imported tables as a Plausible export. Checked before anything is stored: " +
        '400 for a bad or disallowed URL, an unreachable or non-Umami database, or an Umami website it lacks or without events. ' +
        '409 when the same Umami website was already imported into this website and that import stands. The URL is kept encrypted ' +
        'until the import ends and never returned. Poll getImport for the progress (days read) and the report.',
      params: WebsiteParams,
      body: CreateUmamiImportBody,
      response: { ...withErrors({ 202: Envelope(ImportView) }), 409: ErrorEnvelope },
    },
    handler: async (request, reply) => {
      const created = await createUmamiImport(db, app.keyring, umamiHosts, websiteOf(request).websiteId, principalOf(request).accountId ?? null, request.body);
      app.importJobs?.wake();
      reply.code(202);
      return ok([created]);
    },
  });

  app.get(base, {
    config: { access: read },
    schema: {
      tags,
      summary: "The website's imports, newest first, each with its progress and report",
      params: WebsiteParams,
      response: withErrors({ 200: Envelope(ImportView) }),
    },
    handler: async (request) => ok(await service.listImports(db, websiteOf(request).websiteId)),
  });

  app.get(`${base}/:importId`, {
    config: { access: read },
    schema: { tags, summary: 'One import: its status, progress and report', params: ImportParams, response: withErrors({ 200: Envelope(ImportView) }) },
    handler: async (request) => ok([await service.getImport(db, websiteOf(request).websiteId, request.params.importId)]),
  });

  app.delete(`${base}/:importId`, {
    config: { access: write },
    schema: {
      tags,
      summary: 'Delete an import: its data leaves every read at once, and its rows are removed in the background',
      description:
        "An import of a Sightline export: its rows (events, payments, funnels, notes...) are deleted in the background and the website's " +
        'derived data built again meanwhile (the reads answer from the raw events until then); with ClickHouse its events are deleted there with the rollups and sessions of their days.',
      params: ImportParams,
      body: EmptyBody,
      response: withErrors({ 200: Envelope(ImportDeleted) }),
    },
    handler: async (request) => {
      const deleted = await service.deleteImport(db, websiteOf(request).websiteId, request.params.importId);
      app.importJobs?.wake();
      return ok([deleted]);
    },
  });
};
