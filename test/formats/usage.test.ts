// The token table (src/formats/usage.ts) against what each framework itself
// reports. Each provider's real client runs offline over a fake fetch that
// answers in the provider's wire format (test/support/provider-wire.ts);
// the table must read the provider's raw usage and the framework's own
// normalised usage to the same counts, and those counts must equal the
// framework's totals. Then the shape adapters emit, the ATIF builder and the
// OTLP mappings must all agree with it.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, run } from '@openai/agents';
import {
  chargedUsd,
  chatCompletionsUsage,
  readResponseUsage,
  readUsage,
  recordedUsage,
  tokenUsage,
  usageShapeOf,
  type TokenUsage,
  type UsageShape,
  usageCostUsd,
  billedOutput,
} from '../../src/formats/usage.ts';
import { extractMetrics } from '../../src/formats/atif/payload/usage.ts';
import { readResponse } from '../../src/export/otlp/mappings/llm-shapes.ts';
import { AI_SDK_PROVIDERS } from '../support/ai-sdk-providers.ts';
import { anthropicMessage, anthropicStream, chatCompletion, chatCompletionStream, geminiResponse, openAiResponse, scriptedFetch, type AnthropicUsage } from '../support/provider-wire.ts';

const CLAUDE = 'claude-sonnet-4-5-20250929';
const GPT = 'gpt-4.1-2025-04-14';

/** The figures: 1,410 input tokens of which 1,216 were read from the cache; 3,270 of which 3,000 were written to it. */
const READ: AnthropicUsage = { input_tokens: 194, cache_read_input_tokens: 1216, cache_creation_input_tokens: 0, output_tokens: 12 };
const WRITTEN: AnthropicUsage = { input_tokens: 270, cache_read_input_tokens: 0, cache_creation_input_tokens: 3000, output_tokens: 40 };

