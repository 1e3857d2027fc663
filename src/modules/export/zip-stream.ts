import { Readable } from 'node:stream';
import { Zip, ZipDeflate } from 'fflate';

// A zip written as its files come: each file is compressed when the reader asks for more, so
// only one file's text is held at a time and a slow reader slows the work down.

export interface ZipEntry {
  name: string;
  text: string;
}

async function* zipChunks(entries: AsyncIterable<ZipEntry>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error) failure = error;
    else pending.push(chunk);
  });
  const drain = () => {
    if (failure) throw failure;
    const out = pending;
    pending = [];
    return out;
  };
  const encoder = new TextEncoder();
  for await (const entry of entries) {
    const file = new ZipDeflate(entry.name, { level: 6 });
    zip.add(file);
    file.push(encoder.encode(entry.text), true);
    yield* drain();
  }
  zip.end();
  yield* drain();
}

export function zipStream(entries: AsyncIterable<ZipEntry>): Readable {
  return Readable.from(zipChunks(entries), { objectMode: false });
}
