/**
 * Aligning two runs step by step, and what differs per pair.
 *
 * A longest common subsequence over each step's kind, model and tool names
 * pairs the steps that match exactly, so an inserted or removed step does
 * not shift every later pair. Between two such anchors the leftover steps
 * are aligned again on looser keys (kind and tool names, then kind alone),
 * so a step whose model or tools changed still pairs with its counterpart
 * instead of showing as one removed and one added step.
 *
 * @module
 */

import { roundCost, type Figures } from '../view/rollup.ts';
import { canonical, isUnfinishedEnd, type RunStep, type ToolCallFacts } from './steps.ts';

export type PairStatus = 'same' | 'changed' | 'only-a' | 'only-b';

export interface Difference {
  /** `message`, `model`, `turn` (how it ended), `tools` (names or count), `tool.arguments`, `tool.input`, `tool.result`, `tool.error`, `tool.approval`, `error`, `tokens`. */
  field: string;
  /** The tool call it concerns (`tool.*` fields). */
  tool?: string;
  a: unknown;
  b: unknown;
}

export interface StepDelta {
  /** b − a, null when either side has no timing. */
  durationUs: number | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** b − a; null when neither recorded a cost, or when one of two paired steps did not (`unrecordedOn`). */
  costUsd: number | null;
  /**
   * The run whose step of the pair does not record a figure the other's does: a difference against "not recorded" is
   * none, so that figure's delta is 0 (tokens) or null (cost) and the totals' delta leaves the pair out.
   */
  unrecordedOn?: { tokens?: 'a' | 'b'; costUsd?: 'a' | 'b' };
}

export interface Pair {
  a: RunStep | null;
  b: RunStep | null;
  status: PairStatus;
  differences: Difference[];
  delta: StepDelta;
}

const KEYS: readonly ((step: RunStep) => string)[] = [
  (step) => `${step.kind}|${step.model ?? ''}|${step.toolCalls.map((call) => call.name).join(',')}`,
  (step) => `${step.kind}|${step.toolCalls.map((call) => call.name).join(',')}`,
  (step) => step.kind,
];

/** Pairs of `a` and `b` in run order; unpaired steps have `null` on the other side. */
export function alignSteps(a: readonly RunStep[], b: readonly RunStep[]): Pair[] {
  const matched = alignLevel(a, b, 0);
  return matched.map(([left, right]) => pairOf(left, right));
}

function alignLevel(a: readonly RunStep[], b: readonly RunStep[], level: number): [RunStep | null, RunStep | null][] {
  if (a.length === 0 || b.length === 0 || level >= KEYS.length) {
    return [...a.map((step) => [step, null] as [RunStep, null]), ...b.map((step) => [null, step] as [null, RunStep])];
  }
  const key = KEYS[level]!;
  const anchors = lcs(a.map(key), b.map(key));
  const out: [RunStep | null, RunStep | null][] = [];
  let i = 0;
  let j = 0;
  for (const [ai, bj] of [...anchors, [a.length, b.length] as const]) {
    out.push(...alignLevel(a.slice(i, ai), b.slice(j, bj), level + 1));
    if (ai < a.length && bj < b.length) out.push([a[ai]!, b[bj]!]);
    i = ai + 1;
    j = bj + 1;
  }
  return out;
}

/** Above this many cells the table would not fit in memory comfortably: pair in order instead (rare: runs share a prefix and suffix first). */
const MAX_TABLE_CELLS = 25_000_000;

/** Index pairs of one longest common subsequence of `a` and `b` (the common prefix and suffix taken first, cheaply). */
function lcs(a: readonly string[], b: readonly string[]): [number, number][] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const pairs: [number, number][] = [];
  for (let k = 0; k < head; k++) pairs.push([k, k]);
  for (const [i, j] of lcsTable(a.slice(head, a.length - tail), b.slice(head, b.length - tail))) pairs.push([i + head, j + head]);
  for (let k = tail; k > 0; k--) pairs.push([a.length - k, b.length - k]);
  return pairs;
}

function lcsTable(a: readonly string[], b: readonly string[]): [number, number][] {
  if ((a.length + 1) * (b.length + 1) > MAX_TABLE_CELLS) return greedy(a, b);
  const n = a.length;
  const m = b.length;
  // lengths[i][j]: the LCS length of a[i..] and b[j..], in one flat array.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[at(i, j)] = a[i] === b[j] ? lengths[at(i + 1, j + 1)]! + 1 : Math.max(lengths[at(i + 1, j)]!, lengths[at(i, j + 1)]!);
    }
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i += 1;
      j += 1;
    } else if (lengths[at(i + 1, j)]! >= lengths[at(i, j + 1)]!) i += 1;
    else j += 1;
  }
  return pairs;
}

