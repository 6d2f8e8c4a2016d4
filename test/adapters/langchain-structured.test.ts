// Structured output the program could not use, as LangChain v1's docs write it: createAgent with `responseFormat`
// (toolStrategy, which asks the model again after an answer that fails the schema unless `handleError: false`, and
// providerStrategy), and `model.withStructuredOutput(schema)` invoked on its own (with and without `includeRaw`), on
// the real ChatOpenAI and ChatAnthropic over a fake fetch speaking their wire formats. What the program saw (the
// error thrown, or the value) against what ATOF, ATIF and `view` say, on memory and native alike.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import type { BaseMessage, ToolMessage } from '@langchain/core/messages';
import { createAgent, providerStrategy, toolStrategy } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicMessage, chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { expectTurnEndInAtif, finishedRun, recordedPlugin, viewLines, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const CLAUDE = 'claude-sonnet-4-5-20250929';
const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
const WeatherReport = z.object({ city: z.string(), temperature_c: z.number() }).meta({ title: 'WeatherReport' });
const ASK = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

/** The model's call of the structured-output tool, with `temperature_c` as the model gave it. */
const reportCall = (id: string, temperature: unknown, usage: { input_tokens: number; output_tokens: number }) =>
  anthropicMessage({ id: `msg_${id}`, model: CLAUDE, content: [{ type: 'tool_use', id: `toolu_${id}`, name: 'WeatherReport', input: { city: 'Paris', temperature_c: temperature } }], usage });

type Step = AtifDoc;
const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);
/** Each tool call's outcome in the trajectory: [call id, content, status, error type]. */
const outcomes = (doc: AtifDoc): unknown[][] =>
  (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: Step) => [r.source_call_id, String(r.content), r.extra?.metadata?.status, r.extra?.metadata?.['error.type'] ?? null]));
/** The tool messages of the program's state, what the model read: [tool_call_id, content]. */
const toolMessages = (messages: BaseMessage[]): string[][] => messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content)]);
const tokens = (agent: Step[]): number[][] => agent.filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
const viewed = async (recorded: Recorded, what: RegExp): Promise<string[]> => (await viewLines(recorded, 'atof')).filter((line) => what.test(line));

async function caught(promise: PromiseLike<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the program to get an error');
}

/** The turn ended failed with the error the program got, and said no answer. */
function expectTurnFailed(recorded: Recorded, error: Error, type: string): void {
  expect(hooksOf(recorded, 'post_llm_call')).toEqual([]);
  expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ failed: true, completed: false, error_type: type, error_message: error.message }]);
}

describe('createAgent responseFormat: a structured answer that fails the schema', () => {
  it('toolStrategy (handleError by default): LangChain tells the model why and asks again; the refused call is failed, not ok', async () => {
    const { fetch } = scriptedFetch([reportCall('bad', 'warm', { input_tokens: 300, output_tokens: 20 }), reportCall('good', 21, { input_tokens: 380, output_tokens: 21 })]);
    const recorded = recordedPlugin('lc-structured-retry');
    const agent = createAgent({ model: anthropic(fetch), tools: [], responseFormat: toolStrategy(WeatherReport) });
    const result = await agent.invoke(ASK, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(result.structuredResponse).toEqual({ city: 'Paris', temperature_c: 21 });
    const told = toolMessages(result.messages);
    expect(told.map(([id]) => id)).toEqual(['toolu_bad', 'toolu_good']);
    expect(told[0]![1]).toMatch(/^Failed to parse structured output for tool 'WeatherReport'/);
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(outcomes(doc)).toEqual([
      ['toolu_bad', told[0]![1], 'error', 'StructuredOutputRejected'],
      ['toolu_good', told[1]![1], 'ok', null],
    ]);
    expect(tokens(steps)).toEqual([
      [300, 20],
      [380, 21],
    ]);
    expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual(['{"city":"Paris","temperature_c":21}']);
    expect(await viewed(recorded, /tool WeatherReport/)).toEqual([expect.stringMatching(/✗ tool WeatherReport .*ERROR StructuredOutputRejected: Failed to parse structured output/), expect.not.stringContaining('ERROR')]);
    await sameOnNative(recorded);
  });

  it('toolStrategy with handleError: false: the run throws, and the call it gave up on failed with that error', async () => {
    const { fetch } = scriptedFetch([reportCall('bad', 'warm', { input_tokens: 300, output_tokens: 20 })]);
    const recorded = recordedPlugin('lc-structured-give-up');
    const agent = createAgent({ model: anthropic(fetch), tools: [], responseFormat: toolStrategy(WeatherReport, { handleError: false }) });
    const error = await caught(agent.invoke(ASK, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }));
    expect(error.message).toMatch(/^Failed to parse structured output for tool 'WeatherReport'/);
    expectTurnFailed(recorded, error, 'StructuredOutputParsingError');
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(outcomes(doc)).toEqual([['toolu_bad', error.message, 'error', 'StructuredOutputParsingError']]);
    expect(tokens(steps)).toEqual([[300, 20]]);
    expect(await viewed(recorded, /turn |tool WeatherReport/)).toEqual([expect.stringContaining('failed: StructuredOutputParsingError'), expect.stringMatching(/✗ tool WeatherReport .*ERROR StructuredOutputParsingError/)]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'StructuredOutputParsingError', message: error.message } });
    await sameOnNative(recorded);
  });

  it('providerStrategy on ChatOpenAI (json_schema): the run throws; the model’s answer and tokens are its step’s, the turn failed', async () => {
    const text = '{"city":"Paris","temperature_c":"warm"}';
    const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-1', model: GPT, content: text, usage: { prompt_tokens: 120, completion_tokens: 14 } })]);
    const recorded = recordedPlugin('lc-structured-provider');
    const agent = createAgent({ model: openai(fetch), tools: [], responseFormat: providerStrategy(WeatherReport) });
    const error = await caught(agent.invoke(ASK, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }));
    expect(requests[0]!.body.response_format.type).toBe('json_schema');
    expect(error.message).toMatch(/^Failed to parse structured output for tool 'WeatherReport'/);
    expectTurnFailed(recorded, error, 'StructuredOutputParsingError');
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[text, 120, 14]]);
    expect(await viewed(recorded, /turn /)).toEqual([expect.stringContaining('failed: StructuredOutputParsingError')]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'StructuredOutputParsingError', message: error.message } });
    await sameOnNative(recorded);
  });
});

