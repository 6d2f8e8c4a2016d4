/**
 * Shared setup of the native adapter tests: whether the binding loads here
 * (tests skip only when it truly cannot, and say why), temp dirs, and small
 * readers for the files the adapter writes.
 */

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { detectRuntime } from '../../src/shared/js-runtime.ts';
import { silentLogger, type Logger } from '../../src/shared/logger.ts';
import type { AtofEvent, AtofScopeCategory } from '../../src/formats/atof/types.ts';

import { validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { loadNativeRelay, type NativeRelay } from '../../native/index.ts';
import { afterEach, expect } from 'vitest';

/** An ATOF record as read back from a file: scope fields optional, so tests can filter marks and scopes alike. */
export type RecordedEvent = AtofEvent & { scope_category?: AtofScopeCategory; attributes?: string[] };

function probe(): { available: boolean; loadError: unknown } {
  try {
    loadNativeRelay({ logger: silentLogger });
    return { available: true, loadError: undefined };
  } catch (error) {
    return { available: false, loadError: error };
  }
}

export const { available, loadError } = probe();
if (!available) {
  console.warn(`[native tests] skipped: nemo-relay-node cannot load here: ${String((loadError as Error)?.message ?? loadError)}`);
}

/** A recording logger. */
export function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function relay(logger: Logger = silentLogger): NativeRelay {
  return loadNativeRelay({ logger });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `nrh-native-${prefix}-`));
}

export function readAtof(file: string): RecordedEvent[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RecordedEvent);
}

/**
 * The relay a test works on, shut down after each test. `recorded` runs
 * calls on it (a test may set `backend` first, e.g. with its own logger)
 * with an ATOF file sink, and returns the events once they validate.
 */
export class NativeFixture {
  backend: NativeRelay | undefined;
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
    afterEach(async () => {
      await this.backend?.shutdown();
      this.backend = undefined;
    });
  }

  async recorded(run: (relay: NativeRelay) => void | Promise<void>): Promise<RecordedEvent[]> {
    const backend = (this.backend ??= relay());
    const dir = tempDir(this.#prefix);
    const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
    await run(backend);
    await sink.close();
    const events = readAtof(path.join(dir, 'events.jsonl'));
    expect(validateAtofEvents(events)).toEqual([]);
    return events;
  }
}

/** A scope's start and end event, by name. */
export function scopeEvents(events: RecordedEvent[], name: string): { start: RecordedEvent | undefined; end: RecordedEvent | undefined } {
  return {
    start: events.find((e) => e.name === name && e.kind === 'scope' && e.scope_category === 'start'),
    end: events.find((e) => e.name === name && e.kind === 'scope' && e.scope_category === 'end'),
  };
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `file:` URL of the built adapter (dist/ is built by the suite's global setup). */
export const builtAdapter = pathToFileURL(path.join(root, 'dist', 'native', 'index.js')).href;

/**
 * Runs an ES module script with the runtime running the tests (Node 20
 * cannot run .ts, so scripts import the built adapter) and returns what it
 * printed after `@@RESULT@@`, parsed. A child process isolates crashes and
 * gives the script its own environment: Bun's `process.env` writes do not
 * reach native code, so environment-dependent native behaviour is tested by
 * spawning with `env`.
 */
export function runScript(
  source: string,
  env: Record<string, string | undefined> = process.env,
  /** A command the runtime is started through, e.g. `['unshare', '-m', ...]`. */
  prefix: string[] = [],
): { status: number | null; signal: string | null; stdout: string; stderr: string; result: unknown } {
  const dir = tempDir('script');
  const file = path.join(dir, 'script.mjs');
  fs.writeFileSync(file, source);
  // Deno runs the addon only with FFI, read and sys access, and resolves the
  // adapter's bare imports (smol-toml) only with the project's config.
  const args = detectRuntime() === 'deno' ? ['run', '-A', '--config', path.join(root, 'deno.json'), file] : [file];
  const [command, ...rest] = [...prefix, process.execPath, ...args] as [string, ...string[]];
  const child = spawnSync(command, rest, { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024, env });
  const marker = (child.stdout ?? '').split('@@RESULT@@')[1];
  return {
    status: child.status,
    signal: child.signal,
    stdout: child.stdout ?? '',
    stderr: child.stderr ?? '',
    result: marker === undefined ? undefined : JSON.parse(marker),
  };
}
