/**
 * ATOF 0.1 validation and JSONL parsing.
 *
 * Checks each event's envelope (required fields and their types, `kind`,
 * `scope_category`, the closed `category` set, sorted/de-duplicated
 * lowercase `attributes`, uuids, RFC 3339 or integer-microsecond
 * timestamps) and each start/end pair (same name, attributes, category and
 * parent; end strictly after start; no second start or end).
 *
 * Decisions where the spec and the native runtime disagree — the validator
 * accepts what native writes, so native's own output validates:
 * - `custom` scopes without `category_profile.subtype`: accepted (native
 *   never writes a subtype). Pass `requireCustomSubtype: true` to enforce the
 *   spec's rule.
 * - Unknown top-level fields: accepted, because readers must accept any
 *   0.x and a minor version may add optional fields. Native's
 *   `propagation_root_uuid` must be a uuid when present.
 * - A non-null `parent_uuid` on root scopes (native parents them to an
 *   implicit root that never appears as an event): accepted; parents are not
 *   required to appear in the stream.
 * - `metadata` of any JSON type: accepted (native passes it through as is).
 * - Unpaired starts: accepted (legal after a crash). Unpaired ends are not.
 *
 * @module
 */

import { checkEnvelope } from './rules/envelope.ts';
import { checkMarkFields, checkScopeFields } from './rules/fields.ts';
import { Findings, isObject, type ValidateAtofOptions } from './rules/common.ts';
import { ScopePairs } from './rules/pairs.ts';
import type { ValidationError } from '../validation.ts';

export type { ValidateAtofOptions } from './rules/common.ts';
export { parseAtofJsonl, type AtofLineError, type AtofParseResult } from './jsonl.ts';

/** Validates a stream of ATOF events (file order). Returns every problem found; `[]` means valid. */
export function validateAtofEvents(events: readonly unknown[], options: ValidateAtofOptions = {}): ValidationError[] {
  const findings = new Findings();
  const pairs = new ScopePairs(findings);
  events.forEach((event, index) => {
    const path = `$[${index}]`;
    if (!isObject(event)) {
      findings.error(path, 'atof.type', 'event must be a JSON object');
      return;
    }
    const instant = checkEnvelope(event, path, findings);
    if (event.kind === 'mark') {
      checkMarkFields(event, path, findings);
      pairs.mark(event.uuid, path);
    } else if (event.kind === 'scope') {
      checkScopeFields(event, path, findings, options);
      pairs.scope(event, index, path, instant);
    }
  });
  return findings.errors;
}
