/**
 * Who the host is, for the names the plugin records under when nobody
 * named them: the `name` and `version` of the host's own `package.json`
 * (the nearest one at or above the working directory), else the file name
 * of the script that started the process, else `agent`.
 *
 * The Hermes plugin names its files and its agent after Hermes
 * (`hermes-atof.jsonl`, "Hermes Agent"); a library used by every kind of
 * host names them after the host instead, so `my-agent-atif-<id>.json`
 * says which program wrote it.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nonEmptyString } from '../../shared/text.ts';

/** The host's name (as written, for `agent.name`), a file-name-safe form of it, and its version. */
export interface HostIdentity {
  name: string;
  /** `name` reduced to `[A-Za-z0-9._-]` (`@acme/agent` → `acme-agent`), for file names. */
  fileStem: string;
  version: string;
}

const FALLBACK: HostIdentity = { name: 'agent', fileStem: 'agent', version: 'unknown' };
/** How many folders above the working directory are searched for a package.json. */
const MAX_LEVELS = 8;

/** The host's identity as the host gave it (`createNemoRelayPlugin({ host })`); undefined when it gave no usable name. */
export function givenHost(host: unknown): HostIdentity | undefined {
  if (typeof host !== 'object' || host === null) return undefined;
  const { name, version } = host as { name?: unknown; version?: unknown };
  if (typeof name !== 'string' || name.trim() === '') return undefined;
  return { name: name.trim(), fileStem: fileStem(name) || FALLBACK.fileStem, version: typeof version === 'string' && version.trim() !== '' ? version.trim() : FALLBACK.version };
}

/** Never throws: a runtime that refuses to read files or the working directory gets the fallback. */
export function hostIdentity(cwd?: string): HostIdentity {
  const fromPackage = packageHost(cwd);
  if (fromPackage !== null) return fromPackage;
  try {
    const script = process.argv[1];
    if (typeof script === 'string' && script !== '') {
      const name = path.basename(script).replace(/\.[cm]?[jt]sx?$/, '');
      const stem = fileStem(name);
      if (stem !== '') return { name, fileStem: stem, version: 'unknown' };
    }
  } catch {
    // No argv (an embedded runtime).
  }
  return FALLBACK;
}

/**
 * The host named by the nearest package.json, or null (none, no name, or not
 * readable). Never throws. `doctor` asks for this one alone: its own script is
 * the CLI, not the host it reports on.
 */
export function packageHost(cwd?: string): HostIdentity | null {
  try {
    return packageIdentity(cwd ?? process.cwd());
  } catch {
    // No working directory, or no permission to read it (Deno without --allow-read).
    return null;
  }
}

function packageIdentity(start: string): HostIdentity | null {
  let folder = path.resolve(start);
  for (let level = 0; level <= MAX_LEVELS; level++) {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(folder, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      let manifest: { name?: unknown; version?: unknown } = {};
      try {
        manifest = JSON.parse(text) as typeof manifest;
      } catch {
        return null;
      }
      // A package.json without a name (a workspace root, a folder marking "type": "module") names nobody.
      if (typeof manifest.name !== 'string' || fileStem(manifest.name) === '') return null;
      return { name: manifest.name, fileStem: fileStem(manifest.name), version: nonEmptyString(manifest.version) ?? 'unknown' };
    }
    const parent = path.dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  return null;
}

/** `name` reduced to `[A-Za-z0-9._-]` for a file name (`@acme/agent` → `acme-agent`); empty when nothing is left. */
export function fileStem(name: string): string {
  return name
    .replace(/^@/, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+|-+$/g, '')
    .slice(0, 64);
}
