/**
 * This package's version, read from its own `package.json` (found by
 * walking up from this module: `src/cli/` and `dist/src/cli/` alike).
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  try {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    for (let i = 0; i < 5; i++) {
      try {
        const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
        if (manifest.name === 'nemo-relay-hooks' && typeof manifest.version === 'string') {
          cached = manifest.version;
          break;
        }
      } catch {
        // No package.json here; keep walking up.
      }
      dir = path.dirname(dir);
    }
  } catch {
    // A runtime without file URLs: the version stays unknown.
  }
  return cached;
}
