// createAgent programs with a user's own middleware (createMiddleware, as LangChain v1's middleware docs write it)
// and the prebuilt middleware no other test ran: dynamicSystemPromptMiddleware, openAIModerationMiddleware,
// toolEmulatorMiddleware, providerToolSearchMiddleware, piiRedactionMiddleware. The real ChatOpenAI speaks OpenAI's
// wire to a fake fetch (test/support/provider-wire.ts); each trajectory is checked against what the program got: the
// requests the fetch answered, the usage each reply carried, the tool messages the model read, the answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatBedrockConverse } from '@langchain/aws';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { bedrockPromptCachingMiddleware, createAgent, createMiddleware, dynamicSystemPromptMiddleware, openAIModerationMiddleware, piiRedactionMiddleware, providerToolSearchMiddleware, toolEmulatorMiddleware } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { chatCompletion, moderationReply, openAiResponse, scriptedFetch, wireResponse, type SeenRequest, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { checkBedrockRun, INFERENCE_PROFILE, PROMPT } from './bedrock-checks.ts';
import { loopbackBedrock, REGION, weatherTurns, type LoopbackBedrock } from './bedrock-wire.ts';

const GPT = 'gpt-4.1-2025-04-14';
const MINI = 'gpt-4.1-mini-2025-04-14';

const openai = (fetch: typeof globalThis.fetch, model = 'gpt-4.1') => new ChatOpenAI({ model, apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
/** The weather tool of LangChain's docs; `ran` counts its runs, so a test tells a tool that ran from one that did not. */
const weatherTool = () => {
  const ran: string[] = [];
  const getWeather = tool(
    async ({ city }) => {
      ran.push(city);
      return `It is sunny and 21C in ${city}.`;
    },
    { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
  );
  return { getWeather, ran };
};
const weatherCall = (id: string, city: string, usage: { prompt_tokens: number; completion_tokens: number }, completionId = `chatcmpl-${id}`): WireReply =>
  chatCompletion({ id: completionId, model: GPT, content: null, toolCalls: [{ id, name: 'get_weather', args: { city } }], usage });
const answer = (id: string, content: string, usage: { prompt_tokens: number; completion_tokens: number }, model = GPT): WireReply => chatCompletion({ id, model, content, usage });

const handler = (recorded: Recorded) => ({ callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
const agentSteps = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => String(step.message));
/** Each agent step that is a model call: [model, message, prompt tokens, completion tokens]. */
const modelSteps = (doc: AtifDoc): Array<[string, string, number, number]> =>
  agentSteps(doc)
    .filter((step) => step.metrics !== undefined)
    .map((step) => [step.model_name, String(step.message), step.metrics.prompt_tokens, step.metrics.completion_tokens]);
/** What the fetch answered: each chat completion's [model, content, prompt tokens, completion tokens]. */
const billed = (replies: readonly WireReply[], served: number): Array<[string, string, number, number]> =>
  replies.slice(0, served).flatMap((reply) => {
    const json = reply.json as AtifDoc;
    if (json?.object !== 'chat.completion') return [];
    return [[json.model, json.choices[0].message.content ?? '', json.usage.prompt_tokens, json.usage.completion_tokens] as [string, string, number, number]];
  });
const callsOf = (doc: AtifDoc): Array<[string, string, unknown]> => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments]));
/** Each tool call's outcome in the trajectory: [call id, content, status]. */
const observed = (doc: AtifDoc): Array<[string, string, string]> =>
  (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).filter((r: AtifDoc) => r.source_call_id !== undefined).map((r: AtifDoc) => [r.source_call_id, String(r.content), r.extra?.metadata?.status]));
/** The program's tool messages, what the model read: [tool_call_id, content, status]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string, string]> =>
  messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content), (m as ToolMessage).status === 'error' ? 'error' : 'ok']);
/** The messages each recorded model request holds (`pre_api_request`), as role and text. */
const recordedRequests = (recorded: Recorded): Array<Array<[string, string]>> =>
  recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => ((e.payload.request as AtifDoc).body.messages as AtifDoc[]).map((m) => [m.role, String(m.content ?? '')]));
/** What the fetch was sent: each chat request's messages as role and text. */
const sentRequests = (requests: SeenRequest[]): Array<Array<[string, string]>> =>
  requests.filter((r) => r.url.endsWith('/chat/completions')).map((r) => (r.body.messages as AtifDoc[]).map((m) => [m.role, String(m.content ?? '')]));
const finalAnswer = (recorded: Recorded, session?: string): unknown =>
  recorded.log.filter((e) => e.hook === 'post_llm_call' && (session === undefined || e.payload.session_id === session)).at(-1)?.payload.assistant_response;
const sessionEnd = (recorded: Recorded): AtifDoc => recorded.log.find((e) => e.hook === 'on_session_end')!.payload;

