/**
 * The second half of `npm run build` (run with Bun; the bundler is
 * rolldown, both dev dependencies): turns tsc's one-file-per-module `dist/`
 * into one module per public entry point plus shared chunks.
 *
 * Why: a cold import pays for every ES module file it loads, and the main
 * entry is made of many modules, so unbundled `import 'nemo-relay-hooks'`
 * cost several times `import '@opentelemetry/api'` (bench `import-cost`,
 * bench/RESULTS.md). Bundled with code
 * splitting, every entry is one file and the code two entries share lives
 * once, in `dist/chunks/`, so module state (the hooks registry, the error
 * classes `instanceof` checks, the process-wide activation) is still one
 * copy whichever entries a host imports. Lazily imported modules (the
 * plugins.toml machinery, the OTLP exporters' glue, the ATIF builder) stay
 * separate chunks. Rolldown rather than `Bun.build` because it lets the
 * build say which chunk a module goes to (`chunkOf` below).
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
import { rolldown } from 'rolldown';

const root = path.resolve(import.meta.dir, '..');
const dist = path.join(root, 'dist');

/**
 * Every module a user or the runtime loads by path: the package's
 * `exports`, the CLI and the native adapter (loaded by a URL computed at
 * run time, which the bundler cannot see), and the ATIF builder (loaded
 * lazily, and synchronously by its path when a trajectory is built before
 * its `import()` settled: `src/backends/atif-builder-loader.ts`).
 */
const BUILDER = 'src/formats/atif/builder.js';
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
  BUILDER,
];

/** Entries whose static imports decide the shared chunks (see `chunkOf`). */
const MAIN = path.join(dist, 'src/index.js');
const HOOKS = path.join(dist, 'src/hooks/index.js');
let closures: { hooks: Set<string>; main: Set<string> } | undefined;

// The ATIF builder once more, whole, as CommonJS beside its entry: the copy
// `src/backends/atif-builder-loader.ts` loads synchronously when a trajectory
// is built while the module's `import()` is still in flight (Node cannot
// `require()` an ES module that is half loaded, nor any before 20.19).
// Built from tsc's per-module files, before the bundle below replaces them.
const builderCjs = await rolldown({ input: path.join(dist, BUILDER), platform: 'node', external: (id) => !id.startsWith('.') && !path.isAbsolute(id) });
await builderCjs.write({ file: path.join(dist, BUILDER.replace(/\.js$/, '.cjs')), format: 'cjs', comments: false, codeSplitting: false });
await builderCjs.close();

const bundle = await rolldown({
  input: Object.fromEntries(ENTRIES.map((entry) => [entry.replace(/\.js$/, ''), path.join(dist, entry)])),
  platform: 'node',
  // Dependencies (smol-toml, the optional peers, node:*) are the user's to install and resolve.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  // Entries export what their sources export; shared code lives in the chunks, not re-exported from an entry.
  preserveEntrySignatures: 'allow-extension',
});
const result = await bundle.write({
  dir: dist,
  format: 'esm',
  comments: false,
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  codeSplitting: { groups: [{ debugName: 'entry-layers', includeDependenciesRecursively: false, name: chunkOf }] },
});
await bundle.close();

/**
 * The shared chunk a module goes to: everything `nemo-relay-hooks/hooks`
 * loads in one chunk, everything else the main entry loads at import in
 * another; the rest (lazily imported modules, the other entries' own code)
 * where the bundler's default splitting puts it.
 *
 * Why: the default splits the code two sets of entries share into one
 * chunk per set, and the main entry loaded a file per set; each costs a
 * module record, a file read and the linking of its imports, which together
 * cost more than parsing the code (bench/RESULTS.md, "Issue 21: the main entry's
 * import"). The other entries (`./memory`, `./formats`, the adapters, the
 * CLI, `native/`) load the main entry's chunk when they share any of it:
 * more code for them, one copy of every module's state for everyone.
 */
function chunkOf(id: string, context: { getModuleInfo(id: string): { importedIds: readonly string[] } | null }): string | null {
  closures ??= { hooks: staticClosure(HOOKS, context), main: staticClosure(MAIN, context) };
  if (closures.hooks.has(id)) return 'hooks';
  if (closures.main.has(id)) return 'core';
  return null;
}
function staticClosure(entry: string, context: Parameters<typeof chunkOf>[1]): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const imported of context.getModuleInfo(id)?.importedIds ?? []) if (path.isAbsolute(imported)) queue.push(imported);
  }
  return seen;
}

const written = new Set(result.output.map((output) => path.resolve(dist, output.fileName)));
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
console.log(`bundled ${ENTRIES.length} entries into ${written.size} files and the ATIF builder as CommonJS (removed ${removed} per-module files)`);

function* walk(folder: string): Generator<string> {
  for (const name of readdirSync(folder)) {
    const file = path.join(folder, name);
    if (statSync(file).isDirectory()) yield* walk(file);
    else yield file;
  }
}
