// The random-stream differential (test/differential/random-streams.test.ts)
// against the OTLP output: each seed's stream through the plugin on memory
// and on native with a plugins.toml OTLP endpoint of each type (full, gen_ai
// with log records, openinference; see ENDPOINTS) into a loopback receiver,
// compared as test/export/otlp-native-parity.test.ts compares the recorded
// streams: spans and log records equal after ids become labels and times
// ranks, but for the SDK's own resource keys. A failure names the seed and
// the endpoint; the stream replays from the seed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type DecodedSpan, type Receiver } from '../support/otlp-receiver.ts';
import { errorSpanAsOk, normalizeLogs, normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';
import { replayWithOtlp, type OtlpReplayOptions } from '../support/otlp-replay.ts';
import { randomStream } from '../differential/random-stream.ts';
import { firstDifference } from '../differential/random-diff.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

const SEEDS = Array.from({ length: Number(process.env.RANDOM_OTLP_SEEDS ?? 40) }, (_, i) => Number(process.env.RANDOM_OTLP_FROM ?? 3001) + i);
const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };

let http: Receiver;
beforeAll(async () => {
  http = await startHttpReceiver();
});
afterAll(async () => {
  await http?.close();
});

async function capture(backend: 'native' | 'memory', lines: readonly HookLine[], options: OtlpReplayOptions) {
  http.requests.length = 0;
  const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
  const result = await replayWithOtlp(relay, lines, options);
  return { spans: [...http.spans()], logs: [...http.logs()], result };
}

/**
 * Memory's spans as native sends them for an LLM call that ended in error
 * (docs/backends/memory-and-native.md, "An LLM call closed by
 * api_request_error"): native forces OK on a manual LLM end, memory says
 * ERROR. The spans are those of memory's failed LLM ends (span id = the low
 * 64 bits of the ATOF uuid); a failed tool's span says ERROR on both.
 */
function failedLlmAsNative(spans: DecodedSpan[], atofLines: readonly string[]): DecodedSpan[] {
  const failed = new Set(
    atofLines
      .map((line) => JSON.parse(line) as { uuid: string; category?: string; scope_category?: string; metadata?: Record<string, unknown> | null })
      .filter((e) => e.category === 'llm' && e.scope_category === 'end' && e.metadata?.['error.type'] !== undefined)
      .map((e) => e.uuid.replace(/-/g, '').slice(16)),
  );
  return spans.map((span) => {
    if (!failed.has(span.spanId) || span.status.code !== 2) return span;
    return errorSpanAsOk(span);
  });
}

/** `RANDOM_OTLP_ONLY=full` (or `gen_ai`, `openinference`) runs one endpoint type. */
const ONLY = process.env.RANDOM_OTLP_ONLY;
const ENDPOINTS: [string, (url: string) => OtlpReplayOptions][] = [
  ['full', (url) => ({ endpoints: [{ type: 'full', endpoint: url }] })],
  ['gen_ai with logs', (url) => ({ endpoints: [{ type: 'gen_ai', endpoint: url }], logs: ['enabled = true'] })],
  ['openinference', (url) => ({ endpoints: [{ type: 'openinference', endpoint: url }] })],
];

/** Every difference of one seed, each naming the seed and the endpoint. `gemini`: streams with Gemini sessions (random-stream.ts). */
async function compareOtlp(seed: number, gemini = process.env.RANDOM_OTLP_GEMINI === '1'): Promise<string[]> {
  const stream = randomStream(seed, { gemini });
  const found: string[] = [];
  for (const [name, build] of ENDPOINTS.filter(([n]) => ONLY === undefined || n.startsWith(ONLY))) {
    const native = await capture('native', stream.lines, build(http.url));
    const memory = await capture('memory', stream.lines, build(http.url));
    const say = (what: string, difference: string | null) => difference !== null && found.push(`seed ${seed}, ${name}: ${what}: ${difference}`);
    if (memory.result.problems.length > 0) found.push(`seed ${seed}, ${name}: memory warned: ${memory.result.problems.join(' | ')}`);
    say('spans', firstDifference(normalizeSpans(failedLlmAsNative(memory.spans, memory.result.atofLines), opts), normalizeSpans(native.spans, opts), '$', false));
    // The session instance of a log record is its scope's propagation root: for a second subagent open at once,
    // the subagent itself on native (docs/backends/memory-and-native.md, "Concurrent sibling scopes").
    const logs = (list: typeof memory.logs) => normalizeLogs(list, opts).map((log) => (stream.concurrentSubagents ? { ...log, attributes: { ...log.attributes, 'nemo_relay.session.instance_id': '<dropped>' } } : log));
    say('log records', firstDifference(logs(memory.logs), logs(native.logs), '$', false));
  }
  if (found.length > 0) found.push(`stream of seed ${seed}: ${stream.lines.length} hooks\n  ${stream.outline.join('\n  ')}`);
  return found;
}

const title = nativeAvailable ? 'random streams: memory and native send the same OTLP' : `random streams OTLP: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareOtlp(seed)).toEqual([]);
  });
});

/** Streams with Gemini sessions, whose answers native reads with its Gemini codec (src/formats/gemini.ts). */
const GEMINI_SEEDS = Array.from({ length: Number(process.env.RANDOM_OTLP_GEMINI_SEEDS ?? 20) }, (_, i) => 3001 + i);

describe.skipIf(!nativeAvailable)(`${title}, with Gemini sessions`, () => {
  it.each(GEMINI_SEEDS)('seed %i', async (seed) => {
    expect(await compareOtlp(seed, true)).toEqual([]);
  });
});
