/**
 * validateAtofEvents and parseAtofJsonl: native's own files validate, and
 * each ATOF 0.1 rule reports a stable code at the offending path.
 */

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures');
const U1 = '01a22800-0000-7000-8000-000000000001';
const U2 = '01a22800-0000-7000-8000-000000000002';
const P = '01a22800-0000-7000-8000-0000000000ff';

function start(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    atof_version: '0.1',
    attributes: [],
    category: 'tool',
    category_profile: { tool_call_id: 'c1' },
    data: { x: 1 },
    data_schema: null,
    kind: 'scope',
    metadata: null,
    name: 'Bash',
    parent_uuid: P,
    propagation_root_uuid: P,
    scope_category: 'start',
    timestamp: '2026-11-29T14:59:29.157292+00:00',
    uuid: U1,
    ...overrides,
  };
}

const end = (overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  start({ scope_category: 'end', timestamp: '2026-11-29T14:59:29.157300+00:00', ...overrides });

const rules = (events: unknown[]): string[] => validateAtofEvents(events).map((error) => `${error.path} ${error.rule}`);
const warned = (events: unknown[]): string[] => validateAtofEvents(events).warnings.map((warning) => `${warning.path} ${warning.rule}`);

describe('validateAtofEvents', () => {
  it('accepts the native runtime\'s own files (manual exporter and plugin sink)', () => {
    for (const file of ['atof-session.jsonl', 'plugin-atof-events.jsonl']) {
      const { events, errors } = parseAtofJsonl(fs.readFileSync(path.join(fixtures, file), 'utf8'));
      expect(errors).toEqual([]);
      expect(events.length).toBeGreaterThan(10);
      expect(validateAtofEvents(events)).toEqual([]);
    }
  });

  it('accepts integer-microsecond timestamps, mixed with RFC 3339 ones', () => {
    expect(rules([start({ timestamp: 1_800_000_000_000_000 }), end({ timestamp: '2027-01-15T08:00:00.000001Z' })])).toEqual([]);
  });

  it('warns about custom scopes without a subtype, and rejects them when asked to enforce the spec', () => {
    const custom = [start({ category: 'custom', category_profile: null }), end({ category: 'custom', category_profile: null })];
    expect(validateAtofEvents(custom)).toEqual([]);
    expect(warned(custom)).toEqual(['$[0].category_profile atof.custom_subtype', '$[1].category_profile atof.custom_subtype']);
    expect(validateAtofEvents(custom, { requireCustomSubtype: true }).map((e) => e.rule)).toEqual(['atof.custom_subtype', 'atof.custom_subtype']);
    expect(validateAtofEvents(custom, { strict: true }).map((e) => e.rule)).toEqual(['atof.custom_subtype', 'atof.custom_subtype']);
    expect(rules([start({ category: 'custom', category_profile: { subtype: '' } })])).toEqual(['$[0].category_profile.subtype atof.custom_subtype']);
  });

  it('accepts unknown top-level fields (readers accept any 0.x) but checks propagation_root_uuid', () => {
    expect(rules([start({ future_field: 1, atof_version: '0.2' })])).toEqual([]);
    expect(rules([start({ propagation_root_uuid: 42 })])).toEqual(['$[0].propagation_root_uuid atof.uuid']);
    expect(warned([start({ propagation_root_uuid: 'nope' })])).toEqual(['$[0].propagation_root_uuid atof.uuid_format']);
  });

  it('reads the version it is given, and stops at a major version it does not know', () => {
    expect(validateAtofEvents([start({ atof_version: '0.2' })]).version).toBe('0.2');
    const refused = validateAtofEvents([start(), end({ atof_version: '1.0', kind: 'span' })]);
    expect(refused.map((error) => `${error.path} ${error.rule}`)).toEqual(['$[1].atof_version atof.unsupported_version']);
    expect(refused[0]?.message).toMatch(/major version 1; this reader knows ATOF 0\.x only/);
  });

  it('accepts ids that are not UUIDs with a warning (the reference converter uses root-001)', () => {
    const events = [start({ uuid: 'root-001', parent_uuid: null }), end({ uuid: 'root-001', parent_uuid: null })];
    expect(rules(events)).toEqual([]);
    expect(warned(events)).toEqual(['$[0].uuid atof.uuid_format', '$[1].uuid atof.uuid_format']);
    expect(rules([start({ uuid: '' })])).toEqual(['$[0].uuid atof.uuid']);
  });

  it('sorts lines by timestamp before pairing, with a warning', () => {
    expect(rules([end(), start()])).toEqual([]);
    expect(warned([end(), start()])).toEqual(['$[1].timestamp atof.unsorted']);
  });

  it('rejects a negative integer timestamp', () => {
    expect(rules([start({ timestamp: -1 })])).toEqual(['$[0].timestamp atof.timestamp']);
  });

  it('reports envelope problems at their paths', () => {
    expect(rules(['not an object'])).toEqual(['$[0] atof.type']);
    expect(rules([start({ atof_version: 'one' })])).toEqual(['$[0].atof_version atof.version']);
    expect(rules([start({ kind: 'span' })])).toEqual(['$[0].kind atof.kind']);
    expect(rules([start({ uuid: 7 })])).toEqual(['$[0].uuid atof.uuid']);
    expect(rules([start({ parent_uuid: 42 })])).toEqual(['$[0].parent_uuid atof.uuid']);
    expect(rules([start({ timestamp: '2026-11-29 14:59' })])).toEqual(['$[0].timestamp atof.timestamp']);
    expect(rules([start({ timestamp: 1.5 })])).toEqual(['$[0].timestamp atof.timestamp']);
    expect(rules([start({ name: 7 })])).toEqual(['$[0].name atof.type']);
    expect(rules([start({ data_schema: { name: 'x' } })])).toEqual(['$[0].data_schema atof.data_schema']);
    expect(rules([start({ category_profile: [] })])).toEqual(['$[0].category_profile atof.category_profile']);
    const { name: _name, ...withoutName } = start();
    expect(rules([withoutName])).toEqual(['$[0].name atof.required']);
  });

  it('checks scope fields: scope_category, category and attribute flags; tolerates new categories and attribute order', () => {
    expect(rules([start({ scope_category: 'middle' })])).toEqual(['$[0].scope_category atof.scope_category']);
    expect(rules([start({ category: 'widget' })])).toEqual([]);
    expect(warned([start({ category: 'widget' })])).toEqual(['$[0].category atof.unknown_category']);
    expect(rules([start({ category: 7 })])).toEqual(['$[0].category atof.category']);
    expect(rules([start({ attributes: null })])).toEqual(['$[0].attributes atof.attributes']);
    expect(rules([start({ attributes: ['streaming', 'remote'] })])).toEqual([]);
    expect(warned([start({ attributes: ['streaming', 'remote'] })])).toEqual(['$[0].attributes[1] atof.attributes_set']);
    expect(warned([start({ attributes: ['remote', 'remote'] })])).toEqual(['$[0].attributes[1] atof.attributes_set']);
    expect(rules([start({ attributes: ['remote', 'streaming'] }), end({ attributes: ['streaming', 'remote'] })])).toEqual([]);
    expect(rules([start({ attributes: ['Remote'] })])).toEqual(['$[0].attributes[0] atof.attributes']);
    expect(rules([start({ attributes: ['parallel', 'vendor.flag'] })])).toEqual([]);
  });

  it('checks marks: no scope fields; a category null, known, or new (a warning)', () => {
    const mark = { ...start(), kind: 'mark', category: null, category_profile: null } as Record<string, unknown>;
    delete mark.scope_category;
    delete mark.attributes;
    expect(rules([mark])).toEqual([]);
    expect(rules([{ ...mark, attributes: [] }])).toEqual(['$[0].attributes atof.mark_field']);
    expect(warned([{ ...mark, category: 'widget' }])).toEqual(['$[0].category atof.unknown_category']);
    expect(rules([{ ...mark, category: 'custom' }])).toEqual([]);
    expect(validateAtofEvents([{ ...mark, category: 'custom' }], { strict: true }).map((e) => e.rule)).toEqual(['atof.custom_subtype']);
  });

  it('checks start/end pairs: identity fields, strict end > start, duplicates and unpaired ends', () => {
    expect(rules([start(), end({ name: 'Other' })])).toEqual(['$[1].name atof.pair_mismatch']);
    expect(rules([start(), end({ attributes: ['remote'] })])).toEqual(['$[1].attributes atof.pair_mismatch']);
    expect(rules([start(), end({ category: 'llm' })])).toEqual(['$[1].category atof.pair_mismatch']);
    expect(rules([start(), end({ parent_uuid: U2 })])).toEqual(['$[1].parent_uuid atof.pair_mismatch']);
    expect(rules([start(), end({ timestamp: start().timestamp })])).toEqual(['$[1].timestamp atof.end_not_after_start']);
    expect(rules([start(), start()])).toEqual(['$[1].scope_category atof.duplicate_start']);
    expect(rules([start(), end(), end()])).toEqual(['$[2].scope_category atof.duplicate_end']);
    expect(rules([end()])).toEqual(['$[0].scope_category atof.unpaired_end']);
    // An unpaired start is legal (a crash before the end).
    expect(rules([start()])).toEqual([]);
  });
});

describe('parseAtofJsonl', () => {
  it('parses objects, skips blank lines and reports malformed lines with line numbers', () => {
    const text = `${JSON.stringify(start())}\n\n{broken\n[1,2]\r\n${JSON.stringify(end())}\n`;
    const { events, errors } = parseAtofJsonl(text);
    expect(events.map((event: AtofEvent) => (event.kind === 'scope' ? event.scope_category : event.kind))).toEqual(['start', 'end']);
    expect(errors.map((error) => [error.line, error.rule])).toEqual([
      [3, 'atof.malformed_line'],
      [4, 'atof.malformed_line'],
    ]);
    expect(errors[0]?.message).toMatch(/^line 3 is not valid JSON/);
  });
});