describe('createMiddleware: a user’s own wrapModelCall', () => {
  it('calls the handler twice (a self-check that asks again): both billed calls are steps with their tokens; the answer is the second', async () => {
    const replies = [answer('chatcmpl-draft', 'TODO: check the forecast.', { prompt_tokens: 40, completion_tokens: 6 }), answer('chatcmpl-fixed', 'It is sunny in Paris.', { prompt_tokens: 58, completion_tokens: 7 })];
    const { fetch, requests } = scriptedFetch(replies);
    const selfCheck = createMiddleware({
      name: 'SelfCheck',
      wrapModelCall: async (request, handler) => {
        const first = await handler(request);
        if (!String(first.content).includes('TODO')) return first;
        return handler({ ...request, messages: [...request.messages, first, new HumanMessage('Answer without a TODO.')] });
      },
    });
    const recorded = recordedPlugin('lc-mw-self-check');
    const { getWeather } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [selfCheck] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Is it sunny in Paris?' }] }, handler(recorded));
    expect(requests).toHaveLength(2);
    expect(result.messages.at(-1)!.content).toBe('It is sunny in Paris.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The middleware's request to try again reached the model as a user message: a user step, as the model read it.
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?', 'Answer without a TODO.']);
    // Both calls were billed; the state keeps only the second's message, the trajectory both.
    expect(modelSteps(doc)).toEqual(billed(replies, 2));
    expect(recordedRequests(recorded)).toEqual(sentRequests(requests));
    // Two calls that each succeeded are no retry of one another: two API requests.
    const ids = recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => [e.payload.api_request_id, e.payload.retry_count]);
    expect(new Set(ids.map(([id]) => id)).size).toBe(2);
    expect(finalAnswer(recorded)).toBe('It is sunny in Paris.');
    await sameOnNative(recorded);
  });

  it('swaps the model per request (request.model = another ChatOpenAI): each step has the model that answered it and its tokens', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }), answer('chatcmpl-mini', 'It is sunny and 21C in Paris.', { prompt_tokens: 110, completion_tokens: 9 }, MINI)];
    const { fetch, requests } = scriptedFetch(replies);
    const mini = openai(fetch, 'gpt-4.1-mini');
    // The docs' dynamic model selection: a cheaper model once the conversation has a tool result.
    const cheapAfterTools = createMiddleware({
      name: 'DynamicModel',
      wrapModelCall: (request, handler) => handler(request.messages.some((m) => ToolMessage.isInstance(m)) ? { ...request, model: mini } : request),
    });
    const recorded = recordedPlugin('lc-mw-swap-model');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [cheapAfterTools] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(requests.map((r) => r.body.model)).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    expect(ran).toEqual(['Paris']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 2));
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => e.payload.model)).toEqual(['gpt-4.1', 'gpt-4.1-mini']);
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(finalAnswer(recorded)).toBe('It is sunny and 21C in Paris.');
    await sameOnNative(recorded);
  });

  it('answers from a cache without calling the model: no model call is invented; the turn’s answer is the cached one', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 })];
    const { fetch, requests } = scriptedFetch(replies);
    const cache = createMiddleware({
      name: 'AnswerCache',
      wrapModelCall: (request, handler) => (request.messages.some((m) => ToolMessage.isInstance(m)) ? new AIMessage('Cached: it is sunny in Paris.') : handler(request)),
    });
    const recorded = recordedPlugin('lc-mw-cache');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [cache] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(requests).toHaveLength(1);
    expect(ran).toEqual(['Paris']);
    expect(result.messages.at(-1)!.content).toBe('Cached: it is sunny in Paris.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // One call billed, one step with its tokens; the cached answer is no model call.
    expect(modelSteps(doc)).toEqual(billed(replies, 1));
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toHaveLength(1);
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    expect(finalAnswer(recorded)).toBe('Cached: it is sunny in Paris.');
    expect(sessionEnd(recorded)).toMatchObject({ completed: true, failed: false });
    await sameOnNative(recorded);
  });
});

