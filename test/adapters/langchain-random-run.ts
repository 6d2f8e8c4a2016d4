// One seed of LangChain against random provider replies
// (test/support/random-wire.ts): an agent made with `createAgent` as
// LangChain's docs make it, on the real ChatOpenAI (Chat Completions, with
// and without `streamUsage`, or the Responses API) or ChatAnthropic, invoked
// or streamed through LangGraph (`streamMode: ['values', 'messages']`, which
// makes the model stream on the wire), with NemoRelayCallbackHandler; the
// trajectory is checked against the messages the agent returned (each AI
// message's text, tool calls, usage_metadata and finish reason, each tool
// message's content) by random-wire-checks.ts.
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { BaseMessage } from '@langchain/core/messages';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { createAgent, modelRetryMiddleware } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { Draw } from '../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomTool, type RandomWireKind } from '../support/random-wire.ts';
import { checkRandomRun, type FrameworkStep } from './random-wire-checks.ts';

type LangChainWire = Exclude<RandomWireKind, 'gemini'>;

export const LANGCHAIN_WIRES: readonly LangChainWire[] = ['chat', 'responses', 'anthropic'];

const DATED: Record<LangChainWire, string> = { chat: 'gpt-4.1-2025-04-14', responses: 'gpt-4.1-2025-04-14', anthropic: 'claude-sonnet-4-5-20250929' };

function chatModel(wire: LangChainWire, fetch: typeof globalThis.fetch, streamUsage: boolean): BaseChatModel {
  if (wire === 'anthropic') return new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
  return new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, streamUsage, ...(wire === 'responses' ? { useResponsesApi: true } : {}) });
}

const TOOLS: RandomTool[] = [
  { name: 'get_weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'get_time', args: () => ({}) },
  { name: 'search', args: (draw) => ({ query: randomText(draw, 4), limit: draw.int(1, 5) }) },
];

const tools = [
  tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }) }),
  tool(async () => '12:00 🕛', { name: 'get_time', description: 'The current time', schema: z.object({}) }),
  tool(async ({ query, limit }) => JSON.stringify({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }), {
    name: 'search',
    description: 'Search the web',
    schema: z.object({ query: z.string(), limit: z.number() }),
  }),
];

type Loose = Record<string, any>;

function reasoningOf(message: BaseMessage): string | null {
  const texts = (message.contentBlocks as Loose[]).filter((block) => block.type === 'reasoning').map((block) => String(block.reasoning ?? ''));
  return texts.length === 0 ? null : texts.join('');
}

export async function runLangChainSeed(seed: number, wire: LangChainWire, onNative: boolean): Promise<void> {
  const scenario = randomScenario(seed, wire, DATED[wire], TOOLS);
  const choice = new Draw(seed ^ 0x1c);
  const mode = choice.pick(['invoke', 'stream'] as const);
  const streamUsage = choice.chance(0.7);
  // Sometimes one call's first attempt is refused as overloaded: modelRetryMiddleware retries it (the client's own retries are off).
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (langchain ${wire}, ${mode}${streamUsage ? '' : ', streamUsage false'}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${scenario.outline.join('\n  ')}`;
  await checkRandomRun({
    label,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      const agent = createAgent({
        model: chatModel(wire, fake.fetch as typeof globalThis.fetch, streamUsage),
        tools,
        systemPrompt: 'You are a helpful travel assistant.',
        middleware: [modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 1 })],
      });
      const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
      const input = { messages: [{ role: 'user', content: prompt }] };
      const callbacks = [new NemoRelayCallbackHandler(hooks)];
      let messages: BaseMessage[];
      if (mode === 'invoke') messages = (await agent.invoke(input, { callbacks, recursionLimit: 20 })).messages;
      else {
        let last: { messages: BaseMessage[] } | undefined;
        for await (const [kind, chunk] of await agent.stream(input, { callbacks, recursionLimit: 20, streamMode: ['values', 'messages'] })) {
          if (kind === 'values') last = chunk as { messages: BaseMessage[] };
        }
        messages = last!.messages;
      }
      const results = new Map<string, unknown>();
      for (const message of messages) if (message.getType() === 'tool') results.set((message as unknown as Loose).tool_call_id, message.content);
      const steps: FrameworkStep[] = messages
        .filter((message) => message.getType() === 'ai')
        .map((message) => {
          const ai = message as unknown as Loose;
          const usage = ai.usage_metadata as Loose | undefined;
          const details = usage?.input_token_details as Loose | undefined;
          const calls = (ai.tool_calls ?? []).map((call: Loose) => ({ id: call.id as string, name: call.name as string, args: call.args as unknown }));
          return {
            text: message.text,
            // A streamed ChatAnthropic answer says its model and stop reason in additional_kwargs (message_start, message_delta).
            model: ai.response_metadata?.model_name ?? ai.response_metadata?.model ?? ai.additional_kwargs?.model,
            calls,
            results: calls.map((call: { id: string }) => ({ id: call.id, output: results.get(call.id) })),
            prompt: usage?.input_tokens,
            completion: usage?.output_tokens,
            // Cache reads and writes where the framework reports either (no details: it reports none).
            cached: details?.cache_read === undefined && details?.cache_creation === undefined ? undefined : (details.cache_read ?? 0) + (details.cache_creation ?? 0),
            finish: ai.response_metadata?.finish_reason ?? ai.response_metadata?.stop_reason ?? ai.additional_kwargs?.stop_reason,
            // The reasoning as LangChain's standard content blocks give it, whatever the provider.
            reasoning: reasoningOf(message),
          };
        });
      const sum = (pick: (step: FrameworkStep) => number | undefined) => {
        const values = steps.map(pick).filter((value): value is number => value !== undefined);
        return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
      };
      return { prompt, model: 'gpt-4.1', steps, retried: fake.failedRequests, totals: { prompt: sum((s) => s.prompt), completion: sum((s) => s.completion ?? undefined), cached: sum((s) => s.cached) } };
    },
  });
}
