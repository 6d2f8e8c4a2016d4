/**
 * Reading environment variables without ever throwing.
 *
 * Deno without `--allow-env` throws `NotCapable` (older Deno: `PermissionDenied`)
 * on every read of `process.env.X`, and `Object.keys(process.env)` too. A host
 * must not crash because its telemetry looked at a setting, so every read goes
 * through `guardEnv`: a denied read answers `undefined` and is remembered, and
 * the caller turns `deniedEnv(env)` into one diagnostic.
 *
 * @module
 */

/** Environment variables by name: `process.env`, or an object a host builds. */
export type Environment = Readonly<Record<string, string | undefined>>;

interface Denied {
  names: string[];
  error: unknown;
  /** Each refused name's error, so one read can tell "refused" from "not set" (`readVariable`). */
  byName: Map<string, unknown>;
}

/** What a diagnostic about a refused read tells the user to do. */
export const REFUSED_ENV_FIX = 'Deno: run with --allow-env';

const denials = new WeakMap<object, Denied>();

/** `env` behind a guard: a read the runtime refuses answers `undefined` and is remembered. Idempotent. */
export function guardEnv(env: Environment): Environment {
  if (denials.has(env)) return env;
  const record: Denied = { names: [], error: undefined, byName: new Map() };
  const deny = (name: PropertyKey, error: unknown): void => {
    if (record.error === undefined) record.error = error;
    const text = String(name);
    if (!record.byName.has(text)) record.byName.set(text, error);
    if (!record.names.includes(text) && record.names.length < 100) record.names.push(text);
  };
  // The target is an empty object, not `env`: the proxy's own invariant
  // checks read the target, and on Deno that read would throw outside the traps.
  const source = env as Record<string, string | undefined>;
  const guarded = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      try {
        return Reflect.get(source, name) as unknown;
      } catch (error) {
        deny(name, error);
        return undefined;
      }
    },
    has(_target, name) {
      try {
        return Reflect.has(source, name);
      } catch (error) {
        deny(name, error);
        return false;
      }
    },
    ownKeys() {
      try {
        return Reflect.ownKeys(source);
      } catch (error) {
        deny('(all variables)', error);
        return [];
      }
    },
    getOwnPropertyDescriptor(_target, name) {
      try {
        const descriptor = Reflect.getOwnPropertyDescriptor(source, name);
        return descriptor === undefined ? undefined : { value: descriptor.value as unknown, writable: true, enumerable: true, configurable: true };
      } catch (error) {
        deny(name, error);
        return undefined;
      }
    },
  });
  denials.set(guarded, record);
  return guarded;
}

/** The variables a guarded `env` could not read so far, and the first error; null when none. */
export function deniedEnv(env: Environment): { names: readonly string[]; message: string } | null {
  const record = denials.get(env);
  if (record === undefined || record.names.length === 0) return null;
  return { names: record.names, message: errorText(record.error) };
}

/** One variable read through `env`; `refused` is the runtime's reason when it would not let it be read (the variable may well be set). */
export interface VariableRead {
  value: string | undefined;
  refused?: string;
}

/**
 * One variable, with the difference between a variable that is not set and
 * one the runtime refused to read (Deno without `--allow-env`): a diagnostic
 * that said "not set, fix: set it" about a variable that was set sent users
 * the wrong way.
 */
export function readVariable(env: Environment, name: string): VariableRead {
  const guarded = guardEnv(env);
  const value = guarded[name];
  if (value !== undefined) return { value };
  const refusal = denials.get(guarded)?.byName;
  return refusal?.has(name) ? { value, refused: errorText(refusal.get(name)) } : { value };
}

/** `the runtime refused to read X (NotCapable: …; Deno: run with --allow-env)`: how every diagnostic says it. */
export function refusedReadText(name: string, refused: string): string {
  return `the runtime refused to read ${name} (${refused}; ${REFUSED_ENV_FIX})`;
}

function errorText(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'permission denied';
  }
}

/** The process environment, guarded; `{}` where there is none. */
export function processEnv(): Environment {
  let env: Environment | undefined;
  try {
    env = (globalThis as { process?: { env?: Environment } }).process?.env;
  } catch {
    env = undefined;
  }
  return guardEnv(env ?? {});
}

/**
 * The names `env` holds, or `[]` when listing them needs a permission the
 * runtime has not granted: Deno lists the environment only with `env`
 * access to all of it, and asking would prompt an interactive user.
 */
export function envNames(env: Environment): readonly string[] {
  try {
    const deno = (globalThis as { Deno?: { permissions?: { querySync?(descriptor: { name: 'env' }): { state: string } } } }).Deno;
    if (deno !== undefined && deno.permissions?.querySync?.({ name: 'env' }).state !== 'granted') return [];
    return Object.keys(env);
  } catch {
    return [];
  }
}
