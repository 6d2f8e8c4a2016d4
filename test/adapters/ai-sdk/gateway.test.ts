// A plain string model id, as ai 7's docs write most programs (`generateText({ model: 'anthropic/claude-sonnet-4.5',
// ... })`): the SDK sends it through its global provider, the Vercel AI Gateway (`@ai-sdk/gateway`), here a loopback
// gateway speaking the gateway's own wire (gateway-wire.ts). The program points the global provider at it the way
// the SDK's provider-management docs set one (`globalThis.AI_SDK_DEFAULT_PROVIDER`, in a setup file); the program's
// own calls stay as the docs write them. Each trajectory is held to what the program saw, what the SDK reports and
// what the gateway sent: tokens, one LLM call per request, the models, the finish reasons, reasoning, tool calls,
// and the cost the gateway charged for each call.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, generateObject, generateText, stepCountIs, streamObject, streamText, wrapLanguageModel } from 'ai';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { FILE_BACKENDS } from '../../contract/backends.ts';
import { runComponents } from '../../support/component-run.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, expectRetriedFirstCall, expectTurnEndInAtif, finishedRun, onlyTrajectory, recordedPlugin, viewLines, type AtifDoc, type Recorded } from '../support.ts';
import { startGateway, type GatewayTurn, type LoopbackGateway } from './gateway-wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const MODEL = 'anthropic/claude-sonnet-4.5';
const DATED = 'claude-sonnet-4-5-20250929';

let gateway: LoopbackGateway;
const globals = globalThis as { AI_SDK_DEFAULT_PROVIDER?: unknown };
const before = globals.AI_SDK_DEFAULT_PROVIDER;
beforeAll(async () => {
  gateway = await startGateway();
  // setup.ts of the program: the global provider is the gateway, at a base URL of the test's.
  globals.AI_SDK_DEFAULT_PROVIDER = createGateway({ baseURL: gateway.baseURL, apiKey: 'vck_test_not_a_key' });
});
afterAll(async () => {
  globals.AI_SDK_DEFAULT_PROVIDER = before;
  await gateway.close();
});

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
  gateway.requests.length = 0;
});

/**
 * The two answers of the weather program, as Anthropic's model gave them through the gateway (the second read from the
 * cache): the gateway planned Anthropic for the first, whose attempt failed, and fell back to Amazon Bedrock, which
 * served both.
 */
function turns(): [GatewayTurn, GatewayTurn] {
  return [
    {
      asked: MODEL,
      id: 'msg_gw_1',
      model: DATED,
      provider: 'bedrock',
      fallbackFrom: 'anthropic',
      reasoning: 'The user wants Paris weather; call the tool.',
      text: 'Let me look that up.',
      toolCalls: [{ id: 'toolu_weather_1', name: 'weather', args: { city: 'Paris' } }],
      usage: { input: 1000, cacheWrite: 900, output: 52, reasoning: 12 },
      cost: '0.0064050',
      generationId: 'gen_01KAW0000000000000000001',
    },
    { asked: MODEL, id: 'msg_gw_2', model: DATED, provider: 'bedrock', text: 'It is sunny in Paris, 21°C.', usage: { input: 1410, cacheRead: 1310, output: 15 }, cost: '0.0009180', generationId: 'gen_01KAW0000000000000000002' },
  ];
}

type Steps = AtifDoc[];

