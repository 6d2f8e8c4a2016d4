// `compare --json` as the tests read it: the report with the command's exit
// code, and what differs as one line each.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { cliInProcess } from './support.ts';
import { filesOf } from './view-json.ts';

export interface Compared {
  code: number;
  equivalent: boolean;
  pairs: { status: string; title: string; differences: { field: string; tool?: string; a: unknown; b: unknown }[] }[];
  onlyRecorded: { fact: string; run: string; values: string[] }[];
}

/** `compare --json` of two runs, with its exit code. */
export async function compared(a: string, b: string): Promise<Compared> {
  const result = await cliInProcess(['compare', a, b, '--json']);
  expect(result.stderr).toBe('');
  return { code: result.code, ...(JSON.parse(result.stdout) as Omit<Compared, 'code'>) };
}

/** What differs, one line per difference (`field: a → b`) or unpaired step (`only-b turn`: its kind, the title's first word). */
export const differencesOf = (report: Compared): string[] =>
  report.pairs.flatMap((pair) =>
    pair.status === 'changed' ? pair.differences.map((difference) => `${difference.field}${difference.tool ? ` ${difference.tool}` : ''}: ${String(difference.a)} → ${String(difference.b)}`) : pair.status === 'same' ? [] : [`${pair.status} ${pair.title.split(' ')[0]}`],
  );

/**
 * One run's two files (the plugin's `atif/` and `atof/` under `dir`) agree as the CLI reads them: `compare` finds no
 * difference between them, and `convert` of the ATOF file writes the trajectory byte for byte (`agentVersion` is the
 * plugin's setting, which the ATOF file does not hold).
 */
export async function expectRunFilesAgree(dir: string, agentVersion: string): Promise<void> {
  const files = filesOf(dir);
  const report = await compared(files.atif, files.atof);
  expect(differencesOf(report)).toEqual([]);
  expect(report.onlyRecorded).toEqual([]);
  const converted = path.join(dir, 'converted');
  expect((await cliInProcess(['convert', files.atof, '--out', converted, '--agent-version', agentVersion])).code).toBe(0);
  const written = readdirSync(converted);
  expect(written).toHaveLength(1);
  expect(readFileSync(path.join(converted, written[0]!), 'utf8')).toBe(readFileSync(files.atif, 'utf8'));
}
