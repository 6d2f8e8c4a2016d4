// One seed of the AI SDK against random provider replies
// (test/support/random-wire.ts): a ToolLoopAgent written as the SDK's docs
// write it, on the real provider package of the drawn wire (of the major
// given, test/support/ai-sdk-providers.ts), with the plugin
// on the memory relay; the trajectory is checked against what the SDK
// itself returned (its steps' text, tool calls, tool results and usage,
// its totalUsage), the ATOF file against the requests the fetch saw, and,
// where native loads, the same hooks on native must give the same files.
// A plan drawn apart (so a seed's replies stay what they were) adds, per seed:
// - approvals: tools with `needsApproval` (true, and a function of the
//   input), or a `toolApproval` policy that approves, denies or leaves the
//   call to a person; the run stops with the requests (several at once),
//   and the next run carries a `tool-approval-response` per request
//   (approved or denied, with a reason or not), in the session named by
//   `sessionId` or found by the approval id;
// - a tool that throws (the model is told the error);
// - sub-agents: a `research` tool whose `execute` runs another ToolLoopAgent
//   (generated or streamed, as the SDK docs' subagents pattern does), on
//   replies of its own;
// - an abort: the `AbortSignal` of the run fires as the agent's n-th
//   provider request goes out (a stop button); the run must end
//   `interrupted`, the request cut short a failed call.
// A second plan, drawn apart again (the first plan's seeds stay what they
// were), adds to the seeds with sub-agents:
// - more than one sub-agent call in a step (the research tool twice, or
//   beside a `summarize` tool running another agent), run at once;
// - approvals inside a sub-agent: its tools need approval (`needsApproval`
//   or a `toolApproval` policy); the sub-agent's run stops with the
//   requests and hands them back in its result, as any run does. The tool
//   either answers them as the docs' manual approval flow does (asks a
//   person, runs the sub-agent again with the answers) or, as the docs'
//   plain sub-agent tool does, returns the sub-agent's text with the
//   requests left unanswered (the docs: sub-agent tools cannot use approvals);
// - an abort as a sub-agent's n-th request goes out (the parent's
//   `abortSignal` passed on, as the docs show): the sub-agent and the run
//   end `interrupted`, each request recorded once, the tokens those
//   received (under a generated parent, one sub-agent at a time: see
//   planExtras).
// A third plan, drawn apart again, adds model calls the program makes inside
// a step of its own agent, not from a tool (each the step's sub-agent, named
// for what it is: src/adapters/ai-sdk/step-context.ts):
// - a call whose input does not parse (`weather` without its `city`), and an
//   `experimental_repairToolCall` that asks a model for the input as the SDK's
//   docs write one: the call runs once with the repaired input, the step says
//   what the model sent;
// - under generate(), a `prepareStep` that asks a model before one step
//   (stream() calls prepareStep outside its step: there such a call is a
//   session of its own, docs/adapters/ai-sdk.md).
// Neither beside an abort.
import { STREAM_REPAIR_OUTSIDE_STEP } from './stream-repair.ts';
import { generateText, NoSuchToolError, ToolLoopAgent, stepCountIs, tool, type LanguageModel, type ModelMessage, type StepResult, type ToolSet } from 'ai';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import type { ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomWireKind, type RandomWireRequest } from '../../support/random-wire.ts';
import { checkRandomRun, type FrameworkApproval, type FrameworkStep, type SeedChecks } from '../random-wire-checks.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const MODELS: Record<RandomWireKind, { requested: string; dated: string; model(packages: ProviderPackages, fetch: typeof globalThis.fetch): LanguageModel }> = {
  responses: { requested: 'gpt-4.1', dated: 'gpt-4.1-2025-04-14', model: (packages, fetch) => packages.openai({ apiKey: 'test-key', fetch })('gpt-4.1') },
  chat: { requested: 'gpt-4o-mini', dated: 'gpt-4o-mini-2024-07-18', model: (packages, fetch) => packages.openai({ apiKey: 'test-key', fetch }).chat('gpt-4o-mini') },
  anthropic: { requested: 'claude-sonnet-4-5', dated: 'claude-sonnet-4-5-20250929', model: (packages, fetch) => packages.anthropic({ apiKey: 'test-key', fetch })('claude-sonnet-4-5') },
  // `dated` is Gemini's modelVersion, which @ai-sdk/google does not pass on: steps name the model asked for.
  gemini: { requested: 'gemini-2.5-flash', dated: 'gemini-2.5-flash-001', model: (packages, fetch) => packages.google({ apiKey: 'test-key', fetch })('gemini-2.5-flash') },
};

