/**
 * Cost per event, by hook kind, on the whole plugin path (hook → plugin →
 * backend → ATOF line), against bare native calls and OpenTelemetry.
 *
 * For each hook kind the five setups of `setups.ts` do the same work, timed
 * interleaved round by round; each batch gets a fresh setup, and its drain
 * (native delivery is asynchronous; the memory relay buffers its writes)
 * is timed and amortised per event. The headline ratios use the drained
 * figures: what an event costs until it is on disk (or exported).
 *
 * Batch sizes are calibrated per setup (about `TARGET_MS` per batch), since
 * the setups differ by three orders of magnitude.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaseReport, consume, figure, interleave, median, nowNs, ratio, rowOf, scale, type Subject, type Timing } from '../harness.ts';
import * as fixtures from '../support/payloads.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import {
  bareNativeSetup,
  isolatedBareNativeSetup,
  capturingMemorySetup,
  memoryPluginSetup,
  nativePluginSetup,
  offPluginSetup,
  otelNoopSetup,
  otelSdkSetup,
  type Setup,
} from '../support/setups.ts';

const report = new CaseReport('per-event', 'Cost per event by hook kind (drained), plugin path vs bare native vs OpenTelemetry');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-events-'));
const TARGET_MS = 100 * scale;
const POOL = 256;

// ------------------------------------------------------------------ payload pools (shared by every setup)

const pool = <T>(make: (i: number) => T): T[] => Array.from({ length: POOL }, (_, i) => make(i));
const ids = pool((i) => fixtures.idsOf('bench-session', i));
const marks = pool((i) => fixtures.preLlmCall(ids[i]!));
const llmPre = pool((i) => fixtures.preApiRequest(ids[i]!, 1, fixtures.SMALL_BODY));
const llmPost = pool((i) => fixtures.postApiRequest(ids[i]!, 1));
const llmPreLarge = pool((i) => fixtures.preApiRequest(ids[i]!, 1, fixtures.LARGE_BODY));
const toolPre = pool((i) => fixtures.preToolCall(ids[i]!, 1));
const toolPost = pool((i) => fixtures.postToolCall(ids[i]!, 1));
const sessionOpen = pool((i) => fixtures.sessionStart(`bench-child-${i}`));
const sessionClose = pool((i) => fixtures.sessionFinalize(`bench-child-${i}`));

interface Kind {
  id: string;
  label: string;
  /** Events (hooks, ATOF lines) per iteration. */
  events: number;
  step(setup: Setup, i: number): void;
}

const KINDS: readonly Kind[] = [
  { id: 'mark', label: 'mark (pre_llm_call)', events: 1, step: (s, i) => s.mark(marks[i & 255]!) },
  {
    id: 'llm',
    label: `LLM span (pre+post_api_request, ${JSON.stringify(fixtures.SMALL_BODY).length} B request)`,
    events: 2,
    step: (s, i) => {
      s.llmStart(llmPre[i & 255]!);
      s.llmEnd(llmPost[i & 255]!);
    },
  },
  {
    id: 'llm_8k',
    label: `LLM span (${JSON.stringify(fixtures.LARGE_BODY).length} B / 20-message request)`,
    events: 2,
    step: (s, i) => {
      s.llmStart(llmPreLarge[i & 255]!);
      s.llmEnd(llmPost[i & 255]!);
    },
  },
  {
    id: 'tool',
    label: 'tool span (pre+post_tool_call)',
    events: 2,
    step: (s, i) => {
      s.toolStart(toolPre[i & 255]!);
      s.toolEnd(toolPost[i & 255]!);
    },
  },
  {
    id: 'session',
    label: 'session (on_session_start+on_session_finalize)',
    events: 2,
    step: (s, i) => {
      s.sessionStart(sessionOpen[i & 255]!);
      s.sessionEnd(sessionClose[i & 255]!);
    },
  },
];

// ------------------------------------------------------------------ setups

