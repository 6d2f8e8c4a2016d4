// When a recorded run says things happened, checked against when they did:
// the loopback provider's clock (a request arriving, its last byte sent,
// test/support/paced-wire.ts) and the tool's own (its start and return).
// The same checks for every framework, on the ATOF events, the ATIF
// trajectory and what `view` shows of both. Tolerances are generous (the
// machine is shared): a check fails only when a span is really wrong, such
// as an LLM span that ends at the first streamed chunk or starts at it, a
// tool span of nothing, a span stamped when a later hook arrived, or
// everything stamped at the session's end.
import { expect } from 'vitest';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';
import type { AtofEvent as TypedAtofEvent } from '../../src/formats/atof/types.ts';
import { parseInstant } from '../../src/formats/instant.ts';
import type { Served } from '../support/paced-wire.ts';
import type { AtifDoc, AtofEvent } from './support.ts';

/** A tool's own start and return (Unix ms, the plugin's clock: `wallMs`). */
export interface ToolRun {
  startMs: number;
  endMs?: number;
}

export interface Timeline {
  /** The main agent's model requests, as the server saw them, in order: each answered the program. */
  served: readonly Served[];
  /** How long each answer took the server from the request to its last byte. */
  answerMs: number;
  /** The tool calls, in order; each asked for by the request before it. */
  tools: readonly ToolRun[];
  /** How long the tool awaits. */
  toolMs: number;
  /** The program's run, from before its first call to after it returned. */
  startedMs: number;
  endedMs: number;
  /**
   * How much later than the request itself its span may start: the time the
   * recorder's client takes to tell it (in process, a few ms; across the
   * Claude CLI's pipe, more). Far below a provider's time to first byte.
   */
  announceMs: number;
  /**
   * The Claude Agent SDK's documented limit: a tool the CLI starts while the
   * reply that asked for it still streams is recorded from that reply's end.
   */
  toolFromRequestEnd?: boolean;
}

/** A stamp may trail what it marks by this much, and no more (never an upper bound tighter than seconds). */
const LATE_MS = 2000;
/** Stamps compared across two readings of one clock, or written to the millisecond (ATIF). */
const ROUNDING_MS = 1;
/** A duration of at least this share of what it measured. */
const AT_LEAST = 0.8;

interface Span {
  name: string;
  startMs: number;
  endMs: number;
  start: AtofEvent;
  end: AtofEvent;
}

const msOf = (stamp: unknown): number => {
  const instant = parseInstant(stamp);
  if (instant === undefined) throw new Error(`not a timestamp: ${JSON.stringify(stamp)}`);
  return instant.seconds * 1000 + instant.nanos / 1e6;
};

/** The scopes of one category, start and end paired by uuid, in start order. */
export function spans(atof: readonly AtofEvent[], category: string): Span[] {
  const starts = new Map<string, AtofEvent>();
  const out: Span[] = [];
  for (const event of atof) {
    if (event.kind !== 'scope' || event.category !== category) continue;
    if (event.scope_category === 'start') starts.set(event.uuid, event);
    else {
      const start = starts.get(event.uuid);
      expect(start, `${category} scope ${event.name} ended without a start`).toBeDefined();
      out.push({ name: event.name, startMs: msOf(start!.timestamp), endMs: msOf(event.timestamp), start: start!, end: event });
    }
  }
  expect(starts.size, `${category} scopes left open`).toBe(out.length);
  return out.sort((a, b) => a.startMs - b.startMs);
}

/** Where the checks read a time: the label and the number, so a failure says which and by how much. */
const at = (label: string, ms: number, base: number): string => `${label} at +${(ms - base).toFixed(1)} ms`;