/** The program's tools, and how the wire draws their arguments. */
const TOOLS: RandomTool[] = [
  { name: 'weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'clock', args: () => ({}) },
  { name: 'search', args: (draw) => ({ query: randomText(draw, 4), limit: draw.int(1, 5) }) },
];
/** Tools a person (or the policy) approves first: always, and (the function form) a refund of 100 or more. */
const APPROVAL_TOOLS: RandomTool[] = [
  { name: 'cancel_order', args: (draw) => ({ orderId: draw.int(1, 999) }) },
  { name: 'refund_order', args: (draw) => ({ orderId: draw.int(1, 999), amount: draw.int(1, 200) }) },
];
const BOOK: RandomTool = { name: 'book', args: (draw) => ({ hotel: randomText(draw, 3) }) };
const RESEARCH: RandomTool = { name: 'research', args: (draw) => ({ topic: randomText(draw, 4) }) };
const SUMMARIZE: RandomTool = { name: 'summarize', args: (draw) => ({ topic: randomText(draw, 4) }) };

const MAIN_AGENT = 'travel-agent';
const SUB_AGENT = 'researcher';
const SUMMARY_AGENT = 'summarizer';
/** What the providers tell the model of a denied call without a reason (each provider package's fallback). */
const DENIED_FALLBACK = 'Tool call execution denied.';

/** The `toolApproval` policy form: a refund over 150 is denied outright, one of 100 or more goes to a person, the rest approved; a cancellation goes to a person. */
const POLICY = {
  cancel_order: 'user-approval',
  refund_order: ({ amount }: { amount: number }) => (amount > 150 ? { type: 'denied', reason: `over the limit: ${amount}` } : amount >= 100 ? 'user-approval' : 'approved'),
} as const;

interface Plan {
  approvals: 'needsApproval' | 'toolApproval' | undefined;
  /** The approval responses go into a tool message of their own, or are added to the last one (holding the step's tool results). */
  ownMessage: boolean;
  sessionId: string | undefined;
  failing: boolean;
  /** Parent turns (0-based) that call the research tool, each with the sub-agent's seed. */
  research: Map<number, number>;
  subMode: 'generate' | 'stream';
  /** The 0-based request of the run's own agent (sub-agents' left out) as which the run is aborted. */
  abortAt: number | undefined;
  /** Each sub-agent call the plan added, by call id: the sub-agent's seed (a call the wire names by an id of the SDK's, Gemini's, takes one by its order). */
  subCalls: Map<string, number>;
  /** Some step calls more than one sub-agent. */
  parallel: boolean;
  /** The sub-agents' tools need approval, and how (undefined: they do not). */
  subApprovals: 'needsApproval' | 'toolApproval' | undefined;
  /** The tool running a sub-agent answers its approval requests (the manual approval flow), or leaves them unanswered. */
  subAnswers: boolean;
  /** The 0-based request among all the sub-agents' as which the run is aborted. */
  abortInSub: number | undefined;
  /** The step-helpers plan (planHelpers). */
  helpers: Helpers;
  outline: string[];
}

/** Model calls the program makes inside a step of its own agent (the third plan). */
interface Helpers {
  /** The id of the call added with an input that does not parse (`experimental_repairToolCall` asks a model); Gemini's is the SDK's. */
  repair: string | undefined;
  /** The step number (of a run) whose `prepareStep` asks a model, once. */
  prepareStepAt: number | undefined;
}

/** Adds calls of the extra tools to the tool-calling turns of `scenario` and draws how the run goes; nothing for some seeds. */
function planExtras(seed: number, scenario: RandomScenario, mode: 'generate' | 'stream'): Plan {
  const draw = new Draw(seed ^ 0xa15d);
  const plan: Plan = {
    approvals: undefined,
    ownMessage: true,
    sessionId: undefined,
    failing: false,
    research: new Map(),
    subMode: 'generate',
    abortAt: undefined,
    subCalls: new Map(),
    parallel: false,
    subApprovals: undefined,
    subAnswers: true,
    abortInSub: undefined,
    helpers: { repair: undefined, prepareStepAt: undefined },
    outline: [],
  };
  const callers = scenario.turns.map((turn, index) => ({ turn, index })).filter(({ turn }) => turn.calls.length > 0);
  const add = (index: number, tool: RandomTool, id: string) => {
    const turn = scenario.turns[index]!;
    turn.calls.splice(draw.int(0, turn.calls.length), 0, { id, name: tool.name, args: tool.args(draw) });
    scenario.outline[index] += ` +${tool.name}`;
  };
  if (draw.chance(0.5)) {
    plan.approvals = draw.chance(0.5) ? 'needsApproval' : 'toolApproval';
    plan.ownMessage = draw.chance(0.5);
    plan.sessionId = draw.chance(0.5) ? `user-${seed}` : undefined;
    plan.outline.push(`approvals by ${plan.approvals}${plan.sessionId === undefined ? '' : `, session ${plan.sessionId}`}, answers in ${plan.ownMessage ? 'a tool message of their own' : 'the last tool message'}`);
    for (const { index } of callers) {
      if (!draw.chance(0.7)) continue;
      const n = draw.int(1, 2);
      for (let k = 0; k < n; k++) add(index, draw.pick(APPROVAL_TOOLS), `call_${seed}_approval_${index + 1}_${k + 1}`);
    }
  }
  if (draw.chance(0.3)) {
    plan.failing = true;
    for (const { index } of callers) if (draw.chance(0.6)) add(index, BOOK, `call_${seed}_book_${index + 1}`);
  }
  if (draw.chance(0.35)) {
    plan.subMode = draw.pick(['generate', 'stream'] as const);
    plan.outline.push(`sub-agents ${plan.subMode}`);
    // One research call per turn here; the second plan adds more (each sub-agent has a wire of its own).
    for (const { index } of callers) {
      if (!draw.chance(0.6)) continue;
      add(index, RESEARCH, `call_${seed}_research_${index + 1}`);
      plan.research.set(index, 100_000 + seed * 8 + index);
      plan.subCalls.set(`call_${seed}_research_${index + 1}`, 100_000 + seed * 8 + index);
    }
  }
  if (draw.chance(0.2)) {
    plan.abortAt = draw.int(0, 5);
    // The run's own requests: one of a sub-agent's would stop the step that called it before the SDK reports it.
    plan.outline.push(`aborted as the run's request ${plan.abortAt + 1} goes out (if it gets there)`);
  }
  planHelpers(seed, scenario, mode, plan);
  if (plan.research.size === 0) return plan;
  // The second plan: its own draws, so the first plan's seeds are what they were.
  const more = new Draw(seed ^ 0x5ab5ab);
  if (more.chance(0.6)) {
    for (const [index] of plan.research) {
      if (!more.chance(0.7)) continue;
      const second = more.pick([RESEARCH, SUMMARIZE]);
      const id = `call_${seed}_${second.name}_${index + 1}_2`;
      const turn = scenario.turns[index]!;
      turn.calls.splice(more.int(0, turn.calls.length), 0, { id, name: second.name, args: second.args(more) });
      scenario.outline[index] += ` +${second.name}`;
      plan.subCalls.set(id, 200_000 + seed * 8 + index);
      plan.parallel = true;
    }
    if (plan.parallel) plan.outline.push('several sub-agents in one step');
  }
  if (more.chance(0.5)) {
    plan.subApprovals = more.chance(0.5) ? 'needsApproval' : 'toolApproval';
    plan.subAnswers = more.chance(0.7);
    plan.outline.push(`sub-agents' tools need approval by ${plan.subApprovals}, ${plan.subAnswers ? 'answered by the tool that runs them' : 'left unanswered'}`);
  }
  // Only under a generated parent with one sub-agent at a time: a streamed parent reports nothing of the step whose tool
  // the abort cut (its step never finishes: no text, calls or tokens to hold the trajectory to), and sub-agents at
  // once leave no order in which the cut calls come last.
  if (plan.abortAt === undefined && mode === 'generate' && !plan.parallel && more.chance(0.5)) {
    plan.abortInSub = more.int(0, 2);
    plan.outline.push(`aborted as the sub-agents' request ${plan.abortInSub + 1} goes out (if it gets there)`);
  }
  // A sub-agent's abort is drawn after the helpers: none beside it.
  if (plan.abortInSub !== undefined) plan.helpers = { repair: undefined, prepareStepAt: undefined };
  return plan;
}

/** What the third plan draws for `seed` on `wire` (for a test's name): the model calls made inside a step. */
export function seedHelpers(seed: number, wire: RandomWireKind): string {
  const scenario = randomScenario(seed, wire, MODELS[wire].dated, TOOLS);
  const mode = new Draw(seed ^ 0x5eed).pick(['generate', 'stream'] as const);
  const { helpers } = planExtras(seed, scenario, mode);
  return [helpers.repair !== undefined && 'a repair asks a model', helpers.prepareStepAt !== undefined && `prepareStep asks a model before step ${helpers.prepareStepAt + 1}`].filter(Boolean).join(', ');
}

/** The third plan: its own draws, so the seeds of the first two are what they were. */
function planHelpers(seed: number, scenario: RandomScenario, mode: 'generate' | 'stream', plan: Plan): void {
  if (plan.abortAt !== undefined) return;
  const draw = new Draw(seed ^ 0x4e1b5);
  const callers = scenario.turns.flatMap((turn, index) => (turn.calls.length > 0 ? [index] : []));
  // A streamed repair is a session of its own on Node 26 (./stream-repair.ts): drawn only where it is the step's.
  if (callers.length > 0 && draw.chance(0.35) && !(mode === 'stream' && STREAM_REPAIR_OUTSIDE_STEP)) {
    const index = draw.pick(callers);
    const id = `call_${seed}_repair_${index + 1}`;
    const turn = scenario.turns[index]!;
    turn.calls.splice(draw.int(0, turn.calls.length), 0, { id, name: 'weather', args: { town: randomText(draw, 3) } });
    scenario.outline[index] += ' +weather (input repaired by a model)';
    plan.helpers.repair = id;
    plan.outline.push('experimental_repairToolCall asks a model');
  }
  if (mode === 'generate' && draw.chance(0.35)) {
    plan.helpers.prepareStepAt = draw.int(0, scenario.turns.length - 1);
    plan.outline.push(`prepareStep asks a model before step ${plan.helpers.prepareStepAt + 1}`);
  }
}

/**
 * The wire of a model call the program makes inside a step: one turn, the last of `seed`'s scenario; a repair's answers
 * with the input (`answer`), as a model asked for JSON does.
 */
function helperWire(seed: number, wire: RandomWireKind, dated: string, answer?: string): RandomWire {
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  scenario.turns = scenario.turns.slice(-1);
  scenario.outline = scenario.outline.slice(-1);
  const turn = scenario.turns[0]!;
  if (answer !== undefined) Object.assign(turn, { text: answer, refusal: undefined, finish: 'stop', reasoning: undefined });
  return new RandomWire(seed, scenario);
}

type SubAgentTool = (agent: string, topic: string, toolCallId: string, abortSignal: AbortSignal | undefined) => Promise<string>;

/** The tools that need approval: always, and (the function form) a refund of 100 or more; with `policy`, none by themselves. */
function approvalTools(policy: boolean, executed: Map<string, unknown>): ToolSet {
  const ran = <T>(id: string, output: T): T => (executed.set(id, output), output);
  return {
    cancel_order: tool({
      description: 'Cancel an order',
      inputSchema: z.object({ orderId: z.number() }),
      ...(policy ? {} : { needsApproval: true }),
      execute: async ({ orderId }, { toolCallId }) => ran(toolCallId, `Cancelled order ${orderId}`),
    }),
    refund_order: tool({
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.number(), amount: z.number() }),
      ...(policy ? {} : { needsApproval: async ({ amount }: { amount: number }) => amount >= 100 }),
      execute: async ({ orderId, amount }, { toolCallId }) => ran(toolCallId, `Refunded ${amount} on order ${orderId}`),
    }),
  };
}

