import { randomBytes } from 'node:crypto';

// 24 lowercase hex characters, time-ordered like a MongoDB ObjectId:
// 4 bytes of seconds, 5 random bytes fixed per process, 3 bytes of a counter.
const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newId(now = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return seconds + processRandom + counter.toString(16).padStart(6, '0');
}

export const ID_PATTERN = '^[0-9a-f]{24}$';

export function isId(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
