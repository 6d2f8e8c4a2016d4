// A reasoning model on the Responses API, as the Agents SDK's docs set one
// up (`modelSettings: { reasoning: { effort, summary: 'auto' } }`), with
// `store: false` and the encrypted reasoning the API then returns for the
// program to send back: over the real openai client and the fake fetch
// (JSON and SSE). The step's reasoning is the summaries the model wrote, each
// part a paragraph; its reasoning tokens are the API's, as the SDK counts
// them; the encrypted reasoning, which nobody can read, is written nowhere.
// The reasoning a later request sends back is in that request's messages.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIResponsesModel, run } from '@openai/agents';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, viewLines } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, tokenTotals, TRACING, useTracing, weatherTool } from './support.ts';
import { dated, FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-5');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

/** What the API returns as `encrypted_content`: opaque, a few kilobytes; its prefix is what a leak would show. */
const ENCRYPTED = 'gAAAAABpReasoning' + 'Zm9vYmFy'.repeat(300);
const ENCRYPTED_2 = 'gAAAAABpSecondTurn' + 'YmF6cXV4'.repeat(300);

const PLAN = ['**Planning the lookup**\n\nThe user wants Oslo; one call of get_weather will do.', '**Checking units**\n\nThe tool answers in words, so no conversion is needed.'];

describe('OpenAI Agents SDK: a reasoning model (effort, summary, store: false)', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      it(`the summaries are the step's reasoning, one paragraph a part; reasoning tokens are the SDK's; the encrypted reasoning is not written (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-5': [
            { reasoning: PLAN, encryptedReasoning: ENCRYPTED, calls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 90, output: 310, reasoning: 256 } },
            { reasoning: 'The tool said sunny.', encryptedReasoning: ENCRYPTED_2, text: 'It is sunny in Oslo.', usage: { input: 420, output: 70, cached: 256, reasoning: 48 } },
          ],
        });
        const recorded = recordedPlugin('agents-reasoning');
        instrument(recorded.hooks);
        const agent = new Agent({
          name: 'Reasoning agent',
          instructions: 'Answer weather questions.',
          model,
          modelSettings: { reasoning: { effort: 'high', summary: 'auto' }, store: false, providerData: { include: ['reasoning.encrypted_content'] } },
          tools: [weatherTool()],
        });
        const result = stream ? await run(agent, 'Weather in Oslo?', { stream: true }) : await run(agent, 'Weather in Oslo?');
        if (stream) {
          for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('It is sunny in Oslo.');
        // What went over the wire: the settings, and the encrypted reasoning sent back (the API keeps nothing).
        expect(api.requests[0]!.body).toMatchObject({ reasoning: { effort: 'high', summary: 'auto' }, store: false, include: ['reasoning.encrypted_content'] });
        expect(JSON.stringify(api.requests[1]!.body.input)).toContain(ENCRYPTED);

        expect(hooks(recorded, 'pre_api_request')[0]!.request.body).toMatchObject({ reasoning_effort: 'high' });
        // The second request sent the first answer's reasoning back: its recorded messages hold it, on the assistant
        // message it came with, as the first response recorded that message.
        const answered = hooks(recorded, 'post_api_request')[0]!.assistant_message;
        expect(answered).toMatchObject({ reasoning_content: PLAN.join('\n\n') });
        expect(hooks(recorded, 'pre_api_request')[1]!.request.body.messages).toEqual([
          { role: 'system', content: 'Answer weather questions.' },
          { role: 'user', content: 'Weather in Oslo?' },
          answered,
          { role: 'tool', tool_call_id: 'call_oslo', content: 'The weather in Oslo is sunny.' },
        ]);
        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        const steps = agentSteps(doc);
        expect(steps.map((step) => step.model_name)).toEqual([dated('gpt-5'), dated('gpt-5')]);
        expect(steps.map((step) => step.reasoning_content)).toEqual([PLAN.join('\n\n'), 'The tool said sunny.']);
        expect(observation(doc, 'call_oslo')?.content).toBe('The weather in Oslo is sunny.');
        expect(steps.map((step) => step.metrics.extra?.completion_tokens_details?.reasoning_tokens)).toEqual([256, 48]);
        const sdkReasoning = result.state.usage.outputTokensDetails.reduce((sum, detail) => sum + (detail.reasoning_tokens ?? 0), 0);
        expect(sdkReasoning).toBe(256 + 48);
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        // Nobody can read it, and it is kilobytes a call: not in the trajectory, the events, nor what `view` shows.
        for (const written of [JSON.stringify(atif), JSON.stringify(atof), (await viewLines(recorded, 'atif')).join('\n'), (await viewLines(recorded, 'atof')).join('\n')]) {
          expect(written).not.toContain('gAAAAAB');
          expect(written).not.toContain('characters of base64');
        }
        await sameOnNative(recorded);
      }, 60_000);
    }
  }
});
