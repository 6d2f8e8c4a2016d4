/**
 * The fields every ATOF event carries, scope or mark: version, kind, uuids,
 * timestamp, name, `data_schema` and `category_profile`.
 *
 * @module
 */

import { parseInstant, type Instant } from '../../instant.ts';
import { childPath } from '../../validation.ts';
import { describe, isObject, UUID_RE, type Findings } from './common.ts';

const VERSION_RE = /^0\.\d+$/;

/** Checks the envelope of one event at `path`; returns its instant when the timestamp parses. */
export function checkEnvelope(event: Record<string, unknown>, path: string, findings: Findings): Instant | undefined {
  const at = (key: string): string => childPath(path, key);
  const report = findings.error.bind(findings);

  if (!('atof_version' in event)) report(at('atof_version'), 'atof.required', 'atof_version is required');
  else if (typeof event.atof_version !== 'string' || !VERSION_RE.test(event.atof_version)) {
    report(at('atof_version'), 'atof.version', `atof_version must be a "0.x" version string, got ${describe(event.atof_version)}`);
  }

  const kind = event.kind;
  if (kind !== 'scope' && kind !== 'mark') report(at('kind'), 'atof.kind', `kind must be "scope" or "mark", got ${describe(kind)}`);

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

  const profile = event.category_profile;
  if ('category_profile' in event && profile !== null && profile !== undefined && !isObject(profile)) {
    report(at('category_profile'), 'atof.category_profile', `category_profile must be null or an object, got ${describe(profile)}`);
  }
  return instant;
}
