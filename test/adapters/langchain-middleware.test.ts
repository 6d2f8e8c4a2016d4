// createAgent programs with the structured output and the middleware
// LangChain v1's docs put in most agents, a model's structured output
// invoked on its own, and a retrieval chain, written as those docs write them:
// the real ChatOpenAI and ChatAnthropic over a fake fetch speaking the
// providers' wire formats (test/support/provider-wire.ts). Each trajectory is
// checked against what the program's state holds: the tool messages the model
// read, the usage_metadata LangChain reported, the structured response.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { BaseMessage, ToolMessage } from '@langchain/core/messages';
import { BaseRetriever } from '@langchain/core/retrievers';
import { Document } from '@langchain/core/documents';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { anthropicPromptCachingMiddleware, ClearToolUsesEdit, contextEditingMiddleware, createAgent, llmToolSelectorMiddleware, modelCallLimitMiddleware, modelFallbackMiddleware, modelRetryMiddleware, piiMiddleware, summarizationMiddleware, todoListMiddleware, toolCallLimitMiddleware, toolRetryMiddleware, toolStrategy } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicMessage, chatCompletion, openAiError, scriptedFetch } from '../support/provider-wire.ts';
import { expectNothingLost, expectRetriedFirstCall, recordedPlugin, viewLines, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const MINI = 'gpt-4.1-mini-2025-04-14';
const CLAUDE = 'claude-sonnet-4-5-20250929';

const openai = (fetch: typeof globalThis.fetch, model = 'gpt-4.1', callbacks?: NemoRelayCallbackHandler[]) => new ChatOpenAI({ model, apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, callbacks });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
const getWeather = tool(async ({ city }) => `It is sunny and 21C in ${city}.`, {
  name: 'get_weather',
  description: 'Get the weather for a city',
  schema: z.object({ city: z.string() }),
});
/** A tool of the agent's kit that answers with its name, for the agents whose kit a middleware narrows. */
const lookup = (name: string) => tool(async ({ city }) => `${name} for ${city}: nothing unusual.`, { name, description: `Get the ${name.replace('get_', '')} for a city`, schema: z.object({ city: z.string() }) });
const WeatherReport = z.object({ city: z.string(), temperature_c: z.number() }).meta({ title: 'WeatherReport' });

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const callsOf = (doc: AtifDoc): Array<[string, string, unknown]> =>
  agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments] as [string, string, unknown]));
/** Each tool call's outcome in the trajectory: [call id, content, status]. */
const observed = (doc: AtifDoc): Array<[string, string, string]> =>
  (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).filter((r: AtifDoc) => r.source_call_id !== undefined).map((r: AtifDoc) => [r.source_call_id, String(r.content), r.extra?.metadata?.status] as [string, string, string]));
/** The tool messages of the program's state, what the model read: [tool_call_id, content, status]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string, string]> =>
  messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content), (m as ToolMessage).status === 'error' ? 'error' : 'ok']);
/** The AI messages' usage_metadata as LangChain reported it: [input, output]. */
const reported = (messages: BaseMessage[]): Array<[number, number]> =>
  messages
    .map((m) => (m as { usage_metadata?: { input_tokens: number; output_tokens: number } }).usage_metadata)
    .filter((usage) => usage !== undefined)
    .map((usage) => [usage.input_tokens, usage.output_tokens]);
const recordedCounts = (doc: AtifDoc): Array<[number, number]> =>
  agentSteps(doc).filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
/** The answer a session's turn ended with (`post_llm_call`); the first session's when none is named. */
const finalAnswer = (log: ReturnType<typeof recordedPlugin>['log'], session?: string): unknown =>
  log.find((e) => e.hook === 'post_llm_call' && (session === undefined || e.payload.session_id === session))?.payload.assistant_response;

