// A LangChain model stream cut short (the program's AbortSignal, a consumer that leaves an agent's stream) keeps the
// text it had handed on, as the AI SDK and Agents SDK adapters record it (docs/adapters/README.md, "API calls and
// retries"): the failed call's answer is what the user saw, with the abort. Real ChatOpenAI and ChatAnthropic clients
// over a fake fetch that sends the first events of their real SSE streams and then holds the rest until the request
// is aborted, as a provider still generating does; and ChatOpenAI over a loopback server that has sent its whole answer.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { createAgent } from 'langchain';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicStream, chatCompletion, chatCompletionEither, chatCompletionStream, wireResponse, type WireReply } from '../support/provider-wire.ts';
import { providersOnLoopback } from '../support/provider-loopback.ts';
import { expectNothingLost, expectTurnEndInAtif, onlyTrajectory, recordedPlugin, type AtifDoc, type AtofEvent, type Recorded } from './support.ts';
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

// The same consumer over a provider that has sent its whole answer at once (a short or fast answer, all of it in the
// socket's buffer when the program stops reading): the model goes on with the chunks it has in hand, and a chunk that
// reaches LangGraph's stream after the consumer left makes LangGraph return the graph's generator at its `yield`, so it
// tells callbacks no end and no error of the graph's run, only its node's abort and the model's. Which chunk that is
// depends on the versions and the load; two tracers make it the second: one LangChain waits for (the model waits for
// it) and one in LangChain's background queue (LangGraph's "messages" handler waits behind it), each still busy with
// that chunk when the consumer leaves.
class BusyWithSecondChunk extends BaseCallbackHandler {
  name: string;
  #signal: AbortSignal | undefined;
  #chunks = 0;
  constructor(background: boolean) {
    super();
    this.name = background ? 'tracer_in_background' : 'tracer_waited_for';
    this.awaitHandlers = !background;
  }
  override handleChatModelStart(_llm: unknown, _messages: unknown, _runId: string, _parent?: string, extra?: Record<string, any>): void {
    this.#signal = extra?.options?.signal;
  }
  override async handleLLMNewToken(token: string): Promise<void> {
    if (token === '' || ++this.#chunks !== 2) return;
    const signal = this.#signal;
    if (signal !== undefined && !signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  }
}

describe('LangChain: an agent\'s "messages" stream left once text is shown, its answer already received', () => {
  /** `reply` with its text sent in pieces of `size` characters, as a provider streams its tokens. */
  const inPieces = (reply: WireReply, size: number): WireReply => ({
    sse: reply.sse!.flatMap((event: { data: any }) => {
      const text = event.data?.choices?.[0]?.delta?.content;
      if (typeof text !== 'string' || text === '') return [event];
      return Array.from({ length: Math.ceil(text.length / size) }, (_, i) => ({ data: { ...event.data, choices: [{ ...event.data.choices[0], delta: { content: text.slice(i * size, (i + 1) * size) } }] } }));
    }),
  });
  // The real client over a loopback server that writes each answer whole.
  const wire = providersOnLoopback();
  const agentOf = (checkpointer?: MemorySaver) => {
    wire.serve([
      inPieces(chatCompletionStream({ id: 'chatcmpl-story', model: 'gpt-4.1-2025-04-14', content: STORY, usage: { prompt_tokens: 12, completion_tokens: 14 } }), 5),
      chatCompletionEither({ id: 'chatcmpl-next', model: 'gpt-4.1-2025-04-14', content: 'The fox was happy.', usage: { prompt_tokens: 40, completion_tokens: 5 } }),
    ]);
    return createAgent({ model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { baseURL: `${wire.url}/v1` } }), tools: [], checkpointer });
  };
  /** Streams the agent's answer and stops reading at the first text: what the program showed. */
  const readFirstText = async (agent: ReturnType<typeof agentOf>, options: Record<string, unknown>): Promise<string> => {
    let seen = '';
    for await (const [message] of await agent.stream({ messages: [{ role: 'user', content: 'Tell me a story.' }] }, { ...options, streamMode: 'messages' })) {
      seen += message.text;
      if (seen !== '') break;
    }
    expect(seen).not.toBe('');
    expect(STORY.startsWith(seen)).toBe(true);
    return seen;
  };
  /** The turns' ends written to ATOF (`on_session_end`'s mark). */
  const turnEnds = (atof: AtofEvent[]) => atof.filter((event) => event.name === 'hermes.session.end');

  it('ChatOpenAI (Chat Completions), a run on its own: its turn ends interrupted when the consumer leaves', async () => {
    const recorded = recordedPlugin('lc-cut-received');
    const seen = await readFirstText(agentOf(), { callbacks: [new NemoRelayCallbackHandler(recorded.hooks), new BusyWithSecondChunk(false), new BusyWithSecondChunk(true)] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Ended then, not by the plugin's shutdown.
    expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(turnEnds(atof)).toHaveLength(1);
    const doc = onlyTrajectory(atif);
    await expectTurnEndInAtif(recorded, doc, { status: 'interrupted' });
    // The call failed with the text LangChain had told callbacks: the shown text, or more (read ahead, never shown).
    const [[kept, status]] = cutStep(doc);
    expect([kept.startsWith(seen), STORY.startsWith(kept), status]).toEqual([true, true, 'failed']);
    await sameOnNative(recorded);
  });

  it('ChatOpenAI (Chat Completions), on a checkpointer thread: the left turn ends interrupted, before the next invoke\'s', async () => {
    const recorded = recordedPlugin('lc-cut-received-thread');
    const agent = agentOf(new MemorySaver());
    const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks), new BusyWithSecondChunk(false), new BusyWithSecondChunk(true)], configurable: { thread_id: 'thread-left' } };
    await readFirstText(agent, config);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hooksOf(recorded, 'on_session_end')).toHaveLength(1);
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'And then?' }] }, config);
    expect(result.messages.at(-1)?.text).toBe('The fox was happy.');
    expect(hooksOf(recorded, 'on_session_end').map((end) => [end.session_id, end.interrupted, end.completed])).toEqual([
      ['thread-left', true, false],
      ['thread-left', false, true],
    ]);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(turnEnds(atof)).toHaveLength(2);
    const doc = onlyTrajectory(atif);
    // The left turn's last step says it was interrupted (a completed turn's end is not written); the next one is the user's.
    const steps = doc.steps as AtifDoc[];
    const ended = steps.findIndex((step) => step.extra?.turn_ends !== undefined);
    expect(steps[ended]!.extra.turn_ends.map((end: AtifDoc) => end.status)).toEqual(['interrupted']);
    expect([steps[ended + 1]?.source, steps[ended + 1]?.message]).toEqual(['user', 'And then?']);
    expect(doc.notes).toBe(`The turn that ends at step ${steps[ended]!.step_id} was interrupted.`);
    await sameOnNative(recorded);
  });

  // What a node stopped so tells callbacks (its abort and its model's, and no more of the graph) is what a node that its
  // `timeout` policy cut while its model waited tells: that graph goes on, its RetryPolicy running the node again.
  it('a node its timeout policy cut while its model waited, run again by its RetryPolicy: one turn, completed', async () => {
    const recorded = recordedPlugin('lc-cut-timeout');
    let requests = 0;
    const provider = (async (_input: unknown, init?: { signal?: AbortSignal }) => {
      requests += 1;
      if (requests === 1) return new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true }));
      return wireResponse(chatCompletion({ id: 'chatcmpl-retried', model: 'gpt-4.1-2025-04-14', content: 'Hi there.', usage: { prompt_tokens: 9, completion_tokens: 3 } }), 'req_retried', false);
    }) as typeof globalThis.fetch;
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch: provider } });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }), { timeout: 50, retryPolicy: { maxAttempts: 2, initialInterval: 1, jitter: false, logWarning: false } })
      .addEdge(START, 'agent')
      .addEdge('agent', END)
      .compile();
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(result.messages.at(-1)?.text).toBe('Hi there.');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: false, completed: true }]);
    expect(hooksOf(recorded, 'api_request_error').map((payload) => payload.error?.type)).toEqual(['AbortError']);
    expect(hooksOf(recorded, 'post_api_request')).toHaveLength(1);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
  });
});
