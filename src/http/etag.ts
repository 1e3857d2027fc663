import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

// ETags of the files Sightline serves itself (the tracking script, country flags), one home for
// how one is made and how a request's If-None-Match is read.

/** A strong ETag naming the body's content. */
export function etagOf(body: Buffer | string): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
}

/** If-None-Match lists ETags (weak or strong, or `*`); any match means the client's copy is current. */
export function clientHasCurrent(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '');
    return value === etag || value === '*';
  });
}
