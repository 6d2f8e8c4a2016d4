/**
 * The terminal rendering of a view tree: one line per node with its start
 * offset from the session start (the timeline), tree branches, the title,
 * duration, tokens and a preview. Failed calls are marked `✗ … ERROR …`
 * (red when styling is on) so they stand out in plain text too.
 *
 * @module
 */

import { formatCount, type Style } from '../io.ts';
import { durationText, type Tokens, type ViewNode } from './model.ts';
import { formatCost, isRollupRow, rollupOf, type Figures } from './rollup.ts';

export function renderText(root: ViewNode, style: Style): string {
  const origin = root.startUs;
  const lines: string[] = [];
  const header = headerLine(root, style);
  lines.push(header);
  const walk = (current: ViewNode, prefix: string): void => {
    current.children.forEach((child, index) => {
      const last = index === current.children.length - 1;
      lines.push(`${offset(child, origin, style)}  ${style.dim(prefix + (last ? '└─ ' : '├─ '))}${describe(child, style)}`);
      walk(child, prefix + (last ? '   ' : '│  '));
    });
  };
  walk(root, '');
  return `${lines.join('\n')}\n`;
}

function headerLine(root: ViewNode, style: Style): string {
  const parts = [style.bold(root.title)];
  if (root.note) parts.push(style.dim(`(${root.note})`));
  const duration = durationText(root);
  if (duration) parts.push(duration);
  const { own, totals } = rollupOf(root);
  parts.push(callCountsText(totals));
  parts.push(...figuresText(totals));
  if (totals.errors > 0) parts.push(style.red(countText(totals.errors, 'error')));
  const ownText = ownFiguresText(own, totals);
  if (ownText) parts.push(style.dim(ownText));
  return `${' '.repeat(8)}  ${parts.join('  ')}`;
}

function describe(current: ViewNode, style: Style): string {
  const failed = current.error !== undefined;
  const title = current.kind === 'session' || current.kind === 'subagent' || current.kind === 'turn' ? style.bold(current.title) : current.title;
  const parts = [failed ? style.red(`✗ ${title}`) : title];
  const duration = durationText(current);
  if (duration) parts.push(style.cyan(duration));
  if (isRollupRow(current)) {
    const { own, totals } = rollupOf(current);
    const figures = figuresText(totals);
    if (figures.length > 0) parts.push(style.yellow(figures.join(' ')));
    if (totals.errors > 0) parts.push(style.red(`Σ ${countText(totals.errors, 'error')}`));
    const ownText = ownFiguresText(own, totals);
    if (ownText) parts.push(style.dim(ownText));
  } else {
    const tokens = current.tokens ? tokenCell(current.tokens) : '';
    if (tokens) parts.push(style.yellow(tokens));
    if (current.costUsd !== undefined) parts.push(style.yellow(formatCost(current.costUsd)));
  }
  if (failed) parts.push(style.red(`ERROR ${current.error}`));
  else if (current.note) parts.push(style.dim(current.note));
  return parts.join('  ');
}

export function tokenText(tokens: Tokens): string {
  const cached = tokens.cached > 0 ? ` (${formatCount(tokens.cached)} cached)` : '';
  return `${formatCount(tokens.prompt)} in${cached} / ${formatCount(tokens.completion)} out`;
}

/**
 * `tokenText`, or '' when there are no tokens at all: the rule of every row
 * that lists tokens (the timeline, the served index, compare's steps), so a
 * row never leaves out the cached tokens its totals count.
 */
export function tokenCell(tokens: Tokens): string {
  return tokens.prompt + tokens.completion + tokens.cached > 0 ? tokenText(tokens) : '';
}

/** The tokens of figures that count them (a rollup, an index row, a compared step). */
export function tokensOf(figures: { promptTokens: number; completionTokens: number; cachedTokens: number }): Tokens {
  return { prompt: figures.promptTokens, completion: figures.completionTokens, cached: figures.cachedTokens };
}

/** `1 tool call`, `2 tool calls`: the terminal and the HTML page count the same way. */
export function countText(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** A rollup's LLM and tool calls, as words: `5 LLM calls, 1 tool call`. */
export function callCountsText(figures: Figures): string {
  return `${countText(figures.llmCalls, 'LLM call')}, ${countText(figures.toolCalls, 'tool call')}`;
}

/** Tokens and cost of a rollup, as words (nothing when it has neither). */
export function figuresText(figures: Figures): string[] {
  const parts: string[] = [];
  const tokens = tokenCell(tokensOf(figures));
  if (tokens) parts.push(tokens);
  if (figures.costUsd !== null) parts.push(formatCost(figures.costUsd));
  return parts;
}

/** `own: …` when nested subagents make a row's own figures differ from its totals. */
function ownFiguresText(own: Figures, totals: Figures): string | undefined {
  const same = own.promptTokens === totals.promptTokens && own.completionTokens === totals.completionTokens && own.cachedTokens === totals.cachedTokens && own.costUsd === totals.costUsd && own.toolCalls === totals.toolCalls;
  if (same) return undefined;
  const figures = figuresText(own);
  // No tokens of its own beside totals that have some (every call in nested subagents): said, not left out.
  if (own.promptTokens + own.completionTokens + own.cachedTokens === 0 && totals.promptTokens + totals.completionTokens + totals.cachedTokens > 0) figures.unshift('0 in / 0 out');
  const counts = [countText(own.toolCalls, 'tool call')];
  if (totals.errors > 0) counts.push(countText(own.errors, 'error'));
  return `(own: ${[...figures, ...counts].join(', ')})`;
}


function offset(current: ViewNode, origin: number | undefined, style: Style): string {
  if (origin === undefined || current.startUs === undefined) return ' '.repeat(8);
  const seconds = (current.startUs - origin) / 1e6;
  return style.dim(`+${seconds.toFixed(3)}s`.padStart(8));
}
