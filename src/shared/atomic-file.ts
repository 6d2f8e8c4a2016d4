/**
 * Whole-file writes that a reader or a crash never sees half done.
 *
 * ATIF trajectories are rewritten while a session runs (partial writes),
 * and tools may read them at any moment, so each write goes to a temporary
 * file in the same folder (same file system, so the rename is atomic) and
 * is renamed over the target. A crash leaves the previous version intact
 * and, at worst, a hidden `.tmp` file beside it.
 *
 * A write may instead be `exclusive` (`ExclusiveName`): the first write of
 * a file that must not replace one another process or an earlier run left
 * at its name. It ends in a `link` that fails on an existing name, so of
 * writers racing for one name exactly one gets it, and the others go on to
 * their owner's next name.
 *
 * The steps are written once (`atomicWriteSteps`) and run by two drivers:
 * `writeFileAtomic` runs each system call at once, `writeFileAtomicInPool`
 * in the runtime's thread pool. The trajectory writer uses the pool and
 * calls the synchronous one where nothing can be awaited (a process exit, a
 * one-off copy).
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { close, closeSync, constants, copyFile, copyFileSync, link, linkSync, lstatSync, open, openSync, rename, renameSync, unlink, unlinkSync, write, writeSync } from 'node:fs';
import path from 'node:path';
import { makeDirectory } from './directory.ts';

/** One system call of an atomic write; the drivers run it and hand back its number (a descriptor, bytes written, or 0). */
type FileStep =
  | { readonly op: 'open'; readonly path: string; readonly mode: number | undefined }
  | { readonly op: 'writeText'; readonly fd: number; readonly text: string }
  | { readonly op: 'writeBytes'; readonly fd: number; readonly bytes: Uint8Array; readonly offset: number; readonly length: number }
  | { readonly op: 'close'; readonly fd: number }
  | { readonly op: 'rename'; readonly from: string; readonly to: string }
  | { readonly op: 'link'; readonly from: string; readonly to: string }
  | { readonly op: 'copyExclusive'; readonly from: string; readonly to: string }
  | { readonly op: 'remove'; readonly path: string };

/**
 * A write that must not replace a file already at its name: a file another
 * process wrote, or an earlier run. The name is claimed with `link(2)`,
 * which fails with EEXIST when the name exists, so of two processes
 * claiming one name at once exactly one gets it; the other is offered the
 * owner's next name. After the claim the file is the owner's, and its later
 * writes replace it as usual (without this option).
 */
export interface ExclusiveName {
  /** The name to try after `taken` was found in use (the owner's naming rule), or null to give up (EEXIST is thrown). */
  next(taken: string): string | null;
  /** The name the text landed at. */
  landed(name: string): void;
}

/**
 * Whether something is at `name` (a file, a folder, a link, dangling or
 * not): what an exclusive claim of it would find taken. Telling a name in
 * advance (a path handed out before its first write) is a guess the claim
 * confirms: another process may take the name in between. Anything but
 * "nothing there" that the look-up cannot tell (EACCES, say) counts as
 * free: the write itself then says what is wrong.
 */
