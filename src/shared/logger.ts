/**
 * The logger seam shared by every object the library creates (registry,
 * plugin, backends, recorder), and the one place to set it.
 *
 * Telemetry must never throw into the host, so failures are reported here
 * instead. The `logger` options accept the common loggers as they are
 * (`adaptLogger`): `console`, pino, winston, a `debug`-style function, or
 * any object with `debug`/`info`/`warn`/`error`; an `Error` passed as a
 * detail keeps its name, message and stack with each of them.
 *
 * `setLogger()` sets the library's logger for every object created without
 * an explicit `logger` (they default to `consoleLogger`, which forwards to
 * it). The console default prints info, warnings and errors on stderr;
 * its debug output is off unless
 * `NEMO_RELAY_HOOKS_DEBUG` is truthy or `DEBUG` names `nemo-relay-hooks`
 * (the `debug` package's convention: `DEBUG=nemo-relay-hooks`, `DEBUG=*`,
 * `DEBUG=nemo-relay-*`, minus `-nemo-relay-hooks`).
 *
 * @module
 */

export interface Logger {
  /** Detail for debugging; off by default. */
  debug(message: string, ...details: unknown[]): void;
  /** Something the host should know once (where the plugin records, a recovery). */
  info(message: string, ...details: unknown[]): void;
  /** A failure the library recovered from. */
  warn(message: string, ...details: unknown[]): void;
  /** A failure that lost data. */
  error(message: string, ...details: unknown[]): void;
}

/** A function that logs one line, as `debug('nemo-relay-hooks')` returns. */
export type LogFunction = (message: string, ...details: unknown[]) => void;

/**
 * What a `logger` option accepts: a `Logger` (console fits), a pino or
 * winston logger, a `debug`-style function, or an object with only some of
 * the four methods (or only `log`).
 */
export type LoggerLike = Logger | LogFunction | Partial<Logger> | { log(...args: unknown[]): void };

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

const noop = (): void => {};

/** Discards everything. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

let configured: Logger | undefined;

/**
 * Sets the logger of every object the library creates without its own
 * `logger` option, including ones created before this call. `undefined`
 * goes back to the console.
 */
export function setLogger(logger: LoggerLike | undefined): void {
  configured = logger === undefined ? undefined : adaptLogger(logger);
}

// Everything but debug output goes to stderr: a library must not write into
// a host's stdout, which may be its own output (JSON, a pipe).
const consoleDefault: Logger = {
  debug: (message, ...details) => {
    if (debugEnabled()) console.debug(`[nemo-relay-hooks] ${message}`, ...details);
  },
  info: (message, ...details) => console.warn(`[nemo-relay-hooks] ${message}`, ...details),
  warn: (message, ...details) => console.warn(`[nemo-relay-hooks] ${message}`, ...details),
  error: (message, ...details) => console.error(`[nemo-relay-hooks] ${message}`, ...details),
};

/**
 * The library's default logger: forwards to the logger set with
 * `setLogger()`, else writes info, warnings and errors to stderr, prefixed
 * so a host can tell where they came from (debug only when debug output is
 * on, see `debugEnabled`).
 */
export const consoleLogger: Logger = {
  debug: (message, ...details) => (configured ?? consoleDefault).debug(message, ...details),
  info: (message, ...details) => (configured ?? consoleDefault).info(message, ...details),
  warn: (message, ...details) => (configured ?? consoleDefault).warn(message, ...details),
  error: (message, ...details) => (configured ?? consoleDefault).error(message, ...details),
};

const OFF = new Set(['', '0', 'false', 'no', 'off']);

/**
 * Whether debug output is on for `env` (default `process.env`):
 * `NEMO_RELAY_HOOKS_DEBUG` truthy (`false`, `0`, `no`, `off` are off), or
 * `DEBUG` naming `nemo-relay-hooks` by the `debug` package's rules.
 */
