import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { type Config, ConfigError, loadConfig } from '../src/config.ts';
import { type Keyring, keyIdOf, keyringFrom, loadKeyring } from '../src/crypto/keyring.ts';
import { SecretBoxError, open, seal } from '../src/crypto/secret-box.ts';
import type { Db } from '../src/db/database.ts';
import { createAccountWithToken } from '../src/modules/account/account.service.ts';
import { StoredSecretsError, openCredentials, sealCredentials } from '../src/modules/integrations/credentials.ts';
import { TEST_CONFIG_OVERRIDES } from './helpers/app.ts';
import { describeEachEngine, openTestDatabase } from './helpers/engines.ts';

const newKey = () => randomBytes(32);
const b64 = (key: Buffer) => key.toString('base64');
const configWith = (overrides: Partial<Config> = {}) => loadConfig({}, { databaseUrl: 'test', ...overrides });

/** A fresh directory, removed after the file's tests. */
const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-keys-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Flips one bit of the byte at `index` of a base64 ciphertext. */
function flipByte(ciphertext: string, index: number): string {
  const raw = Buffer.from(ciphertext, 'base64');
  raw[index] = raw[index]! ^ 0x01;
  return raw.toString('base64');
}

describe('secret box', () => {
  const keyring = keyringFrom(newKey());
  const CONTEXT = 'sightline:test:context';

  it('opens what it sealed, with the current key id', () => {
    const plaintext = `sk_live_${randomBytes(16).toString('hex')} — ünïcødé ✓`;
    const sealed = seal(keyring, plaintext, CONTEXT);
    expect(sealed.keyId).toBe(keyring.currentId);
    expect(sealed.ciphertext).not.toContain(plaintext.slice(0, 20));
    expect(Buffer.from(sealed.ciphertext, 'base64').toString('utf8')).not.toContain('sk_live_');
    expect(open(keyring, sealed, CONTEXT)).toBe(plaintext);
  });

  it('seals the same plaintext differently every time (random nonce)', () => {
    const first = seal(keyring, 'same', CONTEXT);
    const second = seal(keyring, 'same', CONTEXT);
    expect(first.ciphertext).not.toBe(second.ciphertext);
    expect(open(keyring, first, CONTEXT)).toBe('same');
    expect(open(keyring, second, CONTEXT)).toBe('same');
  });

  it('does not open under another context', () => {
    const sealed = seal(keyring, 'secret', CONTEXT);
    expect(() => open(keyring, sealed, `${CONTEXT}x`)).toThrow(SecretBoxError);
    expect(() => open(keyring, sealed, '')).toThrow(/does not authenticate/);
  });

  it('does not open with a flipped byte in the nonce, the tag or the body', () => {
    const sealed = seal(keyring, 'a secret of some length', CONTEXT);
    const length = Buffer.from(sealed.ciphertext, 'base64').length;
    for (const index of [0, 11, 12, 27, 28, length - 1]) {
      const tampered = { ...sealed, ciphertext: flipByte(sealed.ciphertext, index) };
      expect(() => open(keyring, tampered, CONTEXT), `byte ${index}`).toThrow(SecretBoxError);
      expect(() => open(keyring, tampered, CONTEXT), `byte ${index}`).toThrow(/does not authenticate/);
    }
  });

  it('refuses a truncated ciphertext clearly', () => {
    const sealed = seal(keyring, 'secret', CONTEXT);
    const short = Buffer.from(sealed.ciphertext, 'base64').subarray(0, 20).toString('base64');
    expect(() => open(keyring, { ...sealed, ciphertext: short }, CONTEXT)).toThrow(/truncated/);
    expect(() => open(keyring, { ...sealed, ciphertext: '' }, CONTEXT)).toThrow(SecretBoxError);
  });

  it('names an unknown key id', () => {
    const sealed = seal(keyring, 'secret', CONTEXT);
    expect(() => open(keyring, { ...sealed, keyId: 'deadbeef0000' }, CONTEXT)).toThrow(SecretBoxError);
    expect(() => open(keyring, { ...sealed, keyId: 'deadbeef0000' }, CONTEXT)).toThrow('no key with id deadbeef0000 is configured');
  });

  it('does not open under another key that claims the same id', () => {
    const sealed = seal(keyring, 'secret', CONTEXT);
    const impostor: Keyring = { currentId: keyring.currentId, keys: new Map([[keyring.currentId, newKey()]]) };
    expect(() => open(impostor, sealed, CONTEXT)).toThrow(/does not authenticate/);
  });
});

