// `compare --json` as the tests read it: the report with the command's exit
// code, and what differs as one line each.
import { expect } from 'vitest';
import { cliInProcess } from './support.ts';

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