describe('createAgent with structured output and LangChain v1 middleware', () => {
  it('responseFormat: toolStrategy on ChatAnthropic: the structured-output call has the ToolMessage LangChain answered it with, and the structured response is the answer', async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_01', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 310, output_tokens: 22 } }),
      anthropicMessage({ id: 'msg_02', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_report', name: 'WeatherReport', input: { city: 'Paris', temperature_c: 21 } }], usage: { input_tokens: 402, output_tokens: 31 } }),
    ]);
    const recorded = recordedPlugin('lc-tool-strategy');
    const agent = createAgent({ model: anthropic(fetch), tools: [getWeather], name: 'weather_agent', responseFormat: toolStrategy(WeatherReport) });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests.map((r) => r.body.tools.map((t: { name: string }) => t.name))).toEqual([['get_weather', 'WeatherReport'], ['get_weather', 'WeatherReport']]);
    expect(result.structuredResponse).toEqual({ city: 'Paris', temperature_c: 21 });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    expect(callsOf(doc)).toEqual([
      ['toolu_weather', 'get_weather', { city: 'Paris' }],
      ['toolu_report', 'WeatherReport', { city: 'Paris', temperature_c: 21 }],
    ]);
    // Every call the model made has the outcome the model (and the program's state) got; no tool ran the second.
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(observed(doc).at(-1)).toEqual(['toolu_report', '{"city":"Paris","temperature_c":21}', 'ok']);
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status])).toEqual([['toolu_weather', 'ok'], ['toolu_report', 'ok']]);
    // The program's answer is its structured response, not the message LangChain writes after it.
    expect(finalAnswer(recorded.log)).toBe('{"city":"Paris","temperature_c":21}');
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('responseFormat: toolStrategy whose first answer fails the schema: LangChain tells the model why and asks again; each structured call has what the model was told', async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_bad', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_bad', name: 'WeatherReport', input: { city: 'Paris', temperature_c: 'warm' } }], usage: { input_tokens: 300, output_tokens: 20 } }),
      anthropicMessage({ id: 'msg_good', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_good', name: 'WeatherReport', input: { city: 'Paris', temperature_c: 21 } }], usage: { input_tokens: 380, output_tokens: 21 } }),
    ]);
    const recorded = recordedPlugin('lc-tool-strategy-retry');
    const agent = createAgent({ model: anthropic(fetch), tools: [getWeather], name: 'weather_agent', responseFormat: toolStrategy(WeatherReport) });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(2);
    expect(result.structuredResponse).toEqual({ city: 'Paris', temperature_c: 21 });
    const told = toolMessages(result.messages);
    expect(told.map(([id]) => id)).toEqual(['toolu_bad', 'toolu_good']);
    expect(told[0]![1]).toContain('WeatherReport');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(callsOf(doc).map(([id, , args]) => [id, args])).toEqual([
      ['toolu_bad', { city: 'Paris', temperature_c: 'warm' }],
      ['toolu_good', { city: 'Paris', temperature_c: 21 }],
    ]);
    // Each on the step of the call that made it, with what the model was told; the refused one failed, though
    // LangChain marks its ToolMessage no error (test/adapters/langchain-structured.test.ts).
    expect(agentSteps(doc).map((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id))).toEqual([['toolu_bad'], ['toolu_good']]);
    expect(told[0]![2]).toBe('ok');
    expect(observed(doc)).toEqual([[...told[0]!.slice(0, 2), 'error'], told[1]]);
    expect(finalAnswer(recorded.log)).toBe('{"city":"Paris","temperature_c":21}');
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('responseFormat: a zod schema on ChatOpenAI (the provider strategy, json_schema): one call, its JSON the answer', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: '{"city":"Paris","temperature_c":21}', usage: { prompt_tokens: 120, completion_tokens: 14, cached: 0 } }),
    ]);
    const recorded = recordedPlugin('lc-provider-strategy');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], responseFormat: WeatherReport });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests[0]!.body.response_format.type).toBe('json_schema');
    expect(result.structuredResponse).toEqual({ city: 'Paris', temperature_c: 21 });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).map((step) => [step.message, step.model_name])).toEqual([['{"city":"Paris","temperature_c":21}', GPT]]);
    expect(finalAnswer(recorded.log)).toBe(JSON.stringify(result.structuredResponse));
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('modelFallbackMiddleware: the primary model’s failed call and the fallback’s answer are two attempts of one request, each with its own model and provider', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      anthropicMessage({ id: 'msg_fb', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 95, output_tokens: 9 } }),
    ]);
    const recorded = recordedPlugin('lc-fallback');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], name: 'weather_agent', middleware: [modelFallbackMiddleware(anthropic(fetch))] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Is it sunny in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests.map((r) => r.url)).toEqual(['https://api.openai.com/v1/chat/completions', 'https://api.anthropic.com/v1/messages']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const attempts = expectRetriedFirstCall(recorded.log, true);
    expect(attempts.map((e) => [e.hook, e.payload.model, e.payload.provider])).toEqual([
      ['pre_api_request', 'gpt-4.1', 'openai'],
      ['api_request_error', 'gpt-4.1', 'openai'],
      ['pre_api_request', 'claude-sonnet-4-5', 'anthropic'],
      ['post_api_request', 'claude-sonnet-4-5', 'anthropic'],
    ]);
    expect((attempts[1]!.payload.error as { message: string }).message).toContain('The server had an error');
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?']);
    expect(agentSteps(doc).map((step) => [step.model_name, step.extra?.invocation?.status])).toEqual([
      ['gpt-4.1', 'failed'],
      [CLAUDE, 'completed'],
    ]);
    expect(agentSteps(doc).at(-1)!.message).toBe('It is sunny in Paris.');
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('summarizationMiddleware: its model call is a summarization sub-agent (prompt, summary, its own model and tokens), not the user’s request or the agent’s answer', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sum', model: MINI, content: 'The user asked about the weather in Paris (sunny) and Lyon (rainy).', usage: { prompt_tokens: 412, completion_tokens: 17 } }),
      chatCompletion({ id: 'chatcmpl-ans', model: GPT, content: null, toolCalls: [{ id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 140, completion_tokens: 15 } }),
      chatCompletion({ id: 'chatcmpl-end', model: GPT, content: 'It is sunny and 21C in Rome.', usage: { prompt_tokens: 190, completion_tokens: 11 } }),
    ]);
    const recorded = recordedPlugin('lc-summarization');
    const agent = createAgent({
      model: openai(fetch),
      tools: [getWeather],
      name: 'weather_agent',
      middleware: [summarizationMiddleware({ model: openai(fetch, 'gpt-4.1-mini'), trigger: { messages: 5 }, keep: { messages: 1 } })],
    });
    const result = await agent.invoke(
      {
        messages: [
          { role: 'user', content: 'What is the weather in Paris?' },
          { role: 'assistant', content: 'It is sunny in Paris.' },
          { role: 'user', content: 'And in Lyon?' },
          { role: 'assistant', content: 'It is rainy in Lyon.' },
          { role: 'user', content: 'And in Rome?' },
        ],
      },
      { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] },
    );
    expect(requests.map((r) => r.body.model)).toEqual(['gpt-4.1-mini', 'gpt-4.1', 'gpt-4.1']);
    const summaryPrompt = requests[0]!.body.messages[0].content as string;
    expect(summaryPrompt).toContain('Human: And in Lyon?');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children).toHaveLength(1);
    const summary = children[0]!;
    // The agent's turn: the summarization's link (a step of its own, as for any sub-agent no tool call started), the
    // user's request, the agent's call and answer, on the agent's model.
    expect((doc.steps as Step[]).map((step) => (step.source === 'user' ? `user: ${step.message}` : step.llm_call_count === 0 ? 'agent: link' : `agent: ${step.model_name}`))).toEqual([
      'agent: link',
      'user: And in Rome?',
      `agent: ${GPT}`,
      `agent: ${GPT}`,
    ]);
    const link = agentSteps(doc)[0]!;
    expect([link.tool_calls[0].function_name, link.observation.results[0].subagent_trajectory_ref[0].trajectory_id]).toEqual([`summarization-session-${summary.session_id}`, summary.trajectory_id]);
    const own = { ...doc, steps: (doc.steps as Step[]).filter((step) => step.llm_call_count !== 0) };
    expect(callsOf(own)).toEqual([['call_rome', 'get_weather', { city: 'Rome' }]]);
    expect(agentSteps(own).map((step) => step.message)).toEqual(['', 'It is sunny and 21C in Rome.']);
    expect(recordedCounts(doc)).toEqual([[140, 15], [190, 11]]);
    // The turn's model is the agent's, not the summarizer's that called first.
    expect(recorded.log.filter((e) => (e.hook === 'post_llm_call' || e.hook === 'on_session_end') && e.payload.session_id === doc.session_id).map((e) => e.payload.model)).toEqual(['gpt-4.1', 'gpt-4.1']);
    expect(finalAnswer(recorded.log, doc.session_id)).toBe('It is sunny and 21C in Rome.');
    // The summarization: a sub-agent of the turn, named after the middleware's call, with what it was asked and said.
    expect(summary.agent.name).toBe('summarization');
    expect(userSteps(summary)).toEqual([summaryPrompt]);
    expect(agentSteps(summary).map((step) => [step.model_name, step.message])).toEqual([[MINI, 'The user asked about the weather in Paris (sunny) and Lyon (rainy).']]);
    expect(recordedCounts(summary)).toEqual([[412, 17]]);
    // Together: every usage LangChain reported (the summary's is on no message of the state) is recorded once.
    expect([...recordedCounts(summary), ...recordedCounts(doc)]).toEqual([[412, 17], ...reported(result.messages)]);
    expect(recorded.log.find((e) => e.hook === 'subagent_stop')!.payload).toMatchObject({ child_role: 'summarization', child_status: 'completed' });
    // What the agent read next starts with the summary.
    expect(requests[1]!.body.messages[0].content).toContain('The user asked about the weather in Paris (sunny) and Lyon (rainy).');
    await sameOnNative(recorded);
  });

  it('summarizationMiddleware on a thread (MemorySaver, one thread_id): the second turn summarizes the first; one trajectory, the summarization a sub-agent of that turn', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-t1', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 60, completion_tokens: 7 } }),
      chatCompletion({ id: 'chatcmpl-sum', model: MINI, content: 'The user asked about Paris: sunny.', usage: { prompt_tokens: 250, completion_tokens: 9 } }),
      chatCompletion({ id: 'chatcmpl-t2', model: GPT, content: 'It is rainy in Rome.', usage: { prompt_tokens: 90, completion_tokens: 7 } }),
    ]);
    const recorded = recordedPlugin('lc-summarization-thread');
    const agent = createAgent({
      model: openai(fetch),
      tools: [getWeather],
      name: 'weather_agent',
      checkpointer: new MemorySaver(),
      middleware: [summarizationMiddleware({ model: openai(fetch, 'gpt-4.1-mini'), trigger: { messages: 3 }, keep: { messages: 1 } })],
    });
    const config = { configurable: { thread_id: 'weather-thread' } };
    await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { ...config, callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const second = await agent.invoke({ messages: [{ role: 'user', content: 'And in Rome?' }] }, { ...config, callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests.map((r) => r.body.model)).toEqual(['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.session_id).toBe('weather-thread');
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?', 'And in Rome?']);
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children.map((child) => child.agent.name)).toEqual(['summarization']);
    expect(agentSteps(children[0]!).map((step) => [step.model_name, step.message])).toEqual([[MINI, 'The user asked about Paris: sunny.']]);
    expect(agentSteps(doc).filter((step) => step.llm_call_count !== 0).map((step) => [step.model_name, step.message])).toEqual([
      [GPT, 'It is sunny in Paris.'],
      [GPT, 'It is rainy in Rome.'],
    ]);
    // The summarization's link is a step of the second turn, before its user step: ATIF makes a turn's user step from
    // the agent's first request, which the summary precedes (as in a single run, above).
    expect((doc.steps as Step[]).map((step) => (step.source === 'user' ? 'user' : step.llm_call_count === 0 ? 'link' : 'agent'))).toEqual(['user', 'agent', 'link', 'user', 'agent']);
    expect(recordedCounts(doc)).toEqual([[60, 7], [90, 7]]);
    expect(second.messages.at(-1)!.content).toBe('It is rainy in Rome.');
    expect(recorded.log.filter((e) => e.hook === 'post_llm_call' && e.payload.session_id === 'weather-thread').map((e) => e.payload.assistant_response)).toEqual(['It is sunny in Paris.', 'It is rainy in Rome.']);
    await sameOnNative(recorded);
  });

  it('toolCallLimitMiddleware: the call over the limit never runs; it fails with the text the model got instead of a result', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 80, completion_tokens: 30 } }),
      chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'Paris is sunny; I could not check Rome.', usage: { prompt_tokens: 160, completion_tokens: 12 } }),
    ]);
    const recorded = recordedPlugin('lc-tool-limit');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], name: 'weather_agent', middleware: [toolCallLimitMiddleware({ runLimit: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(toolMessages(result.messages)).toEqual([
      ['call_rome', "Tool call limit exceeded. Do not make additional tool calls.", 'error'],
      ['call_paris', 'It is sunny and 21C in Paris.', 'ok'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(callsOf(doc)).toEqual([
      ['call_paris', 'get_weather', { city: 'Paris' }],
      ['call_rome', 'get_weather', { city: 'Rome' }],
    ]);
    expect([...observed(doc)].sort()).toEqual([...toolMessages(result.messages)].sort());
    const refused = recorded.log.find((e) => e.hook === 'post_tool_call' && e.payload.tool_call_id === 'call_rome')!.payload;
    expect(refused).toMatchObject({ status: 'error', args: { city: 'Rome' }, result: 'Tool call limit exceeded. Do not make additional tool calls.' });
    expect(recorded.log.filter((e) => e.hook === 'pre_tool_call').map((e) => e.payload.tool_call_id).sort()).toEqual(['call_paris', 'call_rome']);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('toolRetryMiddleware: the attempts of a call are one tool call under the call’s id, observed as the retry’s result the model read, the failed attempt inside it', async () => {
    let attempts = 0;
    const flakyWeather = tool(
      async ({ city }) => {
        attempts += 1;
        if (attempts === 1) throw new Error('weather service timed out');
        return `It is sunny and 21C in ${city}.`;
      },
      { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
    );
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 18 } }),
      chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 110, completion_tokens: 7 } }),
    ]);
    const recorded = recordedPlugin('lc-tool-retry');
    const agent = createAgent({ model: openai(fetch), tools: [flakyWeather], middleware: [toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 10, jitter: false })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    // The model read the retry's result.
    expect(toolMessages(result.messages)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    // One call under the model's call id: it ends once, with the retry's result; the failed attempt is in its end.
    const tools = atof.filter((e) => e.kind === 'scope' && e.category === 'tool');
    expect(tools.map((e) => [e.scope_category, e.category_profile.tool_call_id, e.data])).toEqual([
      ['start', 'call_paris', { city: 'Paris' }],
      ['end', 'call_paris', 'It is sunny and 21C in Paris.'],
    ]);
    expect(tools[1]!.metadata).toMatchObject({ attempt_index: 1, failed_attempts: [{ error_type: 'Error', error_message: 'weather service timed out' }] });
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => e.payload.status)).toEqual(['ok']);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(callsOf(doc)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });
});

