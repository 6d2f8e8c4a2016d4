// The OTLP mappings of tool calls on random arguments and results, memory
// against native (test/support/random-tool-values.ts says what is drawn).
// Bounded: the seeds are fixed; a failure names its seed, and
// `compareToolValueSeed(seed, receiver)` replays it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { compareToolValueSeed } from '../support/random-tool-values.ts';

const SEEDS = Array.from({ length: 150 }, (_, i) => i + 100);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe.skipIf(!nativeAvailable)(`random tool arguments and results: memory and native send the same OTLP${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareToolValueSeed(seed, receiver)).toEqual([]);
  });
});
