// When a sub-agent's things happened, checked against what the program really
// did: a parent run (a model call asking for a tool, the tool, a model call
// answering) whose tool runs another agent in process (its own model call
// asking for its own slow tool, the tool, its answer), against the held
// loopback provider. A user sees the sub-agent as its own session under the
// parent's tool call, so each run, the parent's and the sub-agent's, must
// pass timing-checks.ts `checkTimes` on its own events and trajectory; and
// the sub-agent's session must sit inside the tool call that ran it, never be
// stamped at the parent's end, keep its durations in OTLP, and show them in
// `view`'s tree of the whole run, from the ATOF events and from the ATIF file.
import { expect } from 'vitest';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';
import type { AtofEvent as WrittenEvent } from '../../src/formats/atof/types.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import type { LoopbackExchange } from '../support/doc-snippets.ts';
import type { DecodedSpan } from '../support/otlp-receiver.ts';
import type { AtifDoc, AtofEvent, Recorded } from './support.ts';
import { checkTimes, finishedRun, HOLD_MS, TOOL_MS, type ProgramTimes } from './timing-checks.ts';

/** A span must last at least this share of what it covers (timers fire late, never early). */
const SHARE = 0.8;
/** Slack for two stamps of one process read in emission order: sub-millisecond rounding only (ms). */
const SLACK_MS = 1;

/** What the program saw around the sub-agent, in `wallMs`. */
export interface SubagentProgramTimes {
  /** The parent's run: its exchanges are the server's first and last; its `tool` the parent tool's execute. */
  parent: Omit<ProgramTimes, 'exchanges' | 'otlp'>;
  /** The sub-agent, run inside the parent's tool: before its call, after its result, its own tool's run, and whether its answers came streamed. */
  sub: Pick<ProgramTimes, 'runStartMs' | 'runEndMs' | 'tool' | 'streamed'>;
  /** All four exchanges, in order: the parent's ask, the sub-agent's ask and answer, the parent's answer. */
  exchanges: readonly LoopbackExchange[];
  otlp?: readonly DecodedSpan[];
}

interface Span {
  uuid: string;
  name: string;
  category: string;
  startUs: number;
  endUs: number;
}

function scopeSpans(atof: readonly AtofEvent[]): Span[] {
  const ends = new Map(atof.filter((e) => e.kind === 'scope' && e.scope_category === 'end').map((e) => [e.uuid as string, e]));
  return atof
    .filter((e) => e.kind === 'scope' && e.scope_category === 'start')
    .map((start) => {
      const end = ends.get(start.uuid);
      expect(end, `${start.category} ${start.name} ends`).toBeDefined();
      return { uuid: String(start.uuid), name: String(start.name), category: String(start.category), startUs: parseTimestamp(start.timestamp), endUs: parseTimestamp(end!.timestamp) };
    });
}

function descendants(root: ViewNode, kind: ViewNode['kind']): ViewNode[] {
  const found: ViewNode[] = [];
  const walk = (current: ViewNode): void => {
    if (current.kind === kind) found.push(current);
    current.children.forEach(walk);
  };
  root.children.forEach(walk);
  return found;
}

const durationMs = (node: { startUs?: number; endUs?: number }): number => (node.endUs! - node.startUs!) / 1000;

/**
 * The events of one run split by whose they are: the sub-agent's are its session scope and every event under it
 * (by `parent_uuid`); the parent's are the rest. The ATOF `subagent` scope is the one whose role says so.
 */
export function splitRuns(atof: readonly AtofEvent[]): { parent: AtofEvent[]; sub: AtofEvent[]; subScope: string } {
  const subStarts = atof.filter((e) => e.kind === 'scope' && e.scope_category === 'start' && e.category === 'agent' && e.metadata?.nemo_relay_scope_role === 'subagent');
  expect(subStarts, 'one sub-agent session').toHaveLength(1);
  const subScope = String(subStarts[0]!.uuid);
  const inSub = new Set<string>([subScope]);
  // Nested scopes name their parent before their own children start: one pass in file order finds them all.
  for (const e of atof) if (inSub.has(String(e.parent_uuid))) inSub.add(String(e.uuid));
  const isSub = (e: AtofEvent) => inSub.has(String(e.uuid));
  return { parent: atof.filter((e) => !isSub(e)), sub: atof.filter(isSub), subScope };
}