/** In-order matching without the table: each step of `a` pairs with the next equal step of `b`. */
function greedy(a: readonly string[], b: readonly string[]): [number, number][] {
  const pairs: [number, number][] = [];
  let j = 0;
  for (let i = 0; i < a.length && j < b.length; i++) {
    const found = b.indexOf(a[i]!, j);
    if (found === -1) continue;
    pairs.push([i, found]);
    j = found + 1;
  }
  return pairs;
}

function pairOf(a: RunStep | null, b: RunStep | null): Pair {
  const differences = a && b ? differencesOf(a, b) : [];
  const status: PairStatus = a === null ? 'only-b' : b === null ? 'only-a' : differences.length > 0 ? 'changed' : 'same';
  return { a, b, status, differences, delta: deltaOf(a, b) };
}

function differencesOf(a: RunStep, b: RunStep): Difference[] {
  const out: Difference[] = [];
  if ((a.model ?? null) !== (b.model ?? null)) out.push({ field: 'model', a: a.model ?? null, b: b.model ?? null });
  if ((a.message ?? null) !== (b.message ?? null)) out.push({ field: 'message', a: a.message ?? null, b: b.message ?? null });
  // Only when both files record how turns ended; a trajectory records only the ends that did not complete, so against
  // one those are compared.
  if (a.turnEnds !== undefined && b.turnEnds !== undefined) {
    const unfinished = a.turnEndsUnfinishedOnly === true || b.turnEndsUnfinishedOnly === true;
    const [endsA, endsB] = [a, b].map((step) => {
      const kept = unfinished ? step.turnEnds!.filter(isUnfinishedEnd) : step.turnEnds!;
      // Nothing left: the ATOF turn's own words (`completed`, `no end recorded`).
      return (kept.length > 0 ? kept : step.turnEnds!).join(', ');
    });
    if (endsA !== endsB) out.push({ field: 'turn', a: endsA!, b: endsB! });
  }
  if ((a.error ?? null) !== (b.error ?? null)) out.push({ field: 'error', a: a.error ?? null, b: b.error ?? null });
  const namesA = a.toolCalls.map((call) => call.name);
  const namesB = b.toolCalls.map((call) => call.name);
  if (namesA.join('\u0000') !== namesB.join('\u0000')) out.push({ field: 'tools', a: namesA, b: namesB });
  for (const [call, other] of pairedCalls(a, b)) out.push(...toolDifferences(call, other));
  const bothCount = a.tokensUnrecorded === undefined && b.tokensUnrecorded === undefined;
  if (bothCount && (a.promptTokens !== b.promptTokens || a.completionTokens !== b.completionTokens || a.cachedTokens !== b.cachedTokens)) {
    out.push({ field: 'tokens', a: tokens(a), b: tokens(b) });
  }
  return out;
}

/** The tool calls of two paired steps, paired by name and order among the calls of that name. */
export function pairedCalls(a: RunStep, b: RunStep): [ToolCallFacts, ToolCallFacts][] {
  const out: [ToolCallFacts, ToolCallFacts][] = [];
  const seen = new Map<string, number>();
  for (const call of a.toolCalls) {
    const nth = seen.get(call.name) ?? 0;
    seen.set(call.name, nth + 1);
    const other = b.toolCalls.filter((candidate) => candidate.name === call.name)[nth];
    if (other) out.push([call, other]);
  }
  return out;
}

function toolDifferences(a: ToolCallFacts, b: ToolCallFacts): Difference[] {
  const out: Difference[] = [];
  // Not where a file does not keep them (a trajectory's record of a run no step asked for).
  if (a.argumentsUnrecorded === undefined && b.argumentsUnrecorded === undefined && canonical(a.arguments) !== canonical(b.arguments)) out.push({ field: 'tool.arguments', tool: a.name, a: a.arguments, b: b.arguments });
  if (canonical(a.result) !== canonical(b.result)) out.push({ field: 'tool.result', tool: a.name, a: a.result, b: b.result });
  // Not where a file does not say whether the call failed (compare-runs.ts says what the other file records).
  if (a.failureUnrecorded === undefined && b.failureUnrecorded === undefined && (a.error ?? null) !== (b.error ?? null)) out.push({ field: 'tool.error', tool: a.name, a: a.error ?? null, b: b.error ?? null });
  // Only when both files record what calls ran with (ATOF): a trajectory has what the model asked for.
  if (a.input !== undefined && b.input !== undefined && canonical(a.input) !== canonical(b.input)) out.push({ field: 'tool.input', tool: a.name, a: a.input, b: b.input });
  // Only when both files record approvals: an exporter ATIF file records none, which is no decision changed.
  if (a.approval !== undefined && b.approval !== undefined && a.approval !== b.approval) out.push({ field: 'tool.approval', tool: a.name, a: a.approval, b: b.approval });
  return out;
}

/**
 * The differences as the terminal and the page print them. A call that failed on one side (a denied call, a tool
 * that threw) differs in its result and its error, and its result is the text its error says (what the model was
 * told): the two are one line, `tool.outcome`, each side's error, else its result, so that text is printed once.
 */
