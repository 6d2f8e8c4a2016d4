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
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, run, tool, type Model } from '@openai/agents';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomWireKind } from '../../support/random-wire.ts';
import { checkRandomRun, type FrameworkStep } from '../random-wire-checks.ts';
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

/** The run's own agent, and the agents a handoff may reach; who hands to whom (back to the run's agent, back up the chain). */
const ROOT = 'Travel Agent';
const HANDS_TO: Record<string, readonly string[]> = { [ROOT]: ['billing'], billing: ['refunds', ROOT], refunds: [ROOT, 'billing'] };
/** The SDK's default transfer tool names (`transfer_to_` and the agent's name as a function name: spaces and the like as `_`, case kept). */
const TRANSFER: Record<string, string> = { [ROOT]: 'transfer_to_Travel_Agent', billing: 'transfer_to_billing', refunds: 'transfer_to_refunds' };

interface HandoffPlan {
  /** Per turn: the transfer calls that led to the agent making it (outermost first; none for the run's own agent). */
  paths: string[][];
  /** Per turn: the agent making it. */
  agents: string[];
  /** The agent that ends the run. */
  last: string;
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
  const paths: string[][] = [];
  const agents: string[] = [];
  scenario.turns.forEach((turn, index) => {
    const current = chain.at(-1)?.agent ?? ROOT;
    paths.push(chain.map((hop) => hop.callId));
    agents.push(current);
    if (turn.calls.length === 0 || !draw.chance(0.85)) return;
    const target = draw.pick(HANDS_TO[current]!);
    const call = { id: `call_${seed}_handoff_${index + 1}`, name: TRANSFER[target]!, args: {} };
    turn.calls.splice(draw.int(0, turn.calls.length), 0, call);
    scenario.outline[index] += ` (${current} hands off to ${target})`;
    const at = chain.findIndex((hop) => hop.agent === target);
    chain = target === ROOT ? [] : at >= 0 ? chain.slice(0, at + 1) : [...chain, { agent: target, callId: call.id }];
  });
  return { paths, agents, last: chain.at(-1)?.agent ?? ROOT };
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

export async function runAgentsSeed(seed: number, wire: (typeof AGENTS_WIRES)[number], onNative: boolean): Promise<void> {
  const { dated, model } = MODELS[wire];
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  const choice = new Draw(seed ^ 0xa6e);
  const mode = choice.pick(['run', 'stream'] as const);
  const tracing = choice.pick(['tracing on', 'tracing off'] as const);
  // Sometimes one call's first attempt is refused as overloaded: the runner's retry (modelSettings.retry) retries it.
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const plan = planHandoffs(seed, scenario);
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (agents ${wire}, ${mode}, ${tracing}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''}${plan === undefined ? '' : ', handoffs'})\n  ${scenario.outline.join('\n  ')}`;
  await checkRandomRun({
    label,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      useTracing(tracing);
      const uninstall = instrumentOpenAIAgents(hooks);
      try {
        const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: fake.fetch as typeof fetch, maxRetries: 0 });
        const modelSettings = { retry: { maxRetries: 2, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } };
        const agent = new Agent({ name: ROOT, instructions: 'You are a helpful travel assistant.', model: model(client), tools, modelSettings });
        if (plan !== undefined) {
          const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', handoffDescription: 'Billing questions', model: model(client), tools, modelSettings });
          const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', handoffDescription: 'Refunds', model: model(client), tools, modelSettings });
          agent.handoffs.push(billing);
          billing.handoffs.push(refunds, agent);
          refunds.handoffs.push(agent, billing);
        }
        // The run's context (its usage), as the SDK's agent_start event hands it over: what a failed non-streamed run leaves.
        let context: Loose | undefined;
        agent.on('agent_start', (ctx) => void (context = ctx as unknown as Loose));
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        let responses: Loose[] | undefined;
        let items: Loose[];
        let usage: Loose;
        let error: string | undefined;
        let streamed: { state: unknown } | undefined;
        const streamedFinishes: string[] = [];
        try {
          let result;
          if (mode === 'run') result = await run(agent, prompt, { maxTurns: 6 });
          else {
            result = streamed = await new Runner().run(agent, prompt, { stream: true, maxTurns: 6 });
            for await (const event of result) {
              // A Chat Completions chunk's finish reason, as the stream's raw model events carry it.
              const raw = event.type === 'raw_model_stream_event' && (event.data as Loose).type === 'model' ? ((event.data as Loose).event as Loose) : undefined;
              const finish = raw?.choices?.[0]?.finish_reason;
              if (typeof finish === 'string') streamedFinishes.push(finish);
            }
            await result.completed;
            if (result.error !== null && result.error !== undefined) throw result.error;
          }
          expect(result.rawResponses, label).toHaveLength(scenario.turns.length);
          if (plan !== undefined) expect(result.lastAgent?.name, `${label}\nthe agent that answered`).toBe(plan.last);
          responses = result.rawResponses as Loose[];
          items = result.newItems as Loose[];
          usage = result.state.usage as Loose;
        } catch (thrown) {
          // The SDK refuses some replies (an incomplete response, an empty truncated completion): the run throws, and its
          // state holds what it had before.
          const state = ((thrown as { state?: Loose }).state ?? streamed?.state) as Loose | undefined;
          if (state === undefined && context === undefined) throw thrown;
          error = String(thrown);
          // A non-streamed run's error carries no state: its usage is the context's, its responses are not known.
          responses = state?._modelResponses;
          items = state?._generatedItems ?? [];
          usage = state?.usage ?? context!.usage;
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
            ...(plan === undefined ? {} : { trajectory: plan.paths[index]!, agent: plan.agents[index]! }),
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
        };
      } finally {
        uninstall();
      }
    },
  });
}
