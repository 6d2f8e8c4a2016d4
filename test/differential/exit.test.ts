// Nothing is lost at exit. A child process (the runtime running this suite:
// Node on dist/, or Bun, or Deno) creates the plugin over the memory or the
// native backend, emits one session with 1,000 tool calls without waiting
// for the plugin to be ready, and then ends in one of several ways. The
// parent reads the ATOF file back: every one of the 1,000 tool starts has
// its end, and the session scope is closed; the ATIF trajectory is written.
// With `installExitHandlers()` the process must end exactly as it would
// have without the plugin: killed by SIGTERM, or with its own exit code.
// Without it, a SIGTERM, SIGINT or SIGHUP nobody handles still writes what
// was recorded (before, the memory relay lost its buffered ATOF lines and
// the session's partial trajectory, where native had its lines on disk),
// and the process still dies of the signal.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detectRuntime } from '../../src/shared/js-runtime.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';
import { pairsByUuid, readValidAtof, readValidAtif } from '../contract/files.ts';
import { runScript } from '../native/support.ts';
import { inSlowSuite, processBackend } from '../support/slow-suite.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built package entry (dist/ is built by the suite's global setup; Node 20 cannot run .ts). */
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;
const runtime = detectRuntime();
const TOOL_CALLS = 1000;
/**
 * The children's shutdown budget, at exit and in `shutdown()`. What this file
 * checks is that nothing is lost when the plugin has the time it is given;
 * what happens when the budget runs out is test/plugin/startup.test.ts's (the
 * hooks left are counted as dropped and said). The default 5 s is wall-clock
 * time: on a loaded machine the native child's start-up replay alone outlasted
 * it (1,813 of its 2,003 hooks still queued at 5 s), and the losses it then
 * counted and said failed these cases.
 */
const BUDGET_MS = 50_000;

interface Ending {
  /** Whether the child calls `plugin.installExitHandlers()` before emitting. */
  handlers: boolean;
  /** Whether the child awaits `plugin.ready` before emitting (else its hooks queue while the backend loads). */
  ready?: boolean;
  /** What the child does right after emitting. */
  after: string;
  /** The exit handlers' shutdown budget, when not BUDGET_MS. */
  budgetMs?: number;
  /** What the child does before emitting. */
  before?: string;
}

const ENDINGS = {
  'await shutdown(), then process.exit(0) at once': { handlers: false, after: `await plugin.shutdown({ timeoutMs: ${BUDGET_MS} });\nprocess.exit(0);` },
  'SIGTERM while the host is still running': {
    handlers: true,
    // The host's own pending work keeps it alive: only the signal can end it.
    after: "setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGTERM');",
  },
  'SIGTERM as the last thing the host does, hooks still queued': { handlers: true, after: "process.kill(process.pid, 'SIGTERM');" },
  'SIGTERM as the last thing the host does, backend ready': { handlers: true, ready: true, after: "process.kill(process.pid, 'SIGTERM');" },
  'SIGTERM without exit handlers, the host still running': { handlers: false, after: "setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGTERM');" },
  'SIGINT without exit handlers, the host still running': { handlers: false, after: "setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGINT');" },
  'SIGHUP without exit handlers, the host still running': { handlers: false, after: "setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGHUP');" },
  'SIGTERM the host handles itself': {
    handlers: false,
    after: "process.on('SIGTERM', () => setTimeout(() => process.exit(5), 20));\nsetTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGTERM');",
  },
  // A server's thread pool busy at SIGTERM (DNS lookups, crypto, zlib): the
  // trajectory write waits in the pool past the budget, the shutdown runs out
  // of time, and the signal is re-raised. Opens of a FIFO nobody writes stand
  // in for the busy pool: each holds a pool thread, as a slow DNS lookup
  // does, without using the CPU the rest of the suite needs (pbkdf2 did).
  'SIGTERM while the thread pool is busy, shutdown out of time': {
    handlers: true,
    ready: true,
    budgetMs: 300,
    before: "const fs = await import('node:fs');\nconst { execFileSync } = await import('node:child_process');\nexecFileSync('mkfifo', [dir + '/busy']);\nfor (let i = 0; i < 16; i++) fs.open(dir + '/busy', 'r', () => {});",
    after: "setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, 'SIGTERM');",
  },
  // Deno's own exit emits no process 'exit', only the global 'unload'.
  'Deno.exit() without shutdown': { handlers: false, after: 'Deno.exit(3);' },
  'natural end (beforeExit)': { handlers: true, after: '' },
  'natural end (beforeExit) with the host\'s own exit code': { handlers: true, after: 'process.exitCode = 3;' },
} satisfies Record<string, Ending>;

type EndingName = keyof typeof ENDINGS;