/** What every gateway run must say: the trajectory against the SDK's steps and the gateway's wire. */
async function checkRun(recorded: Recorded, answeredModel: string, sdkSteps: ReadonlyArray<{ usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number; cacheWriteTokens?: number } }; response: { modelId: string }; providerMetadata?: Record<string, any> }>, totalUsage: { inputTokens?: number; outputTokens?: number }): Promise<AtifDoc> {
  const { doc } = await finishedRun(recorded);
  const steps = doc.steps as Steps;
  expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
  const answered = steps.filter((step) => step.source === 'agent');
  expect(answered.map((step) => step.message)).toEqual(['Let me look that up.', 'It is sunny in Paris, 21°C.']);
  expect(answered[0]!.reasoning_content).toBe('The user wants Paris weather; call the tool.');
  expect(answered[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'toolu_weather_1', function_name: 'weather', arguments: { city: 'Paris' } })]);
  expect(JSON.parse(answered[0]!.observation.results[0].content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });

  // One LLM call per request the gateway got, each sent to the language-model endpoint under the string id.
  expect(gateway.requests.map((request) => [request.path, request.headers['ai-language-model-id']])).toEqual([
    ['/v4/ai/language-model', MODEL],
    ['/v4/ai/language-model', MODEL],
  ]);
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests).toHaveLength(gateway.requests.length);
  expect(requests.map((entry) => (entry.payload.request as any).body.model)).toEqual([MODEL, MODEL]);

  // The models: the string id asked for, and the one the SDK reports as the response's: @ai-sdk/gateway keeps the
  // model of a streamed answer (its `response-metadata` part) and drops a generated one's, so generateText names the id.
  expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload).toMatchObject({ model: MODEL });
  // The provider the SDK names is the gateway, the key prices are looked up by.
  expect(requests.map((entry) => entry.payload.provider)).toEqual(['gateway', 'gateway']);
  // The provider that served each call is the one the gateway's routing says answered (`finalProvider`), not the one
  // it planned (`resolvedProvider`), which failed for the first call: the LLM call's end says it (`served_by`).
  const routing = sdkSteps.map((step) => step.providerMetadata?.gateway?.routing);
  expect(routing.map((route) => [route?.resolvedProvider, route?.finalProvider])).toEqual([
    ['anthropic', 'bedrock'],
    ['bedrock', 'bedrock'],
  ]);
  expect(answered.map((step) => step.extra.llm_response.served_by)).toEqual(routing.map((route) => route.finalProvider));
  // The attempts the gateway made before the one that answered, as its routing lists them: Anthropic's, which failed
  // for the first call, is the call's `failed_upstreams`; the second call's one attempt succeeded, so it has none.
  const failed = routing.map((route) => (route.attempts as Array<{ provider: string; success: boolean }>).filter((attempt) => !attempt.success).map((attempt) => attempt.provider));
  expect(failed).toEqual([['anthropic'], []]);
  expect(answered.map((step) => step.extra.llm_response.failed_upstreams)).toEqual([['anthropic'], undefined]);
  const { atof } = await finishedRun(recorded);
  expect(atof.filter((event) => event.category === 'llm' && event.scope_category === 'end').map((event) => [event.metadata.provider, event.data.served_by, event.data.failed_upstreams])).toEqual([
    ['gateway', 'bedrock', ['anthropic']],
    ['gateway', 'bedrock', undefined],
  ]);
  expect(answered.map((step) => step.model_name)).toEqual(sdkSteps.map((step) => step.response.modelId));
  expect(answered.map((step) => step.model_name)).toEqual([answeredModel, answeredModel]);

  // Finish reasons, in the adapters' one spelling.
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);

  // Tokens: each step what the SDK reported for it (and the gateway sent), the totals the run's.
  expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0])).toEqual(
    sdkSteps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, (step.usage.inputTokenDetails.cacheReadTokens ?? 0) + (step.usage.inputTokenDetails.cacheWriteTokens ?? 0)]),
  );
  expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([
    [1000, 52],
    [1410, 15],
  ]);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: totalUsage.inputTokens, total_completion_tokens: totalUsage.outputTokens });

  // The cost: what the gateway charged for each call (the SDK hands it to the program in providerMetadata.gateway).
  const charged = sdkSteps.map((step) => Number(step.providerMetadata?.gateway?.cost));
  expect(charged).toEqual([0.006405, 0.000918]);
  expect(answered.map((step) => step.metrics.cost_usd)).toEqual(charged);
  expect(doc.final_metrics.total_cost_usd).toBeCloseTo(charged[0]! + charged[1]!, 12);
  return doc;
}

