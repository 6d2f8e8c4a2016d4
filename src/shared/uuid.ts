/**
 * UUIDv7 generation (RFC 9562), the id format the native relay stamps on
 * every scope and mark.
 *
 * Ids are time-ordered and strictly increasing within one process: inside a
 * millisecond the 74 random bits act as a counter that advances by a random
 * step, so ids minted in a burst still sort in creation order (native does
 * the same). Randomness comes from `crypto.getRandomValues`, drawn in blocks
 * because one call per id would dominate the cost of an event.
 *
 * @module
 */

const POOL_SIZE = 512;
const pool = new Uint32Array(POOL_SIZE);
let poolIndex = POOL_SIZE;

function random32(): number {
  if (poolIndex === POOL_SIZE) {
    crypto.getRandomValues(pool);
    poolIndex = 0;
  }
  return pool[poolIndex++]!;
}

/**
 * The byte values as two hex digits, filled by the first `buildPrefix` (which every id's first call runs):
 * a loop at module scope would run, and on Bun compile the string builtins it calls, on every import of the
 * main entry, including a host's that never records (bench/RESULTS.md, "Issue 21: the main entry's import on
 * Bun, what runs at import").
 */
const HEX: string[] = [];

const TWO_32 = 0x1_0000_0000;
const TWO_30 = 0x4000_0000;

// The 74-bit counter: `counterA` (rand_a, 12 bits), `counterHigh` (top 30 bits
// of rand_b) and `counterLow` (low 32 bits of rand_b).
let lastMs = -1;
let counterA = 0;
let counterHigh = 0;
let counterLow = 0;
/** Everything but the last 8 hex digits; it only changes with the millisecond or a counter carry. */
let prefix = '';

/** Returns a new UUIDv7 string, strictly greater than any returned before in this process. */
export function uuidv7(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // Seed with the top counter bit clear so a burst has room to count up.
    counterA = random32() & 0x7ff;
    counterHigh = random32() % TWO_30;
    counterLow = random32();
    prefix = buildPrefix();
  } else {
    counterLow += (random32() & 0xffffff) + 1;
    if (counterLow >= TWO_32) {
      counterLow -= TWO_32;
      if (++counterHigh === TWO_30) {
        counterHigh = 0;
        if (++counterA === 0x1000) {
          // Counter exhausted: borrow the next millisecond rather than repeat.
          lastMs++;
          counterA = random32() & 0x7ff;
        }
      }
      prefix = buildPrefix();
    }
  }
  // One join of two flat strings: the last 8 digits are below V8's rope threshold (13 characters), so they
  // are made flat; `prefix + a + b + c + d` would be a rope of four joins, which every event object and map
  // key holding the id keeps, every collection copies and every reader walks.
  return prefix + (HEX[counterLow >>> 24]! + HEX[(counterLow >>> 16) & 0xff]! + HEX[(counterLow >>> 8) & 0xff]! + HEX[counterLow & 0xff]!);
}

function buildPrefix(): string {
  if (HEX.length === 0) for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, '0'));
  const ms = lastMs;
  const timeHigh = Math.floor(ms / TWO_32); // top 16 of the 48 time bits
  const timeLow = ms >>> 0;
  // Made once per millisecond: `join` writes one flat string where `+` would make a rope.
  return [
    HEX[(timeHigh >>> 8) & 0xff]!,
    HEX[timeHigh & 0xff]!,
    HEX[timeLow >>> 24]!,
    HEX[(timeLow >>> 16) & 0xff]!,
    '-',
    HEX[(timeLow >>> 8) & 0xff]!,
    HEX[timeLow & 0xff]!,
    '-',
    HEX[0x70 | (counterA >>> 8)]!,
    HEX[counterA & 0xff]!,
    '-',
    HEX[0x80 | (counterHigh >>> 24)]!,
    HEX[(counterHigh >>> 16) & 0xff]!,
    '-',
    HEX[(counterHigh >>> 8) & 0xff]!,
    HEX[counterHigh & 0xff]!,
  ].join('');
}
