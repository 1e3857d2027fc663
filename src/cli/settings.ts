import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { loadKeyring } from '../crypto/keyring.ts';
import { databaseUrlKind, sqliteFileFromUrl } from '../db/database-url.ts';
import { fail } from './failure.ts';

// The settings are checked whole before a command touches the database: a bad PORT or a bad
// secret key must not leave a half-done start behind (a created file, an applied migration).
// A bad setting is exit 1: the command line was right, the environment is not.


/** The configuration from the environment with DATABASE_URL's shape checked; exits 1 when it is wrong. */
export function configOrFail(): Config {
  try {
    const config = loadConfig();
    try {
      databaseUrlKind(config.databaseUrl);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    return config;
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 1);
    throw error;
  }
}


/**
 * What the server needs before it starts: the configuration, a port it can listen on, and the
 * secret keys (given ones decoded, a generated secret.key read if it exists), all without
 * creating anything.
 */
export function serverSettingsOrFail(): Config {
  const config = configOrFail();
  try {
    if (config.port > 65_535) throw new ConfigError(`PORT must be at most 65535, got "${config.port}"`);
    const file = sqliteFileFromUrl(config.databaseUrl);
    const engine = databaseUrlKind(config.databaseUrl);
    const keyFileExists = file !== null && existsSync(join(dirname(file), 'secret.key'));
    // Without a key file and without SIGHTLINE_SECRET_KEY, passing no path checks the rest and creates nothing.
    loadKeyring(config, keyFileExists ? file : null, engine);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 1);
    throw error;
  }
  return config;
}
