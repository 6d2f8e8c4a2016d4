/**
 * ATOF JSONL file sinks over native `AtofExporter`.
 *
 * Two native traps are handled here: the config must be camelCase
 * (`outputDirectory`; a snake_case key is silently ignored and the file lands
 * in the working directory), and the constructor creates or truncates the
 * file at once. Native writes on a background thread, so `flush()` drains
 * delivery (`flushSubscribers`) before `forceFlush()`.
 *
 * @module
 */

import { statSync } from 'node:fs';
import path from 'node:path';
import type { AtofExporter, AtofExporterOptions, OutputHealth } from '../src/backends/kit.ts';
import { isPlainFileName } from '../src/backends/kit.ts';
import type { NativeAtofExporter, NativeBinding } from './binding.ts';
import { AtofExporterError, messageOf } from './errors.ts';
import { uniqueName } from './names.ts';

export class NativeAtofSink implements AtofExporter {
  readonly path: string;
  readonly #binding: NativeBinding;
  readonly #exporter: NativeAtofExporter;
  readonly #name: string;
  readonly #onClose: (sink: NativeAtofSink) => void;
  #lastFlush: string | null = null;
  #errors = 0;
  #lastError: string | undefined;
  #closing: Promise<void> | null = null;

  constructor(binding: NativeBinding, given: AtofExporterOptions, onClose: (sink: NativeAtofSink) => void) {
    const options = plainOptions(given);
    const filename = options.filename;
    if (!isPlainFileName(filename)) {
      throw new AtofExporterError(`ATOF filename must be a plain file name, got ${JSON.stringify(filename)}`);
    }
    if (options.mode !== 'append' && options.mode !== 'overwrite') {
      throw new AtofExporterError(`ATOF mode must be 'append' or 'overwrite', got ${JSON.stringify(options.mode)}`);
    }
    const outputDirectory = path.resolve(options.outputDirectory ?? '.');
    this.#binding = binding;
    this.#onClose = onClose;
    this.#name = uniqueName('atof');
    try {
      this.#exporter = new binding.AtofExporter({ type: 'file', outputDirectory, filename, mode: options.mode });
    } catch (error) {
      throw new AtofExporterError(`cannot create the ATOF file ${path.join(outputDirectory, filename)}: ${messageOf(error)}`, { cause: error });
    }
    try {
      this.#exporter.register(this.#name);
    } catch (error) {
      safely(() => this.#exporter.shutdown());
      throw new AtofExporterError(`cannot register the ATOF exporter: ${messageOf(error)}`, { cause: error });
    }
    this.path = path.resolve(this.#exporter.path || path.join(outputDirectory, filename));
  }

  async flush(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    await this.#drainAndWrite();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closing !== null;
  }

  health(): OutputHealth {
    const health: OutputHealth = { kind: 'atof', path: this.path, lastWrite: this.#lastFlush, bytes: 0, errors: this.#errors };
    try {
      const stat = statSync(this.path);
      health.bytes = stat.size;
      // Native writes on its own thread; the file's mtime is the true last write.
      if (stat.size > 0) health.lastWrite = stat.mtime.toISOString();
    } catch (error) {
      health.errors += 1;
      health.lastError = `cannot stat ${this.path}: ${messageOf(error)}`;
    }
    if (this.#lastError !== undefined) health.lastError = this.#lastError;
    return health;
  }

  async #close(): Promise<void> {
    await this.#drainAndWrite();
    safely(() => this.#exporter.deregister(this.#name), (error) => this.#fail('deregister', error));
    safely(() => this.#exporter.shutdown(), (error) => this.#fail('shutdown', error));
    this.#onClose(this);
  }

  async #drainAndWrite(): Promise<void> {
    try {
      await this.#binding.flushSubscribers();
      this.#exporter.forceFlush();
      this.#lastFlush = new Date().toISOString();
    } catch (error) {
      this.#fail('flush', error);
    }
  }

  #fail(operation: string, error: unknown): void {
    this.#errors += 1;
    this.#lastError = `${operation}: ${messageOf(error)}`;
  }
}

function safely(fn: () => unknown, onError?: (error: unknown) => void): void {
  try {
    fn();
  } catch (error) {
    onError?.(error);
  }
}

/** The three options read once; a hostile options object is reported as bad options. */
function plainOptions(options: AtofExporterOptions): Partial<AtofExporterOptions> {
  try {
    const out: Partial<AtofExporterOptions> = { filename: options?.filename, mode: options?.mode };
    const dir = options?.outputDirectory;
    if (dir !== undefined) out.outputDirectory = dir;
    if (out.outputDirectory !== undefined && typeof out.outputDirectory !== 'string') {
      throw new TypeError('outputDirectory must be a string');
    }
    return out;
  } catch (error) {
    throw new AtofExporterError(`invalid ATOF exporter options: ${messageOf(error)}`, { cause: error });
  }
}
