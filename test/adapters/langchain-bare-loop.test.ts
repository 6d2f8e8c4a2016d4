// The tool-calling loop of LangChain's model docs, bare (no runnable around it): `model.bindTools([getWeather])`,
// `modelWithTools.invoke(messages)`, `getWeather.invoke(toolCall)` for each of the answer's `tool_calls`, then the model
// again with the conversation so far, the handler in each call's `callbacks` (docs/adapters/langchain.md, "A tool
// loop your program runs"). ChatOpenAI and ChatAnthropic as their packages build them, pointed at a loopback server
// speaking the providers' JSON and SSE by OPENAI_BASE_URL and ANTHROPIC_BASE_URL. What the program saw (the tool
// messages it pushed, each AIMessage's usage_metadata) against what the hooks, ATIF and ATOF say, on memory and native.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { ToolMessage, type AIMessage, type AIMessageChunk, type BaseMessage, type BaseMessageLike } from '@langchain/core/messages';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { providersOnLoopback } from '../support/provider-loopback.ts';
import { anthropicMessage, anthropicStream, chatCompletion, chatCompletionStream, type WireReply } from '../support/provider-wire.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const CLAUDE = 'claude-sonnet-4-5-20250929';
/** How long the weather tool takes: the tool span's duration is at least this. */
const TOOL_MS = 30;

const providers = providersOnLoopback();
const serve = providers.serve;