describe('credentials sealed for a website and provider', () => {
  const keyring = keyringFrom(newKey());
  const fields = { providerTwoApiKey: `sk_live_${randomBytes(12).toString('hex')}`, providerTwoStoreId: 'store_123' };
  const websiteId = '0123456789abcdef01234567';
  const otherWebsiteId = '76543210fedcba9876543210';

  const rowOf = (website: string, provider: string, sealed: { keyId: string; ciphertext: string }) => ({
    website_id: website,
    provider,
    key_id: sealed.keyId,
    ciphertext: sealed.ciphertext,
  });

  it('opens in the row it was sealed for', () => {
    const sealed = sealCredentials(keyring, websiteId, 'provider-two', fields);
    expect(sealed.ciphertext).not.toContain(fields.providerTwoApiKey);
    expect(openCredentials(keyring, rowOf(websiteId, 'provider-two', sealed))).toEqual(fields);
  });

  it("does not open when copied into another website's row", () => {
    const sealed = sealCredentials(keyring, websiteId, 'provider-two', fields);
    expect(() => openCredentials(keyring, rowOf(otherWebsiteId, 'provider-two', sealed))).toThrow(SecretBoxError);
  });

  it("does not open when copied into another provider's row", () => {
    const sealed = sealCredentials(keyring, websiteId, 'provider-two', fields);
    expect(() => openCredentials(keyring, rowOf(websiteId, 'provider-three', sealed))).toThrow(SecretBoxError);
  });

  it('does not open with a flipped byte', () => {
    const sealed = sealCredentials(keyring, websiteId, 'provider-two', fields);
    const tampered = { ...sealed, ciphertext: flipByte(sealed.ciphertext, 40) };
    expect(() => openCredentials(keyring, rowOf(websiteId, 'provider-two', tampered))).toThrow(SecretBoxError);
  });

  it('names an unknown key id', () => {
    const sealed = sealCredentials(keyring, websiteId, 'provider-two', fields);
    const otherRing = keyringFrom(newKey());
    expect(() => openCredentials(otherRing, rowOf(websiteId, 'provider-two', sealed))).toThrow(
      `no key with id ${keyring.currentId} is configured`,
    );
  });
});

/** 32 random bytes in base64url that uses at least one of its own characters (- or _). */
function base64UrlKey(): string {
  for (;;) {
    const encoded = newKey().toString('base64url');
    if (/[-_]/.test(encoded)) return `${encoded}=`;
  }
}