describe('the token table, shape by shape', () => {
  const cases: Array<[UsageShape, unknown, TokenUsage]> = [
    ['openai_chat', { prompt_tokens: 1410, completion_tokens: 30, total_tokens: 1440, prompt_tokens_details: { cached_tokens: 1216 }, completion_tokens_details: { reasoning_tokens: 18 } }, { prompt: 1410, completion: 30, total: 1440, cacheRead: 1216, reasoning: 18 }],
    ['openai_responses', { input_tokens: 1410, output_tokens: 30, total_tokens: 1440, input_tokens_details: { cached_tokens: 1216 }, output_tokens_details: { reasoning_tokens: 18 } }, { prompt: 1410, completion: 30, total: 1440, cacheRead: 1216, reasoning: 18 }],
    ['anthropic_messages', { input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216, cache_creation_input_tokens: 0 }, { prompt: 1410, completion: 12, total: 1422, cacheRead: 1216, cacheWrite: 0 }],
    ['anthropic_messages', { input_tokens: 270, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 3000 }, { prompt: 3270, completion: 40, total: 3310, cacheRead: 0, cacheWrite: 3000 }],
    ['gemini', { promptTokenCount: 1410, candidatesTokenCount: 12, thoughtsTokenCount: 20, cachedContentTokenCount: 1216, totalTokenCount: 1442 }, { prompt: 1410, completion: 32, total: 1442, cacheRead: 1216, reasoning: 20 }],
    ['ai_sdk', { inputTokens: 1410, inputTokenDetails: { noCacheTokens: 194, cacheReadTokens: 1216, cacheWriteTokens: 0 }, outputTokens: 12, outputTokenDetails: { textTokens: 12, reasoningTokens: 0 }, totalTokens: 1422 }, { prompt: 1410, completion: 12, total: 1422, cacheRead: 1216, cacheWrite: 0, reasoning: 0 }],
    ['ai_sdk', { inputTokens: { total: 3270, noCache: 270, cacheRead: 0, cacheWrite: 3000 }, outputTokens: { total: 40, text: 40, reasoning: undefined } }, { prompt: 3270, completion: 40, total: 3310, cacheRead: 0, cacheWrite: 3000 }],
    // DeepSeek through @ai-sdk/openai-compatible: the package reports 0 cached; DeepSeek's hits are in the raw usage.
    ['ai_sdk', { inputTokens: 1410, inputTokenDetails: { noCacheTokens: 1410, cacheReadTokens: 0, cacheWriteTokens: undefined }, outputTokens: 12, outputTokenDetails: { textTokens: 12, reasoningTokens: 0 }, totalTokens: 1422, raw: { prompt_tokens: 1410, completion_tokens: 12, total_tokens: 1422, prompt_cache_hit_tokens: 1216, prompt_cache_miss_tokens: 194 } }, { prompt: 1410, completion: 12, total: 1422, cacheRead: 1216, reasoning: 0 }],
    ['ai_sdk', { inputTokens: { total: 1410, noCache: 1410, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 12, text: 12, reasoning: 0 }, raw: { prompt_tokens: 1410, completion_tokens: 12, prompt_cache_hit_tokens: 1216 } }, { prompt: 1410, completion: 12, total: 1422, cacheRead: 1216, reasoning: 0 }],
    ['langchain', { input_tokens: 1410, output_tokens: 12, total_tokens: 1422, input_token_details: { cache_read: 1216, cache_creation: 0 }, output_token_details: { reasoning: 4 } }, { prompt: 1410, completion: 12, total: 1422, cacheRead: 1216, cacheWrite: 0, reasoning: 4 }],
    ['langchain', { promptTokens: 9, completionTokens: 3, totalTokens: 12 }, { prompt: 9, completion: 3, total: 12 }],
    ['openai_agents', { requests: 2, inputTokens: 1410, outputTokens: 30, totalTokens: 1440, inputTokensDetails: [{ cached_tokens: 1000 }, { cached_tokens: 216 }], outputTokensDetails: [{ reasoning_tokens: 18 }] }, { prompt: 1410, completion: 30, total: 1440, cacheRead: 1216, reasoning: 18 }],
  ];

  it.each(cases)('%s: %j', (shape, usage, expected) => {
    expect(tokenUsage(shape, usage)).toEqual(expected);
    // Each shape's own keys name it, so a payload nobody tagged reads the same.
    expect(usageShapeOf(usage)).toBe(shape === 'langchain' && !('input_tokens' in (usage as object)) ? undefined : shape);
  });

  it('covers every shape it names', () => {
    // A shape added to the union without a case fails the typecheck here.
    const every: Record<UsageShape, true> = { openai_chat: true, openai_responses: true, anthropic_messages: true, gemini: true, ai_sdk: true, langchain: true, openai_agents: true };
    expect(new Set(cases.map(([shape]) => shape))).toEqual(new Set(Object.keys(every)));
  });

  it('adds cache counts only to the Anthropic Messages input, whatever the provider is called', () => {
    // The double count of issue 20: the inclusive chat shape under an Anthropic provider name.
    expect(readUsage({ prompt_tokens: 1410, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 1216 } }, 'anthropic')?.prompt).toBe(1410);
    expect(readUsage({ input_tokens: 1410, output_tokens: 12, input_token_details: { cache_read: 1216 } }, 'anthropic')?.prompt).toBe(1410);
    expect(readUsage({ input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216 }, 'bedrock')?.prompt).toBe(1410);
    // A shapeless object is as its provider means it (with no cache count it makes no difference).
    expect(readUsage({ input_tokens: 194, output_tokens: 12 }, 'anthropic')?.prompt).toBe(194);
    const payload = (usage: object, provider: string) => readResponseUsage({ usage }, { provider });
    expect(payload({ input_tokens: 194, cached_tokens: 1216 }, 'anthropic')?.prompt).toBe(1410);
    expect(payload({ input_tokens: 1410, cached_tokens: 1216 }, 'openai')?.prompt).toBe(1410);
  });

  it('takes no cache writes from an OpenAI shape\'s details, as native\'s codec reads them (the random pricing differential)', () => {
    expect(tokenUsage('openai_chat', { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 77 } })?.cacheWrite).toBeUndefined();
    expect(tokenUsage('openai_responses', { input_tokens: 100, output_tokens: 5, input_tokens_details: { cached_tokens: 40, cache_write_tokens: 77 } })?.cacheWrite).toBeUndefined();
    // A proxy's top-level write count is still read (native reads it too).
    expect(tokenUsage('openai_chat', { prompt_tokens: 100, completion_tokens: 5, cache_write_tokens: 77 })?.cacheWrite).toBe(77);
    const metrics = extractMetrics({ usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 77 } } } as never, 'openai')!;
    expect(metrics.cached_tokens).toBe(40);
  });

  it('reads no count from what is not one, and keeps what a shape leaves out unknown', () => {
    expect(tokenUsage('openai_chat', null)).toBeUndefined();
    expect(tokenUsage('openai_chat', { prompt_tokens: -1, completion_tokens: 1.5 })).toBeUndefined();
    expect(tokenUsage('anthropic_messages', { output_tokens: 5 })).toEqual({ completion: 5 });
    expect(readUsage({ something: 'else' })).toBeUndefined();
  });

  it('reads a charge as an answer states it (the AI Gateway\'s decimal string, OpenRouter\'s usage.cost), and nothing that is not one', () => {
    expect(chargedUsd('0.0009180')).toBe(0.000918);
    expect(chargedUsd(0)).toBe(0);
    expect([chargedUsd(''), chargedUsd(' '), chargedUsd(-0.01), chargedUsd('abc'), chargedUsd(Number.POSITIVE_INFINITY), chargedUsd(null)]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(usageCostUsd({ prompt_tokens: 194, cost: 0.95, cost_details: { upstream_inference_cost: 19 } })).toBe(0.95);
    expect([usageCostUsd({ prompt_tokens: 194 }), usageCostUsd(undefined), usageCostUsd({ cost: '1' })]).toEqual([undefined, undefined, 1]);
    // xAI's charge, in ticks of 10^-10 USD: a whole number of them, or none.
    expect(usageCostUsd({ prompt_tokens: 194, cost_in_usd_ticks: 37_756_000 })).toBe(0.0037756);
    expect([usageCostUsd({ cost_in_usd_ticks: -1 }), usageCostUsd({ cost_in_usd_ticks: 1.5 }), usageCostUsd({ cost_in_usd_ticks: '37756000' })]).toEqual([undefined, undefined, undefined]);
  });

  it("counts xAI's reasoning (apart from its completion_tokens, in its total) in the output, once", () => {
    const xai = { prompt_tokens: 180, completion_tokens: 40, total_tokens: 316, completion_tokens_details: { reasoning_tokens: 96 } };
    expect(billedOutput(40, xai)).toEqual({ output: 136, total: 316 });
    // A framework that already added it (its output is not the wire's completion_tokens), or OpenAI's usage (the
    // reasoning inside completion_tokens, the total without it): nothing to add.
    expect(billedOutput(136, xai)).toBeUndefined();
    expect(billedOutput(40, { ...xai, total_tokens: 220 })).toBeUndefined();
    expect(billedOutput(40, { ...xai, completion_tokens_details: { reasoning_tokens: 0 }, total_tokens: 220 })).toBeUndefined();
    // The AI SDK's usage (@ai-sdk/openai-compatible keeps the wire's as `raw`), flat or as a provider's; the OpenAI
    // Agents SDK's, which keeps xAI's output and total.
    expect(tokenUsage('ai_sdk', { inputTokens: 180, outputTokens: 40, totalTokens: 220, outputTokenDetails: { reasoningTokens: 96 }, raw: xai })).toMatchObject({ completion: 136, total: 316, reasoning: 96 });
    expect(tokenUsage('ai_sdk', { inputTokens: { total: 180 }, outputTokens: { total: 40, reasoning: 96 }, raw: xai })).toMatchObject({ completion: 136, total: 316, reasoning: 96 });
    expect(tokenUsage('ai_sdk', { inputTokens: 180, outputTokens: 136, totalTokens: 316, outputTokenDetails: { reasoningTokens: 96 }, raw: xai })).toMatchObject({ completion: 136, total: 316 });
    expect(tokenUsage('openai_agents', { inputTokens: 180, outputTokens: 40, totalTokens: 316, outputTokensDetails: [{ reasoning_tokens: 96 }] })).toMatchObject({ completion: 136, total: 316, reasoning: 96 });
    expect(tokenUsage('openai_agents', { inputTokens: 180, outputTokens: 136, totalTokens: 316, outputTokensDetails: [{ reasoning_tokens: 96 }] })).toMatchObject({ completion: 136, total: 316 });
  });

  it('writes the one shape adapters emit, which every reader reads back unchanged', () => {
    for (const [shape, usage] of cases) {
      const counted = tokenUsage(shape, usage)!;
      const emitted = chatCompletionsUsage(counted)!;
      const back = readUsage(emitted, 'anthropic')!;
      expect(back.prompt).toBe(counted.prompt);
      expect(back.completion).toBe(counted.completion);
      expect(back.cacheRead).toBe(counted.cacheRead);
      expect(back.reasoning).toBe(counted.reasoning);
      if ((counted.cacheWrite ?? 0) > 0) expect(back.cacheWrite).toBe(counted.cacheWrite);
      // The ATIF builder and the OTLP mappings read it through the same table.
      const metrics = extractMetrics({ usage: emitted } as never, 'anthropic')!;
      expect(metrics.prompt_tokens).toBe(counted.prompt);
      expect(readResponse({ usage: emitted } as never).usage.input).toBe(counted.prompt);
    }
  });

  it('writes a call to Anthropic as Messages counts it, which every reader counts as it counts the Chat Completions shape', () => {
    for (const [shape, usage] of cases) {
      const counted = tokenUsage(shape, usage)!;
      const chat = chatCompletionsUsage(counted)!;
      expect(recordedUsage(counted, 'openai')).toEqual(chat);
      const messages = recordedUsage(counted, 'anthropic.messages')!;
      // Anthropic's own keys: the input without the cache, reads and writes apart (a zero write left out, as Chat's).
      expect(messages.prompt_tokens).toBeUndefined();
      expect(messages.input_tokens).toBe(counted.prompt! - (counted.cacheRead ?? 0) - (counted.cacheWrite ?? 0));
      expect(messages.output_tokens).toBe(counted.completion);
      expect(messages.cache_read_input_tokens).toBe(counted.cacheRead);
      expect(messages.cache_creation_input_tokens).toBe((counted.cacheWrite ?? 0) > 0 ? counted.cacheWrite : undefined);
      const back = readUsage(messages, 'anthropic')!;
      expect(back).toEqual(readUsage(chat, 'anthropic'));
      // The ATIF builder (both backends' trajectories) and the OTLP mappings count the same as for the Chat shape.
      const atif = (metrics: ReturnType<typeof extractMetrics>) => [metrics?.prompt_tokens, metrics?.completion_tokens, metrics?.cached_tokens, (metrics?.extra as { total_tokens?: number } | undefined)?.total_tokens];
      expect(atif(extractMetrics({ usage: messages } as never, 'anthropic'))).toEqual(atif(extractMetrics({ usage: chat } as never, 'openai')));
      const [ours, theirs] = [readResponse({ usage: messages } as never).usage, readResponse({ usage: chat } as never).usage];
      expect([ours.input, ours.output, ours.total, ours.cacheRead, ours.cacheWrite]).toEqual([theirs.input, theirs.output, theirs.total, theirs.cacheRead, theirs.cacheWrite]);
    }
    // A thinking model's Messages usage states its thinking under Responses' key name: still Anthropic's shape.
    expect(usageShapeOf({ input_tokens: 10, output_tokens: 30, cache_read_input_tokens: 0, output_tokens_details: { thinking_tokens: 20 } })).toBe('anthropic_messages');
  });
});