/** The whole run (every ATOF event; the parent's ATIF trajectory, the sub-agent's embedded in it) against `times`. */
export function checkSubagentTimes(atof: readonly AtofEvent[], doc: AtifDoc, times: SubagentProgramTimes): void {
  expect(times.exchanges, 'the server answered four requests').toHaveLength(4);
  const [parentAsk, subAsk, subAnswer, parentAnswer] = times.exchanges as [LoopbackExchange, LoopbackExchange, LoopbackExchange, LoopbackExchange];
  const { parent, sub, subScope } = splitRuns(atof);
  const subDocs = (doc.subagent_trajectories ?? []) as AtifDoc[];
  expect(subDocs, 'the sub-agent is embedded in the parent trajectory').toHaveLength(1);

  // Each run on its own reads as a run of its own: its model calls span their exchanges, its tool its run, its ATIF
  // steps are stamped at its spans, `view` shows them as long. The sub-agent's run must end before its result
  // reached the parent's next request; its session closes no later.
  // The parent's trajectory without the embedded one (checkTimes counts a trajectory's own calls); the nesting is
  // checked below.
  const { subagent_trajectories: _embedded, ...parentAlone } = doc;
  checkTimes(parent, parentAlone, { ...times.parent, exchanges: [parentAsk, parentAnswer] });
  checkTimes(sub, subDocs[0]!, { ...times.sub, closedMs: parentAnswer.receivedMs, exchanges: [subAsk, subAnswer] });

  // The sub-agent's session sits inside the parent's tool call, which covers the sub-agent's whole run.
  const session = scopeSpans(sub).find((span) => span.uuid === subScope)!;
  const parentTools = scopeSpans(parent).filter((span) => span.category === 'tool');
  expect(parentTools).toHaveLength(1);
  const parentTool = parentTools[0]!;
  const subSpans = scopeSpans(sub);
  expect(session.startUs / 1000 + SLACK_MS, "the sub-agent's session starts after the parent's tool call").toBeGreaterThanOrEqual(parentTool.startUs / 1000);
  expect(session.endUs / 1000 - SLACK_MS, "the sub-agent's session ends before the parent's tool call").toBeLessThanOrEqual(parentTool.endUs / 1000);
  expect(session.startUs / 1000 + SLACK_MS, "the sub-agent's session starts after the program called it").toBeGreaterThanOrEqual(times.sub.runStartMs);
  for (const span of subSpans) {
    expect(span.startUs, `${span.category} ${span.name} starts inside the sub-agent's session`).toBeGreaterThanOrEqual(session.startUs);
    expect(span.endUs, `${span.category} ${span.name} ends inside the sub-agent's session`).toBeLessThanOrEqual(session.endUs);
    // Not stamped when the parent ended (a late flush): before the parent's next request left, so before its end.
    expect(span.endUs / 1000, `${span.category} ${span.name} is not stamped at the parent's end`).toBeLessThanOrEqual(parentAnswer.receivedMs);
  }
  const subLlm = subSpans.filter((span) => span.category === 'llm');
  const subTool = subSpans.filter((span) => span.category === 'tool');
  expect(subLlm).toHaveLength(2);
  expect(subTool).toHaveLength(1);
  for (const span of subLlm) expect(durationMs(span), `the sub-agent's ${span.name} lasts as long as the server held it`).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
  expect(durationMs(subTool[0]!), "the sub-agent's tool lasts as long as it ran").toBeGreaterThanOrEqual(SHARE * TOOL_MS);
  // The parent's tool call lasts at least its sub-agent's two held model calls and its tool.
  expect(durationMs(parentTool)).toBeGreaterThanOrEqual(SHARE * (2 * HOLD_MS + TOOL_MS));

  checkShown(atof, doc, { parentSpans: scopeSpans(parent), subSpans, subScope, otlp: times.otlp });
}

