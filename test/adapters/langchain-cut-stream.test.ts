// A LangChain model stream cut short (the program's AbortSignal, a consumer that leaves an agent's stream) keeps the
// text it had handed on, as the AI SDK and Agents SDK adapters record it (docs/adapters/README.md, "API calls and
// retries"): the failed call's answer is what the user saw, with the abort. Real ChatOpenAI and ChatAnthropic clients
// over a fake fetch that sends the first events of their real SSE streams and then holds the rest until the request
// is aborted, as a provider still generating does.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { createAgent } from 'langchain';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicStream, chatCompletionStream, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, onlyTrajectory, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { agentSteps } from './langchain-checks.ts';
import { sameOnNative } from './same-on-native.ts';

const STORY = 'Once upon a time, a fox lived in a very quiet forest.';

/** A streaming API that sends `reply`'s events up to the first that carries text, and the rest never: the request's abort errors its body. */
function heldStream(reply: WireReply, carriesText: (data: any) => boolean): typeof fetch {
  const events = reply.sse!;
  const upTo = events.findIndex((event) => carriesText(event.data)) + 1;
  const fake = async (_input: unknown, init?: { signal?: AbortSignal | null }): Promise<Response> => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const event of events.slice(0, upTo)) {
          controller.enqueue(encoder.encode(`${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`));
        }
        const signal = init?.signal;
        const cut = () => controller.error(signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'));
        if (signal?.aborted) cut();
        else signal?.addEventListener('abort', cut, { once: true });
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-request-id': 'req_held' } });
  };
  return fake as typeof fetch;
}

const openaiHeld = () =>
  heldStream(chatCompletionStream({ id: 'chatcmpl-story', model: 'gpt-4.1-2025-04-14', content: STORY, usage: { prompt_tokens: 12, completion_tokens: 14 } }), (data) => typeof data?.choices?.[0]?.delta?.content === 'string' && data.choices[0].delta.content !== '');
const anthropicHeld = () =>
  heldStream(anthropicStream({ id: 'msg_story', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: STORY }], usage: { input_tokens: 12, output_tokens: 14 } }), (data) => data?.delta?.type === 'text_delta');

const models = {
  'ChatOpenAI (Chat Completions)': () => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch: openaiHeld() } }),
  ChatAnthropic: () => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch: anthropicHeld() } }),
};

/** The cut call's step: [its message, its invocation status, its error's type]. */
const cutStep = (doc: AtifDoc) => agentSteps(doc).map((step) => [step.message, step.extra.invocation.status, step.extra.llm_response?.error?.type]);
const hooksOf = (recorded: Recorded, hook: string) => recorded.log.filter((e) => e.hook === hook).map((e) => e.payload as Record<string, any>);

describe('LangChain: a model stream cut short keeps the text it had handed on', () => {
  for (const [label, model] of Object.entries(models)) {
    it(`${label}: createAgent streamed with streamMode "messages", stopped by its AbortSignal once text is shown`, async () => {
      const recorded = recordedPlugin('lc-cut-signal');
      const agent = createAgent({ model: model(), tools: [] });
      const controller = new AbortController();
      let seen = '';
      let caught: unknown;
      try {
        const stream = await agent.stream(
          { messages: [{ role: 'user', content: 'Tell me a story.' }] },
          { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: 'messages', signal: controller.signal },
        );
        for await (const [message] of stream) {
          seen += message.text;
          // The user presses stop once part of the answer is shown.
          if (seen !== '' && !controller.signal.aborted) controller.abort();
        }
      } catch (error) {
        caught = error;
      }
      expect((caught as Error).name).toBe('AbortError');
      expect(seen).not.toBe('');
      expect(STORY.startsWith(seen)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      const type = label === 'ChatAnthropic' ? 'ModelAbortError' : 'AbortError';
      expect(cutStep(doc)).toEqual([[seen, 'failed', type]]);
      expect(hooksOf(recorded, 'api_request_error')).toMatchObject([{ error: { type }, response: { assistant_message: { content: seen } } }]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await sameOnNative(recorded);
    });

    it(`${label}: createAgent streamed with streamMode "messages", left by its consumer once text is shown`, async () => {
      const recorded = recordedPlugin('lc-cut-break');
      const agent = createAgent({ model: model(), tools: [] });
      let seen = '';
      const stream = await agent.stream({ messages: [{ role: 'user', content: 'Tell me a story.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: 'messages' });
      for await (const [message] of stream) {
        seen += message.text;
        if (seen !== '') break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(seen).not.toBe('');
      expect(cutStep(doc).map(([message, status]) => [message, status])).toEqual([[seen, 'failed']]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
    });

    it(`${label}: the model streamed on its own (model.stream), stopped by its AbortSignal: the call and its turn end then`, async () => {
      const recorded = recordedPlugin('lc-cut-bare');
      const controller = new AbortController();
      let seen = '';
      let caught: unknown;
      try {
        for await (const chunk of await model().stream('Tell me a story.', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], signal: controller.signal })) {
          seen += chunk.text;
          if (seen !== '' && !controller.signal.aborted) controller.abort();
        }
      } catch (error) {
        caught = error;
      }
      expect((caught as Error).name).toBe('AbortError');
      expect(seen).not.toBe('');
      // LangChain tells callbacks nothing of the stream it left suspended: the turn ended with the abort, not at shutdown.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(counters.abandonedSpans ?? 0).toBe(0);
      const doc = onlyTrajectory(atif);
      expect(cutStep(doc).map(([, status, type]) => [status, type])).toEqual([['failed', 'AbortError']]);
      // LangChain tells callbacks of a chunk after handing it on, and Node and Deno never resume the stream after the
      // abort: the text kept is what callbacks heard, the shown text or (Node, Deno) all of it but the last chunk.
      const kept = hooksOf(recorded, 'api_request_error')[0]!.response?.assistant_message?.content ?? '';
      expect(seen.startsWith(kept)).toBe(true);
      await sameOnNative(recorded);
    });

    it(`${label}: a chain streamed (prompt, model, StringOutputParser), stopped by its AbortSignal: the call and its turn end then`, async () => {
      const recorded = recordedPlugin('lc-cut-chain');
      const chain = ChatPromptTemplate.fromMessages([['human', '{question}']]).pipe(model()).pipe(new StringOutputParser());
      const controller = new AbortController();
      let seen = '';
      let caught: unknown;
      try {
        for await (const text of await chain.stream({ question: 'Tell me a story.' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], signal: controller.signal })) {
          seen += text;
          if (seen !== '' && !controller.signal.aborted) controller.abort();
        }
      } catch (error) {
        caught = error;
      }
      expect((caught as Error).name).toBe('AbortError');
      expect(seen).not.toBe('');
      // LangChain leaves the chain's generator suspended as it does the model's: the turn ended with the abort, not at shutdown.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(counters.abandonedSpans ?? 0).toBe(0);
      const doc = onlyTrajectory(atif);
      expect(cutStep(doc).map(([, status, type]) => [status, type])).toEqual([['failed', 'AbortError']]);
      const kept = hooksOf(recorded, 'api_request_error')[0]!.response?.assistant_message?.content ?? '';
      expect(seen.startsWith(kept)).toBe(true);
      await sameOnNative(recorded);
    });
  }
});
