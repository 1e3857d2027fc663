// How a row's visitor is sampled: a hash of the visitor id, in the sorting key of both the events
// and the sessions table, so a read with `SAMPLE k` keeps the same visitors' events and sessions
// (src/modules/stats/clickhouse/sampling-ch.ts). A UInt64, as SAMPLE BY needs an unsigned integer.
export const SAMPLING_KEY = 'cityHash64(visitor_id)';
