// The checks every adapter's random-wire run passes (test/support/random-wire.ts
// draws the provider's replies): the framework's own result is the truth.
// Per LLM call, the trajectory's agent step holds the text and the tool calls
// the framework returned, the observations what the tools returned, and the
// tokens what the framework reports (per step and in total, summed as it
// sums them); where the framework hands a run from agent to agent, each step
// is in the trajectory of the agent that made it (an embedded sub-agent
// trajectory) and every request, tool call and token is in exactly one of
// them (a sub-agent a tool started on a prompt of its own begins with that
// prompt, and its call's result links to it); a run stopped ends
// `interrupted`; the ATOF file has one LLM start/end pair per provider request,
// nothing was lost or counted twice, both files validate, and the same hooks
// on native (where it loads) give the same files.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { HookRegistry } from '../../src/hooks/registry.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { toJson } from '../../src/shared/json.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { chatFinishReason } from '../../src/adapters/core/finish.ts';
import { validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { compareRuns, failedLlmAsNative } from '../differential/random-diff.ts';
import { replay } from '../differential/replay.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { cliInProcess } from '../cli/support.ts';
import { expectBackendsEquivalent, expectFilesEquivalent } from './random-wire-compare.ts';

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

export interface FrameworkStep {
  /** The step's text as the framework returned it. */
  text: string;
  /** The model the framework says answered, when it says. */
  model?: string;
  calls: Array<{ id: string; name: string; args: unknown }>;
  /** What each tool returned, by call id. */
  results: Array<{ id: string; output: unknown }>;
  prompt: number | undefined;
  /** null: the framework does not say per step (the totals still hold it). */
  completion: number | undefined | null;
  /** Cache reads plus writes, as the framework reports them (undefined: it reports none). */
  cached: number | undefined;
  /** Why the model stopped, where the framework says it. */
  finish?: string;
  /** The reasoning the framework returned (null: it says there was none); left out where it does not say. */
  reasoning?: string | null;
  /**
   * Where agents hand the run to each other: the handoff calls that led to the agent that made this step, outermost
   * first (empty: the run's own agent). The step belongs in that sub-agent's trajectory, session `<run>:sub:<call>...`.
   */
  trajectory?: readonly string[];
  /** The agent that made the step, with `trajectory`: the name its trajectory carries. */
  agent?: string;
}

/** A decision taken on a call the framework paused for: by the agent that asked. */
export interface FrameworkApproval {
  id: string;
  agent: string;
  approved: boolean;
  /** An allow that lasts (the Claude Agent SDK's rule kept for the session, or in a settings file); else `once` or `deny`. */
  choice?: 'session' | 'always';
  /** The input an allow ran the call with instead of the model's (an edit, `updatedInput`), when it differs. */
  changedArgs?: Record<string, unknown>;
}

export interface FrameworkTruth {
  prompt: string;
  /** The model the program asked for. */
  model: string;
  /** Undefined when the framework ended the run with an error that holds none (only the totals are known then). */
  steps: FrameworkStep[] | undefined;
  totals: { prompt: number | undefined; completion: number | undefined; cached: number | undefined };
  /** The run threw this (the framework refused a reply). */
  error?: string;
  /** How many of the last calls the framework says failed (their steps must say so); 0 when it threw after the reply. */
  failedCalls?: number;
  /**
   * Sub-agents given a prompt or task of their own (an agent a tool ran, a worker a handoff sent a task), by their link
   * below the run's session (`<call>`, `:sub:`-joined when nested): the trajectory starts with that prompt as its user
   * step, and the result of the call that started it (the link's last part) refers to it.
   */
  subagentPrompts?: ReadonlyMap<string, string>;
  /**
   * A step's tools run at once, and the framework lists their results in an order of its own: a step's results are
   * compared in call-id order (a sub-agent's link enters its call's result when the sub-agent starts, before the others end).
   */
  resultsUnordered?: boolean;
  /** The run was stopped (an abort): its last turn must end `interrupted`. */
  ended?: 'interrupted';
  /** How each sub-agent of `subagentPrompts` ended (its last run), by the same link. */
  subagentsEnded?: ReadonlyMap<string, 'completed' | 'interrupted' | 'failed'>;
  /** Calls (0-based, among all the run's LLM calls) whose attempt failed and was retried: their steps must say so. */
  retried?: readonly number[];
  /** As `retried`, counted among the run's own agent's calls (where sub-agents' calls are recorded in another order than sent). */
  retriedOwn?: readonly number[];
  /** As `retriedOwn`, for sub-agents: by their link (as in `subagentPrompts`), counted among that sub-agent's calls. */
  retriedIn?: ReadonlyMap<string, readonly number[]>;
  /**
   * The model each failed attempt's step names, by the link of the agent that made it (`''` for the run's own agent, a
   * sub-agent's as in `subagentPrompts`); `undefined`: it names none. An agent not in the map is not checked.
   */
  failedStepModels?: ReadonlyMap<string, string | undefined>;
  /** Tool runs the framework stopped for an approval asked inside them (an agent the tool ran) and ran again on resuming: one start/end pair more each. */
  pausedTools?: number;
  /**
   * Sub-agents (their links, as in `subagentPrompts`) the framework started again from their prompt within their run (a
   * LangGraph worker resumed afresh): the request that starts again ends with the prompt, shown as its user step again.
   */
  startedAfresh?: readonly string[];
  /** How many sub-agents the framework ran (an agent resumed after a pause is the same one): the embedded trajectories. */
  subagents?: number;
  /**
   * A sub-agent's steps may be recorded after later calls of its parent: the steps are compared per trajectory, and so
   * are the approvals of their calls (recorded after the call they are about).
   */
  lateSubagentSteps?: boolean;
  /**
   * Sub-agents of one parent ran at once: native gives the later one's scope a stack of its own, its
   * `propagation_root_uuid` itself (docs/backends/memory-and-native.md, "Concurrent sibling scopes"); memory against
   * native compares the rest.
   */
  concurrentSubagents?: boolean;
  /**
   * Where tools asked for approval: the decisions taken on the calls the run paused for (in order), and the outcome of
   * every call of such a tool the framework answered: ran, or rejected with what the model was told.
   */
  approvals?: {
    decided: readonly FrameworkApproval[];
    /** `ran: false`: a call the framework never ran (dropped beside a rejected one, or left by an aborted run). */
    outcomes: ReadonlyArray<{ id: string; denied: boolean; told: unknown; ran?: false; failed?: boolean }>;
    /**
     * The calls in the order the framework asked about them, where that is not the order of the decisions (a policy
     * decides some as it asks, a person the rest later); with the agent that asked, a call nobody decided.
     */
    asked?: ReadonlyArray<string | { id: string; agent: string }>;
    /** Asked and answered in the very trajectory whose step made the call (the agent that paused goes on in it when resumed). */
    inCallsTrajectory?: boolean;
    /**
     * Agents paused at once ask, and take the decisions of the one resume, in the order they happen to run: the requests
     * and the decisions are compared in call-id order (each still with its agent and choice).
     */
    unordered?: boolean;
  };
  /** How each top-level run of the session ended, in order (a run paused for approval or aborted: interrupted). */
  turns?: ReadonlyArray<'completed' | 'interrupted' | 'failed'>;
  /** The run's own agent's totals (its trajectory's final metrics), where the framework reports them apart from its sub-agents'. */
  ownTotals?: { prompt: number | undefined; completion: number | undefined; cached: number | undefined };
  /**
   * Sub-agents (their links, as in `subagentPrompts`) whose last requests may go unrecorded, a limit the adapter's page
   * documents (the framework ended before it showed them): at most this many of each one's last steps. Each of its
   * recorded requests must be one of its `steps`; `steps`, `totals`, `requests()` and `calls()` count them all, and the
   * check takes off the ones not recorded.
   */
  unrecordedAtEnd?: ReadonlyMap<string, number>;
}

export interface RandomRun {
  /** The seed, the wire and the scenario's outline: every failure message starts with it (a function: read once the run is done). */
  label: string | (() => string);
  onNative: boolean;
  /** How many provider requests the fake fetch saw. */
  requests(): number;
  /** How many model calls those requests were (a refused attempt and its retry are one call): each one api_request_id. */
  calls?(): number;
  run(hooks: HookRegistry): Promise<FrameworkTruth>;
}

/** Checks a caller adds to a seed's run (the slow suite's runs; npm test's run without them, to keep its time). */
export interface SeedChecks {
  /**
   * Also run `compare` on the run's files (random-wire-compare.ts): its ATIF against its ATOF, and where native loads,
   * native's two files and memory's trajectory against native's.
   */
  compareFiles?: boolean;
  /** Given the run's trajectory (memory's) and its hooks once written, to hold them against another run of the seed. */
  keep?(doc: AtifDoc, log: Recorded['log']): void;
}

/** A sub-agent the adapter made of a model call the program made inside a step, not from a tool: its link ends so. */
const STEP_HELPER = /:step:\d+:agent:\d+$/;

/**
 * The truth with its `helper:<n>` links (model calls the program made inside a step of its own agent, numbered in the
 * order they started, step-context.ts) replaced by the links the adapter gave them (the run's turn id, the step, the
 * call's number in it), as the `subagent_start` hooks name them in that order.
 */
function withHelperLinks(truth: FrameworkTruth, log: Recorded['log']): FrameworkTruth {
  const started = log.filter((entry) => entry.hook === 'subagent_start' && STEP_HELPER.test(String(entry.payload.child_session_id)));
  const links = started.map((entry) => String(entry.payload.child_session_id).slice(`${String(entry.payload.parent_session_id)}:sub:`.length));
  const resolve = (link: string) => (/^helper:\d+$/.test(link) ? (links[Number(link.slice('helper:'.length)) - 1] ?? link) : link);
  if (links.length === 0) return truth;
  return {
    ...truth,
    ...(truth.steps === undefined ? {} : { steps: truth.steps.map((step) => (step.trajectory === undefined ? step : { ...step, trajectory: step.trajectory.map(resolve) })) }),
    ...(truth.subagentPrompts === undefined ? {} : { subagentPrompts: new Map([...truth.subagentPrompts].map(([link, prompt]) => [resolve(link), prompt])) }),
  };
}

/** The trajectory and its embedded sub-agent trajectories, depth first. */
function trajectoriesOf(doc: AtifDoc): AtifDoc[] {
  return [doc, ...((doc.subagent_trajectories ?? []) as AtifDoc[]).flatMap(trajectoriesOf)];
}

const agentStepsOf = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent' && (step.llm_call_count ?? 0) > 0);

/** An observation's text for what a tool returned: a string as is, anything else as its JSON text. */
function observed(output: unknown): unknown {
  return typeof output === 'string' ? output : JSON.stringify(output);
}

/**
 * The truth without the steps `unrecordedAtEnd` allows to go unrecorded and were not (each sub-agent's last ones, as
 * many as its recorded requests fall short of its steps), and how many that is.
 */
function withoutUnrecorded(label: string, truth: FrameworkTruth, starts: readonly AtifDoc[]): { truth: FrameworkTruth; unrecorded: number } {
  if (truth.unrecordedAtEnd === undefined || truth.steps === undefined) return { truth, unrecorded: 0 };
  const steps = [...truth.steps];
  const dropped: FrameworkStep[] = [];
  /** Sub-agents with no step recorded: no trajectory (an empty one is not written), nothing for their call to link to. */
  const none: string[] = [];
  for (const [link, most] of truth.unrecordedAtEnd) {
    const own = steps.filter((step) => step.trajectory?.join(':sub:') === link);
    const recorded = starts.filter((event) => String(event.metadata?.session_id).endsWith(`:sub:${link}`)).length;
    const missing = own.length - recorded;
    expect(missing >= 0 && missing <= most, `${label}\nthe sub-agent of ${link}: ${recorded} of its ${own.length} requests recorded, at most its last ${most} may not be`).toBe(true);
    for (const step of own.slice(own.length - missing)) {
      steps.splice(steps.lastIndexOf(step), 1);
      dropped.push(step);
    }
    if (recorded === 0) none.push(link);
  }
  const less = (total: number | undefined, taken: Array<number | null | undefined>) => (total === undefined ? undefined : total - taken.reduce<number>((sum, value) => sum + (value ?? 0), 0));
  const totals = {
    prompt: less(truth.totals.prompt, dropped.map((step) => step.prompt)),
    completion: less(truth.totals.completion, dropped.map((step) => step.completion)),
    cached: less(truth.totals.cached, dropped.map((step) => step.cached)),
  };
  const prompts = truth.subagentPrompts === undefined ? undefined : new Map([...truth.subagentPrompts].filter(([link]) => !none.includes(link)));
  const subagents = truth.subagents === undefined ? undefined : truth.subagents - none.length;
  return { truth: { ...truth, steps, totals, ...(prompts === undefined ? {} : { subagentPrompts: prompts }), ...(subagents === undefined ? {} : { subagents }) }, unrecorded: dropped.length };
}

export async function checkRandomRun(options: RandomRun & SeedChecks): Promise<void> {
  const recorded = recordedPlugin('random-wire', 'memory');
  const told = await options.run(recorded.hooks);
  const label = typeof options.label === 'function' ? options.label() : options.label;
  const { atif, atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(counters.dropped ?? 0, label).toBe(0);

  // ATOF: valid, and one LLM start/end pair per request the provider saw.
  expect(validateAtofEvents(atof), label).toEqual([]);
  const llm = atof.filter((event) => event.kind === 'scope' && event.category === 'llm');
  const starts = llm.filter((event) => event.scope_category === 'start');
  const ends = llm.filter((event) => event.scope_category === 'end');
  const { truth, unrecorded } = withoutUnrecorded(label, withHelperLinks(told, recorded.log), starts);
  const requests = options.requests() - unrecorded;
  expect([starts.length, ends.length], `${label}\nLLM start/end pairs against provider requests`).toEqual([requests, requests]);
  expect(new Set(starts.map((event) => event.uuid)).size, label).toBe(starts.length);
  if (options.calls !== undefined) expect(new Set(starts.map((event) => event.metadata?.api_request_id)).size, `${label}\nmodel calls (a call's attempts share its api_request_id)`).toBe(options.calls() - unrecorded);
  expect(new Set(ends.map((event) => event.uuid)), label).toEqual(new Set(starts.map((event) => event.uuid)));

  // What `validate` says of the files as written.
  const files = ['atof', 'atif'].flatMap((kind) => safeList(path.join(recorded.dir, kind)).map((name) => path.join(recorded.dir, kind, name)));
  const validated = await cliInProcess(['validate', ...files]);
  expect(validated.code, `${label}\nvalidate: ${validated.stdout}${validated.stderr}`).toBe(0);

  // ATIF: one trajectory (the agents a run was handed to are sub-agents embedded in it), every one valid.
  expect(atif, label).toHaveLength(1);
  const doc = atif[0]! as AtifDoc;
  options.keep?.(doc, recorded.log);
  const docs = trajectoriesOf(doc);
  for (const trajectory of docs) expect(validateAtif(trajectory), `${label}\n${trajectory.session_id}`).toEqual([]);
  // A model call the program made inside its run's first step before that step's request (an AI SDK `prepareStep`'s) is
  // linked before the turn's user step, which ATIF takes from that request (docs/adapters/ai-sdk.md, "Sub-agents").
  const helperLink = (step: AtifDoc) => step.source === 'agent' && (step.llm_call_count ?? 0) === 0 && (step.tool_calls ?? []).length > 0 && (step.tool_calls as AtifDoc[]).every((call) => STEP_HELPER.test(String(call.extra?.metadata?.child_session_id)));
  expect((doc.steps as AtifDoc[]).find((step) => !helperLink(step)), label).toMatchObject({ source: 'user', message: truth.prompt });
  // In each trajectory nothing else: the user's prompt, then one agent step per model call (a step twice, or one without
  // its call, is a defect). A sub-agent's trajectory has no user step: its first request ends with the transfer's
  // output, not a user message (its goal is the link's, `subagent_start`); one started with a prompt of its own (the Claude
  // Agent SDK's Agent tool) opens with that prompt.
  // A reply with nothing in it (no text, no tool call) that the framework answers by asking again with the same input:
  // that request ends with the user's message, which the converter (native's too) shows as the user's step again
  // (docs/adapters/openai-agents.md, "A reply with nothing in it").
  // A run resumed inside a chain of handoffs reopens it under the resumed turn (sessions `…:sub:<turn id>:agent:<n>`):
  // a reopened agent is referred to by a step of its own (no model call, only the link), and what it answers before
  // its first model call is a `system` step (docs/adapters/openai-agents.md, "Handoffs").
  const reopened = (session: unknown) => /:agent:\d+$/.test(String(session));
  const linkStep = (step: AtifDoc, trajectory: AtifDoc) =>
    step.source === 'agent' &&
    (step.llm_call_count ?? 0) === 0 &&
    (step.tool_calls ?? []).length > 0 &&
    (step.tool_calls as AtifDoc[]).every((call) => String(call.tool_call_id).startsWith('subagent:') && (reopened(trajectory.session_id) || reopened(call.extra?.metadata?.child_session_id)));
  const answeredThere = (step: AtifDoc, trajectory: AtifDoc) => step.source === 'system' && reopened(trajectory.session_id);
  for (const trajectory of docs) {
    const steps = trajectory.steps as AtifDoc[];
    const link = String(trajectory.session_id).slice(`${doc.session_id}:sub:`.length);
    const started = trajectory === doc ? truth.prompt : truth.subagentPrompts?.get(link);
    const repeated = (step: AtifDoc, index: number) => {
      const before = steps[index - 1];
      const afresh = started !== undefined && truth.startedAfresh?.includes(link) === true && step.message === started;
      return index > 0 && step.source === 'user' && (afresh || (step.message === truth.prompt && before?.source === 'agent' && before.message === '' && (before.tool_calls ?? []).length === 0));
    };
    const kept = steps.filter((step, index) => !repeated(step, index) && !linkStep(step, trajectory) && !answeredThere(step, trajectory));
    expect(kept.map((step) => step.source), `${label}\n${trajectory.session_id}`).toEqual([...(started === undefined ? [] : ['user']), ...agentStepsOf(trajectory).map(() => 'agent')]);
    if (started !== undefined) expect(steps.find((step) => !helperLink(step)), `${label}\n${trajectory.session_id}: its prompt`).toMatchObject({ source: 'user', message: started });
  }
  // The model calls in the order the provider saw them: each request's step is the next one of the trajectory whose
  // session sent it, and every step of every trajectory is some request's.
  const pending = new Map(docs.map((trajectory) => [trajectory.session_id as string, agentStepsOf(trajectory)]));
  const trajectoryOf = new Map<AtifDoc, AtifDoc>(docs.flatMap((trajectory) => agentStepsOf(trajectory).map((step) => [step, trajectory] as const)));
  const sent = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => String(entry.payload.session_id));
  expect(sent.length, `${label}\none api request hook per provider request`).toBe(requests);
  const all = sent.map((session) => pending.get(session)?.shift()).filter((step): step is AtifDoc => step !== undefined);
  expect([...pending].filter(([, left]) => left.length > 0).map(([session]) => session), `${label}\nagent steps no request accounts for`).toEqual([]);
  expect(all.length, `${label}\none agent step per provider request`).toBe(requests);
  // A run the framework ended with an error: the calls it did not return are steps that say so.
  // Calls the framework says failed (retried attempts, the last calls of a run it ended with an error): their steps
  // say so (and, with the framework's steps known, the others match them below).
  // `retriedOwn`: the run's own agent's calls, counted among its own; here among all calls, in the order they were recorded.
  const callsOf = (session: string) => sent.flatMap((sender, index) => (sender === session ? [index] : []));
  const ownCalls = callsOf(String(doc.session_id));
  const subCalls = [...(truth.retriedIn ?? [])].flatMap(([link, calls]) => calls.map((call) => callsOf(`${doc.session_id}:sub:${link}`)[call] ?? -1));
  const retried = new Set([...(truth.retried ?? []), ...(truth.retriedOwn ?? []).map((own) => ownCalls[own] ?? -1), ...subCalls]);
  const failed = (truth.failedCalls ?? 0) + retried.size;
  all.forEach((step, index) => {
    const error = step.extra?.llm_response?.error;
    if (retried.has(index) || index >= all.length - (truth.failedCalls ?? 0)) {
      expect(error, `${label}\nstep ${index + 1}: a failed call (${truth.error ?? 'retried'})`).toBeDefined();
      const session = String(trajectoryOf.get(step)?.session_id);
      const link = session === doc.session_id ? '' : session.slice(`${doc.session_id}:sub:`.length);
      if (truth.failedStepModels?.has(link) === true) expect(step.model_name, `${label}\nstep ${index + 1} (${session}): the model of a failed attempt`).toBe(truth.failedStepModels.get(link));
    }
    else expect(error, `${label}\nstep ${index + 1} (${String(trajectoryOf.get(step)?.session_id)}): an answered call`).toBeUndefined();
  });
  if (truth.steps !== undefined) expect(truth.steps.length, `${label}\nthe framework's responses against the answered calls`).toBe(all.length - failed);
  let known = truth.steps ?? [];
  const answered = all.filter((_, index) => !retried.has(index)).slice(0, known.length);
  // Each trajectory's steps in its order, and across trajectories in the order they were recorded: a sub-agent's steps
  // recorded late (docs/adapters/claude-agent-sdk.md, "How it works") are still its own, in its order.
  if (truth.lateSubagentSteps === true && known.every((step) => step.trajectory !== undefined)) {
    const bySession = new Map<string, FrameworkStep[]>();
    for (const step of known) {
      const session = [doc.session_id, ...step.trajectory!].join(':sub:');
      bySession.set(session, [...(bySession.get(session) ?? []), step]);
    }
    const merged = answered.map((step) => bySession.get(String(trajectoryOf.get(step)?.session_id))?.shift());
    if (merged.every((step) => step !== undefined)) known = merged as FrameworkStep[];
  }
  const inOrder = <T extends { source_call_id: string }>(results: T[]): T[] => (truth.resultsUnordered === true ? [...results].sort((a, b) => (a.source_call_id < b.source_call_id ? -1 : a.source_call_id > b.source_call_id ? 1 : 0)) : results);
  const expectedSteps = known.map((step) => ({
    message: step.text,
    ...(step.model === undefined ? {} : { model_name: step.model }),
    tool_calls: step.calls.map((call) => ({ tool_call_id: call.id, function_name: call.name, arguments: call.args })),
    results: inOrder(step.results.map((result) => ({ source_call_id: result.id, content: observed(result.output) }))),
    prompt_tokens: step.prompt,
    completion_tokens: step.completion,
    cached_tokens: step.cached,
    ...(step.trajectory === undefined ? {} : { session: [doc.session_id, ...step.trajectory].join(':sub:'), agent: step.agent }),
  }));
  const gotSteps = answered.map((step) => ({
    message: step.message,
    ...(step.model_name === undefined || known[answered.indexOf(step)]?.model === undefined ? {} : { model_name: step.model_name }),
    tool_calls: (step.tool_calls ?? []).map((call: AtifDoc) => ({ tool_call_id: call.tool_call_id, function_name: call.function_name, arguments: call.arguments })),
    results: inOrder((step.observation?.results ?? []).map((result: AtifDoc) => ({ source_call_id: result.source_call_id as string, content: result.content }))),
    prompt_tokens: step.metrics?.prompt_tokens,
    completion_tokens: known[answered.indexOf(step)]?.completion === null ? null : step.metrics?.completion_tokens,
    cached_tokens: step.metrics?.cached_tokens,
    ...(known[answered.indexOf(step)]?.trajectory === undefined ? {} : { session: trajectoryOf.get(step)?.session_id, agent: trajectoryOf.get(step)?.agent?.name }),
  }));
  expect(gotSteps, `${label}\nthe agent steps against what the framework returned`).toEqual(expectedSteps);
  // Every call is answered beside the step that made it: none in a `system` step of a reopened trajectory.
  const movedGot = docs.flatMap((trajectory) => (trajectory.steps as AtifDoc[]).filter((step) => answeredThere(step, trajectory)).flatMap((step) => (step.observation?.results ?? []).map((result: AtifDoc) => result.content)));
  expect(movedGot, `${label}\ncalls answered in a system step`).toEqual([]);

  // Reasoning, where the framework says it.
  const reasonings = known.map((step, index) => (step.reasoning === undefined ? undefined : (answered[index]?.reasoning_content ?? null)));
  expect(reasonings, `${label}\nreasoning against the framework's`).toEqual(known.map((step) => step.reasoning));

  // One tool start/end pair per tool the framework ran.
  if (truth.steps !== undefined) {
    const tools = atof.filter((event) => event.kind === 'scope' && event.category === 'tool');
    const ran = truth.steps.reduce((sum, step) => sum + step.results.length, 0) + (truth.pausedTools ?? 0);
    expect([tools.filter((event) => event.scope_category === 'start').length, tools.filter((event) => event.scope_category === 'end').length], `${label}\ntool start/end pairs against the tools run`).toEqual([ran, ran]);
  }

  // Finish reasons, where the framework says them: the answered calls' LLM ends in the ATOF file.
  // In the order the calls started (the order of the steps): a call recorded late may end after a later one started.
  const startAt = new Map(starts.map((event, index) => [event.uuid, index]));
  const answeredEnds = ends.filter((event) => event.metadata?.['error.type'] === undefined).sort((a, b) => startAt.get(a.uuid)! - startAt.get(b.uuid)!);
  const finishes = known.map((step, index) => (step.finish === undefined ? undefined : answeredEnds[index]?.data?.finish_reason));
  // The framework's word in the adapters' one vocabulary (Chat Completions' spelling, src/adapters/core/finish.ts).
  expect(finishes, `${label}\nfinish reasons against the framework's`).toEqual(known.map((step) => chatFinishReason(step.finish, step.calls.length > 0)));

  // Totals: what the framework summed, over the trajectories (each states its own steps'; one without an answered call
  // states none).
  const sum = (field: string): number | undefined =>
    docs.reduce<number | undefined>((total, trajectory) => {
      const value = trajectory.final_metrics?.[field] as number | undefined;
      return value === undefined ? total : (total ?? 0) + value;
    }, undefined);
  expect(
    { prompt: sum('total_prompt_tokens'), completion: sum('total_completion_tokens'), cached: sum('total_cached_tokens') },
    `${label}\nfinal metrics against the framework's totals`,
  ).toEqual(all.length === failed ? { prompt: undefined, completion: undefined, cached: undefined } : truth.totals);
  // Per trajectory too, where each step's is known: its final metrics are its own steps' tokens, as the framework reported
  // them (completion tokens where it reports them per step).
  if (truth.steps !== undefined && truth.error === undefined && known.length > 0 && known.every((step) => step.trajectory !== undefined)) {
    const perStep = !known.some((step) => step.completion === null);
    const total = (values: Array<number | null | undefined>) => (values.every((value) => value === undefined) ? undefined : values.reduce<number>((a, b) => a + (b ?? 0), 0));
    const expectedBy = docs.map((trajectory) => {
      const own = known.filter((step) => [doc.session_id, ...step.trajectory!].join(':sub:') === trajectory.session_id);
      return { session: trajectory.session_id, prompt: total(own.map((step) => step.prompt)), ...(perStep ? { completion: total(own.map((step) => step.completion)) } : {}), cached: total(own.map((step) => step.cached)) };
    });
    const gotBy = docs.map((trajectory) => ({
      session: trajectory.session_id,
      prompt: trajectory.final_metrics?.total_prompt_tokens,
      ...(perStep ? { completion: trajectory.final_metrics?.total_completion_tokens } : {}),
      cached: trajectory.final_metrics?.total_cached_tokens,
    }));
    expect(gotBy, `${label}\neach trajectory's final metrics against its steps' tokens`).toEqual(expectedBy);
  }
  // One trajectory per session, and as many sub-agents as the framework ran (no second one for an agent that went on).
  expect(docs.map((trajectory) => trajectory.session_id).filter((session, index, all) => all.indexOf(session) !== index), `${label}\ntrajectories sharing a session`).toEqual([]);
  if (truth.subagents !== undefined) expect(docs.length - 1, `${label}\nsub-agent trajectories against the sub-agents the framework ran`).toEqual(truth.subagents);
  if (truth.ownTotals !== undefined) {
    const own = doc.final_metrics ?? {};
    expect({ prompt: own.total_prompt_tokens, completion: own.total_completion_tokens, cached: own.total_cached_tokens }, `${label}\nthe run's own agent's final metrics against the framework's`).toEqual(truth.ownTotals);
  }

  // Approvals: each call the run paused for asked once and answered once, with the decision taken, in the trajectory of
  // the agent that asked; each call of such a tool ran, or is `denied` with what the model was told.
  if (truth.approvals !== undefined) {
    const agentOf = new Map(docs.map((trajectory) => [trajectory.session_id as string, trajectory.agent?.name as string | undefined]));
    const hooked = (name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as AtifDoc);
    const asked = hooked('pre_approval_request').map((payload) => ({ id: payload.tool_call_id, agent: agentOf.get(payload.session_id) }));
    const answered = hooked('post_approval_response').map((payload) => ({ id: payload.tool_call_id, agent: agentOf.get(payload.session_id), choice: payload.choice, changed: payload.changed_args }));
    const { decided, outcomes } = truth.approvals;
    const byId = new Map(decided.map((decision) => [decision.id, decision]));
    const askedOrder = truth.approvals.asked?.map((entry) => (typeof entry === 'string' ? (byId.get(entry) ?? { id: entry, agent: '(never decided)' }) : entry)) ?? decided;
    const callsSession = new Map(docs.flatMap((trajectory) => (trajectory.steps as AtifDoc[]).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id as string, trajectory.session_id as string] as const))));
    // Per trajectory (each in its order) where a sub-agent's calls may be recorded late: grouped by the trajectory of the call.
    const sessions = docs.map((trajectory) => trajectory.session_id as string);
    const rank = (id: string) => (truth.lateSubagentSteps === true ? sessions.indexOf(String(callsSession.get(id) ?? '')) : 0);
    const perTrajectory = <T extends { id: unknown }>(list: readonly T[]): T[] => list.map((entry, index) => ({ entry, index })).sort((a, b) => rank(String(a.entry.id)) - rank(String(b.entry.id)) || a.index - b.index).map(({ entry }) => entry);
    // Agents paused at once ask and take their decisions in whatever order they run: by call id then.
    const inOrderOf = <T extends { id: unknown }>(list: readonly T[]): T[] => (truth.approvals?.unordered === true ? [...list].sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0)) : perTrajectory(list));
    expect(inOrderOf(asked), `${label}
approval requests against the calls the run paused for`).toEqual(inOrderOf(askedOrder.map((decision) => ({ id: decision.id, agent: decision.agent }))));
    if (truth.approvals.inCallsTrajectory === true) {
      const where = (name: string) => hooked(name).map((payload) => ({ id: payload.tool_call_id, session: payload.session_id }));
      for (const name of ['pre_approval_request', 'post_approval_response']) {
        expect(where(name), `${label}\n${name} in the trajectory that made the call`).toEqual(where(name).map(({ id }) => ({ id, session: callsSession.get(id) })));
      }
    }
    expect(inOrderOf(answered), `${label}
approval decisions against those taken`).toEqual(inOrderOf(decided.map((decision) => ({ id: decision.id, agent: decision.agent, choice: decision.choice ?? (decision.approved ? 'once' : 'deny'), changed: decision.changedArgs }))));
    const toolEnds = hooked('post_tool_call');
    const got = outcomes.map((outcome) => toolEnds.filter((payload) => payload.tool_call_id === outcome.id).map((payload) => ({ status: payload.status, result: payload.result })));
    expect(got, `${label}
the outcomes of the calls that needed approval`).toEqual(outcomes.map((outcome) => (outcome.ran === false ? [] : [{ status: outcome.denied ? 'denied' : outcome.failed === true ? 'error' : 'ok', result: outcome.told }])));
  }

  // How each top-level run of the session ended.
  if (truth.turns !== undefined) {
    const ended = recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id).map((entry) => (entry.payload.interrupted ? 'interrupted' : entry.payload.completed ? 'completed' : 'failed'));
    expect(ended, `${label}\nhow the runs ended`).toEqual(truth.turns);
  }

  // A sub-agent the program started: its trajectory is linked from the result of the call that ran it, in the trajectory
  // that made the call.
  for (const [link] of truth.subagentPrompts ?? []) {
    const callId = link.split(':sub:').at(-1)!;
    const child = docs.find((trajectory) => String(trajectory.session_id) === `${doc.session_id}:sub:${link}`);
    const parent = docs.find((trajectory) => ((trajectory.subagent_trajectories ?? []) as AtifDoc[]).includes(child!));
    const results = ((parent?.steps ?? []) as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []) as AtifDoc[]);
    // A model call made inside a step (no tool call ran it): linked from a call of its own, the link's.
    const helper = STEP_HELPER.test(link);
    const links = results
      .filter((result) => (helper ? String(result.source_call_id).startsWith('subagent:') && (result.subagent_trajectory_ref ?? []).some((ref: AtifDoc) => ref.session_id === child?.session_id) : result.source_call_id === callId))
      .map((result) => (result.subagent_trajectory_ref ?? []).map((ref: AtifDoc) => ref.session_id));
    expect({ embedded: child !== undefined, links }, `${label}\nthe sub-agent of ${callId}, linked from ${helper ? 'its step' : 'its call'}`).toEqual({ embedded: true, links: [[child?.session_id]] });
  }

  // How each sub-agent ended: its session's last turn, and what its parent was told.
  for (const [link, status] of truth.subagentsEnded ?? []) {
    const session = `${doc.session_id}:sub:${link}`;
    const turnEnds = recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === session).map((entry) => (entry.payload.interrupted ? 'interrupted' : entry.payload.completed ? 'completed' : 'failed'));
    const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop' && entry.payload.child_session_id === session).map((entry) => entry.payload.child_status);
    expect({ ended: turnEnds.at(-1), stopped: stops.at(-1) }, `${label}\nhow the sub-agent of ${link} ended`).toEqual({ ended: status, stopped: status });
  }

  // A run stopped: its last turn ends `interrupted` (and the run's own session says so last).
  if (truth.ended !== undefined) {
    const turnEnds = recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id).map((entry) => entry.payload.interrupted);
    expect(turnEnds.at(-1), `${label}\nthe last turn ends interrupted: ${JSON.stringify(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload))}`).toBe(true);
  }

  // `compare` on the files (after the checks against the framework, which name a defect more plainly).
  const memoryAtif = options.compareFiles === true ? await expectFilesEquivalent(label, 'memory', recorded.dir, String(doc.session_id)) : undefined;
  if (!options.onNative) return;
  // The same hooks on native: the same files.
  const lines = recorded.log.map((entry) => ({ hook: entry.hook as HookName, payload: toJson(entry.payload) as Record<string, unknown> }));
  // A failed call's end: memory says ERROR where native forces OK (docs/backends/memory-and-native.md).
  const memory = failedLlmAsNative(await replay(createMemoryRelay({ logger: silentLogger }), lines));
  const native = await replay(loadNativeRelay({ logger: silentLogger }), lines);
  expect(compareRuns(memory, native, truth.concurrentSubagents === true ? { drop: ['propagation_root_uuid'] } : {}), `${label}\nmemory against native`).toEqual([]);
  if (memoryAtif === undefined) return;
  await expectBackendsEquivalent(label, memoryAtif, await expectFilesEquivalent(label, 'native', native.dir, String(doc.session_id)));
}
