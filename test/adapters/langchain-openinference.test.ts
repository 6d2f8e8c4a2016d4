// Side by side with OpenInference's LangChain instrumentation, in the same
// process and the same run: the token counts our trajectory records for a
// ChatAnthropic agent with prompt caching equal what OpenInference puts on
// its LLM spans (llm.token_count.prompt / completion).
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicMessage, scriptedFetch } from '../support/provider-wire.ts';
import { recordedPlugin, type AtifDoc } from './support.ts';

describe('LangChain adapter beside OpenInference', () => {
  it('records the same prompt and completion tokens as OpenInference for a cached ChatAnthropic run', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
    instrumentation.manuallyInstrument(CallbackManagerModule);
    try {
      const { fetch } = scriptedFetch([
        anthropicMessage({ id: 'msg_1', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 270, output_tokens: 40, cache_creation_input_tokens: 3000 } }),
        anthropicMessage({ id: 'msg_2', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'Sunny.' }], usage: { input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216 } }),
      ]);
      const weather = tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'weather', schema: z.object({ city: z.string() }) });
      const agent = createAgent({ model: new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } }), tools: [weather] });
      const recorded = recordedPlugin('lc-openinference');
      await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      await provider.forceFlush();
      const theirs = exporter
        .getFinishedSpans()
        .filter((span) => span.attributes['openinference.span.kind'] === 'LLM')
        .map((span) => [span.attributes['llm.token_count.prompt'], span.attributes['llm.token_count.completion']]);
      const { atif } = await recorded.finish();
      const ours = (atif[0]!.steps as AtifDoc[]).filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
      expect(theirs).toEqual([[3270, 40], [1410, 12]]);
      expect(ours).toEqual(theirs);
    } finally {
      instrumentation.disable();
      await provider.shutdown();
    }
  });
});
