/**
 * The memory relay in a warm process, whole sessions at a time: what ATIF
 * trajectories add to the ATOF-only cost per event once everything they
 * need (the build, the serialization, the file) is paid inside the timing.
 *
 * Every batch replays the same stream through a fresh plugin: 64 sessions
 * of the `throughput` shape (6 turns of an LLM call asking for 2 tools, 80
 * hooks each), 16 in flight at once. The drain (`plugin.flush()`) is timed:
 * it writes the ATOF lines and waits for every trajectory write, so a
 * batch's figure holds every byte the batch produced. The clock is the
 * process's CPU time (all threads), batches interleaved round by round.
 *
 * How many trajectories a session writes must not depend on the machine's
 * speed (the plugin's partial writes wait `trajectoryWriteDelayMs`), so it
 * is fixed: the goal's subject writes each session's trajectory once, at
 * its end (a replay, or a host whose turns come within the delay); a
 * second subject writes one after every turn as well (`0`: a live agent
 * whose turns are further apart than the delay).
 *
 * The files live on tmpfs (`/dev/shm`) where there is one: creating a file
 * costs the kernel about a millisecond on this VM's ext4 (see `throughput`),
 * a cost of the file system, not of the relay, that would swamp the ratio.
 * The same ratio on the default temporary folder, and the atomic writes
 * alone (as many, of the same size) on both, are reported beside it.
 *
 * @module
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HookName } from '../../src/hooks/names.ts';
import { writeFileAtomic } from '../../src/shared/atomic-file.ts';
import { CaseReport, consume, cpuNs, figure, interleave, iterations, median, ratio, rowOf, type Subject, type Timing } from '../harness.ts';
import type { Payload } from '../support/payloads.ts';
import { memoryAtifPluginSetup, memoryObjectsPluginSetup, memoryPluginSetup, type PluginSetup } from '../support/setups.ts';
import { eventsPerSession, HookStream } from '../support/stream.ts';

const report = new CaseReport('memory-steady', 'Memory relay, warm, whole sessions: ATOF + ATIF / ATOF only, CPU per event, drain included');

const SESSIONS = iterations(64, 4);
const PER_SESSION = eventsPerSession(6, 2);

/** The replayed stream, built once: the payloads are the same objects in every batch. */
function streamEvents(): [HookName, Payload][] {
  const events: [HookName, Payload][] = [];
  const stream = new HookStream({ events: SESSIONS * PER_SESSION, concurrency: 16, turns: 6, toolCalls: 2, prefix: 'steady' });
  stream.take(SESSIONS * PER_SESSION, (name, payload) => events.push([name, payload]));
  return events;
}

const events = streamEvents();

function subjectOf(setup: PluginSetup): Subject {
  return {
    name: setup.name,
    iters: events.length,
    before: () => setup.open(),
    run(n) {
      for (let i = 0; i < n; i++) {
        const event = events[i]!;
        setup.emit(event[0], event[1]);
      }
      consume(n);
    },
    drain: () => setup.drain(),
    after: () => setup.close(),
  };
}

/**
 * `count` atomic writes into `dir` of this run's trajectory texts (read back from their files,
 * so flat strings as the builder's are): the file system's part of the trajectories. Not
 * `'x'.repeat(n)`: V8 keeps that as a rope that every `Buffer.from` walks again, which once
 * made this floor look five times its size (bench/RESULTS.md, issue 21, 2026-12-02 03:30).
 */
function atomicWritesCpuNs(dir: string, count: number, texts: readonly string[]): number {
  const samples: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const t0 = cpuNs();
    for (let i = 0; i < count; i++) writeFileAtomic(path.join(dir, `floor-${i}.json`), texts[i % texts.length]!);
    samples.push(Number(cpuNs() - t0));
  }
  return median(samples);
}

const byName = (timings: Timing[], name: string) => timings.find((t) => t.name === name)!;
/** Longer than any batch: partial writes are absorbed by the session's final write. */
const ONCE_PER_SESSION = 3_600_000;

async function measure(label: string, base: string, withObjects: boolean): Promise<{ atof: Timing; atif: Timing; timings: Timing[]; dir: string; atifDir: string }> {
  const dir = mkdtempSync(path.join(base, 'nemo-relay-bench-steady-'));
  const setups = [memoryPluginSetup(dir), memoryAtifPluginSetup(dir, ONCE_PER_SESSION)];
  if (withObjects) setups.push(memoryAtifPluginSetup(dir, 0, 'plugin+memory, ATOF + ATIF, a trajectory after every turn'));
  // What the byte path buys: ATOF only on the object encoder (ATIF always takes it).
  if (withObjects) setups.push(memoryObjectsPluginSetup(dir));
  process.stderr.write(`# ${label} (${dir})\n`);
  const timings = await interleave(setups.map(subjectOf), { reps: 11, warmup: 2, clock: 'cpu' });
  for (const setup of setups) report.fact(`warnings.${label}.${setup.name}`, setup.warnings);
  return { atof: byName(timings, setups[0]!.name), atif: byName(timings, setups[1]!.name), timings, dir, atifDir: setups[1]!.atifDirectory! };
}