describe('createMiddleware: beforeModel and afterModel jumping to the end', () => {
  it('beforeModel returns jumpTo "end" with its own message: no model call; the run completes with that message', async () => {
    const { fetch, requests } = scriptedFetch([]);
    const closed = createMiddleware({
      name: 'OfficeHours',
      beforeModel: { canJumpTo: ['end'], hook: () => ({ messages: [new AIMessage('The assistant is closed until 9am.')], jumpTo: 'end' as const }) },
    });
    const recorded = recordedPlugin('lc-mw-before-end');
    const { getWeather } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [closed] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(requests).toHaveLength(0);
    expect(result.messages.at(-1)!.content).toBe('The assistant is closed until 9am.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // No model call, no API request: no ATIF trajectory (it needs a step); the turn's answer is the middleware's.
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toEqual([]);
    expect(atif).toEqual([]);
    expect(finalAnswer(recorded)).toBe('The assistant is closed until 9am.');
    expect(sessionEnd(recorded)).toMatchObject({ completed: true, failed: false });
    await sameOnNative(recorded);
  });

  it('afterModel returns jumpTo "end" on a tool call: the tool never runs; the call is recorded with no result', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 })];
    const { fetch } = scriptedFetch(replies);
    const stopOnTools = createMiddleware({
      name: 'NoTools',
      afterModel: {
        canJumpTo: ['end'],
        hook: (state) => {
          const last = state.messages.at(-1);
          return AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? { messages: [new AIMessage('Tools are disabled today.')], jumpTo: 'end' as const } : undefined;
        },
      },
    });
    const recorded = recordedPlugin('lc-mw-after-end');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [stopOnTools] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(ran).toEqual([]);
    expect(toolMessages(result.messages)).toEqual([]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 1));
    expect(callsOf(doc)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    // No tool ran, so no observation, no tool hook.
    expect(observed(doc)).toEqual([]);
    expect(recorded.log.filter((e) => e.hook === 'pre_tool_call' || e.hook === 'post_tool_call')).toEqual([]);
    expect(finalAnswer(recorded)).toBe('Tools are disabled today.');
    expect(sessionEnd(recorded)).toMatchObject({ completed: true, failed: false });
    await sameOnNative(recorded);
  });
});

describe('createMiddleware: a user’s own wrapToolCall', () => {
  it('returns a ToolMessage without running the tool: the call’s result is what the model read; no tool ran', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }), answer('chatcmpl-2', 'It is sunny in Paris.', { prompt_tokens: 100, completion_tokens: 7 })];
    const { fetch } = scriptedFetch(replies);
    const cached = createMiddleware({
      name: 'ToolCache',
      wrapToolCall: (request) => new ToolMessage({ content: 'cached: sunny, 20C', tool_call_id: request.toolCall.id!, name: request.toolCall.name }),
    });
    const recorded = recordedPlugin('lc-mw-tool-cache');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [cached] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(ran).toEqual([]);
    expect(toolMessages(result.messages)).toEqual([['call_paris', 'cached: sunny, 20C', 'ok']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 2));
    expect(callsOf(doc)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(finalAnswer(recorded)).toBe('It is sunny in Paris.');
    await sameOnNative(recorded);
  });

  it('runs the tool twice (a retry on a bad result): both runs are tool spans; ATIF keeps the first run’s result (a documented limit)', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }), answer('chatcmpl-2', 'It is sunny in Paris.', { prompt_tokens: 100, completion_tokens: 7 })];
    const { fetch } = scriptedFetch(replies);
    let runs = 0;
    const flaky = tool(
      async ({ city }) => {
        runs += 1;
        return runs === 1 ? 'upstream busy' : `It is sunny and 21C in ${city}.`;
      },
      { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
    );
    const again = createMiddleware({
      name: 'RetryBusy',
      wrapToolCall: async (request, handler) => {
        const first = await handler(request);
        return ToolMessage.isInstance(first) && first.content === 'upstream busy' ? handler(request) : first;
      },
    });
    const recorded = recordedPlugin('lc-mw-tool-twice');
    const agent = createAgent({ model: openai(fetch), tools: [flaky], middleware: [again] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(runs).toBe(2);
    expect(toolMessages(result.messages)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    // Each run of the tool is a tool span of its own under the call's id.
    const tools = atof.filter((e) => e.kind === 'scope' && e.category === 'tool' && e.scope_category === 'end');
    expect(tools.map((e) => [e.category_profile.tool_call_id, e.data])).toEqual([
      ['call_paris', 'upstream busy'],
      ['call_paris', 'It is sunny and 21C in Paris.'],
    ]);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 2));
    expect(callsOf(doc)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    // The first run succeeded, so it ended before the second started (docs/adapters/langchain.md, "What it cannot
    // see"): ATIF keeps a call's first result, on both backends; what the model read is in the next recorded request.
    // (A run that failed is held, so a retry after an error is one call: langchain-tool-retry.test.ts.)
    expect(observed(doc)).toEqual([['call_paris', 'upstream busy', 'ok']]);
    expect(recordedRequests(recorded)[1]!.at(-1)).toEqual(['tool', 'It is sunny and 21C in Paris.']);
    await sameOnNative(recorded);
  });
});

