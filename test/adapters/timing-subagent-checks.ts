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
import type { AtifDoc, AtofEvent } from './support.ts';
import { checkTimes, HOLD_MS, TOOL_MS, type ProgramTimes } from './timing-checks.ts';

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
  const all = scopeSpans(atof);
  const session = all.find((span) => span.uuid === subScope)!;
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

  // OTLP: every span, the sub-agent's too, at its ATOF scope's times, in one trace; the sub-agent's calls are children
  // of its session's span.
  if (times.otlp !== undefined) {
    const byStart = [...times.otlp].sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    expect(byStart.map((span) => [span.name, span.startTimeUnixNano, span.endTimeUnixNano])).toEqual(
      [...all].sort((a, b) => a.startUs - b.startUs).map((span) => [span.name, String(BigInt(span.startUs) * 1000n), String(BigInt(span.endUs) * 1000n)]),
    );
    expect(new Set(byStart.map((span) => span.traceId)).size, 'one trace').toBe(1);
    const sessionSpan = byStart.find((span) => span.startTimeUnixNano === String(BigInt(session.startUs) * 1000n) && span.name === session.name)!;
    expect(sessionSpan).toBeDefined();
    for (const span of subSpans.filter((candidate) => candidate.uuid !== subScope)) {
      const exported = byStart.find((candidate) => candidate.name === span.name && candidate.startTimeUnixNano === String(BigInt(span.startUs) * 1000n))!;
      expect(exported.parentSpanId, `${span.name} is a child of the sub-agent's span`).toBe(sessionSpan.spanId);
    }
  }

  // `view`'s tree of the whole run, from the ATOF events and from the ATIF file: one session, the sub-agent nested in
  // it, its calls as long as their spans.
  const fromAtof = treesFromAtof(atof as unknown as readonly WrittenEvent[]);
  expect(fromAtof, 'one session in the ATOF tree').toHaveLength(1);
  for (const [source, root] of [['ATOF', fromAtof[0]!], ['ATIF', treeFromAtif(doc)]] as const) {
    const shown = descendants(root, 'subagent');
    expect(shown, `${source}: the sub-agent is nested in the parent's tree`).toHaveLength(1);
    const shownLlm = descendants(shown[0]!, 'llm');
    const shownTools = descendants(shown[0]!, 'tool');
    expect(shownLlm).toHaveLength(2);
    expect(shownTools).toHaveLength(1);
    shownLlm.forEach((node, index) => expect(Math.abs(durationMs(node) - durationMs(subLlm[index]!)), `${source}: view's sub-agent LLM call ${index + 1}`).toBeLessThan(1));
    expect(Math.abs(durationMs(shownTools[0]!) - durationMs(subTool[0]!)), `${source}: view's sub-agent tool call`).toBeLessThan(1);
    // The parent's own calls keep their durations beside it.
    const parentLlm = descendants(root, 'llm').filter((node) => !shownLlm.includes(node));
    expect(parentLlm).toHaveLength(2);
    for (const node of parentLlm) expect(durationMs(node)).toBeGreaterThanOrEqual(SHARE * HOLD_MS);
    const parentToolShown = descendants(root, 'tool').filter((node) => !shownTools.includes(node));
    expect(parentToolShown).toHaveLength(1);
    expect(Math.abs(durationMs(parentToolShown[0]!) - durationMs(parentTool)), `${source}: view's parent tool call`).toBeLessThan(1);
  }
}
