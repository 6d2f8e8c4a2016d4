// Gemini's own tools through the AI SDK, as @ai-sdk/google's docs write the programs: `google.tools.googleSearch({})`
// and `google.tools.urlContext({})` (grounding: the answer's `sources` and `providerMetadata.google.groundingMetadata`
// / `urlContextMetadata`), `google.tools.codeExecution({})` (the SDK's provider-executed `code_execution` calls and
// their results), with thoughts asked for (`thinkingConfig.includeThoughts`), on the real `@ai-sdk/google` of each
// major over a fake fetch speaking Gemini's JSON and SSE as gemini-2.5-flash sends them (test/support/gemini-wire.ts:
// `toolUsePromptTokenCount`, `thoughtsTokenCount`, `cachedContentTokenCount`, every chunk with the counts so far).
// Each trajectory is held to what the SDK returned: the text, the thoughts, the calls Gemini ran (a search under the
// queries `groundingMetadata` names, with the pages the SDK's `sources` list; the pages URL context read; the code
// and what it printed, a failed run as failed) and the SDK's tokens. Under `instrumentAiSdk` and under
// `aiSdkMiddleware` alone; memory and native write the same files.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, streamText, wrapLanguageModel, type LanguageModel } from 'ai';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { COMPUTED, GEMINI_FOUND, GEMINI_MODEL, GEMINI_PAGE, GROUNDED, geminiJson, geminiSse, type GeminiAnswer } from '../../support/gemini-wire.ts';
import { scriptedFetch } from '../../support/provider-wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = GEMINI_MODEL;
const PAGE = GEMINI_PAGE;
const FOUND = GEMINI_FOUND;

type Step = AtifDoc;
type SdkStep = {
  text: string;
  reasoningText?: string;
  content: Array<Record<string, any>>;
  sources: Array<{ url: string }>;
  usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number; inputTokenDetails: { cacheReadTokens?: number }; outputTokenDetails: { reasoningTokens?: number } };
  providerMetadata?: any;
};

/** The program as the SDK's docs write it, one model call; `wrap`: under aiSdkMiddleware alone instead of instrumentAiSdk. */
async function run(packages: ProviderPackages, answer: GeminiAnswer, mode: 'generate' | 'stream', label: string, wrap = false) {
  const wire = scriptedFetch([mode === 'stream' ? geminiSse(answer) : geminiJson(answer)]);
  const google = packages.google({ apiKey: 'test-key', fetch: wire.fetch }) as ReturnType<ProviderPackages['google']> & { tools: any };
  const recorded = recordedPlugin(label);
  let model: LanguageModel = google(MODEL);
  if (wrap) model = wrapLanguageModel({ model: model as never, middleware: aiSdkMiddleware(recorded.hooks, { sessionId: label }) });
  else uninstall = instrumentAiSdk(recorded.hooks, { sessionId: label });
  const options = {
    model,
    tools: { google_search: google.tools.googleSearch({}), url_context: google.tools.urlContext({}), code_execution: google.tools.codeExecution({}) },
    providerOptions: { google: { thinkingConfig: { includeThoughts: true } } },
    prompt: `What is the weather in Paris today, in °F? See ${PAGE}`,
  };
  let step: SdkStep;
  if (mode === 'generate') step = (await generateText(options)).steps[0] as unknown as SdkStep;
  else {
    const result = streamText(options);
    await result.consumeStream();
    step = (await result.steps)[0] as unknown as SdkStep;
  }
  // The tools went to Gemini as its built-in tools, not as functions.
  expect(wire.requests[0]!.body.tools).toEqual([{ googleSearch: {} }, { urlContext: {} }, { codeExecution: {} }]);
  expect(new URL(wire.requests[0]!.url).pathname.endsWith(mode === 'stream' ? ':streamGenerateContent' : ':generateContent')).toBe(true);
  return { recorded, step };
}