/** A provider's raw usage and the framework's own usage read to the same counts; `reported` are the framework's totals. */
function expectSameCounts(raw: [UsageShape, unknown], framework: [UsageShape, unknown], reported: { input: number; output: number }, outputOffBy = 0): TokenUsage {
  const fromWire = tokenUsage(...raw)!;
  const fromFramework = tokenUsage(...framework)!;
  expect(fromFramework.prompt).toBe(reported.input);
  expect(fromFramework.completion).toBe(reported.output);
  expect(fromWire.prompt).toBe(fromFramework.prompt);
  expect(fromWire.completion! + outputOffBy).toBe(fromFramework.completion);
  expect(fromWire.cacheRead ?? 0).toBe(fromFramework.cacheRead ?? 0);
  expect(fromWire.cacheWrite ?? 0).toBe(fromFramework.cacheWrite ?? 0);
  return fromFramework;
}

describe('the token table against the frameworks (real clients over a fake fetch)', () => {
  for (const [label, usage, prompt] of [['cache read', READ, 1410], ['cache write', WRITTEN, 3270]] as const) {
    it(`Anthropic Messages (${label}): ChatAnthropic usage_metadata, invoke and stream`, async () => {
      const reply = { id: 'msg_01', model: CLAUDE, content: [{ type: 'text' as const, text: 'Comments say why.' }], usage };
      const { fetch } = scriptedFetch([anthropicMessage(reply), anthropicStream(reply)]);
      const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
      const message = await model.invoke('What do comments say?');
      const counted = expectSameCounts(['anthropic_messages', usage], ['langchain', message.usage_metadata], { input: message.usage_metadata!.input_tokens, output: message.usage_metadata!.output_tokens });
      expect(counted.prompt).toBe(prompt);
      let streamed: any;
      for await (const chunk of await model.stream('What do comments say?')) streamed = streamed === undefined ? chunk : streamed.concat(chunk);
      // LangChain adds message_start's placeholder output count (1) to message_delta's cumulative one: the
      // framework reports one output token more than the wire when it streams, and the trajectory says what it reports.
      expectSameCounts(['anthropic_messages', usage], ['langchain', streamed.usage_metadata], { input: streamed.usage_metadata.input_tokens, output: streamed.usage_metadata.output_tokens }, 1);
    });

    it.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))(`Anthropic Messages (${label}): the AI SDK's LanguageModelUsage, generateText and streamText (@ai-sdk/anthropic %s)`, async (_major, packages) => {
      const reply = { id: 'msg_01', model: CLAUDE, content: [{ type: 'text' as const, text: 'Comments say why.' }], usage };
      const { fetch } = scriptedFetch([anthropicMessage(reply), anthropicStream(reply)]);
      const anthropic = packages.anthropic({ apiKey: 'sk-ant-test', fetch });
      const result = await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'What do comments say?', maxRetries: 0 });
      const counted = expectSameCounts(['anthropic_messages', usage], ['ai_sdk', result.usage], { input: result.usage.inputTokens!, output: result.usage.outputTokens! });
      expect(counted.prompt).toBe(prompt);
      const stream = streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'What do comments say?', maxRetries: 0 });
      const streamedUsage = await stream.usage;
      expectSameCounts(['anthropic_messages', usage], ['ai_sdk', streamedUsage], { input: streamedUsage.inputTokens!, output: streamedUsage.outputTokens! });
    });
  }

  it('OpenAI Chat Completions: ChatOpenAI usage_metadata (invoke and stream) and the AI SDK chat model', async () => {
    const usage = { prompt_tokens: 1410, completion_tokens: 30, cached: 1216, reasoning: 18 };
    const reply = { id: 'chatcmpl-1', model: GPT, content: 'Comments say why.', usage };
    const wireUsage = (chatCompletion(reply).json as { usage: unknown }).usage;
    const { fetch } = scriptedFetch([chatCompletion(reply), chatCompletionStream(reply), ...AI_SDK_PROVIDERS.map(() => chatCompletion(reply))]);
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
    const message = await model.invoke('What do comments say?');
    const counted = expectSameCounts(['openai_chat', wireUsage], ['langchain', message.usage_metadata], { input: message.usage_metadata!.input_tokens, output: message.usage_metadata!.output_tokens });
    expect(counted).toMatchObject({ prompt: 1410, cacheRead: 1216, reasoning: 18 });
    let streamed: any;
    for await (const chunk of await model.stream('What do comments say?')) streamed = streamed === undefined ? chunk : streamed.concat(chunk);
    expectSameCounts(['openai_chat', wireUsage], ['langchain', streamed.usage_metadata], { input: streamed.usage_metadata.input_tokens, output: streamed.usage_metadata.output_tokens });
    for (const packages of AI_SDK_PROVIDERS) {
      const result = await generateText({ model: packages.openai({ apiKey: 'sk-test', fetch }).chat('gpt-4.1'), prompt: 'What do comments say?', maxRetries: 0 });
      expectSameCounts(['openai_chat', wireUsage], ['ai_sdk', result.usage], { input: result.usage.inputTokens!, output: result.usage.outputTokens! });
    }
  });

  it('OpenAI Responses: ChatOpenAI with useResponsesApi, the AI SDK responses model and the Agents SDK Usage', async () => {
    const usage = { prompt_tokens: 1410, completion_tokens: 30, cached: 1216, reasoning: 18 };
    const reply = { id: 'resp_1', model: GPT, text: 'Comments say why.', usage };
    const wireUsage = (openAiResponse(reply).json as { usage: unknown }).usage;
    const { fetch } = scriptedFetch([openAiResponse(reply), ...AI_SDK_PROVIDERS.map(() => openAiResponse(reply)), openAiResponse(reply)]);
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, useResponsesApi: true, configuration: { fetch } });
    const message = await model.invoke('What do comments say?');
    const counted = expectSameCounts(['openai_responses', wireUsage], ['langchain', message.usage_metadata], { input: message.usage_metadata!.input_tokens, output: message.usage_metadata!.output_tokens });
    expect(counted).toMatchObject({ prompt: 1410, cacheRead: 1216, reasoning: 18 });
    for (const packages of AI_SDK_PROVIDERS) {
      const result = await generateText({ model: packages.openai({ apiKey: 'sk-test', fetch }).responses('gpt-4.1'), prompt: 'What do comments say?', maxRetries: 0 });
      expectSameCounts(['openai_responses', wireUsage], ['ai_sdk', result.usage], { input: result.usage.inputTokens!, output: result.usage.outputTokens! });
    }
    const client = new OpenAI({ apiKey: 'sk-test', fetch, maxRetries: 0 });
    const agentRun = await run(new Agent({ name: 'reader', model: new OpenAIResponsesModel(client, 'gpt-4.1') }), 'What do comments say?');
    const agentUsage = agentRun.rawResponses[0]!.usage;
    expectSameCounts(['openai_responses', wireUsage], ['openai_agents', agentUsage], { input: agentUsage.inputTokens, output: agentUsage.outputTokens });
  });

  it.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))("Gemini: the AI SDK's Google provider (@ai-sdk/google %s)", async (_major, packages) => {
    const reply = geminiResponse({ model: 'gemini-2.5-flash', text: 'Comments say why.', usage: { prompt: 1410, candidates: 12, cached: 1216, thoughts: 20 } });
    const wireUsage = (reply.json as { usageMetadata: unknown }).usageMetadata;
    const { fetch } = scriptedFetch([reply]);
    const google = packages.google({ apiKey: 'test', fetch });
    const result = await generateText({ model: google('gemini-2.5-flash'), prompt: 'What do comments say?', maxRetries: 0 });
    const counted = expectSameCounts(['gemini', wireUsage], ['ai_sdk', result.usage], { input: result.usage.inputTokens!, output: result.usage.outputTokens! });
    expect(counted).toMatchObject({ prompt: 1410, completion: 32, cacheRead: 1216, reasoning: 20 });
  });
});

