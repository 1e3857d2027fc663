import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { generateCredential } from '../src/auth/tokens.ts';
import { describeError, loggerOptions } from '../src/http/logging.ts';
import { looksLikeCredential, redactText, redactUrl, stripUrlSecrets } from '../src/http/redaction.ts';

// The one function deciding what of a URL may be shown; the request-level tests (authentication,
// ingestion, parser errors) check that every log line and answer goes through it.

const SECRETS = [
  generateCredential('token'),
  generateCredential('apiKey'),
  'sk_live_51HqLyjWDarjtT1zdp7dcXyZ',
  'rk_test_4eC39HqLyjWDarjtT1zdp7dc',
  'pk_live_TYooMQauvdEDq54NiTphI7jx',
  'whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8',
  'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
  'xoxb-2048-1234567890-AbCdEfGhIjKlMnOpQrStUvWx',
  'glpat-xYz12AbCdEfGhIjKlMnO',
  'AKIAIOSFODNN7EXAMPLE',
  'Zq8x7Lw2Vn4Rt6Yp0Ks3Hd9Fj1Mb5Gc8',
  'd41d8cd98f00b204e9800998ecf8427e',
  'aB3_dE5-fG7hJ9kL1mN3pQ5rS7tU9vW',
];

const ORDINARY = [
  '65f0c1e2a3b4c5d6e7f80910', // a 24-hex id
  '7c9e6679-7425-40de-944b-e07cc4ae0f40', // a UUID
  'api',
  'v1',
  'admin',
  'websites',
  'operating-systems',
  'exit-clicks',
  'canonical_time_zones_2024',
  'my-funnel-2024-checkout',
  '2026-11-23',
  '2024-01-01T00:00:00Z',
  'www.site-0123456789.example.com',
  'favicon.ico',
  'dft_short',
];

describe('credential-shaped text', () => {
  it.each(SECRETS)('masks %s', (secret) => {
    expect(looksLikeCredential(secret)).toBe(true);
    expect(looksLikeCredential(encodeURIComponent(secret))).toBe(true);
  });

  // A segment that holds a credential after a space, a colon, a quote or a comma (`Bearer dft_...`
  // pasted whole, `token:dft_...`) is masked as well: the shape is found inside the segment too.
  it.each(SECRETS)('masks %s inside a segment, after a label or in quotes', (secret) => {
    for (const segment of [`Bearer ${secret}`, `token:${secret}`, `"${secret}"`, `x,${secret}`, `(${secret})`]) {
      expect(looksLikeCredential(segment), segment).toBe(true);
      expect(looksLikeCredential(encodeURIComponent(segment)), segment).toBe(true);
    }
    expect(redactText(`header token:${secret} refused`)).toBe('header [redacted] refused');
  });

  it.each(ORDINARY)('leaves %s readable', (word) => {
    expect(looksLikeCredential(word)).toBe(false);
  });
});

describe('redactUrl', () => {
  it('keeps query names and drops every value', () => {
    expect(redactUrl('/api/events?token=abc&period=7d&flag')).toBe('/api/events?token=[redacted]&period=[redacted]&flag');
  });

  it('masks credential-shaped segments and query names, and keeps ids', () => {
    const token = generateCredential('token');
    expect(redactUrl(`/api/v1/admin/${token}`)).toBe('/api/v1/admin/[redacted]');
    expect(redactUrl(`/api/v1/admin/websites/65f0c1e2a3b4c5d6e7f80910?${token}=1`)).toBe(
      '/api/v1/admin/websites/65f0c1e2a3b4c5d6e7f80910?[redacted]=[redacted]',
    );
  });

  it('drops a fragment', () => {
    expect(redactUrl('/a#access_token=secret')).toBe('/a');
  });
});

describe('stripUrlSecrets (what is kept of a referrer)', () => {
  it('keeps scheme, host and path only', () => {
    expect(stripUrlSecrets('https://user:pw@example.com/a/b?c=d#e')).toBe('https://example.com/a/b');
    expect(stripUrlSecrets('https://example.com')).toBe('https://example.com');
    expect(stripUrlSecrets('?only=query')).toBe('');
  });
});

describe('free text in log lines', () => {
  it('masks URLs and credentials inside a message', () => {
    const token = generateCredential('token');
    expect(redactText(`Reply was already sent in the "/api/v1/admin/${token}?key=${token}" (GET) route`)).toBe(
      'Reply was already sent in the "/api/v1/admin/[redacted]?key=[redacted]" (GET) route',
    );
    expect(redactText('request 7c9e6679-7425-40de-944b-e07cc4ae0f40 failed at /srv/app/src/x.ts:12:3')).toBe(
      'request 7c9e6679-7425-40de-944b-e07cc4ae0f40 failed at /srv/app/src/x.ts:12:3',
    );
  });

  it('masks an error quoting a URL, its fields and its cause', () => {
    const token = generateCredential('token');
    const error = Object.assign(new Error(`'/x/${token}' is not a valid url component`, { cause: new Error(`at ${token}`) }), {
      code: 'FST_ERR_BAD_URL',
      url: `/x?token=${token}`,
    });
    const described = JSON.stringify(describeError(error));
    expect(described).not.toContain(token);
    expect(described).toContain('FST_ERR_BAD_URL');
    expect(described).toContain('/x?token=[redacted]');
  });
});

describe('the logger', () => {
  it('masks URLs in messages and their %s arguments', async () => {
    const lines: string[] = [];
    const app = Fastify({ logger: loggerOptions('info', { write: (line: string) => lines.push(line) }) });
    const logger = app.log;
    const token = generateCredential('token');
    logger.warn(`Reply was already sent in the "/x/${token}" (GET) route`);
    logger.info({ code: 1 }, 'Route %s:%s not found', 'GET', `/x?token=${token}`);
    logger.error({ err: new Error(`'/x/${token}' is not a valid url component`) }, 'failed');
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).not.toContain(token);
    expect(lines[1]).toContain('Route GET:/x?token=[redacted] not found');
    await app.close();
  });
});
