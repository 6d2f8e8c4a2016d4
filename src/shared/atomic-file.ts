/**
 * Whole-file writes that a reader or a crash never sees half done.
 *
 * ATIF trajectories are rewritten while a session runs (partial writes),
 * and tools may read them at any moment, so each write goes to a temporary
 * file in the same folder (same file system, so the rename is atomic) and
 * is renamed over the target. A crash leaves the previous version intact
 * and, at worst, a hidden `.tmp` file beside it.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeDirectory } from './directory.ts';

/**
 * Writes `content` as UTF-8 to `target` atomically, creating its folder, and
 * returns the number of bytes written. `mode` sets the new file's
 * permissions (e.g. owner-only for a recovery copy). Throws what the file system throws,
 * after removing the temporary file.
 */
export function writeFileAtomic(target: string, content: string, options: { mode?: number } = {}): number {
  const folder = path.dirname(target);
  makeDirectory(folder);
  const temporary = path.join(folder, `.${path.basename(target)}.${process.pid}.${randomSuffix()}.tmp`);
  // Encoded once: the byte count comes from the same bytes that are written.
  const bytes = Buffer.from(content, 'utf8');
  try {
    // 'wx': a new file, never an existing one or a link planted at the name.
    writeFileSync(temporary, bytes, options.mode !== undefined ? { flag: 'wx', mode: options.mode } : { flag: 'wx' });
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return bytes.length;
}

/**
 * Eight hex digits for a temporary name. From the global `crypto` (as
 * `uuid.ts` does): importing `node:crypto` would add its load time to every
 * host's import, for a name.
 */
function randomSuffix(): string {
  const bytes = new Uint8Array(4);
  crypto.getRandomValues(bytes);
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
