/**
 * A profiling driver: runs one setup × hook kind in a loop, so a profiler
 * sees only that path. Not part of `npm run bench`.
 *
 *   npx tsc -p bench/tsconfig.json
 *   node --cpu-prof --cpu-prof-dir=.tmp/prof .tmp/bench/bench/profile.js memory llm 20000
 *   bun bench/profile.ts memory mark
 *
 * Setups: memory, memory-atif, memory-atif-once (each session's trajectory written once, at its end: memory-steady's
 * goal subject), memory-objects (ATOF only on the object encoder), native, bare, bare-stack (a scope stack per session,
 * the isolation the adapter gives), otel-sdk, otel-noop. Kinds: mark, llm,
 * llm_8k, tool, session, stream (64 whole 80-hook sessions per iteration). Prints ns per event (caller side and drained).
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nowNs } from './harness.ts';
import * as fixtures from './support/payloads.ts';
import { bareNativeSetup, memoryAtifPluginSetup, isolatedBareNativeSetup, memoryObjectsPluginSetup, memoryPluginSetup, nativePluginSetup, otelNoopSetup, otelSdkSetup, PluginSetup, type Setup } from './support/setups.ts';
import { HookStream } from './support/stream.ts';

const [setupName = 'memory', kindName = 'mark', itersRaw = '20000', roundsRaw = '10'] = process.argv.slice(2);
const iters = Number(itersRaw);
const rounds = Number(roundsRaw);
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-profile-'));

const makers: Record<string, (dir: string) => Setup> = {
  memory: memoryPluginSetup,
  'memory-atif': memoryAtifPluginSetup,
  // Longer than any round: partial writes are absorbed by the session's final write, as in memory-steady.
  'memory-atif-once': (dir) => memoryAtifPluginSetup(dir, 3_600_000),
  'memory-objects': memoryObjectsPluginSetup,
  native: nativePluginSetup,
  bare: bareNativeSetup,
  'bare-stack': isolatedBareNativeSetup,
  'otel-sdk': () => otelSdkSetup(),
  'otel-noop': () => otelNoopSetup(),
};
const make = makers[setupName];
if (!make) throw new Error(`unknown setup ${setupName}; one of ${Object.keys(makers).join(', ')}`);
const setup = make(dir);
// Under a profiler the process runs tens of times slower than the plugin's flush and shutdown bounds
// assume; a round's last trajectories must still be written inside the round (and counted).
if (setup instanceof PluginSetup) setup.lifecycleTimeoutMs = 3_600_000;

const ids = Array.from({ length: 256 }, (_, i) => fixtures.idsOf('bench-session', i));
const steps: Record<string, { events: number; step: (s: Setup, i: number) => void }> = {
  mark: { events: 1, step: (s, i) => s.mark(fixtures.preLlmCall(ids[i & 255]!)) },
  llm: {
    events: 2,
    step: (s, i) => {
      s.llmStart(fixtures.preApiRequest(ids[i & 255]!, 1, fixtures.SMALL_BODY));
      s.llmEnd(fixtures.postApiRequest(ids[i & 255]!, 1));
    },
  },
  llm_8k: {
    events: 2,
    step: (s, i) => {
      s.llmStart(fixtures.preApiRequest(ids[i & 255]!, 1, fixtures.LARGE_BODY));
      s.llmEnd(fixtures.postApiRequest(ids[i & 255]!, 1));
    },
  },
  tool: {
    events: 2,
    step: (s, i) => {
      s.toolStart(fixtures.preToolCall(ids[i & 255]!, 1));
      s.toolEnd(fixtures.postToolCall(ids[i & 255]!, 1));
    },
  },
  session: {
    events: 2,
    step: (s, i) => {
      s.sessionStart(fixtures.sessionStart(`child-${i & 255}`));
      s.sessionEnd(fixtures.sessionFinalize(`child-${i & 255}`));
    },
  },
};
// Whole sessions of the throughput shape (80 hooks each, 16 in flight): 5,120 events replayed per `iters` count of 64.
const streamed: [string, Record<string, unknown>][] = [];
new HookStream({ events: 64 * 80, concurrency: 16, turns: 6, toolCalls: 2, prefix: 'profile' }).take(64 * 80, (name, payload) => streamed.push([name, payload]));
steps.stream = {
  events: streamed.length,
  step: (s) => {
    if (!(s instanceof PluginSetup)) throw new Error('the stream kind needs a plugin setup');
    for (const [name, payload] of streamed) s.emit(name as never, payload);
  },
};
const kind = steps[kindName];
if (!kind) throw new Error(`unknown kind ${kindName}; one of ${Object.keys(steps).join(', ')}`);

for (let round = 0; round < rounds; round++) {
  await setup.open();
  const t0 = nowNs();
  for (let i = 0; i < iters; i++) kind.step(setup, i);
  const t1 = nowNs();
  await setup.drain();
  const t2 = nowNs();
  await setup.close();
  const events = iters * kind.events;
  process.stderr.write(`${setupName} ${kindName} round ${round}: ${(Number(t1 - t0) / events).toFixed(0)} ns/event, drained ${(Number(t2 - t0) / events).toFixed(0)}\n`);
}
rmSync(dir, { recursive: true, force: true });