/** The ATOF events against the timeline; returns the LLM and tool spans for the ATIF checks. */
export function checkAtofTimes(atof: readonly AtofEvent[], line: Timeline): { llm: Span[]; tools: Span[] } {
  const base = line.startedMs;
  const llm = spans(atof, 'llm');
  const tools = spans(atof, 'tool');
  expect(llm.length, 'one LLM span per request the server answered').toBe(line.served.length);
  expect(tools.length, 'one tool span per call').toBe(line.tools.length);
  llm.forEach((span, i) => {
    const served = line.served[i]!;
    const what = `LLM span ${i + 1} (${at('start', span.startMs, base)}, ${at('end', span.endMs, base)}; request ${at('received', served.receivedMs, base)}, ${at('last byte', served.lastByteMs!, base)})`;
    expect(span.startMs, `${what}: not before the program ran`).toBeGreaterThanOrEqual(line.startedMs - ROUNDING_MS);
    expect(span.startMs, `${what}: starts by the time the request reached the server`).toBeLessThanOrEqual(served.receivedMs + line.announceMs);
    expect(span.endMs, `${what}: ends no sooner than the server's last byte`).toBeGreaterThanOrEqual(served.lastByteMs! - ROUNDING_MS);
    expect(span.endMs, `${what}: ends soon after the server's last byte`).toBeLessThanOrEqual(served.lastByteMs! + LATE_MS);
    expect(span.endMs - span.startMs, `${what}: lasts about the answer's time`).toBeGreaterThanOrEqual(AT_LEAST * line.answerMs);
  });
  tools.forEach((span, i) => {
    const run = line.tools[i]!;
    const asking = llm[i]!;
    const next = llm[i + 1];
    // The limit: a call the CLI started while its reply still streamed is recorded from that reply's end, no later.
    const startsBy = line.toolFromRequestEnd === true ? Math.max(run.startMs, asking.endMs + line.announceMs) : run.startMs;
    const what = `tool span ${i + 1} (${at('start', span.startMs, base)}, ${at('end', span.endMs, base)}; the tool ran ${at('from', run.startMs, base)} ${at('to', run.endMs!, base)})`;
    expect(span.startMs, `${what}: after the LLM span that asked for it`).toBeGreaterThanOrEqual(asking.endMs);
    expect(span.startMs, `${what}: starts by the tool's own start`).toBeLessThanOrEqual(startsBy + ROUNDING_MS);
    expect(span.endMs, `${what}: ends no sooner than the tool returned`).toBeGreaterThanOrEqual(run.endMs! - ROUNDING_MS);
    expect(span.endMs, `${what}: ends soon after the tool returned`).toBeLessThanOrEqual(run.endMs! + LATE_MS);
    expect(span.endMs - span.startMs, `${what}: lasts about the tool's time`).toBeGreaterThanOrEqual(AT_LEAST * Math.min(line.toolMs, run.endMs! - startsBy));
    if (next !== undefined) expect(next.startMs, `LLM span ${i + 2} (${at('start', next.startMs, base)}) starts after ${what} ends`).toBeGreaterThanOrEqual(span.endMs);
  });
  // The session (the agent scope) and the turn hold all of it, and end with the program, not long after.
  const first = Math.min(...llm.map((span) => span.startMs));
  const last = Math.max(...llm.concat(tools).map((span) => span.endMs));
  const sessions = spans(atof, 'agent');
  expect(sessions.length, 'one session').toBe(1);
  const session = sessions[0]!;
  expect(session.startMs, `the session (${at('start', session.startMs, base)}) starts by the first LLM span`).toBeLessThanOrEqual(first);
  expect(session.endMs, `the session (${at('end', session.endMs, base)}) ends after the last span`).toBeGreaterThanOrEqual(last);
  expect(session.endMs, `the session (${at('end', session.endMs, base)}) ends by the program's end`).toBeLessThanOrEqual(line.endedMs + LATE_MS);
  const mark = (name: string): number => {
    const found = atof.filter((event) => event.kind === 'mark' && event.name === name);
    expect(found, name).toHaveLength(1);
    return msOf(found[0]!.timestamp);
  };
  const turnStart = mark('hermes.turn.start');
  const turnEnd = mark('hermes.turn.end');
  expect(turnStart, 'the turn starts in the session, by the first LLM span').toSatisfy((ms: number) => ms >= session.startMs && ms <= first);
  expect(turnEnd, 'the turn ends after the last span, in the session').toSatisfy((ms: number) => ms >= last && ms <= session.endMs);
  return { llm, tools };
}

