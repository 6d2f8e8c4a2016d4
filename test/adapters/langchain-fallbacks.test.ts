// LangChain's classic runnable wrappers, as LCEL programs write them: `model.withFallbacks([backup])` (alone, in a
// prompt | model | parser chain, after `bindTools`), `model.withRetry()`, ChatOpenAI's own `maxRetries`,
// `RunnableParallel` with two model calls at once, `RunnableBranch` and a `RunnableLambda` calling a model. The real
// ChatOpenAI and ChatAnthropic talk to a fake fetch speaking their wire (test/support/provider-wire.ts; a refusal
// is the provider's status and JSON error body). Each program runs with the handler in `callbacks` and under
// `instrumentLangChain(hooks)`, and each trajectory is held to what the program got: every attempt an API call with
// its model, provider and status, the answering one's tokens, the answer, one user step.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { RunnableBranch, RunnableLambda, RunnableParallel, RunnableSequence } from '@langchain/core/runnables';
import type { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import { instrumentLangChain, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicError, anthropicMessage, anthropicStream, chatCompletion, openAiError, scriptedFetch, type WireReply } from '../support/provider-wire.ts';
import { getWeather } from './langchain-checks.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { shortLangChainRetryWaits } from '../support/langchain-retry-waits.ts';

shortLangChainRetryWaits();

const CLAUDE = 'claude-sonnet-4-5-20250929';
const GPT = 'gpt-4.1-2025-04-14';
const MINI = 'gpt-4.1-mini-2025-04-14';

const openai = (fetch: typeof globalThis.fetch, more: Record<string, unknown> = {}) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, ...more });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
const claudeSays = (text: string, input: number, output: number): WireReply => anthropicMessage({ id: 'msg_fb', model: CLAUDE, content: [{ type: 'text', text }], usage: { input_tokens: input, output_tokens: output } });

type Config = { callbacks?: NemoRelayCallbackHandler[] };
type Mode = 'callbacks' | 'instrumented';
const MODES: Mode[] = ['callbacks', 'instrumented'];