const getWeather = tool(
  async ({ city }) => {
    await new Promise((resolve) => setTimeout(resolve, TOOL_MS));
    return `It is sunny and 21C in ${city}.`;
  },
  { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
);
const brokenWeather = tool(
  async (): Promise<string> => {
    throw new Error('weather service down');
  },
  { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
);

type Provider = 'openai' | 'anthropic';
const modelOf = (provider: Provider) => (provider === 'openai' ? new ChatOpenAI({ model: 'gpt-4.1' }) : new ChatAnthropic({ model: 'claude-sonnet-4-5' }));

/** The provider's two answers to the loop: a tool call (its id `id`, for `city`), then `text`. */
function loopReplies(provider: Provider, streamed: boolean, id: string, city: string, text: string, usage: [[number, number], [number, number]]): WireReply[] {
  if (provider === 'openai') {
    const reply = streamed ? chatCompletionStream : chatCompletion;
    return [
      reply({ id: `chatcmpl-${id}-1`, model: GPT, content: null, toolCalls: [{ id, name: 'get_weather', args: { city } }], usage: { prompt_tokens: usage[0][0], completion_tokens: usage[0][1] } }),
      reply({ id: `chatcmpl-${id}-2`, model: GPT, content: text, usage: { prompt_tokens: usage[1][0], completion_tokens: usage[1][1] } }),
    ];
  }
  const reply = streamed ? anthropicStream : anthropicMessage;
  return [
    reply({ id: `msg_${id}_1`, model: CLAUDE, content: [{ type: 'tool_use', id, name: 'get_weather', input: { city } }], usage: { input_tokens: usage[0][0], output_tokens: usage[0][1] } }),
    reply({ id: `msg_${id}_2`, model: CLAUDE, content: [{ type: 'text', text }], usage: { input_tokens: usage[1][0], output_tokens: usage[1][1] } }),
  ];
}

type WithTools = ReturnType<ChatOpenAI['bindTools']> | ReturnType<ChatAnthropic['bindTools']>;

/** One model call as the program makes it: `invoke`, or `stream` with the chunks concatenated into the answer. */
async function ask(modelWithTools: WithTools, messages: BaseMessageLike[], handler: NemoRelayCallbackHandler, streamed: boolean): Promise<AIMessage> {
  if (!streamed) return (await modelWithTools.invoke(messages, { callbacks: [handler] })) as AIMessage;
  let full: AIMessageChunk | undefined;
  for await (const chunk of await modelWithTools.stream(messages, { callbacks: [handler] })) full = full === undefined ? (chunk as AIMessageChunk) : full.concat(chunk as AIMessageChunk);
  return full as unknown as AIMessage;
}

/**
 * The docs' loop, as written: the answer's tool calls run with `tool.invoke(toolCall)`, their ToolMessages pushed, the
 * model asked again. A tool that throws is answered as the program chooses to, with an error ToolMessage.
 */
async function toolLoop(modelWithTools: WithTools, question: string, handler: NemoRelayCallbackHandler, streamed: boolean, weather = getWeather): Promise<{ messages: BaseMessage[]; answers: AIMessage[] }> {
  const messages: BaseMessageLike[] = [{ role: 'user', content: question }];
  const ai = await ask(modelWithTools, messages, handler, streamed);
  messages.push(ai);
  for (const toolCall of ai.tool_calls ?? []) {
    try {
      messages.push(await weather.invoke(toolCall, { callbacks: [handler] }));
    } catch (error) {
      messages.push(new ToolMessage({ tool_call_id: toolCall.id!, content: `Error: ${(error as Error).message}`, status: 'error' }));
    }
  }
  const final = await ask(modelWithTools, messages, handler, streamed);
  messages.push(final);
  return { messages: messages.filter((m): m is BaseMessage => typeof m === 'object' && m !== null && 'getType' in m), answers: [ai, final] };
}

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent' && step.llm_call_count !== 0);
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const recordedCounts = (doc: AtifDoc): Array<[number, number]> => agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
/** Each tool call's outcome on the step that asked for it: [the step's own call ids, call id, content]. */
const observedOnStep = (doc: AtifDoc): Array<[string[], string, string]> =>
  (doc.steps as Step[]).flatMap((step) =>
    (step.observation?.results ?? []).filter((r: AtifDoc) => r.source_call_id !== undefined).map((r: AtifDoc) => [(step.tool_calls ?? []).map((c: AtifDoc) => c.tool_call_id), r.source_call_id, String(r.content)] as [string[], string, string]),
  );
/** The tool messages the model read: [tool_call_id, content]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string]> => messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content)]);
/** The AI messages' usage_metadata as LangChain reported it: [input, output]. */
const reported = (answers: AIMessage[]): Array<[number, number]> => answers.map((m) => [m.usage_metadata!.input_tokens, m.usage_metadata!.output_tokens]);
const hooks = (recorded: Recorded, name: string) => recorded.log.filter((e) => e.hook === name).map((e) => e.payload);

for (const provider of ['openai', 'anthropic'] as const) {
  for (const streamed of [false, true]) {
    const how = streamed ? '.stream' : '.invoke';
    describe(`the docs' bare tool loop, ${provider === 'openai' ? 'ChatOpenAI' : 'ChatAnthropic'}, ${how}`, () => {
      const id = provider === 'openai' ? 'call_boston' : 'toolu_boston';

      it('is one turn: one user message, each model call its step, the tool a span of the turn with its result and duration', async () => {
        const { requests } = serve(loopReplies(provider, streamed, id, 'Boston', 'It is sunny and 21C in Boston.', [[260, 30], [330, 12]]));
        const recorded = recordedPlugin(`lc-bare-${provider}-${streamed ? 'stream' : 'invoke'}`);
        const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'weather-chat' });
        const { messages, answers } = await toolLoop(modelOf(provider).bindTools([getWeather]), 'What is the weather in Boston?', handler, streamed);
        handler.close();
        expect(requests).toHaveLength(2);
        expect(requests.every((r) => (r.body.stream === true) === streamed)).toBe(true);
        const { doc, atof } = await finishedRun(recorded);
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.session_id).toBe('weather-chat');
        // One turn: the second call's request repeats the question, which is no new user message.
        expect(hooks(recorded, 'pre_llm_call').map((p) => p.user_message)).toEqual(['What is the weather in Boston?']);
        expect(hooks(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([answers[1]!.text]);
        expect(answers[1]!.text).toBe('It is sunny and 21C in Boston.');
        expect(hooks(recorded, 'on_session_end').map((p) => [p.completed, p.turn_id])).toEqual([[true, hooks(recorded, 'pre_llm_call')[0]!.turn_id]]);
        expect(new Set([...hooks(recorded, 'pre_api_request'), ...hooks(recorded, 'post_tool_call')].map((p) => p.turn_id)).size).toBe(1);
        // The tool the program ran: its span under the model's call id, its arguments, what it returned, how long it took.
        const [start] = hooks(recorded, 'pre_tool_call');
        const [end] = hooks(recorded, 'post_tool_call');
        expect(start).toMatchObject({ tool_call_id: id, tool_name: 'get_weather', args: { city: 'Boston' } });
        expect(end).toMatchObject({ tool_call_id: id, status: 'ok', result: 'It is sunny and 21C in Boston.' });
        expect(end!.duration_ms).toBeGreaterThanOrEqual(TOOL_MS - 5);
        // ATIF: one user step, then the agent's two steps; the result on the step that asked for it, as the model read it.
        expect(userSteps(doc)).toEqual(['What is the weather in Boston?']);
        expect(agentSteps(doc)).toHaveLength(2);
        expect(observedOnStep(doc)).toEqual(toolMessages(messages).map(([callId, content]) => [[callId], callId, content]));
        expect(toolMessages(messages)).toEqual([[id, 'It is sunny and 21C in Boston.']]);
        // Tokens: each step LangChain's usage_metadata of its answer, the turn their sum.
        const counts = reported(answers);
        expect(recordedCounts(doc)).toEqual(counts);
        expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: counts[0]![0] + counts[1]![0], total_completion_tokens: counts[0]![1] + counts[1]![1] });
        expect(atof.filter((e) => e.kind === 'scope' && e.category === 'tool' && e.scope_category === 'end').map((e) => e.data?.tool_call_id ?? e.name)).toHaveLength(1);
        await sameOnNative(recorded);
      });

      it('a tool that throws is the call failed, with its error, on the step that asked; the loop goes on in the same turn', async () => {
        serve(loopReplies(provider, streamed, id, 'Boston', 'The weather service is down.', [[260, 30], [340, 9]]));
        const recorded = recordedPlugin(`lc-bare-throws-${provider}-${streamed ? 'stream' : 'invoke'}`);
        const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'weather-chat' });
        const { messages, answers } = await toolLoop(modelOf(provider).bindTools([brokenWeather]), 'What is the weather in Boston?', handler, streamed, brokenWeather);
        handler.close();
        const { doc } = await finishedRun(recorded);
        expect(hooks(recorded, 'pre_llm_call')).toHaveLength(1);
        expect(hooks(recorded, 'post_tool_call')).toEqual([expect.objectContaining({ tool_call_id: id, status: 'error', error_type: 'Error', error_message: 'weather service down' })]);
        expect(hooks(recorded, 'on_session_end').map((p) => p.completed)).toEqual([true]);
        expect(userSteps(doc)).toEqual(['What is the weather in Boston?']);
        expect(observedOnStep(doc)).toEqual([[[id], id, 'Error: weather service down']]);
        expect(toolMessages(messages)).toEqual([[id, 'Error: weather service down']]);
        expect(recordedCounts(doc)).toEqual(reported(answers));
        await sameOnNative(recorded);
      });
    });
  }
}

