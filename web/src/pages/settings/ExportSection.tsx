// The website's raw data for leaving (issue 37 item 2): a plain download link, so the browser
// streams the file to disk. Only the owner sees this section; the server checks it again.
import type { JSX } from 'preact';
import { Card } from '../../components/index.ts';
import type { SectionProps } from './section-props.ts';

export function ExportSection({ website }: SectionProps): JSX.Element {
  const query = (gzip: boolean) => new URLSearchParams({ websiteId: website.id, ...(gzip ? { gzip: 'true' } : {}) }).toString();
  return (
    <Card title="Export your data">
      <p>
        Download every event and payment of <strong>{website.domain}</strong>, with its settings, funnels and visitor profiles, as one
        NDJSON file: a line per record, readable by any tool and importable into another Sightline.
      </p>
      <p class="row">
        <a class="button" href={`/api/v1/export/raw?${query(false)}`} download>
          Download raw data (.ndjson)
        </a>
        <a class="button" href={`/api/v1/export/raw?${query(true)}`} download>
          Download compressed (.ndjson.gz)
        </a>
      </p>
      <p class="hint">For the reports of a period as spreadsheets, use Export on the analytics page.</p>
    </Card>
  );
}