describe('llmToolSelectorMiddleware', () => {
  /** What the agent's model was offered in each request the plugin recorded: the `pre_api_request` bodies' tool names. */
  const offeredIn = (log: ReturnType<typeof recordedPlugin>['log']): string[][] =>
    log.filter((e) => e.hook === 'pre_api_request').map((e) => ((e.payload.request as AtifDoc).body.tools ?? []).map((t: AtifDoc) => t.function?.name ?? t.name));
  const kit = () => [getWeather, lookup('get_news'), lookup('get_stocks')];
  const selectorReplies = () => [
    chatCompletion({ id: 'chatcmpl-sel', model: MINI, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
    chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 15 } }),
    chatCompletion({ id: 'chatcmpl-sel2', model: MINI, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
    chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
  ];

  it('with the handler in the selector model’s callbacks: each selection is a sub-agent of the turn (its prompt, choice, model and tokens), the agent offered only what it chose', async () => {
    const { fetch, requests } = scriptedFetch(selectorReplies());
    const recorded = recordedPlugin('lc-tool-selector');
    // LangChain runs the selection with `callbacks: []`: only a handler the selector model carries hears it.
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const agent = createAgent({ model: openai(fetch), tools: kit(), name: 'weather_agent', middleware: [llmToolSelectorMiddleware({ model: openai(fetch, 'gpt-4.1-mini', [handler]), maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [handler] });
    expect(requests.map((r) => [r.body.model, r.body.response_format?.type ?? null, (r.body.tools ?? []).map((t: AtifDoc) => t.function.name)])).toEqual([
      ['gpt-4.1-mini', 'json_schema', []],
      ['gpt-4.1', null, ['get_weather']],
      ['gpt-4.1-mini', 'json_schema', []],
      ['gpt-4.1', null, ['get_weather']],
    ]);
    const selectorPrompt = requests[0]!.body.messages as Array<{ role: string; content: string }>;
    expect(selectorPrompt.map((m) => m.role)).toEqual(['system', 'user']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The agent's own steps: its request, its calls on the narrowed kit, its answer, its tokens.
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    const own = { ...doc, steps: (doc.steps as Step[]).filter((step) => step.llm_call_count !== 0) };
    expect(agentSteps(own).map((step) => [step.model_name, step.message])).toEqual([[GPT, ''], [GPT, 'It is sunny and 21C in Paris.']]);
    expect(callsOf(own)).toEqual([['call_paris', 'get_weather', { city: 'Paris' }]]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect(offeredIn(recorded.log.filter((e) => e.payload.session_id === doc.session_id))).toEqual([['get_weather'], ['get_weather']]);
    expect(finalAnswer(recorded.log, doc.session_id)).toBe('It is sunny and 21C in Paris.');
    // Each selection: a sub-agent named by the middleware's call, asked what the selector was sent, answering its choice.
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children.map((child) => child.agent.name)).toEqual(['llmToolSelector', 'llmToolSelector']);
    for (const child of children) {
      expect(validateAtif(child)).toEqual([]);
      expect(userSteps(child)).toEqual([selectorPrompt[1]!.content]);
      expect(agentSteps(child).map((step) => [step.model_name, step.message])).toEqual([[MINI, '{"tools":["get_weather"]}']]);
      expect(recordedCounts(child)).toEqual([[96, 8]]);
    }
    // Every request the program's fetch answered is recorded once, with the tokens its provider reported.
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').length).toBe(requests.length);
    expect(recorded.log.filter((e) => e.hook === 'subagent_stop').map((e) => [e.payload.child_role, e.payload.child_status])).toEqual([
      ['llmToolSelector', 'completed'],
      ['llmToolSelector', 'completed'],
    ]);
    await sameOnNative(recorded);
  });

  it('selecting with the agent’s own model, the handler in its callbacks: the selections are sub-agents, the agent’s calls recorded once each', async () => {
    const { fetch, requests } = scriptedFetch(selectorReplies().map((reply, index) => (index % 2 === 0 ? chatCompletion({ id: `chatcmpl-sel${index}`, model: GPT, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }) : reply)));
    const recorded = recordedPlugin('lc-tool-selector-own-model');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const agent = createAgent({ model: openai(fetch, 'gpt-4.1', [handler]), tools: kit(), middleware: [llmToolSelectorMiddleware({ maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [handler] });
    expect(requests.map((r) => r.body.response_format?.type ?? null)).toEqual(['json_schema', null, 'json_schema', null]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // LangChain gives the model's own handler and the run's (the same one) once: each request is recorded once.
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').length).toBe(requests.length);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
    expect(children.map((child) => [child.agent.name, recordedCounts(child)])).toEqual([
      ['llmToolSelector', [[96, 8]]],
      ['llmToolSelector', [[96, 8]]],
    ]);
    await sameOnNative(recorded);
  });

  it('as its docs write it (the selector model without the handler): LangChain tells no handler of the selection; the agent’s calls are recorded with the narrowed kit', async () => {
    const { fetch, requests } = scriptedFetch(selectorReplies());
    const recorded = recordedPlugin('lc-tool-selector-unheard');
    const agent = createAgent({ model: openai(fetch), tools: kit(), name: 'weather_agent', middleware: [llmToolSelectorMiddleware({ model: openai(fetch, 'gpt-4.1-mini'), maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(4);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(atif).toHaveLength(1);
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.subagent_trajectories).toBeUndefined();
    // The documented limit (docs/adapters/langchain.md, "What it cannot see"): the selections' requests are not recorded.
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => (e.payload.request as AtifDoc).body.model)).toEqual(['gpt-4.1', 'gpt-4.1']);
    expect(offeredIn(recorded.log)).toEqual([['get_weather'], ['get_weather']]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });
});

describe('LangChain v1’s other prebuilt middleware', () => {
  /** The `pre_api_request` bodies' messages: the requests as recorded. */
  const recordedRequests = (log: ReturnType<typeof recordedPlugin>['log']): AtifDoc[][] =>
    log.filter((e) => e.hook === 'pre_api_request').map((e) => (e.payload.request as AtifDoc).body.messages);
  const EMAIL_PROMPT = 'Mail the forecast to jane.doe@example.com please';

  for (const [strategy, sent] of [
    ['redact', 'Mail the forecast to [REDACTED_EMAIL] please'],
    ['mask', 'Mail the forecast to j***@example.com please'],
    ['hash', /^Mail the forecast to <email_hash:[0-9a-f]{8}> please$/],
  ] as const) {
    it(`piiMiddleware (${strategy}): the model request recorded, and the trajectory's user step, are what the model received; the turn's user message is what the program passed`, async () => {
      const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-pii', model: GPT, content: 'Noted.', usage: { prompt_tokens: 30, completion_tokens: 2 } })]);
      const recorded = recordedPlugin(`lc-pii-${strategy}`);
      const agent = createAgent({ model: openai(fetch), tools: [], middleware: [piiMiddleware('email', { strategy })] });
      const result = await agent.invoke({ messages: [{ role: 'user', content: EMAIL_PROMPT }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      const received = requests[0]!.body.messages as Array<{ role: string; content: string }>;
      expect(received).toEqual([{ role: 'user', content: typeof sent === 'string' ? sent : expect.stringMatching(sent) }]);
      // The program's state holds what the middleware made of the message, not what was typed.
      expect(result.messages[0]!.content).toBe(received[0]!.content);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(recordedRequests(recorded.log)).toEqual([[{ role: 'user', content: received[0]!.content }]]);
      expect(userSteps(doc)).toEqual([received[0]!.content]);
      expect(JSON.stringify(doc)).not.toContain('jane.doe@example.com');
      // The turn's user message is the program's input, as for any turn (docs/adapters/langchain.md, piiMiddleware).
      expect(recorded.log.find((e) => e.hook === 'pre_llm_call')!.payload.user_message).toBe(EMAIL_PROMPT);
      expect(finalAnswer(recorded.log)).toBe('Noted.');
      await sameOnNative(recorded);
    });
  }

  it('piiMiddleware (block): no model call; the turn fails with the middleware’s PIIDetectionError, which is what the program caught', async () => {
    const { fetch, requests } = scriptedFetch([]);
    const recorded = recordedPlugin('lc-pii-block');
    const agent = createAgent({ model: openai(fetch), tools: [], middleware: [piiMiddleware('email', { strategy: 'block' })] });
    const caught = await agent.invoke({ messages: [{ role: 'user', content: EMAIL_PROMPT }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect([caught?.name, caught?.message]).toEqual(['PIIDetectionError', 'PII detected: email found 1 occurrence(s)']);
    expect(requests).toHaveLength(0);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(recorded.log.map((e) => e.hook)).toEqual(['on_session_start', 'pre_llm_call', 'on_session_end', 'on_session_finalize']);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({
      completed: false,
      failed: true,
      error_type: caught!.name,
      error_message: caught!.message,
      turn_exit_reason: `error: ${caught!.message}`,
    });
    // No model call, so no ATIF trajectory (ATIF needs a step); ATOF has the turn and why it failed.
    expect(atif).toEqual([]);
    expect(atof.filter((e) => e.kind === 'mark' && e.data?.failed === true).map((e) => e.data.error_type)).toEqual(['PIIDetectionError']);
    expect((await viewLines(recorded, 'atof')).join('\n')).toContain(EMAIL_PROMPT);
    await sameOnNative(recorded);
  });

  it('contextEditingMiddleware and todoListMiddleware: write_todos is a call with the result the model read; the requests recorded are the edited ones the model received, the observations what the tools returned', async () => {
    const longWeather = tool(async ({ city }) => `Forecast for ${city}: ${'sunny, light wind, 21C. '.repeat(30)}`, { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });
    const todos = [{ content: 'Check Paris', status: 'in_progress' }, { content: 'Check Rome', status: 'pending' }];
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_todos', name: 'write_todos', args: { todos } }], usage: { prompt_tokens: 400, completion_tokens: 30 } }),
      chatCompletion({ id: 'chatcmpl-2', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 450, completion_tokens: 15 } }),
      chatCompletion({ id: 'chatcmpl-3', model: GPT, content: null, toolCalls: [{ id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 480, completion_tokens: 15 } }),
      chatCompletion({ id: 'chatcmpl-4', model: GPT, content: 'Both are sunny.', usage: { prompt_tokens: 500, completion_tokens: 5 } }),
    ]);
    const recorded = recordedPlugin('lc-context-editing');
    const agent = createAgent({
      model: openai(fetch),
      tools: [longWeather],
      middleware: [todoListMiddleware(), contextEditingMiddleware({ edits: [new ClearToolUsesEdit({ trigger: { tokens: 300 }, keep: { messages: 1 } })] })],
    });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(result.todos).toEqual(todos);
    expect(requests[0]!.body.tools.map((t: AtifDoc) => t.function.name)).toEqual(['get_weather', 'write_todos']);
    // The last request: the older tool results cleared, the latest kept.
    const toolContents = (request: AtifDoc[]) => request.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content).startsWith('Forecast') ? 'kept' : m.content]);
    expect(toolContents(requests[3]!.body.messages)).toEqual([['call_todos', '[cleared]'], ['call_paris', '[cleared]'], ['call_rome', 'kept']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // What each request recorded holds is what the model received.
    expect(recordedRequests(recorded.log).map((messages) => messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))).toEqual(
      requests.map((r) => (r.body.messages as AtifDoc[]).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])),
    );
    expect(callsOf(doc).map(([id, name]) => [id, name])).toEqual([['call_todos', 'write_todos'], ['call_paris', 'get_weather'], ['call_rome', 'get_weather']]);
    // Each call's observation is its tool's result as the tool returned it (the clearing edits later requests only).
    const results = observed(doc);
    expect(results.map(([id, content, status]) => [id, content.slice(0, 20), status])).toEqual([
      ['call_todos', 'Updated todo list to', 'ok'],
      ['call_paris', 'Forecast for Paris: ', 'ok'],
      ['call_rome', 'Forecast for Rome: s', 'ok'],
    ]);
    expect(results[0]![1]).toBe(`Updated todo list to ${JSON.stringify(todos)}`);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect(finalAnswer(recorded.log)).toBe('Both are sunny.');
    await sameOnNative(recorded);
  });

  it('modelCallLimitMiddleware (exitBehavior "end"): the run ends completed with the middleware’s message as its answer, which no model call said', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 15 } }),
    ]);
    const recorded = recordedPlugin('lc-model-limit');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [modelCallLimitMiddleware({ runLimit: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(1);
    const said = String(result.messages.at(-1)!.content);
    expect(said).toBe('Model call limits exceeded: run level call limit reached with 1 model calls');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(finalAnswer(recorded.log)).toBe(said);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ completed: true, failed: false, turn_exit_reason: 'final_response' });
    // The trajectory's steps are the model's: its one call and the tool it ran; the limit's message is no step.
    expect(agentSteps(doc).map((step) => step.message)).toEqual(['']);
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('modelCallLimitMiddleware (exitBehavior "error"): the run fails with ModelCallLimitMiddlewareError, as the program caught it', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 15 } }),
    ]);
    const recorded = recordedPlugin('lc-model-limit-error');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [modelCallLimitMiddleware({ runLimit: 1, exitBehavior: 'error' })] });
    const caught = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(caught?.name).toBe('ModelCallLimitMiddlewareError');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: caught!.name, error_message: caught!.message });
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    await sameOnNative(recorded);
  });

  it('modelRetryMiddleware whose retries run out: each attempt failed under one request, counted; the run ends with the failure message the middleware answered with', async () => {
    const { fetch, requests } = scriptedFetch([openAiError(503, 'server_error', 'The server is overloaded.'), openAiError(503, 'server_error', 'The server is still overloaded.')]);
    const recorded = recordedPlugin('lc-retry-exhausted');
    const agent = createAgent({ model: openai(fetch), tools: [], middleware: [modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 1, backoffFactor: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Say hello.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(2);
    const said = String(result.messages.at(-1)!.content);
    expect(said).toBe('Model call failed after 2 attempts with InternalServerError: 503 The server is still overloaded.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const attempts = recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'api_request_error' || e.hook === 'post_api_request');
    const id = attempts[0]!.payload.api_request_id;
    expect(attempts.map((e) => [e.hook, e.payload.api_request_id, e.payload.retry_count, e.payload.status_code ?? null])).toEqual([
      ['pre_api_request', id, 0, null],
      ['api_request_error', id, 0, 503],
      ['pre_api_request', id, 1, null],
      ['api_request_error', id, 1, 503],
    ]);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).map((step) => step.extra?.invocation?.status)).toEqual(['failed', 'failed']);
    expect(finalAnswer(recorded.log)).toBe(said);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ completed: true, failed: false });
    const view = await viewLines(recorded, 'atif');
    expect(view.filter((line) => line.includes('✗ LLM')).map((line) => line.replace(/^.*ERROR /, ''))).toEqual([
      'InternalServerError: 503 The server is overloaded.',
      'InternalServerError: 503 The server is still overloaded.',
    ]);
    await sameOnNative(recorded);
  });

  it('modelFallbackMiddleware with the primary failing at the HTTP layer (429): its attempt failed with the status, the fallback answered the same request', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.'),
      anthropicMessage({ id: 'msg_fb', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 95, output_tokens: 9 } }),
    ]);
    const recorded = recordedPlugin('lc-fallback-429');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather], middleware: [modelFallbackMiddleware(anthropic(fetch))] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Is it sunny in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests.map((r) => new URL(r.url).host)).toEqual(['api.openai.com', 'api.anthropic.com']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const attempts = expectRetriedFirstCall(recorded.log, true);
    expect(attempts.map((e) => [e.hook, e.payload.model, e.payload.status_code ?? null])).toEqual([
      ['pre_api_request', 'gpt-4.1', null],
      ['api_request_error', 'gpt-4.1', 429],
      ['pre_api_request', 'claude-sonnet-4-5', null],
      ['post_api_request', 'claude-sonnet-4-5', null],
    ]);
    expect((attempts[1]!.payload.error as { message: string }).message).toContain('Rate limit reached for gpt-4.1.');
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).map((step) => [step.model_name, step.extra?.invocation?.status])).toEqual([
      ['gpt-4.1', 'failed'],
      [CLAUDE, 'completed'],
    ]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it('anthropicPromptCachingMiddleware: the requests carry its cache_control; each call’s cache writes and reads are recorded as Anthropic reported them', async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_1', model: CLAUDE, content: [{ type: 'text', text: 'Sunny in Paris.' }], usage: { input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 2048, cache_read_input_tokens: 0 } }),
      anthropicMessage({ id: 'msg_2', model: CLAUDE, content: [{ type: 'text', text: 'Rainy in Rome.' }], usage: { input_tokens: 14, output_tokens: 5, cache_creation_input_tokens: 30, cache_read_input_tokens: 2048 } }),
    ]);
    const recorded = recordedPlugin('lc-prompt-caching');
    const agent = createAgent({
      model: anthropic(fetch),
      tools: [],
      systemPrompt: 'You are a weather assistant.',
      checkpointer: new MemorySaver(),
      middleware: [anthropicPromptCachingMiddleware({ ttl: '5m', minMessagesToCache: 1 })],
    });
    const config = { configurable: { thread_id: 'cached-thread' }, callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
    await agent.invoke({ messages: [{ role: 'user', content: 'Paris?' }] }, config);
    const second = await agent.invoke({ messages: [{ role: 'user', content: 'Rome?' }] }, config);
    for (const request of requests) expect(JSON.stringify(request.body)).toContain('"cache_control":{"type":"ephemeral","ttl":"5m"}');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The hooks record Anthropic's counts as it reported them: the input without the cache, reads and writes apart.
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload.usage)).toEqual([
      { input_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 2048, output_tokens: 5, total_tokens: 2065 },
      { input_tokens: 14, cache_read_input_tokens: 2048, cache_creation_input_tokens: 30, output_tokens: 5, total_tokens: 2097 },
    ]);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // ATIF has one cached count: reads plus writes (docs/adapters/langchain.md, "Tokens").
    expect(agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.cached_tokens])).toEqual([
      [2060, 2048],
      [2092, 2078],
    ]);
    expect(recordedCounts(doc).at(-1)).toEqual(reported(second.messages).at(-1));
    await sameOnNative(recorded);
  });
});

