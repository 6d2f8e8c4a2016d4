/**
 * The tree `view` draws, shared by the text and HTML renderers and built
 * from either an ATIF document or ATOF events: sessions, their turns, the
 * LLM and tool calls of each turn, and subagents nested where they ran.
 *
 * @module
 */

import { formatDuration } from '../io.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { cutShortText } from '../../formats/atif/convert/cut-short.ts';

export type ViewKind = 'session' | 'subagent' | 'turn' | 'llm' | 'tool' | 'mark' | 'scope';

export interface Tokens {
  prompt: number;
  completion: number;
  cached: number;
}

export interface ViewNode {
  kind: ViewKind;
  title: string;
  /** A short preview: the user message, tool arguments, the answer. */
  note?: string;
  /** Unix microseconds. */
  startUs?: number;
  endUs?: number;
  tokens?: Tokens;
  /** What the call cost in USD, when the recording says (ATIF `metrics.cost_usd`, a response's usage cost). */
  costUsd?: number;
  /** Set when this call failed: what went wrong, in one line. */
  error?: string;
  /**
   * The id the file gives a row whose title does not show it: an ATOF turn's `turn_id` (its title says which turn of
   * its session it is, `turn 2`, as a trajectory's does). In `--json` and the detail pane.
   */
  id?: string;
  /**
   * The session id a session or subagent row shows in its title (`session <id>`, `subagent <id>`, `remote session
   * <id>`): what code matches rows on, so that the title's wording is for reading only.
   */
  sessionId?: string;
  /** Set on a session shown under the tool call whose process it continues (`asRemoteSession`): an MCP server's. */
  remote?: true;
  /**
   * The records this node was built from (ATIF step, tool call and result; ATOF start and end events), for the HTML
   * detail pane; and what the reader of a tree needs of them (`runAgain`: a tool call's later run under the same
   * call id, counted once; `ending`: how an ATOF turn ended; `endings`: the ends a trajectory recorded for a turn
   * that did not complete).
   */
  source?: Record<string, unknown>;
  children: ViewNode[];
}

/**
 * Whether a node's span came from millisecond stamps (ATIF keeps invocation
 * times as epoch seconds to three decimals): a zero duration between two
 * such stamps means under a millisecond, not zero. Every renderer says so
 * the same way.
 */
export function underOneMillisecond(target: ViewNode): boolean {
  const { startUs, endUs } = target;
  return startUs !== undefined && endUs === startUs && startUs % 1000 === 0;
}

/** Sessions by position; an array is one. */
export interface RootList {
  readonly length: number;
  at(index: number): ViewNode | undefined;
}

/** The sessions of a list, built one at a time. */
export function* eachRoot(roots: RootList): Generator<ViewNode> {
  for (let index = 0; index < roots.length; index++) yield roots.at(index)!;
}

/**
 * Session ids made unique in one input, in order: the second session with
 * an id already seen is `<id>~2`, the third `<id>~3` (an agent run twice
 * into one ATOF file under the same session id). `AtofIndex` numbers its
 * sessions by the same rule.
 */
export function uniqueSessionIds(ids: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return ids.map((id) => {
    const count = (seen.get(id) ?? 0) + 1;
    seen.set(id, count);
    return count === 1 ? id : `${id}~${count}`;
  });
}

/** The session id a session or subagent tree shows in its title. */
export function sessionIdOf(root: ViewNode): string {
  return root.sessionId ?? root.title.replace(/^(session|subagent) /, '');
}

/**
 * A session shown under the tool call whose process it continues (an MCP server's, from its trajectory or its ATOF
 * lines): a subagent row, titled `remote session <id>`.
 */
export function asRemoteSession(root: ViewNode): void {
  root.kind = 'subagent';
  root.remote = true;
  root.title = root.title.replace(/^session /, 'remote session ');
}

/** A session tree read on its own (`treeFromAtif`) shown as a subagent of the session that references it. */
export function asSubagent(root: ViewNode): void {
  root.kind = 'subagent';
  root.title = root.title.replace(/^session /, 'subagent ');
}

/** Whether `target` is `tree` or under it. */
export function containsNode(tree: ViewNode, target: ViewNode): boolean {
  return tree === target || tree.children.some((child) => containsNode(child, target));
}

export function node(kind: ViewKind, title: string, extra: Partial<ViewNode> = {}): ViewNode {
  return { kind, title, children: [], ...extra };
}

/** Part types that hold text, in ATIF and in the providers' and frameworks' messages the adapters record. */
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);
/** Part types that hold a medium, and what each is called in a preview. */
const MEDIA_PARTS = new Map([
  ['image', 'image'],
  ['image_url', 'image'],
  ['input_image', 'image'],
  ['file', 'file'],
  ['input_file', 'file'],
  ['document', 'file'],
  ['audio', 'audio'],
  ['input_audio', 'audio'],
]);