export function shownDifferences(differences: readonly Difference[]): Difference[] {
  const out: Difference[] = [];
  for (let index = 0; index < differences.length; index++) {
    const result = differences[index]!;
    const error = differences[index + 1];
    if (result.field === 'tool.result' && error?.field === 'tool.error' && error.tool === result.tool && saysResult(error.a, result.a) && saysResult(error.b, result.b)) {
      out.push({ field: 'tool.outcome', tool: result.tool!, a: error.a ?? result.a, b: error.b ?? result.b });
      index += 1;
    } else out.push(result);
  }
  return out;
}

/** Whether an error (`denied: Tool execution was not approved.`, cut at 80 characters) is the whole of a call's result. */
function saysResult(error: unknown, result: unknown): boolean {
  if (error === null || error === undefined || result === null || result === undefined) return true;
  const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
  const told = flat(typeof result === 'string' ? result : JSON.stringify(result));
  const said = flat(String(error));
  if (said.includes(told)) return true;
  const cut = said.slice(said.indexOf(': ') + 2);
  return cut.endsWith('…') && cut.length > 1 && told.startsWith(cut.slice(0, -1));
}

const tokens = (step: RunStep) => ({ prompt: step.promptTokens, completion: step.completionTokens, cached: step.cachedTokens });

function deltaOf(a: RunStep | null, b: RunStep | null): StepDelta {
  const duration = a?.durationUs !== undefined && b?.durationUs !== undefined ? b.durationUs - a.durationUs : a === null && b?.durationUs !== undefined ? b.durationUs : b === null && a?.durationUs !== undefined ? -a.durationUs : null;
  const unrecordedOn: NonNullable<StepDelta['unrecordedOn']> = {};
  if (a !== null && b !== null) {
    if ((a.tokensUnrecorded === true) !== (b.tokensUnrecorded === true)) unrecordedOn.tokens = a.tokensUnrecorded ? 'a' : 'b';
    if ((a.costUsd === undefined) !== (b.costUsd === undefined)) unrecordedOn.costUsd = a.costUsd === undefined ? 'a' : 'b';
  }
  const cost = (a?.costUsd === undefined && b?.costUsd === undefined) || unrecordedOn.costUsd !== undefined ? null : roundCost((b?.costUsd ?? 0) - (a?.costUsd ?? 0));
  const counted = unrecordedOn.tokens === undefined;
  return {
    durationUs: duration,
    promptTokens: counted ? (b?.promptTokens ?? 0) - (a?.promptTokens ?? 0) : 0,
    completionTokens: counted ? (b?.completionTokens ?? 0) - (a?.completionTokens ?? 0) : 0,
    cachedTokens: counted ? (b?.cachedTokens ?? 0) - (a?.cachedTokens ?? 0) : 0,
    costUsd: cost,
    ...(Object.keys(unrecordedOn).length > 0 ? { unrecordedOn } : {}),
  };
}

/** The totals `compare` reports per run. */
export interface RunTotals extends Figures {
  steps: number;
}

export function runTotals(steps: readonly RunStep[], totals: Figures): RunTotals {
  return {
    steps: steps.length,
    llmCalls: totals.llmCalls,
    toolCalls: totals.toolCalls,
    errors: totals.errors,
    promptTokens: totals.promptTokens,
    completionTokens: totals.completionTokens,
    cachedTokens: totals.cachedTokens,
    costUsd: totals.costUsd,
    durationUs: totals.durationUs,
  };
}

/**
 * b − a of each figure, leaving out the pairs where one step does not record a figure the other does (a cost against
 * an unpriced step is no change in cost); the cost delta is null when either run recorded no cost at all.
 */
export function totalsDelta(a: RunTotals, b: RunTotals, pairs: readonly Pair[]): RunTotals {
  const left = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: 0 };
  for (const pair of pairs) {
    const on = pair.delta.unrecordedOn;
    if (on?.tokens !== undefined)
      for (const key of ['promptTokens', 'completionTokens', 'cachedTokens'] as const) left[key] += pair.b![key] - pair.a![key];
    if (on?.costUsd !== undefined) left.costUsd += (pair.b!.costUsd ?? 0) - (pair.a!.costUsd ?? 0);
  }
  return {
    steps: b.steps - a.steps,
    llmCalls: b.llmCalls - a.llmCalls,
    toolCalls: b.toolCalls - a.toolCalls,
    errors: b.errors - a.errors,
    promptTokens: b.promptTokens - a.promptTokens - left.promptTokens,
    completionTokens: b.completionTokens - a.completionTokens - left.completionTokens,
    cachedTokens: b.cachedTokens - a.cachedTokens - left.cachedTokens,
    costUsd: a.costUsd === null || b.costUsd === null ? null : roundCost(b.costUsd - a.costUsd - left.costUsd),
    durationUs: a.durationUs === null || b.durationUs === null ? null : b.durationUs - a.durationUs,
  };
}
