/**
 * The validators and the `nat` convert profile against the material the
 * upstreams publish: every file in ../shared/peers/manifest.json gets the
 * upstream's verdict, the reference converter's six examples convert to its
 * trajectories byte for byte, and each variant (ids as UUIDs, lines
 * reversed, integer timestamps, a future category, swapped lines, a newer
 * minor version) converts like its ordered original.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { convertNatEvents, serializeNatTrajectory } from '../../src/formats/atif/convert/nat/index.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { manifest, natExamples, normalizeIdsAndClocks, peerPath, peersUnavailable, variants } from '../support/peers.ts';

const skip = peersUnavailable !== undefined;
const reason = skip ? ` (skipped: ${peersUnavailable})` : '';

function verdict(file: string, kind: 'atif' | 'atof'): { verdict: 'valid' | 'invalid'; errors: string[] } {
  const text = readFileSync(peerPath(file), 'utf8');
  let errors: string[];
  if (kind === 'atif') {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return { verdict: 'invalid', errors: ['not JSON'] };
    }
    errors = validateAtif(doc).map((error) => `${error.path} ${error.rule}`);
  } else {
    const parsed = parseAtofJsonl(text);
    errors = [...parsed.errors, ...validateAtofEvents(parsed.events)].map((error) => `${error.path} ${error.rule}`);
  }
  return { verdict: errors.length === 0 ? 'valid' : 'invalid', errors };
}

const events = (file: string) => parseAtofJsonl(readFileSync(peerPath(file), 'utf8')).events;

describe.skipIf(skip)(`upstream verdicts from validateAtif / validateAtofEvents${reason}`, () => {
  const entries = manifest();
  it.each(entries.map((entry) => [entry.file, entry] as const))('%s', (_file, entry) => {
    const result = verdict(entry.file, entry.kind);
    expect(result.verdict, result.errors.slice(0, 5).join('\n')).toBe(entry.expect);
  });

  it('agrees with every upstream verdict in the manifest', () => {
    const agreeing = entries.filter((entry) => verdict(entry.file, entry.kind).verdict === entry.expect).length;
    console.log(`upstream manifest: ${agreeing}/${entries.length} files get the upstream verdict`);
    expect(agreeing).toBe(entries.length);
    expect(entries.length).toBeGreaterThanOrEqual(34);
  });

  it('reads the reference examples\' ids (root-001) and the spec example with warnings only', () => {
    const result = validateAtofEvents(events('nat-reference-converter/exmp01_atof.jsonl'));
    expect(result).toEqual([]);
    expect(new Set(result.warnings.map((warning) => warning.rule))).toEqual(new Set(['atof.uuid_format']));
    expect(result.version).toBe('0.1');
  });
});

describe.skipIf(skip)(`the nat profile against the reference converter's examples${reason}`, () => {
  it.each(natExamples())('%s converts to the reference trajectory, byte for byte', (name) => {
    const trajectory = convertNatEvents(events(`nat-reference-converter/${name}_atof.jsonl`));
    const expected = readFileSync(peerPath(`nat-reference-converter/${name}_atif.json`), 'utf8');
    expect(trajectory).toEqual(JSON.parse(expected));
    expect(serializeNatTrajectory(trajectory)).toBe(expected);
    expect(validateAtif(trajectory)).toEqual([]);
  });

  it.each(variants().filter((name) => !name.includes('atof-1.0')))('variant %s converts like its ordered original', (name) => {
    const example = name.slice(0, 'exmpNN'.length);
    const original = convertNatEvents(events(`nat-reference-converter/${example}_atof.jsonl`));
    const variant = convertNatEvents(events(`variants/${name}`));
    expect(normalizeIdsAndClocks(variant)).toEqual(normalizeIdsAndClocks(original));
  });

  it('refuses the variant with a major version it does not know, naming the version', () => {
    const [name] = variants().filter((variant) => variant.includes('atof-1.0'));
    const result = validateAtofEvents(events(`variants/${name}`));
    expect(result.map((error) => error.rule)).toEqual(['atof.unsupported_version']);
    expect(result[0]?.message).toContain('"1.0"');
    expect(result.version).toBe('1.0');
  });
});
