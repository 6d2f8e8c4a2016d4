/**
 * Memory: no growth over 1,000,000 session open/close cycles.
 *
 * A cycle is on_session_start, pre_llm_call, on_session_finalize for a new
 * session id (ids are never reused, as on a gateway). After a warm-up past
 * the plugin's bounded caches and one more sampling interval, the heap
 * after a forced GC is sampled ("before"), then every 100,000 cycles; the
 * figure is the last sample / before. The host yields to the event loop every
 * 1,000 cycles so the plugin's background work (ATIF export chains) runs.
 *
 * Main run: ATOF to /dev/null and an ATIF builder per session (no file).
 * A second, shorter run also writes every trajectory to disk (a tmpfs when
 * there is one), which adds the per-file output bookkeeping.
 *
 * @module
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaseReport, canCollect, figure, iterations, nowNs, peakRss, settledHeap } from '../harness.ts';
import * as fixtures from '../support/payloads.ts';
import { DEV_NULL_ATOF, memoryPlugin, tick, type BenchPlugin } from '../support/plugin.ts';
import type { NemoRelaySettingsOverrides } from '../../src/index.ts';

const report = new CaseReport('memory-cycles', 'Memory: heap after 1,000,000 session open/close cycles vs before');
const CYCLES = iterations(1_000_000, 10_000);
const FILE_CYCLES = iterations(100_000, 2_000);
// Past the plugin's bounded caches (it remembers the last 10,000 closed session ids), so they are full before the first sample.
const WARMUP = 12_000;

function cycle(bench: BenchPlugin, id: string): void {
  bench.emit('on_session_start', fixtures.sessionStart(id));
  bench.emit('pre_llm_call', fixtures.preLlmCall(fixtures.idsOf(id, 0)));
  bench.emit('on_session_finalize', fixtures.sessionFinalize(id));
}

interface CycleOutcome {
  before: number;
  after: number;
  samples: number[];
  seconds: number;
  sessionsLeft: number;
}

async function run(label: string, settings: NemoRelaySettingsOverrides, cycles: number): Promise<CycleOutcome> {
  const bench = memoryPlugin(label, settings);
  let next = 0;
  const batch = async (count: number) => {
    for (let i = 0; i < count; i++) {
      cycle(bench, `${label}-${next++}`);
      if (next % 1000 === 0) await tick();
    }
    await bench.plugin.flush();
  };
  await batch(WARMUP);
  const sampleEvery = Math.max(1000, Math.round(cycles / 10));
  // "Before" is sampled one interval after the warm-up: the first interval
  // still settles one-off allocations (JIT code, hash tables reaching their
  // working size), which are not growth. `cycles` more cycles follow it.
  await batch(sampleEvery);
  const before = await settledHeap();
  const samples: number[] = [];
  const t0 = nowNs();
  for (let done = 0; done < cycles; done += sampleEvery) {
    await batch(Math.min(sampleEvery, cycles - done));
    samples.push(await settledHeap());
  }
  const seconds = Number(nowNs() - t0) / 1e9;
  const after = samples[samples.length - 1]!;
  const sessionsLeft = bench.plugin.status().sessions;
  await bench.plugin.shutdown();
  if (bench.warnings > 0) report.note(`${label}: ${bench.warnings} warnings logged`);
  return { before, after, samples, seconds, sessionsLeft };
}

if (!canCollect()) report.note('no GC hook (run Node with --expose-gc, Deno with --v8-flags=--expose-gc): heap figures include garbage');

// The main run records ATOF only, as it always did (an ATIF setting without a folder registered no builder; now the
// plugin would write a trajectory per cycle into its default folder); the shorter run below writes every trajectory.
const main = await run('cycles', { ...DEV_NULL_ATOF, atifEnabled: false }, CYCLES);
const shm = '/dev/shm';
const fileRoot = existsSync(shm) ? shm : os.tmpdir();
const atifDir = mkdtempSync(path.join(fileRoot, 'nemo-relay-bench-atif-'));
let files: CycleOutcome;
try {
  files = await run('cycles-files', { ...DEV_NULL_ATOF, atifEnabled: true, atifOutputDirectory: atifDir }, FILE_CYCLES);
} finally {
  rmSync(atifDir, { recursive: true, force: true });
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 100) / 100;
report.figure(figure('heap_after_over_before', `heap after / before ${CYCLES.toLocaleString('en-US')} cycles`, Math.round((main.after / main.before) * 1000) / 1000, 'x', { op: '<=', target: 1.05 }));
report.figure(figure('bytes_per_cycle', 'heap growth per cycle', Math.round(((main.after - main.before) / CYCLES) * 100) / 100, 'B'));
report.figure(figure('heap_max_over_before', 'largest sampled heap / before', Math.round((Math.max(...main.samples) / main.before) * 1000) / 1000, 'x'));
report.figure(figure('cycles_per_second', 'cycles/s (3 hooks each)', Math.round(CYCLES / main.seconds), 'cycles/s'));
report.figure(figure('files.heap_after_over_before', `with ATIF files: heap after / before ${FILE_CYCLES.toLocaleString('en-US')} cycles`, Math.round((files.after / files.before) * 1000) / 1000, 'x', { op: '<=', target: 1.05 }));
report.figure(figure('files.bytes_per_cycle', 'with ATIF files: heap growth per cycle', Math.round(((files.after - files.before) / FILE_CYCLES) * 100) / 100, 'B'));
report.fact('heap_before_mib', mib(main.before));
report.fact('heap_after_mib', mib(main.after));
report.fact('heap_samples_mib', main.samples.map(mib).join(' '));
report.fact('files.heap_before_mib', mib(files.before));
report.fact('files.heap_after_mib', mib(files.after));
report.fact('files.heap_samples_mib', files.samples.map(mib).join(' '));
report.fact('sessions_left_open', main.sessionsLeft + files.sessionsLeft);
report.fact('warmup_cycles', WARMUP);
report.fact('peak_rss_bytes', peakRss());
report.note(`A cycle: on_session_start, pre_llm_call, on_session_finalize, new session id each time. Heap sampled after forced GC every ${Math.round(CYCLES / 10).toLocaleString('en-US')} cycles. ATIF files written to ${fileRoot === shm ? 'a tmpfs (/dev/shm)' : 'the temp dir'} in the second run.`);
report.write();
