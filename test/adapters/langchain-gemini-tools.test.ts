// Gemini's own tools through LangChain, as LangChain's docs for `@langchain/google-genai` write the programs: a
// `ChatGoogleGenerativeAI` (thoughts asked for: `thinkingConfig.includeThoughts`) bound to Gemini's built-in tools
// (`bindTools([{ googleSearch: {} }, { urlContext: {} }])`, `bindTools([{ codeExecution: {} }])`), invoked and
// streamed, and in `createAgent` beside a function tool, over a loopback server speaking Gemini's JSON and SSE as
// gemini-2.5-flash sends them (test/support/gemini-wire.ts: every chunk with the counts so far, the cache count in
// each; `toolUsePromptTokenCount` and `thoughtsTokenCount`, which LangChain's `usage_metadata` keeps nowhere). Each
// trajectory is held to what the program got: the text, the thoughts, `response_metadata.groundingMetadata` and
// `urlContextMetadata` (the searches and page reads Gemini ran: calls the provider ran, the pages their result), the
// `executableCode` / `codeExecutionResult` blocks (code Gemini ran: calls the provider ran, a failed run failed), and
// the tokens: what LangChain's `usage_metadata` says of the input, the output and the total, the cache read once.
// What Gemini counted beyond them (its tools' input and its thoughts, which nothing LangChain keeps tells apart) is
// neither's. ChatVertexAI (`@langchain/google-vertexai`) with Google Search: the same calls; google-common counts the
// thoughts in its output and Gemini's total, so what the total counts beyond its input and output is the tools' input,
// which is the prompt's. Memory and native write the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
import { ChatVertexAI } from '@langchain/google-vertexai';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { Runnable } from '@langchain/core/runnables';
import { createAgent } from 'langchain';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { COMPUTED, GEMINI_FOUND, GEMINI_MODEL, GEMINI_PAGE, GROUNDED, geminiJson, geminiSse, searchGrounding, type GeminiAnswer } from '../support/gemini-wire.ts';
import { scriptedFetch } from '../support/provider-wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather } from './langchain-checks.ts';

const MODEL = GEMINI_MODEL;
const PAGE = GEMINI_PAGE;
const FOUND = GEMINI_FOUND;

let wire = scriptedFetch([]);
let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
beforeAll(async () => {
  server = await loopbackApi((url, init) => wire.fetch(url, init));
});
afterAll(() => server?.close());

/** The model as LangChain's docs build it, pointed at the loopback; the next requests get `answers`. */
function gemini(answers: GeminiAnswer[], stream: boolean): ChatGoogleGenerativeAI {
  wire = scriptedFetch(answers.map((answer) => (stream ? geminiSse(answer) : geminiJson(answer))));
  return new ChatGoogleGenerativeAI({ model: MODEL, apiKey: 'test-key', baseUrl: server!.url, maxRetries: 0, thinkingConfig: { includeThoughts: true } });
}

type Step = AtifDoc;
type Usage = { input_tokens: number; output_tokens: number; total_tokens: number; input_token_details?: { cache_read?: number } };
/** Each step's [prompt, completion, cached, total, reasoning] tokens. */
const recordedCounts = (step: Step): unknown[] => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0, step.metrics.extra?.total_tokens, step.metrics.extra?.completion_tokens_details?.reasoning_tokens];

/** `model.invoke()`, or `model.stream()` with the chunks merged, as the program reads the answer. */
async function ask(model: Runnable<BaseLanguageModelInput, AIMessageChunk, any>, mode: 'invoke' | 'stream', prompt: string, config: object): Promise<{ answer: AIMessage | AIMessageChunk; chunks: number }> {
  if (mode === 'invoke') return { answer: await model.invoke(prompt, config), chunks: 1 };
  let merged: AIMessageChunk | undefined;
  let chunks = 0;
  for await (const chunk of await model.stream(prompt, config)) {
    chunks += 1;
    merged = merged === undefined ? chunk : merged.concat(chunk);
  }
  return { answer: merged!, chunks };
}

