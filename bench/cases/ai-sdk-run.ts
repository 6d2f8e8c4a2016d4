/**
 * What `instrumentAiSdk` adds to a whole AI SDK run, and the share of it its step binding takes.
 *
 * The run: `generateText` with a tool and two steps (a tool call, then the answer) against `MockLanguageModelV4`
 * (`ai/test`), so the SDK's own work is all that is timed besides ours. Four subjects, batches interleaved:
 *
 * - the bare SDK, nothing installed;
 * - the bare SDK with only the step binding (`trackSteps`: an AsyncLocalStorage bound to the `ai:telemetry`
 *   tracing channel's `start`, which makes the SDK take its `tracePromise` path for every span);
 * - `instrumentAiSdk` installed but its binding kept off (the channel's `bindStore` made a no-op while it installs:
 *   the integration and its recording alone);
 * - `instrumentAiSdk` as shipped.
 *
 * Recorded runs go to a memory relay writing ATOF only (drain timed: `plugin.flush()`). Each subject installs in
 * `before` and uninstalls in `after`, untimed.
 *
 * @module
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import * as diagnostics from 'node:diagnostics_channel';
import os from 'node:os';
import path from 'node:path';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import * as z from 'zod';
import { CaseReport, consume, figure, interleave, iterations, ratio, rowOf, type Subject, type Timing } from '../harness.ts';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { trackSteps } from '../../src/adapters/ai-sdk/step-context.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';

const report = new CaseReport('ai-sdk-run', 'AI SDK generateText, 2 steps and a tool: instrumentAiSdk with and without its step binding vs the bare SDK');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-ai-sdk-'));

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A model that asks for the tool on the first call of a run and answers on the second. */
function model() {
  return new MockLanguageModelV4({
    provider: 'mock-provider',
    modelId: 'bench-model',
    doGenerate: async ({ prompt }) => {
      const answered = prompt.some((message) => message.role === 'tool');
      return (answered
        ? { content: [{ type: 'text', text: 'It is sunny in Paris.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(40, 8), warnings: [], response: { id: 'resp-2', modelId: 'bench-model', timestamp: new Date(0) } }
        : { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{"city":"Paris"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(20, 5), warnings: [], response: { id: 'resp-1', modelId: 'bench-model', timestamp: new Date(0) } }) as never;
    },
  });
}

const bench = model();
const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'sunny' }) });

async function oneRun(): Promise<number> {
  const result = await generateText({ model: bench, prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(2) });
  return result.steps.length;
}

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const hooks = new HookRegistry({ logger });
const plugin = createNemoRelayPlugin({
  backend: createMemoryRelay({ logger }),
  env: {},
  logger,
  settings: { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'ai-sdk.jsonl', atofMode: 'overwrite', atifEnabled: false },
});
plugin.register(hooks);

const start = diagnostics.channel('tracing:ai:telemetry:start') as unknown as { bindStore: (...args: unknown[]) => void };

/** Installs `instrumentAiSdk` with the channel's `bindStore` a no-op meanwhile: the adapter without its step binding. */
function instrumentWithoutBinding(): () => void {
  const bindStore = start.bindStore;
  start.bindStore = () => undefined;
  try {
    return instrumentAiSdk(hooks);
  } finally {
    delete (start as { bindStore?: unknown }).bindStore;
    if (start.bindStore !== bindStore) start.bindStore = bindStore;
  }
}

const tracing = diagnostics.tracingChannel('ai:telemetry');
// Bun's TracingChannel has no `hasSubscribers` (undefined): the SDK, which skips its spans only on `=== false`, then
// takes its tracing path for every span, bound or not.
let spansSeen: boolean | undefined = false;

const runs = iterations(200, 2);
function subject(name: string, install: () => () => void, recorded: boolean): Subject {
  let uninstall: () => void = () => undefined;
  return {
    name,
    iters: runs,
    before() {
      uninstall = install();
      if (name.includes('binding') && !name.includes('without')) spansSeen ||= tracing.hasSubscribers;
    },
    async run(n) {
      for (let i = 0; i < n; i++) consume(await oneRun());
    },
    drain: recorded ? () => plugin.flush() : undefined,
    after() {
      uninstall();
      if (tracing.hasSubscribers) throw new Error(`${name}: the ai:telemetry channel kept a subscriber after uninstalling`);
    },
  };
}

const BARE = 'bare SDK';
const BINDING_ONLY = 'bare SDK + step binding only';
const WITHOUT = 'instrumentAiSdk without its step binding';
const SHIPPED = 'instrumentAiSdk with its step binding (as shipped)';
const subjects = [
  subject(BARE, () => () => undefined, false),
  subject(BINDING_ONLY, () => trackSteps(), false),
  subject(WITHOUT, instrumentWithoutBinding, true),
  subject(SHIPPED, () => instrumentAiSdk(hooks), true),
];

// The no-binding variant must really leave the channel without subscribers, or it measures the shipped one.
{
  const off = instrumentWithoutBinding();
  const unbound = !tracing.hasSubscribers;
  off();
  if (!unbound) throw new Error('instrumentAiSdk bound the channel despite the no-op bindStore');
}

const timings = await interleave(subjects, { reps: 21, warmup: 2 });
const by = (name: string): Timing => timings.find((t) => t.name === name)!;
report.figure(figure('binding_only_over_bare', `${BINDING_ONLY} / ${BARE}, per run`, ratio(by(BINDING_ONLY), by(BARE)), 'x'));
report.figure(figure('without_binding_over_bare', `${WITHOUT} / ${BARE}, per run, drain included`, ratio(by(WITHOUT), by(BARE), true), 'x'));
report.figure(figure('shipped_over_bare', `${SHIPPED} / ${BARE}, per run, drain included`, ratio(by(SHIPPED), by(BARE), true), 'x'));
report.figure(figure('shipped_over_without_binding', `${SHIPPED} / ${WITHOUT}, per run, drain included`, ratio(by(SHIPPED), by(WITHOUT), true), 'x'));
for (const timing of timings) report.row(rowOf(timing.name, `${timing.name} (per run)`, timing));
report.fact('spans_traced_when_bound', String(spansSeen));
report.fact('has_subscribers_unbound', String(diagnostics.tracingChannel('ai:telemetry').hasSubscribers));
report.fact('atof_bytes', statSync(path.join(dir, 'ai-sdk.jsonl')).size);
report.note('Per run = one generateText call: 2 steps, 2 model calls, 1 tool call, against MockLanguageModelV4. Recorded runs: memory relay, ATOF only.');
report.write();
await plugin.shutdown();
rmSync(dir, { recursive: true, force: true });
