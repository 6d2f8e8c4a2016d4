// The AI SDK adapter on a program written the way the SDK's docs write it —
// a ToolLoopAgent with a tool, run with generate() and stream() — driving the
// real provider packages over a fake fetch that speaks OpenAI Responses,
// OpenAI Chat Completions and Anthropic Messages (JSON and SSE, with prompt
// caching, reasoning and a retried 5xx) and Gemini (JSON, with thoughts),
// once per provider major (test/support/ai-sdk-providers.ts). Each
// trajectory is checked against what the program did and what the SDK
// itself reports.
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, stepCountIs, tool, type LanguageModel } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { scriptedFetch } from '../../support/provider-wire.ts';
import { backends, expectNothingLost, expectRetriedFirstCall, recordedPlugin, type AtifDoc } from '../support.ts';
import { FakeProvider, type Turn, type Wire } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** The wires this matrix runs; Gemini's (no call ids on the wire, no dated model from the SDK) runs in gemini.test.ts. */
type MatrixWire = Exclude<Wire, 'gemini' | 'ollama' | 'cohere'>;

const PROVIDERS: Record<MatrixWire, { model: (packages: ProviderPackages, fake: FakeProvider) => LanguageModel; requested: string; dated: string; status: number; reasoning: boolean }> = {
  responses: { model: (packages, fake) => packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('o4-mini'), requested: 'o4-mini', dated: 'o4-mini-2025-04-16', status: 503, reasoning: true },
  chat: { model: (packages, fake) => packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch }).chat('gpt-4o-mini'), requested: 'gpt-4o-mini', dated: 'gpt-4o-mini-2024-07-18', status: 503, reasoning: false },
  anthropic: { model: (packages, fake) => packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-sonnet-4-5'), requested: 'claude-sonnet-4-5', dated: 'claude-sonnet-4-5-20250929', status: 529, reasoning: true },
};

/** The two model turns of the weather program, with the provider's usage (prompt caching on the second). */
function turns(wire: MatrixWire): [Turn, Turn] {
  const { dated, reasoning } = PROVIDERS[wire];
  return [
    {
      id: `${wire}-resp-1`,
      model: dated,
      reasoning: reasoning ? 'The user wants Paris weather; call the tool.' : undefined,
      text: 'Let me look that up.',
      toolCalls: [{ id: 'call_weather_1', name: 'weather', args: { city: 'Paris' } }],
      usage: { input: 1000, cached: 0, cacheWrite: wire === 'anthropic' ? 900 : undefined, output: 40, reasoning: reasoning ? 12 : 0 },
    },
    {
      id: `${wire}-resp-2`,
      model: dated,
      text: 'It is sunny in Paris, 21°C.',
      usage: wire === 'anthropic' ? { input: 100, cached: 1310, output: 15 } : { input: 1410, cached: 1024, output: 15 },
    },
  ];
}

function weatherAgent(model: LanguageModel) {
  return new ToolLoopAgent({
    model,
    instructions: 'You are a weather assistant.',
    tools: {
      weather: tool({
        description: 'Get the weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
      }),
    },
    stopWhen: stepCountIs(5),
    telemetry: { functionId: 'weather-agent' },
  });
}

