// The OTLP mappings of LLM calls on random requests and responses, memory
// against native (test/support/random-llm-shapes.ts says what is drawn).
// A few seeds here; test/slow/random-llm-shapes-otlp.test.ts runs more.
// The seeds are fixed; a failure names its seed, and
// `compareLlmShapeSeed(seed, receiver)` replays it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { compareLlmShapeSeed } from '../support/random-llm-shapes.ts';

const SEEDS = Array.from({ length: 4 }, (_, i) => i + 1);

/** With Gemini's shapes among the others (`llmShapeLines`' `gemini`). */
const GEMINI_SEEDS = Array.from({ length: Number(process.env.RANDOM_GEMINI_SEEDS ?? 3) }, (_, i) => i + 1);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe.skipIf(!nativeAvailable)(`random LLM requests and responses: memory and native send the same OTLP${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareLlmShapeSeed(seed, receiver)).toEqual([]);
  });
});

describe.skipIf(!nativeAvailable)(`random Gemini requests and answers among them: memory and native send the same OTLP${nativeAvailable ? '' : ' (skipped)'}`, () => {
  it.each(GEMINI_SEEDS)('seed %i', async (seed) => {
    expect(await compareLlmShapeSeed(seed, receiver, { gemini: true })).toEqual([]);
  });
});
