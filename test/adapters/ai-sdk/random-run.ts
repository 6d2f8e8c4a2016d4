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
import { ToolLoopAgent, stepCountIs, tool, type LanguageModel, type ModelMessage, type StepResult, type ToolSet } from 'ai';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import type { ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomWireKind, type RandomWireRequest } from '../../support/random-wire.ts';
import { checkRandomRun, type FrameworkApproval, type FrameworkStep } from '../random-wire-checks.ts';

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

const MAIN_AGENT = 'travel-agent';
const SUB_AGENT = 'researcher';
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
  outline: string[];
}

/** Adds calls of the extra tools to the tool-calling turns of `scenario` and draws how the run goes; nothing for some seeds. */
function planExtras(seed: number, scenario: RandomScenario): Plan {
  const draw = new Draw(seed ^ 0xa15d);
  const plan: Plan = { approvals: undefined, ownMessage: true, sessionId: undefined, failing: false, research: new Map(), subMode: 'generate', abortAt: undefined, outline: [] };
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
    // One research call per turn: two would run at once, their requests in an order the replies cannot be drawn for.
    for (const { index } of callers) {
      if (!draw.chance(0.6)) continue;
      add(index, RESEARCH, `call_${seed}_research_${index + 1}`);
      plan.research.set(index, 100_000 + seed * 8 + index);
    }
  }
  if (draw.chance(0.2)) {
    plan.abortAt = draw.int(0, 5);
    // The run's own requests: one of a sub-agent's would stop the step that called it before the SDK reports it.
    plan.outline.push(`aborted as the run's request ${plan.abortAt + 1} goes out (if it gets there)`);
  }
  return plan;
}

function program(model: LanguageModel, plan: Plan, executed: Map<string, unknown>, research: (topic: string, toolCallId: string, abortSignal: AbortSignal | undefined) => Promise<string>) {
  const ran = <T>(id: string, output: T): T => (executed.set(id, output), output);
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
  if (plan.approvals !== undefined) {
    const needs = plan.approvals === 'needsApproval';
    tools.cancel_order = tool({
      description: 'Cancel an order',
      inputSchema: z.object({ orderId: z.number() }),
      ...(needs ? { needsApproval: true } : {}),
      execute: async ({ orderId }, { toolCallId }) => ran(toolCallId, `Cancelled order ${orderId}`),
    });
    tools.refund_order = tool({
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.number(), amount: z.number() }),
      ...(needs ? { needsApproval: async ({ amount }: { amount: number }) => amount >= 100 } : {}),
      execute: async ({ orderId, amount }, { toolCallId }) => ran(toolCallId, `Refunded ${amount} on order ${orderId}`),
    });
  }
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
      execute: async ({ topic }, { toolCallId, abortSignal }) => await research(topic, toolCallId, abortSignal),
    });
  }
  return new ToolLoopAgent({
    id: MAIN_AGENT,
    model,
    instructions: 'You are a travel assistant.',
    tools,
    stopWhen: stepCountIs(6),
    ...(plan.approvals === 'toolApproval' ? { toolApproval: POLICY as never } : {}),
  });
}

