/**
 * Which JavaScript runtime the library runs in.
 *
 * Backend selection depends on it: the native napi binding is the default
 * on Node only, and an explicit opt-in on Bun and Deno (which load it, but
 * Deno needs permission flags and neither is the binding's tested target).
 *
 * @module
 */

export type RuntimeName = 'node' | 'bun' | 'deno' | 'unknown';

/** The globals `detectRuntime` looks at (a test passes its own). */
export interface RuntimeGlobals {
  /** Deno's global, with its version. */
  Deno?: { version?: { deno?: string } };
  /** Bun's global, with its version. */
  Bun?: { version?: string };
  /** Node's `process`, with its versions (Bun and Deno have one too). */
  process?: { versions?: Record<string, string | undefined> };
}

/** The current runtime. Deno and Bun are checked first: both also look like Node. */
export function detectRuntime(globals: RuntimeGlobals = globalThis as RuntimeGlobals): RuntimeName {
  const versions = globals.process?.versions;
  if (globals.Deno !== undefined || versions?.deno !== undefined) return 'deno';
  if (globals.Bun !== undefined || versions?.bun !== undefined) return 'bun';
  if (versions?.node !== undefined) return 'node';
  return 'unknown';
}
