/**
 * What `instrumentLangChain` adds to a LangChain run against passing the handler in `callbacks`, and what it adds to
 * the runs in the same process that it does not record.
 *
 * The run: `prompt.pipe(model).pipe(parser).invoke(...)` (a chain and its three children, so four runs LangChain
 * configures callbacks for) with `FakeListChatModel` from `@langchain/core/utils/testing`. Subjects, batches
 * interleaved:
 *
 * - unrecorded, as in a process where nothing imported `@langchain/core/context` (LangChain's AsyncLocalStorage not
 *   set: its global slot emptied for the batch);
 * - unrecorded, in a context other than the one `instrumentLangChain` was called in (the process has LangChain's
 *   AsyncLocalStorage, as every process that imports the adapter has, and no handler here);
 * - recorded with the handler in `callbacks`;
 * - recorded by `instrumentLangChain`'s configure hook, the runs started in the context it was called in (an async
 *   function that called it and then runs each batch's jobs).
 *
 * Recorded runs go to a memory relay writing ATOF only (drain timed: `plugin.flush()`).
 *
 * @module
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { CaseReport, consume, figure, interleave, iterations, ratio, rowOf, type Subject, type Timing } from '../harness.ts';
import { instrumentLangChain, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';

const report = new CaseReport('langchain-run', 'LangChain runs: instrumentLangChain\'s configure hook vs the handler in callbacks; unrecorded runs in another context');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-langchain-'));
const atof = path.join(dir, 'langchain.jsonl');

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const hooks = new HookRegistry({ logger });
const plugin = createNemoRelayPlugin({
  backend: createMemoryRelay({ logger }),
  env: {},
  logger,
  settings: { atofEnabled: true, atofOutputDirectory: dir, atofFilename: path.basename(atof), atofMode: 'overwrite', atifEnabled: false },
});
plugin.register(hooks);

const chain = ChatPromptTemplate.fromMessages([['system', 'You answer briefly.'], ['human', '{question}']])
  .pipe(new FakeListChatModel({ responses: ['It is sunny in Paris.'] }))
  .pipe(new StringOutputParser());
const oneRun = async (callbacks?: NemoRelayCallbackHandler[]) => (await chain.invoke({ question: 'Weather in Paris?' }, callbacks ? { callbacks } : {})).length;

/** Runs each job given to it, one at a time, in the async context `setup` was called in (not the caller's). */
function contextOf(setup: () => void): (job: () => Promise<number>) => Promise<number> {
  type Job = { job: () => Promise<number>; done: (value: number) => void; failed: (error: unknown) => void };
  let wake!: (job: Job) => void;
  let next = new Promise<Job>((resolve) => (wake = resolve));
  // A timer's callback starts a context of its own: an async function called from here would run `setup` in this one.
  setImmediate(() => void (async () => {
    setup();
    for (;;) {
      const { job, done, failed } = await next;
      next = new Promise<Job>((resolve) => (wake = resolve));
      try {
        done(await job());
      } catch (error) {
        failed(error);
      }
    }
  })());
  return (job) => new Promise<number>((done, failed) => wake({ job, done, failed }));
}

const inInstrumented = contextOf(() => {
  instrumentLangChain(hooks);
});
const handler = new NemoRelayCallbackHandler(hooks);

const ALS_KEY = Symbol.for('ls:tracing_async_local_storage');
const slots = globalThis as unknown as Record<symbol, unknown>;
const langChainStorage = slots[ALS_KEY];
if (langChainStorage === undefined) throw new Error('LangChain\'s AsyncLocalStorage is not set: the adapter imports @langchain/core/context');

/** ATOF bytes one job writes (flushed), to check each subject records or not as it says. */
async function writes(job: () => Promise<number>): Promise<number> {
  await plugin.flush();
  const before = statSync(atof, { throwIfNoEntry: false })?.size ?? 0;
  await job();
  await plugin.flush();
  return (statSync(atof, { throwIfNoEntry: false })?.size ?? 0) - before;
}
const recordedByHook = await writes(() => inInstrumented(() => oneRun()));
const recordedByCallbacks = await writes(() => oneRun([handler]));
const recordedElsewhere = await writes(() => oneRun());
if (recordedByHook <= 0 || recordedByCallbacks <= 0 || recordedElsewhere !== 0) {
  throw new Error(`subjects do not record as named: hook ${recordedByHook} B, callbacks ${recordedByCallbacks} B, other context ${recordedElsewhere} B`);
}

const runs = iterations(400, 2);
const NO_STORAGE = 'unrecorded, no LangChain AsyncLocalStorage (adapter never imported)';
const OTHER = 'unrecorded, another context than instrumentLangChain\'s';
const CALLBACKS = 'recorded, handler in callbacks';
const HOOK = 'recorded, instrumentLangChain (configure hook)';
const subjects: Subject[] = [
  {
    name: NO_STORAGE,
    iters: runs,
    before() {
      slots[ALS_KEY] = undefined;
    },
    async run(n) {
      for (let i = 0; i < n; i++) consume(await oneRun());
    },
    after() {
      slots[ALS_KEY] = langChainStorage;
    },
  },
  {
    name: OTHER,
    iters: runs,
    async run(n) {
      for (let i = 0; i < n; i++) consume(await oneRun());
    },
  },
  {
    name: CALLBACKS,
    iters: runs,
    async run(n) {
      for (let i = 0; i < n; i++) consume(await oneRun([handler]));
    },
    drain: () => plugin.flush(),
  },
  {
    name: HOOK,
    iters: runs,
    run: (n) =>
      inInstrumented(async () => {
        for (let i = 0; i < n; i++) consume(await oneRun());
        return n;
      }),
    drain: () => plugin.flush(),
  },
];

const timings = await interleave(subjects, { reps: 21, warmup: 2 });
const by = (name: string): Timing => timings.find((t) => t.name === name)!;
report.figure(figure('hook_over_callbacks', `${HOOK} / ${CALLBACKS}, per invoke, drain included`, ratio(by(HOOK), by(CALLBACKS), true), 'x'));
report.figure(figure('callbacks_over_unrecorded', `${CALLBACKS} / ${OTHER}, per invoke, drain included`, ratio(by(CALLBACKS), by(OTHER), true), 'x'));
report.figure(figure('other_context_over_no_storage', `${OTHER} / ${NO_STORAGE}, per invoke`, ratio(by(OTHER), by(NO_STORAGE)), 'x'));
for (const timing of timings) report.row(rowOf(timing.name, `${timing.name} (per invoke)`, timing));
report.fact('atof_bytes_per_invoke.hook', recordedByHook);
report.fact('atof_bytes_per_invoke.callbacks', recordedByCallbacks);
report.note('Per invoke = one prompt | FakeListChatModel | StringOutputParser invoke (4 LangChain runs). Recorded runs: memory relay, ATOF only.');
report.write();
handler.close();
await plugin.shutdown();
rmSync(dir, { recursive: true, force: true });
