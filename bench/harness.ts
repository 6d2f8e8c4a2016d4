/**
 * The benchmark harness every case uses, on Node, Bun and Deno alike.
 *
 * Method (see `bench/README.md`): each case runs in a fresh process; work
 * runs in batches of `n` iterations inside the subject's own loop, so the
 * harness's indirect call is paid once per batch; untimed warm-up batches
 * come first; the figure is the median over timed batches. Results go into
 * a sink so the JIT cannot delete the work.
 *
 * Absolute times on a shared 2-core VM drift by ±30–50% between minutes, so
 * the headline figures are ratios between subjects measured in the same
 * process, with their batches interleaved round by round: drift then hits
 * both sides of a ratio alike. A ratio is the median of per-round ratios.
 *
 * @module
 */

import process from 'node:process';
import { writeFileSync } from 'node:fs';

// ------------------------------------------------------------------ runtime

export type RuntimeName = 'node' | 'bun' | 'deno';

export interface RuntimeInfo {
  name: RuntimeName;
  version: string;
  /** e.g. `node 20.20.2`. */
  label: string;
}

export const runtime: RuntimeInfo = detectRuntime();

function detectRuntime(): RuntimeInfo {
  const versions = process.versions as Record<string, string | undefined>;
  if (versions.bun) return { name: 'bun', version: versions.bun, label: `bun ${versions.bun}` };
  if (versions.deno) return { name: 'deno', version: versions.deno, label: `deno ${versions.deno}` };
  const version = process.version.replace(/^v/, '');
  return { name: 'node', version, label: `node ${version}` };
}

/** Multiplies every iteration count; `--quick` runs use a small value. */
export const scale = positiveNumber(process.env.BENCH_SCALE, 1);

/** `base` iterations, scaled by `BENCH_SCALE`, never below `min`. */
export function iterations(base: number, min = 1): number {
  return Math.max(min, Math.round(base * scale));
}