function subAgent(model: LanguageModel) {
  return new ToolLoopAgent({
    id: SUB_AGENT,
    model,
    instructions: 'You research travel questions.',
    tools: {
      weather: tool({ description: 'Get the weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, forecast: 'rain' }) }),
      clock: tool({ description: 'The current time', inputSchema: z.object({}), execute: async () => '09:30' }),
      search: tool({ description: 'Search the web', inputSchema: z.object({ query: z.string(), limit: z.number() }), execute: async ({ query, limit }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} ~${i + 1}`) }) }),
    },
    stopWhen: stepCountIs(6),
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

/** Runs seed `seed` on `wire` with `packages`' provider; throws (an expect failure naming the seed and its outline) on any difference. */
export async function runAiSdkSeed(seed: number, wire: RandomWireKind, packages: ProviderPackages, onNative: boolean): Promise<void> {
  const { requested, dated, model } = MODELS[wire];
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  const choice = new Draw(seed ^ 0x5eed);
  const mode = choice.pick(['generate', 'stream'] as const);
  // Sometimes one call's first attempt is refused as overloaded: the SDK retries it.
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const plan = planExtras(seed, scenario);
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (${wire} ${packages.major}, ${mode}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${[...scenario.outline, ...plan.outline].join('\n  ')}`;
  const happened: string[] = [];

  // Every provider request of the run, sub-agents' too, in the order they went out: which wire answered it with which
  // turn, or refused it (retried), or saw it aborted.
  const controller = new AbortController();
  let aborts = 0;
  const sent: Array<{ wire: RandomWire; turn: number } | 'retried' | 'aborted'> = [];
  const logged = (wire: RandomWire) => async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
    if (wire === fake && fake.requests.length + aborts === plan.abortAt) {
      aborts += 1;
      // A stop button pressed as the request goes out: fetch rejects with the signal's reason, as it does.
      sent.push('aborted');
      happened.push(`aborted at request ${sent.length}`);
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
  const subSteps = new Map<RandomWire, FrameworkStep[]>();
  const subTotals: Usage[] = [];
  const subPrompts = new Map<string, string>();
  const executed = new Map<string, unknown>();
  const decided: FrameworkApproval[] = [];
  const outcomes: Array<{ id: string; denied: boolean; told: unknown }> = [];

  await checkRandomRun({
    label: () => `${label}${happened.length === 0 ? '' : `\n  ${happened.join('\n  ')}`}`,
    onNative,
    requests: () => sent.length,
    async run(hooks) {
      const uninstall = instrumentAiSdk(hooks, plan.sessionId === undefined ? {} : { sessionId: plan.sessionId });
      try {
        const research = async (topic: string, toolCallId: string, abortSignal: AbortSignal | undefined): Promise<string> => {
          const turn = [...plan.research.entries()].find(([index]) => scenario.turns[index]!.calls.some((call) => call.id === toolCallId));
          const subSeed = turn?.[1] ?? 999_999;
          const subScenario = randomScenario(subSeed, wire, dated, TOOLS);
          const subWire = new RandomWire(subSeed, subScenario);
          subPrompts.set(toolCallId, topic);
          happened.push(`sub-agent of ${toolCallId}: ${subScenario.outline.join('; ')}`);
          const sub = subAgent(model(packages, logged(subWire) as typeof globalThis.fetch));
          let steps: AnyStep[];
          let text: string;
          let total: AnyStep['usage'];
          if (plan.subMode === 'generate') {
            const result = await sub.generate({ prompt: topic, abortSignal });
            ({ steps, text, totalUsage: total } = result);
          } else {
            const result = await sub.stream({ prompt: topic, abortSignal });
            text = await result.text;
            steps = await result.steps;
            total = await result.totalUsage;
          }
          subSteps.set(subWire, frameworkSteps(steps, [toolCallId], SUB_AGENT));
          subTotals.push(usageOf(total));
          return text;
        };
        const agent = program(model(packages, logged(fake) as typeof globalThis.fetch), plan, executed, research);
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
        // The SDK's steps, one list per run (a run stopped for approvals, then the run that continues it).
        const steps: AnyStep[] = [];
        let totals: Usage = { prompt: undefined, completion: undefined, cached: undefined };
        let error: string | undefined;
        const decisions = new Draw(seed ^ 0xdec1de);
        // What the model was told of a call that did not answer with a result (an error, a denial), by call id.
        const told = new Map<string, unknown>();
        // Approved calls run when the run that carries the answers starts: their results are the asking step's.
        const answeredAt = new Map<string, AnyStep>();
        // The policy's decisions, in each step: taken as the step ends.
        const policyDecisions = (list: readonly AnyStep[]) => {
          for (const step of list) for (const part of step.content as Loose[]) if (part.type === 'tool-approval-response') decided.push({ id: part.toolCall.toolCallId, agent: MAIN_AGENT, approved: part.approved });
        };
        for (let runs = 0; ; runs++) {
          const done: AnyStep[] = [];
          const onStepFinish = (step: AnyStep) => void done.push(step);
          let result: { steps: AnyStep[]; totalUsage: AnyStep['usage']; responseMessages: ModelMessage[] };
          try {
            if (mode === 'generate') {
              result = await agent.generate({ messages: [...messages], abortSignal: controller.signal, onStepFinish } as never);
            } else {
              const stream = await agent.stream({ messages: [...messages], abortSignal: controller.signal, onStepFinish } as never);
              for await (const _part of stream.fullStream) {
                // drained, as a UI would
              }
              if (controller.signal.aborted) throw new DOMException('aborted', 'AbortError');
              result = { steps: await stream.steps, totalUsage: await stream.totalUsage, responseMessages: await stream.responseMessages };
            }
          } catch (thrown) {
            // An abort: the SDK returns nothing; its steps so far are those it reported finished.
            if (!controller.signal.aborted) throw new Error(`${label}\n  ${happened.join('\n  ')}\nthe run threw: ${String(thrown)}`, { cause: thrown });
            error = String(thrown);
            steps.push(...done);
            policyDecisions(done);
            for (const step of done) for (const [id, text] of toldIn(step.response.messages)) told.set(id, text);
            for (const step of done) totals = addUsage(totals, usageOf(step.usage));
            break;
          }
          steps.push(...result.steps);
          totals = addUsage(totals, usageOf(result.totalUsage));
          for (const [id, text] of toldIn(result.responseMessages)) told.set(id, text);
          policyDecisions(result.steps);
          const last = result.steps.at(-1)!;
          const pending = (last.content as Loose[]).filter((part) => part.type === 'tool-approval-request' && part.isAutomatic !== true);
          if (pending.length === 0) break;
          expect(runs, `${label}\nruns stopped for approvals`).toBeLessThan(scenario.turns.length);
          const answers = pending.map((request) => {
            const approved = decisions.chance(0.5);
            const reason = decisions.chance(0.5) ? `${approved ? 'Go ahead' : 'Not now'}: ${randomText(decisions, 3)}` : undefined;
            decided.push({ id: request.toolCall.toolCallId, agent: MAIN_AGENT, approved });
            answeredAt.set(request.toolCall.toolCallId, last);
            if (!approved) told.set(request.toolCall.toolCallId, reason ?? DENIED_FALLBACK);
            return { type: 'tool-approval-response' as const, approvalId: request.approvalId as string, approved, ...(reason === undefined ? {} : { reason }) };
          });
          happened.push(`run ${runs + 1} stopped for ${answers.map((answer, i) => `${pending[i]!.toolCall.toolCallId} (${answer.approved ? 'approved' : 'denied'}${answer.reason === undefined ? '' : ' with a reason'})`).join(', ')}`);
          messages.push(...result.responseMessages);
          const lastMessage = messages.at(-1)!;
          if (!plan.ownMessage && lastMessage.role === 'tool') lastMessage.content = [...lastMessage.content, ...answers];
          else messages.push({ role: 'tool', content: answers });
        }
        if (error === undefined) expect(steps, label).toHaveLength(scenario.turns.length);
        // The step a call was asked in: its outcome there.
        const byStep = new Map<AnyStep, string[]>();
        for (const [id, step] of answeredAt) byStep.set(step, [...(byStep.get(step) ?? []), id]);
        const own = frameworkSteps(steps, [], MAIN_AGENT, (step) => {
          // In the step: the tools that ran in it (results, errors), then the policy's denials (as the step ends), then
          // what the next run did with the answers: the denied calls, then the approved ones as they ran.
          const inStep = (step.content as Loose[]).filter((part) => part.type === 'tool-result' || part.type === 'tool-error').map((part) => ({ id: part.toolCallId as string, output: part.type === 'tool-error' ? told.get(part.toolCallId) : part.output }));
          const policyDenied = (step.content as Loose[]).filter((part) => part.type === 'tool-approval-response' && part.approved === false).map((part) => ({ id: part.toolCall.toolCallId as string, output: told.get(part.toolCall.toolCallId) }));
          const later = byStep.get(step) ?? [];
          const deniedLater = later.filter((id) => !executed.has(id)).map((id) => ({ id, output: told.get(id) }));
          const approvedLater = later.filter((id) => executed.has(id)).map((id) => ({ id, output: executed.get(id) }));
          return [...inStep, ...policyDenied, ...deniedLater, ...approvedLater];
        });
        // All the steps in the order their requests went out.
        const ownQueue = [...own];
        const subQueues = new Map([...subSteps].map(([w, list]) => [w, [...list]]));
        const ordered: FrameworkStep[] = [];
        for (const entry of sent) {
          if (typeof entry === 'string') continue;
          const step = entry.wire === fake ? ownQueue.shift() : subQueues.get(entry.wire)?.shift();
          if (step !== undefined) ordered.push(step);
        }
        const retried = sent.flatMap((entry, index) => (entry === 'retried' ? [index] : []));
        const aborted = sent.includes('aborted');
        // Every call of a tool that needed approval the SDK answered: ran, or denied with what the model was told (in the
        // provider's next request, where its wire names the call; Gemini's does not).
        for (const decision of decided) {
          const denied = !executed.has(decision.id);
          const onWire = denied ? toldOnWire(wire, fake.requests, decision.id) : undefined;
          if (onWire !== undefined) expect(told.get(decision.id), `${label}\nwhat the SDK says the model was told of ${decision.id}`).toBe(onWire);
          outcomes.push({ id: decision.id, denied, told: denied ? (onWire ?? told.get(decision.id)) : executed.get(decision.id) });
        }
        for (const total of subTotals) totals = addUsage(totals, total);
        return {
          prompt,
          model: requested,
          steps: ordered,
          retried,
          ...(subPrompts.size === 0 ? {} : { subagentPrompts: subPrompts }),
          resultsUnordered: true,
          ...(aborted ? { error, failedCalls: 1, ended: 'interrupted' as const } : {}),
          totals,
          ...(plan.approvals === undefined
            ? {}
            : {
                approvals: {
                  decided,
                  outcomes,
                  asked: steps.flatMap((step) => (step.content as Loose[]).filter((part) => part.type === 'tool-approval-request').map((part) => part.toolCall.toolCallId as string)),
                },
              }),
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
