import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

// Where the CLI and the MCP server find the server and the credential: SIGHTLINE_API_BASE and
// SIGHTLINE_TOKEN first, then ~/.config/sightline/config.json (mode 0600), written by `login`.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

export interface StoredSettings {
  baseUrl?: string;
  token?: string;
}

export interface ClientSettings {
  baseUrl: string;
  token: string | undefined;
}

type Env = Record<string, string | undefined>;

export function settingsPath(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'sightline', 'config.json');
}

export function readStoredSettings(env: Env = process.env): StoredSettings {
  const path = settingsPath(env);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StoredSettings;
  } catch {
    throw new Error(`${path} is not valid JSON; fix it or run "sightline logout"`);
  }
}

export function writeStoredSettings(settings: StoredSettings, env: Env = process.env): string {
  const path = settingsPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

export function removeStoredToken(env: Env = process.env): boolean {
  const stored = readStoredSettings(env);
  if (!stored.token) return false;
  const { token: _token, ...rest } = stored;
  if (Object.keys(rest).length === 0) rmSync(settingsPath(env));
  else writeStoredSettings(rest, env);
  return true;
}

export function resolveClientSettings(env: Env = process.env): ClientSettings {
  const stored = readStoredSettings(env);
  return {
    baseUrl: (env.SIGHTLINE_API_BASE || stored.baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, ''),
    token: env.SIGHTLINE_TOKEN || stored.token,
  };
}
