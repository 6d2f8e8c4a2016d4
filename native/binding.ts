/**
 * The narrow, typed view of `nemo-relay-node` the adapter uses, and the
 * loader that produces it.
 *
 * The package's own `index.d.ts` cannot be used: it refers to an undeclared
 * `Json` type (so every payload parameter degrades to `any`) and declares its
 * enums as ambient `const enum`s, which `verbatimModuleSyntax` rejects. So the
 * adapter declares only what it calls, with positional optional arguments
 * spelled out, and reads `ScopeType` values from the loaded module at runtime.
 *
 * Loading is lazy (`createRequire` inside a function, never a static import),
 * so importing this module costs nothing when native is never selected and
 * cannot fail when the optional peer dependency is absent.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Json } from '../src/backends/native-surface.ts';
import { errorMessage } from '../src/backends/native-surface.ts';
import { NativeUnavailableError, type NativeUnavailableReason } from './errors.ts';

/** Versions of `nemo-relay-node` this adapter was written and verified against. */
export const SUPPORTED_VERSION_RANGE = '0.9.x';
const SUPPORTED_VERSION = /^0\.9\.\d+(?:[-+].*)?$/;

/** A native scope handle. Opaque apart from these getters. */
export interface NativeScopeHandle {
  readonly uuid: string;
  readonly name: string;
  readonly parentUuid: string | null;
}

/** A native LLM or tool span handle. */
export interface NativeSpanHandle {
  readonly uuid: string;
  readonly name: string;
  readonly parentUuid: string | null;
}

/** A native scope stack (opaque). */
export interface NativeScopeStack {
  readonly __nativeScopeStack?: never;
}

export interface NativeLlmRequest {
  headers: Record<string, string>;
  content: Json;
}

export interface NativeToolResult {
  result: Json;
  annotation?: Json;
}

export interface NativeAtofExporterConfig {
  type?: 'file';
  outputDirectory?: string;
  filename?: string;
  mode?: 'append' | 'overwrite';
}

export interface NativeAtofExporter {
  readonly path: string;
  register(name: string): void;
  deregister(name: string): boolean;
  forceFlush(): void;
  shutdown(): void;
}

export interface NativePluginHostActivation {
  readonly report: unknown;
  readonly isActive: boolean;
  close(): Promise<void>;
}

type Opt<T> = T | null;

/** Native's `PropagationContext` object. */
export interface NativePropagationContext {
  version: number;
  rootUuid?: string;
  parentUuid: string;
}

/** The functions and classes of `nemo-relay-node` the adapter calls. */
export interface NativeBinding {
  readonly ScopeType: Readonly<Record<string, number>>;

  createScopeStack(): NativeScopeStack;
  withScopeStack<T>(stack: NativeScopeStack, callback: () => T): T;
  /** Top of the current stack: on a fresh stack, its implicit root. */
  getHandle(): NativeScopeHandle;
  /** A stack whose implicit root is a received context's parent (optional: older bindings lack it). */
  createScopeStackFromPropagation?(context: NativePropagationContext): NativeScopeStack;
  /** The current stack's causal parent and root (optional: older bindings lack it). */
  capturePropagationContext?(): NativePropagationContext;

  pushScope(
    name: string,
    scopeType: number,
    parent: Opt<NativeScopeHandle>,
    attributes: Opt<number>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    input: Opt<Json>,
    timestamp: Opt<number>,
  ): NativeScopeHandle;
  popScope(handle: NativeScopeHandle, output: Opt<Json>, timestamp: Opt<number>, metadata: Opt<Json>): void;
  event(
    name: string,
    parent: Opt<NativeScopeHandle>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    timestamp: Opt<number>,
  ): void;

