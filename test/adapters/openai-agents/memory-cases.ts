// Bounded memory (issue 23, item 17): the adapter keeps nothing for a run
// that failed, was abandoned (its promise dropped while the model never
// answers) or paused for an approval nobody gives. Measured structurally:
// the adapter's own counts of what it holds, every session ended (by the
// run, or when the garbage collector took what the run left), and the heap
// after a forced collection per run, against the first runs of the same
// case. No timing is asserted. `npm test` runs the cases over 1,000 runs;
// test/slow/ over 20,000.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Runner, Usage, tool, type Model, type ModelResponse } from '@openai/agents';
import * as z from 'zod';
import { Adapter } from '../../../src/adapters/openai-agents/adapter.ts';
import { addRunSource } from '../../../src/adapters/openai-agents/patch.ts';
import { HOOK_NAMES } from '../../../src/hooks/index.ts';
import { HookRegistry } from '../../../src/hooks/registry.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { useTracing, type Tracing } from './support.ts';

/** The leak this guards against was about 1,300 bytes per failed run. */
const MAX_BYTES_PER_RUN = 150;

type GcHost = { gc?: () => void; Bun?: { gc(force: boolean): void } };

/** A full collection, however this runtime offers one; undefined when it offers none. */
function gcFunction(): (() => void) | undefined {
  const host = globalThis as GcHost;
  if (typeof host.gc === 'function') return host.gc;
  if (typeof host.Bun?.gc === 'function') return () => host.Bun!.gc(true);
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    if (typeof gc === 'function') return gc as () => void;
  } catch {
    // no way to force a collection here
  }
  return undefined;
}

const gc = gcFunction();

/**
 * The heap after forced collections: at least `rounds` of them, then more
 * (up to 100) until `until` holds. Bun's collector scans the stack
 * conservatively, so a stale word can keep a dead run a little longer:
 * another round, from another stack, frees it.
 */
async function settledHeap(until: () => boolean = () => true, rounds = 4): Promise<number> {
  // Up to 100 rounds: they stop as soon as `until` holds, and under a loaded CI (Deno with the whole
  // suite beside it) the last of 200 abandoned runs was still waiting for its finalizer after 20.
  for (let i = 0; i < 100 && (i < rounds || !until()); i++) {
    gc!();
    // Finalization callbacks run as tasks after a collection.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return process.memoryUsage().heapUsed;
}

interface Probe {
  adapter: Adapter;
  counts: Map<string, number>;
  exitReasons: Map<string, number>;
  remove(): void;
}

/** The adapter alone, with one subscriber counting the hooks (no plugin: its own memory is not measured here). */
function probe(): Probe {
  const hooks = new HookRegistry({ logger: silentLogger });
  const counts = new Map<string, number>();
  const exitReasons = new Map<string, number>();
  for (const name of HOOK_NAMES) {
    hooks.on(name, (payload) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if (name === 'on_session_end') {
        const reason = String((payload as Record<string, unknown>).turn_exit_reason);
        exitReasons.set(reason, (exitReasons.get(reason) ?? 0) + 1);
      }
    });
  }
  const adapter = new Adapter(hooks, { logger: silentLogger });
  const remove = addRunSource(adapter);
  return { adapter, counts, exitReasons, remove: () => (adapter.dispose(), remove()) };
}


const reply = (output: unknown[]): ModelResponse => ({ output: output as ModelResponse['output'], usage: new Usage({ requests: 1, inputTokens: 3, outputTokens: 1, totalTokens: 4 }), responseId: 'r' });

/** Runs `batch(n)` until `total` runs are done, `width` at a time. */
async function runMany(total: number, width: number, start: (index: number) => Promise<unknown>): Promise<void> {
  for (let done = 0; done < total; done += width) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = done; i < Math.min(total, done + width); i++) batch.push(start(i).catch(() => undefined));
    await Promise.all(batch);
  }
}

/**
 * The three cases over `RUNS` runs each; the heap is compared between the
 * first `WARM_UP` runs and the rest when `heap` is set (a few thousand runs
 * are needed for the per-run figure to rise above the collector's noise).
 */