describe('model.withStructuredOutput invoked on its own', () => {
  const Joke = z.object({ setup: z.string(), punchline: z.string() });
  const PARSED = { setup: 'Why did the cat sit on the computer?', punchline: 'To keep an eye on the mouse.' };

  it('on ChatAnthropic (a forced tool call): the parsed object is the turn’s answer, the model’s call its step', async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_joke', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_joke', name: 'joke', input: PARSED }], usage: { input_tokens: 48, output_tokens: 36 } }),
    ]);
    const recorded = recordedPlugin('lc-wso-anthropic');
    const joke = await anthropic(fetch).withStructuredOutput(Joke, { name: 'joke' }).invoke('Tell me a joke about cats', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests[0]!.body.tool_choice).toEqual({ type: 'tool', name: 'joke' });
    expect(joke).toEqual(PARSED);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Tell me a joke about cats']);
    expect(callsOf(doc)).toEqual([['toolu_joke', 'joke', PARSED]]);
    expect(recordedCounts(doc)).toEqual([[48, 36]]);
    // What the program got: the parsed object (the model's answer has no text).
    expect(finalAnswer(recorded.log)).toBe(JSON.stringify(joke));
    await sameOnNative(recorded);
  });

  it('on ChatOpenAI (json_schema): the parsed object is the turn’s answer', async () => {
    const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-joke', model: GPT, content: JSON.stringify(PARSED), usage: { prompt_tokens: 52, completion_tokens: 30 } })]);
    const recorded = recordedPlugin('lc-wso-openai');
    const joke = await openai(fetch).withStructuredOutput(Joke).invoke('Tell me a joke about cats', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests[0]!.body.response_format.type).toBe('json_schema');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, JSON.stringify(PARSED)]]);
    expect(recordedCounts(doc)).toEqual([[52, 30]]);
    expect(finalAnswer(recorded.log)).toBe(JSON.stringify(joke));
    await sameOnNative(recorded);
  });
});