/** The step's counts as the SDK reports them: [prompt, completion, cached, total, reasoning]. */
const sdkCounts = (step: SdkStep): unknown[] => [step.usage.inputTokens, step.usage.outputTokens, step.usage.inputTokenDetails.cacheReadTokens ?? 0, step.usage.totalTokens, step.usage.outputTokenDetails.reasoningTokens];
const recordedCounts = (step: Step): unknown[] => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0, step.metrics.extra?.total_tokens, step.metrics.extra?.completion_tokens_details?.reasoning_tokens];

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('Gemini\'s own tools through the AI SDK (@ai-sdk/google %s)', (major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    for (const wrap of [false, true]) {
      const how = wrap ? 'aiSdkMiddleware' : 'instrumentAiSdk';
      it(`${mode}Text, ${how}: Google Search and URL context are calls Gemini ran, with the queries, the pages and the tokens Gemini billed`, async () => {
        const { recorded, step } = await run(packages, GROUNDED, mode, `ai-gemini-grounded-${mode}-${major}-${how}`, wrap);
        const grounding = step.providerMetadata.google.groundingMetadata;
        expect(step.text).toBe('Paris is sunny today, 21°C. The page agrees.');
        // The SDK reports no call for them: the pages as `sources`, the rest as metadata.
        expect(step.content.filter((part) => part.type === 'tool-call')).toEqual([]);
        expect(step.sources.map((source) => source.url)).toEqual(FOUND.map((page) => page.uri));

        const { doc, agent, atof } = await finishedRun(recorded);
        expect(agent).toHaveLength(1);
        const [answer] = agent as Step[];
        expect(answer!.message).toBe(step.text);
        expect(answer!.reasoning_content).toBe(step.reasoningText);
        expect(answer!.reasoning_content).toBe('Search the forecast, read the page given.');
        // The search: its queries as Gemini named them; its result the grounding metadata, every page the SDK's sources list.
        const calls = answer!.tool_calls as Step[];
        expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed])).toEqual([
          ['gem-grounded-1:google_search', 'google_search', { queries: grounding.webSearchQueries }, true],
          ['gem-grounded-1:url_context', 'url_context', { urls: [PAGE] }, true],
        ]);
        expect(calls[0]!.extra.provider_result.groundingChunks.map((chunk: any) => chunk.web.uri)).toEqual(step.sources.map((source) => source.url));
        expect(calls[0]!.extra.provider_result.groundingSupports).toEqual(grounding.groundingSupports);
        expect(calls[1]!.extra.provider_result).toEqual(step.providerMetadata.google.urlContextMetadata);
        expect(calls.every((call) => call.extra.provider_error === undefined)).toBe(true);
        // Nothing ran in the program: no tool span, no observation.
        expect(atof.filter((event) => event.kind === 'scope' && event.category === 'tool')).toEqual([]);
        expect(answer!.observation).toBeUndefined();
        // What Gemini billed: the tools' input (toolUsePromptTokenCount) is prompt, the thoughts completion and
        // reasoning. 4.x reports the same; 3.x leaves the tools' input out of its input and total, which the raw
        // usageMetadata it keeps beside them says.
        const billed = [52 + 380, 14 + 71, 16, 52 + 380 + 14 + 71, 71];
        expect(recordedCounts(answer!)).toEqual(billed);
        expect(sdkCounts(step)).toEqual(major === '4.x' ? billed : [52, 14 + 71, 16, 52 + 14 + 71, 71]);
        expect(step.providerMetadata.google.usageMetadata).toMatchObject({ promptTokenCount: 52, toolUsePromptTokenCount: 380, totalTokenCount: billed[3] });
        expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: billed[0], total_completion_tokens: billed[1], total_cached_tokens: 16 });
        if (mode === 'stream' && !wrap) {
          expect(await viewRows(recorded, 'atif')).toEqual([
            `LLM ${MODEL}  432 in (16 cached) / 85 out  → google_search, url_context · Paris is sunny today, 21°C. The page agrees.`,
            'tool google_search  {"queries":["Paris weather today","Paris forecast"]} · run by the provider: 2 results',
            `tool url_context  {"urls":["${PAGE}"]} · run by the provider`,
          ]);
        }
        await sameOnNative(recorded);
      });
    }

    it(`${mode}Text: code execution is the SDK's calls Gemini ran, the failed run failed, with the SDK's tokens`, async () => {
      const { recorded, step } = await run(packages, COMPUTED, mode, `ai-gemini-code-${mode}-${major}`);
      const sdkCalls = step.content.filter((part) => part.type === 'tool-call');
      const sdkResults = step.content.filter((part) => part.type === 'tool-result');
      expect(sdkCalls.map((call) => [call.toolName, call.providerExecuted])).toEqual([
        ['code_execution', true],
        ['code_execution', true],
      ]);
      const { agent, atof } = await finishedRun(recorded);
      const [answer] = agent as Step[];
      expect(answer!.message).toBe(step.text);
      expect(answer!.message).toBe('21°C is 69.8°F.');
      expect(answer!.reasoning_content).toBe('Convert with Python.');
      const calls = answer!.tool_calls as Step[];
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra.provider_result])).toEqual(
        sdkCalls.map((call, index) => [call.toolCallId, 'code_execution', typeof call.input === 'string' ? JSON.parse(call.input) : call.input, sdkResults[index]!.output]),
      );
      expect(calls.map((call) => call.arguments.code)).toEqual(['print(c * 9 / 5 + 32)', 'c = 21\nprint(c * 9 / 5 + 32)']);
      // Gemini's outcome says the first run failed: the call is failed, with what it printed.
      expect(calls.map((call) => call.extra.provider_error)).toEqual(["OUTCOME_FAILED: NameError: name 'c' is not defined", undefined]);
      expect(atof.filter((event) => event.kind === 'scope' && event.category === 'tool')).toEqual([]);
      expect(recordedCounts(answer!)).toEqual(sdkCounts(step));
      expect(sdkCounts(step)).toEqual([30, 60 + 25, 0, 30 + 60 + 25, 25]);
      await sameOnNative(recorded);
    });
  }
});