  llmCall(
    name: string,
    request: NativeLlmRequest,
    parent: Opt<NativeScopeHandle>,
    attributes: Opt<number>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    modelName: Opt<string>,
    timestamp: Opt<number>,
  ): NativeSpanHandle;
  llmCallEnd(handle: NativeSpanHandle, response: Json, data: Opt<Json>, metadata: Opt<Json>, timestamp: Opt<number>): void;
  llmCallExecuteAsync(
    name: string,
    request: NativeLlmRequest,
    func: (request: NativeLlmRequest) => Promise<Json>,
    parent: Opt<NativeScopeHandle>,
    attributes: Opt<number>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    modelName: Opt<string>,
  ): Promise<unknown>;

  toolCall(
    name: string,
    args: Json,
    parent: Opt<NativeScopeHandle>,
    attributes: Opt<number>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    toolCallId: Opt<string>,
    timestamp: Opt<number>,
  ): NativeSpanHandle;
  toolCallEnd(handle: NativeSpanHandle, result: NativeToolResult, data: Opt<Json>, metadata: Opt<Json>, timestamp: Opt<number>): void;
  toolCallExecuteAsync(
    name: string,
    args: Json,
    func: (args: Json, signal: AbortSignal) => Promise<NativeToolResult>,
    parent: Opt<NativeScopeHandle>,
    attributes: Opt<number>,
    data: Opt<Json>,
    metadata: Opt<Json>,
    toolCallId: Opt<string>,
  ): Promise<unknown>;

  registerSubscriber(name: string, callback: (event: unknown) => void): void;
  deregisterSubscriber(name: string): boolean;
  flushSubscribers(): Promise<void>;

  AtofExporter: new (config: NativeAtofExporterConfig) => NativeAtofExporter;
  /**
   * Native's own trajectory exporter. The adapter uses only one property of
   * it: `exportJson()` is synchronous and first waits for native's queued
   * delivery, even unregistered, so it is the one way to drain native in a
   * process `exit` listener (optional: a binding without it cannot).
   */
  AtifExporter?: new (sessionId: string, agentName: string, agentVersion: string) => { exportJson(): string };

  initialize(config: Json, additionalPluginsToml?: string | null): Promise<NativePluginHostActivation>;
  validate(config: Json, additionalPluginsToml?: string | null): unknown;
}

/** Every function (and class) of `NativeBinding` that must exist for the adapter to work. */
export const REQUIRED_FEATURES = [
  'createScopeStack',
  'withScopeStack',
  'getHandle',
  'pushScope',
  'popScope',
  'event',
  'llmCall',
  'llmCallEnd',
  'llmCallExecuteAsync',
  'toolCall',
  'toolCallEnd',
  'toolCallExecuteAsync',
  'registerSubscriber',
  'deregisterSubscriber',
  'flushSubscribers',
  'AtofExporter',
  'initialize',
  'validate',
] as const satisfies readonly (keyof NativeBinding)[];

/** A loaded and accepted binding. */
export interface LoadedBinding {
  binding: NativeBinding;
  version: string;
  /** Directory of the package, when loaded from disk. */
  packageDir?: string;
}

/** Where the binding comes from: a module specifier to load, or a module already loaded (with its version). */
export interface LoadBindingOptions {
  /** Module specifier to load. Default `nemo-relay-node`. */
  moduleId?: string;
  /**
   * An already-loaded module object, e.g. from `await import('npm:nemo-relay-node@0.9.2')`
   * under Deno. Skips `require`; `version` must then be given too (the package
   * does not export its `package.json`).
   */
  module?: unknown;
  version?: string;
}

/**
 * Loads and checks the binding. Throws `NativeUnavailableError` (with the
 * original error as `cause`) when it is missing, unloadable, the wrong
 * version, or lacks a required function.
 */
