/**
 * What every ATOF rule group shares: the diagnostics sink, value
 * descriptions for messages, and the uuid and object tests.
 *
 * @module
 */

import type { ValidationError } from '../../validation-result.ts';
import { isRecord } from '../../../shared/record.ts';

/** How strictly `validateAtofEvents` judges points where native departs from the spec. */
export interface ValidateAtofOptions {
  /**
   * Make the spec's `category_profile.subtype` on `custom` scopes and marks an
   * error (by default a missing subtype is a warning: native writes none).
   */
  requireCustomSubtype?: boolean;
  /** Everything `requireCustomSubtype` enforces (the CLI's `--strict`). */
  strict?: boolean;
}

export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export { Findings } from '../../validation-result.ts';

/** A non-null, non-array object (the library's one test, `shared/record.ts`). */
export const isObject = isRecord;

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