/** Runs the program with the handler in `callbacks`, or under `instrumentLangChain` with no `callbacks` at all. */
async function runAs<T>(mode: Mode, recorded: Recorded, program: (config: Config) => Promise<T>): Promise<T> {
  if (mode === 'callbacks') return program({ callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
  const uninstall = instrumentLangChain(recorded.hooks);
  try {
    return await program({});
  } finally {
    uninstall();
  }
}

/** The run's one trajectory, valid, nothing lost, the same on native. */
async function onlyDoc(recorded: Recorded): Promise<AtifDoc> {
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  await sameOnNative(recorded);
  return atif[0]!;
}

const agentSteps = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => String(step.message));
/** Each API attempt the hooks tell: [hook, api_request_id, retry_count, model, provider, status_code]. */
const attemptsOf = (log: Recorded['log']) =>
  log
    .filter((e) => e.hook === 'pre_api_request' || e.hook === 'api_request_error' || e.hook === 'post_api_request')
    .map((e) => [e.hook, e.payload.api_request_id, e.payload.retry_count ?? null, e.payload.model, e.payload.provider, e.payload.status_code ?? null]);
/** Each agent step: [model, invocation status, prompt tokens, completion tokens, message]. */
const stepsOf = (doc: AtifDoc) => agentSteps(doc).map((step) => [step.model_name, step.extra?.invocation?.status, step.metrics?.prompt_tokens ?? null, step.metrics?.completion_tokens ?? null, step.message]);
const turnAnswer = (log: Recorded['log']): unknown => log.find((e) => e.hook === 'post_llm_call')?.payload.assistant_response;
const usageOf = (message: AIMessage): [number, number] => [message.usage_metadata!.input_tokens, message.usage_metadata!.output_tokens];

describe.each(MODES)('LangChain runnable wrappers (%s)', (mode) => {
  it('model.withFallbacks([backup]): ChatOpenAI refused with a 429, ChatAnthropic answers: two attempts of one request, the backup’s tokens, one turn', async () => {
    const { fetch, requests } = scriptedFetch([openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.'), claudeSays('It is sunny in Paris.', 95, 9)]);
    const recorded = recordedPlugin(`lc-with-fallbacks-${mode}`);
    const model = openai(fetch).withFallbacks([anthropic(fetch)]);
    const answer = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config));
    expect(requests.map((r) => new URL(r.url).host)).toEqual(['api.openai.com', 'api.anthropic.com']);
    expect(answer.content).toBe('It is sunny in Paris.');
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    const id = attempts[0]![1];
    expect(attempts).toEqual([
      ['pre_api_request', id, 0, 'gpt-4.1', 'openai', null],
      ['api_request_error', id, 0, 'gpt-4.1', 'openai', 429],
      ['pre_api_request', id, 1, 'claude-sonnet-4-5', 'anthropic', null],
      ['post_api_request', id, null, 'claude-sonnet-4-5', 'anthropic', null],
    ]);
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?']);
    expect(stepsOf(doc)).toEqual([
      ['gpt-4.1', 'failed', null, null, expect.anything()],
      [CLAUDE, 'completed', ...usageOf(answer), 'It is sunny in Paris.'],
    ]);
    // The refused attempt's step says which status the provider refused it with, as the adapters page promises.
    expect(agentSteps(doc)[0]!.extra?.llm_response?.error).toMatchObject({ status_code: 429 });
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 95, total_completion_tokens: 9 });
    expect(turnAnswer(recorded.log)).toBe('It is sunny in Paris.');
  });

  it('prompt.pipe(model.withFallbacks([backup])).pipe(new StringOutputParser()): a 500 then the backup’s answer, the parsed string as the turn’s answer', async () => {
    const { fetch, requests } = scriptedFetch([openAiError(500, 'server_error', 'The server had an error while processing your request.'), claudeSays('Bonjour !', 31, 4)]);
    const recorded = recordedPlugin(`lc-fallbacks-chain-${mode}`);
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Translate the user’s text to {language}.'],
      ['human', '{text}'],
    ]);
    const chain = prompt.pipe(openai(fetch).withFallbacks([anthropic(fetch)])).pipe(new StringOutputParser());
    const answer = await runAs(mode, recorded, (config) => chain.invoke({ language: 'French', text: 'Hello!' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests).toHaveLength(2);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 500],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Hello!']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', 31, 4],
    ]);
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });

  it('model.bindTools(tools).withFallbacks([backup.bindTools(tools)]): both attempts offered the tool, the backup’s call under Anthropic’s id', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(503, 'server_error', 'The server is overloaded.'),
      anthropicMessage({ id: 'msg_tool', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 180, output_tokens: 21 }, stopReason: 'tool_use' }),
    ]);
    const recorded = recordedPlugin(`lc-fallbacks-tools-${mode}`);
    const model = openai(fetch).bindTools([getWeather]).withFallbacks([anthropic(fetch).bindTools([getWeather])]);
    const answer = await runAs(mode, recorded, (config) => model.invoke('What is the weather in Paris?', config));
    expect(requests.map((r) => r.body.tools.map((t: { name?: string; function?: { name: string } }) => t.name ?? t.function?.name))).toEqual([['get_weather'], ['get_weather']]);
    expect(answer.tool_calls?.map((call) => [call.id, call.args])).toEqual([['toolu_paris', { city: 'Paris' }]]);
    const doc = await onlyDoc(recorded);
    // Each attempt offered the tool with its schema, as its request did (Anthropic's `input_schema`, OpenAI's `parameters`).
    const offered = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => (e.payload.request as AtifDoc).body.tools.map((t: AtifDoc) => [t.function.name, t.function.parameters?.properties]));
    expect(offered).toEqual([
      [['get_weather', { city: { type: 'string' } }]],
      [['get_weather', { city: { type: 'string' } }]],
    ]);
    expect(new Set(attemptsOf(recorded.log).map(([, id]) => id)).size).toBe(1);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', 180, 21],
    ]);
    expect(agentSteps(doc).at(-1)!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['toolu_paris', 'get_weather', { city: 'Paris' }]]);
    expect(agentSteps(doc).at(-1)!.extra?.llm_response?.finish_reason).toBe('tool_calls');
  });

  it('every fallback refused: each attempt failed with its status, the turn failed with the error the program caught (the primary’s)', async () => {
    const { fetch } = scriptedFetch([openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.'), anthropicError(529, 'overloaded_error', 'Overloaded')]);
    const recorded = recordedPlugin(`lc-fallbacks-all-fail-${mode}`);
    const model = openai(fetch).withFallbacks([anthropic(fetch)]);
    const caught = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config).then(() => undefined, (error: unknown) => error as Error));
    expect(caught?.message).toContain('Rate limit reached for gpt-4.1.');
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 429],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['api_request_error', true, 1, 'claude-sonnet-4-5', 529],
    ]);
    expect(stepsOf(doc).map(([model, status]) => [model, status])).toEqual([
      ['gpt-4.1', 'failed'],
      ['claude-sonnet-4-5', 'failed'],
    ]);
    expect(recorded.log.some((e) => e.hook === 'post_llm_call')).toBe(false);
    const end = recorded.log.find((e) => e.hook === 'on_session_end')!.payload;
    expect(end).toMatchObject({ completed: false, failed: true });
    expect(String(end.turn_exit_reason)).toContain('Rate limit reached for gpt-4.1.');
  });

  it('model.withRetry({ stopAfterAttempt: 3 }): two refusals then an answer, three attempts of one request (retry_count 0, 1, 2), the answer’s tokens', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(503, 'server_error', 'The server is overloaded.'),
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 14, completion_tokens: 7 } }),
    ]);
    const recorded = recordedPlugin(`lc-with-retry-${mode}`);
    const model = openai(fetch).withRetry({ stopAfterAttempt: 3 });
    const answer = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config));
    expect(requests).toHaveLength(3);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    const id = attempts[0]![1];
    expect(attempts).toEqual([
      ['pre_api_request', id, 0, 'gpt-4.1', 'openai', null],
      ['api_request_error', id, 0, 'gpt-4.1', 'openai', 503],
      ['pre_api_request', id, 1, 'gpt-4.1', 'openai', null],
      ['api_request_error', id, 1, 'gpt-4.1', 'openai', 500],
      ['pre_api_request', id, 2, 'gpt-4.1', 'openai', null],
      ['post_api_request', id, null, 'gpt-4.1', 'openai', null],
    ]);
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      ['gpt-4.1', 'failed', null, null],
      [GPT, 'completed', ...usageOf(answer)],
    ]);
    expect(turnAnswer(recorded.log)).toBe('It is sunny in Paris.');
  });

  it('prompt.pipe(model).withRetry(): the chain runs again after a 500; its model call is the failed call’s retry, as when the model alone is retried', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'Bonjour !', usage: { prompt_tokens: 25, completion_tokens: 4 } }),
    ]);
    const recorded = recordedPlugin(`lc-chain-with-retry-${mode}`);
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Translate the user’s text to {language}.'],
      ['human', '{text}'],
    ]);
    const chain = prompt.pipe(openai(fetch)).pipe(new StringOutputParser()).withRetry({ stopAfterAttempt: 2 });
    const answer = await runAs(mode, recorded, (config) => chain.invoke({ language: 'French', text: 'Hello!' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests).toHaveLength(2);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, , , status]) => [hook, id === attempts[0]![1], retry, status])).toEqual([
      ['pre_api_request', true, 0, null],
      ['api_request_error', true, 0, 500],
      ['pre_api_request', true, 1, null],
      ['post_api_request', true, null, null],
    ]);
    expect(userSteps(doc)).toEqual(['Hello!']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      [GPT, 'completed', 25, 4],
    ]);
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });

  it('chain.withFallbacks([backupChain]), as LangChain’s docs fall back from one chain to another: the backup chain’s model call is the failed call’s next attempt', async () => {
    const { fetch, requests } = scriptedFetch([openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.'), claudeSays('Bonjour !', 31, 4)]);
    const recorded = recordedPlugin(`lc-chain-fallbacks-${mode}`);
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Translate the user’s text to {language}.'],
      ['human', '{text}'],
    ]);
    const chain = prompt.pipe(openai(fetch)).pipe(new StringOutputParser());
    const backupChain = prompt.pipe(anthropic(fetch)).pipe(new StringOutputParser());
    const answer = await runAs(mode, recorded, (config) => chain.withFallbacks([backupChain]).invoke({ language: 'French', text: 'Hello!' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests).toHaveLength(2);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 429],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Hello!']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', 31, 4],
    ]);
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });

  it('model.withFallbacks([backupChain]): the primary model refused, the backup chain’s model call is its next attempt', async () => {
    const { fetch } = scriptedFetch([openAiError(500, 'server_error', 'The server had an error while processing your request.'), claudeSays('Sunny, 21C.', 40, 6)]);
    const recorded = recordedPlugin(`lc-model-to-chain-${mode}`);
    const backupChain = ChatPromptTemplate.fromMessages([['system', 'Answer in five words at most.'], ['placeholder', '{messages}']]).pipe(anthropic(fetch));
    const model = openai(fetch).withFallbacks([RunnableLambda.from((question: string) => ({ messages: [['human', question]] })).pipe(backupChain)]);
    const answer = await runAs(mode, recorded, (config) => model.invoke('Weather in Paris?', config));
    expect(answer.content).toBe('Sunny, 21C.');
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 500],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Weather in Paris?']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', 40, 6],
    ]);
  });

  it('model.withFallbacks([backup]).stream(): the primary refused before its stream began, the backup streamed the answer: one request, the streamed answer’s tokens', async () => {
    const { fetch } = scriptedFetch([
      openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.'),
      anthropicStream({ id: 'msg_stream', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 95, output_tokens: 9 } }),
    ]);
    const recorded = recordedPlugin(`lc-fallbacks-stream-${mode}`);
    const model = openai(fetch).withFallbacks([anthropic(fetch)]);
    const chunks = await runAs(mode, recorded, async (config) => {
      const got: AIMessageChunk[] = [];
      for await (const chunk of await model.stream('Is it sunny in Paris?', config)) got.push(chunk);
      return got;
    });
    const merged = chunks.reduce((all, chunk) => all.concat(chunk));
    expect(merged.content).toBe('It is sunny in Paris.');
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 429],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?']);
    expect(stepsOf(doc).map(([model, status, input, output, message]) => [model, status, input, output, message])).toEqual([
      ['gpt-4.1', 'failed', null, null, expect.anything()],
      [CLAUDE, 'completed', ...usageOf(merged as unknown as AIMessage), 'It is sunny in Paris.'],
    ]);
  });

  it('a two-model chain .withRetry() whose second call failed: the retry sends the first again (a new request) and retries the second (the failed one’s next attempt)', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-a1', model: GPT, content: 'Hello!', usage: { prompt_tokens: 20, completion_tokens: 3 } }),
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      chatCompletion({ id: 'chatcmpl-a2', model: GPT, content: 'Hello!', usage: { prompt_tokens: 20, completion_tokens: 3 } }),
      chatCompletion({ id: 'chatcmpl-b2', model: MINI, content: 'Bonjour !', usage: { prompt_tokens: 18, completion_tokens: 4 } }),
    ]);
    const recorded = recordedPlugin(`lc-two-model-retry-${mode}`);
    const chain = ChatPromptTemplate.fromTemplate('Greet {name} in English.')
      .pipe(openai(fetch))
      .pipe(new StringOutputParser())
      .pipe((english: string) => ({ english }))
      .pipe(ChatPromptTemplate.fromTemplate('Translate to French: {english}'))
      .pipe(openai(fetch, { model: 'gpt-4.1-mini' }))
      .pipe(new StringOutputParser())
      .withRetry({ stopAfterAttempt: 2 });
    const answer = await runAs(mode, recorded, (config) => chain.invoke({ name: 'Ada' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests).toHaveLength(4);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    const ids = [...new Set(attempts.map(([, id]) => id))];
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, ids.indexOf(id), retry, model, status])).toEqual([
      ['pre_api_request', 0, 0, 'gpt-4.1', null],
      ['post_api_request', 0, null, 'gpt-4.1', null],
      ['pre_api_request', 1, 0, 'gpt-4.1-mini', null],
      ['api_request_error', 1, 0, 'gpt-4.1-mini', 500],
      ['pre_api_request', 2, 0, 'gpt-4.1', null],
      ['post_api_request', 2, null, 'gpt-4.1', null],
      ['pre_api_request', 1, 1, 'gpt-4.1-mini', null],
      ['post_api_request', 1, null, 'gpt-4.1-mini', null],
    ]);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      [GPT, 'completed', 20, 3],
      ['gpt-4.1-mini', 'failed', null, null],
      [GPT, 'completed', 20, 3],
      [MINI, 'completed', 18, 4],
    ]);
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 58, total_completion_tokens: 10 });
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });

  it('new ChatOpenAI({ maxRetries: 2 }): LangChain retries inside the one model run; the trajectory has one answered call, the answer’s tokens, and no refused attempt', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 14, completion_tokens: 7 } }),
    ]);
    const recorded = recordedPlugin(`lc-max-retries-${mode}`);
    const model = openai(fetch, { maxRetries: 2 });
    const answer = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config));
    // LangChain's caller (not the OpenAI client, which ChatOpenAI builds with maxRetries: 0) sent it again.
    expect(requests).toHaveLength(2);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, , retry, model, , status]) => [hook, retry, model, status])).toEqual([
      ['pre_api_request', 0, 'gpt-4.1', null],
      ['post_api_request', null, 'gpt-4.1', null],
    ]);
    expect(stepsOf(doc)).toEqual([[GPT, 'completed', ...usageOf(answer), 'It is sunny in Paris.']]);
  });

  it('new ChatOpenAI({ maxRetries: 2 }) rate-limited with a 429 and its retry-after: LangChain waits and sends it again inside the one model run, which nothing it reports tells; one answered call', async () => {
    const wire = scriptedFetch([
      { ...openAiError(429, 'requests', 'Rate limit reached for gpt-4.1 on requests per min (RPM). Please try again in 1s.'), headers: { 'retry-after': '1' } },
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 14, completion_tokens: 7 } }),
    ]);
    // What the OpenAI client sends: its own retry count, in `x-stainless-retry-count`.
    const retryCounts: Array<string | null> = [];
    const fetch = ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
      retryCounts.push(new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('x-stainless-retry-count'));
      return wire.fetch(input, init);
    }) as typeof globalThis.fetch;
    const recorded = recordedPlugin(`lc-max-retries-429-${mode}`);
    const model = openai(fetch, { maxRetries: 2 });
    const answer = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config));
    expect(wire.requests).toHaveLength(2);
    // LangChain's caller sent it again through a client built with maxRetries: 0: each request is that client's first.
    expect(retryCounts).toEqual(['0', '0']);
    // And the answer carries nothing of the refusal: no metadata the adapter could read it from.
    expect(JSON.stringify(answer.response_metadata)).not.toContain('429');
    const doc = await onlyDoc(recorded);
    expect(attemptsOf(recorded.log).map(([hook, , retry, model, , status]) => [hook, retry, model, status])).toEqual([
      ['pre_api_request', 0, 'gpt-4.1', null],
      ['post_api_request', null, 'gpt-4.1', null],
    ]);
    expect(stepsOf(doc)).toEqual([[GPT, 'completed', ...usageOf(answer), 'It is sunny in Paris.']]);
  });

  it('new ChatOpenAI({ maxRetries: 2 }) rate-limited with a 429 and no retry-after: LangChain does not send it again; the call failed with the 429, as the program caught it', async () => {
    const { fetch, requests } = scriptedFetch([openAiError(429, 'requests', 'Rate limit reached for gpt-4.1.')]);
    const recorded = recordedPlugin(`lc-max-retries-429-stop-${mode}`);
    const model = openai(fetch, { maxRetries: 2 });
    const caught = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(requests).toHaveLength(1);
    expect(caught?.name).toBe('RateLimitCapacityError');
    const doc = await onlyDoc(recorded);
    expect(attemptsOf(recorded.log).map(([hook, , retry, model, , status]) => [hook, retry, model, status])).toEqual([
      ['pre_api_request', 0, 'gpt-4.1', null],
      ['api_request_error', 0, 'gpt-4.1', 429],
    ]);
    expect(stepsOf(doc).map(([model, status]) => [model, status])).toEqual([['gpt-4.1', 'failed']]);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: caught!.name, error_message: caught!.message });
  });

  it('RunnableParallel with two model calls at once: both calls, each with its own model, answer and tokens, in one turn', async () => {
    const openaiWire = scriptedFetch([chatCompletion({ id: 'chatcmpl-joke', model: MINI, content: 'Why did the bear hibernate? To bear-ly make it.', usage: { prompt_tokens: 12, completion_tokens: 13 } })]);
    const anthropicWire = scriptedFetch([claudeSays('Bears sleep,\nwinter hums.', 15, 9)]);
    const recorded = recordedPlugin(`lc-parallel-${mode}`);
    const joke = ChatPromptTemplate.fromTemplate('Tell me a joke about {topic}').pipe(openai(openaiWire.fetch, { model: 'gpt-4.1-mini' })).pipe(new StringOutputParser());
    const poem = ChatPromptTemplate.fromTemplate('Write a 2-line poem about {topic}').pipe(anthropic(anthropicWire.fetch)).pipe(new StringOutputParser());
    const both = RunnableParallel.from({ joke, poem });
    const answer = await runAs(mode, recorded, (config) => both.invoke({ topic: 'bears' }, config));
    expect(answer).toEqual({ joke: 'Why did the bear hibernate? To bear-ly make it.', poem: 'Bears sleep,\nwinter hums.' });
    const doc = await onlyDoc(recorded);
    const ends = recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => [e.payload.model, e.payload.api_request_id]);
    expect(ends.map(([model]) => model).sort()).toEqual(['claude-sonnet-4-5', 'gpt-4.1-mini']);
    expect(new Set(ends.map(([, id]) => id)).size).toBe(2);
    expect(recorded.log.some((e) => e.hook === 'api_request_error')).toBe(false);
    // Each call's step has its own model, answer and tokens; each branch's prompt is the user step of its request.
    expect(stepsOf(doc).map(([model, , input, output, message]) => [model, input, output, message]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      [CLAUDE, 15, 9, 'Bears sleep,\nwinter hums.'],
      [MINI, 12, 13, 'Why did the bear hibernate? To bear-ly make it.'],
    ]);
    expect(userSteps(doc).sort()).toEqual(['Tell me a joke about bears', 'Write a 2-line poem about bears']);
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 27, total_completion_tokens: 22 });
    expect(JSON.parse(String(turnAnswer(recorded.log)))).toEqual(answer);
  });

  it('RunnableParallel of two bare models under one parent: each its own request, though the first failed and the map failed with it', async () => {
    const openaiWire = scriptedFetch([openAiError(429, 'rate_limit_exceeded', 'Rate limit reached for gpt-4.1.')]);
    const anthropicWire = scriptedFetch([claudeSays('Paris is sunny.', 11, 5)]);
    const recorded = recordedPlugin(`lc-parallel-bare-${mode}`);
    const both = RunnableParallel.from({ gpt: openai(openaiWire.fetch), claude: anthropic(anthropicWire.fetch) });
    const caught = await runAs(mode, recorded, (config) => both.invoke('Is it sunny in Paris?', config).then(() => undefined, (error: unknown) => error as Error));
    expect(caught?.message).toContain('Rate limit reached');
    await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    const byModel = (model: string) => attempts.filter((a) => a[3] === model);
    expect(byModel('gpt-4.1').map(([hook, , retry, , , status]) => [hook, retry, status])).toEqual([
      ['pre_api_request', 0, null],
      ['api_request_error', 0, 429],
    ]);
    // Claude's call ran beside it, not after it: no retry of the refused one.
    const claude = byModel('claude-sonnet-4-5');
    expect(claude[0]!.slice(0, 3)).toEqual(['pre_api_request', claude[0]![1], 0]);
    expect(claude[0]![1]).not.toBe(byModel('gpt-4.1')[0]![1]);
  });

  it('RunnableBranch: the branch its condition chose calls its model; one call, its answer and tokens', async () => {
    const { fetch, requests } = scriptedFetch([claudeSays('Use a for loop.', 20, 5)]);
    const recorded = recordedPlugin(`lc-branch-${mode}`);
    const coder = ChatPromptTemplate.fromTemplate('You are a coding expert. {question}').pipe(anthropic(fetch)).pipe(new StringOutputParser());
    const general = ChatPromptTemplate.fromTemplate('{question}').pipe(openai(fetch)).pipe(new StringOutputParser());
    const branch = RunnableBranch.from([[(x: { topic: string; question: string }) => x.topic === 'code', coder], general]);
    const answer = await runAs(mode, recorded, (config) => branch.invoke({ topic: 'code', question: 'How do I loop in JS?' }, config));
    expect(answer).toBe('Use a for loop.');
    expect(requests).toHaveLength(1);
    const doc = await onlyDoc(recorded);
    expect(stepsOf(doc)).toEqual([[CLAUDE, 'completed', 20, 5, 'Use a for loop.']]);
    expect(userSteps(doc)).toEqual(['You are a coding expert. How do I loop in JS?']);
    expect(turnAnswer(recorded.log)).toBe('Use a for loop.');
  });

  it('RunnableLambda calling a model, in a RunnableSequence: the model call is the lambda’s run’s, one turn', async () => {
    const { fetch } = scriptedFetch([chatCompletion({ id: 'chatcmpl-1', model: GPT, content: 'PARIS', usage: { prompt_tokens: 9, completion_tokens: 2 } })]);
    const recorded = recordedPlugin(`lc-lambda-${mode}`);
    const model = openai(fetch);
    const shout = RunnableLambda.from(async (city: string) => (await model.invoke(`Say ${city} in capitals.`)).content);
    const chain = RunnableSequence.from([(input: { city: string }) => input.city, shout]);
    const answer = await runAs(mode, recorded, (config) => chain.invoke({ city: 'Paris' }, config));
    expect(answer).toBe('PARIS');
    const doc = await onlyDoc(recorded);
    expect(stepsOf(doc)).toEqual([[GPT, 'completed', 9, 2, 'PARIS']]);
    expect(userSteps(doc)).toHaveLength(1);
    expect(turnAnswer(recorded.log)).toBe('PARIS');
  });
});

