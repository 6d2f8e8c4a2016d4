/**
 * The host's blocking time per session export: the main thread's own CPU
 * time (`/proc/self/task/<pid>/stat`, Linux only: the worker's time is not
 * in it, and waiting costs none) while the memory relay records and exports
 * 80-event sessions one after the other, with trajectories built on the
 * relay's worker thread and on the host's thread (`atifWorker: false`),
 * minus the same loop recording without exporting, all in the same run.
 * Each session is exported twice, a partial write after half its turns and
 * the final one, as the plugin does. Wall time per session is reported too.
 *
 * The event loop's utilisation was tried first and rejected: it counted
 * ~0.45 ms of "activity" per round trip to a worker that did all the work.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { createMemoryRelay, type MemoryRelay } from '../../src/backends/memory/index.ts';
import type { AtifExporter, ScopeHandle } from '../../src/relay/contract.ts';
import { CaseReport, figure, iterations, log, nowNs } from '../harness.ts';
import { chatBody } from '../support/payloads.ts';

const report = new CaseReport('atif-export', 'ATIF export: main-thread time per session export, worker vs in-thread');
const SESSIONS = iterations(400, 20);
const TURNS = 6;
const BODY = chatBody(700, 4);

/** `turns` turns of the bench stream's shape (3 LLM calls, 2 tool calls, 2 marks: 16 events each). */
function recordTurns(relay: MemoryRelay, scope: ScopeHandle, from: number, turns: number): void {
  for (let turn = from; turn < from + turns; turn++) {
    relay.mark({ name: 'turn.start', parent: scope, data: { turn } });
    for (let call = 0; call < 3; call++) {
      const llm = relay.llmStart({ name: 'gpt-4o-mini', parent: scope, request: { headers: {}, content: BODY } });
      relay.llmEnd(llm, { response: { id: `r-${turn}-${call}`, choices: [{ message: { role: 'assistant', content: 'Checking the runner logs now.' } }] } });
      if (call < 2) {
        const tool = relay.toolStart({ name: 'search_notes', parent: scope, args: { query: `nightly ${turn} ${call}` } });
        relay.toolEnd(tool, { result: { hits: [`note ${turn}`, `note ${call}`] } });
      }
    }
    relay.mark({ name: 'turn.end', parent: scope, data: { turn } });
  }
}

/** CPU time of the main thread alone, in ms (utime + stime of its task), or NaN off Linux. */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), counted from the state field (3rd): clock ticks, 100 per second on Linux.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

interface Outcome {
  /** Main-thread CPU ms in all. */
  cpuMs: number;
  wallUs: number;
  trajectoryBytes: number;
  fallbacks: number;
}

const yieldOnce = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

async function measure(mode: 'worker' | 'in-thread' | 'no-export'): Promise<Outcome> {
  const relay = createMemoryRelay({ atifWorker: mode === 'worker' });
  // A line sink keeps the relay on its byte path, as the plugin's ATOF file does.
  relay.registerAtofExporter({ outputDirectory: '/dev', filename: 'null', mode: 'append' });
  let count = 0;
  const open = () => {
    const scope = relay.pushScope({ name: 'agent', category: 'agent' });
    const exporter = relay.registerAtifExporter({ scope, sessionId: `s-${count++}`, agentName: 'bench', agentVersion: '1' });
    return { scope, exporter };
  };
  // Exporting, or (no-export) yielding as often, so the loop's own cost is in every mode.
  const exportOnce = async (exporter: AtifExporter): Promise<number> => {
    if (mode === 'no-export') {
      await yieldOnce();
      return 0;
    }
    return (await exporter.exportJson()).length;
  };
  // One session first, so the worker has started and the code is warm before the clock runs.
  const warm = open();
  recordTurns(relay, warm.scope, 0, TURNS);
  const trajectoryBytes = await exportOnce(warm.exporter);
  warm.exporter.deregister();
  const cpu0 = mainThreadCpuMs();
  const t0 = nowNs();
  for (let i = 0; i < SESSIONS; i++) {
    const { scope, exporter } = open();
    recordTurns(relay, scope, 0, TURNS / 2);
    await exportOnce(exporter);
    recordTurns(relay, scope, TURNS / 2, TURNS / 2);
    relay.popScope(scope);
    await exportOnce(exporter);
    exporter.deregister();
  }
  const wallUs = Number(nowNs() - t0) / 1e3 / SESSIONS;
  const cpuMs = mainThreadCpuMs() - cpu0;
  const fallbacks = relay.stats().atifWorkerFallbacks;
  await relay.shutdown();
  return { cpuMs, wallUs, trajectoryBytes, fallbacks };
}

// A first recording-only loop warms the recording code, so the one kept (the last) is not charged for the JIT.
await measure('no-export');
const inThread = await measure('in-thread');
const worker = await measure('worker');
const recording = await measure('no-export');
if (Number.isNaN(worker.cpuMs)) log('  (no /proc/self/task: the main-thread figures are not measured on this system)');
// The tick (10 ms) spread over the sessions: differences below it are noise, so nothing reads below it.
const resolutionUs = Math.round(10_000 / SESSIONS);
const perSession = (outcome: Outcome) => Math.max(resolutionUs, Math.round(((outcome.cpuMs - recording.cpuMs) * 1000) / SESSIONS));
report.figure(figure('main_thread_us_per_session_worker', 'main-thread CPU per session for its two exports (partial + final), worker', perSession(worker), 'us'));
report.figure(figure('main_thread_us_per_session_in_thread', 'main-thread CPU per session for its two exports (partial + final), in-thread', perSession(inThread), 'us'));
report.figure(figure('main_thread_ratio', 'main-thread export CPU, in-thread / worker (same run)', Math.round((perSession(inThread) / perSession(worker)) * 10) / 10, 'x'));
report.figure(figure('wall_us_per_session_worker', 'wall time per session (recording + two exports), worker', Math.round(worker.wallUs), 'us'));
report.figure(figure('wall_us_per_session_in_thread', 'wall time per session (recording + two exports), in-thread', Math.round(inThread.wallUs), 'us'));
report.fact('sessions', SESSIONS);
report.fact('resolution_us', resolutionUs);
report.fact('recording_main_thread_us_per_session', Math.round((recording.cpuMs * 1000) / SESSIONS));
report.fact('trajectory_bytes', worker.trajectoryBytes);
report.fact('atif_worker_fallbacks', worker.fallbacks);
report.note('Main-thread CPU: utime + stime of the main thread\'s task (Linux, 10 ms ticks, summed over all sessions), minus the same loop recording without exporting, never below the resolution (10 ms / sessions); the worker\'s CPU is not in it.');
report.write();
