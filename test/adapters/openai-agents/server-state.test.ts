// Conversation state kept by OpenAI, as the Agents SDK's docs chain turns:
// `run(agent, input, { previousResponseId: result.lastResponseId })` and
// `run(agent, input, { conversationId })`. Each turn's request carries only
// the new items (the API keeps the rest). And conversation memory kept in an
// OpenAI conversation (`session: new OpenAIConversationsSession()`), which
// the SDK reads and writes through the Conversations API, sending the model
// the history it read. Over the real openai client and the
// fake fetch (JSON and SSE): each turn's user message is the one the user
// sent in it, each request is recorded as sent (with the server-side state it
// names), and the turns of one conversation are one session.
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run } from '@openai/agents';
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

/**
 * OpenAI's Conversations API, as the session uses it, in front of the fake Responses API: a conversation created
 * empty, items added to it (each given an id and a type, a message's text content as the API returns it, in parts),
 * listed oldest first.
 */
function conversationsApi(): { client: OpenAI; items: Map<string, Array<Record<string, any>>> } {
  const items = new Map<string, Array<Record<string, any>>>();
  let n = 0;
  const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const { pathname } = new URL(typeof url === 'string' ? url : url instanceof URL ? url.href : url.url);
    const route = /\/v1\/conversations(?:\/([^/]+)\/items)?$/.exec(pathname);
    if (route === null) return api.fetch(url, init);
    if (route[1] === undefined) {
      const id = `conv_${++n}`;
      items.set(id, []);
      return json({ id, object: 'conversation', created_at: 1_764_000_000, metadata: {} });
    }
    const stored = items.get(route[1])!;
    if ((init?.method ?? 'GET') === 'POST') {
      const added = (JSON.parse(String(init!.body)).items as Array<Record<string, any>>).map((item) => ({
        ...item,
        // The API types every item it keeps; a message the SDK sent as `{role, content}` comes back a `message`.
        type: item.type ?? 'message',
        id: item.id ?? `item_${++n}`,
        ...(typeof item.content === 'string' ? { content: [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }] } : {}),
      }));
      stored.push(...added);
      return json({ object: 'list', data: added, first_id: added[0]?.id, last_id: added.at(-1)?.id, has_more: false });
    }
    return json({ object: 'list', data: stored, first_id: stored[0]?.id ?? null, last_id: stored.at(-1)?.id ?? null, has_more: false });
  };
  return { client: new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch, maxRetries: 0 }), items };
}

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

      it(`OpenAIConversationsSession: each turn's user message is its own, each request holds the history the session read, the turns one session named by the conversation (${how})`, async () => {
        useTracing(tracing);
        script();
        const conversations = conversationsApi();
        const recorded = recordedPlugin('agents-conversations-session');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Assistant', instructions: 'Reply very concisely.', model: new OpenAIResponsesModel(conversations.client, 'gpt-4.1') });
        const session = new OpenAIConversationsSession({ client: conversations.client });
        const results: Array<Awaited<ReturnType<typeof runOnce>>> = [];
        for (const question of QUESTIONS) results.push(await runOnce(agent, question, { session }, stream));
        expect(results.map((result) => result.finalOutput)).toEqual(ANSWERS);
        const conversationId = await session.getSessionId();
        expect(conversations.items.get(conversationId)).toHaveLength(6);

        // The history the session read went to the model, and is in the request as recorded.
        const requests = hooks(recorded, 'pre_api_request').map((payload) => payload.request.body.messages as Array<Record<string, any>>);
        expect(requests.at(-1)).toEqual([
          { role: 'system', content: 'Reply very concisely.' },
          ...QUESTIONS.slice(0, 2).flatMap((question, i) => [{ role: 'user', content: question }, { role: 'assistant', content: ANSWERS[i] }]),
          { role: 'user', content: QUESTIONS[2] },
        ]);
        expect(hooks(recorded, 'pre_llm_call').map((payload) => payload.user_message)).toEqual(QUESTIONS);
        expect(hooks(recorded, 'pre_llm_call').map((payload) => payload.session_id)).toEqual([conversationId, conversationId, conversationId]);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        expect(atif.map((doc) => doc.session_id)).toEqual([conversationId, conversationId, conversationId]);
        const byQuestion = new Map(atif.map((doc) => [stepsOf(doc).filter((step) => step.source === 'user').at(-1)!.message, doc]));
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
});