function childSource(backend: 'memory' | 'native', dir: string, ending: Ending): string {
  return `
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const dir = ${JSON.stringify(dir)};
const plugin = createNemoRelayPlugin({
  backend: ${JSON.stringify(backend)},
  env: {
    HERMES_NEMO_RELAY_ATOF_ENABLED: '1',
    HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: dir + '/atof',
    HERMES_NEMO_RELAY_ATOF_MODE: 'overwrite',
    HERMES_NEMO_RELAY_ATIF_ENABLED: '1',
    HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir + '/atif',
  },
});
const hooks = new HookRegistry();
plugin.register(hooks);
${ending.handlers ? `plugin.installExitHandlers({ timeoutMs: ${ending.budgetMs ?? BUDGET_MS} });` : ''}
${ending.ready ? 'await plugin.ready;' : ''}
${ending.before ?? ''}
const ids = { session_id: 'exit-1', task_id: 'task-exit', turn_id: 'turn-1' };
hooks.emit('on_session_start', { session_id: 'exit-1', model: 'gpt-4o' });
for (let i = 0; i < ${TOOL_CALLS}; i++) {
  hooks.emit('pre_tool_call', { ...ids, tool_call_id: 'call-' + i, tool_name: 'read_file', args: { path: 'f' + i } });
  hooks.emit('post_tool_call', { ...ids, tool_call_id: 'call-' + i, tool_name: 'read_file', args: { path: 'f' + i }, result: 'r' + i, status: 'ok' });
}
hooks.emit('on_session_end', { ...ids, completed: true });
${ending.after}
`;
}

/** How this runtime ends a process that sends itself `signal` with no handler installed. */
function signalBaseline(signal: string): { status: number | null; signal: string | null } {
  const child = runScript(`setTimeout(() => process.exit(7), 60_000);\nprocess.kill(process.pid, '${signal}');\n`);
  return { status: child.status, signal: child.signal };
}
const sigtermBaseline = signalBaseline('SIGTERM');

/** Every tool call started and ended in the ATOF file; returns its events. */
function expectEveryToolCallInAtof(dir: string): ReturnType<typeof readValidAtof>['events'] {
  const { events } = readValidAtof(path.join(dir, 'atof', 'hermes-atof.jsonl'));
  const starts = events.filter((e) => e.category === 'tool' && e.scope_category === 'start');
  expect(starts.map((e) => e.category_profile?.tool_call_id)).toEqual(Array.from({ length: TOOL_CALLS }, (_, i) => `call-${i}`));
  // One expect for the whole list, not two per call: each expect() has a fixed cost that a thousand calls multiply.
  const pairs = pairsByUuid(events);
  const ends = starts.map((start) => pairs.get(start.uuid)!.ends.map((end) => end.data));
  expect(ends).toEqual(Array.from({ length: TOOL_CALLS }, (_, i) => [`r${i}`]));
  return events;
}

/**
 * The session's trajectory written, with every tool call's result; when not
 * `whole`, the first results in order (docs/known-limits.md: native on Bun
 * and Deno at an exit without shutdown()).
 */
function expectTrajectoryWritten(dir: string, whole = true): void {
  const trajectory = readValidAtif(path.join(dir, 'atif', 'hermes-atif-exit-1.json'));
  const results = trajectory.steps.flatMap((step) => step.observation?.results ?? []);
  const expected = Array.from({ length: TOOL_CALLS }, (_, i) => `r${i}`);
  expect(results.map((result) => result.content)).toEqual(whole ? expected : expected.slice(0, results.length));
}

/**
 * Every tool call started and ended, the session closed, the trajectory
 * written: nothing lost. A host that ends without `shutdown()` (no exit
 * handlers) leaves its session open, as `process.exit()` does: its scope has
 * no end, and everything recorded before is there.
 */
function expectEverythingWritten(dir: string, { sessionClosed = true, wholeTrajectory = true } = {}): void {
  const events = expectEveryToolCallInAtof(dir);
  const session = events.filter((e) => e.name === 'hermes-session-exit-1');
  expect(session.map((e) => e.scope_category)).toEqual(sessionClosed ? ['start', 'end'] : ['start']);
  expect(events.filter((e) => e.name === 'hermes.session.end')).toHaveLength(1);
  expect(events).toHaveLength(2 * TOOL_CALLS + (sessionClosed ? 3 : 2));
  expectTrajectoryWritten(dir, wholeTrajectory);
}

/**
 * npm test runs the memory half and `npm run test:slow` the native half, on
 * every runtime (vitest.slow.config.ts), as for the MCP files whose agents
 * are processes (`processBackend`): the native children were the larger
 * share of this file's CPU (bench/RESULTS.md, "npm test's time on the
 * machines of 2026-12-07"). Each half says why it is skipped.
 */
