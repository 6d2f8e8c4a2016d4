// One temporary folder per test run, removed when the run ends. os.tmpdir()
// reads TMPDIR (Node, Bun and Deno alike), and the forked workers and the
// CLI child processes they start inherit it, so every mkdtemp in the suite
// lands here. Without it each run left a few thousand folders and the
// million-line replay's 1.5 GB in the system temp folder.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const;

export default function setup(): () => void {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nrh-test-run-'));
  const previous = VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of VARIABLES) process.env[name] = root;
  return () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(root, { recursive: true, force: true });
  };
}
