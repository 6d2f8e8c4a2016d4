/**
 * The one rule of every MCP instrumentation (server, client, transport) for being called twice on one object: the
 * object is instrumented once, with the first hooks. A second call with the same hooks does nothing; one with other
 * hooks does nothing but warn, since a call has one session and a request names one caller: the way to feed two
 * plugins is to register both on one `HookRegistry`. The mark is a `Symbol.for` property on the object itself, so a
 * second copy of this package in the program sees it too.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';
import { consoleLogger, safeLog, type Logger } from '../../shared/logger.ts';

/**
 * True when `target` was instrumented before under `mark` (the caller then returns it as it is); when that was with
 * other hooks than `hooks`, warns that `what` (`instrumentMcpServer`) keeps recording `into` those.
 */
export function instrumentedBefore(target: object, mark: symbol, hooks: HookRegistry, logger: Logger | undefined, what: string, into: string): boolean {
  const first = (target as { [key: symbol]: unknown })[mark];
  if (first === undefined) return false;
  if (first !== hooks) safeLog(logger ?? consoleLogger, 'warn', `mcp adapter: ${what} was called again with other hooks; ${into} (register every plugin on that one HookRegistry)`);
  return true;
}

/** Marks `target` as instrumented under `mark` with `hooks` (see `instrumentedBefore`). */
export function markInstrumented(target: object, mark: symbol, hooks: HookRegistry): void {
  Object.defineProperty(target, mark, { value: hooks, configurable: true });
}
