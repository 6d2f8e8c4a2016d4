/**
 * The ATIF builder (the converter and its text), loaded when the first
 * trajectory is opened rather than with the package.
 *
 * Why: it is the largest piece of code the main entry reached, and a host
 * that records no trajectory, or records none yet, should not pay for
 * parsing it at `import` (bench/RESULTS.md, "Issue 21: the main entry's
 * import"). Opening a trajectory starts an asynchronous `import()`; a
 * session's trajectory is built when it ends, long after that import has
 * settled. A build asked for before it settled (`exportJson()` right after
 * the first hooks, the write at a process exit in the same turn) loads the
 * same module synchronously with `require()` of an ES module: Node from
 * 20.19 and 22.12, Bun and Deno do that, and give the module record the
 * pending `import()` will return, except Node while that `import()` is
 * half done, or before 20.19: then `dist/`'s CommonJS copy of the builder
 * (`builder.cjs`, written by `.ci/bundle.ts`) serves that build. Where
 * neither loads (Deno without `--allow-read`), that one build throws a
 * `TrajectoryBuilderUnavailable` error, which every caller already counts
 * as a failed trajectory.
 *
 * The bundle keeps `src/formats/atif/builder.js` as an entry of its own,
 * so the file the synchronous path requires is the one the `import()`
 * loads.
 *
 * @module
 */

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { packageFileUrl, packageModuleUrl } from '../shared/package-module.ts';
import { errorMessage } from '../shared/error-text.ts';

type BuilderModule = typeof import('../formats/atif/builder.ts');

let loaded: BuilderModule | undefined;
let loading: Promise<BuilderModule | undefined> | undefined;

/** The builder's module path from the package root, without its extension (`.ts` from source, `.js` from `dist/`). */
const FROM_ROOT = 'src/formats/atif/builder';

/** Raised when a trajectory is built before its module could be loaded. */
export class TrajectoryBuilderUnavailable extends Error {
  override name = 'TrajectoryBuilderUnavailable';
}

/**
 * Starts loading the builder (once per process; a failed load is tried
 * again by the next call). Never rejects: a failure is met again, with its
 * reason, by the synchronous load at the first build.
 */
export function loadAtifBuilder(): Promise<BuilderModule | undefined> {
  if (loaded !== undefined) return Promise.resolve(loaded);
  loading ??= import('../formats/atif/builder.ts').then(
    (module) => (loaded ??= module),
    () => {
      loading = undefined;
      return undefined;
    },
  );
  return loading;
}

/** Whether the builder's module is loaded (a build needs no wait). */
export function atifBuilderLoaded(): boolean {
  return loaded !== undefined;
}

/** The builder's module, loaded synchronously if its `import()` has not settled yet. */
export function atifBuilderNow(): BuilderModule {
  if (loaded !== undefined) return loaded;
  const url = packageModuleUrl(FROM_ROOT);
  if (url === null) throw new TrajectoryBuilderUnavailable(`the ATIF builder is still loading and its module (${FROM_ROOT}) cannot be found to load it now`);
  const require = createRequire(import.meta.url);
  try {
    loaded = require(fileURLToPath(url)) as BuilderModule;
  } catch (error) {
    // Node refuses an ES module whose `import()` is half done (a process exiting in the turn that opened the
    // trajectory), and any before 20.19: `dist/` has the same builder as CommonJS beside it.
    const commonJs = packageFileUrl(`${FROM_ROOT}.cjs`);
    if (commonJs === null) throw unavailable(error);
    try {
      loaded = require(fileURLToPath(commonJs)) as BuilderModule;
    } catch (second) {
      throw unavailable(second);
    }
  }
  return loaded;
}

function unavailable(cause: unknown): TrajectoryBuilderUnavailable {
  return new TrajectoryBuilderUnavailable(`the ATIF builder is still loading and this runtime cannot load it synchronously: ${errorMessage(cause)}`, { cause });
}
