/**
 * The second half of `npm run build` (run with Bun, a dev dependency):
 * turns tsc's one-file-per-module `dist/` into one module per public entry
 * point plus shared chunks.
 *
 * Why: Node 20 pays about 1 ms per ES module on a cold import, and the main
 * entry is ~110 modules, so `import 'nemo-relay-hooks'` cost several times
 * `import '@opentelemetry/api'` (bench `import-cost`). Bundled with code
 * splitting, every entry is one file and the code two entries share lives
 * once, in `dist/chunks/`, so module state (the hooks registry, the error
 * classes `instanceof` checks, the process-wide activation) is still one
 * copy whichever entries a host imports. Lazily imported modules (the
 * plugins.toml machinery, the OTLP exporters' glue) stay separate chunks.
 *
 * tsc still writes the `.d.ts` files (types are unchanged); the per-module
 * `.js` files the bundle replaced are removed, so nothing can import a
 * second copy of a module from a deep path.
 *
 *   bun .ci/bundle.ts
 *
 * @module
 */

import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dir, '..');
const dist = path.join(root, 'dist');

/**
 * Every module a user or the runtime loads by path: the package's
 * `exports`, the CLI and the native adapter (loaded by a URL computed at
 * run time, which the bundler cannot see).
 */
const ENTRIES = [
  'src/index.js',
  'src/hooks/index.js',
  'src/formats/index.js',
  'src/relay/index.js',
  'src/backends/memory/index.js',
  'src/testing/index.js',
  'src/adapters/ai-sdk/index.js',
  'src/adapters/openai-agents/index.js',
  'src/adapters/langchain/index.js',
  'src/adapters/claude-agent-sdk/index.js',
  'src/adapters/mcp/index.js',
  'src/cli/main.js',
  'native/index.js',
];

const result = await Bun.build({
  entrypoints: ENTRIES.map((entry) => path.join(dist, entry)),
  root: dist,
  outdir: dist,
  splitting: true,
  format: 'esm',
  target: 'node',
  // Dependencies (smol-toml, the optional peers) are the user's to install and resolve.
  packages: 'external',
  naming: { entry: '[dir]/[name].[ext]', chunk: 'chunks/[name]-[hash].[ext]' },
});
if (!result.success) {
  for (const message of result.logs) console.error(message);
  throw new Error('bundling dist/ failed');
}

const written = new Set(result.outputs.map((output) => path.resolve(output.path)));
let removed = 0;
for (const file of walk(dist)) {
  if (file.endsWith('.js') && !written.has(file)) {
    rmSync(file);
    removed += 1;
  }
}
// The CLI is run as a program (the package's `bin`, `npx nemo-relay-hooks` in a
// checkout): the build makes it executable itself. npm sets the bit only when it
// links the bin, which a checkout's own build, or npx with the link cached from an
// earlier build, never does ("Permission denied").
chmodSync(path.join(dist, 'src/cli/main.js'), 0o755);
console.log(`bundled ${ENTRIES.length} entries into ${written.size} files (removed ${removed} per-module files)`);

function* walk(folder: string): Generator<string> {
  for (const name of readdirSync(folder)) {
    const file = path.join(folder, name);
    if (statSync(file).isDirectory()) yield* walk(file);
    else yield file;
  }
}
