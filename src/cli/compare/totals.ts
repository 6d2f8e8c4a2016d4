/**
 * The totals table `compare` prints and draws: one row per figure, the two
 * runs and their difference, formatted once for the terminal and the page.
 */

import { formatCount, formatDuration } from '../io.ts';
import { formatCost } from '../view/rollup.ts';
import type { Tokens } from '../view/model.ts';
import { tokenText } from '../view/text.ts';
import type { RunTotals, StepDelta } from './align.ts';
import type { Comparison } from './compare-runs.ts';

/** `+3`, `−1.2 s`, `±0`: a difference with its sign always shown. */
export function signed(value: number, format: (n: number) => string): string {
  return `${value > 0 ? '+' : value < 0 ? '−' : '±'}${format(Math.abs(value))}`;
}

/**
 * A pair's change in tokens, `+12 tokens`, with the cached ones when they
 * changed (`+12 tokens (−4 cached)`, cached being part of the input);
 * '' when no count changed. The terminal says `tokens`, the page `tok`.
 */
export function tokenDeltaText(delta: { promptTokens: number; completionTokens: number; cachedTokens: number }, unit: string): string {
  if (delta.promptTokens === 0 && delta.completionTokens === 0 && delta.cachedTokens === 0) return '';
  const cached = delta.cachedTokens !== 0 ? ` (${signed(delta.cachedTokens, formatCount)} cached)` : '';
  return `${signed(delta.promptTokens + delta.completionTokens, formatCount)} ${unit}${cached}`;
}

/** What a pair's delta leaves out, `cost not recorded on b`: one step records the figure, its counterpart does not. */
export function unrecordedText(delta: StepDelta): string[] {
  const on = delta.unrecordedOn ?? {};
  return [on.tokens !== undefined ? `tokens not recorded on ${on.tokens}` : '', on.costUsd !== undefined ? `cost not recorded on ${on.costUsd}` : ''].filter(Boolean);
}

/** A `tokens` difference, `512 in (128 cached) / 90 out → …`, as the timeline writes tokens. */
export function tokenChangeText(a: Tokens, b: Tokens): string {
  return `tokens: ${tokenText(a)} → ${tokenText(b)}`;
}

/**
 * `[figure, a, b, delta]` rows; `missing` stands for a figure a run did not record. Where one run records a figure
 * (tokens, cost) the other records nowhere, the delta says `not recorded on b`: a difference against nothing is none.
 */
export function totalsRows(report: Pick<Comparison, 'totals' | 'onlyRecorded'>, missing: string): [string, string, string, string][] {
  const { a, b, delta } = report.totals;
  const nowhere = (fact: 'tokens' | 'cost', run: 'a' | 'b'): boolean => {
    const figures = run === 'a' ? a : b;
    const recorded = fact === 'cost' ? figures.costUsd !== null : figures.promptTokens + figures.completionTokens + figures.cachedTokens > 0;
    return !recorded && report.onlyRecorded.some((note) => note.fact === fact && note.run !== run);
  };
  const unrecorded = (fact: 'tokens' | 'cost'): string | undefined => (['a', 'b'] as const).map((run) => (nowhere(fact, run) ? `not recorded on ${run}` : undefined)).find((text) => text !== undefined);
  const maybe = (value: number | null, format: (n: number) => string) => (value === null ? missing : format(value));
  const maybeSigned = (value: number | null, format: (n: number) => string) => (value === null ? missing : signed(value, format));
  const counted = (label: string, key: 'steps' | 'llmCalls' | 'toolCalls' | 'errors'): [string, string, string, string] => [
    label,
    String(a[key]),
    String(b[key]),
    signed(delta[key], String),
  ];
  const tokens = (label: string, key: 'promptTokens' | 'completionTokens' | 'cachedTokens'): [string, string, string, string] => [
    label,
    formatCount(a[key]),
    formatCount(b[key]),
    unrecorded('tokens') ?? signed(delta[key], formatCount),
  ];
  return [
    counted('steps', 'steps'),
    counted('LLM calls', 'llmCalls'),
    counted('tool calls', 'toolCalls'),
    counted('errors', 'errors'),
    tokens('prompt tokens', 'promptTokens'),
    tokens('completion tokens', 'completionTokens'),
    tokens('cached tokens', 'cachedTokens'),
    ['cost', maybe(a.costUsd, formatCost), maybe(b.costUsd, formatCost), unrecorded('cost') ?? maybeSigned(delta.costUsd, formatCost)],
    ['duration', maybe(a.durationUs, formatDuration), maybe(b.durationUs, formatDuration), maybeSigned(delta.durationUs, formatDuration)],
  ];
}
