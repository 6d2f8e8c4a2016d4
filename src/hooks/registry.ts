/**
 * `HookRegistry`: observer hooks and middleware for one agent host.
 *
 * Hosts emit the 15 lifecycle hooks and route requests and real calls
 * through middleware; plugins subscribe. The contract that shapes every
 * method: **nobody subscribed means nothing happens**. Each check on the hot
 * path is one map lookup and one comparison, with no allocation, no closure,
 * no copy and no thunk call:
 *
 * - `emit(name, () => payload)` returns before calling the thunk;
 * - `applyRequest(kind, request)` returns `request` itself;
 * - `execute(kind, payload, terminal)` returns `terminal(payload)`.
 *
 * When somebody is subscribed, telemetry still never breaks the host: a
 * callback's throw or rejected promise goes to the logger, and other
 * callbacks still run. A payload the host could not build (a thunk that
 * threw, a value that is not an object) is logged and counted per hook, so
 * a recorder can report what its subscribers never saw: `payloadFailures()`.
 *
 * Subscriber lists are copy-on-write: `on`/`use` and unsubscribing replace
 * the array, and a running emit or chain keeps the array it started with. A
 * callback removed during an emit therefore still receives that emit, one
 * added during it does not, and no other callback is skipped or called twice.
 *
 * Misuse fails loudly instead: an unknown hook name or middleware kind throws
 * a `TypeError` listing the valid ones, from every method. On the hot path
 * this costs nothing, because known-but-empty entries are `null` and only an
 * unknown name reads `undefined`.
 *
 * @example
 * const hooks = new HookRegistry();
 * const off = hooks.on('pre_tool_call', (p) => console.log(p.tool_name, p.tool_call_id));
 * hooks.emit('pre_tool_call', () => ({ ...ids, tool_name: 'read_file', args }));
 * off();
 *
 * @module
 */

import { runExecutionChain, type ChainEntry } from './chain.ts';
import { InvalidCallbackError, InvalidMiddlewareKindError, UnknownHookError } from './errors.ts';
import { adaptLogger, safeLog, type Logger, type LoggerLike } from '../shared/logger.ts';
import type {
  ExecutionPayloads,
  MiddlewareContext,
  MiddlewareFunctions,
  UseOptions,
} from './middleware.ts';
import {
  EXECUTION_MIDDLEWARE_KINDS,
  HOOK_NAMES,
  MIDDLEWARE_KINDS,
  REQUEST_MIDDLEWARE_KINDS,
  type ExecutionMiddlewareKind,
  type HookName,
  type MiddlewareKind,
  type RequestMiddlewareKind,
} from './names.ts';
import type { HookPayloads, MiddlewareTraceEntry, Observed } from './payloads.ts';
import { runRequestMiddleware, type RequestEntry } from './request.ts';
import { stampMiddleware, stampObserver } from './stamp.ts';
import { callbackName, isThenable } from './thenable.ts';
import { mergeTraceContexts, type TraceContext, type TraceContextProvider, type TraceContextRequest } from './trace-context.ts';

/** How long `traceContext()` waits for its providers (a backend still loading answers within it). */
const TRACE_CONTEXT_TIMEOUT_MS = 5_000;

/** A hook subscriber. Its return value is ignored; a rejected promise is logged. */
export type HookCallback<K extends HookName> = (payload: Observed<HookPayloads[K]>) => unknown;

/** A payload, or a function building it that runs only if somebody subscribed. */
export type PayloadOrThunk<P> = P | (() => P);

/**
 * Emits whose payload failed, per hook, since the registry was created.
 * Only hooks that failed at least once appear.
 */
export interface PayloadFailures {
  /** The payload function threw: the hook was delivered to nobody (the event is lost). */
  thunkThrew: Partial<Record<HookName, number>>;
  /** The payload (or what the function returned) was not an object: an empty payload was delivered instead. */
  notAnObject: Partial<Record<HookName, number>>;
}

