/**
 * Load-time choice of the relay backend.
 *
 * | choice      | Node                                   | Bun / Deno / unknown |
 * | ----------- | -------------------------------------- | -------------------- |
 * | `"auto"`    | native if it loads, else memory        | memory               |
 * | `"native"`  | native; if it cannot load: off + one warning | same           |
 * | `"memory"`  | memory                                 | memory               |
 * | `"off"`     | off (drops everything)                 | off                  |
 * | a backend   | that backend (`kind: "custom"`)        | same                 |
 *
 * On an edge runtime (Vercel's Edge Runtime, Cloudflare's workerd) every
 * choice but a backend object is off, with one warning: no built-in
 * backend has the files and Node modules it needs there.
 *
 * `NEMO_RELAY_HOOKS_BACKEND=native|memory|off|auto` overrides the choice,
 * including a backend object, so an operator can switch telemetry without a
 * code change; any other value is ignored with a warning. Native is an
 * explicit opt-in on Bun and Deno: both load it, but it is not the binding's
 * tested target, and Deno needs `--allow-ffi --allow-read --allow-env
 * --allow-sys=cpus,networkInterfaces,hostname` (or `-A`).
 *
 * `ResolvedBackend.reason` always says why this backend was picked (and why
 * native was not), for `status()`.
 *
 * This is the only place `src/` touches `native/`, and it does so through a
 * dynamic `import()`, so the native adapter (and the binding) are never
 * loaded unless chosen. The in-memory relay is imported statically:
 * `resolveBackendNow` hands it out synchronously, so a plugin on `memory`
 * (or `auto` on Bun and Deno) records its very first hook with nothing
 * queued.
 *
 * @module
 */

import { packageModuleUrl } from '../shared/package-module.ts';
import { isTransientError, retryTransient } from '../shared/transient.ts';
import { errorMessage } from '../shared/error-text.ts';
import { guardEnv, processEnv } from '../shared/env.ts';
import { consoleLogger, safeLog, type Logger } from '../shared/logger.ts';
import type { BackendKind, RelayBackend } from '../relay/contract.ts';
import { createNoopRelay } from './off.ts';
import { createMemoryRelay } from './memory/index.ts';
import { preparePluginHost } from './memory/relay.ts';
import { detectRuntime, edgeRuntime, type RuntimeName } from '../shared/js-runtime.ts';

/** Environment variable that overrides the configured backend choice. */
export const BACKEND_ENV = 'NEMO_RELAY_HOOKS_BACKEND';

/** A backend by name: `auto` picks native on Node when it loads, else memory. */
export type BackendName = 'auto' | 'native' | 'memory' | 'off';

/** What the host asks for: a backend name, or a backend object to use as is. */
export type BackendChoice = BackendName | RelayBackend;

/** The backend chosen, and why. */
export interface ResolvedBackend {
  /** The backend to record with. */
  backend: RelayBackend;
  /** `native`, `memory`, `off`, or `custom` for a backend object. */
  kind: BackendKind | 'custom';
  /** Why this backend was picked, in one sentence. */
  reason: string;
  /** The runtime version when known (native: the `nemo-relay-node` version). */
  version?: string;
}

/** Options of `resolveBackend`. */
export interface ResolveBackendOptions {
  /** Environment to read `NEMO_RELAY_HOOKS_BACKEND` from. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the fallback warning goes. Default: `consoleLogger`. */
  logger?: Logger;
  /** Loads the native backend; throws when it cannot. Default: `loadNativeRelay` from `native/`. */
  nativeLoader?: (logger: Logger) => RelayBackend | Promise<RelayBackend>;
  /** Runtime to decide for. Default: `detectRuntime()`. */
  runtime?: RuntimeName;
}

const NAMES: ReadonlySet<string> = new Set<BackendName>(['auto', 'native', 'memory', 'off']);

