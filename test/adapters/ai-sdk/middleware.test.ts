// aiSdkMiddleware: on its own, a wrapped model's calls are recorded from the
// attempts the model sees, streamed ones with their text and usage; next to
// instrumentAiSdk it steps aside for text runs and adds the retries the SDK
// does not report to telemetry for generateObject. With each provider major
// (test/support/ai-sdk-providers.ts): 3.x models speak the older
// specification, which the SDK adapts before the middleware sees it.
import { afterEach, describe, expect, it } from 'vitest';
import { generateObject, generateText, streamText, wrapLanguageModel } from 'ai';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { checkRetry, expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider, type Wire } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Steps = Array<Record<string, any>>;

function providerModel(packages: ProviderPackages, wire: Wire, fake: FakeProvider) {
  if (wire === 'gemini') return packages.google({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gemini-2.5-flash');
  if (wire === 'anthropic') return packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-haiku-4-5');
  const openai = packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
  return wire === 'chat' ? openai.chat('gpt-4o-mini') : openai('gpt-4o-mini');
}

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('aiSdkMiddleware on its own (%s)', (_major, packages) => {
  for (const wire of ['responses', 'chat', 'anthropic', 'gemini'] as const) {
    // @ai-sdk/google does not pass Gemini's modelVersion on: the model is the one asked for.
    const model = wire === 'gemini' ? 'gemini-2.5-flash' : 'dated-model-1';
    it(`${wire}: a streamText call is recorded with its text, reasoning and the SDK's usage`, async () => {
      const fake = new FakeProvider();
      fake.reply(wire, { id: 'r1', model: 'dated-model-1', reasoning: wire === 'chat' ? undefined : 'Short answer.', text: 'Hello there!', usage: { input: 30, cached: 8, output: 6 } }, { stream: true });
      const recorded = recordedPlugin(`ai-mw-stream-${wire}`);
      const wrapped = wrapLanguageModel({ model: providerModel(packages, wire, fake), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-stream' }) });
      const result = streamText({ model: wrapped, prompt: 'Say hello' });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text).toBe('Hello there!');
      const usage = await result.usage;

      const end = recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload as Record<string, any>;
      expect(end.assistant_message.content).toBe('Hello there!');
      expect(end.response_model).toBe(model);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(validateAtif(atif[0]!)).toEqual([]);
      const step = (atif[0]!.steps as Steps).find((candidate) => candidate.source === 'agent')!;
      expect(step.message).toBe('Hello there!');
      expect(step.model_name).toBe(model);
      if (wire !== 'chat') expect(step.reasoning_content).toBe('Short answer.');
      expect([step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens]).toEqual([usage.inputTokens, usage.outputTokens, usage.inputTokenDetails.cacheReadTokens]);
    });
  }

  // The model asks for `gemini-2.5-flash`; Gemini answers with the snapshot that served it (`modelVersion`), which
  // @ai-sdk/google leaves in the raw body (and the raw chunks a stream gives with includeRawChunks).
  for (const mode of ['generate', 'stream'] as const) {
    it(`gemini: a ${mode}Text call names the model Gemini reported, the raw ${mode === 'generate' ? 'body' : 'chunks'} being where the SDK leaves it`, async () => {
      const fake = new FakeProvider();
      fake.reply('gemini', { id: 'r1', model: 'gemini-2.5-flash-preview-05-20', text: 'Hello there!', usage: { input: 30, output: 6 } }, { stream: mode === 'stream' });
      const recorded = recordedPlugin(`ai-mw-gemini-version-${mode}`);
      const wrapped = wrapLanguageModel({ model: providerModel(packages, 'gemini', fake), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-gemini-version' }) });
      let sdkModel: string;
      if (mode === 'generate') sdkModel = (await generateText({ model: wrapped, prompt: 'Say hello' })).response.modelId;
      else {
        const result = streamText({ model: wrapped, prompt: 'Say hello', includeRawChunks: true });
        await result.consumeStream();
        sdkModel = (await result.response).modelId;
      }
      // The SDK's own word is the model asked for.
      expect(sdkModel).toBe('gemini-2.5-flash');
      const pre = recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload as Record<string, any>;
      const post = recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload as Record<string, any>;
      expect(pre.request.body.model).toBe('gemini-2.5-flash');
      expect(post.response_model).toBe('gemini-2.5-flash-preview-05-20');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect((atif[0]!.steps as Steps).find((step) => step.source === 'agent')!.model_name).toBe('gemini-2.5-flash-preview-05-20');
    });
  }

  it('a stream cut short by an abort ends its attempt as failed with the abort', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'r1', model: 'gpt-4o-mini-2024-07-18', text: 'A long answer that nobody waits for.', usage: { input: 10, output: 9 } }, { stream: true, hang: true });
    const recorded = recordedPlugin('ai-mw-abort');
    const model = wrapLanguageModel({ model: providerModel(packages, 'responses', fake), middleware: aiSdkMiddleware(recorded.hooks) });
    const controller = new AbortController();
    const result = streamText({ model, prompt: 'Tell me a story', abortSignal: controller.signal, onError: () => {} });
    for await (const delta of result.textStream) {
      expect(delta).toBe('A long answer that');
      controller.abort();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    const ends = recorded.log.filter((entry) => entry.hook === 'api_request_error' || entry.hook === 'post_api_request');
    expect(ends.map((entry) => [entry.hook, (entry.payload.error as { type?: string } | undefined)?.type])).toEqual([['api_request_error', 'AbortError']]);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
  });

  it('a streamText step rerun after an error frame (streamRetries) is one call: the stream it gave up, with its error, and the rerun', async () => {
    // Gemini says an error mid-answer as an SSE event; the SDK cancels that stream with it and asks again.
    const fake = new FakeProvider();
    const overloaded = { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } };
    fake.reply('gemini', { id: 'g1', model: 'gemini-2.5-flash-001', text: 'A first answer that breaks off.', usage: { input: 20, output: 7 } }, { stream: true, cut: overloaded });
    fake.reply('gemini', { id: 'g2', model: 'gemini-2.5-flash-001', text: 'The whole answer.', usage: { input: 20, output: 4 } }, { stream: true });
    const recorded = recordedPlugin('ai-mw-stream-rerun');
    const model = wrapLanguageModel({ model: providerModel(packages, 'gemini', fake), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-rerun' }) });
    const errors: Error[] = [];
    const result = streamText({ model, prompt: 'Say it all', streamRetries: 1, onError: ({ error }) => void errors.push(error as Error) });
    await result.consumeStream();
    expect(await result.text).toBe('The whole answer.');
    expect(fake.requests).toHaveLength(2);
    const attempts = recorded.log.filter((entry) => /api_request/.test(entry.hook));
    expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count])).toEqual([['pre_api_request', 0], ['api_request_error', 0], ['pre_api_request', 1], ['post_api_request', undefined]]);
    expect(new Set(attempts.map((entry) => entry.payload.api_request_id)).size).toBe(1);
    // The error as the program's onError got it (Gemini's message and 503), with the text the given-up stream had
    // delivered, as the integration records it.
    expect(errors.map((error) => error.message)).toEqual(['The model is overloaded.']);
    expect(attempts[1]!.payload).toMatchObject({ retryable: true, status_code: 503, error: { type: errors[0]!.name, message: 'The model is overloaded.' } });
    const broken = (attempts[1]!.payload.response as Record<string, any>).assistant_message.content as string;
    expect(broken !== '' && 'A first answer that breaks off.'.startsWith(broken)).toBe(true);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    checkRetry(atof);
    const steps = atif[0]!.steps as Steps;
    expect(steps.filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['Say it all']);
    expect(steps.filter((step) => step.source === 'agent').map((step) => [step.message, step.extra.invocation.status])).toEqual([[broken, 'failed'], ['The whole answer.', 'completed']]);
  });

  it('groups the attempts of one call under one api_request_id', async () => {
    const fake = new FakeProvider();
    fake.fail('chat', 503, 'overloaded');
    fake.reply('chat', { id: 'r1', model: 'gpt-4o-mini-2024-07-18', text: 'ok', usage: { input: 3, output: 2 } });
    const recorded = recordedPlugin('ai-mw');
    const model = wrapLanguageModel({ model: providerModel(packages, 'chat', fake), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-session' }) });
    expect((await generateText({ model, prompt: 'hi' })).text).toBe('ok');
    const attempts = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
    expect(attempts.map((entry) => entry.payload.retry_count)).toEqual([0, 1]);
    expect(new Set(attempts.map((entry) => entry.payload.api_request_id)).size).toBe(1);
    expect(recorded.log.find((entry) => entry.hook === 'api_request_error')!.payload).toMatchObject({ status_code: 503, retryable: true });
    const { atof } = await recorded.finish();
    checkRetry(atof);
  });
});

// The provider's major changes what the middleware sees, not what the integration reports: the newest is enough here.
describe('aiSdkMiddleware next to instrumentAiSdk', () => {
  const packages = AI_SDK_PROVIDERS[0]!;
  it('steps aside for the attempts of text runs the integration reports', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'r1', model: 'gpt-4o-mini-2024-07-18', text: 'fine', usage: { input: 1, output: 1 } });
    const recorded = recordedPlugin('ai-both');
    uninstall = instrumentAiSdk(recorded.hooks);
    const model = wrapLanguageModel({ model: providerModel(packages, 'responses', fake), middleware: aiSdkMiddleware(recorded.hooks) });
    await generateText({ model, prompt: 'hi' });
    expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(1);
    await recorded.finish();
  });

  it('adds generateObject retries, which the SDK does not report to telemetry, to the call the integration opened', async () => {
    const fake = new FakeProvider();
    fake.fail('responses', 503, 'overloaded');
    fake.reply('responses', { id: 'r1', model: 'gpt-4o-2024-08-06', text: '{"city":"Paris","tempC":21}', usage: { input: 40, output: 9 } });
    const recorded = recordedPlugin('ai-object-retry');
    uninstall = instrumentAiSdk(recorded.hooks);
    const model = wrapLanguageModel({ model: providerModel(packages, 'responses', fake), middleware: aiSdkMiddleware(recorded.hooks) });
    const { object } = await generateObject({ model, schema: z.object({ city: z.string(), tempC: z.number() }), prompt: 'Paris weather' });
    expect(object).toEqual({ city: 'Paris', tempC: 21 });
    const attempts = recorded.log.filter((entry) => /api_request/.test(entry.hook)).map((entry) => [entry.hook, entry.payload.retry_count]);
    expect(attempts).toEqual([['pre_api_request', 0], ['api_request_error', 0], ['pre_api_request', 1], ['post_api_request', undefined]]);
    expect(new Set(recorded.log.filter((entry) => /api_request/.test(entry.hook)).map((entry) => entry.payload.api_request_id)).size).toBe(1);
    const { atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    checkRetry(atof);
  });
});