const shm = '/dev/shm';
const onTmpfs = existsSync(shm) ? shm : null;
const fast = await measure('tmpfs', onTmpfs ?? os.tmpdir(), true);
report.figure(figure('atif_over_atof', 'ATOF + ATIF / ATOF only, CPU per event, whole sessions, drain included', ratio(fast.atif, fast.atof, true), 'x', { op: '<=', target: 2 }));
for (const timing of fast.timings) report.row(rowOf(`tmpfs.${timing.name}`, `${onTmpfs ? 'tmpfs' : 'tmp'}: ${timing.name} (CPU per event)`, timing));
if (fast.timings.length === 4) {
  const everyTurn = byName(fast.timings, 'plugin+memory, ATOF + ATIF, a trajectory after every turn');
  report.figure(figure('atif_every_turn_over_atof', 'ATOF + ATIF with a trajectory written after every turn / ATOF only', ratio(everyTurn, fast.atof, true), 'x'));
  const objects = byName(fast.timings, 'plugin+memory, objects');
  report.figure(figure('objects_over_bytes', 'ATOF only: object encoder / byte encoder (what the byte path buys)', ratio(objects, fast.atof, true), 'x'));
  report.figure(figure('atif_over_objects', 'ATOF + ATIF / ATOF only on the object encoder', ratio(fast.atif, objects, true), 'x'));
}
if (onTmpfs !== null) {
  const disk = await measure('disk', os.tmpdir(), false);
  report.figure(figure('disk.atif_over_atof', `ATOF + ATIF / ATOF only, files in ${os.tmpdir()}`, ratio(disk.atif, disk.atof, true), 'x'));
  for (const timing of disk.timings) report.row(rowOf(`disk.${timing.name}`, `disk: ${timing.name} (CPU per event)`, timing));
  rmSync(disk.dir, { recursive: true, force: true });
}

// What the trajectory files alone cost, per event of the stream: as many atomic writes, of the trajectories' mean size.
// The goal subject's last round: each session's trajectory, once.
const atifDir = fast.atifDir;
const atifFiles = readdirSync(atifDir).filter((name) => name.endsWith('.json'));
const trajectoryBytes = Math.round(atifFiles.reduce((sum, name) => sum + statSync(path.join(atifDir, name)).size, 0) / Math.max(1, atifFiles.length));
report.fact('trajectory_bytes', trajectoryBytes);
const trajectoryTexts = atifFiles.map((name) => readFileSync(path.join(atifDir, name), 'utf8'));
const floorNs = new Map<string, number>();
for (const [label, base] of [['tmpfs', onTmpfs], ['disk', os.tmpdir()]] as const) {
  if (base === null) continue;
  const dir = mkdtempSync(path.join(base, 'nemo-relay-bench-floor-'));
  const ns = atomicWritesCpuNs(dir, SESSIONS, trajectoryTexts);
  floorNs.set(label, ns / events.length);
  report.fact(`file_floor_ns_per_event.${label}`, Math.round(ns / events.length));
  rmSync(dir, { recursive: true, force: true });
}
// What writing the trajectories' text alone costs, per event of the stream: `JSON.stringify` of the
// finished documents (read back from this run's files), no conversion and no file. The text native
// writes is fixed, so this part of the trajectory side stays whatever the converter does; beside
// the ATOF-only cost it says how much of the goal's budget the output's size already takes.
const documents = trajectoryTexts.map((text) => JSON.parse(text) as unknown);
const stringifySamples: number[] = [];
for (let rep = 0; rep < 7; rep++) {
  let chars = 0;
  const t0 = cpuNs();
  for (let i = 0; i < SESSIONS; i++) chars += JSON.stringify(documents[i % documents.length]).length;
  stringifySamples.push(Number(cpuNs() - t0));
  consume(chars);
}
const stringifyNs = median(stringifySamples) / events.length;
report.fact('stringify_floor_ns_per_event', Math.round(stringifyNs));
report.figure(figure('stringify_floor_over_atof', "The trajectories' JSON.stringify alone / ATOF only, CPU per event", stringifyNs / fast.atof.nsDrained, 'x'));
// The lowest ratio any trajectory code could reach here: ATOF only, plus the files and their text,
// with recording, copying and converting free. Set beside `atif_over_atof`'s goal.
const fileFloorNs = (onTmpfs !== null ? floorNs.get('tmpfs') : floorNs.get('disk')) ?? 0;
const floorTotalNs = fast.atof.nsDrained + fileFloorNs + stringifyNs;
report.figure(figure('atif_floor_over_atof', 'Floor of ATOF + ATIF / ATOF only: ATOF only + the atomic writes + their JSON.stringify, nothing else', floorTotalNs / fast.atof.nsDrained, 'x'));
// The goal restated against that floor (bench/RESULTS.md, issue 21, "the goal against the floor"): what the
// trajectories cost beyond their own output (copying, routing, converting, the garbage) is at most half the floor.
report.figure(figure('atif_over_floor', 'ATOF + ATIF / its floor (ATOF only + the trajectory files + their text)', fast.atif.nsDrained / floorTotalNs, 'x', { op: '<=', target: 1.5 }));
report.fact('sessions_per_batch', SESSIONS);
report.fact('events_per_session', PER_SESSION);
report.note('CPU time of the process (all threads) per hook event; a batch = 64 whole sessions through a fresh plugin, drain included.');
report.write();
rmSync(fast.dir, { recursive: true, force: true });
