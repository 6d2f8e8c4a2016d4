// When things happened, checked against what the program really did: a run
// of one model call that asks for a tool, the tool, and a model call that
// answers, against a loopback provider that holds each answer (a stream:
// paced) and a tool that really takes time. The ATOF spans, the OTLP spans
// (what Jaeger shows), the ATIF steps and `view`'s durations must place each
// call where the server and the tool saw it. No bound is a duration ceiling
// (the machine is shared and slow): durations are bounded below only, and
// each upper bound is an order the run itself guarantees (the next request
// needs the whole answer, the program's result needs the run's end). They
// fail only when a span is really misplaced (stamped when a later hook
// arrived, ended at the first streamed chunk, swapped, stamped at session
// end, zero long).
import { expect } from 'vitest';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';
import type { AtofEvent as WrittenEvent } from '../../src/formats/atof/types.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import type { LoopbackExchange } from '../support/doc-snippets.ts';
import type { DecodedSpan } from '../support/otlp-receiver.ts';
import type { AtifDoc, AtofEvent } from './support.ts';

/** How long the provider holds each answer, and the tool runs (ms). */
export const HOLD_MS = 300;
export const TOOL_MS = 200;

/** A span must last at least this share of what it covers (timers fire late, never early, but rounding is loose). */
const SHARE = 0.8;
/** What a recorded start may trail the server's arrival by: the client's own hop (ms). */
const CLIENT_HOP_MS = 5;

/** What the program saw, in the plugin clock's milliseconds (`wallMs`). */
export interface ProgramTimes {
  /** Before the program's call. */
  runStartMs: number;
  /** Its result read to the end. */
  runEndMs: number;
  /** After the program closed its session (uninstall, handler close, shutdown's start). */
  closedMs: number;
  /** The server's two exchanges: the answer asking for the tool, then the final one. */
  exchanges: readonly LoopbackExchange[];
  /** The tool's own start and return. */
  tool: { startMs: number; endMs: number };
  /** Whether the answers came streamed; else the client read each whole before running the tool. */
  streamed: boolean;
  /** The spans the plugin exported over OTLP (what Jaeger shows); none for a replay, which exports no OTLP. */
  otlp?: readonly DecodedSpan[];
}

interface Span {
  name: string;
  /** As written: integer Unix microseconds. */
  startUs: number;
  endUs: number;
  startMs: number;
  endMs: number;
}

const ms = (timestamp: unknown): number => parseTimestamp(timestamp) / 1000;

/** The ATOF scope spans of a category, in start order, each paired with its end by uuid. */
function spans(atof: readonly AtofEvent[], category: string): Span[] {
  const ends = new Map(atof.filter((e) => e.kind === 'scope' && e.scope_category === 'end').map((e) => [e.uuid as string, e]));
  return atof
    .filter((e) => e.kind === 'scope' && e.category === category && e.scope_category === 'start')
    .map((start) => {
      const end = ends.get(start.uuid);
      expect(end, `${category} ${start.name} ends`).toBeDefined();
      const startUs = parseTimestamp(start.timestamp);
      const endUs = parseTimestamp(end!.timestamp);
      return { name: String(start.name), startUs, endUs, startMs: startUs / 1000, endMs: endUs / 1000 };
    });
}

function nodes(root: ViewNode, kind: ViewNode['kind']): ViewNode[] {
  const found: ViewNode[] = [];
  const walk = (current: ViewNode): void => {
    if (current.kind === kind) found.push(current);
    current.children.forEach(walk);
  };
  walk(root);
  return found;
}

const durationMs = (node: ViewNode): number => (node.endUs! - node.startUs!) / 1000;

/**
 * The ATOF events and the ATIF trajectory of one run (two model calls around
 * one tool call, in one session and turn) against `times`.
 */
