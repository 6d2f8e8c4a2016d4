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
import { CaseReport, figure, interleave, ratio, rowOf, type Subject, type Timing } from '../harness.ts';
import { calibrate, KINDS, serialisationFloor, subjectFor } from '../support/kinds.ts';
import {
  bareNativeSetup,
  isolatedBareNativeSetup,
  memoryPluginSetup,
  nativePluginSetup,
  offPluginSetup,
  otelNoopSetup,
  otelSdkSetup,
  type Setup,
} from '../support/setups.ts';

const report = new CaseReport('per-event', 'Cost per event by hook kind (drained), plugin path vs bare native vs OpenTelemetry');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-events-'));

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
  // The isolation alone (a stack per session, entered with withScopeStack for every call), no plugin. A session with
  // nothing between its start and end (the session kind) pays exactly this in the adapter too: a floor for its
  // ratio while sessions keep their own native stacks (bench/RESULTS.md, "the session's stack switch on Deno").
  if (raw && rawIsolated) report.figure(figure(`${kind.id}.isolated_bare_over_bare`, `${kind.id}: bare native with a scope stack per session / bare native (the isolation alone)`, ratio(rawIsolated, raw, true), 'x'));
  if (raw) report.figure(figure(`${kind.id}.plugin_only_over_bare`, `${kind.id}: plugin+off / bare native (registry + plugin alone, vs a native call)`, ratio(pluginOnly, raw, true), 'x'));
  report.figure(figure(`${kind.id}.memory_over_otel_sdk`, `${kind.id}: plugin+memory / OTel SDK span`, ratio(mem, sdk, true), 'x', { op: '<=', target: 1 }));
  report.figure(figure(`${kind.id}.memory_over_otel_noop`, `${kind.id}: plugin+memory / OTel no-op`, ratio(mem, noop, true), 'x'));
  report.figure(figure(`${kind.id}.plugin_share_of_memory`, `${kind.id}: plugin+off / plugin+memory (registry + plugin share)`, ratio(pluginOnly, mem, true), 'x'));
  const { ns: floor, lineBytes } = await serialisationFloor(dir, kind);
  report.fact(`line_bytes.${kind.id}`, lineBytes);
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
