/**
 * The ATIF uploads (`[[atif.storage]]`) of a native plugins.toml activation,
 * sent by this library instead of by native.
 *
 * **Why.** nemo-relay-node 0.9.2 uploads trajectories on the same worker
 * that writes its ATOF files and trajectories: an upload destination that
 * hangs stops the local files (116 of 1,040 ATOF lines and 8 of 80
 * trajectories written in the fault campaign), grows native's memory, and
 * `status()` cannot see any of it. Its ATOF stream sinks and OTLP exporters
 * do not starve the files (measured with receivers that never answer), so
 * they stay native's.
 *
 * **How.** The document native is given has no `atif.storage`, and its ATIF
 * `output_directory` is a hidden staging folder inside the configured one
 * (`.nemo-relay-uploads-XXXXXX`): native writes each finished trajectory
 * there, with its own bytes and file name, as it would have uploaded it.
 * This module takes each file as it appears (polled, and at every flush and
 * close), removes it from the staging folder, and queues it on the
 * library's uploader (`src/export/storage/`): the same HTTP request and S3
 * object key native sends (`x-nemo-relay-atif-filename` is the file's name
 * in the folder, `x-nemo-relay-atif-session-id` its `session_id`), the one
 * retry policy, a bounded queue, and one `atif-storage` entry per
 * destination in `outputs()` with `sent`, `failed`, `dropped`. A trajectory
 * whose upload does not succeed (failed for good, dropped from a full
 * queue, pending when the shutdown's budget ends or at process exit) is
 * written into the configured folder as its owner-only recovery copy,
 * exactly where native would have put it.
 *
 * @module
 */

