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
import { close, closeSync, open, openSync, rename, renameSync, rm, rmSync, write, writeSync } from 'node:fs';
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
 * process id and random digits in the temporary name are read once. The
 * trajectory writer runs the same steps in the thread pool
 * (`writeFileAtomicInPool`) and calls this one where nothing can be awaited
 * (a process exit, a one-off copy); creating the file is the floor of a
 * replay into trajectories (bench/RESULTS.md, "Replay into ATOF + ATIF").
 * Bytes are written as they are (a trajectory written straight to bytes). Text is
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

/** A write started by `writeFileAtomicInPool`, until its callback. */
export interface PooledWrite {
  /**
   * Stops the write where it stands, synchronously (at a process exit,
   * where nothing can be awaited): no later step is started and the
   * callback is not called. The temporary file is removed where it can be;
   * one whose open is running in the pool right now may stay behind. A
   * rename already running cannot be stopped, but removing its temporary
   * file first decides the race: either the rename already moved it (a
   * later write lands after it) or it finds no file and fails.
   */
  abandon(): void;
}

/**
 * `writeFileAtomic` with its system calls in the runtime's thread pool
 * (node:fs's callback API, which Bun and Deno implement too), so a host
 * does not stall on the file system for telemetry. The same steps and
 * guarantees: a new temporary file in the same folder ('wx', `mode`), the
 * whole text or bytes, close, rename over `target`; on a failure the temporary file
 * is removed and `done` gets the file system's error. Each step starts
 * from the host thread when the one before it is done, so `abandon()`
 * knows which step is running. `done` is always called later, never from
 * within this call.
 */
export function writeFileAtomicInPool(target: string, content: string | Uint8Array, options: { mode?: number }, done: (error: unknown, bytes: number) => void): PooledWrite {
  const folder = path.dirname(target);
  const temporary = path.join(folder, `.${path.basename(target)}.${temporarySuffix()}.tmp`);
  const total = typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.length;
  let abandoned = false;
  let finished = false;
  let fd: number | null = null;
  let bytes: Uint8Array | null = typeof content === 'string' ? null : content;
  let offset = 0;
  const fail = (error: unknown): void => {
    const opened = fd;
    fd = null;
    const cleanup = (): void => {
      // The write's own error is the one to report; the removal only tidies up.
      rm(temporary, { force: true }, () => {
        finished = true;
        if (!abandoned) done(error, 0);
      });
    };
    if (opened === null) cleanup();
    else close(opened, cleanup);
  };
  const stopIfAbandoned = (): boolean => {
    if (!abandoned) return false;
    fail(null);
    return true;
  };
  // Deno's node:fs passes `undefined`, not null, for no error: every check below tests truthiness.
  const opened = (error: NodeJS.ErrnoException | null, handle: number, retried: boolean): void => {
    if (!error) fd = handle;
    if (stopIfAbandoned()) return;
    if (error) {
      if (error.code !== 'ENOENT' || retried) return fail(error);
      // The folder (or a parent) is missing: create it (rare, once per folder), then the one retry.
      try {
        makeDirectory(folder);
      } catch (made) {
        return fail(made);
      }
      return openNew(true);
    }
    writeRest(null, 0);
  };
  const openNew = (retried: boolean): void => {
    const callback = (error: NodeJS.ErrnoException | null, handle: number) => opened(error, handle, retried);
    if (options.mode !== undefined) open(temporary, 'wx', options.mode, callback);
    else open(temporary, 'wx', callback);
  };
  // A write that stops short (a disk filling up as it writes) gets the rest from the encoded bytes.
  let started = false;
  const writeRest = (error: NodeJS.ErrnoException | null, written: number): void => {
    if (stopIfAbandoned()) return;
    if (error) return fail(error);
    offset += written;
    if (!started && total > 0 && typeof content === 'string') {
      started = true;
      return write(fd!, content, null, 'utf8', writeRest);
    }
    if (offset >= total) {
      const closing = fd!;
      fd = null;
      return close(closing, closed);
    }
    bytes ??= Buffer.from(content as string, 'utf8');
    write(fd!, bytes, offset, total - offset, null, writeRest);
  };
  const closed = (error: NodeJS.ErrnoException | null): void => {
    if (stopIfAbandoned()) return;
    if (error) return fail(error);
    rename(temporary, target, renamed);
  };
  const renamed = (error: NodeJS.ErrnoException | null): void => {
    if (abandoned) return;
    if (error) return fail(error);
    finished = true;
    done(null, total);
  };
  openNew(false);
  return {
    abandon() {
      if (abandoned || finished) return;
      abandoned = true;
      try {
        rmSync(temporary, { force: true });
      } catch {
        // Nothing we could remove: at worst a hidden temporary file stays, as after a crash.
      }
    },
  };
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
