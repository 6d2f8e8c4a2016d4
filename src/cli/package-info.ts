/**
 * This package's version, read from its own `package.json` (found from
 * the package root, as `shared/package-module.ts` finds the package's files).
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packageFileUrl } from '../shared/package-module.ts';

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  const manifestUrl = packageFileUrl('package.json');
  if (manifestUrl === null) return cached;
  try {
    const manifest = JSON.parse(readFileSync(fileURLToPath(manifestUrl), 'utf8')) as { name?: unknown; version?: unknown };
    if (manifest.name === 'nemo-relay-hooks' && typeof manifest.version === 'string') cached = manifest.version;
  } catch {
    // An unreadable manifest: the version stays unknown.
  }
  return cached;
}
