/**
 * Cold start: what a fresh process pays per hook when it creates the plugin
 * and emits at once (a CLI agent, a serverless handler): 300 short sessions
 * of the tool-loop shape (13 hooks each), ATOF + ATIF, until `shutdown()`
 * has written everything, on the memory backend and on native.
 *
 * Each sample is a fresh child process of the same runtime
 * (`support/cold-session.ts`); memory and native samples alternate. The
 * figure is CPU time (user + system, every thread of the process) from
 * just before `createNemoRelayPlugin` to the end of `shutdown()`, per
 * hook; loading the package is not in it (that is `import-cost`), loading
 * native's binary is (a cold native start pays it). Memory's steady state
 * is the same 300 sessions again in the same child once its code is warm.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CaseReport, figure, iterations, median, runtime } from '../harness.ts';

const report = new CaseReport('cold', 'Cold start: 300 sessions x 13 hooks right after createNemoRelayPlugin, fresh process, ATOF + ATIF');
const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, '..', 'support', `cold-session.${runtime.name === 'node' ? 'js' : 'ts'}`);
const SESSIONS = 300;
const ROUNDS = iterations(7, 2);

interface Sample {
  coldUsPerHook: number;
  steadyUsPerHook: number | null;
  hooks: number;
  atifFiles: number;
  filesUsPerHook: number;
  errors: number;
}

function sample(backend: 'memory' | 'native', steadyRounds: number, outputs: 'atof+atif' | 'atof-only' = 'atof+atif'): Sample | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `nemo-relay-bench-cold-${backend}-`));
  try {
    const args = runtime.name === 'deno' ? ['run', '-A', child] : [child];
    const result = spawnSync(process.execPath, [...args, backend, String(SESSIONS), String(steadyRounds), dir, outputs], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    if (result.status !== 0) return `${backend} child exited ${result.status}: ${(result.stderr || result.stdout).trim().split('\n').slice(-3).join(' | ')}`;
    return JSON.parse(result.stdout.trim().split('\n').pop()!) as Sample;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const memoryCold: number[] = [];
const memorySteady: number[] = [];
const nativeCold: number[] = [];
const ratios: number[] = [];
/** ATOF alone: what the backends themselves cost cold, without the ATIF build and files both share. */
const atofOnlyRatios: number[] = [];
const atofOnlyMemory: number[] = [];
const atofOnlyNative: number[] = [];
/** The goal's ceiling: native / memory if each backend's trajectory side cost only its files (the same for both). */
const ceilings: number[] = [];
const filesPerHook: number[] = [];
let nativeMissing: string | null = null;
let files = 0;
let errors = 0;
for (let round = 0; round < ROUNDS; round++) {
  const memory = sample('memory', 4);
  if (typeof memory === 'string') throw new Error(memory);
  memoryCold.push(memory.coldUsPerHook);
  if (memory.steadyUsPerHook !== null) memorySteady.push(memory.steadyUsPerHook);
  files = memory.atifFiles;
  errors += memory.errors;
  if (nativeMissing !== null) continue;
  const native = sample('native', 0);
  if (typeof native === 'string') {
    nativeMissing = native;
    continue;
  }
  nativeCold.push(native.coldUsPerHook);
  ratios.push(native.coldUsPerHook / memory.coldUsPerHook);
  errors += native.errors;
  const memoryAtof = sample('memory', 0, 'atof-only');
  const nativeAtof = sample('native', 0, 'atof-only');
  if (typeof memoryAtof === 'string' || typeof nativeAtof === 'string') throw new Error(String(typeof memoryAtof === 'string' ? memoryAtof : nativeAtof));
  atofOnlyMemory.push(memoryAtof.coldUsPerHook);
  atofOnlyNative.push(nativeAtof.coldUsPerHook);
  atofOnlyRatios.push(nativeAtof.coldUsPerHook / memoryAtof.coldUsPerHook);
  filesPerHook.push(memory.filesUsPerHook);
  ceilings.push((nativeAtof.coldUsPerHook + memory.filesUsPerHook) / (memoryAtof.coldUsPerHook + memory.filesUsPerHook));
}

const round2 = (value: number) => Math.round(value * 100) / 100;
if (ratios.length > 0) {
  report.figure(figure('native_over_memory_cold', 'cold CPU per hook: plugin+native / plugin+memory', round2(median(ratios)), 'x', { op: '>=', target: 3 }));
} else {
  report.note(`native not measured: ${nativeMissing}`);
}
report.figure(figure('memory_cold_over_steady', 'plugin+memory CPU per hook: cold process / the same process warm', round2(median(memoryCold) / median(memorySteady)), 'x', { op: '<=', target: 3 }));
report.figure(figure('memory_cold_us_per_hook', 'plugin+memory, cold: CPU per hook (median)', round2(median(memoryCold)), 'us'));
report.figure(figure('memory_steady_us_per_hook', 'plugin+memory, warm: CPU per hook (median)', round2(median(memorySteady)), 'us'));
if (nativeCold.length > 0) {
  report.figure(figure('native_cold_us_per_hook', 'plugin+native, cold: CPU per hook (median)', round2(median(nativeCold)), 'us'));
  report.figure(figure('native_over_memory_cold_atof_only', 'ATOF only, cold CPU per hook: plugin+native / plugin+memory', round2(median(atofOnlyRatios)), 'x'));
  report.figure(figure('memory_cold_atof_only_us_per_hook', 'plugin+memory, cold, ATOF only: CPU per hook (median)', round2(median(atofOnlyMemory)), 'us'));
  report.figure(figure('native_cold_atof_only_us_per_hook', 'plugin+native, cold, ATOF only: CPU per hook (median)', round2(median(atofOnlyNative)), 'us'));
  // Both backends build their trajectories with the same code and write the same files, so that shared part
  // pulls the ratio towards 1: this is the most any trajectory code could give (its build free, its files not).
  report.figure(figure('files_us_per_hook', 'the trajectory files alone: as many atomic writes of the same texts, CPU per hook (median)', round2(median(filesPerHook)), 'us'));
  report.figure(figure('native_over_memory_ceiling', 'ceiling: (native ATOF only + the files) / (memory ATOF only + the files), trajectory build free', round2(median(ceilings)), 'x'));
}
report.fact('rounds', ROUNDS);
report.fact('sessions', SESSIONS);
report.fact('hooks_per_process', SESSIONS * 13);
report.fact('atif_files_per_process', files);
report.fact('plugin_errors', errors);
report.note('CPU time (user + system, all threads) from just before createNemoRelayPlugin to the end of shutdown(), per hook, in a fresh child process; import cost excluded, native binary load included. Memory and native samples alternate; figures are medians.');
report.write();
