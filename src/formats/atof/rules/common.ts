/**
 * What every ATOF rule group shares: the diagnostics sink, value
 * descriptions for messages, and the uuid and object tests.
 *
 * @module
 */

import type { ValidationError } from '../../validation.ts';

export interface ValidateAtofOptions {
  /** Enforce the spec's `category_profile.subtype` on `custom` scopes. Default false (native omits it). */
  requireCustomSubtype?: boolean;
}

export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Collects what the rule groups find. */
export class Findings {
  readonly errors: ValidationError[] = [];

  error(path: string, rule: string, message: string): void {
    this.errors.push({ path, rule, message });
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a message shows it: JSON, cut to 60 characters. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof value;
  }
}