describe('keyring', () => {
  const BAD_KEYS: [string, string][] = [
    ['a word', 'not-a-key'],
    ['16 bytes', b64(randomBytes(16))],
    ['33 bytes', b64(randomBytes(33))],
    ['31 bytes', b64(randomBytes(31))],
    ['64 hex characters (32 bytes as hex)', randomBytes(32).toString('hex')],
    ['32 bytes as base64url (with - or _)', base64UrlKey()],
    ['32 bytes of base64 with a character that is not base64 inside', `${b64(newKey()).slice(0, 20)}!${b64(newKey()).slice(20)}`],
    ['32 bytes of base64 with a space inside', `${b64(newKey()).slice(0, 20)} ${b64(newKey()).slice(20)}`],
  ];

  it.each(BAD_KEYS)('refuses SIGHTLINE_SECRET_KEY of %s with a clear ConfigError', (_label, value) => {
    const load = () => loadKeyring(configWith({ secretKey: value }), null, 'postgres');
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/^SIGHTLINE_SECRET_KEY must be 32 bytes, base64-encoded \(make one with: openssl rand -base64 32\)$/);
    try {
      load();
    } catch (error) {
      expect((error as Error).message).not.toContain(value);
    }
  });

  it('refuses a bad previous key, naming its position', () => {
    const config = configWith({ secretKey: b64(newKey()), previousSecretKeys: [b64(newKey()), 'short'] });
    expect(() => loadKeyring(config, null, 'postgres')).toThrow(ConfigError);
    expect(() => loadKeyring(config, null, 'postgres')).toThrow(/^SIGHTLINE_PREVIOUS_SECRET_KEYS\[1\] must be 32 bytes, base64-encoded/);
  });

  it('accepts a key with surrounding white space (as read from a file or an env file)', () => {
    const key = newKey();
    const keyring = loadKeyring(configWith({ secretKey: `  ${b64(key)}\n` }), null, 'postgres');
    expect(keyring.currentId).toBe(keyIdOf(key));
    expect(keyring.keys.get(keyring.currentId)).toEqual(key);
  });

  it('reads SIGHTLINE_SECRET_KEY and the comma-separated SIGHTLINE_PREVIOUS_SECRET_KEYS from the environment', () => {
    const [current, old1, old2] = [newKey(), newKey(), newKey()];
    const config = loadConfig({
      SIGHTLINE_SECRET_KEY: b64(current),
      SIGHTLINE_PREVIOUS_SECRET_KEYS: ` ${b64(old1)} , ${b64(old2)},`,
    });
    const keyring = loadKeyring(config, null, 'postgres');
    expect(keyring.currentId).toBe(keyIdOf(current));
    expect([...keyring.keys.keys()].sort()).toEqual([current, old1, old2].map(keyIdOf).sort());
  });

  it('gives each key a stable 12-hex-character id that reveals nothing of the key', () => {
    const key = newKey();
    expect(keyIdOf(key)).toMatch(/^[0-9a-f]{12}$/);
    expect(keyIdOf(Buffer.from(key))).toBe(keyIdOf(key));
    expect(keyIdOf(newKey())).not.toBe(keyIdOf(key));
    expect(key.toString('hex')).not.toContain(keyIdOf(key));
  });

  it('requires SIGHTLINE_SECRET_KEY with PostgreSQL', () => {
    const load = () => loadKeyring(configWith(), null, 'postgres');
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/SIGHTLINE_SECRET_KEY is required with PostgreSQL/);
  });

  describe('on SQLite without a key', () => {
    it('generates secret.key next to the database file, mode 0600, and reuses it on the next load', () => {
      const dir = tempDir();
      const dbPath = join(dir, 'sightline.db');
      const keyFile = join(dir, 'secret.key');
      expect(existsSync(keyFile)).toBe(false);

      const first = loadKeyring(configWith(), dbPath, 'sqlite');
      expect(existsSync(keyFile)).toBe(true);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const stored = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
      expect(stored).toHaveLength(32);
      expect(first.currentId).toBe(keyIdOf(stored));

      const sealed = seal(first, 'kept across restarts', 'ctx');
      const second = loadKeyring(configWith(), dbPath, 'sqlite');
      expect(second.currentId).toBe(first.currentId);
      expect(open(second, sealed, 'ctx')).toBe('kept across restarts');
      expect(readFileSync(keyFile).equals(readFileSync(keyFile))).toBe(true);
    });

    it('uses a different generated key for a database in another directory', () => {
      const a = loadKeyring(configWith(), join(tempDir(), 'a.db'), 'sqlite');
      const b = loadKeyring(configWith(), join(tempDir(), 'b.db'), 'sqlite');
      expect(a.currentId).not.toBe(b.currentId);
    });

    it('prefers SIGHTLINE_SECRET_KEY and then writes no file', () => {
      const dir = tempDir();
      const key = newKey();
      const keyring = loadKeyring(configWith({ secretKey: b64(key) }), join(dir, 'sightline.db'), 'sqlite');
      expect(keyring.currentId).toBe(keyIdOf(key));
      expect(existsSync(join(dir, 'secret.key'))).toBe(false);
    });

    it('refuses a damaged secret.key with a ConfigError that names the file', () => {
      const dir = tempDir();
      const keyFile = join(dir, 'secret.key');
      writeFileSync(keyFile, 'garbage\n', { mode: 0o600 });
      const load = () => loadKeyring(configWith(), join(dir, 'sightline.db'), 'sqlite');
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(`${keyFile} must be 32 bytes, base64-encoded`);
      expect(readFileSync(keyFile, 'utf8')).toBe('garbage\n');
    });

    it('keeps the generated key with previous keys for rotation', () => {
      const old = newKey();
      const keyring = loadKeyring(configWith({ previousSecretKeys: [b64(old)] }), join(tempDir(), 'x.db'), 'sqlite');
      expect(keyring.currentId).not.toBe(keyIdOf(old));
      expect(keyring.keys.has(keyIdOf(old))).toBe(true);
    });
  });

  it('rotates: a previous key still opens old ciphertexts, new ones use the current key', () => {
    const [oldKey, currentKey] = [newKey(), newKey()];
    const before = loadKeyring(configWith({ secretKey: b64(oldKey) }), null, 'postgres');
    const oldSealed = seal(before, 'written with the old key', 'ctx');
    expect(oldSealed.keyId).toBe(keyIdOf(oldKey));

    const rotated = loadKeyring(configWith({ secretKey: b64(currentKey), previousSecretKeys: [b64(oldKey)] }), null, 'postgres');
    expect(rotated.currentId).toBe(keyIdOf(currentKey));
    expect(open(rotated, oldSealed, 'ctx')).toBe('written with the old key');
    const newSealed = seal(rotated, 'written with the new key', 'ctx');
    expect(newSealed.keyId).toBe(keyIdOf(currentKey));

    // Only the key a ciphertext names can open it.
    const currentOnly = loadKeyring(configWith({ secretKey: b64(currentKey) }), null, 'postgres');
    expect(open(currentOnly, newSealed, 'ctx')).toBe('written with the new key');
    expect(() => open(currentOnly, oldSealed, 'ctx')).toThrow(`no key with id ${keyIdOf(oldKey)} is configured`);
    expect(() => open(before, newSealed, 'ctx')).toThrow(`no key with id ${keyIdOf(currentKey)} is configured`);
  });
});