describe('model.withStructuredOutput(schema) invoked on its own, with an answer that fails the schema', () => {
  for (const includeRaw of [false, true]) {
    it(`on ChatOpenAI (json_schema, includeRaw: ${includeRaw}): the openai client parses inside the call, so the call failed with the parser's error`, async () => {
      const { fetch } = scriptedFetch([chatCompletion({ id: 'chatcmpl-1', model: GPT, content: '{"city":"Paris","temperature_c":"warm"}', usage: { prompt_tokens: 52, completion_tokens: 30 } })]);
      const recorded = recordedPlugin(`lc-wso-openai-bad-${includeRaw}`);
      const error = await caught(openai(fetch).withStructuredOutput(WeatherReport, { includeRaw }).invoke('Weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }));
      // LangChain's fallback for includeRaw is after the model: a call that throws reaches the program.
      expect(error.name).toBe('$ZodError');
      expectTurnFailed(recorded, error, '$ZodError');
      expect(hooksOf(recorded, 'api_request_error')).toMatchObject([{ error: { type: '$ZodError', message: error.message } }]);
      const { doc, agent: steps } = await finishedRun(recorded);
      expect(steps.map((step) => step.extra.invocation.status)).toEqual(['failed']);
      expect(await viewed(recorded, /└─ (turn|✗ LLM) /)).toEqual([expect.stringContaining('failed: $ZodError'), expect.stringMatching(/✗ LLM .*ERROR \$ZodError/)]);
      await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: '$ZodError', message: error.message } });
      await sameOnNative(recorded);
    });
  }

  it('on ChatAnthropic (a forced tool call): the parser after the model throws; the turn failed, the call and its tokens are its step’s', async () => {
    const { fetch } = scriptedFetch([reportCall('bad', 'warm', { input_tokens: 48, output_tokens: 36 })]);
    const recorded = recordedPlugin('lc-wso-anthropic-bad');
    const error = await caught(anthropic(fetch).withStructuredOutput(WeatherReport, { name: 'WeatherReport' }).invoke('Weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }));
    expect(error.message).toMatch(/^Failed to parse\. Text: /);
    expectTurnFailed(recorded, error, 'OutputParserException');
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => [(step.tool_calls ?? []).map((call: Step) => [call.tool_call_id, call.arguments]), step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[[['toolu_bad', { city: 'Paris', temperature_c: 'warm' }]], 48, 36]]);
    expect(await viewed(recorded, /turn /)).toEqual([expect.stringContaining('failed: OutputParserException')]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'OutputParserException', message: error.message } });
    await sameOnNative(recorded);
  });

  it('on ChatAnthropic with includeRaw: LangChain answers `parsed: null` and throws nothing; that is the turn’s answer', async () => {
    const { fetch } = scriptedFetch([reportCall('bad', 'warm', { input_tokens: 48, output_tokens: 36 })]);
    const recorded = recordedPlugin('lc-wso-anthropic-raw');
    const result = await anthropic(fetch).withStructuredOutput(WeatherReport, { name: 'WeatherReport', includeRaw: true }).invoke('Weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(result.parsed).toBeNull();
    const answers = hooksOf(recorded, 'post_llm_call').map((p) => JSON.parse(p.assistant_response));
    expect(answers).toHaveLength(1);
    expect(answers[0].parsed).toBeNull();
    const { agent: steps } = await finishedRun(recorded);
    expect(tokens(steps)).toEqual([[48, 36]]);
    await sameOnNative(recorded);
  });
});