describe('ChatGoogleGenerativeAI with Gemini\'s own tools, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`model.${mode}() with Google Search and URL context: the searches and the page read are calls Gemini ran, the tokens LangChain's`, async () => {
      const model = gemini([GROUNDED], mode === 'stream').bindTools([{ googleSearch: {} }, { urlContext: {} }]);
      const recorded = recordedPlugin(`lc-gemini-grounded-${mode}`);
      const { answer, chunks } = await ask(model, mode, `What is the weather in Paris today? See ${PAGE}`, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(wire.requests[0]!.body.tools).toEqual([{ googleSearch: {} }, { urlContext: {} }]);
      expect(wire.requests[0]!.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true });
      const grounding = answer.response_metadata.groundingMetadata as { webSearchQueries: string[] };
      expect(grounding.webSearchQueries).toEqual(['Paris weather today', 'Paris forecast']);
      expect(answer.text).toBe('Paris is sunny today, 21°C. The page agrees.');

      const { doc, agent, atof } = await finishedRun(recorded);
      const [step] = agent as Step[];
      expect(agent).toHaveLength(1);
      expect(step!.message).toBe(answer.text);
      expect(step!.reasoning_content).toBe('Search the forecast, read the page given.');
      // The searches and the page read: calls Gemini ran, named by the message's id, their results what LangChain kept.
      const calls = step!.tool_calls as Step[];
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed])).toEqual([
        [`${answer.id}:google_search`, 'google_search', { queries: grounding.webSearchQueries }, true],
        [`${answer.id}:url_context`, 'url_context', { urls: [PAGE] }, true],
      ]);
      expect(calls[0]!.extra.provider_result).toEqual(grounding);
      expect(calls[0]!.extra.provider_result.groundingChunks.map((chunk: any) => chunk.web.uri)).toEqual(FOUND.map((page) => page.uri));
      expect(calls[1]!.extra.provider_result).toEqual(answer.response_metadata.urlContextMetadata);
      expect(atof.filter((event) => event.kind === 'scope' && event.category === 'tool')).toEqual([]);
      expect(step!.observation).toBeUndefined();
      // Tokens. LangChain's usage_metadata: promptTokenCount in, candidatesTokenCount out, totalTokenCount in all,
      // which also counts the tools' 380 input tokens and the 71 thought tokens; streamed, the cache read each chunk
      // repeats, added up. The trajectory: LangChain's input, output and total, the cache read once, and the 451 no
      // one can split left in the total alone (not thoughts: most of them are the search results Gemini read).
      const usage = answer.usage_metadata as Usage;
      expect([usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.input_token_details?.cache_read]).toEqual([52, 14, 52 + 380 + 71 + 14, 16 * chunks]);
      expect(chunks).toBe(mode === 'stream' ? 3 : 1);
      expect(recordedCounts(step!)).toEqual([52, 14, 16, 52 + 380 + 71 + 14, undefined]);
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 52, total_completion_tokens: 14, total_cached_tokens: 16 });
      expect(await viewRows(recorded, 'atif')).toEqual([
        `LLM ${MODEL}  52 in (16 cached) / 14 out  → google_search, url_context · ${answer.text}`,
        'tool google_search  {"queries":["Paris weather today","Paris forecast"]} · run by the provider: 2 results',
        `tool url_context  {"urls":["${PAGE}"]} · run by the provider`,
      ]);
      await sameOnNative(recorded);
    });

    it(`model.${mode}() with code execution: each run of code is a call Gemini ran, the failed one failed`, async () => {
      const model = gemini([COMPUTED], mode === 'stream').bindTools([{ codeExecution: {} }]);
      const recorded = recordedPlugin(`lc-gemini-code-${mode}`);
      const { answer } = await ask(model, mode, 'What is 21°C in °F? Use Python.', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(wire.requests[0]!.body.tools).toEqual([{ codeExecution: {} }]);
      const blocks = (answer.content as Array<Record<string, any>>).filter((block) => block.type === 'executableCode' || block.type === 'codeExecutionResult');
      expect(blocks.map((block) => block.type)).toEqual(['executableCode', 'codeExecutionResult', 'executableCode', 'codeExecutionResult']);

      const { agent, atof } = await finishedRun(recorded);
      const [step] = agent as Step[];
      expect(step!.message).toBe('21°C is 69.8°F.');
      expect(step!.reasoning_content).toBe('Convert with Python.');
      const calls = step!.tool_calls as Step[];
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra.provider_executed, call.extra.provider_result])).toEqual([
        [`${answer.id}:code_execution:0`, 'code_execution', blocks[0]!.executableCode, true, blocks[1]!.codeExecutionResult],
        [`${answer.id}:code_execution:1`, 'code_execution', blocks[2]!.executableCode, true, blocks[3]!.codeExecutionResult],
      ]);
      expect(calls.map((call) => call.extra.provider_error)).toEqual(["OUTCOME_FAILED: NameError: name 'c' is not defined", undefined]);
      expect(atof.filter((event) => event.kind === 'scope' && event.category === 'tool')).toEqual([]);
      // Code execution counts its own input apart too: the 25 beyond input and output stay in the total.
      expect(recordedCounts(step!)).toEqual([30, 60, 0, 30 + 60 + 25, undefined]);
      await sameOnNative(recorded);
    });
  }

  for (const mode of ['invoke', 'stream'] as const) {
    it(`createAgent with Google Search beside a function tool (agent.${mode}): the search is the first answer's call Gemini ran, the function call the program's`, async () => {
      const first: GeminiAnswer = {
        id: 'gem-agent-1',
        model: MODEL,
        parts: [{ text: 'Search first, then ask the tool.', thought: true }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
        groundingMetadata: searchGrounding(['Paris weather today'], FOUND.slice(0, 1), []),
        usage: { prompt: 90, candidates: 8, toolUsePrompt: 210, thoughts: 33 },
      };
      const second: GeminiAnswer = { id: 'gem-agent-2', model: MODEL, parts: [{ text: 'It is sunny in Paris.' }], usage: { prompt: 140, candidates: 7 } };
      const model = gemini([first, second], mode === 'stream');
      const agent = createAgent({ model, tools: [getWeather, { googleSearch: {} }] });
      const recorded = recordedPlugin(`lc-gemini-agent-search-${mode}`);
      const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let messages: BaseMessage[] = [];
      if (mode === 'invoke') messages = (await agent.invoke(input, config)).messages;
      else for await (const [kind, value] of await agent.stream(input, { ...config, streamMode: ['messages', 'values'] })) if (kind === 'values') messages = (value as { messages: BaseMessage[] }).messages;
      // Both tools went to Gemini: the search as its own tool, the function as a declaration.
      expect(wire.requests[0]!.body.tools).toEqual([{ googleSearch: {} }, { functionDeclarations: [expect.objectContaining({ name: 'get_weather' })] }]);
      const answers = messages.filter((m) => AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) as AIMessage[];
      expect(answers.map((m) => m.text)).toEqual(['', 'It is sunny in Paris.']);
      const weatherId = answers[0]!.tool_calls![0]!.id!;

      const { agent: steps, atof } = await finishedRun(recorded);
      expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
      expect(steps[0]!.tool_calls.map((call: Step) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed ?? false])).toEqual([
        [`${answers[0]!.id}:google_search`, 'google_search', { queries: ['Paris weather today'] }, true],
        [weatherId, 'get_weather', { city: 'Paris' }, false],
      ]);
      // Only the function call ran in the program, and only its result is the step's observation.
      expect(atof.filter((event) => event.kind === 'scope' && event.category === 'tool' && event.scope_category === 'start').map((event) => event.name)).toEqual(['get_weather']);
      expect(steps[0]!.observation.results.map((result: Step) => [result.source_call_id, result.content])).toEqual([[weatherId, 'It is sunny in Paris.']]);
      // The searching answer's 243 beyond input and output stay in its total; the answer without tools counts none.
      expect(steps.map(recordedCounts)).toEqual([
        [90, 8, 0, 90 + 210 + 33 + 8, undefined],
        [140, 7, 0, 147, undefined],
      ]);
      await sameOnNative(recorded);
    });
  }

  for (const mode of ['invoke', 'stream'] as const) {
    it(`ChatVertexAI.${mode}() with Google Search and URL context: the same calls, and the tools' input in the prompt`, async () => {
      // Vertex's stream without alt=sse is one JSON array of the responses; ChatVertexAI keeps the fetch it was built with.
      const reply = geminiSse(GROUNDED);
      wire = scriptedFetch([mode === 'stream' ? { json: reply.sse!.map((frame) => frame.data) } : geminiJson(GROUNDED)]);
      const saved = globalThis.fetch;
      globalThis.fetch = wire.fetch;
      let model;
      try {
        model = new ChatVertexAI({ model: MODEL, apiKey: 'vertex-test-not-a-key', maxRetries: 0 }).bindTools([{ googleSearch: {} }, { urlContext: {} }] as never);
      } finally {
        globalThis.fetch = saved;
      }
      const recorded = recordedPlugin(`lc-vertex-grounded-${mode}`);
      const { answer } = await ask(model, mode, `What is the weather in Paris today? See ${PAGE}`, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(new URL(wire.requests[0]!.url).pathname.endsWith(mode === 'stream' ? ':streamGenerateContent' : ':generateContent')).toBe(true);
      expect(wire.requests[0]!.body.tools).toEqual([{ googleSearch: {} }, { urlContext: {} }]);
      expect(answer.text).toBe('Paris is sunny today, 21°C. The page agrees.');
      const usage = answer.usage_metadata as Usage & { output_token_details?: { reasoning?: number } };
      // google-common: promptTokenCount in, candidates and thoughts out, Gemini's total: the 380 the tools read only in the total.
      expect([usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.output_token_details?.reasoning]).toEqual([52, 14 + 71, 52 + 380 + 14 + 71, 71]);

      const { agent } = await finishedRun(recorded);
      const [step] = agent as Step[];
      expect(step!.message).toBe(answer.text);
      expect((step!.tool_calls as Step[]).map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed])).toEqual([
        [`${answer.id}:google_search`, 'google_search', { queries: ['Paris weather today', 'Paris forecast'] }, true],
        [`${answer.id}:url_context`, 'url_context', { urls: [PAGE] }, true],
      ]);
      expect(step!.tool_calls[0].extra.provider_result.groundingChunks.map((chunk: any) => chunk.web.uri)).toEqual(FOUND.map((page) => page.uri));
      // What Gemini billed: the tools' input is prompt, the thoughts completion and reasoning.
      expect(recordedCounts(step!)).toEqual([52 + 380, 14 + 71, 16, 52 + 380 + 14 + 71, 71]);
      await sameOnNative(recorded);
    });
  }
});
