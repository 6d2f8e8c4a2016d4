#!/usr/bin/env node
/**
 * The `nemo-relay-hooks` executable. Runs on Node (`dist/src/cli/main.js`),
 * Bun (`bun src/cli/main.ts`) and Deno (`deno run -A src/cli/main.ts`).
 *
 * @module
 */

import { processIo } from './io.ts';
import { runCli } from './dispatch.ts';

// `nemo-relay-hooks view x | head` closes the pipe early; that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  });
}

const code = await runCli(process.argv.slice(2), processIo());
process.exitCode = code;
// A backend that keeps a handle open must not keep a finished CLI alive.
setTimeout(() => process.exit(code), 3000).unref();
