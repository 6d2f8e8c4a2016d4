/**
 * Finding one of this package's own files at run time, by its path from
 * the package root (`native/index`, `package.json`).
 *
 * Static `import()` specifiers are rewritten by the bundler, but a URL
 * computed at run time (a retry with a query) is not, and
 * the code computing it sits in `src/<layer>/` in the sources and in a
 * chunk of `dist/` once bundled. Walking up from this file to the first
 * folder that holds the module works in both, with this file's own
 * extension (.ts from source, .js from dist/).
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The module's `file:` URL, or null when it cannot be found (not a file: URL, or not shipped). */
export function packageModuleUrl(fromRoot: string): URL | null {
  // String(): esbuild's CommonJS output empties `import.meta`.
  const extension = String(import.meta.url).endsWith('.ts') ? '.ts' : '.js';
  return packageFileUrl(`${fromRoot}${extension}`);
}

/**
 * The `file:` URL of a file by its exact path from the package root
 * (`package.json`), found the same way; null when there is none.
 */
export function packageFileUrl(fromRoot: string): URL | null {
  try {
    let folder = new URL('.', import.meta.url);
    for (let depth = 0; depth < 4; depth++) {
      const candidate = new URL(fromRoot, folder);
      if (existsSync(fileURLToPath(candidate))) return candidate;
      folder = new URL('..', folder);
    }
  } catch {
    // Not a file: URL (bundled into a host's own build): there is no file to find.
  }
  return null;
}

/**
 * Whether this code runs from this package's own files (installed, or the
 * checkout), rather than bundled into a host's file (esbuild, webpack,
 * Rollup, `bun build --compile`, `deno compile`): only then does resolving a
 * package from here say what the host can import. Known by the package.json
 * above this file, which a bundle does not carry.
 */
export function runsFromOwnPackage(): boolean {
  ownPackage ??= namedOurs(packageFileUrl('package.json'));
  return ownPackage;
}

let ownPackage: boolean | undefined;

function namedOurs(manifest: URL | null): boolean {
  if (manifest === null) return false;
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

const PACKAGE_NAME = 'nemo-relay-hooks';
