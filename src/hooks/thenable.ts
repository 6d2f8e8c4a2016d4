/**
 * Thenable detection shared by the registry and the middleware chain.
 *
 * Results are checked structurally (any object with a callable `then`), not
 * with `instanceof Promise`, so promises from other realms and promise
 * libraries count. A hostile `then` getter that throws means "not a thenable"
 * rather than an error escaping into the host.
 *
 * @module
 */

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}

/** A readable name for a callback in log messages. */
export function callbackName(callback: unknown): string {
  const name = typeof callback === 'function' ? callback.name : '';
  return name === '' ? 'anonymous' : name;
}
