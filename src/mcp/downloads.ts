import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';
import type { ToolResult } from './execute.ts';

// The export tools answer files; an agent reads text. A zip of CSV files becomes one text item
// per file, headed by its name; NDJSON (gzip-compressed or not) becomes its text.

const GZIP_MAGIC = [0x1f, 0x8b];

export function filesAsText(bytes: Uint8Array, kind: 'zip' | 'text'): ToolResult {
  if (kind === 'zip') {
    const files = unzipSync(bytes);
    return { content: Object.entries(files).map(([name, data]) => ({ type: 'text' as const, text: `${name}\n${Buffer.from(data).toString('utf8')}` })) };
  }
  const plain = bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1] ? gunzipSync(bytes) : Buffer.from(bytes);
  return { content: [{ type: 'text', text: plain.toString('utf8') }] };
}
