// When things happened, checked against what the program really did: a run
// of one model call that asks for a tool, the tool, and a model call that
// answers, against a loopback provider that holds each answer (a stream:
// paced, test/support/paced-wire.ts) and a tool that really takes time. The
// ATOF spans, the OTLP spans (what Jaeger shows), the ATIF steps and
// `view`'s durations must place each call where the server and the tool saw
// it. The same checks for every framework. No bound is a tight duration
// ceiling (the machine is shared and slow): durations are bounded below, and
// above only by seconds; each tight upper bound is an order the run itself
// guarantees (the next request needs the whole answer, the program's result
// needs the run's end). They fail only when a span is really misplaced
// (stamped when a later hook arrived, ended or started at the first streamed
// chunk, swapped, stamped at session end, zero long).
import { expect } from 'vitest';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';
import type { AtofEvent as WrittenEvent } from '../../src/formats/atof/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import { sleep } from '../../src/shared/timers.ts';
import { wallMs, type LoopbackExchange } from '../support/doc-snippets.ts';
import type { DecodedSpan } from '../support/otlp-receiver.ts';
import { expectNothingLost, type AtifDoc, type AtofEvent, type Recorded } from './support.ts';

/** How long the provider holds each answer, and the tool runs (ms): the defaults of `answerMs` and `toolMs`. */
export const HOLD_MS = 150;
export const TOOL_MS = 100;

/** A span must last at least this share of what it covers (timers fire late, never early, but rounding is loose). */
const SHARE = 0.8;
/** What a recorded start may trail the server's arrival by, by default: an in-process client's own hop (ms). */
const CLIENT_HOP_MS = 5;
/** A stamp may trail what it marks by this much, and no more (never an upper bound tighter than seconds). */
const LATE_MS = 2000;
/** Stamps compared across two readings of one clock, or written to the millisecond (ATIF's invocations). */
const ROUNDING_MS = 1;

/** What the program saw, in the plugin clock's milliseconds (`wallMs`). */
export interface ProgramTimes {
  /** Before the program's call. */
  runStartMs: number;
  /** Its result read to the end. */
  runEndMs: number;
  /** After the program closed its session (uninstall, handler close, shutdown's start); by default its run's end. */
  closedMs?: number;
  /** The server's two exchanges (loopbackApi's): the answer asking for the tool, then the final one. */
  exchanges: readonly LoopbackExchange[];
  /** How long each answer took the server, from the request to its last byte (default HOLD_MS). */
  answerMs?: number;
  /** The tool's own start and return. */
  tool: { startMs: number; endMs: number };
  /** How long the tool awaits (default TOOL_MS). */
  toolMs?: number;
  /** Whether the answers came streamed (a failure says which); else the client read each whole. */
  streamed: boolean;
  /**
   * How much later than the request itself its span may start: the time the
   * recorder's client takes to tell it (in process, a few ms, the default;
   * across the Claude CLI's pipe, more). Far below a provider's time to first byte.
   */
  announceMs?: number;
  /**
   * The tool starts while the reply that asked for it still streams (the
   * Claude CLI runs a tool as soon as its block is complete): its span starts
   * after that reply's span started, not after it ended.
   */
  toolDuringReply?: boolean;
  /** The spans the plugin exported over OTLP (what Jaeger shows); none for a replay, which exports no OTLP. */
  otlp?: readonly DecodedSpan[];
}

export interface Span {
  name: string;
  /** As written: integer Unix microseconds. */
  startUs: number;
  endUs: number;
  startMs: number;
  endMs: number;
}

const ms = (timestamp: unknown): number => parseTimestamp(timestamp) / 1000;

/** The ATOF scopes of a category, start and end paired by uuid, in start order; none left open, none ended unstarted. */
export function spans(atof: readonly AtofEvent[], category: string): Span[] {
  const starts = new Map<string, AtofEvent>();
  const out: Span[] = [];
  for (const event of atof) {
    if (event.kind !== 'scope' || event.category !== category) continue;
    if (event.scope_category === 'start') {
      starts.set(event.uuid, event);
      continue;
    }
    const start = starts.get(event.uuid);
    expect(start, `${category} scope ${event.name} ended without a start`).toBeDefined();
    const startUs = parseTimestamp(start!.timestamp);
    const endUs = parseTimestamp(event.timestamp);
    out.push({ name: String(event.name), startUs, endUs, startMs: startUs / 1000, endMs: endUs / 1000 });
  }
  expect(starts.size, `${category} scopes left open`).toBe(out.length);
  return out.sort((a, b) => a.startUs - b.startUs);
}

function nodes(root: ViewNode, kind: ViewNode['kind']): ViewNode[] {
  return [...(root.kind === kind ? [root] : []), ...root.children.flatMap((child) => nodes(child, kind))];
}