/** The ATIF trajectory's stamps: in order, each agent step's those of its LLM span, each tool invocation its tool span's. */
export function checkAtifTimes(doc: AtifDoc, found: { llm: Span[]; tools: Span[] }): void {
  const steps = doc.steps as Array<Record<string, any>>;
  const stamps = steps.map((step) => msOf(step.timestamp));
  expect(stamps, 'step timestamps in order').toEqual([...stamps].sort((a, b) => a - b));
  expect(steps[0]!.source).toBe('user');
  expect(stamps[0]!, 'the user step by the first LLM span').toBeLessThanOrEqual(found.llm[0]!.startMs + ROUNDING_MS);
  const agent = steps.filter((step) => step.source === 'agent' && step.extra?.invocation !== undefined);
  expect(agent.length, 'an agent step per LLM span').toBe(found.llm.length);
  agent.forEach((step, i) => {
    const span = found.llm[i]!;
    // ATIF keeps invocation times as epoch seconds to the millisecond; the step's own stamp is its LLM span's end.
    expect(Math.abs(msOf(step.timestamp) - span.endMs), `agent step ${step.step_id}'s time is its LLM span's end`).toBeLessThanOrEqual(ROUNDING_MS);
    expect(Math.abs(step.extra.invocation.start_timestamp * 1000 - span.startMs), `agent step ${step.step_id}'s invocation starts with its LLM span`).toBeLessThanOrEqual(ROUNDING_MS);
    expect(Math.abs(step.extra.invocation.end_timestamp * 1000 - span.endMs), `agent step ${step.step_id}'s invocation ends with its LLM span`).toBeLessThanOrEqual(ROUNDING_MS);
  });
  const invocations = steps.flatMap((step) => (step.extra?.tool_invocations ?? []) as Array<Record<string, any>>);
  expect(invocations.length, 'a tool invocation per tool span').toBe(found.tools.length);
  invocations.forEach((invocation, i) => {
    const span = found.tools[i]!;
    expect(Math.abs(invocation.start_timestamp * 1000 - span.startMs), `tool ${invocation.invocation_id} starts with its span`).toBeLessThanOrEqual(ROUNDING_MS);
    expect(Math.abs(invocation.end_timestamp * 1000 - span.endMs), `tool ${invocation.invocation_id} ends with its span`).toBeLessThanOrEqual(ROUNDING_MS);
  });
}

function nodes(root: ViewNode, kind: ViewNode['kind']): ViewNode[] {
  return [...(root.kind === kind ? [root] : []), ...root.children.flatMap((child) => nodes(child, kind))];
}

/** What `view` shows of a file: each model call about the answer's time, each tool call about the tool's. */
export function checkViewDurations(root: ViewNode, line: Timeline, found: { llm: Span[]; tools: Span[] }, source: string): void {
  const durations = (kind: ViewNode['kind']) =>
    nodes(root, kind)
      .sort((a, b) => a.startUs! - b.startUs!)
      .map((node) => (node.endUs! - node.startUs!) / 1000);
  const llm = durations('llm');
  expect(llm.length, `${source}: a model call per request`).toBe(found.llm.length);
  for (const ms of llm) expect(ms, `${source}: a model call of ${ms} ms`).toSatisfy((d: number) => d >= AT_LEAST * line.answerMs && d <= line.answerMs + LATE_MS);
  const tools = durations('tool');
  expect(tools.length, `${source}: a tool call per call`).toBe(found.tools.length);
  tools.forEach((ms, i) => {
    // Shown as long as the span the recording holds (for the Claude limit, from the asking reply's end).
    const span = found.tools[i]!;
    expect(Math.abs(ms - (span.endMs - span.startMs)), `${source}: tool call ${i + 1} shown ${ms} ms`).toBeLessThanOrEqual(ROUNDING_MS);
    expect(ms, `${source}: tool call ${i + 1} shown ${ms} ms`).toBeLessThanOrEqual(line.toolMs + LATE_MS);
  });
}

/** Every check, on one run's ATOF and ATIF. */
export function checkTimes(atof: readonly AtofEvent[], doc: AtifDoc, line: Timeline): void {
  const found = checkAtofTimes(atof, line);
  checkAtifTimes(doc, found);
  const roots = treesFromAtof(atof as readonly TypedAtofEvent[]);
  expect(roots).toHaveLength(1);
  checkViewDurations(roots[0]!, line, found, 'view of the ATOF file');
  checkViewDurations(treeFromAtif(doc), line, found, 'view of the ATIF file');
}