describe('dynamicSystemPromptMiddleware', () => {
  it('each recorded request has the system prompt that call was sent, made from the state and context of that call', async () => {
    const replies = [weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }), answer('chatcmpl-2', 'It is sunny in Paris.', { prompt_tokens: 100, completion_tokens: 7 })];
    const { fetch, requests } = scriptedFetch(replies);
    const prompt = dynamicSystemPromptMiddleware<{ userRole: string }>((state, runtime) => `You help a ${runtime.context.userRole}. The conversation has ${state.messages.length} messages.`);
    const recorded = recordedPlugin('lc-mw-dynamic-prompt');
    const { getWeather } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], contextSchema: z.object({ userRole: z.string() }), middleware: [prompt] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { ...handler(recorded), context: { userRole: 'pilot' } });
    expect(requests.map((r) => r.body.messages[0])).toEqual([
      { role: 'system', content: 'You help a pilot. The conversation has 1 messages.' },
      { role: 'system', content: 'You help a pilot. The conversation has 3 messages.' },
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(recordedRequests(recorded)).toEqual(sentRequests(requests));
    // The user step is what the user asked, not the system prompt.
    expect(userSteps(doc)).toEqual(['Weather in Paris?']);
    expect(modelSteps(doc)).toEqual(billed(replies, 2));
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    await sameOnNative(recorded);
  });
});

/** The turn's end: completed, and ended by the middleware's verdict of `kind`, whose message (the turn's answer) is `said`. */
function expectEndedBy(recorded: Recorded, kind: 'input' | 'output' | 'tool', said: string): void {
  expect(sessionEnd(recorded)).toMatchObject({
    completed: true,
    failed: false,
    turn_exit_reason: 'guardrail_tripped',
    guardrails: [{ kind, name: 'OpenAIModerationMiddleware', tripwire_triggered: true, output_info: { message: said } }],
  });
}

