/**
 * The terminal rendering of a view tree: one line per node with its start
 * offset from the session start (the timeline), tree branches, the title,
 * duration, tokens and a preview. Failed calls are marked `✗ … ERROR …`
 * (red when styling is on) so they stand out in plain text too.
 *
 * @module
 */

import { formatCount, formatDuration, type Style } from '../io.ts';
import { errorCount, totalTokens, type Tokens, type ViewNode } from './model.ts';

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
  const duration = durationOf(root);
  if (duration) parts.push(duration);
  const tokens = totalTokens(root);
  if (tokens.prompt + tokens.completion + tokens.cached > 0) parts.push(tokenText(tokens));
  const errors = errorCount(root);
  if (errors > 0) parts.push(style.red(`${errors} error${errors === 1 ? '' : 's'}`));
  return `${' '.repeat(8)}  ${parts.join('  ')}`;
}

function describe(current: ViewNode, style: Style): string {
  const failed = current.error !== undefined;
  const title = current.kind === 'session' || current.kind === 'subagent' || current.kind === 'turn' ? style.bold(current.title) : current.title;
  const parts = [failed ? style.red(`✗ ${title}`) : title];
  const duration = durationOf(current);
  if (duration) parts.push(style.cyan(duration));
  const tokens = current.kind === 'subagent' ? totalTokens(current) : current.tokens;
  if (tokens && tokens.prompt + tokens.completion + tokens.cached > 0) parts.push(style.yellow(tokenText(tokens)));
  if (failed) parts.push(style.red(`ERROR ${current.error}`));
  else if (current.note) parts.push(style.dim(current.note));
  return parts.join('  ');
}

export function tokenText(tokens: Tokens): string {
  const cached = tokens.cached > 0 ? ` (${formatCount(tokens.cached)} cached)` : '';
  return `${formatCount(tokens.prompt)} in${cached} / ${formatCount(tokens.completion)} out`;
}

function durationOf(current: ViewNode): string | undefined {
  if (current.startUs === undefined || current.endUs === undefined) return undefined;
  return formatDuration(Math.max(0, current.endUs - current.startUs));
}

function offset(current: ViewNode, origin: number | undefined, style: Style): string {
  if (origin === undefined || current.startUs === undefined) return ' '.repeat(8);
  const seconds = (current.startUs - origin) / 1e6;
  return style.dim(`+${seconds.toFixed(3)}s`.padStart(8));
}
