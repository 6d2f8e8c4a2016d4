/**
 * File access for the CLI: checked opening of inputs and output folders
 * (so a missing file is one clear line, not a stack trace), and streaming
 * line reading so inputs of millions of lines use flat memory.
 *
 * @module
 */

import { createReadStream, readFileSync, statSync, accessSync, constants, lstatSync } from 'node:fs';
import { makeDirectory } from '../shared/directory.ts';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describeFsError, InputError } from './errors.ts';

/** Throws `InputError` unless `file` is a readable regular file. Returns its size in bytes. */
export function checkInputFile(file: string): number {
  let size: number;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new InputError(`cannot read ${file}: is a directory`);
    // A FIFO or a device (/dev/zero) would block or never end.
    if (!stat.isFile()) throw new InputError(`cannot read ${file}: not a regular file`);
    size = stat.size;
    accessSync(file, constants.R_OK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot read', file));
  }
  return size;
}

/** The most a document read whole (not line by line) may have: JS strings stop a little above this. */
const MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024;

/** `text` without a leading UTF-8 byte order mark, which some editors write and JSON does not allow. */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Reads a whole file as UTF-8 (for documents that must be parsed whole). */
export function readTextFile(file: string): string {
  const size = checkInputFile(file);
  if (size > MAX_WHOLE_FILE_BYTES) {
    throw new InputError(`cannot read ${file}: ${size} bytes is more than a document read whole may have (${MAX_WHOLE_FILE_BYTES})`);
  }
  try {
    return withoutBom(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new InputError(describeFsError(error, 'cannot read', file));
  }
}

/** Creates `dir` (and parents) and checks it is a writable folder. */
export function ensureOutputDir(dir: string): string {
  const resolved = path.resolve(dir);
  try {
    makeDirectory(resolved);
    if (!statSync(resolved).isDirectory()) throw new InputError(`cannot write to ${dir}: not a directory`);
    accessSync(resolved, constants.W_OK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot write to', dir));
  }
  return resolved;
}

/**
 * Throws `InputError` when one of `names` in `dir` is a symbolic link. The
 * writers never open an output through a link (src/shared/safe-path.ts);
 * this says so up front, in one line, before anything is written.
 */
export function refuseLinkedOutputs(dir: string, names: readonly string[]): void {
  for (const name of names) {
    const file = path.join(dir, name);
    let isLink = false;
    try {
      isLink = lstatSync(file).isSymbolicLink();
    } catch {
      continue; // missing: it will be created
    }
    if (isLink) throw new InputError(`cannot write to ${file}: it is a symbolic link (output files are never written through links)`);
  }
}

export interface Line {
  /** 1-based. */
  number: number;
  text: string;
  /** Bytes read from the file so far (for progress). */
  bytesRead: number;
}

/**
 * The lines of `file`, streamed (`readline` over a read stream): only one
 * chunk is in memory at a time. A `\r` before the newline is dropped.
 */
export async function* readLines(file: string): AsyncGenerator<Line> {
  checkInputFile(file);
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  let failure: unknown = null;
  stream.on('error', (error) => {
    failure = error;
  });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const text of lines) {
      number += 1;
      yield { number, text: number === 1 ? withoutBom(text) : text, bytesRead: stream.bytesRead };
    }
  } catch (error) {
    failure ??= error;
  } finally {
    lines.close();
    stream.destroy();
  }
  if (failure !== null) throw new InputError(describeFsError(failure, 'cannot read', file));
}
