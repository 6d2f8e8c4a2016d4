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
 * The bundle loads `node:fs`, `node:path` and `node:url` at their first
 * use, not at import (`lazyBuiltins` below): on Bun and Deno importing
 * those builtins costs a large share of what the whole entry's import may
 * (Deno sets up its `node:fs` layer, Bun its JS builtins), and the main
 * entry calls none of them until a plugin records or reads its settings.
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

/**
 * The builtins the bundle loads at their first use, and the prefix of the
 * modules that stand in for them (`\0`: a module no file backs).
 *
 * Why: a bundled module's static `import ... from 'node:fs'` makes the
 * runtime load `node:fs` while the entry is imported, and the main entry
 * needs none of these three until a plugin reads its settings or writes a
 * file. On Node they are loaded at start-up anyway; on Bun and Deno they
 * are not, and loading them was a large part of the main entry's import
 * (bench `import-cost`, bench/RESULTS.md "Issue 21: the main entry's import
 * without node:fs"). `node:module` (the fallback below) stays static;
 * `node:buffer` is read from the global its class also is (`GLOBAL_BUILTINS`).
 *
 * Each stand-in module exports what the runtime's builtin exports: a plain
 * function calls the builtin's function (loaded with
 * `process.getBuiltinModule`, or `createRequire` on a Node 20 that lacks
 * it); anything else (`fs.constants`, a class, a function with properties
 * of its own such as `realpathSync.native`) is a view that loads the
 * builtin when first used; the default export is an object of both kinds.
 * The names come from the builtin of the runtime that builds (Bun), and a
 * name it lacks stops the build. Only the ES module bundle uses them; the
 * builder's CommonJS copy loads builtins as it always did.
 */
const LAZY_BUILTINS: ReadonlySet<string> = new Set(['node:fs', 'node:path', 'node:url']);
const LAZY = '\0lazy-builtin:';
const LAZY_LOADER = `${LAZY}loader`;

/**
 * Builtins whose exports the runtimes also put on the global object, under
 * the same names: the stand-in exports the global, and loads the builtin
 * only where the global is missing (a Deno that does not define it), and
 * is `undefined` where neither exists (an edge runtime: importing the entry
 * must not throw there).
 *
 * Why: on Bun a static `import { Buffer } from 'node:buffer'` builds the
 * builtin's module at the entry's import, which cost more than the global
 * (bench/RESULTS.md, "Issue 21: the main entry's import on Bun, what runs at
 * import"). Unlike `LAZY_BUILTINS` the value is the class itself, not a
 * view: `Buffer.from` and `Buffer.byteLength` run once per ATOF line.
 */
const GLOBAL_BUILTINS: ReadonlyMap<string, readonly string[]> = new Map([['node:buffer', ['Buffer']]]);
const GLOBAL = `${LAZY}global:`;

function lazyBuiltins() {
  return {
    name: 'lazy-builtins',
    resolveId(id: string) {
      if (LAZY_BUILTINS.has(id)) return { id: `${LAZY}${id}`, moduleSideEffects: false };
      if (GLOBAL_BUILTINS.has(id)) return { id: `${GLOBAL}${id}`, moduleSideEffects: false };
      if (id === LAZY_LOADER) return { id, moduleSideEffects: false };
      return null;
    },
    async load(id: string) {
      if (id === LAZY_LOADER) return { code: LOADER_CODE, moduleSideEffects: false };
      if (id.startsWith(GLOBAL)) {
        const name = id.slice(GLOBAL.length);
        const lines = [`import { optionalBuiltin } from ${JSON.stringify(LAZY_LOADER)};`];
        for (const key of GLOBAL_BUILTINS.get(name)!) lines.push(`export const ${key} = globalThis.${key} ?? optionalBuiltin(${JSON.stringify(name)})?.${key};`);
        return { code: lines.join('\n'), moduleSideEffects: false };
      }
      if (!id.startsWith(LAZY)) return null;
      const name = id.slice(LAZY.length);
      const real = (await import(name)) as Record<string, unknown>;
      const lines = [
        `import { builtin, lazyView } from ${JSON.stringify(LAZY_LOADER)};`,
        'let loaded;',
        `const load = () => (loaded ??= builtin(${JSON.stringify(name)}));`,
      ];
      const defaults: string[] = [];
      for (const key of Object.keys(real.default ?? real)) {
        if (!/^[A-Za-z_$][\w$]*$/.test(key)) continue;
        const value = (real.default as Record<string, unknown> | undefined)?.[key] ?? real[key];
        defaults.push(plainFunction(key, value) ? `  ${key}: (...args) => load().${key}(...args),` : `  get ${key}() { return load().${key}; },`);
      }
      for (const key of Object.keys(real)) {
        if (key === 'default' || !/^[A-Za-z_$][\w$]*$/.test(key)) continue;
        if (plainFunction(key, real[key])) lines.push(`export function ${key}(...args) { return load().${key}(...args); }`);
        else lines.push(`export const ${key} = /* @__PURE__ */ lazyView(() => load().${key});`);
      }
      lines.push(`export default {\n${defaults.join('\n')}\n};`);
      return { code: lines.join('\n'), moduleSideEffects: false };
    },
  };
}

