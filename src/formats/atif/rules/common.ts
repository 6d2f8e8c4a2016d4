/**
 * What the ATIF rule groups share: the diagnostics sink and the object test.
 *
 * @module
 */

import type { ValidationError } from '../../validation-result.ts';
import { isRecord } from '../../../shared/record.ts';

export type Obj = Record<string, unknown>;

/** A non-null, non-array object (the library's one test, `shared/record.ts`). */
export const isObject = isRecord;

/** What a validator finds (the one collector both validators use). */
export { Findings as Report } from '../../validation-result.ts';