/**
 * Content parts as the text a reader wants: the texts joined, each medium as `[image]`, `[image <its URL or path>]`
 * or `[file <its name>]`, whichever part shape holds it: ATIF's (`{type: "image", source: {media_type, path}}`), or a
 * recorded request's (an AI SDK `image`/`file` part, OpenAI `image_url`/`input_image`/`input_file`, LangChain's
 * blocks, Anthropic's `image`/`document`), whose bytes the adapters left out. Only a URL (`scheme://`) or ATIF's path is a place
 * to show: a data URL or a left-out blob is not. Undefined when the value is not a list of content parts.
 */
function contentPartsText(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const texts: string[] = [];
  for (const part of value) {
    if (typeof part !== 'object' || part === null) return undefined;
    const record = part as Record<string, unknown>;
    const type = typeof record.type === 'string' ? record.type : '';
    const kind = MEDIA_PARTS.get(type);
    if (TEXT_PARTS.has(type) && typeof record.text === 'string') texts.push(record.text);
    else if (kind !== undefined) {
      const where = placeOfMedium(record);
      texts.push(where === undefined ? `[${kind}]` : `[${kind} ${where}]`);
    } else return undefined;
  }
  return texts.join(' ');
}

/** Where a media part's medium is (a URL, an ATIF path), else its file name; undefined for inline bytes. */
function placeOfMedium(part: Record<string, unknown>): string | undefined {
  const inner = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);
  // ATIF's `source.path` is a place whatever it looks like (a file beside the trajectory); elsewhere only a URL is.
  const path = inner(part.source, 'path');
  if (typeof path === 'string' && path !== '') return path;
  for (const candidate of [part.image, inner(part.image_url, 'url'), part.url, inner(part.source, 'url'), part.file, inner(part.file, 'url'), part.data]) {
    if (typeof candidate === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(candidate)) return candidate;
  }
  const name = part.filename ?? inner(part.file, 'filename');
  return nonEmptyString(name);
}

/**
 * A message the ATIF builder wrote as the JSON text of its content parts (a user message with media in it), as the
 * parts; any other string as it is.
 */
function partsOfText(text: string): unknown {
  if (!text.startsWith('[{')) return text;
  try {
    const parsed = JSON.parse(text) as unknown;
    return contentPartsText(parsed) === undefined ? text : parsed;
  } catch {
    return text;
  }
}

/**
 * How a row says a turn that did not complete ended, read the same from ATOF's end mark and from the plugin's ATIF
 * (`extra.turn_ends`): `interrupted` (a run stopped for an approval is no failure), `cut short: <reason>` (its
 * session closed with calls of it open: `reason` says why), `failed: <error type>`, or nothing.
 */
export function turnEndLabel(status: unknown, errorType: unknown, reason?: unknown): string | undefined {
  if (status === 'interrupted') return nonEmptyString(reason) !== undefined ? cutShortText(nonEmptyString(reason)!) : 'interrupted';
  if (status !== 'failed') return undefined;
  return `failed: ${nonEmptyString(errorType) ?? 'error'}`;
}

/**
 * The guardrails that tripped in a turn, from its end's `guardrails` (each adapter records a verdict there:
 * docs/adapters/README.md, "A guardrail's verdict"): `guardrail tripped: <name> (<kind>)`, several joined. A turn a
 * guardrail stopped often shows nothing else amiss (it completed, with the guardrail's message as its answer).
 */
export function guardrailsNote(guardrails: unknown): string | undefined {
  if (!Array.isArray(guardrails)) return undefined;
  const tripped: string[] = [];
  for (const verdict of guardrails) {
    if (!isRecord(verdict) || verdict.tripwire_triggered !== true) continue;
    const label = nonEmptyString(verdict.name) ?? 'guardrail';
    const kind = nonEmptyString(verdict.kind);
    tripped.push(kind === undefined ? label : `${label} (${kind})`);
  }
  return tripped.length === 0 ? undefined : `guardrail tripped: ${tripped.join(', ')}`;
}

/** Adds `label` to a row's note, unless the note ends with it already (a turn ended twice the same way says it once). */
export function noteOnce(target: ViewNode, label: string): void {
  if (!(target.note ?? '').endsWith(label)) target.note = [target.note, label].filter(Boolean).join(' · ');
}

/**
 * A tool call the host ran again under its id after it failed (a tool end's `failed_attempts`, in its metadata):
 * `after N failed attempt(s)`, so a row observed as the last attempt's result still says the call did not go through
 * first time.
 */
