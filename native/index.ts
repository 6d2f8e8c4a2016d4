/**
 * `nemo-relay-hooks/native`: the relay backend over the `nemo-relay-node`
 * napi binding (an optional peer dependency, verified with 0.9.x).
 *
 * ```ts
 * import { loadNativeRelay, NativeUnavailableError } from 'nemo-relay-hooks/native';
 * try {
 *   const relay = loadNativeRelay({ logger: console });
 * } catch (error) {
 *   if (error instanceof NativeUnavailableError) console.warn(error.reason, error.message);
 * }
 * ```
 *
 * Nothing in `src/` imports this module statically; `src/backends/select.ts`
 * imports it dynamically when native is chosen, and the binding itself is
 * required lazily inside `loadNativeRelay`.
 *
 * Where payload values end up: every payload goes through `toJson()`; the
 * table in `src/shared/json.ts` lists each kind of value and what it becomes.
 * On top of it: nesting deeper than 64 levels becomes `"[MaxDepth]"` (native
 * crashes on very deep values), LLM header values become strings, and keys
 * come out sorted (native re-serializes everything).
 *
 * Runtimes: Node loads it directly. Bun loads it too. Deno needs
 * `--allow-ffi --allow-read --allow-env --allow-sys=cpus,networkInterfaces,hostname`
 * (or `-A`); without them loading fails with reason `permission-denied`.
 *
 * @module
 */

import { adaptLogger, type Logger, type LoggerLike } from '../src/backends/native-surface.ts';
import { loadBinding, type LoadBindingOptions } from './binding.ts';
import { NativeRelay } from './relay.ts';

// The errors every backend throws (RelayError, InvalidPluginConfigError, ...) are in nemo-relay-hooks/backend.
export { DynamicPluginError, NativeRelayError, NativeUnavailableError, type NativeUnavailableReason } from './errors.ts';
export { SUPPORTED_VERSION_RANGE } from './binding.ts';
export type { LoadBindingOptions } from './binding.ts';
export { AMBIENT_CONFIG_INHERITED, DYNAMIC_ENVIRONMENT_IGNORED, pluginHostBusy } from './plugins-toml-activation.ts';
export type { NativeRelay, NativeRelayStats } from './relay.ts';

/** Options of `loadNativeRelay`. */
export interface LoadNativeRelayOptions extends LoadBindingOptions {
  /** Where adapter failures are reported (once per operation at `warn`, then `debug`). Default: `consoleLogger`. */
  logger?: LoggerLike;
  /**
   * Let native's plugin host read the ambient user `plugins.toml`
   * (`$XDG_CONFIG_HOME/nemo-relay/plugins.toml` or `~/.config/...`). Default
   * `false`: only the document you pass is activated, and the system file
   * `/etc/nemo-relay/plugins.toml` (which cannot be excluded) is reported as
   * a warning diagnostic when present.
   */
  allowConfigDiscovery?: boolean;
}

/**
 * Loads `nemo-relay-node` and returns a `RelayBackend` over it.
 * Throws `NativeUnavailableError` (with `reason` and the load error as
 * `cause`) when the binding is missing, unloadable, not 0.9.x, or incomplete.
 */
export function loadNativeRelay(options: LoadNativeRelayOptions = {}): NativeRelay {
  const loaded = loadBinding(options);
  return new NativeRelay(loaded, {
    logger: adaptLogger(options.logger),
    allowConfigDiscovery: options.allowConfigDiscovery === true,
  });
}
