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
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { makeDirectory } from './directory.ts';

/**
 * Writes `content` (text, written as UTF-8, or bytes written as they are) to `target` atomically, creating its folder, and
 * returns the number of bytes written. `mode` sets the new file's
 * permissions (e.g. owner-only for a recovery copy). Throws what the file system throws,
 * after removing the temporary file.
 *
 * Four system calls when the folder exists (open, write, close, rename):
 * the folder is created only when the open says it is missing, and the
 * process id and random digits in the temporary name are read once. A trajectory writer calls
 * this once per file, and creating the file is the floor of a replay into
 * trajectories (bench/RESULTS.md, "Replay into ATOF + ATIF"). Bytes are
 * written as they are (a trajectory written straight to bytes). Text is
 * handed to `write` as a string, which the runtime encodes into a scratch
 * buffer it frees at once: encoding it into a `Buffer` here first made a
 * collected, off-heap copy of every trajectory (bench/RESULTS.md, "The
 * trajectory path outside the builder"). No `fsync`: the promise is that a
 * reader never sees half a file, not that a crash of the machine keeps the
 * newest one.
 */
export function writeFileAtomic(target: string, content: string | Uint8Array, options: { mode?: number } = {}): number {
  const folder = path.dirname(target);
  const temporary = path.join(folder, `.${path.basename(target)}.${temporarySuffix()}.tmp`);
  let fd: number | null = null;
  let written: number;
  try {
    try {
      fd = openNew(temporary, options.mode);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
      // The folder (or a parent) is missing: create it, then the one retry.
      makeDirectory(folder);
      fd = openNew(temporary, options.mode);
    }
    written = writeAll(fd, content);
    const closing = fd;
    fd = null;
    closeSync(closing);
    renameSync(temporary, target);
  } catch (error) {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // The write's own error is the one to report.
      }
    }
    // The cleanup never replaces the write's own error: Bun's rmSync with `force` throws EFAULT
    // for a name under a file (where Node ignores ENOTDIR), which hid the ENOTDIR that says why.
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing to remove, or nothing we could: the write's error is the one to report.
    }
    throw error;
  }
  return written;
}

/** 'wx': a new file, never an existing one or a link planted at the name. */
function openNew(file: string, mode: number | undefined): number {
  return mode !== undefined ? openSync(file, 'wx', mode) : openSync(file, 'wx');
}

/**
 * Writes the whole text or bytes and returns how many bytes that is. A file
 * write that stops short (a disk filling up as it writes) gets the rest
 * from the bytes, until the file system says why it cannot.
 */
function writeAll(fd: number, content: string | Uint8Array): number {
  if (typeof content !== 'string') {
    const total = content.length;
    let offset = 0;
    while (offset < total) offset += writeSync(fd, content, offset, total - offset);
    return total;
  }
  const first = writeSync(fd, content);
  const total = Buffer.byteLength(content, 'utf8');
  if (first >= total) return total;
  const bytes = Buffer.from(content, 'utf8');
  let offset = first;
  while (offset < total) offset += writeSync(fd, bytes, offset, total - offset);
  return total;
}

/** The process id and eight random hex digits, read once per process (`process.pid` and the random source each make a system call). */
let processTag: string | undefined;
/** Counts the temporary names this process made: unique within the process, the tag tells processes apart. */
let serial = 0;

/**
 * A temporary name's suffix: the process tag and a serial number. A name
 * that exists all the same (a leftover, a planted file) fails the `wx` open
 * rather than being written through. The random digits come from the global
 * `crypto` (as `uuid.ts` does): importing `node:crypto` would add its load
 * time to every host's import, for a name.
 */
function temporarySuffix(): string {
  if (processTag === undefined) {
    const bytes = new Uint8Array(4);
    crypto.getRandomValues(bytes);
    let hex = '';
    for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
    processTag = `${process.pid}.${hex}`;
  }
  serial += 1;
  return `${processTag}.${serial.toString(36)}`;
}
