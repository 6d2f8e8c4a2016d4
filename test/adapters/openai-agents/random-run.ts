// One seed of the OpenAI Agents SDK against random provider replies
// (test/support/random-wire.ts): an Agent with tools written as the SDK's
// docs write it, on OpenAIResponsesModel or OpenAIChatCompletionsModel over
// the real `openai` client, run with run() or streamed through a Runner;
// the trajectory is checked against what the SDK returned (each raw model
// response's message text, function calls and usage, the tool outputs among
// the run's new items, `result.state.usage`) by random-wire-checks.ts.
// Half the seeds add handoffs (a plan drawn apart, so the other seeds stay
// what they were): the run's agent and two more hand to each other, in
// chains and back, and each step must be in the trajectory of the agent
// that made it (a sub-agent per handoff, src/adapters/openai-agents/run.ts).
// Half the seeds (a plan drawn apart again) add tools that need approval
// (`needsApproval: true`, and a function of the arguments): the run stops
// with interruptions (in whichever agent's turn, several at once), each is
// approved or rejected (now and then for the rest of the run, a rejection
// with its own message), and the run resumes from its state or, tracing on,
// from a `RunState.fromString` copy of it, streamed or not: one session, each
// pending call asked and answered once with the decision the SDK applied, a
// rejected call `denied` with what the model was told, and the tokens of all
// the runs `result.state.usage` of the last.
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunState, Runner, run, tool, type Model } from '@openai/agents';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomWireKind } from '../../support/random-wire.ts';
import { checkRandomRun, type FrameworkApproval, type FrameworkStep, type SeedChecks } from '../random-wire-checks.ts';
import { useTracing } from './support.ts';

export const AGENTS_WIRES = ['responses', 'chat'] as const satisfies readonly RandomWireKind[];

const MODELS: Record<(typeof AGENTS_WIRES)[number], { requested: string; dated: string; model(client: OpenAI): Model }> = {
  responses: { requested: 'gpt-4.1', dated: 'gpt-4.1-2025-04-14', model: (client) => new OpenAIResponsesModel(client, 'gpt-4.1') },
  chat: { requested: 'gpt-4o', dated: 'gpt-4o-2024-08-06', model: (client) => new OpenAIChatCompletionsModel(client, 'gpt-4o') },
};

