// Side by side with OpenInference in the same run: the AI SDK's own
// OpenTelemetry integration (@ai-sdk/otel) feeding @arizeai/openinference-vercel
// records the same Anthropic program (prompt caching on, a tool, streaming)
// as instrumentAiSdk. Their token counts per model call and the SDK's
// totals agree with ours (the double count of cache reads issue 20 found
// would be 1,900 + 1,410 against their 1,000 + 900 / 100 + 1,310).
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, registerTelemetry, stepCountIs, tool, type Telemetry } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { OpenTelemetry } from '@ai-sdk/otel';
import { OpenInferenceSimpleSpanProcessor } from '@arizeai/openinference-vercel';
import { BasicTracerProvider, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('instrumentAiSdk next to OpenInference', () => {
  it('counts the same tokens per model call, and the same totals as the SDK', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new OpenInferenceSimpleSpanProcessor({ exporter })] });
    const openinference = new OpenTelemetry({ tracer: tracerProvider.getTracer('side-by-side') });
    registerTelemetry(openinference as unknown as Telemetry);
    cleanups.push(() => {
      const list = (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS;
      if (Array.isArray(list)) list.splice(list.indexOf(openinference), 1);
    });
    const recorded = recordedPlugin('ai-openinference');
    const uninstall = instrumentAiSdk(recorded.hooks);
    cleanups.push(uninstall);

    const fake = new FakeProvider();
    fake.reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text: 'Checking.', toolCalls: [{ id: 'toolu_1', name: 'weather', args: { city: 'Oslo' } }], usage: { input: 1000, cacheWrite: 900, output: 40 } }, { stream: true });
    fake.reply('anthropic', { id: 'msg_2', model: 'claude-sonnet-4-5-20250929', text: 'Cold and clear.', usage: { input: 100, cached: 1310, output: 12 } }, { stream: true });
    const agent = new ToolLoopAgent({
      model: createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-sonnet-4-5'),
      instructions: 'You are a weather assistant.',
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => ({ sky: 'clear', tempC: -3 }) }) },
      stopWhen: stepCountIs(4),
    });
    const result = await agent.stream({ prompt: 'Weather in Oslo?' });
    await result.consumeStream();
    const totalUsage = await result.totalUsage;
    await tracerProvider.forceFlush();

    // OpenInference's LLM spans, in order: prompt and completion counts per model call.
    const llmSpans = exporter
      .getFinishedSpans()
      .filter((span) => span.attributes['openinference.span.kind'] === 'LLM')
      .sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
    const theirs = llmSpans.map((span) => [span.attributes['llm.token_count.prompt'], span.attributes['llm.token_count.completion']]);
    expect(theirs).toHaveLength(2);

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const ours = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([[1900, 40], [1410, 12]]);
    expect(atif[0]!.final_metrics).toMatchObject({ total_prompt_tokens: totalUsage.inputTokens, total_completion_tokens: totalUsage.outputTokens });
  });
});
