/**
 * How a user runs this command again, on the runtime and from the place they
 * ran it: the forms docs/cli/README.md gives. Node's `npx` finds the package's
 * bin where it is installed and in a checkout alike; Bun and Deno have their
 * own runners for an installed package (a Bun or Deno machine may have no
 * `npx`), and a checkout runs its entry file with the checkout's own bun or
 * deno, which `npx` finds among its dev dependencies.
 *
 * @module
 */
import path from 'node:path';
import type { RuntimeName } from '../shared/js-runtime.ts';
import { PROGRAM } from './help.ts';

/**
 * The command line that starts this CLI again: `entry` is the script the
 * runtime started (`process.argv[1]`: the package's bin, or a checkout's
 * `src/cli/main.ts`), `cwd` where the printed line will be typed.
 */
export function cliInvocation(runtime: RuntimeName, entry: string | undefined, cwd: string, execPath: string): string {
  if (runtime !== 'bun' && runtime !== 'deno') return `npx ${PROGRAM}`;
  const run = runtime === 'deno' ? ' run -A' : '';
  if (entry === undefined || /[\\/]node_modules[\\/]/.test(entry)) return runtime === 'bun' ? `bunx --bun ${PROGRAM}` : `deno run -A npm:${PROGRAM}`;
  const relative = path.relative(cwd, entry);
  // Inside the checkout, its own bun or deno through npx; from elsewhere npx would not find it: the runtime that ran.
  if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)) return `npx ${runtime}${run} ${relative}`;
  return `${execPath}${run} ${entry}`;
}