const TOOLS: RandomTool[] = [
  { name: 'get_weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'get_time', args: () => ({}) },
  { name: 'search', args: (draw) => ({ query: randomText(draw, 4), limit: draw.int(1, 5) }) },
];

const tools = [
  tool({ name: 'get_weather', description: 'Get the weather for a given city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `The weather in ${city} is sunny.` }),
  tool({ name: 'get_time', description: 'The current time', parameters: z.object({}), execute: async () => '12:00 🕛' }),
  tool({
    name: 'search',
    description: 'Search the web',
    parameters: z.object({ query: z.string(), limit: z.number() }),
    execute: async ({ query, limit }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }),
  }),
];

type Loose = Record<string, any>;

/** The calls of the tools below that ran (a rejected call never does), by call id. */
type Executed = Set<string>;

/** Tools a person approves first: always, and (the function form) a refund of 100 or more. */
function approvalTools(executed: Executed) {
  const ran = (details: { toolCall?: { callId?: string } } | undefined) => void (details?.toolCall?.callId !== undefined && executed.add(details.toolCall.callId));
  return [
    tool({
      name: 'cancel_order',
      description: 'Cancel an order',
      parameters: z.object({ orderId: z.number() }),
      needsApproval: true,
      execute: async ({ orderId }, _context, details) => (ran(details), `Cancelled order ${orderId}`),
    }),
    tool({
      name: 'refund_order',
      description: 'Refund an order',
      parameters: z.object({ orderId: z.number(), amount: z.number() }),
      needsApproval: async (_context, { amount }) => amount >= 100,
      execute: async ({ orderId, amount }, _context, details) => (ran(details), `Refunded ${amount} on order ${orderId}`),
    }),
  ];
}
const APPROVAL_TOOLS: RandomTool[] = [
  { name: 'cancel_order', args: (draw) => ({ orderId: draw.int(1, 999) }) },
  { name: 'refund_order', args: (draw) => ({ orderId: draw.int(1, 999), amount: draw.int(1, 200) }) },
];

/**
 * Adds calls of the tools that need approval to some tool-calling turns of
 * `scenario` (one or two, among the other calls), and draws how the run
 * resumes. Undefined for a seed without approvals.
 */
function planApprovals(seed: number, scenario: RandomScenario, tracing: string): { decisions: Draw; copies: boolean } | undefined {
  const draw = new Draw(seed ^ 0xa9e1);
  if (!draw.chance(0.5)) return undefined;
  scenario.turns.forEach((turn, index) => {
    if (turn.calls.length === 0 || !draw.chance(0.7)) return;
    const n = draw.int(1, 2);
    const names: string[] = [];
    for (let k = 0; k < n; k++) {
      const tool = draw.pick(APPROVAL_TOOLS);
      turn.calls.splice(draw.int(0, turn.calls.length), 0, { id: `call_${seed}_approval_${index + 1}_${k + 1}`, name: tool.name, args: tool.args(draw) });
      names.push(tool.name);
    }
    scenario.outline[index] += ` (asks approval: ${names.join(', ')})`;
  });
  // A copy made with toString()/fromString() resumes the same session where the run's trace names it (tracing on).
  return { decisions: new Draw(seed ^ 0xdec1de), copies: tracing === 'tracing on' };
}

/** The run's own agent, and the agents a handoff may reach; who hands to whom (back to the run's agent, back up the chain). */
const ROOT = 'Travel Agent';
const HANDS_TO: Record<string, readonly string[]> = { [ROOT]: ['billing'], billing: ['refunds', ROOT], refunds: [ROOT, 'billing'] };
/** The SDK's default transfer tool names (`transfer_to_` and the agent's name as a function name: spaces and the like as `_`, case kept). */
const TRANSFER: Record<string, string> = { [ROOT]: 'transfer_to_Travel_Agent', billing: 'transfer_to_billing', refunds: 'transfer_to_refunds' };

interface HandoffPlan {
  /** Per turn: the agent making it. */
  agents: string[];
  /** The agent that ends the run. */
  last: string;
  /** Per turn: the handoff its step makes, if any. */
  hops: Array<{ target: string; callId: string } | undefined>;
}

type Chain = Array<{ agent: string; id: string }>;

/** The chain after a handoff to `target` through `id`: back to the run's agent or up the chain, or one agent longer. */
function handOff(chain: Chain, hop: { target: string; callId: string } | undefined): Chain {
  if (hop === undefined) return chain;
  const at = chain.findIndex((entry) => entry.agent === hop.target);
  return hop.target === ROOT ? [] : at >= 0 ? chain.slice(0, at + 1) : [...chain, { agent: hop.target, id: hop.callId }];
}

/**
 * Where each turn's step belongs: the chain of handoffs as it stood when the
 * step was made. A run paused inside a chain and resumed from its state (or,
 * tracing on, a copy of it) continues that chain: each agent's trajectory goes
 * on, and the calls a step paused for are answered beside it
 * (docs/adapters/openai-agents.md, "Handoffs").
 */
function chainPaths(plan: HandoffPlan): string[][] {
  let chain: Chain = [];
  return plan.hops.map((hop) => {
    const path = chain.map((entry) => entry.id);
    chain = handOff(chain, hop);
    return path;
  });
}

/**
 * Adds a transfer call to some tool-calling turns of `scenario` (among its
 * other calls: the SDK runs them, then hands off), and says which agent, in
 * which trajectory, makes each turn: a handoff to a new agent is a sub-agent
 * of the agent that handed off, one to the run's agent or back up the chain
 * ends the sub-agents after it. Undefined for a seed without handoffs.
 */
function planHandoffs(seed: number, scenario: RandomScenario): HandoffPlan | undefined {
  const draw = new Draw(seed ^ 0x4a0d);
  if (!draw.chance(0.5)) return undefined;
  let chain: Array<{ agent: string; callId: string }> = [];
  const agents: string[] = [];
  const hops: HandoffPlan['hops'] = [];
  scenario.turns.forEach((turn, index) => {
    const current = chain.at(-1)?.agent ?? ROOT;
    agents.push(current);
    hops.push(undefined);
    if (turn.calls.length === 0 || !draw.chance(0.85)) return;
    const target = draw.pick(HANDS_TO[current]!);
    const call = { id: `call_${seed}_handoff_${index + 1}`, name: TRANSFER[target]!, args: {} };
    turn.calls.splice(draw.int(0, turn.calls.length), 0, call);
    scenario.outline[index] += ` (${current} hands off to ${target})`;
    hops[index] = { target, callId: call.id };
    const at = chain.findIndex((hop) => hop.agent === target);
    chain = target === ROOT ? [] : at >= 0 ? chain.slice(0, at + 1) : [...chain, { agent: target, callId: call.id }];
  });
  return { agents, last: chain.at(-1)?.agent ?? ROOT, hops };
}

/** The text of a model response's message items, as the SDK holds them: output text and refusals. */
function messageText(output: readonly Loose[]): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content ?? []) text += part.type === 'refusal' ? part.refusal : (part.text ?? '');
  }
  return text;
}

