import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

// The floor: a bare node:http server answering the exact bytes Sightline answered.
// Input: BENCH_BODY_FILE, BENCH_CONTENT_TYPE, BENCH_READ_BODY=1 (read the whole request body
// before answering, as a server accepting a POST must) or =json (read it and parse it as JSON).
// Output: "LISTENING <port>" on stdout.

const bodyFile = process.env.BENCH_BODY_FILE;
const contentType = process.env.BENCH_CONTENT_TYPE;
if (!bodyFile || !contentType) throw new Error('BENCH_BODY_FILE and BENCH_CONTENT_TYPE are required');
const body = readFileSync(bodyFile);
const headers = { 'content-type': contentType, 'content-length': String(body.length) };

const readBody = process.env.BENCH_READ_BODY === '1' || process.env.BENCH_READ_BODY === 'json';
const parseBody = process.env.BENCH_READ_BODY === 'json';

const server = createServer((request, response) => {
  if (!readBody) {
    response.writeHead(200, headers);
    response.end(body);
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const received = Buffer.concat(chunks);
    if (received.length === 0) return void response.writeHead(400).end();
    if (parseBody) {
      try {
        JSON.parse(received.toString('utf8'));
      } catch {
        return void response.writeHead(400).end();
      }
    }
    response.writeHead(200, headers).end(body);
  });
});
server.keepAliveTimeout = 72_000; // Fastify's default, so both keep connections the same way
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  console.log(`LISTENING ${address.port}`);
});

const shutdown = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