describe("the docs' bare tool loop, twice", () => {
  const replies = (provider: Provider) => [
    ...loopReplies(provider, false, provider === 'openai' ? 'call_boston' : 'toolu_boston', 'Boston', 'It is sunny and 21C in Boston.', [[260, 30], [330, 12]]),
    ...loopReplies(provider, false, provider === 'openai' ? 'call_paris' : 'toolu_paris', 'Paris', 'It is sunny and 21C in Paris.', [[250, 28], [320, 11]]),
  ];

  it('with a sessionId: two turns of one trajectory, each its user step, its two model calls and its tool', async () => {
    serve(replies('anthropic'));
    const recorded = recordedPlugin('lc-bare-twice');
    const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'weather-chat' });
    const modelWithTools = modelOf('anthropic').bindTools([getWeather]);
    const first = await toolLoop(modelWithTools, 'What is the weather in Boston?', handler, false);
    const second = await toolLoop(modelWithTools, 'And in Paris?', handler, false);
    handler.close();
    const { doc } = await finishedRun(recorded);
    expect(hooks(recorded, 'pre_llm_call').map((p) => p.user_message)).toEqual(['What is the weather in Boston?', 'And in Paris?']);
    expect(hooks(recorded, 'on_session_end').map((p) => p.completed)).toEqual([true, true]);
    expect(userSteps(doc)).toEqual(['What is the weather in Boston?', 'And in Paris?']);
    expect(observedOnStep(doc)).toEqual([...toolMessages(first.messages), ...toolMessages(second.messages)].map(([callId, content]) => [[callId], callId, content]));
    expect(recordedCounts(doc)).toEqual(reported([...first.answers, ...second.answers]));
    // Each tool span in the turn of the loop that ran it.
    const turnOf = (callId: string) => hooks(recorded, 'post_tool_call').find((p) => p.tool_call_id === callId)!.turn_id;
    expect([turnOf('toolu_boston'), turnOf('toolu_paris')]).toEqual(hooks(recorded, 'pre_llm_call').map((p) => p.turn_id));
    await sameOnNative(recorded);
  });

  it('without a sessionId: each loop is a session of its own, whole (its tool and both calls)', async () => {
    serve(replies('openai'));
    const recorded = recordedPlugin('lc-bare-twice-unnamed');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const modelWithTools = modelOf('openai').bindTools([getWeather]);
    const first = await toolLoop(modelWithTools, 'What is the weather in Boston?', handler, false);
    const second = await toolLoop(modelWithTools, 'And in Paris?', handler, false);
    const { atif, counters } = await recorded.finish();
    expect(counters.errors).toBe(0);
    expect(atif).toHaveLength(2);
    for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
    expect(atif.map((doc) => [userSteps(doc), observedOnStep(doc).map(([, callId, content]) => [callId, content]), recordedCounts(doc)])).toEqual([
      [['What is the weather in Boston?'], toolMessages(first.messages), reported(first.answers)],
      [['And in Paris?'], toolMessages(second.messages), reported(second.answers)],
    ]);
    await sameOnNative(recorded);
  });
});

