// The LangChain adapter records the reasoning a model returned (Anthropic's
// thinking blocks, OpenAI Responses' reasoning summaries) as the step's
// reasoning_content, as the other adapters do: it dropped it (found by the
// random wire, test/support/random-wire.ts).
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { RandomWire, type RandomScenario, type RandomWireKind } from '../support/random-wire.ts';
import { expectNothingLost, recordedPlugin } from './support.ts';

function thinkingThenAnswer(wire: RandomWireKind): RandomScenario {
  return {
    wire,
    outline: [],
    turns: [{ id: `${wire}_1`, model: 'm-2026', reasoning: 'The user wants a greeting; answer briefly.', text: 'Hello!', calls: [], finish: 'stop', usage: { input: 12, output: 9, cached: 0, cacheWrite: 0, reasoning: 4 }, details: true }],
  };
}

const MODELS: Array<[string, RandomWireKind, (fetch: typeof globalThis.fetch) => BaseChatModel]> = [
  ['ChatAnthropic', 'anthropic', (fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } })],
  ['ChatOpenAI on the Responses API', 'responses', (fetch) => new ChatOpenAI({ model: 'o4-mini', apiKey: 'sk-test', maxRetries: 0, useResponsesApi: true, configuration: { fetch } })],
];

describe('the LangChain adapter: reasoning', () => {
  for (const [name, wire, model] of MODELS) {
    for (const stream of [false, true]) {
      it(`${name}, ${stream ? 'streamed' : 'invoked'}`, async () => {
        const fake = new RandomWire(1, thinkingThenAnswer(wire));
        const recorded = recordedPlugin('lc-reasoning');
        const chat = model(fake.fetch as typeof globalThis.fetch);
        const callbacks = [new NemoRelayCallbackHandler(recorded.hooks)];
        if (stream) {
          for await (const _chunk of await chat.stream('Say hello', { callbacks })) {
            // drained
          }
        } else await chat.invoke('Say hello', { callbacks });
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const agent = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
        expect(agent.map((step) => [step.message, step.reasoning_content])).toEqual([['Hello!', 'The user wants a greeting; answer briefly.']]);
      });
    }
  }
});