/** What the program does inside its steps: `prepareStep` and `experimental_repairToolCall`, where the plan draws them. */
interface StepCode {
  prepareStep?: (options: { stepNumber: number }) => Promise<undefined | { instructions: string }>;
  experimental_repairToolCall?: (options: { toolCall: Loose; inputSchema: (options: { toolName: string }) => unknown; error: unknown }) => Promise<Loose | null>;
}

function program(model: LanguageModel, plan: Plan, executed: Map<string, unknown>, research: SubAgentTool, stepCode: StepCode = {}) {
  const tools: ToolSet = {
    weather: tool({
      description: 'Get the weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
    }),
    clock: tool({
      description: 'The current time',
      inputSchema: z.object({}),
      execute: async () => '12:00 🕛',
    }),
    search: tool({
      description: 'Search the web',
      inputSchema: z.object({ query: z.string(), limit: z.number() }),
      execute: async ({ query, limit }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }),
    }),
  };
  if (plan.approvals !== undefined) Object.assign(tools, approvalTools(plan.approvals === 'toolApproval', executed));
  if (plan.failing) {
    tools.book = tool({
      description: 'Book a hotel',
      inputSchema: z.object({ hotel: z.string() }),
      execute: async ({ hotel }): Promise<string> => {
        throw new Error(`${hotel} is fully booked`);
      },
    });
  }
  if (plan.research.size > 0) {
    tools.research = tool({
      description: 'Research a topic with a sub-agent',
      inputSchema: z.object({ topic: z.string() }),
      execute: async ({ topic }, { toolCallId, abortSignal }) => await research(SUB_AGENT, topic, toolCallId, abortSignal),
    });
    if ([...plan.subCalls.keys()].some((id) => id.includes('_summarize_'))) tools.summarize = tool({
      description: 'Summarize what is known of a topic with a sub-agent',
      inputSchema: z.object({ topic: z.string() }),
      execute: async ({ topic }, { toolCallId, abortSignal }) => await research(SUMMARY_AGENT, topic, toolCallId, abortSignal),
    });
  }
  return new ToolLoopAgent({
    id: MAIN_AGENT,
    model,
    instructions: 'You are a travel assistant.',
    tools,
    stopWhen: stepCountIs(6),
    ...(plan.approvals === 'toolApproval' ? { toolApproval: POLICY as never } : {}),
    ...(stepCode as object),
  });
}

