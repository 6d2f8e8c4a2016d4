/**
 * Throughput: a 1,000,000-event hook stream replayed through the plugin on
 * the memory backend into ATOF and ATIF files, many sessions in flight (see
 * `stream.ts`). Reports events per second and the process's peak RSS.
 *
 * The clock runs from the first emit to the end of `plugin.shutdown()`, so
 * every ATOF line and every ATIF trajectory (partial after each turn, final
 * at finalize) is on disk when it stops. The host yields to the event loop
 * every 1,000 events, as a real one does between provider calls. Payloads
 * are built on the fly; their cost is measured separately and reported.
 *
 * More replays show where the time goes: one where on_session_end comes
 * only after a session's last turn (one trajectory write per session
 * instead of one per turn), one with ATIF off, the first again with its
 * files on tmpfs, and the first again, last, in a warm process. Peak RSS is sampled per replay (the process's `maxRSS`
 * only grows, so it says nothing of the later ones).
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate } from 'node:timers';
import type { HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { writeFileAtomic } from '../../src/shared/atomic-file.ts';
import { CaseReport, consume, figure, iterations, nowNs, peakRss } from '../harness.ts';
import { countingLogger } from '../support/setups.ts';
import { eventsPerSession, HookStream, type StreamOptions } from '../support/stream.ts';

const report = new CaseReport('throughput', 'Throughput: 1,000,000 hook events into ATOF + ATIF on the memory backend');
const EVENTS = iterations(1_000_000, 1000);
const stream: StreamOptions = { events: EVENTS, concurrency: 64, turns: 6, toolCalls: 2 };
const YIELD_EVERY = 1000;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

interface ReplayOutcome {
  seconds: number;
  sessions: number;
  atofLines: number;
  atofBytes: number;
  atifFiles: number;
  atifBytes: number;
  hooks: number;
  errors: number;
  dropped: number;
  warnings: number;
  /** Highest RSS sampled during the replay (every YIELD_EVERY events and after shutdown). */
  peakRss: number;
}

async function run(atif: boolean, options: StreamOptions = stream, base = os.tmpdir()): Promise<ReplayOutcome> {
  const dir = mkdtempSync(path.join(base, 'nemo-relay-bench-throughput-'));
  const logger = countingLogger(atif ? 'throughput' : 'throughput-atof-only');
  const hooks = new HookRegistry({ logger });
  const relay = createMemoryRelay({ logger });
  const plugin = createNemoRelayPlugin({
    backend: relay,
    env: {},
    logger,
    settings: {
      atofEnabled: true,
      atofOutputDirectory: dir,
      atofFilename: 'events.jsonl',
      atofMode: 'overwrite',
      atifEnabled: atif,
      atifOutputDirectory: atif ? path.join(dir, 'atif') : '',
    },
  });
  plugin.register(hooks);
  const source = new HookStream(options);
  const emit = (name: HookName, payload: Record<string, unknown>) => hooks.emit(name, payload as never);
  let rss = 0;
  const t0 = nowNs();
  while (source.remaining > 0) {
    source.take(YIELD_EVERY, emit);
    rss = Math.max(rss, process.memoryUsage.rss());
    await tick();
  }
  await plugin.shutdown({ timeoutMs: 600_000 });
  const seconds = Number(nowNs() - t0) / 1e9;
  rss = Math.max(rss, process.memoryUsage.rss());
  const status = plugin.status();
  const outcome: ReplayOutcome = {
    seconds,
    sessions: source.sessions,
    atofLines: countLines(path.join(dir, 'events.jsonl')),
    atofBytes: sizeOf(path.join(dir, 'events.jsonl')),
    atifFiles: 0,
    atifBytes: 0,
    hooks: status.counters.hooks,
    errors: status.counters.errors,
    dropped: status.counters.dropped,
    warnings: logger.warnings,
    peakRss: rss,
  };
  if (atif) {
    const atifDir = path.join(dir, 'atif');
    for (const name of safeList(atifDir)) {
      outcome.atifFiles += 1;
      outcome.atifBytes += sizeOf(path.join(atifDir, name));
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return outcome;
}

function countLines(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 0;
  }
  const buffer = new Uint8Array(1 << 20);
  let lines = 0;
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n <= 0) break;
      for (let i = 0; i < n; i++) if (buffer[i] === 10) lines += 1;
    }
  } finally {
    closeSync(fd);
  }
  return lines;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// ------------------------------------------------------------------ run

