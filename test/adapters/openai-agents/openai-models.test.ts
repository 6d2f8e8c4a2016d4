// Agents SDK programs written the way its docs write them, on OpenAI's own
// models (OpenAIResponsesModel through the global run() and the default
// provider; OpenAIChatCompletionsModel through a Runner), driven by the real
// `openai` client against a fake fetch speaking the API's JSON and SSE.
// Each trajectory is checked against what the program did: the user input,
// every request's input, the reported model, tool calls by id, reasoning,
// and tokens equal to the SDK's own `result.state.usage`.
import { describe, expect, it } from 'vitest';
import { Agent, OpenAIChatCompletionsModel, Runner, getDefaultModel, run } from '@openai/agents';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, instrumentEachTest, TRACING, useTracing, weatherTool } from './support.ts';
import { dated, FakeOpenAI, useAsDefaultClient } from './wire.ts';

// The default provider keeps the first default client it is given: one fake for the file.
const defaultApi = new FakeOpenAI();
useAsDefaultClient(defaultApi);

const instrument = instrumentEachTest();

const getWeather = weatherTool();

describe('OpenAI Agents SDK on OpenAI models', () => {
  for (const tracing of TRACING) {
    it(`global run() with the Responses model: input, requests, reported model, reasoning, tool calls and tokens (${tracing})`, async () => {
      useTracing(tracing);
      const api = defaultApi.load({
        'gpt-4.1': [
          {
            reasoning: 'Two cities: call the tool for each.',
            calls: [
              { id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } },
              { id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } },
            ],
            usage: { input: 120, output: 40, cached: 64, reasoning: 12 },
          },
          { text: 'Tokyo and Paris are both sunny.', usage: { input: 210, output: 18, cached: 128 } },
        ],
      });
      const recorded = recordedPlugin('agents-responses');
      instrument(recorded.hooks);

      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: 'gpt-4.1', tools: [getWeather] });
      const result = await run(agent, 'What is the weather in Tokyo and Paris?');
      expect(result.finalOutput).toBe('Tokyo and Paris are both sunny.');

      // What the adapter saw of each request is what went over the wire.
      const requests = hooks(recorded, 'pre_api_request');
      expect(requests).toHaveLength(2);
      expect(requests[0]!.request.body.messages).toEqual([
        { role: 'system', content: 'You are a helpful weather assistant.' },
        { role: 'user', content: 'What is the weather in Tokyo and Paris?' },
      ]);
      const second = requests[1]!.request.body.messages as Array<Record<string, any>>;
      expect(second.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
      expect(second[2]!.tool_calls.map((call: Record<string, any>) => call.id)).toEqual(['call_tokyo', 'call_paris']);
      expect(second.slice(3)).toEqual([
        { role: 'tool', tool_call_id: 'call_tokyo', content: 'The weather in Tokyo is sunny.' },
        { role: 'tool', tool_call_id: 'call_paris', content: 'The weather in Paris is sunny.' },
      ]);
      expect(api.requests[1]!.body.input.filter((item: Record<string, any>) => item.type === 'function_call_output').map((item: Record<string, any>) => item.call_id)).toEqual([
        'call_tokyo',
        'call_paris',
      ]);
      expect(requests[0]!.request.body.tools.map((t: Record<string, any>) => t.function.name)).toEqual(['get_weather']);
      expect(requests.map((payload) => payload.provider)).toEqual(['openai', 'openai']);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(doc.agent.name).toBe('Weather Agent');
      const steps = stepsOf(doc);
      expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Tokyo and Paris?' });
      const answered = agentSteps(doc);
      expect(answered.map((step) => step.model_name)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
      expect(answered[0]!.reasoning_content).toBe('Two cities: call the tool for each.');
      expect(toolCallIds(doc)).toEqual(['call_tokyo', 'call_paris']);
      expect(observation(doc, 'call_tokyo')?.content).toBe('The weather in Tokyo is sunny.');
      expect(observation(doc, 'call_paris')?.content).toBe('The weather in Paris is sunny.');
      expect(answered.at(-1)!.message).toBe('Tokyo and Paris are both sunny.');
      expect(answered.map((step) => step.metrics)).toMatchObject([
        { prompt_tokens: 120, completion_tokens: 40, cached_tokens: 64, extra: { completion_tokens_details: { reasoning_tokens: 12 } } },
        { prompt_tokens: 210, completion_tokens: 18, cached_tokens: 128 },
      ]);
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    }, 30_000);

    it(`an agent without a model (the SDK's quickstart): its requests name the default model that went over the wire (${tracing})`, async () => {
      useTracing(tracing);
      // The SDK asks its provider for the model '' and sends its default.
      const sent = getDefaultModel();
      const api = defaultApi.load({ [sent]: [{ text: 'Hello.', usage: { input: 12, output: 3 } }] });
      const recorded = recordedPlugin('agents-default-model');
      instrument(recorded.hooks);

      const result = await run(new Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.' }), 'Say hello.');
      expect(result.finalOutput).toBe('Hello.');
      expect(api.requests.map((request) => request.body.model)).toEqual([sent]);
      expect(hooks(recorded, 'pre_api_request').map((payload) => payload.model)).toEqual([sent]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(stepsOf(doc)[0]!.extra?.llm_request?.model).toBe(sent);
      expect(agentSteps(doc).map((step) => step.model_name)).toEqual([dated(sent)]);
    }, 30_000);

    for (const stream of [false, true]) {
    it(`a Runner with an OpenAIChatCompletionsModel on the agent, and a groupId for the session (${stream ? 'streamed' : 'not streamed'}, ${tracing})`, async () => {
      useTracing(tracing);
      const api = new FakeOpenAI({
        'gpt-4o': [
          { calls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 50, output: 9, cached: 0 } },
          { text: 'Oslo is sunny.', usage: { input: 80, output: 6, cached: 32 } },
        ],
      });
      const recorded = recordedPlugin('agents-chat');
      instrument(recorded.hooks);
      const agent = new Agent({
        name: 'Chat Weather',
        instructions: 'Answer about the weather.',
        model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'),
        tools: [getWeather],
      });
      const runner = new Runner({ groupId: 'conversation-7', workflowName: 'weather desk' });
      const result = stream ? await runner.run(agent, 'Weather in Oslo?', { stream: true }) : await runner.run(agent, 'Weather in Oslo?');
      if (stream) {
        for await (const _event of result as AsyncIterable<unknown>) {
          // drained
        }
        await (result as { completed: Promise<void> }).completed;
      }
      expect(result.finalOutput).toBe('Oslo is sunny.');
      expect(api.requests.map((request) => [request.api, request.body.stream === true])).toEqual([['chat', stream], ['chat', stream]]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(doc.session_id).toBe('conversation-7');
      expect(doc.agent.name).toBe('Chat Weather');
      // The model object keeps its name private, tracing on or off: the requests name none, and the
      // trajectory's agent is named after the model the first answer reported (as the adapter's page says).
      expect(hooks(recorded, 'pre_api_request').map((hook) => hook.model ?? hook.request?.body?.model)).toEqual([undefined, undefined]);
      expect(doc.agent.model_name).toBe(dated('gpt-4o'));
      expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: 'Weather in Oslo?' });
      expect(agentSteps(doc).map((step) => step.model_name)).toEqual([dated('gpt-4o'), dated('gpt-4o')]);
      expect(toolCallIds(doc)).toEqual(['call_oslo']);
      expect(observation(doc, 'call_oslo')?.content).toBe('The weather in Oslo is sunny.');
      expect(hooks(recorded, 'pre_api_request')[1]!.request.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_oslo', content: 'The weather in Oslo is sunny.' });
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    }, 30_000);
    }
  }
});
