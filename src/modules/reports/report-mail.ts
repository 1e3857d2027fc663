import type { Metric, ReportSummary, TopRow } from './report-summary.ts';

// A report as mail: a subject, a plain-text part and an HTML part. The HTML is what mail clients
// render reliably: tables for layout, every style inline, no scripts, no images, no web fonts.
// Every value that comes from a visitor (sources, paths) or a person (the domain) is escaped.

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const oneLine = (value: string) => value.replace(/\s+/g, ' ').trim();

const count = (n: number) => new Intl.NumberFormat('en-US').format(n);
function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/** "+25%", "-10%", "0%", or "new" when the previous period had none. */
export function changeText(m: Metric): string {
  if (m.change === null) return m.current === 0 ? '0%' : 'new';
  return `${m.change > 0 ? '+' : ''}${m.change}%`;
}

interface Row {
  name: string;
  metric: Metric;
  shown: (n: number) => string;
}

function rowsOf(summary: ReportSummary): Row[] {
  return [
    { name: 'Visitors', metric: summary.visitors, shown: count },
    { name: 'Page views', metric: summary.pageviews, shown: count },
    { name: 'Revenue', metric: summary.revenue, shown: (n) => money(n, summary.currency) },
  ];
}

const periodWord = (summary: ReportSummary) => (summary.period.kind === 'weekly' ? 'week' : 'month');

export function reportSubject(domain: string, summary: ReportSummary): string {
  const kind = summary.period.kind === 'weekly' ? 'Weekly' : 'Monthly';
  return oneLine(`[Sightline] ${kind} report for ${domain}: ${summary.period.label}`);
}

function textTop(title: string, rows: TopRow[]): string {
  if (rows.length === 0) return `${title}\n  (none)\n`;
  return `${title}\n${rows.map((row) => `  ${count(row.visitors).padStart(7)}  ${oneLine(row.label)}`).join('\n')}\n`;
}

export function renderReportText(input: { domain: string; summary: ReportSummary; dashboardUrl: string; unsubscribeUrl: string }): string {
  const { summary } = input;
  const word = periodWord(summary);
  const against = (row: Row) =>
    row.metric.change === null && row.metric.current !== 0 ? `new: none the previous ${word}` : `${changeText(row.metric)} on the previous ${word}: ${row.shown(row.metric.previous)}`;
  const lines = rowsOf(summary).map((row) => `  ${row.name.padEnd(11)} ${row.shown(row.metric.current).padStart(12)}  (${against(row)})`);
  return (
    `${oneLine(input.domain)}: ${summary.period.label}\n\n` +
    `${lines.join('\n')}\n\n` +
    `${textTop('Top sources (visitors)', summary.sources)}\n` +
    `${textTop('Top pages (visitors)', summary.pages)}\n` +
    `Dashboard: ${input.dashboardUrl}\n\n` +
    `-- \nYou receive this ${summary.period.kind} report as a member of ${oneLine(input.domain)} on Sightline.\n` +
    `Unsubscribe (no sign-in needed): ${input.unsubscribeUrl}\n`
  );
}

const CELL = 'padding:8px 12px;border-bottom:1px solid #e5e7eb;font-size:14px;color:#111827;';
const MUTED = 'color:#6b7280;font-size:13px;';

function changeColour(m: Metric): string {
  if (m.change === null || m.change === 0) return '#6b7280';
  return m.change > 0 ? '#047857' : '#b91c1c';
}

function htmlTop(title: string, rows: TopRow[]): string {
  const body =
    rows.length === 0
      ? `<tr><td style="${CELL}${MUTED}" colspan="2">None</td></tr>`
      : rows.map((row) => `<tr><td style="${CELL}word-break:break-all;">${escapeHtml(row.label)}</td><td style="${CELL}text-align:right;">${count(row.visitors)}</td></tr>`).join('');
  return (
    `<h2 style="font-size:16px;margin:24px 0 8px;color:#111827;">${escapeHtml(title)}</h2>` +
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse;">` +
    `<tr><th align="left" style="${CELL}${MUTED}font-weight:normal;">${title === 'Top sources' ? 'Source' : 'Page'}</th><th align="right" style="${CELL}${MUTED}font-weight:normal;">Visitors</th></tr>` +
    `${body}</table>`
  );
}

