/**
 * The CLI against the upstream material in ../shared/peers: `validate` gives
 * every manifest file the upstream's verdict, `convert --profile nat` writes
 * the reference converter's trajectories byte for byte, and `convert` reads
 * lines out of order and refuses an unknown major ATOF version.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { manifest, natExamples, peerPath, peersUnavailable } from '../support/peers.ts';
import { cli, cliInProcess, tempDir } from './support.ts';

const skip = peersUnavailable !== undefined;
const reason = skip ? ` (skipped: ${peersUnavailable})` : '';

describe.skipIf(skip)(`nemo-relay-hooks validate on the upstream files${reason}`, () => {
  it('gives every manifest file the upstream verdict', () => {
    const entries = manifest();
    const result = cli(['validate', ...entries.map((entry) => peerPath(entry.file))]);
    const verdicts = new Map<string, string>();
    for (const line of result.stdout.split('\n')) {
      const match = /^([✓✗]) (.+?): (valid|\d|cannot)/.exec(line);
      if (match !== null) verdicts.set(match[2] as string, match[1] === '✓' ? 'valid' : 'invalid');
    }
    const disagreeing = entries.filter((entry) => verdicts.get(peerPath(entry.file)) !== entry.expect).map((entry) => entry.file);
    console.log(`validate CLI: ${entries.length - disagreeing.length}/${entries.length} upstream files get the upstream verdict`);
    expect(disagreeing).toEqual([]);
    expect(result.code).toBe(1);
  });

  it('reports the ATOF version it read, and refuses an unknown major version in one clear line', async () => {
    const ok = await cliInProcess(['validate', peerPath('variants/exmp02-uuids-atof-0.2.jsonl')]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/valid \(ATOF 0\.2, 8 events/);
    const refused = await cliInProcess(['validate', peerPath('variants/exmp02-uuids-atof-1.0.jsonl')]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(': $[0].atof_version: atof.unsupported_version: atof_version "1.0" is major version 1');
    expect(refused.stdout).toMatch(/✗ .*: 1 error \(ATOF 1\.0, 8 events\)/);
  });
});

describe.skipIf(skip)(`nemo-relay-hooks convert on the reference converter's examples${reason}`, () => {
  it.each(natExamples())('--profile nat turns %s into the reference trajectory, byte for byte', async (name) => {
    const out = tempDir();
    const result = await cliInProcess(['convert', peerPath(`nat-reference-converter/${name}_atof.jsonl`), '--out', out, '--profile', 'nat']);
    expect(result.code, result.stderr).toBe(0);
    const files = readdirSync(out);
    expect(files).toHaveLength(1);
    expect(readFileSync(path.join(out, files[0] as string), 'utf8')).toBe(readFileSync(peerPath(`nat-reference-converter/${name}_atif.json`), 'utf8'));
  });

  it('converts lines in reverse order like the ordered file, in both profiles', async () => {
    for (const profile of ['native', 'nat']) {
      const ordered = tempDir();
      const reversed = tempDir();
      expect((await cliInProcess(['convert', peerPath('variants/exmp02-uuids.jsonl'), '--out', ordered, '--profile', profile])).code).toBe(0);
      expect((await cliInProcess(['convert', peerPath('variants/exmp02-uuids-reversed.jsonl'), '--out', reversed, '--profile', profile])).code).toBe(0);
      const [file] = readdirSync(ordered);
      expect(readdirSync(reversed)).toEqual([file]);
      const steps = JSON.parse(readFileSync(path.join(reversed, file as string), 'utf8')).steps as unknown[];
      expect(steps.length, profile).toBeGreaterThan(0);
      expect(readFileSync(path.join(reversed, file as string), 'utf8')).toBe(readFileSync(path.join(ordered, file as string), 'utf8'));
    }
  });

  it('refuses a major ATOF version it does not know, before writing anything', async () => {
    const out = tempDir();
    const result = await cliInProcess(['convert', peerPath('variants/exmp02-uuids-atof-1.0.jsonl'), '--out', out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('atof_version "1.0" is major version 1; this reader knows ATOF 0.x only');
    expect(readdirSync(out)).toEqual([]);
  });
});