/** Picks and creates the backend for `choice`. Never rejects: the worst case is the `off` backend. */
export async function resolveBackend(choice: BackendChoice, options: ResolveBackendOptions = {}): Promise<ResolvedBackend> {
  const logger = options.logger ?? consoleLogger;
  const runtime = options.runtime ?? detectRuntime();
  try {
    const { effective, via, warning } = effectiveChoice(choice, options);
    if (warning !== undefined) safeLog(logger, 'warn', warning);
    const now = resolvedNow(effective, via, runtime, logger);
    if (now !== undefined) return now;
    if (effective === 'native') {
      const loaded = await tryNative(options, logger);
      if (loaded.backend !== undefined) return resolvedNative(loaded.backend, `${via}native relay requested`);
      const reason = `${via}native relay requested but unavailable on ${runtime} (${loaded.why}); telemetry is OFF`;
      safeLog(logger, 'warn', reason);
      return resolvedOff(reason);
    }
    if (effective === 'auto') return await resolvedAuto(runtime, via, options, logger);
    safeLog(logger, 'warn', `unknown relay backend ${describe(effective)}; using "auto"`);
    return await resolvedAuto(runtime, `unknown backend ${describe(effective)}, so auto: `, options, logger);
  } catch (error) {
    const reason = `backend selection failed (${errorMessage(error)}); telemetry is OFF`;
    safeLog(logger, 'warn', reason);
    return resolvedOff(reason);
  }
}

/**
 * The backend for `choice` when it needs no loading (a backend object,
 * `memory`, `off`, `auto` off Node, each after the environment override),
 * or `undefined` when only `resolveBackend` can tell (native). Never throws.
 */
export function resolveBackendNow(choice: BackendChoice, options: ResolveBackendOptions = {}): ResolvedBackend | undefined {
  const logger = options.logger ?? consoleLogger;
  try {
    const { effective, via, warning } = effectiveChoice(choice, options);
    const now = resolvedNow(effective, via, options.runtime ?? detectRuntime(), logger);
    // Undecided here, resolveBackend (which the caller runs next) says it: an invalid override is reported once.
    if (now !== undefined && warning !== undefined) safeLog(logger, 'warn', warning);
    return now;
  } catch {
    // resolveBackend says why, on the path that cannot fail.
    return undefined;
  }
}

/** The choice after the environment override, the reason's prefix when the override applied, and the warning for an invalid one. */
function effectiveChoice(choice: BackendChoice, options: ResolveBackendOptions): { effective: BackendChoice; via: string; warning?: string } {
  const { override, warning } = envOverride(guardEnv(options.env ?? processEnv()));
  return { effective: override ?? choice, via: override === undefined ? '' : `${BACKEND_ENV}=${override}: `, warning };
}

/** The choices decided without loading anything; `undefined` for native and for auto on Node. */
function resolvedNow(effective: BackendChoice, via: string, runtime: RuntimeName, logger: Logger): ResolvedBackend | undefined {
  if (typeof effective === 'object' && effective !== null) return resolvedCustom(effective);
  const edge = edgeRuntime();
  if (edge !== undefined && effective !== 'off') return resolvedOffOnEdge(edge, via, logger);
  if (effective === 'memory') return resolvedMemory(`${via}in-memory relay requested`, logger);
  if (effective === 'off') return resolvedOff(`${via}telemetry is off`);
  if (effective === 'auto' && runtime !== 'node') return autoMemory(runtime, via, logger);
  return undefined;
}

function autoMemory(runtime: RuntimeName, via: string, logger: Logger): ResolvedBackend {
  return resolvedMemory(`${via}auto on ${runtime}: in-memory relay (native is an explicit opt-in there)`, logger);
}

async function resolvedAuto(runtime: RuntimeName, via: string, options: ResolveBackendOptions, logger: Logger): Promise<ResolvedBackend> {
  if (runtime !== 'node') return autoMemory(runtime, via, logger);
  const loaded = await tryNative(options, logger);
  if (loaded.backend !== undefined) return resolvedNative(loaded.backend, `${via}auto on node: native relay loaded`);
  const reason = `${via}auto on node: native relay unavailable (${loaded.why}); using the in-memory relay`;
  // The memory relay is what most hosts run: a choice, not a problem (status() and doctor say why).
  safeLog(logger, 'debug', reason);
  return resolvedMemory(reason, logger);
}

async function tryNative(options: ResolveBackendOptions, logger: Logger): Promise<{ backend?: RelayBackend; why: string }> {
  try {
    let attempt = 0;
    const backend = await retryTransient(async () => (options.nativeLoader ?? loadNative)(logger, attempt++), { onRetry: retrying('the native relay', logger) });
    return { backend, why: '' };
  } catch (error) {
    return { why: errorMessage(error) };
  }
}

async function loadNative(logger: Logger, attempt = 0): Promise<RelayBackend> {
  const { loadNativeRelay } = await ownModule('native/index', attempt, () => import('../../native/index.ts'));
  return loadNativeRelay({ logger });
}

