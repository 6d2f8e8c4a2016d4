// The plugin records by default (ATOF and ATIF under ./nemo-relay-output/)
// when nothing is configured. Tests create plugins with nothing configured
// all the time, and must not write into the checkout: this turns the
// default outputs off for the whole run, in every worker and every child
// process they start (they inherit the variable), as an operator would.
// A test that means to exercise the default recording asks for it
// explicitly: `settings: { outputs: true }` or `NEMO_RELAY_HOOKS_OUTPUTS=on`
// in the env it passes, with a temporary working directory.
//
// The teardown fails the run if a default output folder appeared in the
// checkout anyway, naming it, so a leak is found where it starts.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDER = 'nemo-relay-output';

export default function setup(): () => void {
  const previous = process.env.NEMO_RELAY_HOOKS_OUTPUTS;
  const existed = existsSync(path.join(ROOT, FOLDER));
  process.env.NEMO_RELAY_HOOKS_OUTPUTS = 'off';
  return () => {
    if (previous === undefined) delete process.env.NEMO_RELAY_HOOKS_OUTPUTS;
    else process.env.NEMO_RELAY_HOOKS_OUTPUTS = previous;
    const leaked = path.join(ROOT, FOLDER);
    if (!existed && existsSync(leaked)) {
      const files = readdirSync(leaked).slice(0, 5).join(', ');
      rmSync(leaked, { recursive: true, force: true });
      throw new Error(`a test wrote the plugin's default outputs into the checkout (${FOLDER}/: ${files}); give it settings, or a temporary cwd`);
    }
  };
}