function positiveNumber(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

// ------------------------------------------------------------------ sink and clock

let sinkValue = 0;

/** Feeds a result into a global sink so the optimiser must keep the work that made it. */
export function consume(value: unknown): void {
  sinkValue = (sinkValue + (typeof value === 'number' ? value | 0 : value ? 1 : 0)) | 0;
}

export function sink(): number {
  return sinkValue;
}

export function nowNs(): bigint {
  return process.hrtime.bigint();
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// ------------------------------------------------------------------ memory

type GcHost = { gc?: () => void; Bun?: { gc(force: boolean): void } };

/** True when a full GC can be forced (`--expose-gc` on Node/Deno; always on Bun). */
export function canCollect(): boolean {
  const host = globalThis as GcHost;
  return typeof host.gc === 'function' || typeof host.Bun?.gc === 'function';
}

/** Forces full collections (several, so weak callbacks and finalisers settle). */
export async function collect(): Promise<void> {
  const host = globalThis as GcHost;
  for (let i = 0; i < 3; i++) {
    if (typeof host.gc === 'function') host.gc();
    else host.Bun?.gc(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/**
 * Live JS heap bytes after a forced collection, plus the ArrayBuffer
 * memory outside the heap (typed-array backing stores: the ATOF writers'
 * staging buffers, the ATOF lines a trajectory keeps until it is built).
 */
export async function settledHeap(): Promise<number> {
  await collect();
  const usage = process.memoryUsage();
  return usage.heapUsed + (usage.arrayBuffers ?? 0);
}

/** Peak resident set size of this process, in bytes (Linux reports KiB). */
export function peakRss(): number {
  try {
    return process.resourceUsage().maxRSS * 1024;
  } catch {
    return process.memoryUsage().rss;
  }
}

// ------------------------------------------------------------------ timing

/**
 * Something to time. `run(n)` does `n` operations in its own loop. The
 * optional hooks run around every batch: `before`/`after` untimed (fresh
 * state, cleanup), `drain` timed separately (flushing asynchronous
 * delivery), so each row reports the caller-side cost and the cost
 * including the drain.
 */
export interface Subject {
  name: string;
  /** Operations per batch. */
  iters: number;
  /** Operations each `run` iteration counts as (e.g. 2 hooks per span). Default 1. */
  opsPerIter?: number;
  setup?(): unknown;
  before?(): unknown;
  run(n: number): unknown;
  drain?(): unknown;
  after?(): unknown;
  teardown?(): unknown;
}

export interface Timing {
  name: string;
  iters: number;
  reps: number;
  /** Median ns per operation, caller side. */
  ns: number;
  /** Median ns per operation including the drain (equals `ns` without one). */
  nsDrained: number;
  minNs: number;
  maxNs: number;
  /** Per-round ns/op, caller side, in round order (for per-round ratios). */
  samples: number[];
  /** Per-round ns/op including the drain. */
  samplesDrained: number[];
}

export interface TimingOptions {
  reps?: number;
  warmup?: number;
  /**
   * `cpu`: the process's CPU time (user + system, all threads, from
   * `process.cpuUsage()`, microsecond resolution) instead of wall time.
   * For work that writes files or waits on timers, where wall time also
   * counts the other jobs on a shared machine. Batches should then last
   * tens of milliseconds at least.
   */
  clock?: 'wall' | 'cpu';
}

/**
 * Times the subjects round by round: every round runs one batch of each
 * subject, in rotating order so no subject always follows the same one.
 */
export async function interleave(subjects: readonly Subject[], options: TimingOptions = {}): Promise<Timing[]> {
  const reps = options.reps ?? 9;
  const warmup = options.warmup ?? 2;
  for (const subject of subjects) await subject.setup?.();
  const samples = subjects.map(() => [] as number[]);
  const drained = subjects.map(() => [] as number[]);
  for (let round = 0; round < warmup + reps; round++) {
    for (let k = 0; k < subjects.length; k++) {
      const index = (k + round) % subjects.length;
      const subject = subjects[index]!;
      const { call, total } = await batch(subject, options.clock === 'cpu' ? cpuNs : nowNs);
      if (round >= warmup) {
        const ops = subject.iters * (subject.opsPerIter ?? 1);
        samples[index]!.push(call / ops);
        drained[index]!.push(total / ops);
      }
    }
  }
  for (const subject of subjects) await subject.teardown?.();
  return subjects.map((subject, index) => ({
    name: subject.name,
    iters: subject.iters,
    reps,
    ns: median(samples[index]!),
    nsDrained: median(drained[index]!),
    minNs: Math.min(...samples[index]!),
    maxNs: Math.max(...samples[index]!),
    samples: samples[index]!,
    samplesDrained: drained[index]!,
  }));
}

/** CPU time of this process so far (user + system, all threads), in ns. */
export function cpuNs(): bigint {
  const { user, system } = process.cpuUsage();
  return BigInt(user + system) * 1000n;
}

async function batch(subject: Subject, clock: () => bigint): Promise<{ call: number; total: number }> {
  await subject.before?.();
  const t0 = clock();
  const result = subject.run(subject.iters);
  if (isPromise(result)) await result;
  const t1 = clock();
  let t2 = t1;
  if (subject.drain) {
    const drained = subject.drain();
    if (isPromise(drained)) await drained;
    t2 = clock();
  }
  await subject.after?.();
  return { call: Number(t1 - t0), total: Number(t2 - t0) };
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * `a / b` as the median of per-round ratios, which cancels drift that
 * affects both within a round. `drained` compares the incl.-drain figures.
 */
export function ratio(a: Timing, b: Timing, drained = false): number {
  const left = drained ? a.samplesDrained : a.samples;
  const right = drained ? b.samplesDrained : b.samples;
  const rounds = Math.min(left.length, right.length);
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) ratios.push(left[i]! / right[i]!);
  return median(ratios);
}

// ------------------------------------------------------------------ results

export type GoalOp = '<=' | '>=';

export interface Goal {
  op: GoalOp;
  target: number;
}

/** A headline figure (a ratio, a rate, a size), with its goal when it has one. */
export interface Figure {
  id: string;
  label: string;
  value: number;
  /** `x` for ratios; otherwise `ev/s`, `B`, `ns`, ... */
  unit: string;
  goal?: Goal;
  pass?: boolean;
  note?: string;
}

/** One timed subject, for the absolute (secondary) numbers. */
export interface Row {
  id: string;
  label: string;
  ns: number;
  nsDrained: number;
  minNs: number;
  maxNs: number;
  iters: number;
  reps: number;
}

export interface CaseResult {
  id: string;
  title: string;
  runtime: RuntimeInfo;
  date: string;
  figures: Figure[];
  rows: Row[];
  /** Other facts worth keeping (counts, sizes, settings). */
  facts: Record<string, number | string | boolean>;
  notes: string[];
  sink: number;
}

export function figure(id: string, label: string, value: number, unit: string, goal?: Goal, note?: string): Figure {
  const result: Figure = { id, label, value, unit };
  if (goal) {
    result.goal = goal;
    result.pass = goal.op === '<=' ? value <= goal.target : value >= goal.target;
  }
  if (note !== undefined) result.note = note;
  return result;
}

export function rowOf(id: string, label: string, timing: Timing): Row {
  return {
    id,
    label,
    ns: round2(timing.ns),
    nsDrained: round2(timing.nsDrained),
    minNs: round2(timing.minNs),
    maxNs: round2(timing.maxNs),
    iters: timing.iters,
    reps: timing.reps,
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Collects a case's output and writes it where the runner asked (`BENCH_OUT`), or to stdout. */
export class CaseReport {
  readonly #result: CaseResult;

  constructor(id: string, title: string) {
    this.#result = { id, title, runtime, date: new Date().toISOString(), figures: [], rows: [], facts: {}, notes: [], sink: 0 };
  }

  figure(value: Figure): void {
    this.#result.figures.push(value);
    log(`  ${value.label}: ${formatValue(value.value, value.unit)}${value.goal ? `  (goal ${value.goal.op} ${formatValue(value.goal.target, value.unit)}: ${value.pass ? 'PASS' : 'MISS'})` : ''}`);
  }

  row(value: Row): void {
    this.#result.rows.push(value);
    const drained = value.nsDrained !== value.ns ? `  incl. drain ${value.nsDrained} ns` : '';
    log(`  ${value.label}: ${value.ns} ns/op${drained}  (min ${value.minNs}, max ${value.maxNs}, ${value.reps}x${value.iters})`);
  }

  fact(key: string, value: number | string | boolean): void {
    this.#result.facts[key] = value;
  }

  note(text: string): void {
    this.#result.notes.push(text);
  }

  write(): void {
    this.#result.sink = sink();
    const json = JSON.stringify(this.#result, null, 2);
    const out = process.env.BENCH_OUT;
    if (out) writeFileSync(out, json);
    else process.stdout.write(`${json}\n`);
  }
}

/** Progress goes to stderr, so stdout stays clean for JSON. */
export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function formatValue(value: number, unit: string): string {
  if (unit === 'x') return `${value.toFixed(value < 0.1 ? 3 : value < 10 ? 2 : 1)}x`;
  if (unit === 'B') return `${formatCount(value)} B`;
  if (unit === 'MiB') return `${value.toFixed(1)} MiB`;
  return `${formatCount(value)} ${unit}`;
}

function formatCount(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}
