/**
 * Typed errors of the hook core, one class per failure kind, each with a
 * literal `name`.
 *
 * Two families:
 * - Misuse of the API (an unknown hook name or middleware kind, a callback
 *   that is not a function) throws a `TypeError` subclass, because that is
 *   what it is, and it happens at wiring time, never per event.
 * - Runtime outcomes of the middleware chain extend {@link HookError}.
 *
 * Callback failures are never errors the host sees: they go to the logger.
 *
 * @module
 */

import { HOOK_NAMES, MIDDLEWARE_KINDS } from './names.ts';

/** Base class of the runtime errors raised by the hook core. */
export class HookError extends Error {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name: string = 'HookError';
}

/** A hook name that is not one of `HOOK_NAMES`; the message lists the valid names. */
export class UnknownHookError extends TypeError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'UnknownHookError' as const;
  /** The name that was given. */
  readonly hookName: unknown;
  /** Every valid hook name. */
  readonly validNames: readonly string[] = HOOK_NAMES;

  /** Builds the error for `hookName`. */
  constructor(hookName: unknown) {
    super(`Unknown hook ${describe(hookName)}; valid hook names are: ${HOOK_NAMES.join(', ')}`);
    this.hookName = hookName;
  }
}

/**
 * A middleware kind that is unknown, or valid but not accepted by the method
 * it was passed to (e.g. an execution kind given to `applyRequest`).
 */
export class InvalidMiddlewareKindError extends TypeError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'InvalidMiddlewareKindError' as const;
  /** The kind that was given. */
  readonly kind: unknown;
  /** The kinds the method accepts. */
  readonly validKinds: readonly string[];

  /** Builds the error; `method` names the call that refused the kind. */
  constructor(kind: unknown, validKinds: readonly string[] = MIDDLEWARE_KINDS, method?: string) {
    const where = method === undefined ? '' : `${method}: `;
    super(`${where}invalid middleware kind ${describe(kind)}; valid kinds are: ${validKinds.join(', ')}`);
    this.kind = kind;
    this.validKinds = validKinds;
  }
}

/** A hook callback or middleware that is not a function. */
export class InvalidCallbackError extends TypeError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'InvalidCallbackError' as const;

  /** Builds the error for `what` (e.g. "callback") given `value`. */
  constructor(what: string, value: unknown) {
    super(`${what} must be a function, got ${value === null ? 'null' : typeof value}`);
  }
}

/**
 * An adapter's entry function (`wrapClaudeAgentSdk`, `instrumentAiSdk`,
 * `instrumentMcpClient`, …) given an argument it cannot work with: no
 * `HookRegistry` (or the plugin in its place), an SDK without its `query`,
 * an option's value none of its own. Thrown as the adapter is wired, not at
 * the framework's first call.
 */
export class InvalidArgumentError extends TypeError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'InvalidArgumentError' as const;
  /** The function that refused it, e.g. `wrapClaudeAgentSdk`. */
  readonly functionName: string;
  /** Which argument, e.g. `the second argument (hooks)` or `options.sessionScope`. */
  readonly argument: string;
  /** What it takes. */
  readonly expected: string;

  /** Builds the error; `got` describes the value given when its type says too little (`the NeMo Relay plugin`). */
  constructor(functionName: string, argument: string, expected: string, value: unknown, got?: string) {
    super(`${functionName}: ${argument} must be ${expected}; got ${got ?? describeValue(value)}`);
    this.functionName = functionName;
    this.argument = argument;
    this.expected = expected;
  }
}

/**
 * An execution middleware called `next` a second time. `next` is single-use
 * per middleware frame: calling it again would run the provider or tool
 * again, so it is a contract violation, not a retry.
 */
export class NextCalledTwiceError extends HookError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'NextCalledTwiceError' as const;
  /** The middleware kind, e.g. `llm_execution`. */
  readonly kind: string;
  /** The name of the middleware that called `next` twice. */
  readonly middlewareName: string;

  /** Builds the error for the middleware `middlewareName` of `kind`. */
  constructor(kind: string, middlewareName: string) {
    super(
      `${kind} middleware "${middlewareName}" called next() more than once; downstream execution is single-use`,
    );
    this.kind = kind;
    this.middlewareName = middlewareName;
  }
}

const executionBlockedBrand = Symbol.for('nemo-relay-hooks.ExecutionBlocked');

/** Options of `ExecutionBlocked`. */
export interface ExecutionBlockedOptions {
  /**
   * Structured data for the caller. By convention it may carry `checked_by`
   * (who decided; filled with the middleware's name when missing),
   * `decision` (e.g. `"block"`) and `chain`.
   */
  metadata?: Record<string, unknown>;
  /** The error that led to the block, if any. */
  cause?: unknown;
}

/**
 * Thrown by an execution middleware to stop the provider or tool call on
 * purpose. Unlike any other middleware error it is not skipped over
 * (fail-open): it propagates to the host.
 *
 * @example
 * registry.use('llm_execution', (payload, next) => {
 *   if (overBudget(payload.session_id)) {
 *     throw new ExecutionBlocked('Session cost budget exceeded', { metadata: { budget_usd: 5 } });
 *   }
 *   return next();
 * }, { name: 'budget_guard' });
 */
export class ExecutionBlocked extends HookError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'ExecutionBlocked' as const;
  /** Why the call was blocked, for the host and the trace. */
  readonly reason: string;
  /** Structured data for the caller (`checked_by`, `decision`, ...). */
  readonly metadata: Record<string, unknown>;

  /** Blocks the call for `reason`. */
  constructor(reason: string, options: ExecutionBlockedOptions = {}) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.metadata = options.metadata ?? {};
    Object.defineProperty(this, executionBlockedBrand, { value: true });
  }
}

/**
 * True for an {@link ExecutionBlocked}, including one created by another
 * copy of this package (e.g. `dist/` and `src/` loaded side by side), where
 * `instanceof` would say no.
 */
export function isExecutionBlocked(value: unknown): value is ExecutionBlocked {
  return (
    value instanceof ExecutionBlocked ||
    (typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[executionBlockedBrand] === true)
  );
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `(${value === null ? 'null' : typeof value})`;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