/** A function a wrapper can stand in for: not a class, no properties of its own to carry. */
function plainFunction(key: string, value: unknown): boolean {
  return typeof value === 'function' && /^[a-z_$]/.test(key) && Object.getOwnPropertyNames(value).every((own) => own === 'length' || own === 'name' || own === 'prototype');
}

/**
 * What the stand-in modules share: the loader, and the view of a builtin's
 * object or class that loads it when first used.
 */
const LOADER_CODE = `import { createRequire } from 'node:module';
const getBuiltin = globalThis.process?.getBuiltinModule;
// createRequire(import.meta.url) called where it is used, not kept in a variable: webpack rewrites that call
// (and its import.meta.url) but left an assigned one as it was, a SyntaxError in its CommonJS output.
export function builtin(name) {
  return typeof getBuiltin === 'function' ? getBuiltin.call(globalThis.process, name) : createRequire(import.meta.url)(name);
}
// Read at import: where neither the global nor the builtin exists (an edge runtime), importing must still work
// (the plugin is off there and never uses it), so the failure to load is undefined, not an exception.
export function optionalBuiltin(name) {
  try {
    return builtin(name);
  } catch {
    return undefined;
  }
}
export function lazyView(load) {
  let value;
  const real = () => (value ??= load());
  return new Proxy(function () {}, {
    get: (_, key) => Reflect.get(real(), key),
    has: (_, key) => Reflect.has(real(), key),
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    construct: (_, args) => Reflect.construct(real(), args),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}
`;

// The ATIF builder once more, whole, as CommonJS beside its entry: the copy
// `src/backends/atif-builder-loader.ts` loads synchronously when a trajectory
// is built while the module's `import()` is still in flight (Node cannot
// `require()` an ES module that is half loaded, nor any before 20.19).
// Built from tsc's per-module files, before the bundle below replaces them.
const builderCjs = await rolldown({ input: path.join(dist, BUILDER), platform: 'node', external: (id) => !id.startsWith('.') && !path.isAbsolute(id) });
await builderCjs.write({ file: path.join(dist, BUILDER.replace(/\.js$/, '.cjs')), format: 'cjs', comments: false, codeSplitting: false });
await builderCjs.close();

/**
 * How the bundle is minified: compressed and with local names shortened,
 * but every function and class keeps its name and the code keeps its lines.
 *
 * Why: on Bun the main entry's import costs in proportion to the code it
 * parses (bench `import-cost`, bench/RESULTS.md "Issue 21: the main entry's
 * import on Bun, minified"); whitespace alone changed nothing there, shorter
 * local names and compressed expressions did. Names stay because a host sees
 * them: an error's class (`name`, `constructor.name`), a stack trace's
 * function names, a middleware's name in the hooks registry. Lines stay so a
 * stack trace into `dist/` still points at a readable line.
 */
const KEEP_NAMES = { function: true, class: true } as const;
const MINIFY = { compress: { keepNames: KEEP_NAMES }, mangle: { keepNames: KEEP_NAMES }, codegen: { removeWhitespace: false } };

/**
 * The first line of every ES module file the bundle writes: Bun's mark for
 * code that needs no transpiling (what `bun build --target=bun` writes), a
 * comment to Node and Deno.
 *
 * Why: Bun runs every file it loads through its transpiler unless the file
 * says it has already been through it, and the bundle is plain ES2022 that
 * JavaScriptCore runs as it is (no TypeScript, JSX, `require` or
 * CommonJS globals in an ES module). On Bun that transpile was a large share
 * of the entries' import (bench `import-cost`, bench/RESULTS.md "Issue 21:
 * the main entry's import on Bun without the transpiler"). After a shebang
 * (the CLI), as Bun's own bundler puts it. The builder's CommonJS copy is not
 * marked: Bun wraps CommonJS itself.
 */
const BUN_PRAGMA = '// @bun';

const bundle = await rolldown({
  input: Object.fromEntries(ENTRIES.map((entry) => [entry.replace(/\.js$/, ''), path.join(dist, entry)])),
  platform: 'node',
  // Dependencies (smol-toml, the optional peers, node:*) are the user's to install and resolve.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id) && !LAZY_BUILTINS.has(id) && !GLOBAL_BUILTINS.has(id) && !id.startsWith(LAZY),
  plugins: [lazyBuiltins()],
  // A name imported from a lazy builtin that the runtime does not export must stop the build, not become undefined.
  onLog(level, log, handler) {
    if (log.code === 'MISSING_EXPORT') throw new Error(log.message);
    handler(level, log);
  },
  // Entries export what their sources export; shared code lives in the chunks, not re-exported from an entry.
  preserveEntrySignatures: 'allow-extension',
});
const result = await bundle.write({
  dir: dist,
  format: 'esm',
  comments: false,
  minify: MINIFY,
  postBanner: BUN_PRAGMA,
  // Bun reads a file marked with the pragma as Latin-1, one character per byte (its own
  // bundler writes ASCII): a UTF-8 literal would reach Bun as mojibake (the CLI's `✓`,
  // the U+FFFD a NUL in a payload key becomes). Escaped, every runtime reads the same string.
  charset: 'ascii',
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
    for (const imported of context.getModuleInfo(id)?.importedIds ?? []) if (path.isAbsolute(imported) || imported.startsWith(LAZY)) queue.push(imported);
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
