import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Country flags, served by Sightline itself (website-api.md section 7): the 4:3 SVGs of the
// flag-icons package (MIT), one file per lower-case ISO 3166-1 alpha-2 code, shipped in
// node_modules and read from there: no request leaves the server and nothing is fetched at run
// time. The set of codes is the package's files, listed once; a file is only ever opened for a
// code of that set, so no request path reaches the file system.

export const FLAGS_PATH = '/flags';
const PACKAGE = 'flag-icons';
/** A flag's file name, which is also its name under FLAGS_PATH: the code, lower case, then .svg. */
export const FLAG_FILE_NAME = /^([a-z]{2})\.svg$/;

let directory: string | null = null;
let codes: ReadonlySet<string> | null = null;

function flagsDirectory(): string {
  directory ??= join(dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`)), 'flags', '4x3');
  return directory;
}

/** The lower-case codes that have a flag; read from the package on first use (a missing package fails there). */
export function flagCodes(): ReadonlySet<string> {
  codes ??= new Set(
    readdirSync(flagsDirectory())
      .map((name) => FLAG_FILE_NAME.exec(name)?.[1])
      .filter((code): code is string => code !== undefined),
  );
  return codes;
}

/** The SVG file of a code of flagCodes(); null for any other string. */
export function flagFile(code: string): string | null {
  return flagCodes().has(code) ? join(flagsDirectory(), `${code}.svg`) : null;
}

/** The absolute URL of a country's flag under the public URL; null for no country or one without a flag. */
export function flagUrl(publicUrl: string, countryCode: string | null | undefined): string | null {
  if (!countryCode) return null;
  const code = countryCode.toLowerCase();
  return flagCodes().has(code) ? `${publicUrl}${FLAGS_PATH}/${code}.svg` : null;
}