/** What the program saw around a handoff: the run, the server's three exchanges, the handed-to agent's tool. */
export interface HandoffProgramTimes extends Pick<ProgramTimes, 'runStartMs' | 'runEndMs' | 'closedMs' | 'otlp'> {
  /** The parent's model asking for the handoff, then the handed-to agent's ask and answer. */
  exchanges: readonly LoopbackExchange[];
  /** The handed-to agent's tool's own run. */
  tool: { startMs: number; endMs: number };
}

/**
 * A handoff (one parent model call asking for the transfer, then the next agent's model call asking for its tool, the
 * tool, its answer): the next agent is a sub-agent that goes on to the run's end, so its session starts after the
 * transfer and ends with the run, not inside a tool call. Each of its calls must sit where the server and the tool saw
 * it, its embedded trajectory's steps at its spans, and OTLP and `view` must show them as long.
 */
export function checkHandoffTimes(atof: readonly AtofEvent[], doc: AtifDoc, times: HandoffProgramTimes): void {
  expect(times.exchanges, 'the server answered three requests').toHaveLength(3);
  for (const exchange of times.exchanges) expect(exchange.lastByteMs - exchange.receivedMs).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
  expect(times.tool.endMs - times.tool.startMs).toBeGreaterThanOrEqual(SHARE * TOOL_MS);
  const [ask, subAsk, subAnswer] = times.exchanges as [LoopbackExchange, LoopbackExchange, LoopbackExchange];
  const { parent, sub, subScope } = splitRuns(atof);
  const parentSpans = scopeSpans(parent);
  const subSpans = scopeSpans(sub);
  const of = (spans: Span[], category: string) => spans.filter((span) => span.category === category);
  const [parentSession] = of(parentSpans, 'agent');
  const [parentLlm, transfer] = [of(parentSpans, 'llm'), of(parentSpans, 'tool')];
  expect(parentLlm, "the parent's one model call").toHaveLength(1);
  expect(transfer, 'the transfer call').toHaveLength(1);
  const session = subSpans.find((span) => span.uuid === subScope)!;
  const [subLlm, subTools] = [of(subSpans, 'llm'), of(subSpans, 'tool')];
  expect(subLlm).toHaveLength(2);
  expect(subTools).toHaveLength(1);

  // Each model call spans its exchange: it starts before the request arrived (in process) and ends once the answer's
  // last byte went, no later than the next request.
  const pairs: Array<[Span, LoopbackExchange, number]> = [[parentLlm[0]!, ask, subAsk.receivedMs], [subLlm[0]!, subAsk, subAnswer.receivedMs], [subLlm[1]!, subAnswer, times.runEndMs]];
  for (const [span, exchange, before] of pairs) {
    expect(span.startUs / 1000, `${span.name} starts before the server got its request`).toBeLessThanOrEqual(exchange.receivedMs);
    expect(span.endUs / 1000, `${span.name} ends after the server's last byte`).toBeGreaterThanOrEqual(exchange.lastByteMs);
    expect(span.endUs / 1000, `${span.name} ends before what needed its answer`).toBeLessThanOrEqual(before);
    expect(durationMs(span)).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
  }
  expect(parentLlm[0]!.startUs / 1000).toBeGreaterThanOrEqual(times.runStartMs);
  // The transfer comes after the model asked for it; the next agent's session after the transfer; its tool covers the
  // tool's run, between its model calls.
  expect(transfer[0]!.startUs).toBeGreaterThanOrEqual(parentLlm[0]!.endUs);
  expect(session.startUs, "the next agent's session starts after the transfer").toBeGreaterThanOrEqual(transfer[0]!.endUs);
  expect(session.startUs).toBeLessThanOrEqual(subLlm[0]!.startUs);
  const tool = subTools[0]!;
  expect(tool.startUs / 1000, 'the tool span starts before the tool').toBeLessThanOrEqual(times.tool.startMs);
  expect(tool.endUs / 1000, 'the tool span ends after the tool returned').toBeGreaterThanOrEqual(times.tool.endMs);
  expect(tool.startUs).toBeGreaterThanOrEqual(subLlm[0]!.endUs);
  expect(tool.endUs / 1000).toBeLessThanOrEqual(subAnswer.receivedMs);
  // It ends with the run: after its last call, before the program had its result; inside the parent's session.
  expect(session.endUs).toBeGreaterThanOrEqual(subLlm[1]!.endUs);
  expect(session.endUs / 1000, "the next agent's session ends with the run").toBeLessThanOrEqual(times.runEndMs);
  expect(session.endUs).toBeLessThanOrEqual(parentSession!.endUs);
  expect(parentSession!.endUs / 1000).toBeLessThanOrEqual(times.closedMs ?? times.runEndMs);

  // ATIF: the parent's step for its model call at the call's end, the transfer's invocation the transfer span; the
  // embedded trajectory's agent steps at its model calls' ends, each invocation its call's span, the tool's its span.
  const atMs = (seconds: number) => seconds * 1000;
  const near = (actual: number, expected: number, what: string) => expect(Math.abs(actual - expected), what).toBeLessThan(1);
  const parentAgentSteps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(parentAgentSteps).toHaveLength(1);
  near(parseTimestamp(parentAgentSteps[0]!.timestamp) / 1000, parentLlm[0]!.endUs / 1000, "the parent's step is stamped at its call's end");
  near(atMs(parentAgentSteps[0]!.extra.tool_invocations[0].start_timestamp), transfer[0]!.startUs / 1000, "the transfer's start");
  near(atMs(parentAgentSteps[0]!.extra.tool_invocations[0].end_timestamp), transfer[0]!.endUs / 1000, "the transfer's end");
  const subDocs = (doc.subagent_trajectories ?? []) as AtifDoc[];
  expect(subDocs, 'the next agent is embedded in the parent trajectory').toHaveLength(1);
  const subSteps = (subDocs[0]!.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(subSteps).toHaveLength(2);
  subSteps.forEach((step, index) => {
    const span = subLlm[index]!;
    near(parseTimestamp(step.timestamp) / 1000, span.endUs / 1000, `the next agent's step ${index + 1} is stamped at its call's end`);
    near(atMs(step.extra.invocation.start_timestamp), span.startUs / 1000, `its step ${index + 1}'s invocation starts with its call`);
    near(atMs(step.extra.invocation.end_timestamp), span.endUs / 1000, `its step ${index + 1}'s invocation ends with its call`);
  });
  near(atMs(subSteps[0]!.extra.tool_invocations[0].start_timestamp), tool.startUs / 1000, "the next agent's tool's start");
  near(atMs(subSteps[0]!.extra.tool_invocations[0].end_timestamp), tool.endUs / 1000, "the next agent's tool's end");

  checkShown(atof, doc, { parentSpans, subSpans, subScope, otlp: times.otlp });
}

/**
 * Two sub-agents at once (a model asking for the sub-agent's tool twice in one message, the framework running both
 * calls together), their own tools taking different times (`toolRuns`, by the tool's `city` argument): each sub-agent's
 * session sits inside the call that ran it (by the call id it names), its model calls last as long as the server held
 * them, its tool span covers the run of the call it made and no other, and its embedded trajectory's steps are stamped
 * at its own spans: a span given to the wrong sub-agent, or stamped when the other ended, fails here.
 */
export function checkParallelSubagents(atof: readonly AtofEvent[], doc: AtifDoc, toolRuns: Record<string, { startMs: number; endMs: number; ms: number }>): void {
  const all = scopeSpans(atof);
  const starts = atof.filter((e) => e.kind === 'scope' && e.scope_category === 'start');
  const subScopes = starts.filter((e) => e.category === 'agent' && e.metadata?.nemo_relay_scope_role === 'subagent');
  expect(subScopes, 'two sub-agents').toHaveLength(2);
  const subDocs = (doc.subagent_trajectories ?? []) as AtifDoc[];
  expect(subDocs).toHaveLength(2);
  const ran = new Set<string>();
  for (const scope of subScopes) {
    const session = all.find((span) => span.uuid === scope.uuid)!;
    const callId = String(scope.metadata.parent_tool_call_id);
    const callerStart = starts.find((e) => e.category === 'tool' && e.metadata?.tool_call_id === callId);
    expect(callerStart, `the call ${callId} that ran a sub-agent`).toBeDefined();
    const caller = all.find((span) => span.uuid === callerStart!.uuid)!;
    expect(session.startUs / 1000 + SLACK_MS, `the sub-agent of ${callId} starts inside its call`).toBeGreaterThanOrEqual(caller.startUs / 1000);
    expect(session.endUs / 1000 - SLACK_MS, `the sub-agent of ${callId} ends inside its call`).toBeLessThanOrEqual(caller.endUs / 1000);

    const own = starts.filter((e) => e.parent_uuid === scope.uuid);
    const llm = own.filter((e) => e.category === 'llm').map((e) => all.find((span) => span.uuid === e.uuid)!);
    const tools = own.filter((e) => e.category === 'tool');
    expect(llm, `the sub-agent of ${callId}: two model calls`).toHaveLength(2);
    expect(tools, `the sub-agent of ${callId}: one tool call`).toHaveLength(1);
    for (const span of [...llm, all.find((candidate) => candidate.uuid === tools[0]!.uuid)!]) {
      expect(span.startUs, `the sub-agent of ${callId}: ${span.name} inside its session`).toBeGreaterThanOrEqual(session.startUs);
      expect(span.endUs).toBeLessThanOrEqual(session.endUs);
    }
    for (const span of llm) expect(durationMs(span), `the sub-agent of ${callId}: ${span.name} as long as the server held it`).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
    const city = String(tools[0]!.data?.city);
    const run = toolRuns[city];
    expect(run, `the sub-agent of ${callId} ran its tool for ${city}`).toBeDefined();
    ran.add(city);
    const tool = all.find((span) => span.uuid === tools[0]!.uuid)!;
    expect(tool.startUs / 1000, `the sub-agent of ${callId}: its tool span starts before its tool ran`).toBeLessThanOrEqual(run!.startMs);
    expect(tool.endUs / 1000, `the sub-agent of ${callId}: its tool span ends after its tool returned`).toBeGreaterThanOrEqual(run!.endMs);
    expect(durationMs(tool)).toBeGreaterThanOrEqual(SHARE * run!.ms);

    const subDoc = subDocs.find((candidate) => candidate.session_id === scope.metadata.session_id);
    expect(subDoc, `the sub-agent of ${callId} is embedded`).toBeDefined();
    const agentStamps = (subDoc!.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => parseTimestamp(step.timestamp) / 1000);
    expect(agentStamps, `the sub-agent of ${callId}: its steps are stamped at its own calls' ends`).toEqual(llm.map((span) => span.endUs / 1000));
  }
  expect([...ran].sort(), 'each sub-agent ran its own tool').toEqual(Object.keys(toolRuns).sort());
}

/**
 * The tail of a sub-agent run: its files finished whole and valid, then `checkSubagentTimes` on them with the server's
 * exchanges and the collector's spans, read only now, since the plugin exports its spans as it finishes.
 */
export async function finishSubagentRun(
  recorded: Recorded,
  times: Omit<SubagentProgramTimes, 'exchanges' | 'otlp'>,
  { server, collector }: { server: { exchanges: readonly LoopbackExchange[] }; collector: { spans(): readonly DecodedSpan[] } },
): Promise<void> {
  const { atof, doc } = await finishedRun(recorded);
  checkSubagentTimes(atof, doc, { ...times, exchanges: server.exchanges, otlp: collector.spans() });
}

/** The tail of a run of two sub-agents at once: its files finished whole and valid, then `checkParallelSubagents` on them. */
export async function finishParallelSubagents(recorded: Recorded, toolRuns: Parameters<typeof checkParallelSubagents>[2]): Promise<void> {
  const { atof, doc } = await finishedRun(recorded);
  checkParallelSubagents(atof, doc, toolRuns);
}

/**
 * OTLP: every span, the sub-agent's too, at its ATOF scope's times, in one trace, the sub-agent's calls children of its
 * session's span. `view`'s tree of the whole run, from the ATOF events and from the ATIF file: one session, the
 * sub-agent nested in it, its calls and the parent's as long as their spans.
 */
function checkShown(atof: readonly AtofEvent[], doc: AtifDoc, { parentSpans, subSpans, subScope, otlp }: { parentSpans: Span[]; subSpans: Span[]; subScope: string; otlp: readonly DecodedSpan[] | undefined }): void {
  const all = scopeSpans(atof);
  const session = all.find((span) => span.uuid === subScope)!;
  const calls = (spans: Span[], category: string) => spans.filter((span) => span.category === category);
  const [subLlm, subTools, parentLlm, parentTools] = [calls(subSpans, 'llm'), calls(subSpans, 'tool'), calls(parentSpans, 'llm'), calls(parentSpans, 'tool')];
  if (otlp !== undefined) {
    const byStart = [...otlp].sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    const nanos = (us: number) => String(BigInt(us) * 1000n);
    expect(byStart.map((span) => [span.name, span.startTimeUnixNano, span.endTimeUnixNano])).toEqual([...all].sort((a, b) => a.startUs - b.startUs).map((span) => [span.name, nanos(span.startUs), nanos(span.endUs)]));
    expect(new Set(byStart.map((span) => span.traceId)).size, 'one trace').toBe(1);
    const sessionSpan = byStart.find((span) => span.name === session.name && span.startTimeUnixNano === nanos(session.startUs));
    expect(sessionSpan).toBeDefined();
    for (const span of subSpans.filter((candidate) => candidate.uuid !== subScope)) {
      const exported = byStart.find((candidate) => candidate.name === span.name && candidate.startTimeUnixNano === nanos(span.startUs))!;
      expect(exported.parentSpanId, `${span.name} is a child of the sub-agent's span`).toBe(sessionSpan!.spanId);
    }
  }

  const fromAtof = treesFromAtof(atof as unknown as readonly WrittenEvent[]);
  expect(fromAtof, 'one session in the ATOF tree').toHaveLength(1);
  for (const [source, root] of [['ATOF', fromAtof[0]!], ['ATIF', treeFromAtif(doc)]] as const) {
    const shown = descendants(root, 'subagent');
    expect(shown, `${source}: the sub-agent is nested in the parent's tree`).toHaveLength(1);
    const shownLlm = descendants(shown[0]!, 'llm');
    const shownTools = descendants(shown[0]!, 'tool');
    const sameLength = (nodes: ViewNode[], recorded: Span[], what: string) => {
      expect(nodes, `${source}: ${what}`).toHaveLength(recorded.length);
      nodes.forEach((node, index) => expect(Math.abs(durationMs(node) - durationMs(recorded[index]!)), `${source}: view's ${what} ${index + 1}`).toBeLessThan(1));
    };
    sameLength(shownLlm, subLlm, "sub-agent's LLM call");
    sameLength(shownTools, subTools, "sub-agent's tool call");
    // The parent's own calls keep their durations beside it.
    sameLength(descendants(root, 'llm').filter((node) => !shownLlm.includes(node)), parentLlm, "parent's LLM call");
    sameLength(descendants(root, 'tool').filter((node) => !shownTools.includes(node)), parentTools, "parent's tool call");
  }
}
