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
  proc.on('exit', () => {
    for (const task of [...tasks]) {
      try {
        task();
      } catch {
        // Nothing can be reported this late; the other tasks still run.
      }
    }
  });
}
