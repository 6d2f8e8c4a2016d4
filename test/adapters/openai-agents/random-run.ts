// One seed of the OpenAI Agents SDK against random provider replies
// (test/support/random-wire.ts): an Agent with tools written as the SDK's
// docs write it, on OpenAIResponsesModel or OpenAIChatCompletionsModel over
// the real `openai` client, run with run() or streamed through a Runner;
// the trajectory is checked against what the SDK returned (each raw model
// response's message text, function calls and usage, the tool outputs among
// the run's new items, `result.state.usage`) by random-wire-checks.ts.
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, run, tool, type Model } from '@openai/agents';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomTool, type RandomWireKind } from '../../support/random-wire.ts';
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
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (agents ${wire}, ${mode}, ${tracing}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${scenario.outline.join('\n  ')}`;
  await checkRandomRun({
    label,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      useTracing(tracing);
      const uninstall = instrumentOpenAIAgents(hooks);
      try {
        const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: fake.fetch as typeof fetch, maxRetries: 0 });
        const agent = new Agent({
          name: 'Travel Agent',
          instructions: 'You are a helpful travel assistant.',
          model: model(client),
          tools,
          modelSettings: { retry: { maxRetries: 2, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } },
        });
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
        for (const item of items) if (item.type === 'tool_call_output_item') outputs.set(item.rawItem.callId, item.output);
        const steps: FrameworkStep[] | undefined = responses?.map((response, index) => {
          const output = response.output as Loose[];
          const calls = output.filter((item) => item.type === 'function_call').map((item) => ({ id: item.callId as string, name: item.name as string, args: JSON.parse(item.arguments as string) as unknown }));
          return {
            text: messageText(output),
            model: response.providerData?.model,
            calls,
            results: calls.map((call) => ({ id: call.id, output: outputs.get(call.id) })),
            prompt: response.usage.inputTokens,
            completion: response.usage.outputTokens,
            cached: cachedOf(response.usage),
            reasoning: reasoningOf(output),
            // Chat Completions says why it stopped (the raw response, or the streamed chunks); Responses only says it failed.
            finish: wire === 'chat' ? (mode === 'stream' ? streamedFinishes[index] : response.providerData?.choices?.[0]?.finish_reason) : undefined,
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
