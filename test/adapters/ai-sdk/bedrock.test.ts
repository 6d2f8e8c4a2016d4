// The AI SDK on Amazon Bedrock, as @ai-sdk/amazon-bedrock's docs write the program (`bedrock(modelId)` from the
// package's default provider, credentials and region from the environment; a cross-region inference profile id as the
// model), generateText and streamText with a tool loop, against a loopback Bedrock speaking the Converse API: JSON, and
// the AWS event-stream framing when streamed (bedrock-wire.ts). The trajectory is held to what Bedrock sent and the SDK
// reports (bedrock-checks.ts), on memory and native; a throttled call retried, and a guardrail that intervened.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bedrock } from '@ai-sdk/amazon-bedrock';
import { generateText, stepCountIs, streamText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { checkBedrockRun, checkGuardrail, checkRefused, checkThrottledRetry, INFERENCE_PROFILE, PROMPT } from '../bedrock-checks.ts';
import { ACCESS_DENIED, GUARDRAIL_TURN, loopbackBedrock, THROTTLED, weatherTurns, type LoopbackBedrock } from '../bedrock-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { recordedPlugin } from '../support.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let server: LoopbackBedrock;
beforeAll(async () => {
  server = await loopbackBedrock();
});
afterAll(() => server.close());

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type SdkStep = {
  usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number; cacheWriteTokens?: number } };
  response: { modelId: string };
  finishReason: string;
};

/** What the SDK reported of each step: the package adds Bedrock's cache reads and writes to `inputTokens`. */
function reportOf(steps: readonly SdkStep[]) {
  return {
    models: steps.map((step) => step.response.modelId),
    tokens: steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens] as const),
    cacheReads: steps.map((step) => step.usage.inputTokenDetails.cacheReadTokens ?? 0),
    cacheWrites: steps.map((step) => step.usage.inputTokenDetails.cacheWriteTokens ?? 0),
    finishReasons: steps.map((step) => step.finishReason),
  };
}

describe('Amazon Bedrock from the AI SDK', () => {
  it('generateText with a tool loop: the Converse answers, the inference profile, tokens with the cache counted once, reasoning', async () => {
    const seen = server.serve(weatherTurns('weather'), 'fetch');
    const recorded = recordedPlugin('bedrock-generate');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({ model: bedrock(INFERENCE_PROFILE), prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });

    expect(result.text).toBe('It is sunny in Paris, 21°C.');
    expect(result.steps[0]!.reasoningText).toBe(weatherTurns('weather')[0].reasoning!.text);
    await checkBedrockRun(recorded, seen, reportOf(result.steps), { tool: 'weather', stream: false, provider: 'amazon-bedrock' });
    await sameOnNative(recorded);
  });

  it('streamText with a tool loop: the same from the event stream', async () => {
    const seen = server.serve(weatherTurns('weather'), 'fetch');
    const recorded = recordedPlugin('bedrock-stream');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = streamText({ model: bedrock(INFERENCE_PROFILE), prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    await checkBedrockRun(recorded, seen, reportOf(await result.steps), { tool: 'weather', stream: true, provider: 'amazon-bedrock' });
    await sameOnNative(recorded);
  });

  it('a throttled call retried by the SDK: both attempts, the ThrottlingException and then the answer', async () => {
    const [, answer] = weatherTurns('weather');
    const seen = server.serve([THROTTLED, answer], 'fetch');
    const recorded = recordedPlugin('bedrock-throttled');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({ model: bedrock(INFERENCE_PROFILE), prompt: PROMPT });

    expect(result.text).toBe(answer.text);
    expect(seen).toHaveLength(2);
    await checkThrottledRetry(recorded, { status: 429, sdkRetried: true });
    await sameOnNative(recorded);
  });

  it('a model the account may not use (AccessDeniedException): one failed attempt, the turn failed with what the program caught', async () => {
    const seen = server.serve([ACCESS_DENIED], 'fetch');
    const recorded = recordedPlugin('bedrock-denied');
    uninstall = instrumentAiSdk(recorded.hooks);

    const caught = await generateText({ model: bedrock(INFERENCE_PROFILE), prompt: PROMPT }).then(
      () => undefined,
      (error: Error) => error,
    );

    expect(seen).toHaveLength(1);
    expect(caught).toBeInstanceOf(Error);
    await checkRefused(recorded, { name: caught!.name, message: caught!.message });
    await sameOnNative(recorded);
  });

  for (const mode of ['generate', 'stream'] as const) {
    it(`a guardrail that intervened (${mode}): its message is the answer, stopped for content_filter`, async () => {
      const seen = server.serve([GUARDRAIL_TURN], 'fetch');
      const recorded = recordedPlugin(`bedrock-guardrail-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const guardrailConfig = { guardrailIdentifier: 'gr7x2k1q', guardrailVersion: '1', trace: 'enabled' as const };
      let text: string;
      let finishReason: string;
      if (mode === 'generate') ({ text, finishReason } = await generateText({ model: bedrock(INFERENCE_PROFILE), prompt: 'Which stocks should I buy?', providerOptions: { bedrock: { guardrailConfig } } }));
      else {
        const result = streamText({ model: bedrock(INFERENCE_PROFILE), prompt: 'Which stocks should I buy?', providerOptions: { bedrock: { guardrailConfig } } });
        text = await result.text;
        finishReason = await result.finishReason;
      }

      expect([text, finishReason]).toEqual([GUARDRAIL_TURN.text, 'content-filter']);
      expect(seen[0]!.body.guardrailConfig).toMatchObject({ guardrailIdentifier: 'gr7x2k1q' });
      await checkGuardrail(recorded);
      await sameOnNative(recorded);
    });
  }
});