function subAgent(model: LanguageModel, id: string, approvals: Plan['subApprovals'], executed: Map<string, unknown>) {
  return new ToolLoopAgent({
    id,
    model,
    instructions: id === SUB_AGENT ? 'You research travel questions.' : 'You summarize what is known.',
    tools: {
      weather: tool({ description: 'Get the weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, forecast: 'rain' }) }),
      clock: tool({ description: 'The current time', inputSchema: z.object({}), execute: async () => '09:30' }),
      search: tool({ description: 'Search the web', inputSchema: z.object({ query: z.string(), limit: z.number() }), execute: async ({ query, limit }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} ~${i + 1}`) }) }),
      ...(approvals === undefined ? {} : approvalTools(approvals === 'toolApproval', executed)),
    },
    stopWhen: stepCountIs(6),
    ...(approvals === 'toolApproval' ? { toolApproval: POLICY as never } : {}),
  });
}

export const AI_SDK_WIRES: readonly RandomWireKind[] = ['responses', 'chat', 'anthropic', 'gemini'];

type Usage = { prompt: number | undefined; completion: number | undefined; cached: number | undefined };
type AnyStep = StepResult<ToolSet>;
type Loose = Record<string, any>;

function usageOf(usage: AnyStep['usage']): Usage {
  return { prompt: usage.inputTokens, completion: usage.outputTokens, cached: sumDefined(usage.inputTokenDetails.cacheReadTokens, usage.inputTokenDetails.cacheWriteTokens) };
}

function addUsage(a: Usage, b: Usage): Usage {
  const add = (x: number | undefined, y: number | undefined) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return { prompt: add(a.prompt, b.prompt), completion: add(a.completion, b.completion), cached: add(a.cached, b.cached) };
}

/** What the model is told of a tool's outcome, by call id, from the tool messages the SDK made (`told` of an error or a denial). */
function toldIn(messages: readonly ModelMessage[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content as Loose[]) {
      if (part.type !== 'tool-result') continue;
      const output = part.output as Loose;
      out.set(part.toolCallId, output.type === 'execution-denied' ? (output.reason ?? DENIED_FALLBACK) : output.value);
    }
  }
  return out;
}

/** What one agent's runs came to: a run stopped for approvals, then the runs that continue it with the answers. */
interface Driven {
  steps: AnyStep[];
  totals: Usage;
  /** The text the last run returned. */
  text: string;
  /** Set when the signal stopped a run: what it threw. */
  thrown?: unknown;
  /** Set when the last run stopped for approvals nobody answered (the turn then ends interrupted, waiting). */
  paused?: boolean;
}

/** What every agent of one seed shares: the decisions taken, what the models were told, the calls that ran. */
interface Ledger {
  mode: 'generate' | 'stream';
  decisions: Draw;
  decided: FrameworkApproval[];
  /** Approval requests in the order the agents' steps ended, and the agent that asked. */
  asked: Array<{ id: string; agent: string }>;
  /** What the model was told of a call that did not answer with a result (an error, a denial), by call id. */
  told: Map<string, unknown>;
  /** Approved calls run when the run that carries the answers starts: their results are the asking step's. */
  answeredAt: Map<string, AnyStep>;
  happened: string[];
}

/**
 * Runs `agent` as the docs' manual approval flow does: a run, and while its last step asks a person, the answers
 * (approved or denied, with a reason or not) and another run; `answer: false` stops at the first requests, unanswered.
 * An abort of `signal` ends the runs: the steps are those the SDK reported finished.
 */
async function drive(
  agent: { generate(options: never): PromiseLike<any>; stream(options: never): PromiseLike<any> },
  name: string,
  first: { prompt: string } | { messages: ModelMessage[] },
  signal: AbortSignal | undefined,
  ledger: Ledger,
  options: { answer: boolean; ownMessage: boolean; maxRuns: number; label: string },
): Promise<Driven> {
  const out: Driven = { steps: [], totals: { prompt: undefined, completion: undefined, cached: undefined }, text: '' };
  const messages: ModelMessage[] = 'messages' in first ? [...first.messages] : [{ role: 'user', content: first.prompt }];
  for (let runs = 0; ; runs++) {
    const done: AnyStep[] = [];
    // As each step ends: the policy's decisions, and the requests it asked, in the order the SDK took them.
    const onStepFinish = (step: AnyStep) => {
      done.push(step);
      for (const part of step.content as Loose[]) {
        if (part.type === 'tool-approval-request') ledger.asked.push({ id: part.toolCall.toolCallId, agent: name });
        if (part.type === 'tool-approval-response') ledger.decided.push({ id: part.toolCall.toolCallId, agent: name, approved: part.approved });
      }
    };
    // The first run as the docs write it (a prompt), the runs that continue it with the messages so far.
    const input = runs === 0 && 'prompt' in first ? { prompt: first.prompt } : { messages: [...messages] };
    let result: { steps: AnyStep[]; totalUsage: AnyStep['usage']; responseMessages: ModelMessage[]; text: string };
    try {
      if (ledger.mode === 'generate') {
        result = await agent.generate({ ...input, abortSignal: signal, onStepFinish } as never);
      } else {
        const stream = await agent.stream({ ...input, abortSignal: signal, onStepFinish } as never);
        // Drained, as a UI would; a stream the signal stopped ends with an `abort` part (one that ended before a
        // sibling's abort did not stop).
        let stopped = false;
        for await (const part of stream.fullStream) if ((part as Loose).type === 'abort') stopped = true;
        if (stopped) throw signal?.reason ?? new DOMException('aborted', 'AbortError');
        result = { steps: await stream.steps, totalUsage: await stream.totalUsage, responseMessages: await stream.responseMessages, text: await stream.text };
      }
    } catch (thrown) {
      // An abort: the SDK returns nothing; its steps so far are those it reported finished.
      if (signal?.aborted !== true) throw new Error(`${options.label}\n  ${ledger.happened.join('\n  ')}\n${name}'s run threw: ${String(thrown)}`, { cause: thrown });
      out.thrown = thrown;
      out.steps.push(...done);
      for (const step of done) for (const [id, text] of toldIn(step.response.messages)) ledger.told.set(id, text);
      for (const step of done) out.totals = addUsage(out.totals, usageOf(step.usage));
      return out;
    }
    out.steps.push(...result.steps);
    out.totals = addUsage(out.totals, usageOf(result.totalUsage));
    out.text = result.text;
    for (const [id, text] of toldIn(result.responseMessages)) ledger.told.set(id, text);
    const last = result.steps.at(-1)!;
    const pending = (last.content as Loose[]).filter((part) => part.type === 'tool-approval-request' && part.isAutomatic !== true);
    if (pending.length === 0) return out;
    if (!options.answer) {
      out.paused = true;
      return out;
    }
    expect(runs, `${options.label}\n${name}'s runs stopped for approvals`).toBeLessThan(options.maxRuns);
    const answers = pending.map((request) => {
      const approved = ledger.decisions.chance(0.5);
      const reason = ledger.decisions.chance(0.5) ? `${approved ? 'Go ahead' : 'Not now'}: ${randomText(ledger.decisions, 3)}` : undefined;
      ledger.decided.push({ id: request.toolCall.toolCallId, agent: name, approved });
      ledger.answeredAt.set(request.toolCall.toolCallId, last);
      if (!approved) ledger.told.set(request.toolCall.toolCallId, reason ?? DENIED_FALLBACK);
      return { type: 'tool-approval-response' as const, approvalId: request.approvalId as string, approved, ...(reason === undefined ? {} : { reason }) };
    });
    ledger.happened.push(`${name}'s run ${runs + 1} stopped for ${answers.map((answer, i) => `${pending[i]!.toolCall.toolCallId} (${answer.approved ? 'approved' : 'denied'}${answer.reason === undefined ? '' : ' with a reason'})`).join(', ')}`);
    messages.push(...result.responseMessages);
    const lastMessage = messages.at(-1)!;
    if (!options.ownMessage && lastMessage.role === 'tool') lastMessage.content = [...lastMessage.content, ...answers];
    else messages.push({ role: 'tool', content: answers });
  }
}

/** Runs seed `seed` on `wire` with `packages`' provider; throws (an expect failure naming the seed and its outline) on any difference. */
export async function runAiSdkSeed(seed: number, wire: RandomWireKind, packages: ProviderPackages, onNative: boolean, checks: SeedChecks = {}): Promise<void> {
  const { requested, dated, model } = MODELS[wire];
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  const choice = new Draw(seed ^ 0x5eed);
  const mode = choice.pick(['generate', 'stream'] as const);
  // Sometimes one call's first attempt is refused as overloaded: the SDK retries it.
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const plan = planExtras(seed, scenario, mode);
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (${wire} ${packages.major}, ${mode}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${[...scenario.outline, ...plan.outline].join('\n  ')}`;
  const ledger: Ledger = { mode, decisions: new Draw(seed ^ 0xdec1de), decided: [], asked: [], told: new Map(), answeredAt: new Map(), happened: [] };
  const happened = ledger.happened;

  // Every provider request of the run, sub-agents' too, in the order they went out: which wire answered it with which
  // turn, or refused it (retried), or saw it aborted.
  const controller = new AbortController();
  let aborts = 0;
  let subRequests = 0;
  const sent: Array<{ wire: RandomWire; turn: number } | 'retried' | 'aborted'> = [];
  const wires: RandomWire[] = [fake];
  const logged = (wire: RandomWire) => async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
    const abortHere = wire === fake ? fake.requests.length + aborts === plan.abortAt : subRequests++ === plan.abortInSub;
    if (abortHere || init?.signal?.aborted === true) {
      aborts += wire === fake ? 1 : 0;
      // A stop button pressed as the request goes out: fetch rejects with the signal's reason, as it does (and so for a
      // request sent on a signal already aborted).
      sent.push('aborted');
      happened.push(`aborted at request ${sent.length}${wire === fake ? '' : ' (a sub-agent\'s)'}`);
      controller.abort();
      throw init?.signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');
    }
    const at = sent.length;
    sent.push('retried');
    const failed = wire.failedRequests.length;
    const turn = wire.turnsServed;
    const response = await wire.fetch(input, init);
    if (wire.failedRequests.length === failed) sent[at] = { wire, turn };
    return response;
  };
  // Each sub-agent's steps, read once every run is done (a call approved in a later run is its asking step's).
  const subSteps = new Map<RandomWire, () => FrameworkStep[]>();
  const subTotals: Usage[] = [];
  const subPrompts = new Map<string, string>();
  const subEnded = new Map<string, 'completed' | 'interrupted'>();
  const executed = new Map<string, unknown>();
  const outcomes: Array<{ id: string; denied: boolean; told: unknown; ran?: false }> = [];
  // In a step: the tools that ran in it (results, errors), then the policy's denials (as the step ends), then what the
  // next run did with the answers: the denied calls, then the approved ones as they ran.
  const byStep = new Map<AnyStep, string[]>();
  const stepResults = (step: AnyStep) => {
    const inStep = (step.content as Loose[]).filter((part) => part.type === 'tool-result' || part.type === 'tool-error').map((part) => ({ id: part.toolCallId as string, output: part.type === 'tool-error' ? ledger.told.get(part.toolCallId) : part.output }));
    const policyDenied = (step.content as Loose[]).filter((part) => part.type === 'tool-approval-response' && part.approved === false).map((part) => ({ id: part.toolCall.toolCallId as string, output: ledger.told.get(part.toolCall.toolCallId) }));
    const later = byStep.get(step) ?? [];
    const deniedLater = later.filter((id) => !executed.has(id)).map((id) => ({ id, output: ledger.told.get(id) }));
    const approvedLater = later.filter((id) => executed.has(id)).map((id) => ({ id, output: executed.get(id) }));
    return [...inStep, ...policyDenied, ...deniedLater, ...approvedLater];
  };
  let subagents = 0;
  const subFailures: unknown[] = [];
  // The model calls the program makes inside its agent's steps (the third plan): each a sub-agent of the run, linked as
  // `helper:<n>` in the order they started (random-wire-checks.ts finds the link the adapter gave it).
  const helperPrompts = new Map<string, string>();
  /** What the model sent as a repaired call's input, by call id (the step's call says it; the call ran with the repair's). */
  const repairedFrom = new Map<string, unknown>();
  let stepNumber = 0;
  let helpers = 0;
  const askHelper = async (prompt: string, answer?: string): Promise<string> => {
    helpers += 1;
    const link = `helper:${helpers}`;
    const name = `generateText in step ${stepNumber + 1}`;
    const helperSeed = 300_000 + seed * 4 + helpers;
    const helper = helperWire(helperSeed, wire, dated, answer);
    wires.push(helper);
    helperPrompts.set(link, prompt);
    happened.push(`${name} (${link}, seed ${helperSeed})`);
    const result = await generateText({ model: model(packages, logged(helper) as typeof globalThis.fetch), prompt });
    subSteps.set(helper, () => frameworkSteps(result.steps, [link], name));
    subTotals.push(usageOf(result.totalUsage));
    return result.text;
  };
  const stepCode: StepCode = {};
  if (plan.helpers.repair !== undefined || plan.helpers.prepareStepAt !== undefined) {
    let planned = false;
    stepCode.prepareStep = async ({ stepNumber: number }) => {
      stepNumber = number;
      if (number !== plan.helpers.prepareStepAt || planned) return undefined;
      planned = true;
      const advice = await askHelper(`Plan step ${number + 1} of a travel assistant's answer.`);
      return { instructions: `You are a travel assistant. ${advice}` };
    };
  }
  // As the SDK's docs write a repair: none for a tool that does not exist; a model asked for the input that fits.
  if (plan.helpers.repair !== undefined) {
    stepCode.experimental_repairToolCall = async ({ toolCall, inputSchema, error }) => {
      if (NoSuchToolError.isInstance(error)) return null;
      const schema = await inputSchema({ toolName: toolCall.toolName });
      const sent = JSON.parse(toolCall.input as string) as Loose;
      repairedFrom.set(toolCall.toolCallId, sent);
      const fixed = await askHelper(
        [`The model tried to call the tool "${toolCall.toolName}" with the following inputs:`, toolCall.input, 'The tool accepts the following schema:', JSON.stringify(schema), 'Please fix the inputs.'].join('\n'),
        JSON.stringify({ city: String(sent.town) }),
      );
      return { ...toolCall, input: fixed };
    };
  }

  // Files that disagree in order, known and left (docs/adapters/ai-sdk.md): ATIF links a repair's model call before its
  // step's own (the call ends once its calls are parsed), and a first step's prepareStep's before the turn's user step
  // (taken from the first request); ATOF starts the step's call, and the turn, first.
  if (checks.compareFiles === true && (plan.helpers.repair !== undefined || plan.helpers.prepareStepAt === 0)) {
    console.log(`seed ${seed} (${wire} ${packages.major}): compare left out, ATIF orders a model call made inside a step before that step's call or its turn's user step`);
    checks = { ...checks, compareFiles: false };
  }
  await checkRandomRun({
    ...checks,
    label: () => `${label}${happened.length === 0 ? '' : `\n  ${happened.join('\n  ')}`}`,
    onNative,
    requests: () => sent.length,
    async run(hooks) {
      const uninstall = instrumentAiSdk(hooks, plan.sessionId === undefined ? {} : { sessionId: plan.sessionId });
      try {
        const research: SubAgentTool = async (agentName, topic, toolCallId, abortSignal) => {
          // A call the wire named by an id of its own has its seed; one the SDK named (Gemini) takes one by its order.
          const subSeed = plan.subCalls.get(toolCallId) ?? 999_999 - subagents;
          subagents += 1;
          const subScenario = randomScenario(subSeed, wire, dated, TOOLS);
          if (plan.subApprovals !== undefined) {
            const draw = new Draw(subSeed ^ 0xa99);
            subScenario.turns.forEach((turn, index) => {
              if (turn.calls.length === 0 || !draw.chance(0.7)) return;
              for (let k = draw.int(1, 2); k > 0; k--) {
                const approval = draw.pick(APPROVAL_TOOLS);
                turn.calls.splice(draw.int(0, turn.calls.length), 0, { id: `call_${subSeed}_approval_${index + 1}_${k}`, name: approval.name, args: approval.args(draw) });
                subScenario.outline[index] += ` +${approval.name}`;
              }
            });
          }
          const subWire = new RandomWire(subSeed, subScenario);
          wires.push(subWire);
          subPrompts.set(toolCallId, topic);
          happened.push(`${agentName} of ${toolCallId}: ${subScenario.outline.join('; ')}`);
          const sub = subAgent(model(packages, logged(subWire) as typeof globalThis.fetch), agentName, plan.subApprovals, executed);
          let driven: Driven;
          try {
            driven = await drive(sub, agentName, { prompt: topic }, abortSignal, { ...ledger, mode: plan.subMode }, { answer: plan.subAnswers, ownMessage: true, maxRuns: subScenario.turns.length, label });
          } catch (thrown) {
            // The parent's model would only be told of it: the seed fails with it.
            subFailures.push(thrown);
            throw thrown;
          }
          subSteps.set(subWire, () => frameworkSteps(driven.steps, [toolCallId], agentName, stepResults));
          subTotals.push(driven.totals);
          // Stopped (the signal) or paused for approvals it left unanswered: interrupted, as every adapter's pause is.
          subEnded.set(toolCallId, driven.thrown === undefined && driven.paused !== true ? 'completed' : 'interrupted');
          if (driven.thrown !== undefined) throw driven.thrown;
          if (plan.subAnswers || plan.subApprovals === undefined) expect(driven.steps, `${label}\n${agentName} of ${toolCallId}: its steps`).toHaveLength(subScenario.turns.length);
          return driven.text;
        };
        const agent = program(model(packages, logged(fake) as typeof globalThis.fetch), plan, executed, research, stepCode);
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        const driven = await drive(agent, MAIN_AGENT, { messages: [{ role: 'user', content: prompt }] }, controller.signal, ledger, { answer: true, ownMessage: plan.ownMessage, maxRuns: scenario.turns.length, label });
        if (subFailures.length > 0) throw subFailures[0];
        const { steps } = driven;
        let totals = driven.totals;
        const error = driven.thrown === undefined ? undefined : String(driven.thrown);
        if (error === undefined) expect(steps, label).toHaveLength(scenario.turns.length);
        // The step a call was asked in: its outcome there.
        for (const [id, step] of ledger.answeredAt) byStep.set(step, [...(byStep.get(step) ?? []), id]);
        // A repaired call as the model sent it (the trajectory's step says so; the SDK's step has the repaired input).
        const own = frameworkSteps(steps, [], MAIN_AGENT, stepResults).map((step) => ({ ...step, calls: step.calls.map((call) => (repairedFrom.has(call.id) ? { ...call, args: repairedFrom.get(call.id) } : call)) }));
        // All the steps in the order their requests went out.
        const ownQueue = [...own];
        const subQueues = new Map([...subSteps].map(([w, list]) => [w, list()]));
        const ordered: FrameworkStep[] = [];
        for (const entry of sent) {
          if (typeof entry === 'string') continue;
          const step = entry.wire === fake ? ownQueue.shift() : subQueues.get(entry.wire)?.shift();
          if (step !== undefined) ordered.push(step);
        }
        const retried = sent.flatMap((entry, index) => (entry === 'retried' ? [index] : []));
        const aborted = sent.filter((entry) => entry === 'aborted').length;
        // Every call of a tool that needed approval the SDK answered: ran, or denied with what the model was told (in the
        // provider's next request, where its wire names the call; Gemini's does not). A call a sub-agent left asking
        // never ran.
        const decidedIds = new Set(ledger.decided.map((decision) => decision.id));
        for (const decision of ledger.decided) {
          const denied = !executed.has(decision.id);
          const onWire = denied ? wires.map((w) => toldOnWire(wire, w.requests, decision.id)).find((text) => text !== undefined) : undefined;
          if (onWire !== undefined) expect(ledger.told.get(decision.id), `${label}\nwhat the SDK says the model was told of ${decision.id}`).toBe(onWire);
          outcomes.push({ id: decision.id, denied, told: denied ? (onWire ?? ledger.told.get(decision.id)) : executed.get(decision.id) });
        }
        for (const { id } of ledger.asked) if (!decidedIds.has(id)) outcomes.push({ id, denied: false, told: undefined, ran: false });
        for (const total of subTotals) totals = addUsage(totals, total);
        return {
          prompt,
          model: requested,
          steps: ordered,
          retried,
          ...(subPrompts.size + helperPrompts.size === 0 ? {} : { subagentPrompts: new Map([...subPrompts, ...helperPrompts]), subagentsEnded: subEnded }),
          resultsUnordered: true,
          // Sub-agents run at once send their requests in an order of their own: each trajectory's steps in its order.
          ...(plan.parallel ? { lateSubagentSteps: true, concurrentSubagents: true } : {}),
          ...(aborted > 0 ? { error, failedCalls: aborted, ended: 'interrupted' as const } : {}),
          totals,
          ...(plan.approvals === undefined && plan.subApprovals === undefined ? {} : { approvals: { decided: ledger.decided, outcomes, asked: ledger.asked } }),
        };
      } finally {
        uninstall();
      }
    },
  });
}

/** What a request sent the model as the output of call `id`: the first request that carries one (undefined on Gemini, whose function responses carry no id). */
function toldOnWire(wire: RandomWireKind, requests: readonly RandomWireRequest[], id: string): string | undefined {
  for (const { body } of requests) {
    if (wire === 'chat') {
      const message = (body.messages as Loose[] | undefined)?.find((item) => item.role === 'tool' && item.tool_call_id === id);
      if (message !== undefined) return message.content;
    } else if (wire === 'responses') {
      const item = (body.input as Loose[] | undefined)?.find((entry) => entry.type === 'function_call_output' && entry.call_id === id);
      if (item !== undefined) return item.output;
    } else if (wire === 'anthropic') {
      for (const message of (body.messages as Loose[] | undefined) ?? []) {
        const block = Array.isArray(message.content) ? (message.content as Loose[]).find((part) => part.type === 'tool_result' && part.tool_use_id === id) : undefined;
        if (block !== undefined) return typeof block.content === 'string' ? block.content : (block.content as Loose[]).map((part) => part.text).join('');
      }
    }
  }
  return undefined;
}

/** The SDK's steps as the check reads them; `results` says what each step's tools came to (default: the SDK's results). */
function frameworkSteps(steps: readonly AnyStep[], trajectory: readonly string[], agent: string, results?: (step: AnyStep) => Array<{ id: string; output: unknown }>): FrameworkStep[] {
  return steps.map((step) => ({
    text: step.text,
    model: step.response.modelId,
    calls: step.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, args: call.input })),
    results: results?.(step) ?? step.toolResults.map((result) => ({ id: result.toolCallId, output: result.output })),
    prompt: step.usage.inputTokens,
    completion: step.usage.outputTokens,
    cached: sumDefined(step.usage.inputTokenDetails.cacheReadTokens, step.usage.inputTokenDetails.cacheWriteTokens),
    finish: step.finishReason,
    reasoning: step.reasoningText ?? null,
    trajectory,
    agent,
  }));
}

function sumDefined(...values: Array<number | undefined>): number | undefined {
  const defined = values.filter((value): value is number => value !== undefined);
  return defined.length === 0 ? undefined : defined.reduce((a, b) => a + b, 0);
}