const memory = memoryPluginSetup(dir);
const off = offPluginSetup(dir);
const otelSdk = otelSdkSetup();
const otelNoop = otelNoopSetup();
let nativePlugin: (Setup & { readonly warnings: number }) | null = null;
let bare: Setup | null = null;
let bareIsolated: Setup | null = null;
try {
  nativePlugin = nativePluginSetup(dir);
  bare = bareNativeSetup(dir);
  bareIsolated = isolatedBareNativeSetup(dir);
} catch (error) {
  const reason = error instanceof Error ? error.message : String(error);
  report.note(`native setups skipped: nemo-relay-node did not load (${reason})`);
}
const setups: Setup[] = [memory, ...(nativePlugin ? [nativePlugin] : []), ...(bare ? [bare] : []), ...(bareIsolated ? [bareIsolated] : []), otelSdk, otelNoop, off];

/**
 * Iterations for about `TARGET_MS` of work per batch, measured on a warm
 * setup: one throwaway pass first (a process's first flush or file open can
 * take milliseconds), and at least 256 iterations per measurement, so a
 * one-off stall cannot shrink the batches until the drain dominates them.
 */
async function calibrate(setup: Setup, kind: Kind): Promise<number> {
  let estimate = 0;
  for (let pass = 0; pass < 2; pass++) {
    await setup.open();
    let n = 16;
    let elapsedMs = 0;
    for (;;) {
      const t0 = nowNs();
      for (let i = 0; i < n; i++) kind.step(setup, i);
      await setup.drain();
      elapsedMs = Number(nowNs() - t0) / 1e6;
      if ((elapsedMs >= Math.min(20, TARGET_MS / 4) && n >= 256) || n >= 1 << 22) break;
      n *= 4;
    }
    await setup.close();
    estimate = Math.round((n * TARGET_MS) / Math.max(elapsedMs, 0.001));
  }
  return Math.max(64, estimate);
}

function subjectFor(setup: Setup, kind: Kind, iters: number): Subject {
  return {
    name: setup.name,
    iters,
    opsPerIter: kind.events,
    before: () => setup.open(),
    run(n) {
      for (let i = 0; i < n; i++) kind.step(setup, i);
      consume(n);
    },
    drain: () => setup.drain(),
    after: () => setup.close(),
  };
}

/**
 * The serialisation floor of a kind: `JSON.stringify` of exactly the ATOF
 * events plugin+memory produces for one iteration (keys already sorted, the
 * event already built), per event. No JS backend writing the same lines
 * can cost less, whatever else it does.
 */
async function serialisationFloor(kind: Kind): Promise<number> {
  const captured: AtofEvent[] = [];
  const capture = capturingMemorySetup(dir, captured);
  await capture.open();
  captured.length = 0;
  kind.step(capture, 0);
  const events = captured.slice();
  await capture.close();
  const n = Math.max(1000, Math.round(200_000 * scale));
  let bytes = 0;
  for (let warm = 0; warm < 3; warm++) for (let i = 0; i < n; i++) bytes += JSON.stringify(events[i % events.length]).length;
  const samples: number[] = [];
  for (let rep = 0; rep < 7; rep++) {
    const t0 = nowNs();
    for (let i = 0; i < n; i++) bytes += JSON.stringify(events[i % events.length]).length;
    samples.push(Number(nowNs() - t0) / n);
  }
  consume(bytes);
  report.fact(`line_bytes.${kind.id}`, Math.round(events.reduce((sum, e) => sum + JSON.stringify(e).length + 1, 0) / events.length));
  return median(samples);
}

// ------------------------------------------------------------------ run

const byName = (timings: Timing[], name: string) => timings.find((t) => t.name === name);

