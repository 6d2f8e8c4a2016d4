/**
 * ATOF 0.1 validation, rule by rule after the spec's MUST and SHOULD.
 *
 * Errors are MUST violations: a missing or mistyped envelope field, a
 * `kind` or `scope_category` outside the spec, a timestamp that is neither
 * RFC 3339 nor non-negative integer epoch microseconds, an end without a
 * start, a second start or end, an end that differs from its start or does
 * not come after it. Warnings are what the spec tells consumers to
 * tolerate: unknown categories, attributes out of order or repeated, lines
 * out of timestamp order (the events are sorted before pairing, as
 * consumers MUST), ids that are not UUIDs, a `custom` event without a
 * subtype (an error under `strict`). A major `atof_version` other than 0
 * stops validation at once: this reader does not know that format.
 *
 * Decisions where the spec is silent and native has a habit: unknown
 * top-level fields are accepted (a minor version may add optional fields);
 * a root's `parent_uuid` may name a scope that never appears (native's
 * implicit root); `metadata` may be any JSON; unpaired starts are accepted
 * (legal after a crash).
 *
 * @module
 */

import { atofMajor, checkEnvelope } from './rules/envelope.ts';
import { checkMarkFields, checkScopeFields } from './rules/fields.ts';
import { describe, Findings, isObject, type ValidateAtofOptions } from './rules/common.ts';
import { ScopePairs } from './rules/pairs.ts';
import { compareInstants, type Instant } from '../instant.ts';
import { validationResult, type ValidationResult } from '../validation-result.ts';

export type { ValidateAtofOptions } from './rules/common.ts';
export { parseAtofJsonl, parseAtofLine, type AtofLineError, type AtofParseResult } from './jsonl.ts';

/** The ATOF major version this reader understands. */
const KNOWN_MAJOR = 0;

interface Checked {
  index: number;
  event: Record<string, unknown>;
  instant: Instant | undefined;
}

/**
 * The timestamp order of a file read in stretches (`validateAtofStretch`):
 * the latest instant of the stretches before, and whether `atof.unsorted`
 * was reported already.
 */
export interface TimestampOrder {
  latest: Instant | undefined;
  reported: boolean;
}

/**
 * Validates a stream of ATOF events (file order). The result is the array of
 * errors (`[]` means valid) with `warnings` and the `version` read alongside.
 */
export function validateAtofEvents(events: readonly unknown[], options: ValidateAtofOptions = {}): ValidationResult {
  return validateAtofStretch(events, options, { latest: undefined, reported: false });
}

/**
 * `validateAtofEvents` on one stretch of a file validated in stretches (the
 * CLI's streamed check): `order` carries the timestamp order across them and
 * is updated, so the file gets the one `atof.unsorted` warning it gets read
 * whole, at the same event, also when only a stretch's start is out of order.
 */
export function validateAtofStretch(events: readonly unknown[], options: ValidateAtofOptions, order: TimestampOrder): ValidationResult {
  const version = declaredVersion(events);
  const unknownMajor = unknownMajorVersion(events);
  if (unknownMajor !== undefined) return validationResult([unknownMajor], [], version);

  const findings = new Findings();
  const checked: Checked[] = [];
  events.forEach((event, index) => {
    const path = `$[${index}]`;
    if (!isObject(event)) {
      findings.error(path, 'atof.type', 'event must be a JSON object');
      return;
    }
    const instant = checkEnvelope(event, path, findings);
    if (event.kind === 'mark') checkMarkFields(event, path, findings, options);
    else if (event.kind === 'scope') checkScopeFields(event, path, findings, options);
    checked.push({ index, event, instant });
  });

  const pairs = new ScopePairs(findings);
  for (const { index, event, instant } of sortByTimestamp(checked, findings, order)) {
    const path = `$[${index}]`;
    if (event.kind === 'mark') pairs.mark(event.uuid, path);
    else if (event.kind === 'scope') pairs.scope(event, index, path, instant);
  }
  return validationResult(findings.errors, findings.warnings, version);
}

function declaredVersion(events: readonly unknown[]): string | undefined {
  for (const event of events) {
    if (isObject(event) && typeof event.atof_version === 'string') return event.atof_version;
  }
  return undefined;
}

function unknownMajorVersion(events: readonly unknown[]): { path: string; rule: string; message: string } | undefined {
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    if (!isObject(event)) continue;
    const major = atofMajor(event.atof_version);
    if (major === undefined || major === KNOWN_MAJOR) continue;
    return {
      path: `$[${index}].atof_version`,
      rule: 'atof.unsupported_version',
      message: `atof_version ${describe(event.atof_version)} is major version ${major}; this reader knows ATOF ${KNOWN_MAJOR}.x only and stops here`,
    };
  }
  return undefined;
}

/**
 * The events in timestamp order (stable; an event whose timestamp does not
 * parse keeps its predecessor's place), with one warning when the file was
 * not already in that order (`order`: where the stretches before left it).
 */
function sortByTimestamp(checked: Checked[], findings: Findings, order: TimestampOrder): Checked[] {
  let previous: Instant | undefined = order.latest;
  let unsorted: Checked | undefined;
  const keyed = checked.map((entry) => {
    const key = entry.instant ?? previous;
    if (unsorted === undefined && key !== undefined && previous !== undefined && compareInstants(key, previous) < 0) unsorted = entry;
    if (key !== undefined && (previous === undefined || compareInstants(key, previous) > 0)) previous = key;
    return { entry, key };
  });
  order.latest = previous;
  if (unsorted === undefined) return checked;
  if (!order.reported) {
    findings.warn(
      `$[${unsorted.index}].timestamp`,
      'atof.unsorted',
      'lines are not in timestamp order (accepted: events are sorted by timestamp before pairing)',
    );
    order.reported = true;
  }
  return keyed
    .map((item, position) => ({ ...item, position }))
    .sort((a, b) => (a.key !== undefined && b.key !== undefined ? compareInstants(a.key, b.key) : 0) || a.position - b.position)
    .map((item) => item.entry);
}
