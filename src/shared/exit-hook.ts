/**
 * One process `exit` listener for everything that must be written before
 * the process goes away: the in-memory relay's buffered ATOF lines and
 * plugins.toml trajectories, and the plugin's per-session trajectories. `exit` listeners run synchronously on a natural end, on
 * `process.exit()` and after an uncaught exception, which is why every
 * writer here is synchronous.
 *
 * Runtimes without a `process.on` (none of Node, Bun and Deno) simply get
 * no hook; explicit `flush()`/`close()` still work.
 *
 * @module
 */

const tasks = new Set<() => void>();
let installed = false;

/** Runs `task` at process exit until the returned function removes it. */
export function atExit(task: () => void): () => void {
  install();
  tasks.add(task);
  return () => {
    tasks.delete(task);
  };
}

function install(): void {
  if (installed) return;
  const proc = (globalThis as { process?: { on?: (event: string, listener: () => void) => unknown } }).process;
  if (typeof proc?.on !== 'function') return;
  installed = true;
  proc.on('exit', runTasks);
  // Deno emits no process 'exit' after an uncaught exception; its global
  // 'error' event comes first, and the process still dies with the error
  // afterwards (nothing here prevents the default).
  const deno = (globalThis as { Deno?: unknown }).Deno;
  const target = globalThis as { addEventListener?: (type: string, listener: () => void) => void };
  if (deno !== undefined && typeof target.addEventListener === 'function') {
    target.addEventListener('error', runTasks);
    target.addEventListener('unhandledrejection', runTasks);
  }
}

function runTasks(): void {
  // Per call: a Deno host that keeps running after its 'error' event (it
  // prevented the default) gets every task again at its real exit.
  const ran = new Set<() => void>();
  // A task may add tasks (the plugin records hooks still queued for a
  // backend that never loaded into a relay created right now, whose file
  // writers register here): they run too, after the ones before them.
  for (let round = [...tasks].filter((task) => !ran.has(task)); round.length > 0; round = [...tasks].filter((task) => !ran.has(task))) {
    for (const task of round) {
      ran.add(task);
      try {
        task();
      } catch {
        // Nothing can be reported this late; the other tasks still run.
      }
    }
  }
}