describe('a Gemini answer counted for a trajectory', () => {
  const answer = {
    candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get', args: {} } }, { functionCall: { name: 'get', args: { x: 1 } } }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 7, toolUsePromptTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 25 },
  };
  const valid = { ...answer, candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' }] };

  it("native's reading (plugins.toml atif): the codec's counts, none of an answer its decode rejects, Gemini names in usage no counts", () => {
    expect(extractMetrics(valid as never, 'gemini', 'native')).toEqual({ prompt_tokens: 10, completion_tokens: 5, cached_tokens: 4 });
    expect(extractMetrics(answer as never, 'gemini', 'native')).toBeUndefined();
    const named = { candidates: [], usage: { promptTokenCount: 20, candidatesTokenCount: 9 } };
    expect(extractMetrics(named as never, 'gemini', 'native')).toEqual({ extra: { candidatesTokenCount: 9, promptTokenCount: 20 } });
  });

  it("the billed reading (the plugin's own trajectory): the tool-use prompt and the thoughts counted in, whatever the decode makes of the answer", () => {
    expect(extractMetrics(valid as never, 'gemini', 'billed')).toEqual({ prompt_tokens: 13, completion_tokens: 12, cached_tokens: 4 });
    expect(extractMetrics(answer as never, 'gemini', 'billed')).toEqual({ prompt_tokens: 13, completion_tokens: 12, cached_tokens: 4 });
    const named = { candidates: [], usage: { promptTokenCount: 20, candidatesTokenCount: 9 } };
    expect(extractMetrics(named as never, 'gemini', 'billed')).toMatchObject({ prompt_tokens: 20, completion_tokens: 9 });
  });
});
