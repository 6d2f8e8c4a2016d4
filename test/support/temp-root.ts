// One temporary folder per test run, removed when the run ends. os.tmpdir()
// reads TMPDIR (Node, Bun and Deno alike), and the forked workers and the
// CLI child processes they start inherit it, so every mkdtemp in the suite
// lands here. Without it each run left a few thousand folders and the
// million-line replay's 1.5 GB in the system temp folder.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const;

export default function setup(): () => Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nrh-test-run-'));
  const previous = VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of VARIABLES) process.env[name] = root;
  return async () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    // Asynchronous: vitest runs this while it is still stopping the workers of the last files, and a synchronous
    // removal of everything the run wrote held the main process's event loop (on a loaded machine, with the disk
    // shared, past vitest's stop timers): the workers' answers sat unread behind it, the timers fired first, and
    // vitest reported the last file's worker as failing to terminate ("Timeout terminating forks worker for test
    // files .../frameworks.test.ts") although nothing kept it alive.
    await rm(root, { recursive: true, force: true });
  };
}
