/**
 * Names for native subscriber registrations.
 *
 * Native subscriber names are process-global and a duplicate throws, so
 * every registration gets a name no other adapter instance (or a second copy
 * of this library, e.g. `dist/` next to `src/` under a test runner) can pick.
 *
 * @module
 */

const instance = Math.random().toString(36).slice(2, 10);
let counter = 0;

/** A process-unique subscriber name, e.g. `nemo-relay-hooks:atof:k3j9x0qa:1`. */
export function uniqueName(kind: string): string {
  counter += 1;
  return `nemo-relay-hooks:${kind}:${instance}:${counter}`;
}
