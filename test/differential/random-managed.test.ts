// The random-stream differential with managed execution: streams nobody
// wrote by hand in which the host runs some LLM and tool calls through
// `hooks.execute` (returning or throwing at once, a microtask later, or late
// while other sessions go on), with its own request and execution
// middleware, through the plugin on the memory relay and on native, without
// `adaptive`, with it, and with its response and tool cache
// (random-managed.ts). A failure names the seed and the setting;
// `compareManagedSeed(seed)` replays it. test/slow/random-managed.test.ts
// runs more and larger seeds.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { randomStream } from './random-stream.ts';
import { compareManagedSeed } from './random-managed.ts';

const SEEDS = Array.from({ length: 5 }, (_, i) => i + 1);

describe('random managed streams', () => {
  it('run managed calls, and leave the streams without the option as they were', () => {
    const managed = randomStream(4, { managed: true }).managedLines;
    expect(managed.filter((line) => line.hook === '@execute').length).toBeGreaterThan(2);
    expect(managed.some((line) => line.hook === '@settle')).toBe(true);
    expect(JSON.stringify(randomStream(4, { managed: true }).managedLines)).toBe(JSON.stringify(managed));
    expect(randomStream(4).lines.some((line) => (line.hook as string).startsWith('@'))).toBe(false);
  });
});

const title = nativeAvailable ? 'random managed streams: memory and native hand back and write the same' : `random managed streams: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareManagedSeed(seed)).toEqual([]);
  });
});