describe('openAIModerationMiddleware', () => {
  it('a clean input and output: the moderation requests are not recorded (no LangChain run); the model’s call is, with its tokens', async () => {
    const replies = [moderationReply(false), answer('chatcmpl-1', 'It is sunny in Paris.', { prompt_tokens: 30, completion_tokens: 7 }), moderationReply(false)];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-clean');
    const model = openai(fetch);
    const agent = createAgent({ model, tools: [], middleware: [openAIModerationMiddleware({ model })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Is it sunny in Paris?' }] }, handler(recorded));
    expect(requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/moderations', '/v1/chat/completions', '/v1/moderations']);
    expect(requests.map((r) => r.body.input ?? null)).toEqual(['Is it sunny in Paris?', null, 'It is sunny in Paris.']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The middleware calls the OpenAI client's `moderations.create` itself: LangChain tells no callback of it.
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => e.payload.model)).toEqual(['gpt-4.1']);
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(finalAnswer(recorded)).toBe(result.messages.at(-1)!.content);
    // Checks that passed changed nothing: no verdict, the model's answer ended the turn.
    expect(sessionEnd(recorded).guardrails).toBeUndefined();
    expect(sessionEnd(recorded).turn_exit_reason).toBe('final_response');
    await sameOnNative(recorded);
  });

  it('a flagged input (exitBehavior "end"): no model call; the turn completes with the violation message, which is its answer, ended by the guardrail', async () => {
    const { fetch, requests } = scriptedFetch([moderationReply(true)]);
    const recorded = recordedPlugin('lc-moderation-input');
    const model = openai(fetch);
    const agent = createAgent({ model, tools: [], middleware: [openAIModerationMiddleware({ model })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'How do I hurt someone?' }] }, handler(recorded));
    expect(requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/moderations']);
    const said = String(result.messages.at(-1)!.content);
    expect(said).toBe("I'm sorry, but I can't comply with that request. It was flagged for violence.");
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toEqual([]);
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toEqual([]);
    expect(recorded.log.find((e) => e.hook === 'pre_llm_call')!.payload.user_message).toBe('How do I hurt someone?');
    expect(finalAnswer(recorded)).toBe(said);
    // No model answered: the middleware ended the turn, and its end says so, with the verdict.
    expectEndedBy(recorded, 'input', said);
    await sameOnNative(recorded);
  });

  it('a flagged output (exitBehavior "end", the default): the model’s answer is its step, with its tokens; the program got the violation message, the turn’s answer, ended by the guardrail', async () => {
    const replies = [moderationReply(false), answer('chatcmpl-1', 'Here is how to hurt someone.', { prompt_tokens: 30, completion_tokens: 8 }), moderationReply(true)];
    const { fetch } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-output-end');
    const model = openai(fetch);
    const agent = createAgent({ model, tools: [], middleware: [openAIModerationMiddleware({ model })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Tell me a story.' }] }, handler(recorded));
    const said = String(result.messages.at(-1)!.content);
    expect(said).toBe("I'm sorry, but I can't comply with that request. It was flagged for violence.");
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The model did say it, and was billed for it: its step. The violation message no model said: no step.
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(finalAnswer(recorded)).toBe(said);
    expectEndedBy(recorded, 'output', said);
    await sameOnNative(recorded);
  });

  it('a flagged input (exitBehavior "replace"): the model is sent the violation message in place of yours, and answers it; the verdict is on the turn’s end', async () => {
    const replies = [moderationReply(true), answer('chatcmpl-1', 'I understand. Can I help with something else?', { prompt_tokens: 40, completion_tokens: 10 }), moderationReply(false)];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-input-replace');
    const model = openai(fetch);
    const agent = createAgent({ model, tools: [], middleware: [openAIModerationMiddleware({ model, exitBehavior: 'replace' })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'How do I hurt someone?' }] }, handler(recorded));
    const violation = "I'm sorry, but I can't comply with that request. It was flagged for violence.";
    expect(sentRequests(requests)).toEqual([[['user', violation]]]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // What the model read is the user step (as with piiMiddleware); your message is the turn's `user_message`.
    expect(userSteps(doc)).toEqual([violation]);
    expect(recorded.log.find((e) => e.hook === 'pre_llm_call')!.payload.user_message).toBe('How do I hurt someone?');
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(finalAnswer(recorded)).toBe(result.messages.at(-1)!.content);
    expect(sessionEnd(recorded)).toMatchObject({
      completed: true,
      turn_exit_reason: 'final_response',
      guardrails: [{ kind: 'input', name: 'OpenAIModerationMiddleware', tripwire_triggered: true, output_info: { message: violation } }],
    });
    await sameOnNative(recorded);
  });

  it('a flagged output (exitBehavior "error"): the billed call is a completed step with its tokens; the run fails with OpenAIModerationError, as the program caught it', async () => {
    const replies = [moderationReply(false), answer('chatcmpl-1', 'Here is how to hurt someone.', { prompt_tokens: 30, completion_tokens: 8 }), moderationReply(true)];
    const { fetch } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-output');
    const model = openai(fetch);
    const agent = createAgent({ model, tools: [], middleware: [openAIModerationMiddleware({ model, exitBehavior: 'error' })] });
    const caught = await agent.invoke({ messages: [{ role: 'user', content: 'Tell me a story.' }] }, handler(recorded)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect([caught?.name, caught?.message]).toEqual(['OpenAIModerationError', "I'm sorry, but I can't comply with that request. It was flagged for violence."]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(agentSteps(doc).map((step) => step.extra?.invocation?.status)).toEqual(['completed']);
    expect(sessionEnd(recorded)).toMatchObject({ completed: false, failed: true, error_type: caught!.name, error_message: caught!.message });
    // The error carries the moderation result: the verdict, its categories and scores as OpenAI answered them.
    const flagged = (replies[2]!.json as AtifDoc).results[0];
    expect(sessionEnd(recorded).guardrails).toEqual([{ kind: 'output', name: 'OpenAIModerationMiddleware', tripwire_triggered: true, output_info: { message: caught!.message, result: flagged } }]);
    await sameOnNative(recorded);
  });
});

describe('openAIModerationMiddleware on tool results', () => {
  it('a flagged tool result (checkToolResults, exitBehavior "error"): the tool ran and its result is the call’s; the turn fails with the verdict of kind tool', async () => {
    const flagged = { id: 'modr-tool', model: 'omni-moderation-latest', results: [{ flagged: true, categories: { violence: true }, category_scores: { violence: 0.88 } }] };
    const replies: WireReply[] = [
      { json: { id: 'modr-in', model: 'omni-moderation-latest', results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.001 } }] } },
      weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }),
      { json: flagged },
    ];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-tool');
    const model = openai(fetch);
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model, tools: [getWeather], middleware: [openAIModerationMiddleware({ model, checkToolResults: true, exitBehavior: 'error' })] });
    const caught = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(caught?.name).toBe('OpenAIModerationError');
    expect(ran).toEqual(['Paris']);
    expect(requests.map((r) => r.body.input ?? null)).toEqual(['Weather in Paris?', null, 'It is sunny and 21C in Paris.']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    expect(sessionEnd(recorded)).toMatchObject({ failed: true, error_type: 'OpenAIModerationError', error_message: caught!.message });
    expect(sessionEnd(recorded).guardrails).toEqual([{ kind: 'tool', name: 'OpenAIModerationMiddleware', tripwire_triggered: true, output_info: { message: caught!.message, result: flagged.results[0] } }]);
    await sameOnNative(recorded);
  });

  it('a flagged tool result (checkToolResults, exitBehavior "end"): the tool ran, its result is the call’s; the turn completes with the violation message, ended by a verdict of kind tool', async () => {
    const replies: WireReply[] = [moderationReply(false), weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }), moderationReply(true)];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-moderation-tool-end');
    const model = openai(fetch);
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model, tools: [getWeather], middleware: [openAIModerationMiddleware({ model, checkToolResults: true })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(ran).toEqual(['Paris']);
    // The tool's result was the text checked last, and flagged; the middleware then checked nothing else.
    expect(requests.map((r) => r.body.input ?? null)).toEqual(['Weather in Paris?', null, 'It is sunny and 21C in Paris.']);
    const said = String(result.messages.at(-1)!.content);
    expect(said).toBe("I'm sorry, but I can't comply with that request. It was flagged for violence.");
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(modelSteps(doc)).toEqual(billed(replies, 3));
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    expect(finalAnswer(recorded)).toBe(said);
    expectEndedBy(recorded, 'tool', said);
    await sameOnNative(recorded);
  });

  it('a flagged message after a conversation that ran tools (checkToolResults, exitBehavior "end"): the verdict is of kind input', async () => {
    const { fetch, requests } = scriptedFetch([moderationReply(true)]);
    const recorded = recordedPlugin('lc-moderation-input-after-tools');
    const model = openai(fetch);
    const { getWeather } = weatherTool();
    const agent = createAgent({ model, tools: [getWeather], middleware: [openAIModerationMiddleware({ model, checkToolResults: true })] });
    const history = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_paris', content: 'It is sunny and 21C in Paris.' },
      { role: 'assistant', content: 'It is sunny in Paris.' },
      { role: 'user', content: 'How do I hurt someone?' },
    ];
    const result = await agent.invoke({ messages: history }, handler(recorded));
    // Only your new message is checked: the tool results before the model's last answer are not.
    expect(requests.map((r) => r.body.input ?? null)).toEqual(['How do I hurt someone?']);
    const said = String(result.messages.at(-1)!.content);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    expectEndedBy(recorded, 'input', said);
    await sameOnNative(recorded);
  });
});

