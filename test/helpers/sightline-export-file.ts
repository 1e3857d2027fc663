// Hand-made files in the format of Sightline's raw export (docs/export-format.md), for the
// import's tests: a header, records, and an end line counting them (or a wrong or missing one).

export interface ExportRecord {
  type: string;
  data: Record<string, unknown>;
}

const COUNTED = ['website', 'funnel', 'goalCustomization', 'currencyRate', 'note', 'visitorProfile', 'event', 'payment'];

export function pageviewRecord(id: string, visitorId: string, occurredAt: string, extra: Record<string, unknown> = {}): ExportRecord {
  return {
    type: 'event',
    data: {
      id,
      website_id: 'exported-site',
      type: 'pageview',
      name: null,
      visitor_id: visitorId,
      session_id: `${visitorId}-s`,
      hostname: 'moved.example.com',
      path: '/',
      referrer: null,
      country: 'DE',
      browser: 'Firefox',
      os: 'Linux',
      device: 'desktop',
      metadata: null,
      source: 'browser',
      occurred_at: occurredAt,
      region: null,
      city: null,
      browser_version: null,
      os_version: null,
      viewport_width: null,
      viewport_height: null,
      referrer_host: null,
      referrer_source: 'Direct/None',
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
      utm_term: null,
      utm_content: null,
      ref_param: null,
      source_param: null,
      via_param: null,
      link_url: null,
      description: null,
      ...extra,
    },
  };
}

export const websiteRecord = (settings: Record<string, unknown> = {}): ExportRecord => ({
  type: 'website',
  data: {
    id: 'exported-site',
    domain: 'moved.example.com',
    name: 'Moved',
    tracking_id: 'trk',
    timezone: 'Asia/Tokyo',
    currency: 'JPY',
    kpi: null,
    kpi_color_scheme: null,
    revenue_metric: 'revenue',
    is_cookieless: false,
    include_renewal_revenue: false,
    allowed_hostnames: '[]',
    excluded_ips: '[]',
    excluded_paths: '[]',
    excluded_countries: '[]',
    excluded_hostnames: '[]',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...settings,
  },
});

export function paymentRecord(id: string, transactionId: string, visitorId: string, amountMinor: number, occurredAt: string, extra: Record<string, unknown> = {}): ExportRecord {
  return {
    type: 'payment',
    data: {
      id,
      website_id: 'exported-site',
      transaction_id: transactionId,
      amount_minor: amountMinor,
      currency: 'JPY',
      visitor_id: visitorId,
      email: null,
      renewal: false,
      refunded: false,
      occurred_at: occurredAt,
      created_at: occurredAt,
      customer_id: null,
      customer_name: null,
      is_free_trial: false,
      converted_minor: null,
      converted_currency: null,
      ...extra,
    },
  };
}

/** The NDJSON text: header, records, end line (`end: false` leaves it out; `counts` replaces the true ones). */
export function exportFile(records: ExportRecord[], options: { header?: Record<string, unknown>; end?: boolean; counts?: Record<string, number> } = {}): string {
  const header = { format: 'sightline-export', version: 1, exportedAt: '2026-04-01T00:00:00.000Z', websiteId: 'exported-site', domain: 'moved.example.com', ...options.header };
  const counts = Object.fromEntries(COUNTED.map((type) => [type, records.filter((record) => record.type === type).length]));
  const lines = [JSON.stringify(header), ...records.map((record) => JSON.stringify(record))];
  if (options.end !== false) lines.push(JSON.stringify({ type: 'end', counts: options.counts ?? counts }));
  return `${lines.join('\n')}\n`;
}