/** Said with each payload failure: only the first per hook and reason is a warning. */
const FURTHER_PAYLOAD_FAILURES = ' (further ones of this hook: debug, counted in payloadFailures())';

/** Options of `HookRegistry`. */
export interface HookRegistryOptions {
  /** Where callback and middleware failures are reported. Default: `consoleLogger`. */
  logger?: LoggerLike;
}

interface Entry {
  readonly fn: (...args: never[]) => unknown;
  readonly name: string;
}

/**
 * Subscribers by name. `null`: a known name with nobody subscribed;
 * `undefined` (a missing key): an unknown name. The subset of `Map` the
 * registry uses, so that each runtime gets the store it looks up fastest.
 */
interface Table {
  get(key: string): readonly Entry[] | null | undefined;
  set(key: string, value: readonly Entry[] | null): unknown;
  keys(): Iterable<string>;
}

/**
 * A `Table` over a null-prototype object, for Bun. JavaScriptCore answers a
 * constant key from an inline cache on an object but hashes it in a `Map`,
 * so an agent loop's hook sites cost less with this than with a `Map`. V8
 * goes the other way: keyed loads with many names on an object cost more
 * than a `Map.get`, so Node and Deno keep the `Map` (both measured:
 * bench/RESULTS.md, "Figures behind the code"). One kind per process keeps every call site
 * monomorphic. With no prototype, `__proto__` or `toString` are unknown names
 * like any other.
 */
class ObjectTable implements Table {
  readonly #values: { [key: string]: readonly Entry[] | null | undefined } = Object.create(null);

  constructor(keys: readonly string[]) {
    for (const key of keys) this.#values[key] = null;
  }

  get(key: string): readonly Entry[] | null | undefined {
    return this.#values[key];
  }

  set(key: string, value: readonly Entry[] | null): void {
    this.#values[key] = value;
  }

  keys(): Iterable<string> {
    return Object.keys(this.#values);
  }
}

const OBJECT_TABLES = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';

const emptyTrace: readonly MiddlewareTraceEntry[] = Object.freeze([]);

type Deliver = (name: string, entries: readonly Entry[], payload: unknown) => void;

/** Sets a bound hook's subscribers and `active`; assigned inside `BoundHook`, the only code that may. */
let refreshBound: (bound: BoundHook<HookName>, entries: readonly Entry[] | null) => void;

/**
 * One hook name bound to its registry, for the hottest call sites. `active`
 * is a plain field the registry rewrites whenever the hook's subscribers
 * change, so an unsubscribed site costs one property read, less than the
 * name lookup `emit` needs (the same idea as `diagnostics_channel`'s
 * `hasSubscribers`):
 *
 * ```ts
 * const preTool = hooks.hook('pre_tool_call');
 * // in the loop:
 * if (preTool.active) preTool.emit({ ...ids, tool_name, args });
 * ```
 *
 * `emit` behaves exactly like `registry.emit(name, payload)`, thunks included.
 */
export class BoundHook<K extends HookName> {
  /** True while the hook has at least one subscriber. Read it before building a payload. */
  readonly active: boolean = false;
  /** The hook this object emits. */
  readonly name: K;
  #entries: readonly Entry[] | null = null;
  readonly #deliver: Deliver;

  static {
    refreshBound = (bound, entries) => {
      bound.#entries = entries;
      (bound as { active: boolean }).active = entries !== null;
    };
  }

  /** @internal Created by `HookRegistry.hook()`, one per name and registry. */
  constructor(name: K, deliver: Deliver) {
    this.name = name;
    this.#deliver = deliver;
  }

