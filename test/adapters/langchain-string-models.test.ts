// LangChain v1 programs that name their models with strings, as its docs
// write most of them: `createAgent({ model: 'openai:gpt-4.1' })`,
// `initChatModel('claude-sonnet-4-5', { modelProvider: 'anthropic' })`, a
// configurable model switched per call, and middleware given a string
// (`summarizationMiddleware`, `llmToolSelectorMiddleware`,
// `modelFallbackMiddleware`). LangChain builds the real ChatOpenAI and
// ChatAnthropic itself, so the test points them where a user's deployment
// does: OPENAI_BASE_URL and ANTHROPIC_BASE_URL, at a loopback server speaking
// the providers' JSON and SSE (test/support/provider-wire.ts). What the program
// saw (the wire, the messages and their usage_metadata) against what the
// hooks, ATIF, ATOF and `view` say, on memory and native alike.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tool } from '@langchain/core/tools';
import type { AIMessage, BaseMessage, BaseMessageLike, ToolMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent, initChatModel, llmToolSelectorMiddleware, modelFallbackMiddleware, summarizationMiddleware } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv } from '../support/doc-snippets.ts';
import { providersOnLoopback } from '../support/provider-loopback.ts';
import { anthropicMessage, anthropicStream, chatCompletion, openAiError, openAiResponse, openAiResponseEither } from '../support/provider-wire.ts';
import { expectRetriedFirstCall, finishedRun, recordedPlugin, rowWithoutDuration, viewLines, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const MINI = 'gpt-4.1-mini-2025-04-14';
const SELECTOR = 'gpt-4o-mini-2024-07-18';
const CLAUDE = 'claude-sonnet-4-5-20250929';

const providers = providersOnLoopback();
const serve = providers.serve;

const getWeather = tool(async ({ city }) => `It is sunny and 21C in ${city}.`, {
  name: 'get_weather',
  description: 'Get the weather for a city',
  schema: z.object({ city: z.string() }),
});
const lookup = (name: string) => tool(async ({ city }) => `${name} for ${city}: nothing unusual.`, { name, description: `Get the ${name.replace('get_', '')} for a city`, schema: z.object({ city: z.string() }) });

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent' && step.llm_call_count !== 0);
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const stepModels = (doc: AtifDoc): string[] => agentSteps(doc).map((step) => step.model_name);
const recordedCounts = (doc: AtifDoc): Array<[number, number]> => agentSteps(doc).filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
/** Each tool call's outcome in the trajectory: [call id, content]. */
const observed = (doc: AtifDoc): Array<[string, string]> =>
  (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).filter((r: AtifDoc) => r.source_call_id !== undefined).map((r: AtifDoc) => [r.source_call_id, String(r.content)] as [string, string]));
/** The tool messages the model read: [tool_call_id, content]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string]> => messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content)]);
/** The AI messages' usage_metadata as LangChain reported it: [input, output]. */
const reported = (messages: BaseMessage[]): Array<[number, number]> =>
  messages.map((m) => (m as AIMessage).usage_metadata).filter((usage) => usage !== undefined).map((usage) => [usage!.input_tokens, usage!.output_tokens]);
/** The API calls the hooks recorded: [hook, model asked for, provider, the model that answered]. */
const apiCalls = (recorded: Recorded): unknown[][] =>
  recorded.log.filter((e) => e.hook.endsWith('api_request') || e.hook === 'api_request_error').map((e) => [e.hook, e.payload.model, e.payload.provider, e.payload.response_model ?? null]);
/** The requests the providers received: [path, model]. */
const wire = (requests: ReturnType<typeof serve>['requests']): Array<[string, string]> => requests.map((r) => [new URL(r.url).pathname, r.body.model]);
/** `view`'s LLM rows of a file: what a reader sees of each call. */
const llmRows = async (recorded: Recorded, of: 'atif' | 'atof'): Promise<string[]> => (await viewLines(recorded, of)).filter((line) => /─ (✗ )?LLM /.test(line)).map(rowWithoutDuration);