import { type Dirent, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { JsonObject, OutputHealth } from '../src/backends/native-surface.ts';
import {
  atExit,
  createAtifStorage,
  errorMessage,
  isJsonObject,
  makeDirectory,
  OWNER_ONLY,
  safeLog,
  validatePluginConfig,
  writeFileAtomic,
  type AtifStorage,
  type AtifStorageSettings,
  type AtifUpload,
  type Logger,
  type RemoteOutputLedger,
} from '../src/backends/native-surface.ts';

/** How often the staging folder is looked at while the activation runs (an empty folder costs one readdir). */
const POLL_MS = 200;

/** The staging folder's name prefix (hidden, so that listings of the output folder leave it out). */
export const STAGING_PREFIX = '.nemo-relay-uploads-';

/** The document native is given, and the uploads it leaves to this module. */
export interface StagedDocument {
  document: JsonObject;
  /** Once native activated `document`: starts the uploads (null: nothing to upload). */
  start(): NativeAtifUploads | null;
  /** Native refused `document`: removes the staging folder. */
  discard(): void;
}

const UNCHANGED = (document: JsonObject): StagedDocument => ({ document, start: () => null, discard: () => {} });

/**
 * `document` with its ATIF storage taken out and its ATIF folder redirected
 * to a staging folder, and the uploader of what native writes there. A
 * document without ATIF storage is returned as it is. When the staging
 * folder cannot be made, the document is returned as it is too (native then
 * uploads, as before), with a warning.
 */
export function stageAtifUploads(document: JsonObject, logger: Logger, ledger: RemoteOutputLedger): StagedDocument {
  const observability = validatePluginConfig(document).observability;
  const atif = observability?.atif ?? null;
  const storage = observability?.storage ?? [];
  if (atif === null || storage.length === 0) return UNCHANGED(document);
  const components = Array.isArray(document.components) ? document.components : [];
  // The component our validation read: the first enabled observability component (native allows one).
  const index = components.findIndex((c) => isJsonObject(c) && c.kind === 'observability' && c.enabled !== false);
  const component = components[index];
  if (!isJsonObject(component) || !isJsonObject(component.config) || !isJsonObject(component.config.atif)) return UNCHANGED(document);
  const outputDirectory = path.resolve(atif.outputDirectory ?? '.');
  let staging: string;
  try {
    makeDirectory(outputDirectory);
    recoverLeftovers(outputDirectory, logger);
    // The process id in the name: a later start tells a dead process's leftovers from a live one's folder.
    staging = mkdtempSync(path.join(outputDirectory, `${STAGING_PREFIX}${process.pid}-`));
  } catch (error) {
    safeLog(
      logger,
      'warn',
      `ATIF uploads: cannot make a staging folder in ${outputDirectory} (${errorMessage(error)}); native uploads the trajectories itself, and a destination that hangs can then hold up its local files`,
    );
    return UNCHANGED(document);
  }
  const { storage: _storage, ...rest } = component.config.atif;
  const config = { ...component.config, atif: { ...rest, output_directory: staging } };
  const staged = components.slice();
  staged[index] = { ...component, config };
  // Until the uploads start, nothing else empties the folder: an exit while native still activates (and already
  // writes) moves what it wrote to where it belongs.
  const removeExitTask = atExit(() => emptyStaging(staging, outputDirectory, logger, 'the process exited before plugins.toml finished activating'));
  return {
    document: { ...document, components: staged },
    start: () => {
      removeExitTask();
      return new NativeAtifUploads(staging, outputDirectory, storage, logger, ledger);
    },
    discard: () => {
      removeExitTask();
      try {
        rmSync(staging, { recursive: true, force: true });
      } catch {
        // An empty hidden folder left behind is harmless.
      }
    },
  };
}

/** Uploads what native writes into the staging folder; see the module doc. */
export class NativeAtifUploads {
  readonly #staging: string;
  readonly #outputDirectory: string;
  readonly #logger: Logger;
  readonly #storage: AtifStorage;
  readonly #timeoutMs: number;
  readonly #untrack: (() => void)[];
  #timer: ReturnType<typeof setInterval> | null;
  #closing: Promise<void> | null = null;
  #done = false;

  constructor(staging: string, outputDirectory: string, settings: readonly AtifStorageSettings[], logger: Logger, ledger: RemoteOutputLedger) {
    this.#staging = staging;
    this.#outputDirectory = outputDirectory;
    this.#logger = logger;
    this.#storage = createAtifStorage(settings, { logger, keepRecoveryCopy: (upload) => this.#keepRecoveryCopy(upload) });
    this.#timeoutMs = Math.max(0, ...settings.map((entry) => entry.timeoutMillis));
    const health = () => this.#storage.health();
    // One flusher and one abandoner for all destinations (the first entry's), so each runs once.
    this.#untrack = settings.map((_, i) =>
      ledger.track(
        () => health()[i]!,
        i === 0 ? () => this.flush() : undefined,
        i === 0 ? (reason) => this.abandon(reason) : undefined,
      ),
    );
    this.#timer = setInterval(() => this.collect(), POLL_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** The staging folder native writes into. */
  get stagingDirectory(): string {
    return this.#staging;
  }

  /** The configured folder (recovery copies). */
  get outputDirectory(): string {
    return this.#outputDirectory;
  }

  /**
   * Queues every trajectory native finished writing into the staging
   * folder. `final`: native is done (closed, or the process exits), so a
   * file that is not a whole document will not become one: it is moved to
   * the configured folder as it is.
   */
  collect(final = false): void {
    if (this.#done) return;
    // In the order native wrote them (a look may find several), as native would have uploaded them.
    for (const relative of byWriteTime(this.#staging, finishedFilesUnder(this.#staging))) {
      const file = path.join(this.#staging, relative);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue; // gone or unreadable now: the next look
      }
      const sessionId = sessionIdOf(text);
      if (sessionId === null) {
        if (final) this.#keepUnreadable(file, relative);
        continue; // still being written
      }
      try {
        unlinkSync(file);
      } catch {
        // A file that cannot be removed would be uploaded twice: leave it to the next look.
        continue;
      }
      const filename = relative.split(path.sep).join('/');
      this.#storage.upload({ filename, sessionId, text, localPath: path.join(this.#outputDirectory, relative) });
    }
  }

  /** Queues what native wrote, then waits until it is delivered or given up, up to the longest destination timeout. */
  async flush(): Promise<void> {
    this.collect();
    await this.#storage.flush(this.#timeoutMs);
  }

  /**
   * Native closed: queues its last trajectories, uploads what is queued
   * within the longest destination timeout (recovery copies for the rest),
   * and removes the staging folder.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#stopPolling();
    this.collect(true);
    try {
      await this.#storage.close();
    } finally {
      this.#finish();
    }
  }

  /** Gives up every pending upload now, synchronously (shutdown out of time, process exit): each kept as its recovery copy. */
  abandon(reason: string): void {
    this.#stopPolling();
    this.collect(true);
    this.#storage.abandon(reason);
    if (this.#closing === null) this.#finish();
  }

  health(): OutputHealth[] {
    return this.#storage.health();
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    for (const untrack of this.#untrack) untrack();
    try {
      rmSync(this.#staging, { recursive: true, force: true });
    } catch {
      // An empty hidden folder left behind is harmless.
    }
  }

  #stopPolling(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Where a trajectory whose upload did not succeed is kept (owner-only, as native), or null. */
  #keepRecoveryCopy(upload: AtifUpload): string | null {
    const target = upload.localPath ?? path.join(this.#outputDirectory, upload.filename);
    try {
      writeFileAtomic(target, upload.text, { mode: OWNER_ONLY });
      return target;
    } catch (error) {
      safeLog(this.#logger, 'warn', `ATIF recovery copy ${target} could not be written: ${errorMessage(error)}`);
      return null;
    }
  }

  #keepUnreadable(file: string, relative: string): void {
    keepLocally(file, path.join(this.#outputDirectory, relative), 'as native left it is not a whole document', this.#logger);
  }
}

/** Moves `file` to `target` (where native would have written it), saying why it was not uploaded. */
function keepLocally(file: string, target: string, why: string, logger: Logger): void {
  try {
    makeDirectory(path.dirname(target));
    renameSync(file, target);
    safeLog(logger, 'warn', `ATIF trajectory ${target} ${why}; kept locally, not uploaded`);
  } catch (error) {
    safeLog(logger, 'warn', `ATIF trajectory ${file} ${why} and could not be moved: ${errorMessage(error)}`);
  }
}

/**
 * The files native finished writing under `staging`, relative to it: its own
 * temporary files (dot-named, or ending `.tmp`), still being written or
 * abandoned half-way, left out.
 */
function finishedFilesUnder(staging: string): string[] {
  return filesUnder(staging).filter((relative) => {
    const name = path.basename(relative);
    return !name.startsWith('.') && !name.endsWith('.tmp');
  });
}

/**
 * Empties a staging folder nobody will upload from any more: each file
 * native finished goes to the configured folder (said, with `why`), its own
 * half-written temporary files (dot-named, `.tmp`) are removed, and the
 * folder goes. Never throws.
 */
function emptyStaging(staging: string, outputDirectory: string, logger: Logger, why: string): void {
  for (const relative of finishedFilesUnder(staging)) {
    const whole = (() => {
      try {
        return sessionIdOf(readFileSync(path.join(staging, relative), 'utf8')) !== null;
      } catch {
        return false;
      }
    })();
    keepLocally(path.join(staging, relative), path.join(outputDirectory, relative), whole ? `(${why})` : `is not a whole document (${why})`, logger);
  }
  try {
    rmSync(staging, { recursive: true, force: true });
  } catch {
    // An empty hidden folder left behind is harmless.
  }
}

/**
 * The staging folders in `outputDirectory` left by processes that are gone
 * (a kill, a crash, an exit while native was still writing): emptied as at
 * exit. A folder whose process still runs is another activation's, and left alone.
 */
function recoverLeftovers(outputDirectory: string, logger: Logger): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(outputDirectory, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(STAGING_PREFIX)) continue;
    const pid = /^(\d+)-/.exec(entry.name.slice(STAGING_PREFIX.length))?.[1];
    if (pid === undefined || processRuns(Number(pid))) continue;
    emptyStaging(path.join(outputDirectory, entry.name), outputDirectory, logger, `left by process ${pid}, which ended before uploading it`);
  }
}

function processRuns(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as someone else.
    return (error as { code?: unknown } | null)?.code === 'EPERM';
  }
}

/** Files under `folder`, relative to it. */
function filesUnder(folder: string, under = ''): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(path.join(folder, under), { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries) {
    const relative = path.join(under, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(folder, relative));
    else if (entry.isFile()) files.push(relative);
  }
  return files;
}

/** The document's `session_id` when `text` is a whole trajectory document, else null. */
function sessionIdOf(text: string): string | null {
  try {
    const document: unknown = JSON.parse(text);
    return isJsonObject(document) && typeof document.session_id === 'string' ? document.session_id : null;
  } catch {
    return null;
  }
}

/** `files` (relative to `folder`) oldest first, by modification time, then name. */
function byWriteTime(folder: string, files: string[]): string[] {
  if (files.length < 2) return files;
  const written = new Map<string, bigint>();
  for (const file of files) {
    try {
      written.set(file, statSync(path.join(folder, file), { bigint: true }).mtimeNs);
    } catch {
      written.set(file, 0n);
    }
  }
  return files.sort((a, b) => {
    const delta = written.get(a)! - written.get(b)!;
    return delta < 0n ? -1 : delta > 0n ? 1 : a < b ? -1 : a > b ? 1 : 0;
  });
}
