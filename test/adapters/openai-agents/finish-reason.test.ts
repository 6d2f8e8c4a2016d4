// The finish reason a Chat Completions reply gives (`length`,
// `content_filter`) is the one the trajectory's LLM call records, streamed or
// not: the adapter said `stop` for every answer without tool calls
// (found by the random wire, test/support/random-wire.ts).
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIChatCompletionsModel, Runner, run } from '@openai/agents';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { RandomWire, type RandomScenario } from '../../support/random-wire.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { hooks, useTracing } from './support.ts';

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

function oneAnswer(finish: 'length' | 'content_filter' | 'stop'): RandomScenario {
  return {
    wire: 'chat',
    outline: [],
    turns: [{ id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', text: 'Cut short', calls: [], finish, usage: { input: 20, output: 5, cached: 0, cacheWrite: 0, reasoning: 0 }, details: true }],
  };
}

describe('the OpenAI Agents adapter: a Chat Completions finish reason', () => {
  for (const finish of ['length', 'content_filter', 'stop'] as const) {
    for (const stream of [false, true]) {
      it(`${finish}, ${stream ? 'streamed' : 'not streamed'}`, async () => {
        useTracing('tracing off');
        const fake = new RandomWire(1, oneAnswer(finish));
        const recorded = recordedPlugin('agents-finish');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: fake.fetch as typeof fetch, maxRetries: 0 });
        const agent = new Agent({ name: 'Short', instructions: 'Be brief.', model: new OpenAIChatCompletionsModel(client, 'gpt-4o') });
        if (stream) {
          const result = await new Runner().run(agent, 'Say something', { stream: true });
          for await (const _event of result) {
            // drained
          }
          await result.completed;
        } else await run(agent, 'Say something');
        expect(hooks(recorded, 'post_api_request').map((payload) => payload.finish_reason)).toEqual([finish]);
        const { atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        const end = atof.find((event) => event.category === 'llm' && event.scope_category === 'end');
        expect(end?.data?.finish_reason).toBe(finish);
      });
    }
  }
});
