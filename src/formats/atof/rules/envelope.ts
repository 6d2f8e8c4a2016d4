/**
 * The fields every ATOF event carries, scope or mark: version, kind, uuids,
 * timestamp, name, `data_schema` and `category_profile`.
 *
 * @module
 */

import { parseInstant, type Instant } from '../../instant.ts';
import { childPath } from '../../validation-result.ts';
import { describe, isObject, UUID_RE, type Findings } from './common.ts';

const VERSION_RE = /^(\d+)\.(\d+)$/;

/** The major version of an `atof_version` value when it is a `major.minor` string. */
export function atofMajor(version: unknown): number | undefined {
  const match = typeof version === 'string' ? VERSION_RE.exec(version) : null;
  return match === null ? undefined : Number(match[1]);
}

/** Checks the envelope of one event at `path`; returns its instant when the timestamp parses. */
export function checkEnvelope(event: Record<string, unknown>, path: string, findings: Findings): Instant | undefined {
  const at = (key: string): string => childPath(path, key);
  const report = findings.error.bind(findings);

  if (!('atof_version' in event)) report(at('atof_version'), 'atof.required', 'atof_version is required');
  else if (atofMajor(event.atof_version) !== 0) {
    report(at('atof_version'), 'atof.version', `atof_version must be a "0.x" version string, got ${describe(event.atof_version)}`);
  }

  const kind = event.kind;
  if (kind !== 'scope' && kind !== 'mark') report(at('kind'), 'atof.kind', `kind must be "scope" or "mark", got ${describe(kind)}`);

  if (!('uuid' in event)) report(at('uuid'), 'atof.required', 'uuid is required');
  else checkId(event.uuid, at('uuid'), findings, false);
  if (!('parent_uuid' in event)) report(at('parent_uuid'), 'atof.required', 'parent_uuid is required (null for a root)');
  else checkId(event.parent_uuid, at('parent_uuid'), findings, true);
  if ('propagation_root_uuid' in event) checkId(event.propagation_root_uuid, at('propagation_root_uuid'), findings, true);

  let instant: Instant | undefined;
  if (!('timestamp' in event)) report(at('timestamp'), 'atof.required', 'timestamp is required');
  else {
    instant = parseInstant(event.timestamp);
    if (typeof event.timestamp === 'number' && event.timestamp < 0) {
      report(at('timestamp'), 'atof.timestamp', `an integer timestamp counts microseconds since the epoch and is never negative, got ${event.timestamp}`);
      instant = undefined;
    } else if (instant === undefined) {
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

  const profile = event.category_profile;
  if ('category_profile' in event && profile !== null && profile !== undefined && !isObject(profile)) {
    report(at('category_profile'), 'atof.category_profile', `category_profile must be null or an object, got ${describe(profile)}`);
  }
  return instant;
}

/**
 * An id is a non-empty string. The spec's ids are UUIDs, but consumers key
 * on the string (the reference converter's own examples use `root-001`), so
 * another form is a warning.
 */
function checkId(value: unknown, path: string, findings: Findings, nullable: boolean): void {
  if (value === null && nullable) return;
  if (typeof value !== 'string' || value === '') {
    findings.error(path, 'atof.uuid', `${nullable ? 'null or ' : ''}a non-empty id string is required, got ${describe(value)}`);
  } else if (!UUID_RE.test(value)) {
    findings.warn(path, 'atof.uuid_format', `${JSON.stringify(value)} is not a UUID (accepted: readers key on the string)`);
  }
}
