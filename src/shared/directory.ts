/**
 * Creating an output folder and its missing parents.
 *
 * `mkdirSync(path, { recursive: true })` loops forever, synchronously, on a
 * file system that answers ENOENT for a folder it cannot create (a path under
 * /proc): the host's thread would hang at 100% CPU. This walks up to the
 * nearest existing folder and creates each missing one once, so such a path
 * fails with the file system's own error.
 *
 * @module
 */

import { mkdirSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Creates `folder` and its missing parents; throws what the file system
 * throws (ENOTDIR for a file in the way). Each folder it creates is added
 * to `created`, parents first, when given.
 */
export function makeDirectory(folder: string, created?: string[]): void {
  const target = path.resolve(folder);
  if (isDirectory(target)) return;
  const parent = path.dirname(target);
  if (parent !== target) makeDirectory(parent, created);
  try {
    mkdirSync(target);
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST' && isDirectory(target)) return;
    throw error;
  }
  created?.push(target);
}

/**
 * Removes the folders `makeDirectory` created (`created`, children first)
 * that are still empty: what an attempt that came to nothing leaves behind.
 * A folder something was written into stays. Never throws.
 */
export function removeEmptyCreated(created: readonly string[]): void {
  for (let i = created.length - 1; i >= 0; i--) {
    try {
      rmdirSync(created[i]!);
    } catch {
      // Not empty (or gone): it stays, and so do its parents.
    }
  }
}

/** True for an existing folder, false for a missing path; throws for a file in the way or an unreadable path. */
function isDirectory(target: string): boolean {
  let stats;
  try {
    stats = statSync(target);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return false;
    throw error;
  }
  if (stats.isDirectory()) return true;
  const notDirectory = new Error(`ENOTDIR: not a directory, mkdir '${target}'`) as Error & { code: string; path: string };
  notDirectory.code = 'ENOTDIR';
  notDirectory.path = target;
  throw notDirectory;
}
