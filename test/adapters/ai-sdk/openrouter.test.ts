// The AI SDK through OpenRouter, as @openrouter/ai-sdk-provider's docs write the program (`createOpenRouter`,
// `openrouter('anthropic/claude-sonnet-4.5')`, a tool loop under `stopWhen`), against a loopback OpenRouter speaking
// its own Chat Completions (the routed model, the upstream provider, reasoning with its details, cache reads and
// writes, and the cost it charged in `usage.cost`, in the stream's last chunk when streamed). The trajectory is held
// to what OpenRouter sent and the SDK reports (openrouter-checks.ts), on memory and native. Also OpenRouter through
// @ai-sdk/openai-compatible, which hands on no cost of its own, and under aiSdkMiddleware alone.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { generateText, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { checkOpenRouterRun, loopbackOpenRouter, openrouterTurns, ANSWERED, ASKED, PROMPT, type LoopbackOpenRouter } from '../openrouter-checks.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin } from '../support.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let server: LoopbackOpenRouter;
beforeAll(async () => {
  server = await loopbackOpenRouter();
});
afterAll(() => server.close());

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** What the program reads of the charge: @openrouter/ai-sdk-provider's `providerMetadata.openrouter.usage.cost`. */
function chargedOf(metadata: Record<string, unknown> | undefined): unknown {
  return (metadata?.openrouter as { usage?: { cost?: number } } | undefined)?.usage?.cost;
}

type SdkStep = {
  usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number; cacheWriteTokens?: number }; outputTokenDetails: { reasoningTokens?: number } };
  response: { modelId: string };
  providerMetadata?: Record<string, unknown>;
};

/**
 * What the SDK reported of the run: the package reads all of OpenRouter's usage (the cache writes in
 * `prompt_tokens_details.cache_write_tokens` too), names the provider `openrouter`, and hands on the upstream that served
 * each call (`providerMetadata.openrouter.provider`).
 */
function reportOf(steps: readonly SdkStep[]) {
  const report = {
    models: steps.map((step) => step.response.modelId),
    tokens: steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens] as const),
    cached: steps.map((step) => (step.usage.inputTokenDetails.cacheReadTokens ?? 0) + (step.usage.inputTokenDetails.cacheWriteTokens ?? 0)),
    reasoningTokens: steps.map((step) => step.usage.outputTokenDetails.reasoningTokens),
    provider: 'openrouter',
    // The upstream OpenRouter says served each call, as the package hands it on.
    servedBy: steps.map((step) => (step.providerMetadata?.openrouter as { provider?: string } | undefined)?.provider),
  };
  // As OpenRouter sent them: the first call wrote 900 tokens to the cache and reasoned for 12, the second read 1310.
  expect([report.cached, report.reasoningTokens]).toEqual([
    [900, 1310],
    [12, 0],
  ]);
  return report;
}

