import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Config, ConfigError } from '../config.ts';

// The keys that encrypt provider credentials. The first key encrypts; every key decrypts, so a
// key can rotate: set the new SIGHTLINE_SECRET_KEY and list the old one in
// SIGHTLINE_PREVIOUS_SECRET_KEYS until every credential has been written again.

export interface Keyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_BYTES = 32;

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('sightline-key-id:').update(key).digest('hex').slice(0, 12);
}

function decodeKey(value: string, source: string): Buffer {
  const key = Buffer.from(value.trim(), 'base64');
  if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/]+=*$/.test(value.trim())) {
    throw new ConfigError(`${source} must be ${KEY_BYTES} bytes, base64-encoded (make one with: openssl rand -base64 32)`);
  }
  return key;
}

export function keyringFrom(current: Buffer, previous: Buffer[] = []): Keyring {
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) keys.set(keyIdOf(key), key);
  return { currentId: keyIdOf(current), keys };
}

/** The embedded default keeps a generated key beside the database, readable by its owner only. */
function keyFileFor(sqlitePath: string): Buffer {
  const file = join(dirname(sqlitePath), 'secret.key');
  if (existsSync(file)) return decodeKey(readFileSync(file, 'utf8'), file);
  const key = randomBytes(KEY_BYTES);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

export function loadKeyring(config: Config, sqlitePath: string | null, engine: 'sqlite' | 'postgres'): Keyring {
  const previous = config.previousSecretKeys.map((k, i) => decodeKey(k, `SIGHTLINE_PREVIOUS_SECRET_KEYS[${i}]`));
  if (config.secretKey) return keyringFrom(decodeKey(config.secretKey, 'SIGHTLINE_SECRET_KEY'), previous);
  if (sqlitePath) return keyringFrom(keyFileFor(sqlitePath), previous);
  if (engine === 'postgres') {
    throw new ConfigError('SIGHTLINE_SECRET_KEY is required with PostgreSQL (make one with: openssl rand -base64 32)');
  }
  // An in-memory database keeps nothing, so a key that lives as long as the process is enough.
  return keyringFrom(randomBytes(KEY_BYTES), previous);
}
