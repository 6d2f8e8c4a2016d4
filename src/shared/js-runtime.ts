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

/** The globals `edgeRuntime` looks at (a test passes its own). */
export interface EdgeGlobals {
  /** Vercel's Edge Runtime (and Next.js's edge routes) define it as a string. */
  EdgeRuntime?: unknown;
  /** Cloudflare's workerd answers `Cloudflare-Workers`. */
  navigator?: { userAgent?: unknown };
}

/**
 * The edge runtime the library runs in, by the name its users know, or
 * `undefined` elsewhere.
 *
 * Why: an edge runtime has no file system a process can write to, and none
 * of the Node modules the relay's senders use, so no output of the plugin
 * can work there. Telemetry is turned off with one message that says so,
 * instead of failing each write with the runtime's own error (workerd with
 * `nodejs_compat` looks like Node, and answered every write with `operation
 * not permitted`).
 */
export function edgeRuntime(globals: EdgeGlobals = globalThis as EdgeGlobals): string | undefined {
  try {
    if (typeof globals.EdgeRuntime === 'string') return "Vercel's Edge Runtime";
    if (globals.navigator?.userAgent === 'Cloudflare-Workers') return 'Cloudflare Workers (workerd)';
  } catch {
    // A global whose getter throws is no edge runtime this library knows.
  }
  return undefined;
}