describe('a retrieval chain (RunnableSequence with a retriever)', () => {
  /** A retriever as LangChain's docs write a custom one: `_getRelevantDocuments`. */
  class HandbookRetriever extends BaseRetriever {
    override lc_namespace = ['test', 'retrievers'];
    override async _getRelevantDocuments(query: string): Promise<Document[]> {
      return [
        new Document({ pageContent: 'Refunds are paid within 14 days of the return.', metadata: { source: 'refunds.md' } }),
        new Document({ pageContent: `Searched for: ${query}`, metadata: { source: 'log.md' } }),
      ];
    }
  }

  it('one turn: the prompt with the retrieved context is what the model was asked, the parsed text the answer, the tokens usage_metadata', async () => {
    const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-rag', model: GPT, content: 'Within 14 days of the return.', usage: { prompt_tokens: 64, completion_tokens: 9, cached: 0 } })]);
    const prompt = ChatPromptTemplate.fromTemplate('Answer from the context only.\n\nContext:\n{context}\n\nQuestion: {question}');
    const chain = RunnableSequence.from([
      { context: new HandbookRetriever().pipe((docs: Document[]) => docs.map((doc) => doc.pageContent).join('\n\n')), question: new RunnablePassthrough() },
      prompt,
      openai(fetch),
      new StringOutputParser(),
    ]);
    const recorded = recordedPlugin('lc-rag');
    const answer = await chain.invoke('When are refunds paid?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(answer).toBe('Within 14 days of the return.');
    const asked = 'Answer from the context only.\n\nContext:\nRefunds are paid within 14 days of the return.\n\nSearched for: When are refunds paid?\n\nQuestion: When are refunds paid?';
    expect(requests[0]!.body.messages).toEqual([{ role: 'user', content: asked }]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual([asked]);
    expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, 'Within 14 days of the return.']]);
    expect(recordedCounts(doc)).toEqual([[64, 9]]);
    expect(finalAnswer(recorded.log)).toBe('Within 14 days of the return.');
    // The retrieval is no step of its own (docs/adapters/langchain.md, "What it cannot see"): it is in the prompt.
    expect(recorded.log.filter((e) => e.hook === 'pre_tool_call')).toEqual([]);
    await sameOnNative(recorded);
  });
});