for (const kind of KINDS) {
  process.stderr.write(`# ${kind.label}\n`);
  const subjects: Subject[] = [];
  for (const setup of setups) subjects.push(subjectFor(setup, kind, await calibrate(setup, kind)));
  const timings = await interleave(subjects, { reps: 11, warmup: 1 });
  const mem = byName(timings, 'plugin+memory')!;
  const nat = byName(timings, 'plugin+native');
  const raw = byName(timings, 'bare native');
  const rawIsolated = byName(timings, 'bare native, stack per session');
  const sdk = byName(timings, 'otel sdk')!;
  const noop = byName(timings, 'otel no-op')!;
  const pluginOnly = byName(timings, 'plugin+off')!;
  if (nat) report.figure(figure(`${kind.id}.native_over_memory`, `${kind.id}: plugin+native / plugin+memory`, ratio(nat, mem, true), 'x', { op: '>=', target: 10 }));
  if (nat && raw) report.figure(figure(`${kind.id}.plugin_over_bare`, `${kind.id}: plugin+native / bare native`, ratio(nat, raw, true), 'x', { op: '<=', target: 1.15 }));
  if (nat && rawIsolated) report.figure(figure(`${kind.id}.plugin_over_isolated_bare`, `${kind.id}: plugin+native / bare native with a scope stack per session (the isolation the adapter gives)`, ratio(nat, rawIsolated, true), 'x'));
  if (raw) report.figure(figure(`${kind.id}.plugin_only_over_bare`, `${kind.id}: plugin+off / bare native (registry + plugin alone, vs a native call)`, ratio(pluginOnly, raw, true), 'x'));
  report.figure(figure(`${kind.id}.memory_over_otel_sdk`, `${kind.id}: plugin+memory / OTel SDK span`, ratio(mem, sdk, true), 'x', { op: '<=', target: 1 }));
  report.figure(figure(`${kind.id}.memory_over_otel_noop`, `${kind.id}: plugin+memory / OTel no-op`, ratio(mem, noop, true), 'x'));
  report.figure(figure(`${kind.id}.plugin_share_of_memory`, `${kind.id}: plugin+off / plugin+memory (registry + plugin share)`, ratio(pluginOnly, mem, true), 'x'));
  const floor = await serialisationFloor(kind);
  report.figure(figure(`${kind.id}.memory_over_floor`, `${kind.id}: plugin+memory / JSON.stringify of its ATOF lines (serialisation floor)`, mem.nsDrained / floor, 'x'));
  if (nat) report.figure(figure(`${kind.id}.native_over_floor`, `${kind.id}: plugin+native / serialisation floor (best native/memory any JS backend could reach)`, nat.nsDrained / floor, 'x'));
  for (const timing of timings) report.row(rowOf(`${kind.id}.${timing.name}`, `${kind.id}: ${timing.name} (per event)`, timing));
  report.row({ id: `${kind.id}.floor`, label: `${kind.id}: JSON.stringify of the ATOF line (per event)`, ns: Math.round(floor * 100) / 100, nsDrained: Math.round(floor * 100) / 100, minNs: Math.round(floor * 100) / 100, maxNs: Math.round(floor * 100) / 100, iters: 0, reps: 7 });
}

for (const setup of setups) {
  const bytes = setup.bytesWritten();
  if (bytes > 0) report.fact(`atof_bytes.${setup.name}`, bytes);
}
report.fact('warnings.plugin+memory', memory.warnings);
if (nativePlugin) report.fact('warnings.plugin+native', nativePlugin.warnings);
report.note('Per event = per hook call = per ATOF line; a span or session pair is 2 events. Ratios use the drained figures (drain amortised per event), as the median of per-round ratios.');
report.note('plugin+X: HookRegistry.emit -> createNemoRelayPlugin (ATOF sink on, ATIF off) -> backend; plugin+off: the same over the backend that drops every call (registry + plugin cost alone). bare native: nemo-relay-node pushScope/event/llmCall/toolCall with an AtofExporter, explicit parent and timestamps, hand-built metadata. OTel: a span per pair, a child span per mark, ids as attributes, the payload as a JSON-string attribute when recording; SDK = BasicTracerProvider + SimpleSpanProcessor + InMemorySpanExporter.');
report.write();
rmSync(dir, { recursive: true, force: true });