export function failedAttemptsNote(metadata: unknown): string | undefined {
  const attempts = typeof metadata === 'object' && metadata !== null ? (metadata as { failed_attempts?: unknown }).failed_attempts : undefined;
  if (!Array.isArray(attempts) || attempts.length === 0) return undefined;
  return `after ${attempts.length} failed attempt${attempts.length === 1 ? '' : 's'}`;
}

/** One line of at most `max` characters, for previews. Content parts read as their text. */
export function preview(value: unknown, max = 72): string | undefined {
  let text: string;
  if (value === undefined || value === null) return undefined;
  const parts = contentPartsText(typeof value === 'string' ? partsOfText(value) : value);
  if (parts !== undefined) text = parts;
  else if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value);
    } catch {
      return undefined;
    }
  }
  text = text.replace(/\s+/g, ' ').trim();
  if (text === '' || text === '{}' || text === '""') return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Widens sessions, subagents and turns to cover their children (their own
 * timestamps are partial or missing). Calls keep their own span: a tool
 * call listed under the LLM call that requested it runs after that call.
 */
export function spanFromChildren(target: ViewNode): void {
  const widen = target.kind === 'session' || target.kind === 'subagent' || target.kind === 'turn';
  const ownEnd = target.endUs;
  for (const child of target.children) {
    spanFromChildren(child);
    if (!widen) continue;
    // The whole subtree counts: a subagent started by a tool call keeps its turn (and its parent) running.
    const [start, end] = extentOf(child);
    if (start !== undefined && (target.startUs === undefined || start < target.startUs)) target.startUs = start;
    if (end !== undefined && (target.endUs === undefined || end > target.endUs)) target.endUs = end;
  }
  // Instants only (marks, steps without a span) make a row an instant too, not one that lasted zero.
  if (widen && ownEnd === undefined && target.endUs === target.startUs && !target.children.some(hasEnd)) delete target.endUs;
}

/** Whether anything in a subtree recorded an end. */
function hasEnd(target: ViewNode): boolean {
  return target.endUs !== undefined || target.children.some(hasEnd);
}

/**
 * A node's duration as the views print it, or undefined for an instant (a
 * mark, a step without a span): `0.42µs`, `350µs`, `12.3ms`; a zero between
 * two millisecond-rounded stamps is `<1ms`, a measured zero `<1µs`.
 */
export function durationText(target: ViewNode): string | undefined {
  const { startUs, endUs } = target;
  if (startUs === undefined || endUs === undefined) return undefined;
  const us = endUs - startUs;
  if (!Number.isFinite(us) || us < 0) return '?';
  if (us === 0) return underOneMillisecond(target) ? '<1ms' : '<1µs';
  if (us < 10) return `${us.toFixed(2).replace(/\.?0+$/, '')}µs`;
  return formatDuration(us);
}

/** The earliest start and latest end (or start) in a subtree. */
function extentOf(target: ViewNode): [number | undefined, number | undefined] {
  let start = target.startUs;
  let end = target.endUs ?? target.startUs;
  for (const child of target.children) {
    const [childStart, childEnd] = extentOf(child);
    if (childStart !== undefined && (start === undefined || childStart < start)) start = childStart;
    if (childEnd !== undefined && (end === undefined || childEnd > end)) end = childEnd;
  }
  return [start, end];
}

/** Tokens of a node and everything under it. */
export function totalTokens(target: ViewNode): Tokens {
  const sum: Tokens = { prompt: 0, completion: 0, cached: 0 };
  const walk = (current: ViewNode): void => {
    if (current.tokens) {
      sum.prompt += current.tokens.prompt;
      sum.completion += current.tokens.completion;
      sum.cached += current.tokens.cached;
    }
    for (const child of current.children) walk(child);
  };
  walk(target);
  return sum;
}

/** Failed calls under a node (the node included). */
export function errorCount(target: ViewNode): number {
  let count = target.error !== undefined ? 1 : 0;
  for (const child of target.children) count += errorCount(child);
  return count;
}

/** A recorded cost in USD (`metrics.cost_usd`), or undefined. */
export function costOf(metrics: unknown): number | undefined {
  if (typeof metrics !== 'object' || metrics === null) return undefined;
  const cost = (metrics as Record<string, unknown>).cost_usd;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : undefined;
}

export function tokensOf(metrics: unknown): Tokens | undefined {
  if (typeof metrics !== 'object' || metrics === null) return undefined;
  const m = metrics as Record<string, unknown>;
  const n = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  if (m.prompt_tokens === undefined && m.completion_tokens === undefined && m.cached_tokens === undefined) return undefined;
  return { prompt: n(m.prompt_tokens), completion: n(m.completion_tokens), cached: n(m.cached_tokens) };
}