const otherSuite = inSlowSuite ? 'npm test' : 'npm run test:slow';
const backends: ['memory' | 'native', string | null][] = (['memory', 'native'] as const).map((backend) => [
  backend,
  backend === 'native' && !nativeAvailable ? `native backend cannot load here (${nativeLoadError})` : backend === processBackend ? null : `${otherSuite} runs the ${backend} half`,
]);
for (const [backend, skipped] of backends) if (skipped !== null) console.info(`[exit] ${backend} backend skipped: ${skipped}`);

describe.each(backends)(`nothing lost at exit on ${runtime}: %s backend`, (backend, skipped) => {
  const title = skipped === null ? 'child process' : `skipped: ${skipped}`;
  describe.skipIf(skipped !== null)(title, () => {
    const run = (name: EndingName) => {
      const dir = tempDir(`exit-${backend}`);
      const child = runScript(childSource(backend, dir, ENDINGS[name]));
      return { dir, child, context: `status ${child.status}, signal ${child.signal}\nstderr: ${child.stderr.slice(0, 2000)}` };
    };

    it('writes every event when the host awaits shutdown() and exits at once', () => {
      const { dir, child, context } = run('await shutdown(), then process.exit(0) at once');
      expect(child.status, context).toBe(0);
      expect(child.stderr, context).not.toContain('[nemo-relay-hooks]');
      expectEverythingWritten(dir);
    });

    it('writes every event on SIGTERM, then dies of SIGTERM as it would without handlers', () => {
      expect(sigtermBaseline.signal === 'SIGTERM' || sigtermBaseline.status === 143).toBe(true);
      const { dir, child, context } = run('SIGTERM while the host is still running');
      expect({ status: child.status, signal: child.signal }, context).toEqual(sigtermBaseline);
      expect(child.stderr, context).not.toContain('[nemo-relay-hooks]');
      expectEverythingWritten(dir);
    });

    /**
     * What an exit without `shutdown()` leaves. Memory: everything (the session left open, as at any such exit).
     * Native hands events to the plugin on its own schedule, on every runtime (docs/known-limits.md; measured: a
     * SIGTERM right after 1,000 tool calls left 95 to 127 results on Node 22): the ATOF file is whole, the
     * trajectory holds the first results or is not written when none of its steps had arrived, and stderr says so.
     */
    const expectWrittenAtExit = (dir: string, child: { stderr: string }, context: string) => {
      if (backend === 'memory') {
        expectEverythingWritten(dir, { sessionClosed: false });
        return;
      }
      expectEveryToolCallInAtof(dir);
      const file = path.join(dir, 'atif', 'hermes-atif-exit-1.json');
      if (fs.existsSync(file)) expectTrajectoryWritten(dir, false);
      const whole = fs.existsSync(file) && readValidAtif(file).steps.flatMap((step) => step.observation?.results ?? []).length === TOOL_CALLS;
      if (!whole) expect(child.stderr, context).toContain('still in flight');
    };
    // The signal listener is the library's, whichever the backend: native runs it for SIGTERM, memory for all three.
    const unhandled = [
      ['SIGTERM', 'SIGTERM without exit handlers, the host still running'],
      ...(backend === 'memory'
        ? ([
            ['SIGINT', 'SIGINT without exit handlers, the host still running'],
            ['SIGHUP', 'SIGHUP without exit handlers, the host still running'],
          ] as const)
        : []),
    ] as const;
    // Deno: the library listens for no signal there (its listener needs a descriptor, and Deno panics where none is left).
    if (runtime === 'deno') console.info(`[exit tests] ${backend}: the signals nobody handles are not tested on deno: the library does not listen for them there`);
    it.skipIf(runtime === 'deno').each(unhandled)('writes every event on a %s nobody handles, then dies of it as it would without the plugin', (signal, ending) => {
      const baseline = signal === 'SIGTERM' ? sigtermBaseline : signalBaseline(signal);
      const { dir, child, context } = run(ending);
      expect({ status: child.status, signal: child.signal }, context).toEqual(baseline);
      expectWrittenAtExit(dir, child, context);
    });

    it('leaves a SIGTERM the host handles to the host: its own exit code, everything written at its exit', () => {
      const { dir, child, context } = run('SIGTERM the host handles itself');
      expect(child.status, context).toBe(5);
      expectWrittenAtExit(dir, child, context);
    });

    if (runtime === 'deno') console.info(`[exit tests] ${backend}: on deno the busy-pool case is a SIGTERM with time enough (Deno's file pool is not filled by 16 waiting opens)`);
    it('writes every file on SIGTERM when the shutdown runs out of time, then dies of SIGTERM', () => {
      const { dir, child, context } = run('SIGTERM while the thread pool is busy, shutdown out of time');
      expect({ status: child.status, signal: child.signal }, context).toEqual(sigtermBaseline);
      // The case is what it says: the shutdown did run out of its budget behind the busy pool. Not on
      // Deno, whose file operations wait in a pool of hundreds of threads that 16 opens do not fill.
      if (runtime !== 'deno') expect(child.stderr, context).toContain('shutdown did not finish within 300 ms');
      // What was recorded and the trajectory are written. Whether the session's scope end made it
      // depends on how far the shutdown got in its budget (on Deno it can still be waiting for the
      // pool before it closes sessions); an exit closes no scope, as at any exit without shutdown().
      expectEveryToolCallInAtof(dir);
      // Native's trajectory holds what native had handed back when the budget ran out: on a slow machine a prefix
      // (250 of 1,000 results under strace), as at any exit its work had not caught up with (docs/known-limits.md).
      expectTrajectoryWritten(dir, backend === 'memory');
    });

    // Deno hands a signal to JS listeners asynchronously: when the host sends
    // it as its very last act, whether it is handled before the natural exit
    // is a race, with or without the plugin. Not testable deterministically
    // there; the "still running" case above covers Deno.
    const raceUntestable = runtime === 'deno';
    if (raceUntestable) {
      console.warn(`[exit tests] ${backend}: exit status after "SIGTERM as the last thing the host does" skipped on deno: a race in Deno's signal delivery`);
    }
    // On Node a signal still pending when the event loop runs dry is never
    // dispatched; installExitHandlers' beforeExit listener gives the loop one
    // more turn after its shutdown so a last-act SIGTERM still kills the host.
    const lastAct = [
      ['hooks still queued', 'SIGTERM as the last thing the host does, hooks still queued'],
      ['backend ready', 'SIGTERM as the last thing the host does, backend ready'],
    ] as const;
    const lastActRuns = new Map<string, ReturnType<typeof run>>();
    const runOnce = (ending: EndingName) => {
      if (!lastActRuns.has(ending)) lastActRuns.set(ending, run(ending));
      return lastActRuns.get(ending)!;
    };
    // The data is complete whichever way the race goes, so this part runs everywhere.
    it.each(lastAct)('writes every event when SIGTERM is the last thing the host does (%s)', (_label, ending) => {
      expectEverythingWritten(runOnce(ending).dir);
    });
    for (const [label, ending] of lastAct) {
      const test = raceUntestable ? it.skip : it;
      test(`still dies of SIGTERM when it is the last thing the host does (${label})`, () => {
        const { child, context } = runOnce(ending);
        expect({ status: child.status, signal: child.signal }, context).toEqual(sigtermBaseline);
      });
    }

    it('writes every event on a natural end through beforeExit, with exit code 0', () => {
      const { dir, child, context } = run('natural end (beforeExit)');
      expect(child.status, context).toBe(0);
      expect(child.signal, context).toBeNull();
      expect(child.stderr, context).not.toContain('[nemo-relay-hooks]');
      expectEverythingWritten(dir);
    });

    if (runtime !== 'deno') console.info(`[exit tests] ${backend}: Deno.exit() is tested on deno only`);
    it.skipIf(runtime !== 'deno')('writes every event at Deno.exit() without shutdown(), with its exit code', () => {
      const { dir, child, context } = run('Deno.exit() without shutdown');
      expect(child.status, context).toBe(3);
      expectWrittenAtExit(dir, child, context);
    });

    it('keeps the host\'s own exit code on a natural end', () => {
      const { dir, child, context } = run('natural end (beforeExit) with the host\'s own exit code');
      expect(child.status, context).toBe(3);
      expectEverythingWritten(dir);
    });
  });
});

// On Deno the exit tasks run at Deno.exit() (its 'unload') and at process.exit() and a natural end, which dispatch
// both 'exit' and 'unload': once each time, not twice.
if (runtime !== 'deno') console.info(`[exit tests] the exit tasks at Deno.exit() and Deno's 'unload' are tested on deno only (${runtime} has neither)`);
describe.skipIf(runtime !== 'deno')('the exit tasks on deno', () => {
  const HOOK = pathToFileURL(path.join(ROOT, 'src', 'shared', 'exit-hook.ts')).href;
  const ends = [
    ['Deno.exit()', 'Deno.exit(4);', 4],
    ['process.exit()', 'process.exit(4);', 4],
    ['a natural end', '', 0],
  ] as const;
  it.each(ends)('run once at %s', (_label, end, status) => {
    const child = runScript(`import { atExit } from ${JSON.stringify(HOOK)};\natExit(() => console.log('exit task ran'));\n${end}\n`);
    expect(child.status, child.stderr).toBe(status);
    expect(child.stdout.match(/exit task ran/g)).toEqual(['exit task ran']);
  });
});