export function loadBinding(options: LoadBindingOptions = {}): LoadedBinding {
  const moduleId = options.moduleId ?? 'nemo-relay-node';
  let mod: unknown;
  let version = options.version;
  let packageDir: string | undefined;
  if (options.module !== undefined) {
    mod = options.module;
  } else {
    // esbuild's CommonJS output empties `import.meta`: there is no place to resolve the package from.
    if (typeof import.meta.url !== 'string') {
      throw unavailable('module-missing', `${moduleId} cannot be located from a CommonJS bundle without import.meta.url (esbuild --format=cjs); bundle as ESM, or keep nemo-relay-hooks external`);
    }
    const require = createRequire(import.meta.url);
    let entry: string;
    try {
      entry = require.resolve(moduleId);
    } catch (error) {
      throw unavailable('module-missing', `${moduleId}, an optional peer dependency, is not installed`, error);
    }
    try {
      mod = require(moduleId);
    } catch (error) {
      throw classifyLoadError(moduleId, error, path.dirname(entry));
    }
    packageDir = path.dirname(entry);
    version ??= readPackageVersion(packageDir);
  }
  if (version === undefined) {
    throw unavailable('version-mismatch', `could not determine the ${moduleId} version; pass { version } with { module }`);
  }
  if (!SUPPORTED_VERSION.test(version)) {
    throw unavailable('version-mismatch', `${moduleId}@${version} is not supported (this adapter needs ${SUPPORTED_VERSION_RANGE})`);
  }
  const missing = missingFeatures(mod);
  if (missing.length > 0) {
    throw unavailable('missing-features', `${moduleId}@${version} lacks ${missing.join(', ')}`);
  }
  probeBinding(moduleId, version, mod as NativeBinding);
  const result: LoadedBinding = { binding: mod as NativeBinding, version };
  if (packageDir !== undefined) result.packageDir = packageDir;
  return result;
}

/**
 * One real call before the binding is accepted. A binding can load and then
 * fail on every call: on Node 20.0-20.15 each call throws
 * `process.getBuiltinModule is not a function` (the package needs Node 24
 * and uses an API added in 20.16). Reading the current scope on a fresh,
 * private scope stack emits nothing and touches no shared state, and fails
 * the same way, so the caller can fall back with the reason.
 */
function probeBinding(moduleId: string, version: string, binding: NativeBinding): void {
  try {
    const handle = binding.withScopeStack(binding.createScopeStack(), () => binding.getHandle());
    if (typeof handle?.uuid !== 'string') throw new Error(`getHandle() returned ${typeof handle}, not a scope handle`);
  } catch (error) {
    throw unavailable(
      'probe-failed',
      `${moduleId}@${version} loaded but its first call failed (${errorMessage(error)}); it needs Node ${nodeNeeded()} (this is ${runtimeVersion()})`,
      error,
    );
  }
}

function nodeNeeded(): string {
  return '>= 20.16, or the engines range of the package (>= 24)';
}

function runtimeVersion(): string {
  const versions = process.versions as Record<string, string | undefined>;
  if (versions.deno !== undefined) return `Deno ${versions.deno}`;
  if (versions.bun !== undefined) return `Bun ${versions.bun}`;
  return `Node ${process.version}`;
}

/** Names in `REQUIRED_FEATURES` that `mod` does not provide as functions. */
function missingFeatures(mod: unknown): string[] {
  if (typeof mod !== 'object' && typeof mod !== 'function') return [...REQUIRED_FEATURES];
  if (mod === null) return [...REQUIRED_FEATURES];
  const record = mod as Record<string, unknown>;
  const missing: string[] = REQUIRED_FEATURES.filter((name) => typeof record[name] !== 'function');
  const scopeType = record.ScopeType as Record<string, unknown> | undefined;
  if (typeof scopeType !== 'object' || scopeType === null || typeof scopeType.Agent !== 'number') missing.push('ScopeType');
  return missing;
}

// package.json is not in the package's "exports" map, so read it from disk.
function readPackageVersion(packageDir: string): string | undefined {
  try {
    const json = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof json.version === 'string' ? json.version : undefined;
  } catch {
    return undefined;
  }
}