describe('a string model id through the AI Gateway', () => {
  it('generateText with a tool loop: the steps, the models, tokens and the cost the gateway charged', async () => {
    const [first, second] = turns();
    gateway.reply(first).reply(second);
    const recorded = recordedPlugin('gateway-generate');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({ model: MODEL, prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });

    expect(result.text).toBe('It is sunny in Paris, 21°C.');
    await checkRun(recorded, MODEL, result.steps, result.totalUsage);
    // view of either file shows the calls' cost as the gateway charged it, and who served each, after which failures.
    for (const of of ['atif', 'atof'] as const) {
      const view = (await viewLines(recorded, of)).join('\n');
      expect(view, of).toContain('$0.0073');
      expect(view.match(/\(served by bedrock after anthropic failed\)/g), of).toHaveLength(1);
      expect(view.match(/\(served by bedrock\)/g), of).toHaveLength(1);
    }
    await sameOnNative(recorded);
  });

  it('streamText with a tool loop: the same, from the gateway\'s stream parts', async () => {
    const [first, second] = turns();
    gateway.reply(first, { stream: true }).reply(second, { stream: true });
    const recorded = recordedPlugin('gateway-stream');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = streamText({ model: MODEL, prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    expect(gateway.requests.map((request) => request.headers['ai-language-model-streaming'])).toEqual(['true', 'true']);
    await checkRun(recorded, DATED, await result.steps, await result.totalUsage);
    await sameOnNative(recorded);
  });

  it("a 401 authentication_error: one failed call with its status, not retried, and the turn failed with the gateway's error", async () => {
    gateway.fail(401, 'authentication_error', 'Invalid API key');
    const recorded = recordedPlugin('gateway-401');
    uninstall = instrumentAiSdk(recorded.hooks);

    const caught = await generateText({ model: MODEL, prompt: 'What is the weather in Paris?', tools: { weather } }).then(
      () => undefined,
      (error: Error) => error,
    );

    expect(caught?.name).toBe('GatewayAuthenticationError');
    expect(gateway.requests).toHaveLength(1);
    const errors = recorded.log.filter((entry) => entry.hook === 'api_request_error');
    expect(errors.map((entry) => entry.payload)).toEqual([expect.objectContaining({ status_code: 401, retryable: false, error: { type: 'GatewayAuthenticationError', message: expect.stringContaining('Invalid API key') } })]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The turn's error is the one the SDK gives telemetry: the gateway's own, with its generation id. The program
    // catches the SDK's wrapper of it instead: the same type, with a hint how to authenticate (in colour outside
    // production) in place of what the gateway said.
    const { message } = errors[0]!.payload.error as { message: string };
    expect(message).toContain('[gen_failed_1]');
    expect(caught!.message).toContain('Unauthenticated request to AI Gateway');
    await expectTurnEndInAtif(recorded, onlyTrajectory(atif), { status: 'failed', error: { name: 'GatewayAuthenticationError', message } });
  });

  it('a 429 rate_limit_exceeded: the SDK retries it, recorded as the failed attempt (429, retryable) and its retry', async () => {
    const [, answer] = turns();
    gateway.fail(429, 'rate_limit_exceeded', 'Rate limit exceeded').reply({ ...answer, text: 'Hello!' });
    const recorded = recordedPlugin('gateway-429');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({ model: MODEL, prompt: 'Say hello.' });

    expect(result.text).toBe('Hello!');
    expect(gateway.requests).toHaveLength(2);
    const attempts = expectRetriedFirstCall(recorded.log, true);
    expect(attempts[1]!.payload).toMatchObject({ status_code: 429, retryable: true, error: { type: 'GatewayRateLimitError', message: expect.stringContaining('Rate limit exceeded') } });
    const { doc } = await finishedRun(recorded);
    // The attempt that answered is charged what the gateway says; the rejected one has no metrics, and no cost.
    const metered = (doc.steps as Steps).filter((step) => step.metrics !== undefined);
    expect(metered.map((step) => [step.message, step.metrics.cost_usd])).toEqual([['Hello!', 0.000918]]);
    expect(doc.final_metrics.total_cost_usd).toBe(0.000918);
  });

  for (const mode of ['generate', 'stream'] as const) {
    it(`aiSdkMiddleware alone on a gateway model (${mode}): the call's cost is the gateway's, its upstream the one that answered`, async () => {
      const [, answer] = turns();
      // Vertex was tried first and failed: Bedrock answered.
      gateway.reply({ ...answer, text: 'Hello!', fallbackFrom: 'vertex' }, { stream: mode === 'stream' });
      const recorded = recordedPlugin(`gateway-middleware-${mode}`);
      const model = wrapLanguageModel({ model: createGateway({ baseURL: gateway.baseURL, apiKey: 'vck_test_not_a_key' })(MODEL), middleware: aiSdkMiddleware(recorded.hooks) });

      let gatewayMetadata: Record<string, any> | undefined;
      if (mode === 'generate') gatewayMetadata = (await generateText({ model, prompt: 'Say hello.' })).providerMetadata?.gateway;
      else {
        const result = streamText({ model, prompt: 'Say hello.' });
        await result.consumeStream();
        gatewayMetadata = (await result.providerMetadata)?.gateway;
      }

      expect([gatewayMetadata?.cost, gatewayMetadata?.routing?.resolvedProvider, gatewayMetadata?.routing?.finalProvider]).toEqual(['0.0009180', 'vertex', 'bedrock']);
      expect(gatewayMetadata?.routing?.attempts.map((attempt: { provider: string; success: boolean }) => [attempt.provider, attempt.success])).toEqual([
        ['vertex', false],
        ['bedrock', true],
      ]);
      const { doc } = await finishedRun(recorded);
      const agent = (doc.steps as Steps).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.message, step.metrics.cost_usd, step.extra.llm_response.served_by, step.extra.llm_response.failed_upstreams])).toEqual([['Hello!', 0.000918, 'bedrock', ['vertex']]]);
      await sameOnNative(recorded);
    });
  }

  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode === 'generate' ? 'generateObject' : 'streamObject'}: the object's call costs what the gateway charged and names the upstream that served it`, async () => {
      const [, answer] = turns();
      const json = '{"city":"Paris","tempC":21}';
      gateway.reply({ ...answer, text: json, fallbackFrom: 'vertex' }, { stream: mode === 'stream' });
      const recorded = recordedPlugin(`gateway-object-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const schema = z.object({ city: z.string(), tempC: z.number() });
      let object: unknown;
      let gatewayMetadata: Record<string, any> | undefined;
      if (mode === 'generate') {
        const result = await generateObject({ model: MODEL, schema, prompt: 'Weather in Paris as JSON.' });
        [object, gatewayMetadata] = [result.object, result.providerMetadata?.gateway];
      } else {
        const result = streamObject({ model: MODEL, schema, prompt: 'Weather in Paris as JSON.' });
        for await (const partial of result.partialObjectStream) void partial;
        [object, gatewayMetadata] = [await result.object, (await result.providerMetadata)?.gateway];
      }

      expect(object).toEqual({ city: 'Paris', tempC: 21 });
      expect([gatewayMetadata?.cost, gatewayMetadata?.routing?.finalProvider]).toEqual(['0.0009180', 'bedrock']);
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.metrics.cost_usd, step.extra.llm_response.served_by, step.extra.llm_response.failed_upstreams])).toEqual([[json, 0.000918, 'bedrock', ['vertex']]]);
      await sameOnNative(recorded);
    });
  }

  it('a pricing catalog that prices the model does not replace what the gateway charged (memory and native)', async () => {
    const [first, second] = turns();
    gateway.reply(first).reply(second);
    const recorded = recordedPlugin('gateway-priced');
    uninstall = instrumentAiSdk(recorded.hooks);
    const result = await generateText({ model: MODEL, prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
    uninstall();
    uninstall = undefined;
    await recorded.finish();

    // A catalog pricing the model under every name the calls carry, at twice the list price the gateway charged.
    const entry = (provider: string, model: string) => ['[[components.config.sources.catalog.entries]]', `provider = "${provider}"`, `model_id = "${model}"`, 'pricing_as_of = "2026-01-01"', 'pricing_source = "test"', 'rates = { input_per_million = 6.0, output_per_million = 30.0, cache_read_per_million = 0.6, cache_write_per_million = 7.5 }', 'prompt_cache = { read_accounting = "included_in_prompt_tokens" }', ''].join('\n');
    const components = ['[[components]]', 'kind = "pricing"', '[components.config]', '[[components.config.sources]]', 'type = "inline"', '[components.config.sources.catalog]', 'version = 1', entry('gateway', MODEL), entry('anthropic', 'claude-sonnet-4.5'), entry('anthropic', MODEL)].join('\n');
    const replayed = (strip: boolean) => (entry: Recorded['log'][number]) => {
      const payload = structuredClone(entry.payload) as Record<string, any>;
      if (strip && entry.hook === 'post_api_request') {
        delete payload.usage.cost_usd;
        delete payload.response.usage.cost_usd;
      }
      return [entry.hook, payload] as const;
    };
    const costs = async (backend: (typeof FILE_BACKENDS)[number], strip: boolean) => {
      const run = await runComponents(backend.create(), { components, script: ({ hooks }) => void recorded.log.map(replayed(strip)).forEach(([hook, payload]) => hooks.emit(hook as never, payload as never)) });
      expect(run.problems).toEqual([]);
      return [...run.trajectories.values()][0]!.steps.filter((step) => step.metrics !== undefined).map((step) => step.metrics!.cost_usd);
    };
    const charged = result.steps.map((step) => Number(step.providerMetadata?.gateway?.cost));
    for (const backend of FILE_BACKENDS.filter((candidate) => candidate.available)) {
      // Without the gateway's charge, the catalog prices the calls: it would apply.
      const priced = await costs(backend, true);
      expect(priced.map((cost, i) => typeof cost === 'number' && cost > 0 && cost !== charged[i]), backend.name).toEqual([true, true]);
      // With it, the charge stands.
      expect(await costs(backend, false), backend.name).toEqual(charged);
    }
  });
});