export function renderReportHtml(input: { domain: string; summary: ReportSummary; dashboardUrl: string; unsubscribeUrl: string }): string {
  const { summary } = input;
  const word = periodWord(summary);
  const domain = escapeHtml(oneLine(input.domain));
  const metrics = rowsOf(summary)
    .map(
      (row) =>
        `<tr><td style="${CELL}">${row.name}</td>` +
        `<td style="${CELL}text-align:right;font-weight:bold;">${escapeHtml(row.shown(row.metric.current))}</td>` +
        `<td style="${CELL}text-align:right;color:${changeColour(row.metric)};">${escapeHtml(changeText(row.metric))}</td>` +
        `<td style="${CELL}text-align:right;${MUTED}">${escapeHtml(row.shown(row.metric.previous))}</td></tr>`,
    )
    .join('');
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(reportSubject(input.domain, summary))}</title></head>` +
    '<body style="margin:0;padding:0;background:#f3f4f6;font-family:Arial,Helvetica,sans-serif;">' +
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f3f4f6;"><tr><td align="center" style="padding:24px 12px;">' +
    '<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="max-width:600px;width:100%;background:#ffffff;border-radius:8px;"><tr><td style="padding:24px;">' +
    `<h1 style="font-size:20px;margin:0 0 4px;color:#111827;">${domain}</h1>` +
    `<p style="margin:0 0 16px;${MUTED}">${escapeHtml(summary.period.label)}</p>` +
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse;">' +
    `<tr><th align="left" style="${CELL}${MUTED}font-weight:normal;"></th><th align="right" style="${CELL}${MUTED}font-weight:normal;">This ${word}</th>` +
    `<th align="right" style="${CELL}${MUTED}font-weight:normal;">Change</th><th align="right" style="${CELL}${MUTED}font-weight:normal;">Previous ${word}</th></tr>` +
    `${metrics}</table>` +
    htmlTop('Top sources', summary.sources) +
    htmlTop('Top pages', summary.pages) +
    `<p style="margin:24px 0 0;"><a href="${escapeHtml(input.dashboardUrl)}" style="color:#2563eb;">Open the dashboard</a></p>` +
    '</td></tr></table>' +
    `<p style="${MUTED}margin:16px 0 0;">You receive this ${summary.period.kind} report as a member of ${domain} on Sightline. ` +
    `<a href="${escapeHtml(input.unsubscribeUrl)}" style="color:#6b7280;">Unsubscribe</a> (no sign-in needed).</p>` +
    '</td></tr></table></body></html>'
  );
}

export function renderReportMail(input: { domain: string; summary: ReportSummary; dashboardUrl: string; unsubscribeUrl: string }): RenderedMail {
  return { subject: reportSubject(input.domain, input.summary), text: renderReportText(input), html: renderReportHtml(input) };
}

export interface SpikeFacts {
  domain: string;
  hourFrom: string;
  hourTo: string;
  visitors: number;
  usual: number;
  dashboardUrl: string;
  unsubscribeUrl: string;
}

export function renderSpikeMail(facts: SpikeFacts): RenderedMail {
  const domain = oneLine(facts.domain);
  const hour = `${facts.hourFrom.slice(0, 16).replace('T', ' ')}–${facts.hourTo.slice(11, 16)} UTC`;
  const subject = oneLine(`[Sightline] Traffic spike on ${domain}: ${count(facts.visitors)} visitors in an hour`);
  const text =
    `${domain} had ${count(facts.visitors)} visitors in the hour ${hour}; that hour usually has about ${count(facts.usual)}.\n\n` +
    `See who is coming and from where: ${facts.dashboardUrl}\n\n` +
    `-- \nYou receive traffic-spike alerts as a member of ${domain} on Sightline.\n` +
    `Unsubscribe (no sign-in needed): ${facts.unsubscribeUrl}\n`;
  const html =
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(subject)}</title></head><body style="margin:0;padding:24px;background:#f3f4f6;font-family:Arial,Helvetica,sans-serif;">` +
    '<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="max-width:600px;width:100%;background:#ffffff;border-radius:8px;"><tr><td style="padding:24px;">' +
    `<h1 style="font-size:20px;margin:0 0 8px;color:#111827;">Traffic spike on ${escapeHtml(domain)}</h1>` +
    `<p style="font-size:14px;color:#111827;"><strong>${count(facts.visitors)}</strong> visitors in the hour ${escapeHtml(hour)}; that hour usually has about ${count(facts.usual)}.</p>` +
    `<p style="margin:16px 0 0;"><a href="${escapeHtml(facts.dashboardUrl)}" style="color:#2563eb;">Open the dashboard</a></p>` +
    `<p style="${MUTED}margin:24px 0 0;">You receive traffic-spike alerts as a member of ${escapeHtml(domain)} on Sightline. ` +
    `<a href="${escapeHtml(facts.unsubscribeUrl)}" style="color:#6b7280;">Unsubscribe</a> (no sign-in needed).</p>` +
    '</td></tr></table></body></html>';
  return { subject, text, html };
}