export function debugEnabled(env?: Readonly<Record<string, string | undefined>>): boolean {
  try {
    const vars = env ?? (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
    const own = vars.NEMO_RELAY_HOOKS_DEBUG;
    if (own !== undefined) return !OFF.has(own.trim().toLowerCase());
    return debugNamespaceEnabled(vars.DEBUG, 'nemo-relay-hooks');
  } catch {
    return false;
  }
}

/** The `debug` package's matching: comma or space separated patterns, `*` wildcards, `-` to exclude. */
function debugNamespaceEnabled(patterns: string | undefined, namespace: string): boolean {
  if (patterns === undefined || patterns.trim() === '') return false;
  let enabled = false;
  for (const raw of patterns.split(/[\s,]+/)) {
    if (raw === '') continue;
    const negated = raw.startsWith('-');
    const pattern = negated ? raw.slice(1) : raw;
    const regex = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*?')}$`);
    if (regex.test(namespace)) {
      if (negated) return false;
      enabled = true;
    }
  }
  return enabled;
}

/**
 * A `Logger` over `logger` as it is: console and `Logger` objects are used
 * directly; pino gets `(mergingObject, message)` with the error under
 * `err` (its serializer's key; pino drops an `Error` passed after the
 * message); winston gets `(message, meta)` with the error's name, message
 * and stack spelled out (its own meta merge loses them); a function gets
 * `level: message` and the details; missing levels fall back to a nearby
 * one or `log`. Every logger but the console also gets the error's own
 * message in the message text (`callback "x" failed: boom`), since many
 * print only the message (pino drops arguments after it, winston's formats
 * may leave the metadata out). Never throws.
 */
export function adaptLogger(logger: LoggerLike | undefined): Logger {
  if (logger === undefined || logger === null) return consoleLogger;
  if (logger === console || logger === consoleLogger) return logger as Logger;
  if (typeof logger === 'function') {
    const fn = logger as LogFunction;
    return byLevel((level) => (message, ...details) => fn(`${level}: ${message}`, ...details));
  }
  const target = logger as Record<string, unknown>;
  if (isPino(target)) {
    return byLevel((level) => (message, ...details) => {
      const method = target[level] as (obj: object, msg: string) => void;
      const merging = structured(details, 'err');
      if (merging === undefined) method.call(target, {}, message);
      else method.call(target, merging, message);
    });
  }
  if (isWinston(target)) {
    return byLevel((level) => (message, ...details) => {
      const method = (typeof target[level] === 'function' ? target[level] : target.info) as (msg: string, meta?: object) => void;
      const meta = structured(details, 'error');
      if (meta === undefined) method.call(target, message);
      else method.call(target, message, meta);
    });
  }
  if (LEVELS.every((level) => typeof target[level] === 'function')) return byLevel((level) => (target[level] as LogFunction).bind(target));
  const fallback = typeof target.log === 'function' ? (target.log as LogFunction) : undefined;
  const pick = (level: Level): LogFunction => {
    const order: Level[] = level === 'debug' ? ['debug', 'info'] : level === 'info' ? ['info', 'debug'] : level === 'warn' ? ['warn', 'error'] : ['error', 'warn'];
    for (const name of order) if (typeof target[name] === 'function') return (target[name] as LogFunction).bind(target);
    return fallback ? fallback.bind(target) : noop;
  };
  return byLevel((level) => pick(level));
}

function byLevel(make: (level: Level) => LogFunction): Logger {
  const logger = {} as Logger;
  for (const level of LEVELS) {
    const fn = make(level);
    logger[level] = (message, ...details) => {
      try {
        fn(withErrorText(message, details), ...details);
      } catch {
        // A logger that throws has nowhere left to report to.
      }
    };
  }
  return logger;
}

/** `message: <the first error's message>`, unless the message already says it. */
function withErrorText(message: string, details: readonly unknown[]): string {
  for (const detail of details) {
    let text: unknown;
    try {
      text = detail instanceof Error ? detail.message : undefined;
    } catch {
      text = undefined;
    }
    if (typeof text === 'string' && text !== '') return message.includes(text) ? message : `${message}: ${text}`;
  }
  return message;
}

function isPino(target: Record<string, unknown>): boolean {
  return typeof target.child === 'function' && typeof target.bindings === 'function' && typeof target.warn === 'function';
}

function isWinston(target: Record<string, unknown>): boolean {
  return typeof target.log === 'function' && Array.isArray(target.transports) && typeof target.add === 'function';
}

/** The details as one object: errors spelled out under `errorKey`, other objects merged, the rest in `details`. */
function structured(details: readonly unknown[], errorKey: string): Record<string, unknown> | undefined {
  if (details.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  const rest: unknown[] = [];
  for (const detail of details) {
    if (detail instanceof Error) {
      if (out[errorKey] === undefined) out[errorKey] = errorKey === 'err' ? detail : plainError(detail);
      else rest.push(plainError(detail));
    } else if (typeof detail === 'object' && detail !== null && !Array.isArray(detail)) {
      Object.assign(out, detail);
    } else {
      rest.push(detail);
    }
  }
  if (rest.length > 0) out.details = rest;
  return out;
}

function plainError(error: Error): Record<string, unknown> {
  const plain: Record<string, unknown> = { name: error.name, message: error.message };
  if (error.stack !== undefined) plain.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) plain.code = code;
  if (error.cause !== undefined) plain.cause = error.cause instanceof Error ? plainError(error.cause) : error.cause;
  return plain;
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