  /** Delivers a payload (or a thunk's result) to the hook's subscribers; nothing when `active` is false. */
  emit(payload: PayloadOrThunk<HookPayloads[K]>): void {
    const entries = this.#entries;
    if (entries === null) return;
    this.#deliver(this.name, entries, payload);
  }
}

/** Where hosts emit hooks and run middleware, and where observers subscribe. */
export class HookRegistry {
  readonly #logger: Logger;
  readonly #hooks: Table = tableOf(HOOK_NAMES);
  readonly #requestMiddleware: Table = tableOf(REQUEST_MIDDLEWARE_KINDS);
  readonly #executionMiddleware: Table = tableOf(EXECUTION_MIDDLEWARE_KINDS);
  readonly #traces = new WeakMap<object, readonly MiddlewareTraceEntry[]>();
  // Bumped only on the failure branches of #deliver: the success path never touches them.
  readonly #thunkThrew: { [hook: string]: number } = Object.create(null);
  readonly #notAnObject: { [hook: string]: number } = Object.create(null);
  /** `<reason>:<hook>` of the payload failures already warned about: the next ones of each go to debug (they are counted). */
  readonly #payloadFailuresWarned = new Set<string>();
  #traceContextProviders: readonly Entry[] = [];
  readonly #bound = new Map<string, BoundHook<HookName>>();
  readonly #refreshBound = (key: string, entries: readonly Entry[] | null): void => {
    const bound = this.#bound.get(key);
    if (bound !== undefined) refreshBound(bound, entries);
  };

  /** An empty registry. */
  constructor(options: HookRegistryOptions = {}) {
    this.#logger = adaptLogger(options.logger);
  }

  // ------------------------------------------------------------ observer hooks