describe('toolEmulatorMiddleware', () => {
  it('an emulated tool: no tool ran; the emulator’s model call is a sub-agent of the tool call (its prompt, answer, model, tokens); the observation is its answer', async () => {
    const replies = [
      weatherCall('call_paris', 'Paris', { prompt_tokens: 70, completion_tokens: 15 }),
      answer('chatcmpl-emu', 'Paris: partly cloudy, 18C, light wind.', { prompt_tokens: 88, completion_tokens: 12 }, MINI),
      answer('chatcmpl-2', 'It is partly cloudy in Paris.', { prompt_tokens: 120, completion_tokens: 8 }),
    ];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-tool-emulator');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [toolEmulatorMiddleware({ tools: ['get_weather'], model: openai(fetch, 'gpt-4.1-mini') })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, handler(recorded));
    expect(ran).toEqual([]);
    expect(requests.map((r) => r.body.model)).toEqual(['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1']);
    const emulatorPrompt = requests[1]!.body.messages[0].content as string;
    expect(emulatorPrompt).toContain('Tool: get_weather');
    expect(toolMessages(result.messages)).toEqual([['call_paris', 'Paris: partly cloudy, 18C, light wind.', 'ok']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Weather in Paris?']);
    expect(callsOf(doc)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    // The call's one observation: what the model read, the emulator's sub-agent its reference.
    expect(observed(doc).map(([id, content]) => [id, content])).toEqual(toolMessages(result.messages).map(([id, content]) => [id, content]));
    // The agent's own calls, then the emulator's: together every billed call, once, with its tokens.
    expect(modelSteps(doc)).toEqual([billed(replies, 3)[0], billed(replies, 3)[2]]);
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children.map((child) => child.agent.name)).toEqual(['toolEmulation']);
    const emulator = children[0]!;
    expect(validateAtif(emulator)).toEqual([]);
    expect(userSteps(emulator)).toEqual([emulatorPrompt]);
    expect(modelSteps(emulator)).toEqual([billed(replies, 3)[1]]);
    const results = (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []);
    expect(results.map((r: AtifDoc) => [r.source_call_id, r.subagent_trajectory_ref?.[0]?.trajectory_id])).toEqual([['call_paris', emulator.trajectory_id]]);
    // Linked to the call it emulated: the sub-agent's start names that call's id.
    expect(recorded.log.filter((e) => e.hook === 'subagent_start').map((e) => [e.payload.child_role, e.payload.tool_call_id])).toEqual([['toolEmulation', 'call_paris']]);
    expect(finalAnswer(recorded, doc.session_id)).toBe('It is partly cloudy in Paris.');
    await sameOnNative(recorded);
  });
  it('two calls emulated side by side: each emulation is the sub-agent of the call its prompt names, and each call’s observation that emulation’s answer', async () => {
    const replies = [
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 80, completion_tokens: 30 } }),
      answer('chatcmpl-emu1', 'Emulated weather A.', { prompt_tokens: 88, completion_tokens: 5 }, MINI),
      answer('chatcmpl-emu2', 'Emulated weather B.', { prompt_tokens: 89, completion_tokens: 6 }, MINI),
      answer('chatcmpl-2', 'Both emulated.', { prompt_tokens: 150, completion_tokens: 4 }),
    ];
    const { fetch, requests } = scriptedFetch(replies);
    const recorded = recordedPlugin('lc-tool-emulator-parallel');
    const { getWeather, ran } = weatherTool();
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [toolEmulatorMiddleware({ model: openai(fetch, 'gpt-4.1-mini') })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }, handler(recorded));
    expect(ran).toEqual([]);
    // Which emulation answered which call, as the program got it: the ToolMessage of each call, the city its prompt named.
    const read = new Map(toolMessages(result.messages).map(([id, content]) => [id, content]));
    const cityOf = (prompt: string) => (prompt.includes('"Paris"') ? 'call_paris' : 'call_rome');
    const emulatedBy = new Map(requests.slice(1, 3).map((r, index) => [cityOf(r.body.messages[0].content), String(replies[index + 1]!.json && (replies[index + 1]!.json as AtifDoc).choices[0].message.content)]));
    expect(read).toEqual(emulatedBy);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children).toHaveLength(2);
    const results = (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []);
    for (const r of results) {
      const child = children.find((c) => c.trajectory_id === r.subagent_trajectory_ref?.[0]?.trajectory_id)!;
      // The sub-agent linked to a call is the emulation whose prompt named that call, and the call's result its answer.
      expect(cityOf(userSteps(child)[0]!)).toBe(r.source_call_id);
      expect([r.content, agentSteps(child)[0]!.message]).toEqual([read.get(r.source_call_id), read.get(r.source_call_id)]);
    }
    expect(results.map((r: AtifDoc) => r.source_call_id).sort()).toEqual(['call_paris', 'call_rome']);
    expect([...modelSteps(doc), ...children.flatMap(modelSteps)].sort()).toEqual(billed(replies, 4).sort());
    await sameOnNative(recorded, true);
  });
});

