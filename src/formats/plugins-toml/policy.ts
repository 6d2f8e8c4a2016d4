/**
 * A document's `[policy]`: how unknown components, unknown fields and
 * unsupported values are reported (native's `ignore` / `warn` / `error`).
 *
 * @module
 */

export type Behavior = 'ignore' | 'warn' | 'error';
export interface Policy {
  unknown_component?: Behavior;
  unknown_field?: Behavior;
  unsupported_value?: Behavior;
}

export function levelFor(behavior: Behavior | undefined, fallback: 'warning' | 'error' = 'warning'): 'warning' | 'error' | null {
  if (behavior === 'ignore') return null;
  if (behavior === 'warn') return 'warning';
  if (behavior === 'error') return 'error';
  return fallback;
}
