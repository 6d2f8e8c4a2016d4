/**
 * Rollups: the figures of a session, turn or subagent row, its own and its
 * totals. `totals` counts everything under the row; `own` stops at nested
 * subagents, so a parent whose totals are far above its own figures points
 * at the expensive branch. Used by the terminal view, the HTML timeline,
 * `view --json` and `compare`.
 *
 * @module
 */

import type { ViewNode } from './model.ts';

export interface Figures {
  llmCalls: number;
  toolCalls: number;
  /** Failed calls (and denied approvals of calls that did not fail for it, unmatched API errors). */
  errors: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Summed from the calls that recorded a cost; null when none did. */
  costUsd: number | null;
  /**
   * Wall time in microseconds. In `totals` the row's span; in `own` that
   * span less the time nested subagents were running. Null without timestamps.
   */
  durationUs: number | null;
}

export interface Rollup {
  own: Figures;
  totals: Figures;
}

/** Rows that carry a rollup. */
export function isRollupRow(target: ViewNode): boolean {
  return target.kind === 'session' || target.kind === 'subagent' || target.kind === 'turn';
}

function emptyFigures(): Figures {
  return { llmCalls: 0, toolCalls: 0, errors: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: null, durationUs: null };
}

function addNode(figures: Figures, current: ViewNode): void {
  if (current.kind === 'llm') figures.llmCalls += 1;
  // A call run again under its id (from-atof.ts) is the call counted already.
  if (current.kind === 'tool' && current.source?.runAgain !== true) figures.toolCalls += 1;
  if (current.error !== undefined) figures.errors += 1;
  if (current.tokens) {
    figures.promptTokens += current.tokens.prompt;
    figures.completionTokens += current.tokens.completion;
    figures.cachedTokens += current.tokens.cached;
  }
  if (current.costUsd !== undefined) figures.costUsd = (figures.costUsd ?? 0) + current.costUsd;
}

const spanOf = (current: ViewNode): number | null =>
  current.startUs !== undefined && current.endUs !== undefined ? Math.max(0, current.endUs - current.startUs) : null;

/** The rollup of `target` (any node; meaningful for sessions, turns and subagents). */
export function rollupOf(target: ViewNode): Rollup {
  const own = emptyFigures();
  const totals = emptyFigures();
  const nested: ViewNode[] = [];
  const walk = (current: ViewNode, inOwn: boolean): void => {
    addNode(totals, current);
    if (inOwn) addNode(own, current);
    for (const child of current.children) {
      const childOwn = inOwn && child.kind !== 'subagent';
      if (inOwn && !childOwn) nested.push(child);
      walk(child, childOwn);
    }
  };
  walk(target, true);
  totals.durationUs = spanOf(target);
  own.durationUs = totals.durationUs === null ? null : Math.max(0, totals.durationUs - coveredBy(nested, target));
  // Float sums of costs: keep them to the precision prices are quoted in.
  for (const figures of [own, totals]) if (figures.costUsd !== null) figures.costUsd = roundCost(figures.costUsd);
  return { own, totals };
}

/** Microseconds of `target`'s span during which at least one of `inner` ran (overlapping subagents counted once). */
function coveredBy(inner: readonly ViewNode[], target: ViewNode): number {
  const from = target.startUs ?? 0;
  const to = target.endUs ?? from;
  const spans = inner
    .filter((child) => child.startUs !== undefined && child.endUs !== undefined)
    .map((child) => [Math.max(from, child.startUs!), Math.min(to, child.endUs!)] as const)
    .filter(([start, end]) => end > start)
    .sort((left, right) => left[0] - right[0]);
  let covered = 0;
  let reach = -Infinity;
  for (const [start, end] of spans) {
    if (end <= reach) continue;
    covered += end - Math.max(start, reach);
    reach = end;
  }
  return covered;
}

export function roundCost(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}

/** `$0.0123`: a cost with the digits that matter. */
export function formatCost(usd: number): string {
  const digits = Math.abs(usd) >= 1 ? 2 : Math.abs(usd) >= 0.01 ? 4 : 6;
  return `$${usd.toFixed(digits).replace(/(\.\d*?[1-9])0+$/, '$1').replace(/\.0+$/, '')}`;
}
