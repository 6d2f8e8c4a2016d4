/**
 * Noticing that the package manager that started a long-running command is
 * gone. `npx nemo-relay-hooks view --serve` runs the CLI as npm's
 * grandchild (npm, `sh -c`, then the CLI): a SIGTERM to npm ends npm and the
 * shell but never reaches the CLI, which went on serving, orphaned. An
 * orphan is handed to another parent (init, or a subreaper), so its parent
 * pid changes; looking at it once a second costs nothing.
 *
 * Only under npm (`npm_command`, which `npx`, `npm exec` and `npm run`
 * set): a server started with `nohup … &` is meant to outlive its shell.
 *
 * @module
 */

import { unrefTimer } from '../shared/timers.ts';

/** Calls `gone` once when the process's parent changes; returns the stop of the watch. A no-op outside npm. */
export function watchLauncher(env: Readonly<Record<string, string | undefined>>, gone: () => void, everyMs = 1000): () => void {
  if (env.npm_command === undefined) return () => {};
  const parent = parentPid();
  if (parent === undefined) return () => {};
  const timer = unrefTimer(
    setInterval(() => {
      if (parentPid() === parent) return;
      clearInterval(timer);
      gone();
    }, everyMs),
  );
  return () => clearInterval(timer);
}

function parentPid(): number | undefined {
  try {
    const ppid = process.ppid;
    return typeof ppid === 'number' && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}