const durationMs = (node: ViewNode): number => (node.endUs! - node.startUs!) / 1000;

/**
 * The ATOF events and the ATIF trajectory of one run (two model calls around
 * one tool call, in one session and turn) against `times`.
 */
export function checkTimes(atof: readonly AtofEvent[], doc: AtifDoc, times: ProgramTimes): void {
  const answerMs = times.answerMs ?? HOLD_MS;
  const toolMs = times.toolMs ?? TOOL_MS;
  const announceMs = times.announceMs ?? CLIENT_HOP_MS;
  const closedMs = times.closedMs ?? times.runEndMs;
  const base = times.runStartMs;
  /** A time as a failure names it: relative to the run's start, so a message says which and by how much. */
  const at = (label: string, stamp: number): string => `${label} at +${(stamp - base).toFixed(1)} ms`;
  const mode = times.streamed ? 'streamed' : 'whole';

  const [ask, answer] = times.exchanges;
  expect(times.exchanges, 'the server answered two requests').toHaveLength(2);
  // The exchanges and the tool themselves took the time asked: else the checks below prove nothing.
  for (const exchange of times.exchanges) expect(exchange.lastByteMs - exchange.receivedMs).toBeGreaterThanOrEqual(SHARE * answerMs);
  expect(times.tool.endMs - times.tool.startMs).toBeGreaterThanOrEqual(SHARE * toolMs);

  const llm = spans(atof, 'llm');
  const tools = spans(atof, 'tool');
  expect(llm, 'an LLM span per request the server answered').toHaveLength(2);
  expect(tools, 'one tool span').toHaveLength(1);
  const [first, second] = llm as [Span, Span];
  const tool = tools[0]!;

  // Each LLM span starts by the time its request reached the server, and not before the program asked; it ends once
  // the server sent the answer's last byte (streamed: the last chunk, not the first), soon after.
  for (const [index, [span, exchange]] of ([[first, ask!], [second, answer!]] as const).entries()) {
    const what = `LLM span ${index + 1}, ${mode} (${at('start', span.startMs)}, ${at('end', span.endMs)}; request ${at('received', exchange.receivedMs)}, ${at('last byte', exchange.lastByteMs)})`;
    expect(span.startMs, `${what}: not before the program ran`).toBeGreaterThanOrEqual(times.runStartMs);
    expect(span.startMs, `${what}: starts by the time the server got its request`).toBeLessThanOrEqual(exchange.receivedMs + announceMs);
    expect(span.endMs, `${what}: ends no sooner than the server's last byte`).toBeGreaterThanOrEqual(exchange.lastByteMs);
    expect(span.endMs, `${what}: ends soon after the server's last byte`).toBeLessThanOrEqual(exchange.lastByteMs + LATE_MS);
    expect(span.endMs - span.startMs, `${what}: lasts about the answer's time`).toBeGreaterThanOrEqual(SHARE * answerMs);
    expect(span.endMs - span.startMs, `${what}: lasts not seconds more than the answer`).toBeLessThanOrEqual(answerMs + LATE_MS);
  }
  // ... and no later than the client had read it all: the next request needs the whole answer, as does the program's
  // result.
  expect(first.endMs, 'the first LLM span ends before the next request').toBeLessThanOrEqual(answer!.receivedMs);
  expect(first.endMs, 'the LLM spans do not overlap').toBeLessThanOrEqual(second.startMs);
  expect(second.endMs, 'the last LLM span ends before the program has its result').toBeLessThanOrEqual(times.runEndMs);

  // The tool span covers the tool's own run, between the model calls around it: the other frameworks here run a tool
  // once the reply that asked for it has ended, streamed or not; the Claude CLI while that reply still streams.
  const what = `the tool span (${at('start', tool.startMs)}, ${at('end', tool.endMs)}; the tool ran ${at('from', times.tool.startMs)} ${at('to', times.tool.endMs)})`;
  if (times.toolDuringReply === true) expect(tool.startMs, `${what}: starts after the LLM span that asked for it started`).toBeGreaterThanOrEqual(first.startMs);
  else expect(tool.startMs, `${what}: starts after the LLM span that asked for it`).toBeGreaterThanOrEqual(first.endMs);
  expect(tool.startMs, `${what}: starts by the tool's own start`).toBeLessThanOrEqual(times.tool.startMs + (times.toolDuringReply === true ? ROUNDING_MS : 0));
  expect(tool.endMs, `${what}: ends no sooner than the tool returned`).toBeGreaterThanOrEqual(times.tool.endMs);
  expect(tool.endMs, `${what}: ends soon after the tool returned`).toBeLessThanOrEqual(times.tool.endMs + LATE_MS);
  expect(tool.endMs, `${what}: ends before its result was sent`).toBeLessThanOrEqual(answer!.receivedMs);
  expect(second.startMs, `${what} ends before the second LLM span starts`).toBeGreaterThanOrEqual(tool.endMs);

  // The session and the turn hold all of it, and close when the program closed them.
  const sessions = spans(atof, 'agent');
  expect(sessions, 'one session scope').toHaveLength(1);
  const session = sessions[0]!;
  const mark = (name: string): number => {
    const found = atof.filter((event) => event.kind === 'mark' && event.name === name);
    expect(found, name).toHaveLength(1);
    return ms(found[0]!.timestamp);
  };
  const turnStart = mark('hermes.turn.start');
  const turnEnd = mark('hermes.turn.end');
  const last = Math.max(second.endMs, tool.endMs);
  expect(session.startMs, `the session (${at('start', session.startMs)}) starts in the run`).toBeGreaterThanOrEqual(times.runStartMs);
  expect(turnStart, 'the turn starts in the session, by the first LLM span').toSatisfy((stamp: number) => stamp >= session.startMs && stamp <= first.startMs);
  expect(turnEnd, 'the turn ends after the last span, in the session').toSatisfy((stamp: number) => stamp >= last && stamp <= session.endMs);
  expect(turnEnd, 'the turn ends with the run').toBeLessThanOrEqual(times.runEndMs);
  expect(session.endMs, `the session (${at('end', session.endMs)}) ends when the program closed it`).toBeLessThanOrEqual(closedMs);

  // OTLP: each span at its ATOF scope's times (nanoseconds from the same microseconds), inside the session's span.
  if (times.otlp !== undefined) {
    const exported = [...times.otlp].sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    const recordedSpans = [session, ...llm, ...tools].sort((a, b) => a.startUs - b.startUs);
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
  expect(stamps, 'step timestamps in order').toEqual([...stamps].sort((a, b) => a - b));
  expect(steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
  expect(stamps[0], 'the user step at the first LLM span').toBeCloseTo(first.startMs, 3);
  const agentSteps = steps.slice(1);
  agentSteps.forEach((step, index) => {
    const span = llm[index]!;
    expect(stamps[index + 1], `agent step ${index + 1} is stamped at its LLM span's end`).toBeCloseTo(span.endMs, 3);
    const invocation = step.extra?.invocation;
    expect(Math.abs(invocation.start_timestamp * 1000 - span.startMs), `agent step ${index + 1}'s invocation starts with its LLM span`).toBeLessThan(ROUNDING_MS);
    expect(Math.abs(invocation.end_timestamp * 1000 - span.endMs), `agent step ${index + 1}'s invocation ends with its LLM span`).toBeLessThan(ROUNDING_MS);
  });
  const invocations = steps.flatMap((step) => (step.extra?.tool_invocations ?? []) as AtifDoc[]);
  expect(invocations, 'the tool call has its invocation times').toHaveLength(1);
  expect(Math.abs(invocations[0]!.start_timestamp * 1000 - tool.startMs), 'the tool invocation starts with its span').toBeLessThan(ROUNDING_MS);
  expect(Math.abs(invocations[0]!.end_timestamp * 1000 - tool.endMs), 'the tool invocation ends with its span').toBeLessThan(ROUNDING_MS);

  // `view`, from either file, shows each call as long as its span (whose duration is checked above).
  // The events as read back from the file (support.ts parses each line).
  const fromAtof = treesFromAtof(atof as unknown as readonly WrittenEvent[]);
  expect(fromAtof).toHaveLength(1);
  for (const [source, root] of [['ATOF', fromAtof[0]!], ['ATIF', treeFromAtif(doc)]] as const) {
    for (const [kind, recorded] of [['llm', llm], ['tool', tools]] as const) {
      const shown = nodes(root, kind).sort((a, b) => a.startUs! - b.startUs!);
      expect(shown, `view of the ${source} file: a ${kind} call per span`).toHaveLength(recorded.length);
      shown.forEach((node, index) => {
        expect(Math.abs(durationMs(node) - (recorded[index]!.endMs - recorded[index]!.startMs)), `view of the ${source} file: ${kind} call ${index + 1}`).toBeLessThan(ROUNDING_MS);
      });
    }
  }
}

/** A tool's body: its `work` (by default, waiting TOOL_MS), noting in `run` when it started and returned. */
export async function timedTool<T = void>(run: ProgramTimes['tool'], work: () => Promise<T> = () => sleep(TOOL_MS) as Promise<T>): Promise<T> {
  run.startMs = wallMs();
  const answer = await work();
  run.endMs = wallMs();
  return answer;
}


/** A timed run's files once its plugin finished: nothing lost, one trajectory, and that one valid. */
export async function finishedRun(recorded: Recorded): Promise<{ atof: AtofEvent[]; doc: AtifDoc }> {
  const { atof, atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  return { atof, doc: atif[0]! };
}
