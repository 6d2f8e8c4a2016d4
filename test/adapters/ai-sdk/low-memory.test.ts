// experimental_streamTextLowMemory as its reference page writes it (07-reference/01-ai-sdk-core/
// 02-stream-text-low-memory.mdx: the countCharacters tool, `stopWhen: isStepCount(3)`, read from `result.stream`), and
// experimental_streamLanguageModelCall, over @ai-sdk/openai's Responses stream. The low-memory variant runs streamText's
// engine and telemetry: the same turn, tokens, finish reasons and tool calls as the program saw. The single model
// call tells no telemetry integration (stream-language-model-call.ts notifies only the callbacks passed to it): it is
// recorded only through a model wrapped with aiSdkMiddleware, as docs/adapters/ai-sdk.md says.
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { experimental_streamLanguageModelCall, experimental_streamTextLowMemory, isStepCount, tool, wrapLanguageModel } from 'ai';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { openAiResponseStream, scriptedFetch } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-2024-08-06';

describe('experimental_streamTextLowMemory', () => {
  it('is recorded as streamText is: the tool call, its result, each call\'s tokens and finish reason', async () => {
    const wire = scriptedFetch([
      openAiResponseStream({ id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_count', name: 'countCharacters', args: { text: 'astronomy' } }], usage: { prompt_tokens: 70, completion_tokens: 14, cached: 64 } }),
      openAiResponseStream({ id: 'resp_2', model: MODEL, text: 'There are 9 characters in astronomy.', usage: { prompt_tokens: 101, completion_tokens: 9 } }),
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-low-memory');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = experimental_streamTextLowMemory({
      model: openai('gpt-4o'),
      prompt: 'How many characters are in astronomy?',
      tools: {
        countCharacters: tool({
          description: 'Count the Unicode code points in a string.',
          inputSchema: z.object({ text: z.string() }),
          execute: async ({ text }) => Array.from(text).length,
        }),
      },
      stopWhen: isStepCount(3),
    });
    const outputs: unknown[] = [];
    const calls: Array<{ usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails?: { cacheReadTokens?: number } }; finishReason: string }> = [];
    let text = '';
    for await (const part of result.stream) {
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'tool-result') outputs.push(part.output);
      if (part.type === 'finish-step') calls.push({ usage: part.usage, finishReason: part.finishReason });
    }
    expect(outputs).toEqual([9]);
    expect(text).toBe('There are 9 characters in astronomy.');
    expect(calls.map((call) => call.finishReason)).toEqual(['tool-calls', 'stop']);

    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect([steps[0]!.source, steps[0]!.message]).toEqual(['user', 'How many characters are in astronomy?']);
    const agent = steps.filter((step) => step.source === 'agent');
    expect(agent.map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual(
      calls.map((call) => [MODEL, call.usage.inputTokens, call.usage.outputTokens, call.usage.inputTokenDetails?.cacheReadTokens]),
    );
    expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['call_count', 'countCharacters', { text: 'astronomy' }]]);
    expect(agent[0]!.observation.results.map((entry: AtifDoc) => [entry.source_call_id, entry.content])).toEqual([['call_count', '9']]);
    expect(agent[1]!.message).toBe(text);
    const finishes = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason);
    expect(finishes).toEqual(['tool_calls', 'stop']);
    await sameOnNative(recorded);
  });
});

describe('experimental_streamLanguageModelCall', () => {
  it('tells the integration nothing; a model wrapped with aiSdkMiddleware records the call with its tokens and finish reason', async () => {
    const reply = () => openAiResponseStream({ id: 'resp_1', model: MODEL, text: 'Astronomy is the oldest science.', usage: { prompt_tokens: 40, completion_tokens: 8, cached: 32 } });
    const wire = scriptedFetch([reply(), reply()]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });

    async function call(model: Parameters<typeof experimental_streamLanguageModelCall>[0]['model']) {
      const { stream } = await experimental_streamLanguageModelCall({ model, prompt: 'Describe the history of astronomy.' });
      let text = '';
      let end: { finishReason: string; usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails?: { cacheReadTokens?: number } } } | undefined;
      for await (const part of stream) {
        if (part.type === 'text-delta') text += part.text;
        if (part.type === 'model-call-end') end = part;
      }
      return { text, end: end! };
    }

    // The integration alone: the SDK gives it nothing to see.
    const unseen = recordedPlugin('ai-model-call-unseen');
    uninstall = instrumentAiSdk(unseen.hooks);
    expect((await call(openai('gpt-4o'))).text).toBe('Astronomy is the oldest science.');
    expect(unseen.log).toEqual([]);
    uninstall();
    uninstall = undefined;
    await unseen.finish();

    const recorded = recordedPlugin('ai-model-call');
    const { text, end } = await call(wrapLanguageModel({ model: openai('gpt-4o'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'one-call' }) }));
    expect(end.finishReason).toBe('stop');
    const { doc } = await finishedRun(recorded);
    expect(doc.session_id).toBe('one-call');
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent.map((step) => [step.message, step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual([
      [text, MODEL, end.usage.inputTokens, end.usage.outputTokens, end.usage.inputTokenDetails?.cacheReadTokens],
    ]);
    expect(recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload.finish_reason).toBe('stop');
    await sameOnNative(recorded);
  });
});