describe('a bare answer with tool calls the program never answers', () => {
  it("ends its turn, completed with that answer, when the session's next user message starts a turn", async () => {
    serve([
      ...loopReplies('anthropic', false, 'toolu_boston', 'Boston', 'unused', [[260, 30], [0, 0]]).slice(0, 1),
      anthropicMessage({ id: 'msg_hi', model: CLAUDE, content: [{ type: 'text', text: 'Hello!' }], usage: { input_tokens: 12, output_tokens: 3 } }),
    ]);
    const recorded = recordedPlugin('lc-bare-unanswered');
    const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'weather-chat' });
    const modelWithTools = modelOf('anthropic').bindTools([getWeather]);
    // Tool calling for its arguments only: the program reads the call and asks something else.
    const ai = (await modelWithTools.invoke('What is the weather in Boston?', { callbacks: [handler] })) as AIMessage;
    expect(ai.tool_calls?.map((call) => call.id)).toEqual(['toolu_boston']);
    const hello = (await modelWithTools.invoke('Say hello.', { callbacks: [handler] })) as AIMessage;
    handler.close();
    const { doc } = await finishedRun(recorded);
    expect(hooks(recorded, 'pre_llm_call').map((p) => p.user_message)).toEqual(['What is the weather in Boston?', 'Say hello.']);
    expect(hooks(recorded, 'on_session_end').map((p) => p.completed)).toEqual([true, true]);
    expect(hooks(recorded, 'pre_tool_call')).toEqual([]);
    expect(userSteps(doc)).toEqual(['What is the weather in Boston?', 'Say hello.']);
    expect(recordedCounts(doc)).toEqual(reported([ai, hello]));
    await sameOnNative(recorded);
  });

  it('ends its turn, completed, on handler.close(), the tool the program ran recorded', async () => {
    serve(loopReplies('openai', false, 'call_boston', 'Boston', 'unused', [[260, 30], [0, 0]]).slice(0, 1));
    const recorded = recordedPlugin('lc-bare-closed');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const ai = (await modelOf('openai').bindTools([getWeather]).invoke('What is the weather in Boston?', { callbacks: [handler] })) as AIMessage;
    const result = await getWeather.invoke(ai.tool_calls![0]!, { callbacks: [handler] });
    expect(hooks(recorded, 'on_session_end')).toEqual([]);
    handler.close();
    const { doc } = await finishedRun(recorded);
    expect(hooks(recorded, 'on_session_end').map((p) => p.completed)).toEqual([true]);
    expect(observedOnStep(doc)).toEqual([[['call_boston'], 'call_boston', String(result.content)]]);
    await sameOnNative(recorded);
  });

  it('a tool run outside any run that names no open call is not recorded, as before', async () => {
    const recorded = recordedPlugin('lc-bare-stray-tool');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    await getWeather.invoke({ id: 'call_nobody_made', name: 'get_weather', args: { city: 'Oslo' }, type: 'tool_call' }, { callbacks: [handler] });
    handler.close();
    expect(recorded.log).toEqual([]);
  });
});
