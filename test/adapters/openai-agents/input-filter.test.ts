// `callModelInputFilter` in the run config, as the Agents SDK's docs write
// it: the program edits the model's input just before each call (here it
// redacts an e-mail address and adds a line to the instructions). Over the
// real openai client and the fake fetch (JSON and SSE): each request as
// recorded is the one the model was sent, filtered, and so is the ATIF
// trajectory's user step; the turn's `user_message` (ATOF) stays what the
// user said, the run's input.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIResponsesModel, run, type CallModelInputFilter } from '@openai/agents';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, stepsOf, tokenTotals, TRACING, useTracing, weatherTool } from './support.ts';
import { FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-4.1');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

const ASKED = 'I am jane@example.com. What is the weather in Paris?';
const REDACTED = 'I am [email]. What is the weather in Paris?';

/** The docs' shape of a filter: the model data in, the model data out. Redacts e-mail addresses in the user's messages. */
const redact: CallModelInputFilter = ({ modelData }) => ({
  instructions: `${modelData.instructions ?? ''}\nNever repeat personal data.`,
  input: modelData.input.map((item) => ('role' in item && item.role === 'user' && typeof item.content === 'string' ? { ...item, content: item.content.replace(/\S+@\S+\.\w+/g, '[email]') } : item)),
});

describe('OpenAI Agents SDK: callModelInputFilter', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      it(`each request, and the trajectory's user step, as the filter left them, as the model was sent them; the turn's user_message is the run's input (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            { calls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 60, output: 9 } },
            { text: 'It is sunny in Paris.', usage: { input: 110, output: 7, cached: 32 } },
          ],
        });
        const recorded = recordedPlugin('agents-input-filter');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Weather agent', instructions: 'You answer weather questions.', model, tools: [weatherTool()] });
        const result = stream ? await run(agent, ASKED, { stream: true, callModelInputFilter: redact }) : await run(agent, ASKED, { callModelInputFilter: redact });
        if (stream) {
          for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('It is sunny in Paris.');
        // What went over the wire: filtered.
        expect(api.requests[0]!.body).toMatchObject({ instructions: 'You answer weather questions.\nNever repeat personal data.', input: [{ role: 'user', content: REDACTED }] });
        expect(JSON.stringify(api.requests.map((request) => request.body))).not.toContain('jane@example.com');

        const requests = hooks(recorded, 'pre_api_request').map((payload) => payload.request.body.messages as Array<Record<string, any>>);
        expect(requests[0]).toEqual([
          { role: 'system', content: 'You answer weather questions.\nNever repeat personal data.' },
          { role: 'user', content: REDACTED },
        ]);
        expect(requests[1]!.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
        expect(requests[1]![1]).toEqual({ role: 'user', content: REDACTED });
        // The turn's user message is the run's input: what the user said, before the program's filter.
        expect(hooks(recorded, 'pre_llm_call').map((payload) => payload.user_message)).toEqual([ASKED]);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        // ATIF is the conversation as the model saw it (NeMo Relay's converter reads the user's step from the request):
        // the message the model was sent, filtered; nothing of the address.
        expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: REDACTED });
        expect(JSON.stringify(doc)).not.toContain('jane@example.com');
        expect(agentSteps(doc).map((step) => step.message)).toEqual(['', 'It is sunny in Paris.']);
        expect(observation(doc, 'call_paris')?.content).toBe('The weather in Paris is sunny.');
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);
    }
  }
});
