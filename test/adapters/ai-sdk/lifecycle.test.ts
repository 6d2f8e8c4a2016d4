// The lifecycle callbacks as the AI SDK's docs write them (03-ai-sdk-core/65-lifecycle-callbacks.mdx: onStart, the
// step, model-call and tool callbacks, onEnd; experimental_decide's onStart/onEnd), in a program that also installed
// the adapter: the program's callbacks fire as they do without it (same order, same events), and the trajectory is
// recorded all the same, with what those callbacks were told.
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { experimental_decide, generateText, isStepCount, streamText, tool } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { openAiResponseEither, scriptedFetch, type WireReply } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type Recorded } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-2024-08-06';

function weatherReplies(): WireReply[] {
  return [
    openAiResponseEither({ id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_weather', name: 'weather', args: { location: 'San Francisco' } }], usage: { prompt_tokens: 55, completion_tokens: 11 } }),
    openAiResponseEither({ id: 'resp_2', model: MODEL, text: 'Foggy, 15°C.', usage: { prompt_tokens: 80, completion_tokens: 6, cached: 64 } }),
  ];
}

/** What the program's callbacks were told, in the order they were told it (callIds differ between runs: left out). */
type Seen = Array<[string, unknown]>;

/** The docs' multi-step tool call, with every callback the docs show; `first` makes the first callback throw, which the SDK says it catches. */
async function program(kind: 'generate' | 'stream', throwing: boolean): Promise<{ seen: Seen; text: string; steps: Array<{ usage: { inputTokens?: number; outputTokens?: number } }> }> {
  const wire = scriptedFetch(weatherReplies());
  const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
  const seen: Seen = [];
  const options = {
    model: openai('gpt-4o'),
    stopWhen: isStepCount(5),
    prompt: 'What is the weather in San Francisco?',
    tools: {
      weather: tool({
        description: 'Get the weather in a location',
        inputSchema: z.object({ location: z.string() }),
        execute: async ({ location }: { location: string }) => ({ location, forecast: 'Foggy', tempC: 15 }),
      }),
    },
    onStart({ modelId }: { modelId: string }) {
      seen.push(['onStart', modelId]);
      if (throwing) throw new Error('the program\'s own callback failed');
    },
    onStepStart({ stepNumber }: { stepNumber: number }) {
      seen.push(['onStepStart', stepNumber]);
    },
    onLanguageModelCallStart({ modelId }: { modelId: string }) {
      seen.push(['onLanguageModelCallStart', modelId]);
    },
    onLanguageModelCallEnd({ usage, finishReason }: { usage: { inputTokens?: number; outputTokens?: number }; finishReason: string }) {
      seen.push(['onLanguageModelCallEnd', [finishReason, usage.inputTokens, usage.outputTokens]]);
    },
    onToolExecutionStart({ toolCall }: { toolCall: { toolCallId: string; input: unknown } }) {
      seen.push(['onToolExecutionStart', [toolCall.toolCallId, toolCall.input]]);
    },
    onToolExecutionEnd({ toolCall, toolOutput }: { toolCall: { toolCallId: string }; toolOutput: { type: string; output?: unknown } }) {
      seen.push(['onToolExecutionEnd', [toolCall.toolCallId, toolOutput.type, toolOutput.output]]);
    },
    onStepEnd({ stepNumber, finishReason, toolCalls }: { stepNumber: number; finishReason: string; toolCalls: Array<{ toolName: string }> }) {
      seen.push(['onStepEnd', [stepNumber, finishReason, toolCalls.map((call) => call.toolName)]]);
    },
    onEnd({ finishReason, usage }: { finishReason: string; usage: { totalTokens?: number } }) {
      seen.push(['onEnd', [finishReason, usage.totalTokens]]);
    },
  };
  if (kind === 'generate') {
    const result = await generateText(options);
    return { seen, text: result.text, steps: result.steps };
  }
  const result = streamText(options);
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return { seen, text, steps: await result.steps };
}

async function checkRecorded(recorded: Recorded, run: { text: string; steps: Array<{ usage: { inputTokens?: number; outputTokens?: number } }> }): Promise<void> {
  const { doc } = await finishedRun(recorded);
  const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(run.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
  expect(agent[0]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['call_weather']);
  expect(agent.at(-1)!.message).toBe(run.text);
  await sameOnNative(recorded);
}

describe.each(['generate', 'stream'] as const)('lifecycle callbacks with the adapter installed (%sText)', (kind) => {
  it('fire as they do without it, and the run is recorded', async () => {
    const alone = await program(kind, false);
    expect(alone.seen.map(([name]) => name)).toContain('onToolExecutionEnd');

    const recorded = recordedPlugin(`ai-lifecycle-${kind}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const withAdapter = await program(kind, false);
    expect(withAdapter.seen).toEqual(alone.seen);
    expect(withAdapter.text).toBe(alone.text);
    await checkRecorded(recorded, withAdapter);
  });

  it('a callback of the program that throws changes nothing the adapter records', async () => {
    const recorded = recordedPlugin(`ai-lifecycle-throws-${kind}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const run = await program(kind, true);
    expect(run.seen.map(([name]) => name).at(-1)).toBe('onEnd');
    await checkRecorded(recorded, run);
  });
});

describe('experimental_decide onStart/onEnd with the adapter installed', () => {
  it('fire once each, with the answers and usage the trajectory records', async () => {
    const wire = scriptedFetch([
      {
        json: {
          model: 'gpt-6-luna-2026-10-01',
          usage: { input_tokens: 40, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 43 },
          answers: [{ type: 'predicate', name: 'refund', probability: 0.97 }],
        },
      },
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-lifecycle-decide');
    uninstall = instrumentAiSdk(recorded.hooks);
    const seen: Seen = [];
    const result = await experimental_decide({
      model: openai.decisionModel('gpt-6-luna'),
      state: 'I was charged twice. Please refund the extra charge.',
      questions: { refund: { type: 'boolean', instructions: 'Is the customer asking for a refund?' } },
      onStart({ modelId }) {
        seen.push(['onStart', modelId]);
      },
      onEnd({ answers, usage }) {
        const refund = answers.refund;
        seen.push(['onEnd', [refund.type === 'boolean' ? refund.probability : refund, usage.inputTokens, usage.outputTokens]]);
      },
    });
    expect(seen).toEqual([
      ['onStart', 'gpt-6-luna'],
      ['onEnd', [0.97, 40, 3]],
    ]);
    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent.map((step) => [JSON.parse(step.message as string), step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[result.answers, 40, 3]]);
    await sameOnNative(recorded);
  });
});
