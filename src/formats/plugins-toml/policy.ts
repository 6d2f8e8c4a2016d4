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

/** The `[policy]` keys, in native's order. */
export const POLICY_FIELDS = ['unknown_component', 'unknown_field', 'unsupported_value'] as const;

const POLICY_DEFAULTS: Required<Policy> = { unknown_component: 'warn', unknown_field: 'warn', unsupported_value: 'error' };

/**
 * A component's effective `[policy]`: the document's wins wherever it sets a
 * behaviour other than the default (native's rule; a document `error` for
 * unsupported values, the default, leaves a component's `warn` in place).
 */
export function componentPolicy(own: Policy, document: Policy): Policy {
  const policy: Policy = { ...own };
  for (const key of POLICY_FIELDS) {
    const value = document[key];
    if (value !== undefined && value !== POLICY_DEFAULTS[key]) policy[key] = value;
  }
  return policy;
}

export function levelFor(behavior: Behavior | undefined, fallback: 'warning' | 'error' = 'warning'): 'warning' | 'error' | null {
  if (behavior === 'ignore') return null;
  if (behavior === 'warn') return 'warning';
  if (behavior === 'error') return 'error';
  return fallback;
}

/**
 * Pushes `diagnostic` at the level `behavior` gives (default `fallback`),
 * or not at all for `ignore`: native's `push_policy_diag`.
 */
export function pushByPolicy(
  diagnostics: { level: 'warning' | 'error'; code: string; component?: string; field?: string; message: string }[],
  behavior: Behavior | undefined,
  fallback: 'warning' | 'error',
  diagnostic: { code: string; component?: string | undefined; field?: string | undefined; message: string },
): void {
  const level = levelFor(behavior, fallback);
  if (level === null) return;
  const out: { level: 'warning' | 'error'; code: string; component?: string; field?: string; message: string } = { level, code: diagnostic.code, message: diagnostic.message };
  if (diagnostic.component !== undefined) out.component = diagnostic.component;
  if (diagnostic.field !== undefined) out.field = diagnostic.field;
  // Native's key order: level, code, component, field, message.
  diagnostics.push({ level: out.level, code: out.code, ...(out.component !== undefined ? { component: out.component } : {}), ...(out.field !== undefined ? { field: out.field } : {}), message: out.message });
}
