/**
 * The check every adapter's entry function makes of what it was given, as it
 * is called: the hooks it records into, and the options every adapter
 * shares. A slip (the plugin where the registry goes, no registry, an
 * option's value none of its own) throws an `InvalidArgumentError` naming the
 * function, the argument and what it takes, at the line that wired the
 * adapter; it would otherwise pass here and throw a bare `TypeError` into the
 * framework at its first call, or be taken silently as the default.
 *
 * @module
 */

import { InvalidArgumentError } from '../../hooks/index.ts';

/**
 * Throws unless `hooks` is a `HookRegistry` (by its methods: one from another copy of the package is one too) and
 * `options` is undefined or an object whose shared options (`sessionId`, `sessionScope`, `platform`, `logger`) hold
 * values they take. `hooksArgument`: where the entry takes the registry ("the first argument", "the second argument").
 */
export function checkAdapterArguments(entry: string, hooksArgument: string, hooks: unknown, options: unknown): void {
  checkHooks(entry, hooksArgument, hooks);
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(entry, 'options', 'an object of options, or nothing', options);
  }
  const given = options as Record<string, unknown>;
  if ('sessionScope' in given && given.sessionScope !== undefined && given.sessionScope !== 'run' && given.sessionScope !== 'host') {
    throw new InvalidArgumentError(entry, 'options.sessionScope', "'run' or 'host'", given.sessionScope);
  }
  if (given.sessionId !== undefined && typeof given.sessionId !== 'string' && typeof given.sessionId !== 'function') {
    throw new InvalidArgumentError(entry, 'options.sessionId', 'a string, or a function of the run returning one', given.sessionId);
  }
  if (given.platform !== undefined && typeof given.platform !== 'string') {
    throw new InvalidArgumentError(entry, 'options.platform', 'a string', given.platform);
  }
  if (given.logger !== undefined && typeof given.logger !== 'function' && (typeof given.logger !== 'object' || given.logger === null)) {
    throw new InvalidArgumentError(entry, 'options.logger', 'a logger (an object with debug, info, warn or error, or a function)', given.logger);
  }
}

function checkHooks(entry: string, hooksArgument: string, hooks: unknown): void {
  const methods = typeof hooks === 'object' && hooks !== null ? (hooks as Record<string, unknown>) : undefined;
  if (methods !== undefined && typeof methods.has === 'function' && typeof methods.emit === 'function' && typeof methods.on === 'function') return;
  // The plugin sits next to the registry in every example: `createNemoRelayPlugin()`, then `plugin.register(hooks)`.
  const plugin = methods !== undefined && typeof methods.register === 'function' && typeof methods.shutdown === 'function';
  const expected = plugin ? 'the HookRegistry the plugin listens on (the one given to plugin.register(hooks)), not the plugin' : 'the HookRegistry to record into (new HookRegistry(), given to plugin.register(hooks))';
  throw new InvalidArgumentError(entry, `${hooksArgument} (hooks)`, expected, hooks, plugin ? 'the NeMo Relay plugin' : undefined);
}
