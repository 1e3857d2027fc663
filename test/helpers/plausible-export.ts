import { strToU8, zipSync } from 'fflate';

// A Plausible CSV export built from its documented layout (lib/plausible/exports.ex and
// csv_importer.ex): a zip of imported_<table>_<from>_<to>.csv files, one header line each.

export type CsvTable = { header: string[]; rows: (string | number)[][] };

export function csv(table: CsvTable): string {
  const quote = (value: string | number) => {
    const text = String(value);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [table.header, ...table.rows].map((row) => row.map(quote).join(',')).join('\n') + '\n';
}

export function zipOf(files: Record<string, string>): Buffer {
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)]))));
}

/** Per day i of `days`, the numbers each table holds (simple functions of i, so sums are checkable). */
export function plausibleExport(days: string[]): Record<string, string> {
  const span = `${days[0]!.replace(/-/g, '')}_${days.at(-1)!.replace(/-/g, '')}`;
  const name = (table: string) => `imported_${table}_${span}.csv`;
  const perDay = <T>(make: (day: string, i: number) => T[]) => days.flatMap((day, i) => make(day, i));
  return {
    [name('visitors')]: csv({
      header: ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'],
      rows: perDay((day, i) => [[day, 10 + i, 20 + i, 3, 12 + i, 120]]),
    }),
    [name('pages')]: csv({
      header: ['date', 'hostname', 'page', 'visits', 'visitors', 'pageviews', 'scroll_depth', 'pageleave_visitors'],
      rows: perDay((day, i) => [
        [day, 'example.com', '/', 7, 6 + i, 12 + i, '', 0],
        // No hostname (older exports): the website's domain stands for it.
        [day, '', '/pricing', 5, 4, 8, 50, 2],
      ]),
    }),
    [name('entry_pages')]: csv({
      header: ['date', 'entry_page', 'visitors', 'entrances', 'visit_duration', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [[day, '/', 6 + i, 7, 60, 2, 12]]),
    }),
    [name('exit_pages')]: csv({
      header: ['date', 'exit_page', 'visitors', 'visit_duration', 'exits', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [[day, '/pricing', 3 + i, 30, 4, 1, 5]]),
    }),
    [name('sources')]: csv({
      header: ['date', 'source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'pageviews', 'visitors', 'visits', 'visit_duration', 'bounces'],
      rows: perDay((day, i) => [
        [day, 'Google', 'google.com', '', '', '', '', '', 9, 5 + i, 6, 40, 1],
        [day, 'Newsletter', '', 'newsletter', 'email', 'spring', '', '', 4, 2, 2, 10, 0],
      ]),
    }),
    [name('locations')]: csv({
      header: ['date', 'country', 'region', 'city', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [
        [day, 'DE', 'DE-BE', 2950159, 8 + i, 9, 90, 2, 15],
        [day, 'FR', 'FR-IDF', 0, 2, 3, 30, 1, 5],
      ]),
    }),
    [name('devices')]: csv({
      header: ['date', 'device', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [[day, 'Desktop', 7 + i, 8, 80, 2, 14], [day, 'Mobile', 3, 4, 40, 1, 6]]),
    }),
    [name('browsers')]: csv({
      header: ['date', 'browser', 'browser_version', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [[day, 'Firefox', '125.0', 9 + i, 10, 100, 2, 18]]),
    }),
    [name('operating_systems')]: csv({
      header: ['date', 'operating_system', 'operating_system_version', 'visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
      rows: perDay((day, i) => [[day, 'GNU/Linux', '', 4 + i, 5, 50, 1, 9]]),
    }),
    [name('custom_events')]: csv({
      header: ['date', 'name', 'link_url', 'path', 'visitors', 'events'],
      rows: perDay((day, i) => [[day, 'Signup', '', '', 2 + i, 3 + i]]),
    }),
  };
}