describeEachEngine('stored credentials at start-up', (engine) => {
  const KEY_A = newKey();
  const KEY_B = newKey();
  const running = new Set<FastifyInstance>();

  async function start(db: Db, overrides: Partial<Config>): Promise<FastifyInstance> {
    const config = loadConfig({}, { ...TEST_CONFIG_OVERRIDES, databaseUrl: 'test', ...overrides });
    const app = await buildApp({ config, db, logger: false });
    running.add(app);
    return app;
  }

  async function stop(app: FastifyInstance): Promise<void> {
    running.delete(app);
    await app.close();
  }

  /** The error buildApp rejects with (fails the test when it starts). */
  async function startFailure(db: Db, overrides: Partial<Config>): Promise<Error> {
    let app: FastifyInstance | undefined;
    try {
      app = await start(db, overrides);
    } catch (error) {
      return error as Error;
    }
    await stop(app);
    throw new Error('the app started, but it should have refused to');
  }

  async function inject(app: FastifyInstance, method: string, url: string, token: string, body?: unknown) {
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data[0];
  }

  /** An account with a website whose provider-one is connected, through the API of `app`. */
  async function connectedWebsite(app: FastifyInstance, db: Db) {
    const { token } = await createAccountWithToken(db.kysely, `keys-${randomBytes(4).toString('hex')}@example.com`, 'Keys');
    const website = await inject(app, 'POST', '/api/v1/admin/websites', token, {
      domain: `keys-${randomBytes(4).toString('hex')}.example.com`,
      timezone: 'UTC',
    });
    const credential = `sk_live_${randomBytes(16).toString('hex')}`;
    await inject(app, 'POST', `/api/v1/admin/websites/${website.id}/integrations/provider-one`, token, { providerOneRestrictedKey: credential });
    return { token, websiteId: website.id as string, credential };
  }

  async function withDatabase(run: (db: Db, dbPath: string | null) => Promise<void>) {
    const database = await openTestDatabase(engine);
    try {
      await run(database.db, database.db.sqlitePath);
    } finally {
      for (const app of [...running]) await stop(app);
      await database.db.close();
      await database.drop();
    }
  }

  it('refuses to start with another key, naming the key id and SIGHTLINE_SECRET_KEY; starts with the old key listed as previous', async () => {
    await withDatabase(async (db) => {
      const first = await start(db, { secretKey: b64(KEY_A) });
      const { token, websiteId, credential } = await connectedWebsite(first, db);
      await stop(first);

      const error = await startFailure(db, { secretKey: b64(KEY_B) });
      expect(error).toBeInstanceOf(StoredSecretsError);
      expect(error.message).toContain(`key id ${keyIdOf(KEY_A)}`);
      expect(error.message).toContain('SIGHTLINE_SECRET_KEY');
      expect(error.message).toContain('SIGHTLINE_PREVIOUS_SECRET_KEYS');
      expect(error.message).not.toContain(credential);
      expect(error.message).not.toContain(b64(KEY_A));
      expect(error.message).not.toContain(b64(KEY_B));

      const rotated = await start(db, { secretKey: b64(KEY_B), previousSecretKeys: [b64(KEY_A)] });
      const status = await inject(rotated, 'GET', `/api/v1/admin/websites/${websiteId}/integrations`, token);
      expect(status['provider-one']).toMatchObject({ connected: true });
      const [row] = await db.kysely.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).execute();
      expect(row!.key_id).toBe(keyIdOf(KEY_A));
      expect(openCredentials(rotated.keyring, row!)).toEqual({ providerOneRestrictedKey: credential });

      // Connecting again writes with the current key; then the old key is no longer needed.
      await inject(rotated, 'POST', `/api/v1/admin/websites/${websiteId}/integrations/provider-one`, token, {
        providerOneRestrictedKey: credential,
      });
      const [rewritten] = await db.kysely.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).execute();
      expect(rewritten!.key_id).toBe(keyIdOf(KEY_B));
      await stop(rotated);

      const currentOnly = await start(db, { secretKey: b64(KEY_B) });
      expect(openCredentials(currentOnly.keyring, rewritten!)).toEqual({ providerOneRestrictedKey: credential });
      await stop(currentOnly);
      const oldOnly = await startFailure(db, { secretKey: b64(KEY_A) });
      expect(oldOnly.message).toContain(`key id ${keyIdOf(KEY_B)}`);
    });
  });

  it('refuses to start when a stored ciphertext was tampered with', async () => {
    await withDatabase(async (db) => {
      const first = await start(db, { secretKey: b64(KEY_A) });
      const { websiteId } = await connectedWebsite(first, db);
      await stop(first);
      const [row] = await db.kysely.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).execute();
      await db.kysely
        .updateTable('integrations')
        .set({ ciphertext: flipByte(row!.ciphertext, 30) })
        .where('website_id', '=', websiteId)
        .execute();
      const error = await startFailure(db, { secretKey: b64(KEY_A) });
      expect(error).toBeInstanceOf(StoredSecretsError);
      expect(error.message).toMatch(new RegExp(`key id ${keyIdOf(KEY_A)}.*does not authenticate`));
    });
  });

  it('starts on an empty database with any key', async () => {
    await withDatabase(async (db) => {
      const app = await start(db, { secretKey: b64(KEY_B) });
      expect(app.keyring.currentId).toBe(keyIdOf(KEY_B));
    });
  });

  if (engine === 'postgres') {
    it('refuses to start on PostgreSQL without SIGHTLINE_SECRET_KEY', async () => {
      await withDatabase(async (db) => {
        const error = await startFailure(db, { secretKey: undefined });
        expect(error).toBeInstanceOf(ConfigError);
        expect(error.message).toMatch(/SIGHTLINE_SECRET_KEY is required with PostgreSQL/);
      });
    });
  } else {
    it('generates secret.key beside the SQLite file and opens the stored credentials with it after a restart', async () => {
      await withDatabase(async (db, dbPath) => {
        const keyFile = join(dbPath!, '..', 'secret.key');
        expect(existsSync(keyFile)).toBe(false);
        const first = await start(db, { secretKey: undefined });
        expect(statSync(keyFile).mode & 0o777).toBe(0o600);
        const { websiteId, credential } = await connectedWebsite(first, db);
        const generatedId = first.keyring.currentId;
        await stop(first);

        const second = await start(db, { secretKey: undefined });
        expect(second.keyring.currentId).toBe(generatedId);
        const [row] = await db.kysely.selectFrom('integrations').selectAll().where('website_id', '=', websiteId).execute();
        expect(row!.key_id).toBe(generatedId);
        expect(openCredentials(second.keyring, row!)).toEqual({ providerOneRestrictedKey: credential });
        await stop(second);

        // Losing the key file is a clear error, never garbage.
        rmSync(keyFile);
        const error = await startFailure(db, { secretKey: undefined });
        expect(error).toBeInstanceOf(StoredSecretsError);
        expect(error.message).toContain(`key id ${generatedId}`);
      });
    });
  }
});