function classifyLoadError(moduleId: string, error: unknown, packageDir?: string): NativeUnavailableError {
  // Node appends a multi-line "Require stack" to MODULE_NOT_FOUND messages; the first line is the fact.
  const message = firstLine(errorMessage(error));
  const name = error instanceof Error ? error.name : '';
  const code = (error as { code?: unknown } | null)?.code;
  if (name === 'NotCapable' || name === 'PermissionDenied' || /Requires \w+ access/.test(message)) {
    return unavailable(
      'permission-denied',
      `Deno denied a permission ${moduleId} needs (${message}); run with ` +
        '--allow-ffi --allow-read --allow-env --allow-sys=cpus,networkInterfaces,hostname (or -A)',
      error,
    );
  }
  if (code === 'MODULE_NOT_FOUND' || /Cannot find (?:module|native binding)/.test(message)) {
    return unavailable('binary-missing', binaryMissingMessage(moduleId, message, packageDir), error);
  }
  return unavailable('load-failed', `${moduleId} failed to load: ${message}`, error);
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text : text.slice(0, end)).trim();
}

/** The napi-rs platform package that carries the binary for this machine, e.g. `nemo-relay-node-linux-x64-gnu`. */
export function platformPackageName(moduleId = 'nemo-relay-node'): string | undefined {
  const { platform, arch } = process;
  if (platform === 'linux') return `${moduleId}-linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`;
  if (platform === 'darwin') return `${moduleId}-darwin-${arch}`;
  if (platform === 'win32') return `${moduleId}-win32-${arch}-msvc`;
  return undefined;
}

function isMusl(): boolean {
  try {
    const report = (process.report?.getReport() ?? {}) as { header?: { glibcVersionRuntime?: string } };
    return !report.header?.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/**
 * Why the binary is missing, and the command that fixes it. The usual cause:
 * the platform packages declare `engines.node >=24`, so npm skips the optional
 * dependency on older Node while still installing the main package.
 */
function binaryMissingMessage(moduleId: string, loadMessage: string, packageDir: string | undefined): string {
  const head = `${moduleId} has no prebuilt binary for ${process.platform}-${process.arch}`;
  const platformPackage = platformPackageName(moduleId === 'nemo-relay-node' ? moduleId : 'nemo-relay-node');
  const manifest = packageDir === undefined ? undefined : readManifest(packageDir);
  if (platformPackage === undefined || manifest === undefined || !(platformPackage in (manifest.optionalDependencies ?? {}))) {
    return `${head} (${loadMessage})`;
  }
  const version = manifest.version ?? manifest.optionalDependencies?.[platformPackage] ?? '';
  const install = `npm install ${platformPackage}${version ? `@${version}` : ''}`;
  const engines = manifest.engines?.node;
  const minimum = engines === undefined ? undefined : /^>=\s*(\d+)/.exec(engines)?.[1];
  const nodeMajor = Number(process.versions.node?.split('.')[0]);
  if (minimum !== undefined && Number.isFinite(nodeMajor) && nodeMajor < Number(minimum)) {
    return (
      `${head}: its platform package ${platformPackage} is not installed, because it declares engines node ${engines} ` +
      `and npm skips optional dependencies whose engines do not match Node ${process.versions.node}; ` +
      `fix: "${install}" (installing it by name works on Node 20), or use Node >= ${minimum}`
    );
  }
  return (
    `${head}: its platform package ${platformPackage} is not installed ` +
    `(npm skipped the optional dependency, e.g. --omit=optional or a lockfile made on another platform); fix: "${install}"`
  );
}

interface Manifest {
  version?: string;
  engines?: { node?: string };
  optionalDependencies?: Record<string, string>;
}

function readManifest(packageDir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

function unavailable(reason: NativeUnavailableReason, message: string, cause?: unknown): NativeUnavailableError {
  return cause === undefined
    ? new NativeUnavailableError(reason, message)
    : new NativeUnavailableError(reason, message, { cause });
}