const g0 = nowNs();
let generated = 0;
new HookStream(stream).take(EVENTS, (name, payload) => {
  generated += name.length + (payload.session_id === undefined ? 0 : 1);
});
const generatorNs = Number(nowNs() - g0) / EVENTS;
consume(generated);

const full = await run(true);
const rssFull = peakRss();
const finalOnly = await run(true, { ...stream, endEveryTurn: false });
const atofOnly = await run(false);

/**
 * The floor the trajectory files alone put under the ATOF + ATIF replay:
 * as many atomic writes (temporary file, then rename) of trajectories of
 * the same size as the replay wrote, nothing else. The plugin promises a
 * whole file per session at any moment, so no JS backend can write them
 * cheaper than this on this disk.
 */
function atomicWriteFloor(files: number, bytes: number): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-atomic-'));
  // A flat string, as the builder's texts are: `'x'.repeat(n)` is a rope V8 walks again at every
  // `Buffer.from`, which inflates this floor several times (bench/RESULTS.md, issue 21, 2026-12-02 03:30).
  const text = Buffer.alloc(Math.max(1, Math.round(bytes / Math.max(1, files))), 'x').toString('latin1');
  const t0 = nowNs();
  for (let i = 0; i < files; i++) writeFileAtomic(path.join(dir, `t-${i}.json`), text);
  const seconds = Number(nowNs() - t0) / 1e9;
  rmSync(dir, { recursive: true, force: true });
  return seconds;
}
const writeFloor = atomicWriteFloor(full.atifFiles, full.atifBytes);

/**
 * The same replay with its files in memory (tmpfs), where creating a file
 * costs tens of microseconds instead of the disk's (about a millisecond of
 * kernel time per file on this VM's ext4): what the library itself
 * sustains when the file system is not the floor. Linux only.
 */
const TMPFS = '/dev/shm';
const inMemory = os.platform() === 'linux' && isWritableFolder(TMPFS) && path.resolve(os.tmpdir()) !== TMPFS ? await run(true, stream, TMPFS) : null;