// A wrapper inside another wrapper's attempt: each attempt of the one request is still an attempt of it, whichever
// wrapper made it, and the prompt the program sent once is one user step.
describe.each(MODES)('LangChain runnable wrappers nested in one another (%s)', (mode) => {
  const translate = () =>
    ChatPromptTemplate.fromMessages([
      ['system', 'Translate the user’s text to {language}.'],
      ['human', '{text}'],
    ]);

  it('chain.withFallbacks([backupChain]) whose chain retries its model (model.withRetry()): the retries and the backup’s call are attempts of one request', async () => {
    const refused = () => openAiError(500, 'server_error', 'The server had an error while processing your request.');
    const { fetch, requests } = scriptedFetch([refused(), refused(), claudeSays('Bonjour !', 31, 4)]);
    const recorded = recordedPlugin(`lc-retry-in-fallbacks-${mode}`);
    const chain = translate().pipe(openai(fetch).withRetry({ stopAfterAttempt: 2 })).pipe(new StringOutputParser());
    const backupChain = translate().pipe(anthropic(fetch)).pipe(new StringOutputParser());
    const answer = await runAs(mode, recorded, (config) => chain.withFallbacks([backupChain]).invoke({ language: 'French', text: 'Hello!' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests.map((r) => new URL(r.url).host)).toEqual(['api.openai.com', 'api.openai.com', 'api.anthropic.com']);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 500],
      ['pre_api_request', true, 1, 'gpt-4.1', null],
      ['api_request_error', true, 1, 'gpt-4.1', 500],
      ['pre_api_request', true, 2, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Hello!']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', 31, 4],
    ]);
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });

  it('model.withRetry().withFallbacks([backup]): the retried model’s attempts and the backup’s are one request', async () => {
    const refused = () => openAiError(500, 'server_error', 'The server had an error while processing your request.');
    const { fetch } = scriptedFetch([refused(), refused(), claudeSays('It is sunny in Paris.', 95, 9)]);
    const recorded = recordedPlugin(`lc-model-retry-fallbacks-${mode}`);
    const model = openai(fetch).withRetry({ stopAfterAttempt: 2 }).withFallbacks([anthropic(fetch)]);
    const answer = await runAs(mode, recorded, (config) => model.invoke('Is it sunny in Paris?', config));
    expect(answer.content).toBe('It is sunny in Paris.');
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 500],
      ['pre_api_request', true, 1, 'gpt-4.1', null],
      ['api_request_error', true, 1, 'gpt-4.1', 500],
      ['pre_api_request', true, 2, 'claude-sonnet-4-5', null],
      ['post_api_request', true, null, 'claude-sonnet-4-5', null],
    ]);
    expect(userSteps(doc)).toEqual(['Is it sunny in Paris?']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      ['gpt-4.1', 'failed', null, null],
      [CLAUDE, 'completed', ...usageOf(answer)],
    ]);
  });

  it('chain.withRetry() around model.withFallbacks([backup]): the primary, its backup, then the retried chain’s primary are attempts of one request', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(500, 'server_error', 'The server had an error while processing your request.'),
      anthropicError(529, 'overloaded_error', 'Overloaded'),
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'Bonjour !', usage: { prompt_tokens: 25, completion_tokens: 4 } }),
    ]);
    const recorded = recordedPlugin(`lc-fallbacks-in-retry-${mode}`);
    const chain = translate().pipe(openai(fetch).withFallbacks([anthropic(fetch)])).pipe(new StringOutputParser()).withRetry({ stopAfterAttempt: 2 });
    const answer = await runAs(mode, recorded, (config) => chain.invoke({ language: 'French', text: 'Hello!' }, config));
    expect(answer).toBe('Bonjour !');
    expect(requests.map((r) => new URL(r.url).host)).toEqual(['api.openai.com', 'api.anthropic.com', 'api.openai.com']);
    const doc = await onlyDoc(recorded);
    const attempts = attemptsOf(recorded.log);
    expect(attempts.map(([hook, id, retry, model, , status]) => [hook, id === attempts[0]![1], retry, model, status])).toEqual([
      ['pre_api_request', true, 0, 'gpt-4.1', null],
      ['api_request_error', true, 0, 'gpt-4.1', 500],
      ['pre_api_request', true, 1, 'claude-sonnet-4-5', null],
      ['api_request_error', true, 1, 'claude-sonnet-4-5', 529],
      ['pre_api_request', true, 2, 'gpt-4.1', null],
      ['post_api_request', true, null, 'gpt-4.1', null],
    ]);
    expect(userSteps(doc)).toEqual(['Hello!']);
    expect(stepsOf(doc).map(([model, status, input, output]) => [model, status, input, output])).toEqual([
      ['gpt-4.1', 'failed', null, null],
      ['claude-sonnet-4-5', 'failed', null, null],
      [GPT, 'completed', 25, 4],
    ]);
    expect(turnAnswer(recorded.log)).toBe('Bonjour !');
  });
});
