import { Type } from 'typebox';
import { WebsiteRef } from '../../http/schemas.ts';
import { FILTER_QUERY_PARAMS } from '../stats/stats.schemas.ts';
import { INTERVALS } from '../stats/timeseries.schemas.ts';

const BOUND = 'a YYYY-MM-DD day in the time zone (the whole day) or an ISO-8601 date-time';

/** The reports' period and filters, as every report route takes them; the period is required. */
export const ReportExportQuery = Type.Object(
  {
    websiteId: Type.Optional(WebsiteRef),
    startAt: Type.String({ minLength: 1, maxLength: 40, description: `first day: ${BOUND}`, examples: ['2026-03-01'] }),
    endAt: Type.String({ minLength: 1, maxLength: 40, description: `last day, included: ${BOUND}`, examples: ['2026-03-31'] }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "an IANA time zone for days; default the website's" })),
    interval: Type.Optional(Type.Enum([...INTERVALS], { default: 'day', description: 'the buckets of timeseries.csv; default day' })),
    ...FILTER_QUERY_PARAMS,
  },
  { additionalProperties: false },
);

export const RawExportQuery = Type.Object(
  {
    websiteId: WebsiteRef,
    gzip: Type.Optional(Type.Boolean({ default: false, description: 'true: the NDJSON gzip-compressed, as a .ndjson.gz file' })),
  },
  { additionalProperties: false },
);

/** A file download: the OpenAPI document says what the 200 holds, Fastify sends the stream as is. */
export function Download(mediaTypes: string[], description: string) {
  return {
    description,
    content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: Type.String({ format: 'binary' }) }])),
  };
}
