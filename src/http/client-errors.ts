import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';

// Requests Node's HTTP parser refuses (a header line without a colon, a bad Content-Length, a
// broken chunked body...) never become Fastify requests, so the error handler never sees them.
// They are answered here, on the raw socket, in the same envelope as every other error.
// The message is chosen from the parser's error code only: never the parser's message or the
// raw bytes, which hold the request line and headers (a token in a URL or an Authorization
// header would otherwise be echoed or logged).

interface ParserRefusal {
  statusCode: number;
  message: string;
}

const MALFORMED_CONTENT_LENGTH: ParserRefusal = {
  statusCode: 400,
  message: 'Content-Length must be one decimal number, sent once',
};
const MALFORMED_CHUNKS: ParserRefusal = { statusCode: 400, message: 'The chunked body is malformed' };

const REFUSALS: Record<string, ParserRefusal> = {
  HPE_HEADER_OVERFLOW: { statusCode: 431, message: 'The request headers are too large' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { statusCode: 413, message: 'The chunk extensions of the body are too large' },
  HPE_INVALID_VERSION: { statusCode: 505, message: 'The HTTP version is not supported; send HTTP/1.1' },
  ERR_HTTP_REQUEST_TIMEOUT: { statusCode: 408, message: 'The request took too long to arrive' },
  HPE_INVALID_HEADER_TOKEN: { statusCode: 400, message: 'A header line is malformed; each needs a name, a colon and a value' },
  HPE_INVALID_CONTENT_LENGTH: MALFORMED_CONTENT_LENGTH,
  HPE_UNEXPECTED_CONTENT_LENGTH: MALFORMED_CONTENT_LENGTH,
  HPE_INVALID_TRANSFER_ENCODING: {
    statusCode: 400,
    message: 'Transfer-Encoding is malformed or sent with Content-Length',
  },
  HPE_INVALID_CHUNK_SIZE: MALFORMED_CHUNKS,
  HPE_STRICT: MALFORMED_CHUNKS,
  HPE_INVALID_METHOD: { statusCode: 400, message: 'The request method is not valid' },
  HPE_INVALID_URL: { statusCode: 400, message: 'The request target is not a valid URL' },
};

const NOT_HTTP: ParserRefusal = { statusCode: 400, message: 'The request is not valid HTTP/1.1' };

export function refusalFor(code: string): ParserRefusal {
  return REFUSALS[code] ?? NOT_HTTP;
}

/** The whole raw answer: status line, headers and the JSON envelope. */
export function rawErrorAnswer({ statusCode, message }: ParserRefusal): string {
  const body = JSON.stringify({ status: 'error', error: { code: statusCode, message } });
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The in-flight response Node keeps on a keep-alive socket (not in Node's public types). */
interface ServerSocket extends Socket {
  _httpMessage?: { headersSent?: boolean } | null;
}

/** Fastify's `clientErrorHandler`; `this` is the Fastify instance. */
export function answerClientError(this: FastifyInstance, error: ConnectionError, socket: ServerSocket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) {
    socket.destroy();
    return;
  }
  const refusal = refusalFor(error.code);
  this.log.info({ parserError: error.code, statusCode: refusal.statusCode }, 'malformed request refused');
  // As Node itself does: answer only when no byte of another answer has gone out on this
  // socket, so a client reading a pipelined response never receives a corrupted one.
  const answerInFlight = socket._httpMessage?.headersSent === true;
  if (socket.writable && !answerInFlight) socket.write(rawErrorAnswer(refusal));
  socket.destroy();
}
