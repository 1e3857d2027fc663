import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCredential } from '../src/auth/tokens.ts';
import { useTestApp } from './helpers/app.ts';

// Requests Node's HTTP parser refuses never reach Fastify's routing or error handler, so
// app.inject cannot produce them: these tests write raw bytes to a real listening socket.
// The database plays no part in them, so one engine is enough.

interface RawAnswer {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

function parseAnswer(raw: string): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { statusLine, headers, body: end === -1 ? '' : raw.slice(end + 4), raw };
}

describe('HTTP requests the parser refuses', () => {
  const t = useTestApp('sqlite');
  let port = 0;

  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });

  /**
   * Writes the bytes as they are and reads until the server closes the connection. A second
   * request, when given, is written once the first answer has begun to arrive.
   */
  function sendRaw(bytes: string, afterFirstAnswer?: string): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      const chunks: Buffer[] = [];
      if (afterFirstAnswer) socket.once('data', () => socket.write(afterFirstAnswer));
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`the server kept the connection open; received so far: ${Buffer.concat(chunks).toString()}`));
      }, 5000);
      socket.on('data', (chunk) => chunks.push(chunk));
      // A reset after the answer is fine: what was received is what the client reads.
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(parseAnswer(Buffer.concat(chunks).toString('latin1')));
      });
    });
  }

  /** The contract's envelope, with the right status, length and Connection: close. */
  function expectEnvelope(answer: RawAnswer, status: number, message: RegExp): void {
    expect(answer.statusLine, answer.raw).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers.connection).toBe('close');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body, 'latin1'));
    const body = JSON.parse(answer.body);
    expect(body).toEqual({ status: 'error', error: { code: status, message: expect.any(String) } });
    expect(body.error.message).toMatch(message);
  }

  it('answers 400 in the envelope for a header line without a colon', async () => {
    const answer = await sendRaw('GET /healthz HTTP/1.1\r\nHost: localhost\r\nNoColonHere\r\n\r\n');
    expectEnvelope(answer, 400, /header/i);
  });

  it('answers 400 in the envelope for a Content-Length that is not a number', async () => {
    const answer = await sendRaw('POST /api/events HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n{}');
    expectEnvelope(answer, 400, /Content-Length/);
  });

  it('answers 400 in the envelope for a duplicated Content-Length', async () => {
    const answer = await sendRaw(
      'POST /api/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    );
    expectEnvelope(answer, 400, /Content-Length/);
  });

  it('answers 400 in the envelope for a broken chunked body', async () => {
    const answer = await sendRaw(
      'POST /api/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expectEnvelope(answer, 400, /chunk/i);
  });

  it('answers 505 in the envelope for an unknown HTTP version', async () => {
    const answer = await sendRaw('GET /healthz HTTP/9.9\r\nHost: localhost\r\n\r\n');
    expectEnvelope(answer, 505, /HTTP\/1\.1/);
  });

  it('answers 431 in the envelope for oversized headers', async () => {
    const answer = await sendRaw(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectEnvelope(answer, 431, /header/i);
  });

  it('answers 413 in the envelope for oversized chunk extensions', async () => {
    const answer = await sendRaw(
      `POST /api/events HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2;x=${'a'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`,
    );
    expectEnvelope(answer, 413, /chunk/i);
  });

  it('answers a malformed request after a good one on the same connection in the envelope', async () => {
    const good = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const bad = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nNoColonHere\r\n\r\n';
    const answer = await sendRaw(good, bad);
    const second = answer.raw.indexOf('HTTP/1.1', 1);
    expect(answer.raw.startsWith('HTTP/1.1 200 '), answer.raw).toBe(true);
    expectEnvelope(parseAnswer(answer.raw.slice(second)), 400, /header/i);
  });

  it('echoes and logs no credential sent in a refused request, and keeps serving', async () => {
    const token = generateCredential('token');
    const linesBefore = t.logLines.length;
    const answer = await sendRaw(
      `GET /api/v1/admin/${token}?access_token=${token} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nBroken\r\n\r\n`,
    );
    expectEnvelope(answer, 400, /header/i);
    expect(answer.raw).not.toContain(token);
    const log = t.logLines.slice(linesBefore).join('\n');
    expect(log).toContain('HPE_INVALID_HEADER_TOKEN');
    expect(log).not.toContain(token);
    const healthy = await sendRaw('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(healthy.statusLine).toMatch(/^HTTP\/1\.1 200 /);
  });
});
