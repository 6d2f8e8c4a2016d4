// The declarations name Symbol.dispose/asyncDispose: carry their lib so a consumer without
// @types/node's copy (or whose lib stops at ES2022) type-checks them.
/// <reference lib="esnext.disposable" preserve="true" />
/**
 * `createHookRecorder`: writes every hook a registry emits to a JSONL file,
 * one `{"timestamp": "<RFC 3339>", "hook": "<name>", "payload": {...}}` line
 * per emit, in emit order (with `"data"`, what a top-level `toJSON` of the
 * payload returned, the data the plugin records in its place). The time is when the hook was emitted, so a
 * replay stamps each event when the host emitted it, not when it is replayed.
 *
 * The file is what `nemo-relay-hooks replay` reads, so a host can record a
 * real run once and turn it into ATOF/ATIF later, with any backend or
 * settings. Recording is telemetry like any other subscriber: it never
 * throws into the host. A write failure is counted, reported once to the
 * logger, and the recorder stops writing (later lines would be out of
 * order with a hole in the middle).
 *
 * Lines are buffered and written with `fs.writeSync` in whole lines only,
 * so a reader never sees half a line and a crash loses at most the buffer.
 *
 * @module
 */

import { closeSync, writeSync } from 'node:fs';
import { openNoFollow } from '../shared/safe-path.ts';
import { makeDirectory } from '../shared/directory.ts';
import path from 'node:path';
import { asyncDisposeSymbol, disposeSymbol } from '../shared/dispose.ts';
import { adaptLogger, safeLog, type Logger, type LoggerLike } from '../shared/logger.ts';
import { HOOK_NAMES, type HookName } from '../hooks/index.ts';
import { copyToWrite } from '../shared/snapshot.ts';
import { formatTimestamp, safeClock, unlikelyClockMessage } from '../shared/clock.ts';

/** The part of a registry the recorder needs: `HookRegistry` fits. */
export interface RecordableHost {
  /** Subscribes `callback` to the hook `name`; returns the unsubscribe. */
  on(name: HookName, callback: (payload: any) => unknown): () => void;
}

/** Options of `createHookRecorder`. */
export interface HookRecorderOptions {
  /** Append to an existing file instead of truncating it. Default false. */
  append?: boolean;
  /** Bytes buffered before a write. Default 64 KiB; `0` writes every line at once. */
  bufferBytes?: number;
  /** Only these hooks are recorded. Default: all 15. */
  hooks?: readonly HookName[];
  /** Where a write failure is reported. Default: `consoleLogger`. */
  logger?: LoggerLike;
  /** When each hook was emitted, in integer Unix microseconds. Default: the library's clock (the plugin's). */
  clock?: () => number;
}

/** A running recorder. */
export interface HookRecorder {
  /** The file being written (absolute). */
  readonly path: string;
  /** Lines recorded so far: written to the file, or buffered to be (the lines of a write that failed are not counted). */
  readonly lines: number;
  /** Writes failed (the recorder stops after the first). */
  readonly errors: number;
  /** Writes every buffered line. Never throws. */
  flush(): void;
  /** Flushes, unsubscribes and closes the file. Idempotent, never throws. */
  close(): void;
  /** `using recorder = createHookRecorder(...)`: closes it. */
  [Symbol.dispose](): void;
  /** `await using recorder = createHookRecorder(...)`: closes it. */
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_BUFFER_BYTES = 64 * 1024;

/**
 * Subscribes to the registry's hooks and records them to `filePath`.
 * Creates the parent folder when missing. Opening the file is the one
 * failure that throws (synchronously, at creation), because then there is
 * nothing to record to and the caller should know now.
 */
export function createHookRecorder(host: RecordableHost, filePath: string, options: HookRecorderOptions = {}): HookRecorder {
  const target = path.resolve(filePath);
  makeDirectory(path.dirname(target));
  // Never through a link planted at the file: appending would add to its target, 'w' would empty it.
  let fd: number | null = openNoFollow(target, options.append === true ? 'append' : 'truncate');
  const limit = Math.max(0, options.bufferBytes ?? DEFAULT_BUFFER_BYTES);
  const logger = adaptLogger(options.logger);
  const clock = safeClock(options.clock, (reading) => safeLog(logger, 'warn', unlikelyClockMessage('hook recorder: options.clock', reading)));
  let chunks: string[] = [];
  let buffered = 0;
  let lines = 0;
  let errors = 0;

  const flush = (): void => {
    if (chunks.length === 0 || fd === null) return;
    const bytes = Buffer.from(chunks.join(''), 'utf8');
    const pending = chunks.length;
    chunks = [];
    buffered = 0;
    let written = 0;
    try {
      // writeSync may write less than asked (pipes, signals); loop until all is out.
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      // Only the whole lines that reached the file stay counted.
      lines -= pending - newlinesIn(bytes.subarray(0, written));
      errors += 1;
      safeLog(logger, 'warn', `hook recorder: writing ${target} failed; recording stopped`, error);
      stop();
    }
  };

  const record = (hook: HookName, payload: unknown): void => {
    if (fd === null) return;
    const timestamp = formatTimestamp(clock());
    let line: string;
    try {
      // Recorded as the plugin reads it (a class payload's getters; its ids by name) and with what the relay records
      // of it (a top-level toJSON's result, as `data`), so a replay records what the live plugin did; credential
      // headers never reach the file, as the plugin records none.
      line = `${JSON.stringify({ timestamp, hook, ...copyToWrite(payload) })}\n`;
    } catch (error) {
      // toJson never throws; JSON.stringify of plain JSON cannot either. Belt and braces.
      errors += 1;
      safeLog(logger, 'warn', `hook recorder: ${hook} payload could not be serialised`, error);
      return;
    }
    chunks.push(line);
    buffered += line.length;
    lines += 1;
    if (buffered >= limit) flush();
  };

  const close = (): void => {
    flush();
    stop();
  };

  const unsubscribers = (options.hooks ?? HOOK_NAMES).map((hook) => host.on(hook, (payload: unknown) => record(hook, payload)));

  const stop = (): void => {
    for (const unsubscribe of unsubscribers.splice(0)) {
      try {
        unsubscribe();
      } catch {
        // Unsubscribing is best effort: the recorder is closed either way.
      }
    }
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch (error) {
        safeLog(logger, 'debug', `hook recorder: closing ${target} failed`, error);
      }
      fd = null;
    }
  };

  return {
    path: target,
    get lines() {
      return lines;
    },
    get errors() {
      return errors;
    },
    flush,
    close,
    [disposeSymbol()]: close,
    [asyncDisposeSymbol()]: async () => close(),
  } as HookRecorder;
}

function newlinesIn(bytes: Uint8Array): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count += 1;
  return count;
}