/** The reasoning items' text, as the SDK holds them (their summary in `content`); null when there is none. */
function reasoningOf(output: readonly Loose[]): string | null {
  const texts = output.filter((item) => item.type === 'reasoning').map((item) => (item.content ?? []).map((part: Loose) => part.text ?? '').join(''));
  return texts.length === 0 ? null : texts.join('\n\n');
}

function cachedOf(usage: Loose): number {
  return (usage.inputTokensDetails ?? []).reduce((sum: number, detail: Loose) => sum + (detail.cached_tokens ?? 0), 0);
}

export async function runAgentsSeed(seed: number, wire: (typeof AGENTS_WIRES)[number], onNative: boolean, checks: SeedChecks = {}): Promise<void> {
  const { dated, model } = MODELS[wire];
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  const choice = new Draw(seed ^ 0xa6e);
  const mode = choice.pick(['run', 'stream'] as const);
  const tracing = choice.pick(['tracing on', 'tracing off'] as const);
  // Sometimes one call's first attempt is refused as overloaded: the runner's retry (modelSettings.retry) retries it.
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const plan = planHandoffs(seed, scenario);
  const approvals = planApprovals(seed, scenario, tracing);
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (agents ${wire}, ${mode}, ${tracing}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''}${plan === undefined ? '' : ', handoffs'}${approvals === undefined ? '' : ', approvals'})\n  ${scenario.outline.join('\n  ')}`;
  const decided: FrameworkApproval[] = [];
  const resumes: string[] = [];
  await checkRandomRun({
    ...checks,
    label: () => `${label}${resumes.length === 0 ? '' : `\n  ${resumes.join('\n  ')}`}`,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      useTracing(tracing);
      const uninstall = instrumentOpenAIAgents(hooks);
      try {
        const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: fake.fetch as typeof fetch, maxRetries: 0 });
        const modelSettings = { retry: { maxRetries: 2, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } };
        const executed: Executed = new Set();
        const agentTools = approvals === undefined ? tools : [...tools, ...approvalTools(executed)];
        const agent = new Agent({ name: ROOT, instructions: 'You are a helpful travel assistant.', model: model(client), tools: agentTools, modelSettings });
        if (plan !== undefined) {
          const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', handoffDescription: 'Billing questions', model: model(client), tools: agentTools, modelSettings });
          const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', handoffDescription: 'Refunds', model: model(client), tools: agentTools, modelSettings });
          agent.handoffs.push(billing);
          billing.handoffs.push(refunds, agent);
          refunds.handoffs.push(agent, billing);
        }
        // The run's context (its usage), as the SDK's agent_start event hands it over: what a failed non-streamed run leaves.
        let context: Loose | undefined;
        agent.on('agent_start', (ctx) => void (context = ctx as unknown as Loose));
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        let responses: Loose[] | undefined;
        const items: Loose[] = [];
        let usage: Loose;
        let error: string | undefined;
        let streamed: { state: unknown } | undefined;
        // The state the last run resumed: its usage is the run's (a copy made with fromString has a context of its own).
        let resumedState: Loose | undefined;
        const streamedFinishes: string[] = [];
        const go = async (input: string | RunState<any, any>) => {
          if (mode === 'run') return run(agent, input, { maxTurns: 6 });
          const result = (streamed = await new Runner().run(agent, input, { stream: true, maxTurns: 6 }));
          for await (const event of result) {
            // A Chat Completions chunk's finish reason, as the stream's raw model events carry it.
            const raw = event.type === 'raw_model_stream_event' && (event.data as Loose).type === 'model' ? ((event.data as Loose).event as Loose) : undefined;
            const finish = raw?.choices?.[0]?.finish_reason;
            if (typeof finish === 'string') streamedFinishes.push(finish);
          }
          await result.completed;
          if (result.error !== null && result.error !== undefined) throw result.error;
          return result;
        };
        try {
          let result = await go(prompt);
          items.push(...(result.newItems as Loose[]));
          // Paused for approvals: each pending call approved or rejected, the run resumed from its state (or a copy of it).
          while (approvals !== undefined && result.interruptions.length > 0) {
            const draw = approvals.decisions;
            const copy = approvals.copies && draw.chance(0.5);
            const state = copy ? await RunState.fromString(agent, result.state.toString()) : result.state;
            const pending = state.getInterruptions();
            expect(pending.map((item) => (item.rawItem as Loose).callId), `${label}\nthe copy's interruptions`).toEqual(result.interruptions.map((item) => (item.rawItem as Loose).callId));
            const said: string[] = [];
            for (const item of pending) {
              const id = (item.rawItem as Loose).callId as string;
              const always = draw.chance(0.3);
              if (draw.chance(0.5)) {
                state.approve(item, always ? { alwaysApprove: true } : undefined);
                decided.push({ id, agent: item.agent.name, approved: true });
              } else {
                const message = draw.chance(0.4) ? `Not now: ${randomText(draw, 4)}` : undefined;
                state.reject(item, { ...(always ? { alwaysReject: true } : {}), ...(message === undefined ? {} : { message }) });
                decided.push({ id, agent: item.agent.name, approved: false });
              }
              said.push(`${id} ${decided.at(-1)!.approved ? 'approved' : 'rejected'}${always ? ' always' : ''}`);
            }
            resumes.push(`resumed${copy ? ' from a copy' : ''} in ${result.lastAgent?.name}: ${said.join(', ')}`);
            resumedState = state as unknown as Loose;
            result = await go(state);
            items.push(...(result.newItems as Loose[]));
          }
          expect(result.interruptions, label).toEqual([]);
          expect(result.rawResponses, label).toHaveLength(scenario.turns.length);
          if (plan !== undefined) expect(result.lastAgent?.name, `${label}\nthe agent that answered`).toBe(plan.last);
          responses = result.rawResponses as Loose[];
          usage = result.state.usage as Loose;
        } catch (thrown) {
          // The SDK refuses some replies (an incomplete response, an empty truncated completion): the run throws, and its
          // state holds what it had before.
          const state = ((thrown as { state?: Loose }).state ?? streamed?.state) as Loose | undefined;
          if (state === undefined && context === undefined) throw thrown;
          error = String(thrown);
          // A non-streamed run's error carries no state: its usage is the context's (the resumed state's), its responses
          // are not known.
          responses = state?._modelResponses;
          items.push(...(state?._generatedItems ?? []));
          usage = state?.usage ?? resumedState?.usage ?? context!.usage;
        }
        // Calls that failed: the requests after the replies the SDK kept (without its state, the error says: a refusal
        // comes after its reply was kept). The provider's usage of a reply the SDK refused is out of the trajectory's
        // reach (docs/adapters/openai-agents.md, "A response the SDK refuses").
        const answeredRequests = fake.requests.length - fake.failedRequests.length;
        const kept = responses?.length ?? (error !== undefined && /ModelRefusalError/.test(error) ? fake.turnsServed : fake.turnsServed - 1);
        const failedCalls = error === undefined ? 0 : answeredRequests - kept;
        const refused = error === undefined ? [] : scenario.turns.slice(kept, fake.turnsServed);
        const uncounted = {
          prompt: refused.reduce((sum, turn) => sum + turn.usage.input, 0),
          completion: refused.reduce((sum, turn) => sum + turn.usage.output, 0),
          cached: refused.reduce((sum, turn) => sum + (turn.details ? turn.usage.cached : 0), 0),
        };
        const outputs = new Map<string, unknown>();
        // In the SDK's order: the tools' outputs, then a transfer's (the SDK hands off once the step's tools ran), the
        // message naming the agent it went to.
        for (const item of items) {
          if (item.type === 'tool_call_output_item') outputs.set(item.rawItem.callId, item.output);
          else if (item.type === 'handoff_output_item') outputs.set(item.rawItem.callId, item.rawItem.output?.text ?? item.rawItem.output);
        }
        const order = new Map([...outputs.keys()].map((id, index) => [id, index]));
        const paths = plan === undefined ? undefined : chainPaths(plan);
        const steps: FrameworkStep[] | undefined = responses?.map((response, index) => {
          const output = response.output as Loose[];
          const calls = output.filter((item) => item.type === 'function_call').map((item) => ({ id: item.callId as string, name: item.name as string, args: JSON.parse(item.arguments as string) as unknown }));
          return {
            text: messageText(output),
            model: response.providerData?.model,
            calls,
            results: calls.map((call) => ({ id: call.id, output: outputs.get(call.id) })).sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity)),
            prompt: response.usage.inputTokens,
            completion: response.usage.outputTokens,
            cached: cachedOf(response.usage),
            reasoning: reasoningOf(output),
            // Chat Completions says why it stopped (the raw response, or the streamed chunks); Responses only says it failed.
            finish: wire === 'chat' ? (mode === 'stream' ? streamedFinishes[index] : response.providerData?.choices?.[0]?.finish_reason) : undefined,
            ...(plan === undefined ? {} : { trajectory: paths![index]!, agent: plan.agents[index]! }),
          };
        });
        return {
          prompt,
          model: MODELS[wire].requested,
          steps,
          error,
          failedCalls,
          retried: fake.failedRequests,
          totals: { prompt: usage.inputTokens - uncounted.prompt, completion: usage.outputTokens - uncounted.completion, cached: cachedOf(usage) - uncounted.cached },
          // Every call of a tool that needs approval the SDK answered: it ran (its execute did), or the model was told it
          // was rejected (asked and rejected, or one of a tool rejected for the rest of the run).
          ...(approvals === undefined
            ? {}
            : {
                approvals: {
                  // The decision the SDK applied: whether the call ran (a resumed run runs its approved calls before any
                  // model call, so a run that fails later ran them). A later decision "for the rest of the run" on a tool
                  // replaces the earlier ones on its calls (`alwaysApprove` after another call of it was rejected approves
                  // that one too).
                  decided: decided.map((decision) => ({ ...decision, approved: executed.has(decision.id) })),
                  outcomes: [...outputs].filter(([id]) => id.includes('_approval_')).map(([id, output]) => ({ id, denied: !executed.has(id), told: output })),
                },
              }),
        };
      } finally {
        uninstall();
      }
    },
  });
}
