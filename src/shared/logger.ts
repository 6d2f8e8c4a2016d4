/**
 * The logger seam shared by the hook registry and the plugin.
 *
 * Telemetry must never throw into the host, so failures are reported here
 * instead. Any object with these four methods works (`console`, pino, a test
 * spy).
 *
 * @module
 */

export interface Logger {
  debug(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

const noop = (): void => {};

/** Discards everything. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * Writes warnings and errors to the console, prefixed so a host can tell
 * where they came from. Debug and info stay quiet unless `NEMO_RELAY_HOOKS_DEBUG` is set.
 */
export const consoleLogger: Logger = {
  debug: (message, ...details) => {
    if (debugEnabled()) console.debug(`[nemo-relay-hooks] ${message}`, ...details);
  },
  info: (message, ...details) => {
    if (debugEnabled()) console.info(`[nemo-relay-hooks] ${message}`, ...details);
  },
  warn: (message, ...details) => console.warn(`[nemo-relay-hooks] ${message}`, ...details),
  error: (message, ...details) => console.error(`[nemo-relay-hooks] ${message}`, ...details),
};

function debugEnabled(): boolean {
  try {
    const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
      ?.NEMO_RELAY_HOOKS_DEBUG;
    return value !== undefined && value !== '' && value !== '0';
  } catch {
    return false;
  }
}

/**
 * Calls a logger method without ever letting the logger itself throw into
 * the caller: a broken logger must not turn a swallowed telemetry error into
 * a host crash.
 */
export function safeLog(logger: Logger, level: keyof Logger, message: string, ...details: unknown[]): void {
  try {
    logger[level](message, ...details);
  } catch {
    // A logger that throws has nowhere left to report to.
  }
}