export function checkTimes(atof: readonly AtofEvent[], doc: AtifDoc, times: ProgramTimes): void {
  const [ask, answer] = times.exchanges;
  expect(times.exchanges, 'the server answered two requests').toHaveLength(2);
  // The exchanges themselves took the time asked: else the checks below prove nothing.
  for (const exchange of times.exchanges) expect(exchange.lastByteMs - exchange.receivedMs).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
  expect(times.tool.endMs - times.tool.startMs).toBeGreaterThanOrEqual(SHARE * TOOL_MS);

  const llm = spans(atof, 'llm');
  const tools = spans(atof, 'tool');
  expect(llm, 'two LLM spans').toHaveLength(2);
  expect(tools, 'one tool span').toHaveLength(1);
  const [first, second] = llm as [Span, Span];
  const tool = tools[0]!;

  // Each LLM span starts before its request reached the server, and not before the program asked.
  for (const [span, exchange] of [[first, ask!], [second, answer!]] as const) {
    expect(span.startMs, `${span.name} starts before the server got its request`).toBeLessThanOrEqual(exchange.receivedMs + CLIENT_HOP_MS);
    expect(span.startMs).toBeGreaterThanOrEqual(times.runStartMs);
    // It ends once the server sent the answer's last byte (streamed: the last chunk, not the first).
    expect(span.endMs, `${span.name} ends after the server's last byte`).toBeGreaterThanOrEqual(exchange.lastByteMs);
    expect(span.endMs - span.startMs).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
  }
  // ... and no later than the client had read it all: the next request needs the whole answer, as does the program's
  // result; a whole (not streamed) answer is read before the tool it asks for runs.
  expect(first.endMs, 'the first LLM span ends before the next request').toBeLessThanOrEqual(answer!.receivedMs);
  expect(first.endMs, 'the LLM spans do not overlap').toBeLessThanOrEqual(second.startMs);
  if (!times.streamed) expect(first.endMs, 'the first LLM span ends before the tool runs').toBeLessThanOrEqual(times.tool.startMs);
  expect(second.endMs, 'the last LLM span ends before the program has its result').toBeLessThanOrEqual(times.runEndMs);

  // The tool span covers the tool's own run, inside the model calls around it.
  expect(tool.startMs, 'the tool span starts before the tool').toBeLessThanOrEqual(times.tool.startMs);
  expect(tool.endMs, 'the tool span ends after the tool returned').toBeGreaterThanOrEqual(times.tool.endMs);
  expect(tool.startMs, 'the tool span starts after the model asked for it').toBeGreaterThanOrEqual(first.startMs);
  expect(tool.endMs, 'the tool span ends before its result was sent').toBeLessThanOrEqual(answer!.receivedMs);
  expect(second.startMs, 'the second LLM span starts after the tool span ends').toBeGreaterThanOrEqual(tool.endMs);

  // The session and the turn hold all of it, and close when the program closed them.
  const session = spans(atof, 'agent');
  expect(session, 'one session scope').toHaveLength(1);
  const marks = (name: string) => atof.filter((e) => e.kind === 'mark' && e.name === name).map((e) => ms(e.timestamp));
  const [turnStart] = marks('hermes.turn.start');
  const [turnEnd] = marks('hermes.turn.end');
  expect(turnStart).toBeDefined();
  expect(turnEnd).toBeDefined();
  expect(session[0]!.startMs).toBeGreaterThanOrEqual(times.runStartMs);
  expect(session[0]!.startMs).toBeLessThanOrEqual(turnStart!);
  expect(turnStart).toBeLessThanOrEqual(first.startMs);
  expect(turnEnd).toBeGreaterThanOrEqual(second.endMs);
  expect(turnEnd, 'the turn ends with the run').toBeLessThanOrEqual(times.runEndMs);
  expect(session[0]!.endMs).toBeGreaterThanOrEqual(turnEnd!);
  expect(session[0]!.endMs, 'the session ends when the program closed it').toBeLessThanOrEqual(times.closedMs);

  // OTLP: each span at its ATOF scope's times (nanoseconds from the same microseconds), inside the session's span.
  if (times.otlp !== undefined) {
    const exported = [...times.otlp].sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    const recordedSpans = [...session, ...llm, ...tools].sort((a, b) => a.startUs - b.startUs);
    expect(exported.map((span) => [span.name, span.startTimeUnixNano, span.endTimeUnixNano])).toEqual(
      recordedSpans.map((span) => [span.name, String(BigInt(span.startUs) * 1000n), String(BigInt(span.endUs) * 1000n)]),
    );
    const root = exported[0]!;
    for (const span of exported.slice(1)) expect(span.parentSpanId, `${span.name} is a child of the session's span`).toBe(root.spanId);
  }

  // ATIF: steps in time order; the user step at the first model call's start, each agent step at its model call's
  // end, its invocation the call's span (epoch seconds, to the millisecond), the tool's invocation the tool span.
  const steps = doc.steps as AtifDoc[];
  const stamps = steps.map((step) => ms(step.timestamp));
  expect(stamps.every((stamp) => !Number.isNaN(stamp))).toBe(true);
  expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
  expect(steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
  expect(stamps[0]).toBeCloseTo(first.startMs, 3);
  const agentSteps = steps.slice(1);
  agentSteps.forEach((step, index) => {
    const span = llm[index]!;
    expect(stamps[index + 1], `agent step ${index + 1} is stamped at its LLM span's end`).toBeCloseTo(span.endMs, 3);
    const invocation = step.extra?.invocation;
    expect(Math.abs(invocation.start_timestamp * 1000 - span.startMs)).toBeLessThan(1);
    expect(Math.abs(invocation.end_timestamp * 1000 - span.endMs)).toBeLessThan(1);
  });
  const toolInvocation = agentSteps[0]!.extra?.tool_invocations?.[0];
  expect(toolInvocation, 'the tool call has its invocation times').toBeDefined();
  expect(Math.abs(toolInvocation.start_timestamp * 1000 - tool.startMs)).toBeLessThan(1);
  expect(Math.abs(toolInvocation.end_timestamp * 1000 - tool.endMs)).toBeLessThan(1);

  // `view`, from either file, shows each call as long as its span: ~HOLD_MS per model call, ~TOOL_MS for the tool.
  // The events as read back from the file (support.ts parses each line).
  const fromAtof = treesFromAtof(atof as unknown as readonly WrittenEvent[]);
  expect(fromAtof).toHaveLength(1);
  for (const root of [fromAtof[0]!, treeFromAtif(doc)]) {
    const shownLlm = nodes(root, 'llm');
    const shownTools = nodes(root, 'tool');
    expect(shownLlm).toHaveLength(2);
    expect(shownTools).toHaveLength(1);
    shownLlm.forEach((shown, index) => {
      expect(Math.abs(durationMs(shown) - (llm[index]!.endMs - llm[index]!.startMs)), `view's LLM call ${index + 1}`).toBeLessThan(1);
      expect(durationMs(shown)).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
    });
    expect(Math.abs(durationMs(shownTools[0]!) - (tool.endMs - tool.startMs)), "view's tool call").toBeLessThan(1);
    expect(durationMs(shownTools[0]!)).toBeGreaterThanOrEqual(SHARE * TOOL_MS);
  }
}
