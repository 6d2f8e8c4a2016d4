/**
 * `compare` for the terminal: one line per aligned pair (`=` same, `~`
 * changed, `-` only in a, `+` only in b) with the step ids of both runs,
 * the differences of a changed pair indented under it, then the totals of
 * both runs and their delta, and a verdict line.
 *
 * @module
 */

import { formatDuration, type Style } from '../io.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { preview } from '../view/model.ts';
import { formatCost } from '../view/rollup.ts';
import { shownDifferences, type Difference } from './align.ts';
import { onlyRecordedText, type Comparison, type JsonPair } from './compare-runs.ts';
import { signed, tokenChangeText, tokenDeltaText, totalsRows, unrecordedText } from './totals.ts';
import type { Tokens } from '../view/model.ts';

const MARK = { same: '=', changed: '~', 'only-a': '-', 'only-b': '+' } as const;

export function renderComparison(report: Comparison, style: Style): string {
  const lines: string[] = [];
  lines.push(style.bold(`a: ${safe(report.a.file)} (session ${safe(report.a.session)})`));
  lines.push(style.bold(`b: ${safe(report.b.file)} (session ${safe(report.b.session)})`));
  lines.push('');
  const width = Math.max(3, ...report.pairs.flatMap((pair) => [pair.a?.length ?? 1, pair.b?.length ?? 1]).map((n) => Math.min(n, 24)));
  lines.push(style.dim(`  ${'a'.padEnd(width)}  ${'b'.padEnd(width)}  step`));
  for (const pair of report.pairs) {
    const mark = MARK[pair.status];
    const ids = `${cell(pair.a, width)}  ${cell(pair.b, width)}`;
    const colour = pair.status === 'same' ? style.dim : pair.status === 'changed' ? style.yellow : pair.status === 'only-a' ? style.red : style.green;
    const where = pair.status === 'only-a' ? '  (only in a)' : pair.status === 'only-b' ? '  (only in b)' : '';
    const delta = deltaText(pair);
    lines.push(`${colour(`${mark} ${ids}  ${safe(pair.title)}${where}`)}${delta ? `  ${style.cyan(delta)}` : ''}`);
    for (const difference of shownDifferences(pair.differences)) lines.push(`${' '.repeat(width * 2 + 8)}${differenceText(difference)}`);
  }
  if (report.onlyRecorded.length > 0) lines.push('', ...report.onlyRecorded.map((note) => style.dim(safe(onlyRecordedText(note)))));
  lines.push('');
  lines.push(...totalsTable(report));
  lines.push('');
  const { changed, onlyA, onlyB, same } = report.summary;
  lines.push(
    report.equivalent
      ? style.green(`runs are equivalent: ${same} step${same === 1 ? '' : 's'}, same kinds, models, messages, tool calls, results and tokens`)
      : style.yellow(`runs differ: ${changed} changed step${changed === 1 ? '' : 's'}, ${onlyA} only in a, ${onlyB} only in b (${same} the same)`),
  );
  return `${lines.join('\n')}\n`;
}

function cell(id: string | null, width: number): string {
  if (id === null) return '·'.padEnd(width);
  const shown = id.length > 24 ? `…${id.slice(-23)}` : id;
  return safe(shown).padEnd(width);
}

function safe(text: string): string {
  return safeForTerminal(text);
}

function deltaText(pair: JsonPair): string {
  if (pair.a === null || pair.b === null) return '';
  const parts: string[] = [];
  const { delta } = pair;
  if (delta.durationUs !== null && delta.durationUs !== 0) parts.push(signed(delta.durationUs, formatDuration));
  const tokens = tokenDeltaText(delta, 'tokens');
  if (tokens) parts.push(tokens);
  if (delta.costUsd !== null && delta.costUsd !== 0) parts.push(signed(delta.costUsd, formatCost));
  parts.push(...unrecordedText(delta));
  return parts.join('  ');
}

function value(text: unknown): string {
  if (text === null || text === undefined) return '(none)';
  return safe(preview(text, 60) ?? JSON.stringify(text));
}

function differenceText(difference: Difference): string {
  const label = difference.tool !== undefined ? `${difference.field.replace('tool.', `${difference.tool} `)}` : difference.field;
  if (difference.field === 'tokens') return tokenChangeText(difference.a as Tokens, difference.b as Tokens);
  if (difference.field === 'tools') return `tools: ${(difference.a as string[]).join(', ') || '(none)'} → ${(difference.b as string[]).join(', ') || '(none)'}`;
  return `${safe(label)}: ${value(difference.a)} → ${value(difference.b)}`;
}

function totalsTable(report: Comparison): string[] {
  const rows = totalsRows(report, '-');
  const widths = [0, 1, 2, 3].map((column) => Math.max(['totals', 'a', 'b', 'delta'][column]!.length, ...rows.map((row) => row[column]!.length)));
  const line = (row: readonly string[]) => row.map((text, column) => (column === 0 ? text.padEnd(widths[0]!) : text.padStart(widths[column]!))).join('  ');
  return [line(['totals', 'a', 'b', 'delta']), ...rows.map(line)];
}