export function memoryCases(RUNS: number, WARM_UP: number, heap: boolean, tracing: Tracing): void {
  if (gc === undefined) {
    console.log('agents memory test: this runtime offers no way to force a garbage collection; the cases are skipped');
    return;
  }
  let current: Probe | undefined;
  afterEach(() => {
    current?.remove();
    current = undefined;
  });
  const perRun = (after: number, before: number): number => {
    if (!heap) return 0;
    const bytes = (after - before) / (RUNS - WARM_UP);
    console.log(`agents memory (${tracing}): ${bytes.toFixed(1)} bytes retained per run after ${RUNS} runs`);
    return bytes;
  };
  /**
   * The heap after collections when it is measured; when it is not, and the finalizers are `needed`, collections
   * only until the runs are drained: in `npm test` this file shares its process with the files before it, whose
   * modules make each full collection slow, and the four rounds a steady heap figure wants measure nothing here.
   */
  const settle = async (needed: boolean): Promise<number> => {
    const drained = (): boolean => current === undefined || (current.adapter.state().liveRuns === 0 && current.adapter.state().heldSessions === 0);
    return heap ? settledHeap(drained) : needed ? settledHeap(drained, 1) : 0;
  };
describe(`OpenAI Agents adapter memory (${tracing})`, () => {
  it(`keeps nothing for ${RUNS} runs that fail (each ended at once)`, async () => {
    useTracing(tracing);
    current = probe();
    const failing: Model = {
      async getResponse() {
        throw Object.assign(new Error('model unavailable'), { status: 400 });
      },
      async *getStreamedResponse() {
        throw new Error('not used');
      },
    };
    const runner = new Runner({ modelProvider: { getModel: () => failing } });
    const agent = new Agent({ name: 'fails', instructions: 'x', model: 'm' });
    await runMany(WARM_UP, 100, (i) => runner.run(agent, `attempt ${i}`));
    const before = await settle(false);
    await runMany(RUNS - WARM_UP, 100, (i) => runner.run(agent, `attempt ${i}`));
    const after = await settle(false);
    expect(current.adapter.state()).toEqual({ liveRuns: 0, heldSessions: 0, openSessions: 0 });
    expect(current.counts.get('on_session_end')).toBe(RUNS);
    expect(current.counts.get('on_session_finalize')).toBe(RUNS);
    expect(current.counts.get('api_request_error')).toBe(RUNS);
    expect(perRun(after, before)).toBeLessThan(MAX_BYTES_PER_RUN);
  }, 180_000);

  it(`ends ${RUNS} abandoned runs (a model that never answers, the run's promise dropped) when they are collected`, async () => {
    useTracing(tracing);
    current = probe();
    const silent: Model = {
      getResponse: () => new Promise<never>(() => {}),
      async *getStreamedResponse() {
        throw new Error('not used');
      },
    };
    const runner = new Runner({ modelProvider: { getModel: () => silent } });
    const agent = new Agent({ name: 'waits', instructions: 'x', model: 'm' });
    // Abandoned a hundred at a time, as an app drops requests over time: 20,000 at once
    // would measure the heap's own high-water mark, which the first batch then sets.
    const startAbandoned = async (count: number): Promise<void> => {
      for (let done = 0; done < count; done += 100) {
        for (let i = done; i < Math.min(count, done + 100); i++) void runner.run(agent, `question ${i}`);
        // Let each run reach its model call before its promise is forgotten.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    await startAbandoned(WARM_UP);
    const before = await settle(false);
    await startAbandoned(RUNS - WARM_UP);
    const after = await settle(true);
    expect(current.counts.get('pre_api_request')).toBe(RUNS);
    expect(current.adapter.state()).toEqual({ liveRuns: 0, heldSessions: 0, openSessions: 0 });
    expect(current.exitReasons.get('abandoned')).toBe(RUNS);
    expect(current.counts.get('on_session_finalize')).toBe(RUNS);
    expect(perRun(after, before)).toBeLessThan(MAX_BYTES_PER_RUN);
  }, 180_000);

  it(`closes the sessions of ${RUNS} runs paused for an approval nobody gives, when their state is collected`, async () => {
    useTracing(tracing);
    current = probe();
    const askForApproval: Model = {
      async getResponse() {
        return reply([{ type: 'function_call', callId: 'call_1', name: 'delete_everything', arguments: '{}', status: 'completed' }]);
      },
      async *getStreamedResponse() {
        throw new Error('not used');
      },
    };
    const runner = new Runner({ modelProvider: { getModel: () => askForApproval } });
    const dangerous = tool({ name: 'delete_everything', description: 'x', parameters: z.object({}), needsApproval: true, execute: async () => 'done' });
    const agent = new Agent({ name: 'asks', instructions: 'x', model: 'm', tools: [dangerous] });
    let paused = 0;
    const pause = (i: number) =>
      runner.run(agent, `request ${i}`).then((result) => {
        if (result.interruptions.length === 1) paused += 1;
      });
    await runMany(WARM_UP, 100, pause);
    const before = await settle(false);
    await runMany(RUNS - WARM_UP, 100, pause);
    const after = await settle(true);
    expect(paused).toBe(RUNS);
    expect(current.counts.get('pre_approval_request')).toBe(RUNS);
    expect(current.adapter.state()).toEqual({ liveRuns: 0, heldSessions: 0, openSessions: 0 });
    expect(current.counts.get('on_session_finalize')).toBe(RUNS);
    expect(perRun(after, before)).toBeLessThan(MAX_BYTES_PER_RUN);
  }, 180_000);

  // Paused inside a handoff, the handed-to agent's link stays open with the session: a state nobody resumes closes both.
  it(`closes the sessions and the handed-to agents' links of ${RUNS} runs paused inside a handoff, when their state is collected`, async () => {
    useTracing(tracing);
    current = probe();
    const models: Record<string, Model> = {
      front: {
        async getResponse() {
          return reply([{ type: 'function_call', callId: 'call_to_ops', name: 'transfer_to_ops', arguments: '{}', status: 'completed' }]);
        },
        async *getStreamedResponse() {
          throw new Error('not used');
        },
      },
      back: {
        async getResponse() {
          return reply([{ type: 'function_call', callId: 'call_1', name: 'delete_everything', arguments: '{}', status: 'completed' }]);
        },
        async *getStreamedResponse() {
          throw new Error('not used');
        },
      },
    };
    const runner = new Runner({ modelProvider: { getModel: (name) => models[name ?? 'front']! } });
    const dangerous = tool({ name: 'delete_everything', description: 'x', parameters: z.object({}), needsApproval: true, execute: async () => 'done' });
    const ops = new Agent({ name: 'ops', instructions: 'x', model: 'back', tools: [dangerous], handoffDescription: 'ops' });
    const agent = new Agent({ name: 'front', instructions: 'x', model: 'front', handoffs: [ops] });
    let paused = 0;
    const pause = (i: number) =>
      runner.run(agent, `request ${i}`).then((result) => {
        if (result.interruptions.length === 1 && result.lastAgent?.name === 'ops') paused += 1;
      });
    await runMany(WARM_UP, 100, pause);
    const before = await settle(false);
    await runMany(RUNS - WARM_UP, 100, pause);
    const after = await settle(true);
    expect(paused).toBe(RUNS);
    expect(current.counts.get('pre_approval_request')).toBe(RUNS);
    expect(current.adapter.state()).toEqual({ liveRuns: 0, heldSessions: 0, openSessions: 0 });
    expect([current.counts.get('subagent_start'), current.counts.get('subagent_stop')]).toEqual([RUNS, RUNS]);
    expect(current.counts.get('on_session_finalize')).toBe(2 * RUNS);
    expect(perRun(after, before)).toBeLessThan(MAX_BYTES_PER_RUN);
  }, 180_000);
});
}
