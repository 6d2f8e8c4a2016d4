/**
 * Memory: sessions that are never closed stay bounded by eviction.
 *
 * A host that loses track of sessions (crashes between turns, clients that
 * vanish) never sends on_session_finalize. The plugin caps live sessions
 * (`maxSessions`, least recently active closed first) and closes idle ones
 * (`sessionIdleTtlMs`); an evicted session gets its partial trajectory
 * written. Two runs, each opening sessions (on_session_start +
 * pre_llm_call) and never closing them:
 *
 * - cap: `maxSessions` = 5,000, TTL off; 100,000 sessions. Heap once the
 *   cap is full (and the plugin's bounded caches are) vs after all of them.
 * - idle TTL: `sessionIdleTtlMs` = 200 ms, no cap in reach; sessions open
 *   at a steady rate for ~3 s. Live sessions and heap stay flat.
 *
 * ATIF trajectories are written to files (a tmpfs when there is one), so
 * the eviction path runs in full.
 *
 * @module
 */

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaseReport, canCollect, figure, iterations, peakRss, settledHeap } from '../harness.ts';
import * as fixtures from '../support/payloads.ts';
import { DEV_NULL_ATOF, memoryPlugin, tick, type BenchPlugin } from '../support/plugin.ts';

const report = new CaseReport('memory-eviction', 'Memory: sessions never closed stay bounded (maxSessions, idle TTL)');
const CAP = 5_000;
// Warm-up: the cap full and past the plugin's bounded caches (it remembers the last 10,000 closed session ids).
const WARM = CAP + 12_000;
const SESSIONS = Math.max(WARM + 10_000, iterations(100_000));
const TTL_MS = 200;
const TTL_SECONDS = Math.max(1, 3 * Math.min(1, Math.sqrt(SESSIONS / 100_000)));
const root = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

function open(bench: BenchPlugin, id: string): void {
  bench.emit('on_session_start', fixtures.sessionStart(id));
  bench.emit('pre_llm_call', fixtures.preLlmCall(fixtures.idsOf(id, 0)));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

if (!canCollect()) report.note('no GC hook (run Node with --expose-gc, Deno with --v8-flags=--expose-gc): heap figures include garbage');

// ------------------------------------------------------------------ cap

{
  const dir = mkdtempSync(path.join(root, 'nemo-relay-bench-evict-'));
  try {
    const bench = memoryPlugin('evict-cap', { ...DEV_NULL_ATOF, atifEnabled: true, atifOutputDirectory: dir }, { maxSessions: CAP, sessionIdleTtlMs: 0 });
    let next = 0;
    const openMany = async (count: number) => {
      for (let i = 0; i < count; i++) {
        open(bench, `cap-${next++}`);
        if (next % 1000 === 0) await tick();
      }
      await bench.plugin.flush();
    };
    await openMany(WARM); // cap full, evictions running, caches full, code warm
    const full = await settledHeap();
    const liveAtFull = bench.plugin.status().sessions;
    await openMany(SESSIONS - WARM);
    const after = await settledHeap();
    const status = bench.plugin.status();
    report.figure(figure('cap.heap_after_over_full', `maxSessions ${CAP.toLocaleString('en-US')}: heap after ${SESSIONS.toLocaleString('en-US')} sessions / heap with the cap just full`, Math.round((after / full) * 1000) / 1000, 'x', { op: '<=', target: 1.05 }));
    report.figure(figure('cap.live_sessions', 'maxSessions: live sessions at the end', status.sessions, 'sessions', { op: '<=', target: CAP }));
    report.figure(figure('cap.evicted', 'maxSessions: sessions evicted', status.counters.evictedSessions, 'sessions'));
    report.fact('cap.live_at_full', liveAtFull);
    report.fact('cap.heap_full_mib', Math.round((full / 2 ** 20) * 100) / 100);
    report.fact('cap.heap_after_mib', Math.round((after / 2 ** 20) * 100) / 100);
    report.fact('cap.bytes_growth_per_session', Math.round(((after - full) / (SESSIONS - WARM)) * 100) / 100);
    report.fact('cap.atif_files', readdirSync(dir).length);
    await bench.plugin.shutdown({ timeoutMs: 120_000 });
    if (bench.warnings > 0) report.note(`evict-cap: ${bench.warnings} warnings logged`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ idle TTL

{
  const dir = mkdtempSync(path.join(root, 'nemo-relay-bench-ttl-'));
  try {
    const bench = memoryPlugin('evict-ttl', { ...DEV_NULL_ATOF, atifEnabled: true, atifOutputDirectory: dir }, { sessionIdleTtlMs: TTL_MS });
    const perTick = 100;
    const tickMs = 10;
    let next = 0;
    const runFor = async (seconds: number, atLeast = 0): Promise<number> => {
      let maxLive = 0;
      const end = Date.now() + seconds * 1000;
      while (Date.now() < end || next < atLeast) {
        for (let i = 0; i < perTick; i++) open(bench, `ttl-${next++}`);
        maxLive = Math.max(maxLive, bench.plugin.status().sessions);
        await sleep(tickMs);
      }
      await bench.plugin.flush();
      return maxLive;
    };
    await runFor(TTL_SECONDS / 3, 12_000); // steady state, past the 10,000 remembered closed ids
    const steady = await settledHeap();
    const opened0 = next;
    const maxLive = await runFor(TTL_SECONDS);
    const after = await settledHeap();
    const status = bench.plugin.status();
    report.figure(figure('ttl.heap_after_over_steady', `idle TTL ${TTL_MS} ms: heap after ${(next - opened0).toLocaleString('en-US')} more sessions / steady-state heap`, Math.round((after / steady) * 1000) / 1000, 'x', { op: '<=', target: 1.1 }));
    report.figure(figure('ttl.max_live_sessions', 'idle TTL: most sessions live at once', maxLive, 'sessions'));
    report.figure(figure('ttl.evicted', 'idle TTL: sessions evicted', status.counters.evictedSessions, 'sessions'));
    report.fact('ttl.sessions_opened', next);
    report.fact('ttl.open_rate_per_s', Math.round((perTick * 1000) / tickMs));
    report.fact('ttl.atif_files', readdirSync(dir).length);
    await bench.plugin.shutdown({ timeoutMs: 120_000 });
    if (bench.warnings > 0) report.note(`evict-ttl: ${bench.warnings} warnings logged`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

report.fact('peak_rss_bytes', peakRss());
report.note(`Sessions: on_session_start + pre_llm_call, never finalized. ATIF files go to ${root === '/dev/shm' ? 'a tmpfs (/dev/shm)' : 'the temp dir'}; ATOF to /dev/null. The TTL run opens 100 sessions every 10 ms; eviction runs when a new session opens.`);
report.write();
