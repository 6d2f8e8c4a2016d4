/**
 * Shared setup of the native adapter tests: whether the binding loads here
 * (tests skip only when it truly cannot, and say why), temp dirs, and small
 * readers for the files the adapter writes.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger, type Logger } from '../../src/hooks/logger.ts';
import type { AtofEvent, AtofScopeCategory } from '../../src/relay/formats/atof.ts';

/** An ATOF record as read back from a file: scope fields optional, so tests can filter marks and scopes alike. */
export type RecordedEvent = AtofEvent & { scope_category?: AtofScopeCategory; attributes?: string[] };
import { loadNativeRelay, type NativeRelay } from '../../native/index.ts';

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

/** A scope's start and end event, by name. */
export function scopeEvents(events: RecordedEvent[], name: string): { start: RecordedEvent | undefined; end: RecordedEvent | undefined } {
  return {
    start: events.find((e) => e.name === name && e.kind === 'scope' && e.scope_category === 'start'),
    end: events.find((e) => e.name === name && e.kind === 'scope' && e.scope_category === 'end'),
  };
}
