/**
 * The backends every contract scenario runs against, and the native probe.
 *
 * Native is skipped only when `nemo-relay-node` truly cannot load in this
 * runtime (the load error is printed once, at import); on this machine it
 * loads under Node, Bun and Deno (`-A`).
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger, type Logger } from '../../src/shared/logger.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { loadNativeRelay } from '../../native/index.ts';

export type BackendName = 'fake' | 'memory' | 'native';

export interface BackendCase {
  name: BackendName;
  /**
   * True for backends that write real ATOF/ATIF files (memory, native). The
   * fake only records calls, so file and format assertions apply to these only.
   */
  writesFiles: boolean;
  /** False only for native when the binding cannot load here. */
  available: boolean;
  create(logger?: Logger): RelayBackend;
}

function probeNative(): { available: boolean; reason: string } {
  try {
    const relay = loadNativeRelay({ logger: silentLogger });
    void relay.shutdown();
    return { available: true, reason: '' };
  } catch (error) {
    return { available: false, reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

const probe = probeNative();
export const nativeAvailable = probe.available;
export const nativeLoadError = probe.reason;
if (!nativeAvailable) console.warn(`native backend skipped: ${nativeLoadError}`);

export const BACKENDS: readonly BackendCase[] = [
  { name: 'fake', writesFiles: false, available: true, create: () => createFakeRelay() },
  { name: 'memory', writesFiles: true, available: true, create: (logger = silentLogger) => createMemoryRelay({ logger }) },
  { name: 'native', writesFiles: true, available: nativeAvailable, create: (logger = silentLogger) => loadNativeRelay({ logger }) },
];

/** The backends that write files; the differential tests compare these two. */
export const FILE_BACKENDS = BACKENDS.filter((backend) => backend.writesFiles);

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${prefix}-`));
}

/** A logger that keeps every line, for asserting what was (not) reported. */
export function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
