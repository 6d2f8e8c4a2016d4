// Side by side with OpenInference's Agents SDK instrumentation (a tracing
// processor; tracing on), in the same run: the same model calls, the same
// models, the same token counts, the same tools, and the same prompt in the
// first request. A run on OpenAIResponsesModel through the real openai
// client and a fake fetch, with a tool loop and an agent used as a tool.
import { afterEach, describe, expect, it } from 'vitest';
import { OpenInferenceTracingProcessor } from '@arizeai/openinference-instrumentation-openai-agents';
import { Agent, run, setTraceProcessors, setTracingDisabled, tool } from '@openai/agents';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, hooks, onlyTrajectory, sdkTotals, tokenTotals, trajectoriesOf } from './support.ts';
import { FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
  setTraceProcessors([]);
});

const attr = (span: ReadableSpan, key: string): unknown => span.attributes[key];

describe('OpenAI Agents adapter beside OpenInference', () => {
  it('records the same model calls, models, tokens and tools as OpenInference in the same run', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    setTraceProcessors([new OpenInferenceTracingProcessor({ tracerProvider })]);
    setTracingDisabled(false);
    api.load({
      'gpt-4.1': [
        {
          calls: [
            { id: 'call_w', name: 'get_weather', args: { city: 'Lisbon' } },
            { id: 'call_t', name: 'translate', args: { input: 'sunny' } },
          ],
          usage: { input: 140, output: 31, cached: 64 },
        },
        { text: 'Lisbon is sunny: ensolarado.', usage: { input: 220, output: 12, cached: 128 } },
      ],
      'gpt-4.1-nano': [{ text: 'ensolarado', usage: { input: 18, output: 3 } }],
    });
    const recorded = recordedPlugin('agents-openinference');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const translator = new Agent({ name: 'Translator', instructions: 'Translate to Portuguese.', model: 'gpt-4.1-nano' });
    const agent = new Agent({
      name: 'Travel Agent',
      instructions: 'Help travellers.',
      model: 'gpt-4.1',
      tools: [
        tool({ name: 'get_weather', description: 'Weather', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }),
        translator.asTool({ toolName: 'translate', toolDescription: 'Translate to Portuguese' }),
      ],
    });
    const result = await run(agent, 'Weather in Lisbon, in Portuguese?');
    await tracerProvider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const llm = spans.filter((span) => attr(span, 'openinference.span.kind') === 'LLM').sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
    const tools = spans.filter((span) => attr(span, 'openinference.span.kind') === 'TOOL');

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = onlyTrajectory(atif);
    const steps = trajectoriesOf(doc).flatMap(agentSteps);

    // The same model calls, answered by the same models.
    expect(llm).toHaveLength(3);
    expect(tools).toHaveLength(2);
    expect(steps).toHaveLength(llm.length);
    expect(steps.map((step) => step.model_name).sort()).toEqual(llm.map((span) => attr(span, 'llm.model_name')).sort());
    // The same tokens (and both equal the SDK's own count).
    const theirs = {
      prompt: llm.reduce((sum, span) => sum + Number(attr(span, 'llm.token_count.prompt') ?? 0), 0),
      completion: llm.reduce((sum, span) => sum + Number(attr(span, 'llm.token_count.completion') ?? 0), 0),
      cached: llm.reduce((sum, span) => sum + Number(attr(span, 'llm.token_count.prompt_details.cache_read') ?? 0), 0),
    };
    expect(tokenTotals(doc)).toEqual(theirs);
    expect(theirs).toEqual(sdkTotals(result.state.usage));
    expect(theirs).toEqual({ prompt: 378, completion: 46, cached: 192 });
    // The same tools.
    expect(hooks(recorded, 'post_tool_call').map((payload) => payload.tool_name).sort()).toEqual(tools.map((span) => span.name).sort());
    // The same prompt in the first request.
    const first = llm.find((span) => attr(span, 'llm.model_name') === 'gpt-4.1-2025-04-14')!;
    const firstRequest = hooks(recorded, 'pre_api_request')[0]!.request.body.messages as Array<Record<string, unknown>>;
    expect(firstRequest.at(-1)).toEqual({ role: 'user', content: attr(first, 'llm.input_messages.1.message.content') ?? attr(first, 'llm.input_messages.0.message.content') });
  }, 30_000);
});
