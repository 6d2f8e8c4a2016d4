/**
 * Memory: bytes per open session, with 10,000 sessions open at once.
 *
 * Heap after a forced GC with the sessions open, minus the heap before they
 * were opened, divided by the count. Three shapes, each on a fresh plugin
 * (memory backend, ATOF to /dev/null so the disk plays no part):
 * - a session that only started;
 * - a session mid-conversation: one turn with an LLM call and a tool call
 *   recorded, ATIF builder on (it keeps the session's events for the
 *   trajectory);
 * - the same with ATOF only.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaseReport, canCollect, figure, iterations, peakRss, settledHeap } from '../harness.ts';
import * as fixtures from '../support/payloads.ts';
import { DEV_NULL_ATOF, memoryPlugin, tick, type BenchPlugin } from '../support/plugin.ts';

const report = new CaseReport('memory-sessions', 'Memory: bytes per open session (10,000 concurrent sessions)');
const SESSIONS = iterations(10_000, 100);

type Opener = (bench: BenchPlugin, sessionId: string) => void;

const startOnly: Opener = (bench, id) => bench.emit('on_session_start', fixtures.sessionStart(id));

const oneTurn: Opener = (bench, id) => {
  const ids = fixtures.idsOf(id, 0);
  bench.emit('on_session_start', fixtures.sessionStart(id));
  bench.emit('pre_llm_call', fixtures.preLlmCall(ids));
  bench.emit('pre_api_request', fixtures.preApiRequest(ids, 1, fixtures.SMALL_BODY));
  bench.emit('post_api_request', fixtures.postApiRequest(ids, 1));
  bench.emit('pre_tool_call', fixtures.preToolCall(ids, 1));
  bench.emit('post_tool_call', fixtures.postToolCall(ids, 1));
};

/**
 * ATIF on, with a folder: the plugin registers no trajectory exporter
 * without one, so the builders would not exist. Sessions stay open, so
 * nothing is written there before the measurement.
 */
const atifFolder = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-sessions-'));

async function bytesPerSession(label: string, atif: boolean, open: Opener): Promise<{ bytes: number; sessions: number }> {
  const settings = { ...DEV_NULL_ATOF, atifEnabled: atif, ...(atif ? { atifOutputDirectory: path.join(atifFolder, label) } : {}) };
  // Warm the code paths on a throwaway plugin, so JIT code and caches are not billed to the sessions.
  const warm = memoryPlugin(`${label}-warmup`, settings);
  for (let i = 0; i < 2000; i++) open(warm, `warm-${i}`);
  await warm.plugin.shutdown();
  await tick();

  const bench = memoryPlugin(label, settings);
  open(bench, 'first');
  await bench.plugin.flush();
  const before = await settledHeap();
  for (let i = 0; i < SESSIONS; i++) {
    open(bench, `${label}-${i}`);
    if (i % 1000 === 999) await tick();
  }
  await bench.plugin.flush();
  const after = await settledHeap();
  const sessions = bench.plugin.status().sessions - 1;
  await bench.plugin.shutdown();
  if (bench.warnings > 0) report.note(`${label}: ${bench.warnings} warnings logged`);
  return { bytes: (after - before) / SESSIONS, sessions };
}

if (!canCollect()) report.note('no GC hook (run Node with --expose-gc, Deno with --v8-flags=--expose-gc): heap figures include garbage');

const turn = await bytesPerSession('one-turn-atif', true, oneTurn);
const started = await bytesPerSession('start-only-atif', true, startOnly);
const atofOnly = await bytesPerSession('one-turn-atof-only', false, oneTurn);

rmSync(atifFolder, { recursive: true, force: true });
report.figure(figure('bytes_per_session', 'bytes per open session (one turn recorded, ATOF + ATIF builder)', Math.round(turn.bytes), 'B'));
report.figure(figure('bytes_per_session_started', 'bytes per open session (just started, ATOF + ATIF builder)', Math.round(started.bytes), 'B'));
report.figure(figure('bytes_per_session_atof_only', 'bytes per open session (one turn recorded, ATOF only)', Math.round(atofOnly.bytes), 'B'));
report.figure(figure('open_sessions', 'sessions open at measurement', turn.sessions, 'sessions', { op: '>=', target: SESSIONS }));
report.fact('peak_rss_bytes', peakRss());
report.note('One turn = on_session_start, pre_llm_call, pre_api_request + post_api_request (small chat request), pre_tool_call + post_tool_call. ATOF goes to /dev/null; ATIF builders are registered (their folder is a temporary one) and sessions stay open, so no file is written: the heap holds exactly what an open session costs.');
report.write();
