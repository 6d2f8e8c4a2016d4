// Conversation state kept by OpenAI, as the Agents SDK's docs chain turns:
// `run(agent, input, { previousResponseId: result.lastResponseId })` and
// `run(agent, input, { conversationId })`. Each turn's request carries only
// the new items (the API keeps the rest). Over the real openai client and the
// fake fetch (JSON and SSE): each turn's user message is the one the user
// sent in it, each request is recorded as sent (with the server-side state it
// names), and the turns of one conversation are one session.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIResponsesModel, run } from '@openai/agents';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, sdkTotals, stepsOf, tokenTotals, TRACING, useTracing } from './support.ts';
import { FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-4.1');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

const QUESTIONS = ['What city is the Golden Gate Bridge in?', 'What state is it in?', 'And its capital?'];
const ANSWERS = ['San Francisco', 'California', 'Sacramento'];

function script() {
  api.load({ 'gpt-4.1': ANSWERS.map((text, i) => ({ text, usage: { input: 20 + 15 * i, output: 3, cached: i === 0 ? 0 : 16 } })) });
}

async function runOnce(agent: Agent, input: string, options: Record<string, unknown>, stream: boolean) {
  const result = stream ? await run(agent, input, { ...options, stream: true }) : await run(agent, input, options);
  if (stream) {
    for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
    await (result as unknown as { completed: Promise<void> }).completed;
  }
  return result;
}

describe('OpenAI Agents SDK: conversation state kept by OpenAI', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      for (const chain of ['previousResponseId', 'conversationId'] as const) {
        it(`${chain}: each turn's user message is its own, each request as sent, the turns one session (${how})`, async () => {
          useTracing(tracing);
          script();
          const recorded = recordedPlugin(`agents-server-state-${chain}`);
          instrument(recorded.hooks);
          const agent = new Agent({ name: 'Assistant', instructions: 'Reply very concisely.', model });
          const results: Array<Awaited<ReturnType<typeof runOnce>>> = [];
          let previous: string | undefined;
          for (const question of QUESTIONS) {
            const options = chain === 'conversationId' ? { conversationId: 'conv_68b2a7' } : previous === undefined ? {} : { previousResponseId: previous };
            const result = await runOnce(agent, question, options, stream);
            previous = result.lastResponseId;
            results.push(result);
          }
          expect(results.map((result) => result.finalOutput)).toEqual(ANSWERS);
          // What went over the wire: only the new message, and the state it continues.
          expect(api.requests.map((request) => request.body.input)).toEqual(QUESTIONS.map((question) => [{ role: 'user', content: question }]));
          if (chain === 'conversationId') expect(api.requests.map((request) => request.body.conversation)).toEqual(['conv_68b2a7', 'conv_68b2a7', 'conv_68b2a7']);
          else expect(api.requests.map((request) => request.body.previous_response_id)).toEqual([undefined, results[0]!.lastResponseId, results[1]!.lastResponseId]);

          // Each request as recorded is the one sent, naming the state the API keeps for it.
          const requests = hooks(recorded, 'pre_api_request').map((payload) => payload.request.body);
          expect(requests.map((body) => body.messages)).toEqual(QUESTIONS.map((question) => [{ role: 'system', content: 'Reply very concisely.' }, { role: 'user', content: question }]));
          if (chain === 'conversationId') expect(requests.map((body) => body.conversation)).toEqual(['conv_68b2a7', 'conv_68b2a7', 'conv_68b2a7']);
          else expect(requests.map((body) => body.previous_response_id)).toEqual([undefined, results[0]!.lastResponseId, results[1]!.lastResponseId]);
          expect(hooks(recorded, 'pre_llm_call').map((payload) => payload.user_message)).toEqual(QUESTIONS);
          // One conversation, one session: its turns in order.
          const sessions = hooks(recorded, 'pre_llm_call').map((payload) => payload.session_id);
          expect(new Set(sessions).size).toBe(1);
          if (chain === 'conversationId') expect(sessions[0]).toBe('conv_68b2a7');

          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);
          expect(atif).toHaveLength(3);
          expect(new Set(atif.map((doc) => doc.session_id)).size).toBe(1);
          const byQuestion = new Map(atif.map((doc) => [stepsOf(doc)[0]!.message, doc]));
          QUESTIONS.forEach((question, i) => {
            const doc = byQuestion.get(question);
            expect(doc, question).toBeDefined();
            expect(agentSteps(doc!).map((step) => step.message)).toEqual([ANSWERS[i]]);
            expect(tokenTotals(doc!)).toEqual(sdkTotals(results[i]!.state.usage));
          });
          await sameOnNative(recorded);
        }, 60_000);
      }
    }
  }
});
