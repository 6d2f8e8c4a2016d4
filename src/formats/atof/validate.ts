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

import { SCOPE_CATEGORIES, isScopeCategory } from './types.ts';
import type { AtofEvent } from './types.ts';
import { compareInstants, parseInstant } from '../instant.ts';
import type { Instant } from '../instant.ts';
import type { ValidationError } from '../validation.ts';
import { childPath } from '../validation.ts';

export interface ValidateAtofOptions {
  /** Enforce the spec's `category_profile.subtype` on `custom` scopes. Default false (native omits it). */
  requireCustomSubtype?: boolean;
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const VERSION_RE = /^0\.\d+$/;
const FLAG_RE = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

interface OpenScope {
  index: number;
  name: unknown;
  attributes: string;
  category: unknown;
  parent: unknown;
  instant: Instant | undefined;
  ended: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates a stream of ATOF events (file order). Returns every problem found; `[]` means valid. */
export function validateAtofEvents(events: readonly unknown[], options: ValidateAtofOptions = {}): ValidationError[] {
  const errors: ValidationError[] = [];
  const scopes = new Map<string, OpenScope>();
  const markUuids = new Set<string>();
  const report = (path: string, rule: string, message: string): void => {
    errors.push({ path, rule, message });
  };

  events.forEach((event, index) => {
    const path = `$[${index}]`;
    if (!isObject(event)) {
      report(path, 'atof.type', 'event must be a JSON object');
      return;
    }
    const at = (key: string): string => childPath(path, key);

    if (!('atof_version' in event)) report(at('atof_version'), 'atof.required', 'atof_version is required');
    else if (typeof event.atof_version !== 'string' || !VERSION_RE.test(event.atof_version)) {
      report(at('atof_version'), 'atof.version', `atof_version must be a "0.x" version string, got ${describe(event.atof_version)}`);
    }

    const kind = event.kind;
    if (kind !== 'scope' && kind !== 'mark') {
      report(at('kind'), 'atof.kind', `kind must be "scope" or "mark", got ${describe(kind)}`);
    }

    const uuid = event.uuid;
    if (!('uuid' in event)) report(at('uuid'), 'atof.required', 'uuid is required');
    else if (typeof uuid !== 'string' || !UUID_RE.test(uuid)) report(at('uuid'), 'atof.uuid', `uuid must be a UUID string, got ${describe(uuid)}`);

    if (!('parent_uuid' in event)) report(at('parent_uuid'), 'atof.required', 'parent_uuid is required (null for a root)');
    else if (event.parent_uuid !== null && (typeof event.parent_uuid !== 'string' || !UUID_RE.test(event.parent_uuid))) {
      report(at('parent_uuid'), 'atof.uuid', `parent_uuid must be null or a UUID string, got ${describe(event.parent_uuid)}`);
    }

    if ('propagation_root_uuid' in event && event.propagation_root_uuid !== null) {
      const root = event.propagation_root_uuid;
      if (typeof root !== 'string' || !UUID_RE.test(root)) {
        report(at('propagation_root_uuid'), 'atof.uuid', `propagation_root_uuid must be a UUID string, got ${describe(root)}`);
      }
    }

    let instant: Instant | undefined;
    if (!('timestamp' in event)) report(at('timestamp'), 'atof.required', 'timestamp is required');
    else {
      instant = parseInstant(event.timestamp);
      if (instant === undefined) {
        report(
          at('timestamp'),
          'atof.timestamp',
          `timestamp must be an RFC 3339 string with an offset or integer epoch microseconds, got ${describe(event.timestamp)}`,
        );
      }
    }

    if (!('name' in event)) report(at('name'), 'atof.required', 'name is required');
    else if (typeof event.name !== 'string') report(at('name'), 'atof.type', `name must be a string, got ${describe(event.name)}`);

    if ('data_schema' in event && event.data_schema !== null) {
      const schema = event.data_schema;
      if (!isObject(schema) || typeof schema.name !== 'string' || typeof schema.version !== 'string') {
        report(at('data_schema'), 'atof.data_schema', 'data_schema must be null or {name: string, version: string}');
      }
    }

    const category = event.category;
    const profile = event.category_profile;
    if ('category_profile' in event && profile !== null && profile !== undefined && !isObject(profile)) {
      report(at('category_profile'), 'atof.category_profile', `category_profile must be null or an object, got ${describe(profile)}`);
    }

    if (kind === 'mark') {
      if ('scope_category' in event) report(at('scope_category'), 'atof.mark_field', 'marks have no scope_category');
      if ('attributes' in event) report(at('attributes'), 'atof.mark_field', 'marks have no attributes');
      if (category !== null && category !== undefined && !isScopeCategory(category)) {
        report(at('category'), 'atof.category', `category must be null or one of ${SCOPE_CATEGORIES.join(', ')}, got ${describe(category)}`);
      }
      if (typeof uuid === 'string') {
        if (markUuids.has(uuid) || scopes.has(uuid)) report(at('uuid'), 'atof.duplicate_uuid', `uuid ${uuid} is used by another event`);
        markUuids.add(uuid);
      }
      return;
    }
    if (kind !== 'scope') return;

    const phase = event.scope_category;
    if (phase !== 'start' && phase !== 'end') {
      report(at('scope_category'), 'atof.scope_category', `scope_category must be "start" or "end", got ${describe(phase)}`);
    }

    const attributes = event.attributes;
    let attributesKey = '';
    if (!Array.isArray(attributes)) {
      report(at('attributes'), 'atof.attributes', `attributes must be an array of flags ([] when none), got ${describe(attributes)}`);
    } else {
      attributesKey = JSON.stringify(attributes);
      attributes.forEach((flag, i) => {
        if (typeof flag !== 'string' || !FLAG_RE.test(flag)) {
          report(childPath(at('attributes'), i), 'atof.attributes', `attribute flags are lowercase strings, got ${describe(flag)}`);
        } else if (i > 0) {
          const previous = attributes[i - 1];
          if (typeof previous === 'string' && previous >= flag) {
            report(
              childPath(at('attributes'), i),
              'atof.attributes',
              previous === flag ? `attribute "${flag}" is repeated` : 'attributes must be sorted',
            );
          }
        }
      });
    }

    if (!('category' in event)) report(at('category'), 'atof.required', 'category is required on scope events');
    else if (!isScopeCategory(category)) {
      report(at('category'), 'atof.category', `category must be one of ${SCOPE_CATEGORIES.join(', ')}, got ${describe(category)}`);
    } else if (category === 'custom' && isObject(profile) && 'subtype' in profile) {
      if (typeof profile.subtype !== 'string' || profile.subtype === '') {
        report(childPath(at('category_profile'), 'subtype'), 'atof.custom_subtype', 'category_profile.subtype must be a non-empty string');
      }
    } else if (category === 'custom' && options.requireCustomSubtype === true) {
      report(at('category_profile'), 'atof.custom_subtype', 'custom scopes need category_profile.subtype');
    }

    if (typeof uuid !== 'string' || (phase !== 'start' && phase !== 'end')) return;
    if (markUuids.has(uuid)) {
      report(at('uuid'), 'atof.duplicate_uuid', `uuid ${uuid} is used by a mark`);
      return;
    }
    const open = scopes.get(uuid);
    if (phase === 'start') {
      if (open !== undefined) {
        report(at('scope_category'), 'atof.duplicate_start', `scope ${uuid} already started at $[${open.index}]`);
        return;
      }
      scopes.set(uuid, {
        index,
        name: event.name,
        attributes: attributesKey,
        category,
        parent: event.parent_uuid,
        instant,
        ended: false,
      });
      return;
    }
    if (open === undefined) {
      report(at('scope_category'), 'atof.unpaired_end', `scope ${uuid} ends without a start`);
      return;
    }
    if (open.ended) {
      report(at('scope_category'), 'atof.duplicate_end', `scope ${uuid} already ended`);
      return;
    }
    open.ended = true;
    const startPath = `$[${open.index}]`;
    if (event.name !== open.name) report(at('name'), 'atof.pair_mismatch', `end name differs from the start at ${startPath}`);
    if (Array.isArray(attributes) && attributesKey !== open.attributes) {
      report(at('attributes'), 'atof.pair_mismatch', `end attributes differ from the start at ${startPath}`);
    }
    if (category !== open.category) report(at('category'), 'atof.pair_mismatch', `end category differs from the start at ${startPath}`);
    if (event.parent_uuid !== open.parent) {
      report(at('parent_uuid'), 'atof.pair_mismatch', `end parent_uuid differs from the start at ${startPath}`);
    }
    if (instant !== undefined && open.instant !== undefined && compareInstants(instant, open.instant) <= 0) {
      report(at('timestamp'), 'atof.end_not_after_start', `end timestamp must be strictly after the start at ${startPath}`);
    }
  });
  return errors;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof value;
  }
}

/** A JSONL line that is not a JSON object. */
export interface AtofLineError extends ValidationError {
  /** 1-based line number. */
  line: number;
}

/** What `parseAtofJsonl` returns: the events, and one error per unusable line. */
export interface AtofParseResult {
  /** Every line that parsed to a JSON object, in file order. */
  events: AtofEvent[];
  /** Lines that did not; blank lines are skipped silently. */
  errors: AtofLineError[];
}

/** Parses ATOF JSONL text. Never throws; malformed lines are reported with their line numbers. */
export function parseAtofJsonl(text: string): AtofParseResult {
  const events: AtofEvent[] = [];
  const errors: AtofLineError[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const lineNumber = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      errors.push({
        line: lineNumber,
        path: `line ${lineNumber}`,
        rule: 'atof.malformed_line',
        message: `line ${lineNumber} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    if (!isObject(value)) {
      errors.push({ line: lineNumber, path: `line ${lineNumber}`, rule: 'atof.malformed_line', message: `line ${lineNumber} is not a JSON object` });
      return;
    }
    events.push(value as unknown as AtofEvent);
  });
  return { events, errors };
}