describe('OpenRouter from the AI SDK', () => {
  it('generateText with a tool loop: steps, models, tokens, reasoning and the cost OpenRouter charged', async () => {
    const api = server.serve(false);
    const recorded = recordedPlugin('openrouter-generate');
    uninstall = instrumentAiSdk(recorded.hooks);

    const openrouter = createOpenRouter({ apiKey: 'sk-or-v1-test-not-a-key', baseURL: server.url });
    const result = await generateText({ model: openrouter(ASKED), prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });

    expect(result.text).toBe('It is sunny in Paris, 21°C.');
    // The program reads what OpenRouter charged from the provider's metadata.
    expect(result.steps.map((step) => chargedOf(step.providerMetadata))).toEqual(openrouterTurns().map((turn) => turn.cost));
    await checkOpenRouterRun(recorded, api, reportOf(result.steps));
    await sameOnNative(recorded);
  });

  it('streamText with a tool loop: the same, with the usage and the cost from the stream\'s last chunk', async () => {
    const api = server.serve(true);
    const recorded = recordedPlugin('openrouter-stream');
    uninstall = instrumentAiSdk(recorded.hooks);

    const openrouter = createOpenRouter({ apiKey: 'sk-or-v1-test-not-a-key', baseURL: server.url });
    const result = streamText({ model: openrouter(ASKED), prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    const steps = await result.steps;
    expect(steps.map((step) => chargedOf(step.providerMetadata))).toEqual(openrouterTurns().map((turn) => turn.cost));
    await checkOpenRouterRun(recorded, api, reportOf(steps));
    await sameOnNative(recorded);
  });

  // `raw`: the program asks for the raw chunks (`includeRawChunks: true`), as the SDK's docs write it.
  for (const mode of ['generate', 'stream', 'stream with raw chunks'] as const) {
    it(`OpenRouter through @ai-sdk/openai-compatible (${mode}): the cost from the usage the SDK keeps as OpenRouter sent it, and the upstream from its body or chunks`, async () => {
      const api = server.serve(mode !== 'generate');
      const recorded = recordedPlugin(`openrouter-compatible-${mode.replaceAll(' ', '-')}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      // As the package's docs write another server; it hands on no cost of its own, only the raw usage.
      const openrouter = createOpenAICompatible({ name: 'openrouter', baseURL: server.url, apiKey: 'sk-or-v1-test-not-a-key', includeUsage: true });
      let steps: ReadonlyArray<{ usage: { raw?: unknown }; response: { body?: unknown } }>;
      const raws: Array<{ provider?: string }> = [];
      const model = openrouter(ASKED);
      if (mode === 'generate') steps = (await generateText({ model, prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5), include: { responseBody: true } })).steps;
      else {
        const result = streamText({ model, prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5), includeRawChunks: mode === 'stream with raw chunks' });
        for await (const part of result.fullStream) if (part.type === 'raw') raws.push(part.rawValue as { provider?: string });
        steps = await result.steps;
      }

      const turns = openrouterTurns();
      const charged = turns.map((turn) => turn.cost);
      expect(steps.map((step) => (step.usage.raw as { cost?: number } | undefined)?.cost)).toEqual(charged);
      expect(api.requests).toHaveLength(2);
      // The package reads no `provider` of OpenRouter's answer (no provider metadata of its own): the program reads it
      // in a generated answer's body (`response.body`, kept when it asks) or in the raw chunks it asked for; a plain
      // stream has it nowhere. The LLM call's provider stays the one the program called (`openrouter.chat`).
      const servedBy =
        mode === 'generate'
          ? steps.map((step) => (step.response.body as { provider?: string }).provider)
          : mode === 'stream'
            ? [undefined, undefined]
            : [raws.find((raw) => raw.provider !== undefined)?.provider, raws.findLast((raw) => raw.provider !== undefined)?.provider];
      if (mode === 'stream') expect(raws).toEqual([]);
      if (mode !== 'stream') expect(servedBy).toEqual(turns.map((turn) => turn.provider));
      const { agent, atof } = await finishedRun(recorded);
      expect(agent.map((step) => [step.model_name, step.metrics.cost_usd, step.extra.llm_response.served_by])).toEqual(charged.map((cost, i) => [ANSWERED, cost, servedBy[i]]));
      expect(atof.filter((event) => event.category === 'llm' && event.scope_category === 'end').map((event) => [event.metadata?.provider, event.data?.served_by])).toEqual(servedBy.map((name) => [model.provider, name]));
      await sameOnNative(recorded);
    });
  }

  for (const mode of ['generate', 'stream'] as const) {
    it(`aiSdkMiddleware alone on an OpenRouter model (${mode}): the call's cost is OpenRouter's`, async () => {
      server.serve(mode === 'stream');
      const recorded = recordedPlugin(`openrouter-middleware-${mode}`);
      const openrouter = createOpenRouter({ apiKey: 'sk-or-v1-test-not-a-key', baseURL: server.url });
      const model = wrapLanguageModel({ model: openrouter(ASKED), middleware: aiSdkMiddleware(recorded.hooks) });

      // The first of the two answers is the tool call: a plain call without tools gets it as text and its cost.
      let cost: unknown;
      if (mode === 'generate') cost = chargedOf((await generateText({ model, prompt: PROMPT })).providerMetadata);
      else {
        const result = streamText({ model, prompt: PROMPT });
        await result.consumeStream();
        cost = chargedOf(await result.providerMetadata);
      }

      const [first] = openrouterTurns();
      expect(cost).toBe(first.cost);
      const { doc } = await finishedRun(recorded);
      const agent = (doc.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.message, step.metrics.cost_usd, step.extra.llm_response.served_by])).toEqual([[first.text, first.cost, first.provider]]);
    });
  }

  for (const mode of ['generate', 'stream'] as const) {
    it(`aiSdkMiddleware alone on @ai-sdk/openai-compatible at OpenRouter (${mode}): the upstream from the body or chunks as OpenRouter sent them`, async () => {
      server.serve(mode === 'stream');
      const recorded = recordedPlugin(`openrouter-compatible-middleware-${mode}`);
      const openrouter = createOpenAICompatible({ name: 'openrouter', baseURL: server.url, apiKey: 'sk-or-v1-test-not-a-key', includeUsage: true });
      const model = wrapLanguageModel({ model: openrouter(ASKED), middleware: aiSdkMiddleware(recorded.hooks) });

      // What the program can read of the upstream: the generated answer's body or the raw chunks, each when it asks.
      let served: unknown;
      if (mode === 'generate') served = ((await generateText({ model, prompt: PROMPT, include: { responseBody: true } })).response.body as { provider?: string }).provider;
      else {
        const result = streamText({ model, prompt: PROMPT, includeRawChunks: true });
        for await (const part of result.fullStream) if (part.type === 'raw') served ??= (part.rawValue as { provider?: string }).provider;
      }

      const [first] = openrouterTurns();
      expect(served).toBe(first.provider);
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.extra.llm_response.served_by])).toEqual([[first.text, first.provider]]);
      await sameOnNative(recorded);
    });
  }
});
