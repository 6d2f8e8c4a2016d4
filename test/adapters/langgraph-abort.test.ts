// A LangGraph run the program aborts with its AbortSignal (a server whose client hung up) ends the interrupted model
// call with the program's abort. LangGraph races each node against the signal, so the graph fails with the abort
// at once; LangChain tells the model's own error (if at all) only after the graph's, when the run is over. A
// prebuilt ReAct agent with the real ChatOpenAI, JSON and streamed, over a fake fetch that holds its answer until
// the program aborts: before the response, in the middle of its body, and after it, while the asked tool runs.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, chatCompletionEither, chatCompletionStream, wireResponse, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const ASK = chatCompletionEither({ id: 'chatcmpl-ask', model: GPT, content: null, toolCalls: [{ id: 'call_lookup', name: 'lookup', args: { key: 'K-1' } }], usage: { prompt_tokens: 40, completion_tokens: 9 } });
const ANSWER = { id: 'chatcmpl-answer', model: GPT, content: 'The key K-1 holds 42, as the lookup said.', usage: { prompt_tokens: 70, completion_tokens: 12 } };

type Moment = 'before the response' | 'in the middle of the body' | 'while the tool runs';

/** The wire text of `reply`, as the client asked for it. */
const wireText = (reply: WireReply, streamed: boolean): Promise<string> => wireResponse(reply, 'req', streamed).text();

/**
 * The provider: the first request asks for the lookup; the second (the first, when `first`) is answered as `moment` says, the program's abort
 * (`abort`) coming when the request waits for its response or once half the body is sent. The request's signal errors
 * what is left, as fetch does.
 */
function provider(moment: Moment, abort: () => void, first: boolean): typeof fetch {
  let requests = 0;
  const fake = async (_input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
    const streamed = typeof init?.body === 'string' && JSON.parse(init.body).stream === true;
    const signal = init?.signal ?? undefined;
    requests += 1;
    if ((requests === 1 && !first) || moment === 'while the tool runs') return wireResponse(requests === 1 ? ASK : chatCompletionEither(ANSWER), `req_${requests}`, streamed);
    if (moment === 'before the response') {
      setTimeout(abort, 5);
      return new Promise<Response>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }
    const text = await wireText(streamed ? chatCompletionStream(ANSWER) : chatCompletion(ANSWER), streamed);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, Math.floor(text.length / 2))));
        signal?.addEventListener('abort', () => controller.error(signal.reason), { once: true });
        setTimeout(abort, 5);
      },
    });
    return new Response(body, { headers: { 'content-type': streamed ? 'text/event-stream' : 'application/json', 'x-request-id': `req_${requests}` } });
  };
  return fake as typeof fetch;
}

const ways = {
  invoke: (agent: any, input: unknown, options: Record<string, unknown>) => agent.invoke(input, options),
  stream: async (agent: any, input: unknown, options: Record<string, unknown>) => {
    for await (const _ of await agent.stream(input, { ...options, streamMode: 'values' }));
  },
  streamEvents: async (agent: any, input: unknown, options: Record<string, unknown>) => {
    for await (const _ of agent.streamEvents(input, { ...options, version: 'v2' }));
  },
};

const hooksOf = (recorded: Recorded, hook: string) => recorded.log.filter((entry) => entry.hook === hook).map((entry) => entry.payload as Record<string, any>);

/**
 * Runs `agent` `way` with the handler and `signal`, which the program aborts: the run throws the abort, and the plugin
 * loses nothing. LangChain tells the model's own error after the graph's, when the run has ended: it is waited for.
 */
async function runAborted(way: (typeof ways)[keyof typeof ways], agent: unknown, recorded: Recorded, signal: AbortSignal): Promise<void> {
  let caught: unknown;
  try {
    await way(agent, { messages: [{ role: 'user', content: 'What does the key K-1 hold?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], signal });
  } catch (error) {
    caught = error;
  }
  expect((caught as Error)?.name).toBe('AbortError');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const { counters } = await recorded.finish();
  expectNothingLost(counters);
}

describe('LangGraph: a run the program aborts ends its model call with the abort', () => {
  for (const moment of ['before the response', 'in the middle of the body', 'while the tool runs'] as const) {
    for (const streaming of [false, true]) {
      for (const [way, run] of Object.entries(ways)) {
        // A completed call of `streaming: true` counts its tokens with tiktoken, whose encoding ChatOpenAI downloads
        // (not offline): there the first call is the one aborted, and the tool runs after a JSON answer only, so
        // that combination is not a case here (not a skip: it cannot run offline at all).
        if (streaming && moment === 'while the tool runs') continue;
        it(`aborted ${moment}, ChatOpenAI streaming: ${streaming}, agent.${way}`, async () => {
          const recorded = recordedPlugin('lg-abort');
          const controller = new AbortController();
          const reason = new DOMException('The client went away', 'AbortError');
          const abort = () => controller.abort(reason);
          const lookup = tool(
            async ({ key }) => {
              if (moment !== 'while the tool runs') return `${key}: 42`;
              abort();
              await new Promise((resolve) => setTimeout(resolve, 20));
              return `${key}: 42`;
            },
            { name: 'lookup', description: 'Look a key up', schema: z.object({ key: z.string() }) },
          );
          const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, streaming, configuration: { fetch: provider(moment, abort, streaming) } });
          const agent = createReactAgent({ llm: model, tools: [lookup] });
          await runAborted(run, agent, recorded, controller.signal);
          const errors = hooksOf(recorded, 'api_request_error').map((payload) => [payload.error?.type, payload.error?.message]);
          const answered = hooksOf(recorded, 'post_api_request').length;
          if (moment === 'while the tool runs') {
            // The model had answered: its call completed; the tool the abort stopped is the run's to tell.
            expect([answered, errors]).toEqual([1, []]);
          } else {
            expect([answered, errors]).toEqual([streaming ? 0 : 1, [['AbortError', 'The client went away']]]);
          }
          expect(JSON.stringify(recorded.log)).not.toContain('AbandonedRun');
          expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
          await sameOnNative(recorded);
        });
      }
    }
  }
});

describe('LangGraph: a run whose signal was aborted before it started', () => {
  for (const [way, run] of Object.entries(ways)) {
    // LangGraph tells the graph's start and throws the abort without telling its end: the turn still ends, interrupted.
    it(`agent.${way}: its turn ends interrupted, with no API call`, async () => {
      const recorded = recordedPlugin('lg-abort-before');
      const controller = new AbortController();
      controller.abort(new DOMException('The client went away', 'AbortError'));
      const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch: provider('before the response', () => controller.abort(), true) } });
      const agent = createReactAgent({ llm: model, tools: [] });
      await runAborted(run, agent, recorded, controller.signal);
      expect(hooksOf(recorded, 'pre_api_request')).toEqual([]);
      expect(JSON.stringify(recorded.log)).not.toContain('AbandonedRun');
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await sameOnNative(recorded);
    });
  }
});