export function nameTaken(name: string): boolean {
  try {
    // Every session's claim ends on a free name: "nothing there" answers without building an error.
    return lstatSync(name, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Errors of a `link` that say the file system has no hard links (FAT, some network shares): the claim falls back to an exclusive copy. */
const NO_HARD_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The steps of an atomic write of `content` to `target` through
 * `temporary`; returns the number of bytes written. Four system calls when
 * the folder exists (open, write, close, rename): the folder is created
 * only when the open says it is missing, then the one retry. The open is
 * 'wx': a new file, never an existing one or a link planted at the name.
 *
 * Bytes are written as they are (a trajectory written straight to bytes).
 * Text is handed to the write as a string, which the runtime encodes into a
 * scratch buffer it frees at once: encoding it into a `Buffer` first made a
 * collected, off-heap copy of every trajectory (bench/RESULTS.md, "The
 * trajectory path outside the builder"). A write that stops short (a disk
 * filling up as it writes) gets the rest from the bytes, until the file
 * system says why it cannot. On a failure the descriptor is closed and the
 * temporary file removed, and the failure is the one thrown. No `fsync`: the
 * promise is that a reader never sees half a file, not that a crash of the
 * machine keeps the newest one.
 */
function* atomicWriteSteps(target: string, temporary: string, content: string | Uint8Array, mode: number | undefined, exclusive?: ExclusiveName): Generator<FileStep, number, number> {
  let fd = -1;
  try {
    try {
      fd = yield { op: 'open', path: temporary, mode };
    } catch (error) {
      if ((error as { code?: string } | null)?.code !== 'ENOENT') throw error;
      makeDirectory(path.dirname(target));
      fd = yield { op: 'open', path: temporary, mode };
    }
    let bytes = typeof content === 'string' ? undefined : content;
    const total = bytes === undefined ? Buffer.byteLength(content as string, 'utf8') : bytes.length;
    let written = bytes === undefined && total > 0 ? yield { op: 'writeText', fd, text: content as string } : 0;
    while (written < total) {
      bytes ??= Buffer.from(content as string, 'utf8');
      written += yield { op: 'writeBytes', fd, bytes, offset: written, length: total - written };
    }
    const closing = fd;
    fd = -1; // a close that fails is not tried again: the number may already name another file
    yield { op: 'close', fd: closing };
    if (exclusive === undefined) {
      yield { op: 'rename', from: temporary, to: target };
      return total;
    }
    yield* claimName(target, temporary, exclusive);
    return total;
  } catch (error) {
    // The cleanup never replaces the write's own error (no temporary file there, say, or Bun's
    // EFAULT for a name under a file, which once hid the ENOTDIR that says why).
    if (fd !== -1) {
      try {
        yield { op: 'close', fd };
      } catch {
        // The write's own error is the one to report.
      }
    }
    try {
      yield { op: 'remove', path: temporary };
    } catch {
      // Nothing to remove, or nothing we could: the write's error is the one to report.
    }
    throw error;
  }
}

/**
 * Puts the written temporary file at `target`, or at the owner's next name
 * while a name is taken, never over an existing file; then removes the
 * temporary name. `link` makes the file appear whole and fails on a taken
 * name; where the file system has no hard links, an exclusive copy claims
 * the name the same way (a reader may then see the copy being written).
 */
function* claimName(target: string, temporary: string, exclusive: ExclusiveName): Generator<FileStep, void, number> {
  let name = target;
  let linkable = true;
  let madeFolder = '';
  for (;;) {
    try {
      yield { op: linkable ? 'link' : 'copyExclusive', from: temporary, to: name };
      break;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') {
        const next = exclusive.next(name);
        if (next === null) throw error;
        name = next;
      } else if (code === 'ENOENT' && madeFolder !== path.dirname(name)) {
        // A name with a folder part of its own (`{session_id}/trajectory.json`): its folder is new.
        madeFolder = path.dirname(name);
        makeDirectory(madeFolder);
      } else if (linkable && code !== undefined && NO_HARD_LINKS.has(code)) {
        linkable = false;
      } else {
        throw error;
      }
    }
  }
  exclusive.landed(name);
  try {
    yield { op: 'remove', path: temporary };
  } catch {
    // The text is at its name; a leftover hidden temporary file is all a failure here leaves.
  }
}

/**
 * Writes `content` (text, written as UTF-8, or bytes written as they are) to `target` atomically, creating its folder, and
 * returns the number of bytes written. `mode` sets the new file's
 * permissions (e.g. owner-only for a recovery copy). Throws what the file system throws,
 * after removing the temporary file.
 */
export function writeFileAtomic(target: string, content: string | Uint8Array, options: { mode?: number; exclusive?: ExclusiveName } = {}): number {
  const steps = atomicWriteSteps(target, temporaryBeside(target), content, options.mode, options.exclusive);
  let next = steps.next();
  while (!next.done) {
    let value: number;
    try {
      value = runNow(next.value);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(value);
  }
  return next.value;
}

function runNow(step: FileStep): number {
  switch (step.op) {
    case 'open':
      return step.mode !== undefined ? openSync(step.path, 'wx', step.mode) : openSync(step.path, 'wx');
    case 'writeText':
      return writeSync(step.fd, step.text);
    case 'writeBytes':
      return writeSync(step.fd, step.bytes, step.offset, step.length);
    case 'close':
      closeSync(step.fd);
      return 0;
    case 'rename':
      renameSync(step.from, step.to);
      return 0;
    case 'link':
      linkSync(step.from, step.to);
      return 0;
    case 'copyExclusive':
      copyFileSync(step.from, step.to, constants.COPYFILE_EXCL);
      return 0;
    case 'remove':
      unlinkSync(step.path);
      return 0;
  }
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
 * does not stall on the file system for telemetry: the same steps and
 * guarantees; on a failure `done` gets the file system's error. Each step
 * starts from the host thread when the one before it is done, so
 * `abandon()` knows which step is running. `done` is always called later,
 * never from within this call.
 */
export function writeFileAtomicInPool(target: string, content: string | Uint8Array, options: { mode?: number; exclusive?: ExclusiveName }, done: (error: unknown, bytes: number) => void): PooledWrite {
  const temporary = temporaryBeside(target);
  const steps = atomicWriteSteps(target, temporary, content, options.mode, options.exclusive);
  let abandoned = false;
  let finished = false;
  /** The temporary file's descriptor while it is open and no close has started: what an abandoned write closes. */
  let openFd = -1;
  const stop = (): void => {
    const opened = openFd;
    openFd = -1;
    const removed = (): void => {
      finished = true;
    };
    const remove = (): void => unlink(temporary, removed);
    if (opened === -1) remove();
    else close(opened, remove);
  };
  const resume = (error: unknown, value: number): void => {
    let next: IteratorResult<FileStep, number>;
    try {
      next = error ? steps.throw(error) : steps.next(value);
    } catch (failure) {
      finished = true;
      done(failure, 0);
      return;
    }
    if (next.done) {
      finished = true;
      done(null, next.value);
      return;
    }
    const step = next.value;
    if (step.op === 'close') openFd = -1;
    // Deno's node:fs passes `undefined`, not null, for no error: every check tests truthiness.
    runInPool(step, (failure, result) => {
      if (step.op === 'open' && !failure) openFd = result;
      if (!abandoned) resume(failure, result);
      else if (step.op !== 'rename') stop();
    });
  };
  resume(undefined, 0);
  return {
    abandon() {
      if (abandoned || finished) return;
      abandoned = true;
      try {
        unlinkSync(temporary);
      } catch {
        // Nothing we could remove: at worst a hidden temporary file stays, as after a crash.
      }
    },
  };
}

function runInPool(step: FileStep, then: (error: unknown, value: number) => void): void {
  const after = (error: unknown): void => then(error, 0);
  switch (step.op) {
    case 'open':
      if (step.mode !== undefined) open(step.path, 'wx', step.mode, then);
      else open(step.path, 'wx', then);
      return;
    case 'writeText':
      write(step.fd, step.text, null, 'utf8', then);
      return;
    case 'writeBytes':
      write(step.fd, step.bytes, step.offset, step.length, null, then);
      return;
    case 'close':
      close(step.fd, after);
      return;
    case 'rename':
      rename(step.from, step.to, after);
      return;
    case 'link':
      link(step.from, step.to, after);
      return;
    case 'copyExclusive':
      copyFile(step.from, step.to, constants.COPYFILE_EXCL, after);
      return;
    case 'remove':
      unlink(step.path, after);
      return;
  }
}

/** Where `target`'s temporary file goes: hidden, beside it (same folder, same file system, so the rename is atomic). */
function temporaryBeside(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${temporarySuffix()}.tmp`);
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