  /**
   * Subscribes `callback` to `name`. Returns an idempotent unsubscribe
   * function that removes exactly this registration.
   *
   * @throws {UnknownHookError} `name` is not one of `HOOK_NAMES`.
   * @throws {InvalidCallbackError} `callback` is not a function.
   */
  on<K extends HookName>(name: K, callback: HookCallback<K>): () => void {
    if (this.#hooks.get(name) === undefined) throw new UnknownHookError(name);
    if (typeof callback !== 'function') throw new InvalidCallbackError(`Callback for hook "${name}"`, callback);
    return add(this.#hooks, name, { fn: callback, name: callbackName(callback) }, this.#refreshBound);
  }

  /**
   * True when `name` has at least one subscriber. Use it to gate work that a
   * thunk cannot defer.
   *
   * @throws {UnknownHookError} `name` is not one of `HOOK_NAMES`.
   */
  has(name: HookName): boolean {
    const entries = this.#hooks.get(name);
    if (entries === null) return false;
    if (entries === undefined) throw new UnknownHookError(name);
    return true;
  }

  /**
   * True when `callback` itself is subscribed to `name` (one `on()` of it
   * not yet undone, nor removed by `clear()`). For a subscriber checking that
   * its own subscription is still in place, such as a plugin registered a
   * second time; not for the hot path.
   *
   * @throws {UnknownHookError} `name` is not one of `HOOK_NAMES`.
   */
  subscribed(name: HookName, callback: (...args: never[]) => unknown): boolean {
    const entries = this.#hooks.get(name);
    if (entries === undefined) throw new UnknownHookError(name);
    return entries !== null && entries.some((entry) => entry.fn === callback);
  }

  /**
   * The hook `name` bound to this registry: `hook.active` is true while it
   * has subscribers, and `hook.emit(payload)` delivers like `emit(name, ...)`.
   * The same object is returned for a name every time, so a host can keep it
   * in a module constant.
   *
   * @throws {UnknownHookError} `name` is not one of `HOOK_NAMES`.
   */
  hook<K extends HookName>(name: K): BoundHook<K> {
    const existing = this.#bound.get(name);
    if (existing !== undefined) return existing as unknown as BoundHook<K>;
    const entries = this.#hooks.get(name);
    if (entries === undefined) throw new UnknownHookError(name);
    const bound = new BoundHook(name, (hookName, current, payload) => this.#deliver(hookName, current, payload));
    refreshBound(bound as unknown as BoundHook<HookName>, entries);
    this.#bound.set(name, bound as unknown as BoundHook<HookName>);
    return bound;
  }

  /**
   * Delivers a payload to every subscriber of `name`, synchronously and in
   * registration order.
   *
   * With no subscriber it returns at once: a thunk is never called. Otherwise
   * the thunk is called once, `telemetry_schema_version` is stamped onto the
   * payload object itself unless present (payloads pass by reference; a
   * frozen payload is copied instead), and each callback gets that same
   * object. Callback failures, sync or async, go to the logger; a thunk that
   * throws is logged and the event is dropped, since there is nothing to
   * deliver, and counted in {@link payloadFailures}. Async callbacks are not
   * awaited.
   *
   * @throws {UnknownHookError} `name` is not one of `HOOK_NAMES`. Nothing else escapes.
   */
  emit<K extends HookName>(name: K, payload: PayloadOrThunk<HookPayloads[K]>): void {
    const entries = this.#hooks.get(name);
    if (entries === null) return;
    if (entries === undefined) throw new UnknownHookError(name);
    this.#deliver(name, entries, payload);
  }

  #deliver(name: string, entries: readonly Entry[], payloadOrThunk: unknown): void {
    let payload: unknown = payloadOrThunk;
    if (typeof payloadOrThunk === 'function') {
      try {
        payload = (payloadOrThunk as () => unknown)();
      } catch (error) {
        this.#thunkThrew[name] = (this.#thunkThrew[name] ?? 0) + 1;
        safeLog(this.#logger, this.#payloadFailureLevel('thunkThrew', name), `hook "${name}": the payload function threw; event not delivered${FURTHER_PAYLOAD_FAILURES}`, error);
        return;
      }
    }
    if (typeof payload !== 'object' || payload === null) {
      this.#notAnObject[name] = (this.#notAnObject[name] ?? 0) + 1;
      safeLog(this.#logger, this.#payloadFailureLevel('notAnObject', name), `hook "${name}": payload is not an object (${payload === null ? 'null' : typeof payload}); delivering an empty payload${FURTHER_PAYLOAD_FAILURES}`);
      payload = {};
    }
    const stamped = stampObserver(payload as object);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      try {
        const result = (entry.fn as (payload: unknown) => unknown)(stamped);
        if (result !== undefined && isThenable(result)) this.#watch(name, entry, result);
      } catch (error) {
        this.#reportCallbackFailure(name, entry, error);
      }
    }
  }

  /**
   * How many emits, per hook, had a payload that could not be delivered as
   * given, since the registry was created: `thunkThrew` (delivered to
   * nobody) and `notAnObject` (delivered as `{}`). A subscriber never sees
   * the first kind, so this is the only place it is counted; the NeMo Relay
   * plugin adds both to its `status()`. A fresh copy on each call.
   */
  payloadFailures(): PayloadFailures {
    return { thunkThrew: { ...this.#thunkThrew }, notAnObject: { ...this.#notAnObject } };
  }

  #watch(name: string, entry: Entry, result: PromiseLike<unknown>): void {
    Promise.resolve(result).then(undefined, (error: unknown) => this.#reportCallbackFailure(name, entry, error));
  }

  /** A payload failure is a warning the first time per hook and reason, then debug: a call site failing on every emit would flood the log. */
  #payloadFailureLevel(reason: keyof PayloadFailures, name: string): 'warn' | 'debug' {
    const key = `${reason}:${name}`;
    if (this.#payloadFailuresWarned.has(key)) return 'debug';
    this.#payloadFailuresWarned.add(key);
    return 'warn';
  }

  #reportCallbackFailure(name: string, entry: Entry, error: unknown): void {
    safeLog(this.#logger, 'warn', `hook "${name}" callback "${entry.name}" failed`, error);
  }

  // ---------------------------------------------------------------- middleware

  /**
   * Registers middleware of `kind`. Returns an idempotent unsubscribe function.
   *
   * @throws {InvalidMiddlewareKindError} `kind` is not one of `MIDDLEWARE_KINDS`.
   * @throws {InvalidCallbackError} `middleware` is not a function.
   */
  use<K extends MiddlewareKind>(kind: K, middleware: MiddlewareFunctions[K], options: UseOptions = {}): () => void {
    const table = this.#middlewareTable(kind);
    if (table === undefined) throw new InvalidMiddlewareKindError(kind, MIDDLEWARE_KINDS, 'use');
    if (typeof middleware !== 'function') throw new InvalidCallbackError(`Middleware for "${kind}"`, middleware);
    const name = typeof options.name === 'string' && options.name !== '' ? options.name : callbackName(middleware);
    return add(table, kind, { fn: middleware, name });
  }

  /**
   * True when middleware of `kind` is registered.
   *
   * @throws {InvalidMiddlewareKindError} `kind` is not one of `MIDDLEWARE_KINDS`.
   */
  hasMiddleware(kind: MiddlewareKind): boolean {
    const table = this.#middlewareTable(kind);
    if (table === undefined) throw new InvalidMiddlewareKindError(kind, MIDDLEWARE_KINDS, 'hasMiddleware');
    return table.get(kind) != null;
  }

  /**
   * Runs request middleware over `payload` (the LLM request, or the tool
   * arguments) and returns the effective payload.
   *
   * Returns `payload` itself (same reference, untouched) when no middleware
   * of `kind` is registered, and also when middleware ran but none replaced
   * it. Otherwise returns a new object: the last rewrite. The host's object
   * is never modified. `context` (ids, `tool_name`, ...) is spread into
   * what each middleware receives. Middleware failures are logged and skipped.
   *
   * The rewrite trace for the hook payloads' `middleware_trace` is available
   * from {@link requestTrace}, so the no-middleware path allocates no result
   * object.
   *
   * @throws {InvalidMiddlewareKindError} `kind` is not a request kind.
   */
  applyRequest<T extends object>(kind: RequestMiddlewareKind, payload: T, context?: MiddlewareContext): T {
    const entries = this.#requestMiddleware.get(kind);
    if (entries === null) return payload;
    if (entries === undefined) throw new InvalidMiddlewareKindError(kind, REQUEST_MIDDLEWARE_KINDS, 'applyRequest');
    const result = runRequestMiddleware(kind, entries as readonly RequestEntry[], payload, context, this.#logger);
    if (result.trace.length === 0) return payload;
    this.#traces.set(result.payload, Object.freeze(result.trace.map((entry) => Object.freeze(entry))));
    return result.payload as T;
  }

  /**
   * The `middleware_trace` of a payload returned by {@link applyRequest}: one
   * entry per rewrite, in order. Empty (a shared frozen array) for anything
   * that was not produced by a rewrite, including the host's own object.
   */
  requestTrace(payload: object): readonly MiddlewareTraceEntry[] {
    return this.#traces.get(payload) ?? emptyTrace;
  }

  /**
   * Runs the real call (`terminal`) through execution middleware.
   *
   * Hosts pass `{ ...ids, request }` for `llm_execution` and
   * `{ ...ids, tool_name, args }` for `tool_execution`. With no middleware
   * this is exactly `terminal(payload)`: no stamping, no chain, no closure.
   * Otherwise the payload is stamped with both schema markers and runs the
   * chain; see `chain.ts` for the error contract (single-use `next`,
   * fail-open skip, original downstream errors, `ExecutionBlocked`).
   *
   * The result is whatever the chain returns: synchronous while every step
   * is, a promise as soon as one step is async. Await it unless you know all
   * middleware is synchronous.
   *
   * @throws {InvalidMiddlewareKindError} `kind` is not an execution kind.
   */
  execute<K extends ExecutionMiddlewareKind, P extends ExecutionPayloads[K], R>(
    kind: K,
    payload: P,
    terminal: (payload: P) => R,
  ): R | Promise<Awaited<R>> {
    const entries = this.#executionMiddleware.get(kind);
    if (entries === null) return terminal(payload);
    if (entries === undefined) throw new InvalidMiddlewareKindError(kind, EXECUTION_MIDDLEWARE_KINDS, 'execute');
    return runExecutionChain(
      kind,
      entries as readonly ChainEntry[],
      terminal,
      stampMiddleware(payload),
      this.#logger,
    ) as R | Promise<Awaited<R>>;
  }

  // ---------------------------------------------------------------- trace context

  /**
   * Registers what answers `traceContext()` (a recorder such as the NeMo
   * Relay plugin does it when registered). Returns an idempotent remover.
   *
   * @throws {InvalidCallbackError} `provider` is not a function.
   */
  provideTraceContext(provider: TraceContextProvider): () => void {
    if (typeof provider !== 'function') throw new InvalidCallbackError('Trace context provider', provider);
    const entry: Entry = { fn: provider, name: callbackName(provider) };
    this.#traceContextProviders = [...this.#traceContextProviders, entry];
    let registered = true;
    return () => {
      if (!registered) return;
      registered = false;
      this.#traceContextProviders = this.#traceContextProviders.filter((candidate) => candidate !== entry);
    };
  }

  /**
   * What the recorders know about a session or one of its open tool calls,
   * for work that continues it in another process: the W3C `traceparent`,
   * NeMo Relay's propagation context, and where the session's trajectory is
   * written. `{}` when nobody records. Never rejects, and settles within
   * `timeoutMs` (default 5 s): a provider's failure is logged and skipped.
   */
  async traceContext(request: TraceContextRequest, options: { timeoutMs?: number } = {}): Promise<TraceContext> {
    const providers = this.#traceContextProviders;
    if (providers.length === 0) return {};
    const answers = providers.map((entry) => {
      try {
        const answer = (entry.fn as TraceContextProvider)(request);
        return isThenable(answer) ? Promise.resolve(answer).catch((error: unknown) => this.#traceContextFailure(entry, error)) : answer;
      } catch (error) {
        return this.#traceContextFailure(entry, error);
      }
    });
    if (!answers.some(isThenable)) return mergeTraceContexts(answers);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, options.timeoutMs ?? TRACE_CONTEXT_TIMEOUT_MS));
      (timer as { unref?: () => void }).unref?.();
    });
    try {
      const settled = await Promise.race([Promise.all(answers), timeout]);
      if (settled === 'timeout') {
        safeLog(this.#logger, 'warn', 'traceContext: a provider did not answer in time; the call goes out without its trace context');
        return {};
      }
      return mergeTraceContexts(settled);
    } finally {
      clearTimeout(timer);
    }
  }

  #traceContextFailure(entry: Entry, error: unknown): undefined {
    safeLog(this.#logger, 'warn', `trace context provider "${entry.name}" failed`, error);
    return undefined;
  }

  /** Removes every hook subscriber, middleware and trace context provider (e.g. between tests or on plugin unload). */
  clear(): void {
    this.#traceContextProviders = [];
    for (const table of [this.#hooks, this.#requestMiddleware, this.#executionMiddleware]) {
      for (const key of table.keys()) table.set(key, null);
    }
    for (const key of this.#bound.keys()) this.#refreshBound(key, null);
  }

  #middlewareTable(kind: unknown): Table | undefined {
    if (typeof kind !== 'string') return undefined;
    if (this.#requestMiddleware.get(kind) !== undefined) return this.#requestMiddleware;
    if (this.#executionMiddleware.get(kind) !== undefined) return this.#executionMiddleware;
    return undefined;
  }
}

function tableOf(keys: readonly string[]): Table {
  return OBJECT_TABLES ? new ObjectTable(keys) : new Map(keys.map((key) => [key, null]));
}

/** Appends `entry` copy-on-write and returns its idempotent remover. */
function add(table: Table, key: string, entry: Entry, onChange?: (key: string, entries: readonly Entry[] | null) => void): () => void {
  const current = table.get(key);
  const next = current == null ? [entry] : [...current, entry];
  table.set(key, next);
  onChange?.(key, next);
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    const entries = table.get(key);
    if (entries == null) return;
    const remaining = entries.filter((candidate) => candidate !== entry);
    const next = remaining.length === 0 ? null : remaining;
    table.set(key, next);
    onChange?.(key, next);
  };
}