function isWritableFolder(folder: string): boolean {
  try {
    rmSync(mkdtempSync(path.join(folder, 'nemo-relay-bench-probe-')), { recursive: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The goal's replay once more, last, in the same process. The first replay
 * also pays the process's warm-up (the converter and the text writer run
 * unoptimized through its first tens of thousands of events), while ATOF
 * only runs third, warm; this one shows the same replay with that paid, so
 * the two rates compare like with like (bench/RESULTS.md, "The replay's
 * time beyond memory-steady").
 */
const warm = await run(true);

const rate = EVENTS / full.seconds;
report.figure(figure('events_per_second', 'events/s, ATOF + ATIF (plugin path, memory backend)', Math.round(rate), 'ev/s', { op: '>=', target: 100_000 }));
report.figure(figure('atif_rate_over_atof_rate', 'events/s, ATOF + ATIF / ATOF only (same run)', Math.round((atofOnly.seconds / full.seconds) * 100) / 100, 'x', { op: '>=', target: 0.5 }));
report.figure(figure('events_per_second_warm', 'events/s, ATOF + ATIF, the same replay again last (warm process)', Math.round(EVENTS / warm.seconds), 'ev/s'));
report.figure(figure('warm_atif_rate_over_atof_rate', 'events/s, ATOF + ATIF run again last (warm) / ATOF only', Math.round((atofOnly.seconds / warm.seconds) * 100) / 100, 'x'));
report.figure(figure('peak_rss_mib', 'peak RSS during the ATOF + ATIF replay', Math.round((rssFull / 2 ** 20) * 10) / 10, 'MiB'));
report.figure(figure('sampled_rss_mib', 'highest sampled RSS, ATOF + ATIF', Math.round((full.peakRss / 2 ** 20) * 10) / 10, 'MiB'));
report.figure(figure('events_per_second_final_atif_only', 'events/s, ATOF + ATIF written once per session (on_session_end only after the last turn)', Math.round(EVENTS / finalOnly.seconds), 'ev/s'));
if (inMemory !== null) {
  report.figure(figure('events_per_second_tmpfs', `events/s, ATOF + ATIF, files on tmpfs (${TMPFS})`, Math.round(EVENTS / inMemory.seconds), 'ev/s'));
  report.figure(figure('lost_events_tmpfs', 'events not in the ATOF file (tmpfs run)', Math.max(0, EVENTS - inMemory.atofLines), 'events', { op: '<=', target: 0 }));
}
report.figure(figure('events_per_second_atof_only', 'events/s, ATOF only', Math.round(EVENTS / atofOnly.seconds), 'ev/s'));
report.figure(figure('atif_share', 'share of the ATOF + ATIF replay time spent on ATIF (1 - ATOF-only time / full time)', Math.round((1 - atofOnly.seconds / full.seconds) * 1000) / 1000, 'x'));
report.figure(figure('atif_write_floor_seconds', 'the trajectory files alone: as many atomic writes of the same size, nothing else', Math.round(writeFloor * 1000) / 1000, 's'));
report.figure(
  figure(
    'ceiling_events_per_second',
    'ceiling with every ATIF step free, were the atomic writes on the host thread: events / (ATOF-only time + the atomic writes alone)',
    Math.round(EVENTS / (atofOnly.seconds + writeFloor)),
    'ev/s',
  ),
);
// The writer runs the writes in the thread pool beside the host (backends/trajectory-files.ts): on two free cores the slower of the two bounds the replay.
report.figure(
  figure(
    'ceiling_events_per_second_pool',
    'ceiling with every ATIF step free and the atomic writes in the thread pool: events / max(ATOF-only time, the atomic writes alone)',
    Math.round(EVENTS / Math.max(atofOnly.seconds, writeFloor)),
    'ev/s',
  ),
);
report.figure(figure('lost_events', 'events not in the ATOF file (ATOF + ATIF run)', Math.max(0, EVENTS - full.atofLines), 'events', { op: '<=', target: 0 }));
report.figure(figure('lost_events_warm', 'events not in the ATOF file (the warm ATOF + ATIF run)', Math.max(0, EVENTS - warm.atofLines), 'events', { op: '<=', target: 0 }));
report.figure(figure('generator_ns_per_event', 'payload generation alone (included in the replay time)', Math.round(generatorNs), 'ns'));
report.fact('events', EVENTS);
report.fact('events_per_session', eventsPerSession(stream.turns, stream.toolCalls));
report.fact('concurrent_sessions', stream.concurrency);
report.fact('sessions', full.sessions);
report.fact('seconds', Math.round(full.seconds * 1000) / 1000);
report.fact('seconds_atof_only', Math.round(atofOnly.seconds * 1000) / 1000);
report.fact('seconds_final_atif_only', Math.round(finalOnly.seconds * 1000) / 1000);
report.fact('seconds_warm', Math.round(warm.seconds * 1000) / 1000);
report.fact('atif_bytes_final_atif_only', finalOnly.atifBytes);
report.fact('atof_lines', full.atofLines);
report.fact('atof_bytes', full.atofBytes);
report.fact('atif_files', full.atifFiles);
report.fact('atif_bytes', full.atifBytes);
report.fact('plugin_hooks', full.hooks);
report.fact('plugin_errors', full.errors);
report.fact('plugin_dropped', full.dropped);
report.fact('logged_warnings', full.warnings + atofOnly.warnings);
report.note(`Stream: ${stream.concurrency} sessions in flight, ${stream.turns} turns x (${stream.toolCalls} tool calls + ${stream.toolCalls + 1} API calls) each, ${eventsPerSession(stream.turns, stream.toolCalls)} events per session; a partial ATIF trajectory after every turn (on_session_end) and the final one at on_session_finalize.`);
report.write();