describe('docs/adapters/langchain.md, "Models named by a string"', () => {
  const snippet = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/langchain.md'), 'utf8')).find((code) => code.includes("summarizationMiddleware({ model: 'openai:gpt-4.1-mini'"));
  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime}, LangChain's ChatOpenAI at OPENAI_BASE_URL, and records the run`, async () => {
      if (snippet === undefined) expect.fail('the page has no snippet with a string model and a string middleware model');
      const { requests } = serve([
        openAiResponse({ id: 'resp_01', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
        openAiResponse({ id: 'resp_02', model: GPT, text: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 7 } }),
      ]);
      const result = await runSnippet(snippet, runtime, 'langchain-string', userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${providers.url}/v1`, NO_COLOR: '1' }));
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is sunny in Paris.');
        // Under its trigger the summarization middleware calls no model.
        expect(wire(requests)).toEqual([['/v1/responses', 'gpt-4.1'], ['/v1/responses', 'gpt-4.1']]);
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8')) as AtifDoc;
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.agent.name).toBe('weather_agent');
        expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
        expect(stepModels(doc)).toEqual([GPT, GPT]);
        expect(observed(doc)).toEqual([['call_paris', 'It is sunny in Paris.']]);
        expect(recordedCounts(doc)).toEqual([[80, 15], [120, 7]]);
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});

describe('createAgent with a string model', () => {
  it("'openai:gpt-4.1': LangChain builds ChatOpenAI on the Responses API; each request one API call, the answer's model, the tokens usage_metadata, the tools' results what the model read", async () => {
    const { requests } = serve([
      openAiResponse({ id: 'resp_01', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
      openAiResponse({ id: 'resp_02', model: GPT, text: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11, cached: 64 } }),
    ]);
    const recorded = recordedPlugin('lc-string-openai');
    const agent = createAgent({ model: 'openai:gpt-4.1', tools: [getWeather], name: 'weather_agent' });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    // createAgent gives an `openai:` string `useResponsesApi`.
    expect(wire(requests)).toEqual([['/v1/responses', 'gpt-4.1'], ['/v1/responses', 'gpt-4.1']]);
    const { doc, atof } = await finishedRun(recorded);
    expect(doc.agent.name).toBe('weather_agent');
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    // One API call per request, under the model the string named and the provider LangChain's model says; the answer's model is the dated one.
    expect(apiCalls(recorded)).toEqual([
      ['pre_api_request', 'gpt-4.1', 'openai', null],
      ['post_api_request', 'gpt-4.1', 'openai', GPT],
      ['pre_api_request', 'gpt-4.1', 'openai', null],
      ['post_api_request', 'gpt-4.1', 'openai', GPT],
    ]);
    expect(stepModels(doc)).toEqual([GPT, GPT]);
    // The Responses API has no finish reason, and LangChain reports none: none is made up.
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload.finish_reason)).toEqual([null, null]);
    // The messages as sent: the tool's result in the second request, as the model read it.
    const sent = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => (e.payload.request as AtifDoc).body.messages);
    expect(sent[1].at(-1)).toEqual({ role: 'tool', content: 'It is sunny and 21C in Paris.', tool_call_id: 'call_paris' });
    expect(requests[1]!.body.input.at(-1)).toEqual({ type: 'function_call_output', call_id: 'call_paris', output: 'It is sunny and 21C in Paris.' });
    expect(observed(doc)).toEqual(toolMessages(result.messages));
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect(recordedCounts(doc)).toEqual([[80, 15], [120, 11]]);
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 200, total_completion_tokens: 26, total_cached_tokens: 64 });
    expect(atof.filter((e) => e.kind === 'scope' && e.category === 'llm' && e.scope_category === 'start').map((e) => e.category_profile?.model_name)).toEqual(['gpt-4.1', 'gpt-4.1']);
    // `view` of either file names the answer's model and the one asked for, the same rows.
    for (const of of ['atif', 'atof'] as const) {
      expect(await llmRows(recorded, of)).toEqual([`LLM ${GPT} (asked gpt-4.1)  80 in / 15 out  → get_weather`, `LLM ${GPT} (asked gpt-4.1)  120 in (64 cached) / 11 out  It is sunny and 21C in Paris.`]);
    }
    await sameOnNative(recorded);
  });

  it("'openai:gpt-4.1' with responseFormat: LangChain asks the Responses API for JSON (text.format); the structured response is the turn's answer", async () => {
    const { requests } = serve([openAiResponse({ id: 'resp_01', model: GPT, text: '{"city":"Paris","temperature_c":21}', usage: { prompt_tokens: 90, completion_tokens: 12 } })]);
    const recorded = recordedPlugin('lc-string-structured');
    const WeatherReport = z.object({ city: z.string(), temperature_c: z.number() }).meta({ title: 'WeatherReport' });
    const agent = createAgent({ model: 'openai:gpt-4.1', tools: [getWeather], responseFormat: WeatherReport });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests[0]!.body.text.format.type).toBe('json_schema');
    expect(result.structuredResponse).toEqual({ city: 'Paris', temperature_c: 21 });
    const { doc } = await finishedRun(recorded);
    expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, '{"city":"Paris","temperature_c":21}']]);
    expect(recorded.log.find((e) => e.hook === 'post_llm_call')!.payload.assistant_response).toBe(JSON.stringify(result.structuredResponse));
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  for (const [label, model, mode] of [
    ['openai:gpt-4.1', 'openai:gpt-4.1', 'messages'],
    ['openai:gpt-4.1', 'openai:gpt-4.1', 'updates'],
    ['anthropic:claude-sonnet-4-5', 'anthropic:claude-sonnet-4-5', 'messages'],
  ] as const) {
    it(`'${label}' streamed (streamMode "${mode}"): the same calls, tools and tokens as the stream gave the program`, async () => {
      const openai = model.startsWith('openai:');
      const { requests } = serve(
        openai
          ? [
              openAiResponseEither({ id: 'resp_01', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
              openAiResponseEither({ id: 'resp_02', model: GPT, text: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
            ]
          : [
              anthropicStream({ id: 'msg_01', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 300, output_tokens: 20 } }),
              anthropicStream({ id: 'msg_02', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny and 21C in Paris.' }], usage: { input_tokens: 350, output_tokens: 11 } }),
            ],
      );
      const recorded = recordedPlugin(`lc-string-stream-${mode}`);
      const agent = createAgent({ model, tools: [getWeather] });
      const chunks: unknown[] = [];
      for await (const chunk of await agent.stream({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { streamMode: mode, callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })) chunks.push(chunk);
      expect(requests.every((r) => r.body.stream === true)).toBe(mode === 'messages' || !openai);
      const { doc } = await finishedRun(recorded);
      const callId = openai ? 'call_paris' : 'toolu_paris';
      expect(observed(doc)).toEqual([[callId, 'It is sunny and 21C in Paris.']]);
      expect(stepModels(doc)).toEqual(openai ? [GPT, GPT] : [CLAUDE, CLAUDE]);
      expect(recorded.log.filter((e) => e.hook === 'post_api_request')).toHaveLength(requests.length);
      // What the stream said of usage: the updates' messages, or the chunks' usage_metadata summed per message.
      const said: Array<[number, number]> = [];
      if (mode === 'updates') {
        for (const update of chunks as Array<Record<string, { messages?: BaseMessage[] }>>) said.push(...reported(Object.values(update).flatMap((u) => u.messages ?? [])));
      } else {
        const byId = new Map<string, [number, number]>();
        for (const [message] of chunks as Array<[AIMessage]>) {
          const usage = message.usage_metadata;
          if (usage === undefined || message.id === undefined) continue;
          const sum = byId.get(message.id) ?? [0, 0];
          byId.set(message.id, [sum[0] + usage.input_tokens, sum[1] + usage.output_tokens]);
        }
        said.push(...byId.values());
      }
      expect(recordedCounts(doc)).toEqual(said);
      // Anthropic's stream: LangChain adds message_start's placeholder output token (docs/adapters/langchain.md, Tokens).
      expect(recordedCounts(doc)).toEqual(openai ? [[80, 15], [120, 11]] : [[300, 21], [350, 12]]);
      await sameOnNative(recorded);
    });
  }
});

describe('initChatModel', () => {
  const loopReplies = () => [
    anthropicMessage({ id: 'msg_01', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_boston', name: 'get_weather', input: { city: 'Boston' } }], usage: { input_tokens: 260, output_tokens: 30 } }),
    anthropicMessage({ id: 'msg_02', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny and 21C in Boston.' }], usage: { input_tokens: 330, output_tokens: 12 } }),
  ];

  it('bindTools and the tool-calling loop as the docs write it, in one runnable: one turn, its calls and the tool’s result', async () => {
    const { requests } = serve(loopReplies());
    const recorded = recordedPlugin('lc-string-loop');
    const model = await initChatModel('claude-sonnet-4-5', { modelProvider: 'anthropic' });
    const modelWithTools = model.bindTools([getWeather]);
    const chat = RunnableLambda.from(async (question: string) => {
      const messages: BaseMessageLike[] = [{ role: 'user', content: question }];
      const ai = await modelWithTools.invoke(messages);
      messages.push(ai);
      for (const toolCall of ai.tool_calls ?? []) messages.push(await getWeather.invoke(toolCall));
      return (await modelWithTools.invoke(messages)).content;
    }).withConfig({ runName: 'weather_chat' });
    const answer = await chat.invoke('What is the weather in Boston?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(wire(requests)).toEqual([['/v1/messages', 'claude-sonnet-4-5'], ['/v1/messages', 'claude-sonnet-4-5']]);
    const { doc } = await finishedRun(recorded);
    expect(doc.agent.name).toBe('weather_chat');
    expect(userSteps(doc)).toEqual(['What is the weather in Boston?']);
    expect(apiCalls(recorded).filter(([hook]) => hook === 'post_api_request')).toEqual([
      ['post_api_request', 'claude-sonnet-4-5', 'anthropic', CLAUDE],
      ['post_api_request', 'claude-sonnet-4-5', 'anthropic', CLAUDE],
    ]);
    expect(observed(doc)).toEqual([['toolu_boston', 'It is sunny and 21C in Boston.']]);
    expect(agentSteps(doc).map((step) => step.message)).toEqual(['', answer]);
    expect(recordedCounts(doc)).toEqual([[260, 30], [330, 12]]);
    await sameOnNative(recorded);
  });

  it('the same loop bare, with the handler on each call and a sessionId: one turn, the tool your program invokes a span of it with its result', async () => {
    const { requests } = serve(loopReplies());
    const recorded = recordedPlugin('lc-string-loop-bare');
    const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'weather-chat' });
    const model = await initChatModel('claude-sonnet-4-5', { modelProvider: 'anthropic' });
    const modelWithTools = model.bindTools([getWeather]);
    const messages: BaseMessageLike[] = [{ role: 'user', content: 'What is the weather in Boston?' }];
    const ai = await modelWithTools.invoke(messages, { callbacks: [handler] });
    messages.push(ai);
    for (const toolCall of ai.tool_calls ?? []) messages.push(await getWeather.invoke(toolCall, { callbacks: [handler] }));
    const final = await modelWithTools.invoke(messages, { callbacks: [handler] });
    handler.close();
    expect(requests).toHaveLength(2);
    const { doc } = await finishedRun(recorded);
    expect(doc.session_id).toBe('weather-chat');
    // The second request continues the first's conversation (its answer, then the tool's message): the same turn.
    expect(recorded.log.filter((e) => e.hook === 'pre_llm_call')).toHaveLength(1);
    expect(userSteps(doc)).toEqual(['What is the weather in Boston?']);
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.result])).toEqual([['toolu_boston', 'ok', 'It is sunny and 21C in Boston.']]);
    expect(observed(doc)).toEqual(toolMessages(messages.filter((m): m is BaseMessage => typeof m === 'object' && 'getType' in m)));
    expect(observed(doc)).toEqual([['toolu_boston', 'It is sunny and 21C in Boston.']]);
    expect(agentSteps(doc).map((step) => step.message)).toEqual(['', final.content]);
    expect(recordedCounts(doc)).toEqual(reported([ai, final]));
    await sameOnNative(recorded);
  });

  it('a configurable model switched per call (configurable.model): each call under the model and provider it went to', async () => {
    const { requests } = serve([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: 'Hello from GPT.', usage: { prompt_tokens: 10, completion_tokens: 4 } }),
      anthropicMessage({ id: 'msg_01', model: CLAUDE, content: [{ type: 'text', text: 'Hello from Claude.' }], usage: { input_tokens: 11, output_tokens: 5 } }),
    ]);
    const recorded = recordedPlugin('lc-string-configurable');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const model = await initChatModel('gpt-4.1', { configurableFields: ['model', 'modelProvider'] });
    const gpt = await model.invoke('Say hello.', { callbacks: [handler] });
    const claude = await model.invoke('Say hello.', { configurable: { model: 'claude-sonnet-4-5' }, callbacks: [handler] });
    expect(wire(requests)).toEqual([['/v1/chat/completions', 'gpt-4.1'], ['/v1/messages', 'claude-sonnet-4-5']]);
    const { atif, counters } = await recorded.finish();
    expect(counters.errors).toBe(0);
    // Two model calls on their own: two sessions, each its own model, provider and tokens.
    expect(atif).toHaveLength(2);
    for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
    expect(atif.map((doc) => [userSteps(doc), stepModels(doc), recordedCounts(doc)])).toEqual([
      [['Say hello.'], [GPT], reported([gpt])],
      [['Say hello.'], [CLAUDE], reported([claude])],
    ]);
    expect(apiCalls(recorded).filter(([hook]) => hook === 'pre_api_request')).toEqual([
      ['pre_api_request', 'gpt-4.1', 'openai', null],
      ['pre_api_request', 'claude-sonnet-4-5', 'anthropic', null],
    ]);
    await sameOnNative(recorded);
  });

  it('createAgent on a configurable model, switched on the thread’s second turn: one trajectory, each step its own model and provider', async () => {
    const { requests } = serve([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 60, completion_tokens: 7 } }),
      anthropicMessage({ id: 'msg_01', model: CLAUDE, content: [{ type: 'text', text: 'It is rainy in Rome.' }], usage: { input_tokens: 90, output_tokens: 8 } }),
    ]);
    const recorded = recordedPlugin('lc-string-configurable-agent');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const agent = createAgent({ model: await initChatModel('gpt-4.1', { configurableFields: ['model', 'modelProvider'] }), tools: [getWeather], checkpointer: new MemorySaver() });
    await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [handler], configurable: { thread_id: 'weather-thread' } });
    const second = await agent.invoke({ messages: [{ role: 'user', content: 'And in Rome?' }] }, { callbacks: [handler], configurable: { thread_id: 'weather-thread', model: 'claude-sonnet-4-5' } });
    handler.close();
    expect(wire(requests)).toEqual([['/v1/chat/completions', 'gpt-4.1'], ['/v1/messages', 'claude-sonnet-4-5']]);
    const { doc } = await finishedRun(recorded);
    expect(doc.session_id).toBe('weather-thread');
    expect(userSteps(doc)).toEqual(['Weather in Paris?', 'And in Rome?']);
    expect(stepModels(doc)).toEqual([GPT, CLAUDE]);
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload.provider)).toEqual(['openai', 'anthropic']);
    expect(recordedCounts(doc)).toEqual(reported(second.messages));
    await sameOnNative(recorded);
  });
});

describe('middleware given a string model', () => {
  it("summarizationMiddleware({ model: 'openai:gpt-4.1-mini' }): the summary call is heard, a summarization sub-agent with its own model and tokens, counted once", async () => {
    const { requests } = serve([
      chatCompletion({ id: 'chatcmpl-sum', model: MINI, content: 'The user asked about Paris (sunny) and Lyon (rainy).', usage: { prompt_tokens: 412, completion_tokens: 17 } }),
      openAiResponse({ id: 'resp_01', model: GPT, text: 'It is sunny and 21C in Rome.', usage: { prompt_tokens: 140, completion_tokens: 11 } }),
    ]);
    const recorded = recordedPlugin('lc-string-summarization');
    const agent = createAgent({
      model: 'openai:gpt-4.1',
      tools: [getWeather],
      middleware: [summarizationMiddleware({ model: 'openai:gpt-4.1-mini', trigger: { messages: 5 }, keep: { messages: 1 } })],
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
    // The middleware's string is initChatModel's: Chat Completions, not the agent's Responses API.
    expect(wire(requests)).toEqual([['/v1/chat/completions', 'gpt-4.1-mini'], ['/v1/responses', 'gpt-4.1']]);
    const { doc } = await finishedRun(recorded);
    expect(userSteps(doc)).toEqual(['And in Rome?']);
    expect(stepModels(doc)).toEqual([GPT]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    const [summary] = doc.subagent_trajectories as AtifDoc[];
    expect((doc.subagent_trajectories as AtifDoc[]).map((child) => child.agent.name)).toEqual(['summarization']);
    expect(summary!.session_id).toBe(`${doc.session_id}:sub:${recorded.log.find((e) => e.hook === 'subagent_start')!.payload.tool_call_id}`);
    expect(userSteps(summary!)).toEqual([requests[0]!.body.messages[0].content]);
    expect(agentSteps(summary!).map((step) => [step.model_name, step.message])).toEqual([[MINI, 'The user asked about Paris (sunny) and Lyon (rainy).']]);
    expect(recordedCounts(summary!)).toEqual([[412, 17]]);
    // Every request the providers received is one API call, each in the session it belongs to.
    expect(recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => [e.payload.session_id, e.payload.model])).toEqual([
      [summary!.session_id, 'gpt-4.1-mini'],
      [doc.session_id, 'gpt-4.1'],
    ]);
    await sameOnNative(recorded);
  });

  const selectorReplies = () => [
    chatCompletion({ id: 'chatcmpl-sel', model: SELECTOR, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
    openAiResponse({ id: 'resp_01', model: GPT, text: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
  ];
  const kit = () => [getWeather, lookup('get_news'), lookup('get_stocks')];

  it("llmToolSelectorMiddleware({ model: 'openai:gpt-4o-mini' }) as its docs write it: LangChain builds the selector without callbacks and calls it with none; nothing reaches a handler", async () => {
    const { requests } = serve(selectorReplies());
    const recorded = recordedPlugin('lc-string-selector');
    const agent = createAgent({ model: 'openai:gpt-4.1', tools: kit(), middleware: [llmToolSelectorMiddleware({ model: 'openai:gpt-4o-mini', maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(wire(requests)).toEqual([['/v1/chat/completions', 'gpt-4o-mini'], ['/v1/responses', 'gpt-4.1']]);
    const { doc } = await finishedRun(recorded);
    // Still the documented limit (docs/adapters/langchain.md, "What it cannot see"): one request of two is recorded.
    expect(doc.subagent_trajectories).toBeUndefined();
    expect(apiCalls(recorded)).toEqual([
      ['pre_api_request', 'gpt-4.1', 'openai', null],
      ['post_api_request', 'gpt-4.1', 'openai', GPT],
    ]);
    // What it chose shows in the tools the agent's request offered.
    expect((recorded.log.find((e) => e.hook === 'pre_api_request')!.payload.request as AtifDoc).body.tools.map((t: AtifDoc) => t.function.name)).toEqual(['get_weather']);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  });

  it("llmToolSelectorMiddleware with initChatModel('openai:gpt-4o-mini', { callbacks: [handler] }): each selection is an llmToolSelector sub-agent with its model and tokens", async () => {
    const { requests } = serve(selectorReplies());
    const recorded = recordedPlugin('lc-string-selector-heard');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const selector = await initChatModel('openai:gpt-4o-mini', { callbacks: [handler] });
    const agent = createAgent({ model: 'openai:gpt-4.1', tools: kit(), middleware: [llmToolSelectorMiddleware({ model: selector, maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [handler] });
    expect(requests).toHaveLength(2);
    const { doc } = await finishedRun(recorded);
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    expect(stepModels(doc)).toEqual([GPT]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    const children = doc.subagent_trajectories as AtifDoc[];
    expect(children.map((child) => [child.agent.name, userSteps(child), stepModels(child), recordedCounts(child)])).toEqual([
      ['llmToolSelector', ['What is the weather in Paris?'], [SELECTOR], [[96, 8]]],
    ]);
    expect(agentSteps(children[0]!)[0]!.message).toBe('{"tools":["get_weather"]}');
    expect(recorded.log.filter((e) => e.hook === 'post_api_request')).toHaveLength(requests.length);
    await sameOnNative(recorded);
  });

  it("modelFallbackMiddleware('anthropic:claude-sonnet-4-5'): the primary’s 500 and the fallback LangChain builds from the string are two attempts of one request, each with its model and provider", async () => {
    const { requests } = serve([
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      anthropicMessage({ id: 'msg_fb', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 95, output_tokens: 9 } }),
    ]);
    const recorded = recordedPlugin('lc-string-fallback');
    // The primary without the client's own retries: a 500 is retried inside one LLM run (with back-off), which no handler
    // sees ("What it cannot see").
    const primary = await initChatModel('openai:gpt-4.1', { maxRetries: 0 });
    const agent = createAgent({ model: primary, tools: [getWeather], middleware: [modelFallbackMiddleware('anthropic:claude-sonnet-4-5')] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Is it sunny in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(wire(requests)).toEqual([['/v1/chat/completions', 'gpt-4.1'], ['/v1/messages', 'claude-sonnet-4-5']]);
    const { doc } = await finishedRun(recorded);
    const attempts = expectRetriedFirstCall(recorded.log, true);
    expect(attempts.map((e) => [e.hook, e.payload.model, e.payload.provider])).toEqual([
      ['pre_api_request', 'gpt-4.1', 'openai'],
      ['api_request_error', 'gpt-4.1', 'openai'],
      ['pre_api_request', 'claude-sonnet-4-5', 'anthropic'],
      ['post_api_request', 'claude-sonnet-4-5', 'anthropic'],
    ]);
    expect(attempts[1]!.payload).toMatchObject({ status_code: 500, error: { type: 'InternalServerError' } });
    expect(agentSteps(doc).map((step) => [step.model_name, step.extra?.invocation?.status])).toEqual([
      ['gpt-4.1', 'failed'],
      [CLAUDE, 'completed'],
    ]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    for (const of of ['atif', 'atof'] as const) {
      expect(await llmRows(recorded, of)).toEqual(['✗ LLM gpt-4.1  ERROR InternalServerError: 500 The server had an error while processing your request.', `LLM ${CLAUDE} (asked claude-sonnet-4-5)  95 in / 9 out  It is sunny in Paris.`]);
    }
    await sameOnNative(recorded);
  });
});