type Steps = Array<Record<string, any>>;

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('instrumentAiSdk with the real provider packages (%s)', (major, packages) => {
  for (const wire of ['responses', 'chat', 'anthropic'] as const) {
    for (const mode of ['generate', 'stream'] as const) {
      // One run against native is enough to hold the two relays to the same files.
      const onNative = wire === 'anthropic' && mode === 'stream' && major === '4.x' && backends().includes('native');
      for (const backend of onNative ? (['memory', 'native'] as const) : (['memory'] as const)) {
        it(`${wire} ${mode}: steps, tool call, reasoning, retry, dated model and the SDK's token totals (${backend})`, async () => {
          const provider = PROVIDERS[wire];
          const fake = new FakeProvider();
          const [first, second] = turns(wire);
          fake.fail(wire, provider.status, 'overloaded, try again');
          fake.reply(wire, first, { stream: mode === 'stream' });
          fake.reply(wire, second, { stream: mode === 'stream' });
          const recorded = recordedPlugin(`ai-${wire}-${mode}`, backend);
          uninstall = instrumentAiSdk(recorded.hooks);
          const agent = weatherAgent(provider.model(packages, fake));

          let text: string;
          let totalUsage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number; cacheWriteTokens?: number } };
          let stepUsage: Array<{ inputTokens?: number; outputTokens?: number }>;
          if (mode === 'generate') {
            const result = await agent.generate({ prompt: 'What is the weather in Paris?' });
            ({ text, totalUsage } = result);
            stepUsage = result.steps.map((step) => step.usage);
          } else {
            const result = await agent.stream({ prompt: 'What is the weather in Paris?' });
            let streamed = '';
            for await (const delta of result.textStream) streamed += delta;
            text = await result.text;
            expect(streamed).toBe(`Let me look that up.${text}`); // textStream carries every step's text
            totalUsage = await result.totalUsage;
            stepUsage = (await result.steps).map((step) => step.usage);
          }
          expect(text).toBe('It is sunny in Paris, 21°C.');
          expect(fake.requests).toHaveLength(3); // the failed attempt, its retry, the call after the tool
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expect(atif).toHaveLength(1);
          const doc = atif[0]!;
          expect(validateAtif(doc)).toEqual([]);
          const steps = doc.steps as Steps;

          // Time order.
          const times = steps.map((step) => Date.parse(step.timestamp));
          expect([...times].sort((a, b) => a - b)).toEqual(times);

          // The user's prompt, then the failed attempt, then the answered call and the final one.
          expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
          const answered = steps.filter((step) => step.source === 'agent' && step.metrics !== undefined);
          expect(answered.map((step) => step.message)).toEqual(['Let me look that up.', 'It is sunny in Paris, 21°C.']);
          expect(answered.map((step) => step.model_name)).toEqual([provider.dated, provider.dated]);
          if (provider.reasoning) expect(answered[0]!.reasoning_content).toBe('The user wants Paris weather; call the tool.');
          else expect(answered[0]!.reasoning_content).toBeUndefined();
          expect(answered[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'call_weather_1', function_name: 'weather', arguments: { city: 'Paris' } })]);
          const observation = answered[0]!.observation.results[0];
          expect(observation.source_call_id).toBe('call_weather_1');
          expect(JSON.parse(observation.content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });

          // Tokens: each step what the SDK reported for it, the totals what it reported for the run.
          expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(stepUsage.map((usage) => [usage.inputTokens, usage.outputTokens]));
          expect(doc.final_metrics.total_prompt_tokens).toBe(totalUsage.inputTokens);
          expect(doc.final_metrics.total_completion_tokens).toBe(totalUsage.outputTokens);
          expect(doc.final_metrics.total_cached_tokens ?? 0).toBe((totalUsage.inputTokenDetails.cacheReadTokens ?? 0) + (totalUsage.inputTokenDetails.cacheWriteTokens ?? 0));

          // The retry: one api_request_id, the failure (its status) and the attempt that answered.
          const attempts = expectRetriedFirstCall(recorded.log);
          expect(attempts[1]!.payload).toMatchObject({ status_code: provider.status, retryable: true });

          // What was sent: the system prompt and the user's prompt, then the tool's result under its call id.
          const requests = attempts.filter((entry) => entry.hook === 'pre_api_request').map((entry) => (entry.payload.request as any).body);
          expect(requests[0].model).toBe(provider.requested);
          expect(requests[0].messages).toEqual([
            { role: 'system', content: 'You are a weather assistant.' },
            { role: 'user', content: 'What is the weather in Paris?' },
          ]);
          expect(requests[0].tools.map((tool: any) => tool.function.name)).toEqual(['weather']);
          const toolMessage = requests.at(-1).messages.find((message: any) => message.role === 'tool');
          expect(toolMessage.tool_call_id).toBe('call_weather_1');
          expect(JSON.parse(toolMessage.content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });

          // Names: the agent's functionId, the model requested at the start.
          const start = recorded.log.find((entry) => entry.hook === 'on_session_start')!;
          expect(start.payload).toMatchObject({ agent_name: 'weather-agent', model: provider.requested });
        });
      }
    }
  }

  it('gemini generate: thoughts, a tool call under the id the SDK gives it, and the SDK\'s token totals', async () => {
    // Gemini's wire (JSON): thoughts and text and a functionCall (which has no id), then the answer, read partly from the cache.
    const usage = (prompt: number, candidates: number, cached: number, thoughts: number) => ({ promptTokenCount: prompt, candidatesTokenCount: candidates, cachedContentTokenCount: cached, thoughtsTokenCount: thoughts, totalTokenCount: prompt + candidates + thoughts });
    const answer = (parts: unknown[], usageMetadata: unknown, responseId: string) => ({ json: { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash-001', responseId } });
    const { fetch, requests } = scriptedFetch([
      answer([{ text: 'The user wants Paris weather; call the tool.', thought: true }, { text: 'Let me look that up.' }, { functionCall: { name: 'weather', args: { city: 'Paris' } } }], usage(1000, 20, 0, 30), 'gemini-1'),
      answer([{ text: 'It is sunny in Paris, 21°C.' }], usage(1100, 8, 1024, 5), 'gemini-2'),
    ]);
    const recorded = recordedPlugin(`ai-gemini-${major}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const result = await weatherAgent(packages.google({ apiKey: 'test-key', fetch })('gemini-2.5-flash')).generate({ prompt: 'What is the weather in Paris?' });
    expect(result.text).toBe('It is sunny in Paris, 21°C.');
    expect(requests).toHaveLength(2);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const answered = (doc.steps as Steps).filter((step) => step.source === 'agent');
    expect(answered.map((step) => [step.message, step.reasoning_content])).toEqual([
      ['Let me look that up.', 'The user wants Paris weather; call the tool.'],
      ['It is sunny in Paris, 21°C.', undefined],
    ]);
    const call = result.steps[0]!.toolCalls[0]!;
    expect(answered[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: call.toolCallId, function_name: 'weather', arguments: { city: 'Paris' } })]);
    expect(answered[0]!.observation.results[0].source_call_id).toBe(call.toolCallId);
    // The model is what the SDK reports: the Google provider does not pass modelVersion on (docs/adapters/ai-sdk.md).
    expect(answered.map((step) => step.model_name)).toEqual(result.steps.map((step) => step.response.modelId));
    // Tokens: thoughts are output tokens, as the SDK counts them.
    expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual(
      result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, step.usage.inputTokenDetails.cacheReadTokens]),
    );
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: result.totalUsage.inputTokens, total_completion_tokens: result.totalUsage.outputTokens, total_cached_tokens: result.totalUsage.inputTokenDetails.cacheReadTokens });
    expect(result.totalUsage.outputTokens).toBe(63);
  });
});

export type { AtifDoc };