describe('piiRedactionMiddleware (deprecated for piiMiddleware, still exported)', () => {
  it('the model is sent placeholders and answers with them; the trajectory records the requests and answers the model saw, the tool what it ran with, the turn the restored answer', async () => {
    // The placeholder's id is random each call: the fake server answers with the one the request carries, as a model would.
    const requests: SeenRequest[] = [];
    const placeholderIn = (body: AtifDoc): string => /\[REDACTED_EMAIL_[a-z0-9]+\]/.exec(JSON.stringify(body.messages))![0];
    const script = [
      (body: AtifDoc) => chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_mail', name: 'send_forecast', args: { to: placeholderIn(body) } }], usage: { prompt_tokens: 80, completion_tokens: 20 } }),
      (body: AtifDoc) => chatCompletion({ id: 'chatcmpl-2', model: GPT, content: `Sent to ${placeholderIn(body)}.`, usage: { prompt_tokens: 130, completion_tokens: 9 } }),
    ];
    const fetch = (async (url: string, init: { body: string }) => {
      const body = JSON.parse(init.body);
      requests.push({ url, method: 'POST', body });
      return wireResponse(script[requests.length - 1]!(body), `req_${requests.length}`, false);
    }) as unknown as typeof globalThis.fetch;
    const sentTo: string[] = [];
    const sendForecast = tool(
      async ({ to }) => {
        sentTo.push(to);
        return `Forecast sent to ${to}.`;
      },
      { name: 'send_forecast', description: 'Mail the forecast', schema: z.object({ to: z.string() }) },
    );
    const recorded = recordedPlugin('lc-pii-redaction');
    const agent = createAgent({ model: openai(fetch), tools: [sendForecast], middleware: [piiRedactionMiddleware({ rules: { email: /[\w.+-]+@[\w-]+\.[\w.]+/g } })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Mail the forecast to jane.doe@example.com' }] }, handler(recorded));
    const [first, second] = requests.map((r) => placeholderIn(r.body));
    expect(JSON.stringify(requests.map((r) => r.body))).not.toContain('jane.doe@example.com');
    // afterModel restored the placeholder before the tool ran and in the answer the program got.
    expect(sentTo).toEqual(['jane.doe@example.com']);
    expect(result.messages.at(-1)!.content).toBe('Sent to jane.doe@example.com.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(recordedRequests(recorded)).toEqual(sentRequests(requests));
    expect(userSteps(doc)).toEqual([`Mail the forecast to ${first}`]);
    // The steps are the model's answers as the provider sent them: its call's arguments and its text hold placeholders.
    expect(modelSteps(doc)).toEqual([
      [GPT, '', 80, 20],
      [GPT, `Sent to ${second}.`, 130, 9],
    ]);
    expect(callsOf(doc)).toEqual([['call_mail', 'send_forecast', { to: first }]]);
    // The tool ran with the restored address, and the model read its result redacted again in the next request.
    expect(recorded.log.find((e) => e.hook === 'pre_tool_call')!.payload.args).toEqual({ to: 'jane.doe@example.com' });
    expect(observed(doc)).toEqual([['call_mail', 'Forecast sent to jane.doe@example.com.', 'ok']]);
    expect(sentRequests(requests)[1]!.at(-1)).toEqual(['tool', expect.stringMatching(/^Forecast sent to \[REDACTED_EMAIL_[a-z0-9]+\]$/)]);
    expect(finalAnswer(recorded)).toBe('Sent to jane.doe@example.com.');
    await sameOnNative(recorded);
  });
});

describe('providerToolSearchMiddleware on ChatOpenAI (OpenAI’s hosted tool search, the Responses API)', () => {
  it('OpenAI was sent the deferred tool and the search tool; the loaded tool’s call ran, with its result; each call’s tokens as billed; the recorded requests list the function tools only', async () => {
    const loaded = { type: 'function', name: 'get_news', description: 'Get the news for a city', defer_loading: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
    const replies = [
      openAiResponse({
        id: 'resp_1',
        model: 'gpt-5.4-2026-03-05',
        hostedItems: [
          { type: 'tool_search_call', id: 'tsc_1', execution: 'server', call_id: null, status: 'completed', arguments: { query: 'news' } },
          { type: 'tool_search_output', id: 'tso_1', execution: 'server', call_id: null, status: 'completed', tools: [loaded] },
        ],
        toolCalls: [{ id: 'call_news', name: 'get_news', args: { city: 'Paris' } }],
        usage: { prompt_tokens: 210, completion_tokens: 30 },
      }),
      openAiResponse({ id: 'resp_2', model: 'gpt-5.4-2026-03-05', text: 'Nothing unusual in Paris today.', usage: { prompt_tokens: 260, completion_tokens: 9 } }),
    ];
    const { fetch, requests } = scriptedFetch(replies);
    const news = tool(async ({ city }) => `News for ${city}: nothing unusual.`, { name: 'get_news', description: 'Get the news for a city', schema: z.object({ city: z.string() }) });
    const { getWeather, ran } = weatherTool();
    const recorded = recordedPlugin('lc-provider-tool-search');
    const agent = createAgent({ model: openai(fetch, 'gpt-5.4'), tools: [getWeather, news], middleware: [providerToolSearchMiddleware({ searchableTools: ['get_news'] })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Any news in Paris?' }] }, handler(recorded));
    expect(ran).toEqual([]);
    const sentTools = requests.map((r) => (r.body.tools as AtifDoc[]).map((t) => [t.type, t.name ?? null, t.defer_loading ?? false]));
    expect(sentTools[0]).toEqual([
      ['function', 'get_weather', false],
      ['function', 'get_news', true],
      ['tool_search', null, false],
    ]);
    expect(toolMessages(result.messages)).toEqual([['call_news', 'News for Paris: nothing unusual.', 'ok']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // A recorded request lists the function tools it offered by name, description and schema, as every adapter's
    // does: the deferral and the hosted search tool are not in it (docs/adapters/langchain.md, "What it cannot see").
    const offered = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => ((e.payload.request as AtifDoc).body.tools as AtifDoc[]).map((t) => t.function?.name ?? t.name));
    expect(offered).toEqual([['get_weather', 'get_news'], ['get_weather', 'get_news']]);
    expect(modelSteps(doc).map(([, message, input, output]) => [message, input, output])).toEqual([
      ['', 210, 30],
      ['Nothing unusual in Paris today.', 260, 9],
    ]);
    // The loaded tool's call, with what it returned; the search OpenAI ran is no call of the step (documented).
    expect(callsOf(doc)).toEqual([['call_news', 'get_news', { city: 'Paris' }]]);
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(finalAnswer(recorded)).toBe('Nothing unusual in Paris today.');
    await sameOnNative(recorded);
  });
});

describe('bedrockPromptCachingMiddleware on ChatBedrockConverse (a loopback Bedrock speaking Converse)', () => {
  let server: LoopbackBedrock;
  beforeAll(async () => {
    server = await loopbackBedrock();
  });
  afterAll(() => server.close());

  it('each request carries its cache point; each call’s cache writes and reads are recorded as Bedrock reported them, the tokens as LangChain did', async () => {
    const seen = server.serve(weatherTurns('get_weather'), 'aws-sdk');
    const recorded = recordedPlugin('lc-bedrock-prompt-caching');
    const { getWeather } = weatherTool();
    const agent = createAgent({ model: new ChatBedrockConverse({ model: INFERENCE_PROFILE, region: REGION }), tools: [getWeather], name: 'weather_agent', middleware: [bedrockPromptCachingMiddleware({ ttl: '5m' })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, handler(recorded));
    for (const request of seen) expect(JSON.stringify(request.body)).toContain('"cachePoint"');
    const answers = result.messages.filter((m): m is AIMessage => m.getType() === 'ai');
    await checkBedrockRun(
      recorded,
      seen,
      {
        tokens: answers.map((m) => [m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens] as const),
        cacheReads: answers.map((m) => m.usage_metadata?.input_token_details?.cache_read ?? 0),
        cacheWrites: answers.map((m) => m.usage_metadata?.input_token_details?.cache_creation ?? 0),
      },
      { tool: 'get_weather', stream: false, provider: 'amazon_bedrock', sessionModel: false },
    );
    await sameOnNative(recorded);
  });
});