/**
 * Imports one of this package's modules: `first` on the first attempt, a new
 * module record after. A failure while the file is there is marked
 * transient: Bun reports EMFILE while opening it as "Cannot find module".
 */
async function ownModule<T>(specifier: string, attempt: number, first: () => Promise<T>): Promise<T> {
  try {
    return attempt === 0 ? await first() : await reimport<T>(specifier, attempt);
  } catch (error) {
    if (!isTransientError(error) && ownFileExists(specifier)) {
      throw Object.assign(new Error(`${errorMessage(error)} (the module file exists: assumed a passing fault)`, { cause: error }), { transient: true });
    }
    throw error;
  }
}

function ownFileExists(fromRoot: string): boolean {
  return packageModuleUrl(fromRoot) !== null;
}

/**
 * Imports a module again after a passing fault. Node caches a failed
 * dynamic import (EMFILE while opening the file) for good, so a retry of
 * the same specifier fails forever: a query makes it a new module record.
 */
async function reimport<T>(fromRoot: string, attempt: number): Promise<T> {
  const url = packageModuleUrl(fromRoot);
  if (url === null) throw new Error(`cannot find this package's ${fromRoot} module next to ${import.meta.url}`);
  return (await import(`${url.href}?retry=${attempt}`)) as T;
}

/** Logs each retry of a step that failed with a passing fault (EMFILE at the first hook). */
function retrying(what: string, logger: Logger): (error: unknown, attempt: number) => void {
  return (error, attempt) => safeLog(logger, 'warn', `loading ${what} failed (${errorMessage(error)}); retry ${attempt}`);
}

function resolvedMemory(reason: string, logger: Logger): ResolvedBackend {
  const backend = createMemoryRelay({ logger });
  return withVersion({ backend, kind: 'memory', reason }, backend);
}

function resolvedNative(backend: RelayBackend, reason: string): ResolvedBackend {
  const version = backend.version;
  return withVersion({ backend, kind: backend.kind ?? 'native', reason: version ? `${reason} (nemo-relay-node ${version})` : reason }, backend);
}

/**
 * Every built-in backend needs what an edge runtime lacks (files to write,
 * Node's network modules, the native binary), so `auto`, `memory` and
 * `native` are off there, with one warning that says why and what works.
 */
function resolvedOffOnEdge(edge: string, via: string, logger: Logger): ResolvedBackend {
  const reason = `${via}telemetry is OFF on ${edge}: the relay writes files and sends with Node's modules, which this runtime does not have. Your program runs unchanged and its hooks still reach your own subscribers; to record it, run it on Node, Bun or Deno (docs/known-limits.md, "Edge runtimes")`;
  safeLog(logger, 'warn', reason);
  return resolvedOff(reason);
}

function resolvedOff(reason: string): ResolvedBackend {
  return { backend: createNoopRelay({ reason }), kind: 'off', reason };
}

function resolvedCustom(backend: RelayBackend): ResolvedBackend {
  let kind: string;
  try {
    kind = String(backend.kind ?? 'custom');
  } catch {
    kind = 'custom';
  }
  return withVersion({ backend, kind: 'custom', reason: `backend object passed by the host (kind ${kind})` }, backend);
}

function withVersion(resolved: ResolvedBackend, backend: RelayBackend): ResolvedBackend {
  try {
    if (typeof backend.version === 'string') resolved.version = backend.version;
  } catch {
    // A backend whose version getter throws just has no version.
  }
  return resolved;
}

function envOverride(env: Readonly<Record<string, string | undefined>>): { override?: BackendName; warning?: string } {
  const raw = env[BACKEND_ENV];
  if (raw === undefined) return {};
  const value = raw.trim().toLowerCase();
  if (value === '') return {};
  if (NAMES.has(value)) return { override: value as BackendName };
  return { warning: `ignoring ${BACKEND_ENV}=${JSON.stringify(raw)}: expected one of auto, native, memory, off` };
}

function describe(value: unknown): string {
  try {
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    return typeof value;
  }
}

/**
 * Loads what the in-memory relay needs to activate a plugins.toml without
 * waiting: for the stand-in a shutdown makes when native still starts.
 * Never rejects.
 */
export async function prepareMemoryPluginHost(): Promise<void> {
  await preparePluginHost().catch(() => undefined);
}
