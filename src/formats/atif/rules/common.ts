/**
 * What the ATIF rule groups share: the diagnostics sink and the object test.
 *
 * @module
 */

import type { ValidationError } from '../../validation.ts';
import { isRecord } from '../../../shared/record.ts';

export type Obj = Record<string, unknown>;

/** A non-null, non-array object (the library's one test, `shared/record.ts`). */
export const isObject = isRecord;

/** Collects errors (the document is invalid under Harbor's rules) and warnings (worth fixing, still valid). */
export class Report {
  readonly errors: ValidationError[] = [];
  readonly warnings: ValidationError[] = [];

  error(path: string, rule: string, message: string): void {
    this.errors.push({ path, rule, message });
  }

  warn(path: string, rule: string, message: string): void {
    this.warnings.push({ path, rule, message });
  }
}
