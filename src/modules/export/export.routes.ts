import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withErrors } from '../../http/schemas.ts';
import { websiteOf } from '../../http/request-context.ts';
import { Download, RawExportQuery, ReportExportQuery } from './export.schemas.ts';
import { overviewFile, remainingFiles, reportQuery, timeseriesFile } from './report-export.ts';
import { rawExportBody, rawExportHeader } from './raw-export.ts';
import { zipStream } from './zip-stream.ts';

// Export (issue 37 item 2). The reports' zip is a read like the reports (analytics:read, any
// role, the website's df_ key); the raw data is the whole website to leave with: exports:read,
// the owner only, and no df_ key (docs/decisions.md, "Export").

const tags = ['Export'];

/** The route's typed reply knows the documented JSON answers only; a download is sent as a stream. */
function sendStream(reply: { send(payload: never): unknown }, stream: NodeJS.ReadableStream): never {
  return reply.send(stream as never) as never;
}

/** A file name part from the domain: letters, digits, dots and dashes only. */
const safe = (value: string) => value.replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 80);

export const exportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const reports = { db: app.db.reads, store: app.eventStore, publicUrl: app.config.publicUrl, run: <T>(read: () => Promise<T>) => app.analyticsRead(null, read) };

  app.get('/api/v1/analytics/export', {
    config: { access: { scope: 'website', permission: 'analytics:read', action: 'read', apiKey: true, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: 'Every report of a period as CSV files in a zip (overview, time series and each breakdown), under the same filters as the reports',
      querystring: ReportExportQuery,
      response: withErrors({ 200: Download(['application/zip'], 'A zip of CSV files, one per report') }),
    },
    handler: async (request, reply) => {
      const websiteId = websiteOf(request).websiteId;
      const query = reportQuery(request.query);
      const interval = request.query.interval ?? 'day';
      // Read before anything is sent: a bad period, zone or filter is a 400, not a cut download.
      const first = [await overviewFile(reports, websiteId, query), await timeseriesFile(reports, websiteId, query, interval)];
      async function* files() {
        yield* first;
        yield* remainingFiles(reports, websiteId, query, interval, { skipTimeseries: true });
      }
      const name = `sightline-reports-${safe(request.query.startAt)}-${safe(request.query.endAt)}.zip`;
      reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename="${name}"`);
      return sendStream(reply, zipStream(files()));
    },
  });

  app.get('/api/v1/export/raw', {
    config: { access: { scope: 'website', permission: 'exports:read', action: 'exportRaw', apiKey: false, websiteIdIn: 'query' } },
    schema: {
      tags,
      summary: "The website's raw events and payments, with its settings, funnels and profiles, as NDJSON after a versioned header line (owner only)",
      description: 'The format is documented in docs/export-format.md. Streamed in pages; gzip=true compresses it.',
      querystring: RawExportQuery,
      response: withErrors({ 200: Download(['application/x-ndjson', 'application/gzip'], 'NDJSON: a header line, one line per record, an end line with the counts') }),
    },
    handler: async (request, reply) => {
      const websiteId = websiteOf(request).websiteId;
      const deps = { db: app.db.kysely, eventLog: app.eventLog };
      const { header, website } = await rawExportHeader(deps, websiteId);
      async function* lines() {
        yield header;
        yield* rawExportBody(deps, websiteId, website);
      }
      const base = `sightline-${safe(String(website.domain))}-${new Date().toISOString().slice(0, 10)}.ndjson`;
      const body = Readable.from(lines(), { objectMode: false });
      if (request.query.gzip === true) {
        reply.header('content-type', 'application/gzip').header('content-disposition', `attachment; filename="${base}.gz"`);
        return sendStream(reply, body.pipe(createGzip()));
      }
      reply.header('content-type', 'application/x-ndjson; charset=utf-8').header('content-disposition', `attachment; filename="${base}"`);
      return sendStream(reply, body);
    },
  });
};
