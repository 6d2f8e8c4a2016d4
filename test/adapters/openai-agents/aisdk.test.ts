// Agents SDK programs on AI SDK models, as the Agents SDK docs write them:
// `aisdk(openai('gpt-4.1'))` (or `anthropic(...)`) from
// `@openai/agents-extensions/ai-sdk` as the agent's model, `run(agent, input)`
// and `run(agent, input, { stream: true })`. The real provider packages (both
// majors, test/support/ai-sdk-providers.ts) speak OpenAI Responses, Chat
// Completions and Anthropic Messages, as JSON and SSE, to a fake fetch
// (test/adapters/ai-sdk/wire.ts). Each trajectory is checked against what went
// over the wire and what the SDK itself reports: one model call per request
// sent (a retried one's attempts under one id), the messages as sent, the
// model the provider answered with, tool calls and results by id, why each
// answer stopped, and tokens equal to `result.state.usage` (cache writes
// included). With the AI SDK adapter installed too (`instrumentAiSdk`,
// `aiSdkMiddleware` on the model inside `aisdk()`), as users of both
// frameworks do, each call is still recorded once. The hooks replay to the
// same files on native; the times are checked by
// test/adapters/timing-checks.ts; the docs' snippet runs as written.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, run } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS, type ProviderModel, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { loopbackApi, repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv, wallMs } from '../../support/doc-snippets.ts';
import { FakeProvider, type Turn, type Wire } from '../ai-sdk/wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, expectRetriedFirstCall, recordedPlugin, viewLines, type AtifDoc, type Recorded } from '../support.ts';
import { HOLD_MS, TOOL_MS, timedTool } from '../timing-checks.ts';
import { describeTimes } from '../timing-programs.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, trajectoriesOf, TRACING, useTracing, weatherTool } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

type AiWire = Exclude<Wire, 'gemini' | 'ollama' | 'cohere'>;
const WIRES: readonly AiWire[] = ['responses', 'chat', 'anthropic'];

/** The model each wire's program asks for, and the dated one the provider says answered. */
const MODELS: Record<AiWire, { asked: string; answered: string }> = {
  responses: { asked: 'gpt-4.1', answered: 'gpt-4.1-2025-04-14' },
  chat: { asked: 'gpt-4.1', answered: 'gpt-4.1-2025-04-14' },
  anthropic: { asked: 'claude-sonnet-4-5', answered: 'claude-sonnet-4-5-20250929' },
};

/** The AI SDK model a program gives `aisdk()`: `openai(id)` (Responses), `openai.chat(id)` or `anthropic(id)`, on the fake. */
function providerModel(packages: ProviderPackages, wire: AiWire, provider: FakeProvider, id = MODELS[wire].asked): ProviderModel {
  const settings = { apiKey: 'sk-test-not-a-key', fetch: provider.fetch as typeof fetch };
  if (wire === 'anthropic') return packages.anthropic(settings)(id);
  const openai = packages.openai(settings);
  return wire === 'chat' ? openai.chat(id) : openai(id);
}

/** What the trajectory counts as a call's prompt: OpenAI's input holds its cached part; Anthropic's leaves the cache out. */
function promptOf(wire: AiWire, usage: Turn['usage']): number {
  return wire === 'anthropic' ? usage.input + (usage.cached ?? 0) + (usage.cacheWrite ?? 0) : usage.input;
}

/** What the trajectory counts as a call's cached tokens: the cache reads and writes (only Anthropic reports writes). */
function cachedOf(usage: Turn['usage']): number {
  return (usage.cached ?? 0) + (usage.cacheWrite ?? 0);
}

/** The tool results a request sent the provider, by call id, as text, in each wire's own shape. */
function wireToolResults(wire: AiWire, body: Record<string, any>): Array<[string, string]> {
  const text = (content: unknown): string =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: Record<string, any>) => part.text ?? '').join('') : JSON.stringify(content);
  if (wire === 'responses') return (body.input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, text(item.output)]);
  if (wire === 'chat') return (body.messages as Array<Record<string, any>>).filter((message) => message.role === 'tool').map((message) => [message.tool_call_id, text(message.content)]);
  return (body.messages as Array<Record<string, any>>)
    .flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, any>>) : []))
    .filter((part) => part.type === 'tool_result')
    .map((part) => [part.tool_use_id, text(part.content)]);
}

/** Runs `agent` on `input` as the program does: awaited, or streamed and read to the end. */
async function runAgent(agent: Agent<any, any>, input: string, stream: boolean) {
  if (!stream) return await run(agent, input);
  const result = await run(agent, input, { stream: true });
  let text = '';
  for await (const chunk of result.toTextStream()) text += chunk;
  await result.completed;
  expect(text).toBe(result.finalOutput);
  return result;
}

/** Every request the provider got is one model call of the trajectory, answered: no call lost, none twice. */
function expectOneCallPerRequest(recorded: Recorded, provider: FakeProvider): void {
  expect(hooks(recorded, 'pre_api_request')).toHaveLength(provider.requests.length);
  expect(hooks(recorded, 'post_api_request')).toHaveLength(provider.requests.length);
  expect(hooks(recorded, 'api_request_error')).toEqual([]);
}

const instrument = instrumentEachTest();

const WEATHER_TEXT = 'The weather in Tokyo is sunny.';
const FIRST_USAGE = { input: 90, output: 14, cached: 32 };
const SECOND_USAGE = { input: 130, output: 8, cached: 64, cacheWrite: 10 };

/** The docs' weather program's two answers, from the provider `wire` speaks. */
function weatherAnswers(provider: FakeProvider, wire: AiWire, stream: boolean): void {
  const model = MODELS[wire].answered;
  provider.reply(wire, { id: `${wire}_1`, model, toolCalls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: FIRST_USAGE }, { stream });
  // Only Anthropic reports cache writes apart; OpenAI's usage has no such count.
  const second = wire === 'anthropic' ? SECOND_USAGE : { input: SECOND_USAGE.input, output: SECOND_USAGE.output, cached: SECOND_USAGE.cached };
  provider.reply(wire, { id: `${wire}_2`, model, text: 'It is sunny in Tokyo.', usage: second }, { stream });
}

describe('OpenAI Agents SDK on AI SDK models (aisdk())', () => {
  for (const packages of AI_SDK_PROVIDERS) {
    for (const wire of WIRES) {
      for (const stream of [false, true]) {
        for (const tracing of TRACING) {
          it(`the docs' weather agent on ${wire} (@ai-sdk ${packages.major}, ${stream ? 'streamed' : 'not streamed'}, ${tracing}): each request, model, tool call, stop and token as sent and answered`, async () => {
            useTracing(tracing);
            const provider = new FakeProvider();
            weatherAnswers(provider, wire, stream);
            const recorded = recordedPlugin('agents-aisdk');
            instrument(recorded.hooks);

            const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(providerModel(packages, wire, provider)), tools: [weatherTool()] });
            const result = await runAgent(agent, 'What is the weather in Tokyo?', stream);
            expect(result.finalOutput).toBe('It is sunny in Tokyo.');

            // Two requests went out, each the model asked for, streamed as the run was.
            expect(provider.requests).toHaveLength(2);
            for (const request of provider.requests) expect(request.body.model).toBe(MODELS[wire].asked);
            expect(provider.requests.map((request) => request.body.stream === true)).toEqual([stream, stream]);
            expectOneCallPerRequest(recorded, provider);

            // The messages as sent: the instructions and the user's input, then the call and its result under the model's id.
            const requests = hooks(recorded, 'pre_api_request');
            expect(requests[0]!.request.body.messages).toEqual([
              { role: 'system', content: 'You are a helpful weather assistant.' },
              { role: 'user', content: 'What is the weather in Tokyo?' },
            ]);
            const second = requests[1]!.request.body.messages as Array<Record<string, any>>;
            expect(second.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
            expect(second[2]!.tool_calls.map((call: Record<string, any>) => [call.id, call.function.name, JSON.parse(call.function.arguments)])).toEqual([['call_tokyo', 'get_weather', { city: 'Tokyo' }]]);
            expect(second[3]).toEqual({ role: 'tool', tool_call_id: 'call_tokyo', content: WEATHER_TEXT });
            expect(wireToolResults(wire, provider.requests[1]!.body)).toEqual([['call_tokyo', WEATHER_TEXT]]);
            expect(requests[0]!.request.body.tools.map((offered: Record<string, any>) => offered.function.name)).toEqual(['get_weather']);
            // Pinned, the limit the docs state: aisdk() keeps its model private, so no request names a model or a provider.
            expect(requests.map((payload) => [payload.model, payload.provider])).toEqual([[undefined, undefined], [undefined, undefined]]);

            // Why each answer stopped, and the model the provider said answered it.
            const answers = hooks(recorded, 'post_api_request');
            expect(answers.map((payload) => payload.finish_reason)).toEqual(['tool_calls', 'stop']);
            expect(answers.map((payload) => payload.response_model)).toEqual([MODELS[wire].answered, MODELS[wire].answered]);
            expect(answers.map((payload) => payload.response.id)).toEqual([`${wire}_1`, `${wire}_2`]);

            const { atif, atof, counters } = await recorded.finish();
            expectNothingLost(counters);
            expectRunsClosed(recorded);
            const doc = onlyTrajectory(atif);
            expect(doc.agent.name).toBe('Weather Agent');
            expect(doc.agent.model_name).toBe(MODELS[wire].answered);
            expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: 'What is the weather in Tokyo?' });
            const answered = agentSteps(doc);
            expect(answered.map((step) => step.model_name)).toEqual([MODELS[wire].answered, MODELS[wire].answered]);
            expect(toolCallIds(doc)).toEqual(['call_tokyo']);
            expect(observation(doc, 'call_tokyo')).toMatchObject({ content: WEATHER_TEXT, extra: { metadata: { status: 'ok' } } });
            expect(answered.at(-1)!.message).toBe('It is sunny in Tokyo.');

            // Tokens: the provider's counts per call, in the trajectory's meaning; the sums the SDK's own.
            const wireUsage = [FIRST_USAGE, wire === 'anthropic' ? SECOND_USAGE : { ...SECOND_USAGE, cacheWrite: undefined }];
            expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual(
              wireUsage.map((usage) => [promptOf(wire, usage), usage.output, cachedOf(usage)]),
            );
            expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
            // A cache write is said apart, as the SDK says it (Anthropic's only): it costs more than a read.
            const sdkWrites = result.state.usage.inputTokensDetails.map((detail) => detail.cache_write_tokens ?? 0);
            expect(answers.map((payload) => payload.usage.cache_write_tokens ?? 0)).toEqual(sdkWrites);
            expect(sdkWrites).toEqual([0, wire === 'anthropic' ? SECOND_USAGE.cacheWrite : 0]);

            // One LLM span per request in the ATOF file too.
            const llmEnds = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'end');
            expect(llmEnds).toHaveLength(2);
            // What `view` shows a user of either file: the answering model on each call, the tool, the SDK's totals.
            const sdk = sdkTotals(result.state.usage);
            for (const of of ['atof', 'atif'] as const) {
              const viewed = await viewLines(recorded, of);
              expect(viewed.filter((line) => line.includes('─ LLM ')).map((line) => line.includes(MODELS[wire].answered)), of).toEqual([true, true]);
              expect(viewed.filter((line) => line.includes('─ tool get_weather')), of).toHaveLength(1);
              expect(viewed.find((line) => line.includes('session '))).toContain(`${sdk.prompt} in (${sdk.cached} cached) / ${sdk.completion} out`);
            }
            await sameOnNative(recorded);
          }, 30_000);
        }
      }
    }
  }

  for (const wire of ['chat', 'anthropic'] as const) {
    for (const stream of [false, true]) {
      it(`an answer cut at the token limit on ${wire} (${stream ? 'streamed' : 'not streamed'}) stopped at length, as the provider said`, async () => {
        useTracing('tracing off');
        const provider = new FakeProvider();
        provider.reply(wire, { id: `${wire}_cut`, model: MODELS[wire].answered, text: 'Tokyo is sunny and', finish: wire === 'chat' ? 'length' : 'max_tokens', usage: { input: 40, output: 5 } }, { stream });
        const recorded = recordedPlugin('agents-aisdk-length');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Brief', instructions: 'Answer.', model: aisdk(providerModel(AI_SDK_PROVIDERS[0]!, wire, provider)), modelSettings: { maxTokens: 5 } });
        // The SDK takes the cut answer as the run's answer; only the provider's stop reason says it was cut.
        const result = await runAgent(agent, 'Weather in Tokyo?', stream);
        expect(result.finalOutput).toBe('Tokyo is sunny and');
        expectOneCallPerRequest(recorded, provider);
        expect(hooks(recorded, 'post_api_request').map((payload) => payload.finish_reason)).toEqual(['length']);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(agentSteps(onlyTrajectory(atif)).map((step) => step.message)).toEqual(['Tokyo is sunny and']);
        await sameOnNative(recorded);
      });
    }
  }

  for (const stream of [false, true]) {
    it(`a reasoning model through aisdk() (${stream ? 'streamed' : 'not streamed'}): the temperature and topP @ai-sdk/openai does not send are recorded as asked, and the response says they were not sent, as the wire and the package's warnings show (the AI SDK adapter's rule)`, async () => {
      useTracing('tracing off');
      const provider = new FakeProvider();
      provider.reply('responses', { id: 'resp_r', model: 'gpt-5-2025-08-07', text: 'Sunny.', usage: { input: 30, output: 40, reasoning: 32 } }, { stream });
      const recorded = recordedPlugin(`agents-aisdk-dropped-${stream}`);
      instrument(recorded.hooks);
      const agent = new Agent({ name: 'Reasoner', instructions: 'Answer.', model: aisdk(providerModel(AI_SDK_PROVIDERS[0]!, 'responses', provider, 'gpt-5')), modelSettings: { temperature: 0.2, topP: 0.9, maxTokens: 300 } });
      const result = stream ? await run(agent, 'Weather in Tokyo?', { stream: true }) : await run(agent, 'Weather in Tokyo?');
      // What the program is told: not streamed, the AI SDK model's result aisdk() keeps (`providerData.warnings`);
      // streamed, the stream's first part (`stream-start`), which aisdk() passes on as a raw model stream event.
      const warnings: unknown[] = [];
      if (stream) {
        for await (const event of result as AsyncIterable<Record<string, any>>) if (event.type === 'raw_model_stream_event' && event.data.type === 'model' && event.data.event.type === 'stream-start') warnings.push(...event.data.event.warnings);
        await (result as { completed: Promise<void> }).completed;
      } else warnings.push(...(result.rawResponses[0]!.providerData as { warnings: unknown[] }).warnings);
      expect(result.finalOutput).toBe('Sunny.');
      expectOneCallPerRequest(recorded, provider);
      const wire = provider.requests[0]!.body;
      expect([wire.temperature, wire.top_p, wire.max_output_tokens]).toEqual([undefined, undefined, 300]);
      expect(warnings.map((warning) => (warning as { feature?: string }).feature)).toEqual(['temperature', 'topP']);
      const asked = hooks(recorded, 'pre_api_request')[0]!.request.body;
      expect([asked.temperature, asked.top_p, asked.max_tokens]).toEqual([0.2, 0.9, 300]);
      const notSent = ['temperature', 'top_p'].filter((name) => asked[name] !== undefined && wire[name] === undefined);
      expect(hooks(recorded, 'post_api_request').map((payload) => [payload.response.settings_not_sent, payload.response.settings_as_sent])).toEqual([[notSent, undefined]]);
      expect(notSent).toEqual(['temperature', 'top_p']);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`a handoff from an OpenAI agent to an Anthropic one, both through aisdk() (${stream ? 'streamed' : 'not streamed'}): the next agent is a sub-agent with its own model and tokens`, async () => {
      useTracing('tracing on');
      const openaiWire = new FakeProvider();
      const anthropicWire = new FakeProvider();
      openaiWire.reply('responses', { id: 'resp_triage', model: MODELS.responses.answered, toolCalls: [{ id: 'call_handoff', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 5, cached: 0 } }, { stream });
      anthropicWire.reply('anthropic', { id: 'msg_billing', model: MODELS.anthropic.answered, text: 'Your invoice is paid.', usage: { input: 70, output: 6, cached: 16, cacheWrite: 4 } }, { stream });
      const recorded = recordedPlugin('agents-aisdk-handoff');
      instrument(recorded.hooks);
      const packages = AI_SDK_PROVIDERS[0]!;
      const billing = new Agent({ name: 'billing', instructions: 'You handle billing.', model: aisdk(providerModel(packages, 'anthropic', anthropicWire)), handoffDescription: 'billing questions' });
      const triage = new Agent({ name: 'triage', instructions: 'You triage.', model: aisdk(providerModel(packages, 'responses', openaiWire)), handoffs: [billing] });
      const result = await runAgent(triage, 'Is my invoice paid?', stream);
      expect(result.finalOutput).toBe('Your invoice is paid.');
      expect(hooks(recorded, 'pre_api_request')).toHaveLength(openaiWire.requests.length + anthropicWire.requests.length);
      // The handed-to agent's request is the one Anthropic got: its own instructions, the conversation so far.
      const billingRequest = hooks(recorded, 'pre_api_request')[1]!.request.body.messages as Array<Record<string, any>>;
      expect(billingRequest[0]).toEqual({ role: 'system', content: 'You handle billing.' });
      expect(anthropicWire.requests[0]!.body.system).toEqual([{ type: 'text', text: 'You handle billing.' }]);
      expect(hooks(recorded, 'subagent_start')).toMatchObject([{ tool_call_id: 'call_handoff', child_role: 'billing' }]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc).map((step) => step.model_name)).toEqual([MODELS.responses.answered]);
      const [child] = doc.subagent_trajectories as AtifDoc[];
      expect(child!.agent.name).toBe('billing');
      expect(agentSteps(child!).map((step) => [step.model_name, step.message])).toEqual([[MODELS.anthropic.answered, 'Your invoice is paid.']]);
      expect(agentSteps(child!)[0]!.metrics).toMatchObject({ prompt_tokens: 70 + 16 + 4, completion_tokens: 6, cached_tokens: 16 + 4 });
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      expect(trajectoriesOf(doc)).toHaveLength(2);
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`Anthropic overloaded (529), retried by the SDK's modelSettings.retry (${stream ? 'streamed' : 'not streamed'}): one call, the failed attempt with its status, then the answer`, async () => {
      useTracing('tracing off');
      const provider = new FakeProvider();
      provider.fail('anthropic', 529, 'Overloaded');
      provider.reply('anthropic', { id: 'msg_retry', model: MODELS.anthropic.answered, text: 'Sunny.', usage: { input: 30, output: 2 } }, { stream });
      const recorded = recordedPlugin('agents-aisdk-retry');
      instrument(recorded.hooks);
      const agent = new Agent({
        name: 'Weather Agent',
        instructions: 'Answer.',
        model: aisdk(providerModel(AI_SDK_PROVIDERS[0]!, 'anthropic', provider)),
        modelSettings: { retry: { maxRetries: 2, backoff: { initialDelayMs: 5, jitter: false }, policy: () => true } },
      });
      const result = await runAgent(agent, 'Weather in Tokyo?', stream);
      expect(result.finalOutput).toBe('Sunny.');
      expect(provider.requests).toHaveLength(2);
      const attempts = expectRetriedFirstCall(recorded.log, true);
      expect(attempts[1]!.payload).toMatchObject({ status_code: 529, reason: 'AI_APICallError' });
      expect(attempts[3]!.payload.response_model).toBe(MODELS.anthropic.answered);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(tokenTotals(onlyTrajectory(atif))).toEqual(sdkTotals(result.state.usage));
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`a tool that throws (${stream ? 'streamed' : 'not streamed'}): the call failed, and its result is the text the provider was sent`, async () => {
      useTracing('tracing off');
      const provider = new FakeProvider();
      provider.reply('chat', { id: 'chat_1', model: MODELS.chat.answered, toolCalls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 60, output: 9 } }, { stream });
      provider.reply('chat', { id: 'chat_2', model: MODELS.chat.answered, text: 'The weather service is down.', usage: { input: 95, output: 7 } }, { stream });
      const recorded = recordedPlugin('agents-aisdk-tool-error');
      instrument(recorded.hooks);
      const broken = weatherTool(async () => {
        throw new Error('weather service down');
      });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(providerModel(AI_SDK_PROVIDERS[0]!, 'chat', provider)), tools: [broken] });
      const result = await runAgent(agent, 'What is the weather in Tokyo?', stream);
      expect(result.finalOutput).toBe('The weather service is down.');
      expectOneCallPerRequest(recorded, provider);
      const told = wireToolResults('chat', provider.requests[1]!.body);
      expect(told).toHaveLength(1);
      expect(told[0]![1]).toMatch(/An error occurred while running the tool/);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(observation(doc, 'call_tokyo')).toMatchObject({ content: told[0]![1], extra: { metadata: { status: 'error' } } });
      expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_tokyo', status: 'error', error_type: 'ToolError' }]);
      const failed = (await viewLines(recorded, 'atof')).filter((line) => /✗ tool get_weather/.test(line));
      expect(failed, 'view shows the failed call').toHaveLength(1);
      await sameOnNative(recorded);
    });
  }
});

describe('aisdk() with the AI SDK adapter installed too', () => {
  type Setup = 'instrumentAiSdk' | 'aiSdkMiddleware' | 'instrumentAiSdk and aiSdkMiddleware';
  const setups: readonly Setup[] = ['instrumentAiSdk', 'aiSdkMiddleware', 'instrumentAiSdk and aiSdkMiddleware'];
  for (const setup of setups) {
    for (const stream of [false, true]) {
      it(`${setup} beside instrumentOpenAIAgents (${stream ? 'streamed' : 'not streamed'}): each request is one model call of the agent's run, none twice`, async () => {
        useTracing('tracing off');
        const provider = new FakeProvider();
        weatherAnswers(provider, 'responses', stream);
        const recorded = recordedPlugin('agents-aisdk-both');
        instrument(recorded.hooks);
        const removeAiSdk = setup === 'aiSdkMiddleware' ? undefined : instrumentAiSdk(recorded.hooks);
        try {
          const base = providerModel(AI_SDK_PROVIDERS[0]!, 'responses', provider);
          // As docs/adapters/ai-sdk.md installs the middleware: on the model, with wrapLanguageModel.
          const model = setup === 'instrumentAiSdk' ? base : wrapLanguageModel({ model: base as Parameters<typeof wrapLanguageModel>[0]['model'], middleware: aiSdkMiddleware(recorded.hooks) });
          const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(model), tools: [weatherTool()] });
          const result = await runAgent(agent, 'What is the weather in Tokyo?', stream);
          expect(result.finalOutput).toBe('It is sunny in Tokyo.');
          expectOneCallPerRequest(recorded, provider);
          expect(new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined)).size).toBe(1);
          expect(new Set(hooks(recorded, 'post_api_request').map((payload) => payload.platform))).toEqual(new Set(['openai-agents']));

          removeAiSdk?.();
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          const doc = onlyTrajectory(atif);
          expect(agentSteps(doc).map((step) => step.model_name)).toEqual([MODELS.responses.answered, MODELS.responses.answered]);
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
          await sameOnNative(recorded);
        } finally {
          removeAiSdk?.();
        }
      });
    }
  }

  it('aiSdkMiddleware on the same model outside any agent run still records its calls, in its own session', async () => {
    const provider = new FakeProvider();
    provider.reply('responses', { id: 'resp_alone', model: MODELS.responses.answered, text: 'Hello.', usage: { input: 12, output: 2 } });
    const recorded = recordedPlugin('agents-aisdk-middleware-alone');
    instrument(recorded.hooks);
    const model = wrapLanguageModel({ model: providerModel(AI_SDK_PROVIDERS[0]!, 'responses', provider) as Parameters<typeof wrapLanguageModel>[0]['model'], middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'direct' }) });
    const answer = await model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
    expect(answer.content).toMatchObject([{ type: 'text', text: 'Hello.' }]);
    expect(hooks(recorded, 'post_api_request')).toMatchObject([{ session_id: 'direct', platform: 'ai-sdk', response_model: MODELS.responses.answered }]);
    expectNothingLost((await recorded.finish()).counters);
  });
});

describeTimes('OpenAI Agents SDK on aisdk()', 'agents-aisdk-timing', ['run(agent, input)', 'run(agent, input, { stream: true })'], async ({ hooks: registry, api, serverUrl, streamed }) => {
  const hold = { stream: streamed, holdMs: HOLD_MS };
  api.reply('responses', { id: 'resp_1', model: MODELS.responses.answered, toolCalls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 90, output: 14 } }, hold);
  api.reply('responses', { id: 'resp_2', model: MODELS.responses.answered, text: 'It is sunny in Tokyo.', usage: { input: 130, output: 8 } }, hold);
  const uninstall = instrumentOpenAIAgents(registry);
  try {
    const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${serverUrl}/v1` });
    const toolRun = { startMs: 0, endMs: 0 };
    const getWeather = weatherTool(async ({ city }) => {
      await timedTool(toolRun);
      return `The weather in ${city} is sunny.`;
    });
    const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(openai('gpt-4.1')), tools: [getWeather] });
    const runStartMs = wallMs();
    const result = await runAgent(agent, 'What is the weather in Tokyo?', streamed);
    const runEndMs = wallMs();
    expect(result.finalOutput).toBe('It is sunny in Tokyo.');
    expect(toolRun.endMs - toolRun.startMs).toBeGreaterThanOrEqual(TOOL_MS * 0.8);
    return { runStartMs, runEndMs, tool: toolRun, streamed };
  } finally {
    uninstall();
  }
});

describe('docs/adapters/openai-agents.md, "Models from the AI SDK (aisdk())"', () => {
  const page = readFileSync(path.join(repoRoot, 'docs/adapters/openai-agents.md'), 'utf8');
  const snippet = tsSnippets(page).find((code) => code.includes("from '@openai/agents-extensions/ai-sdk'"));
  let api = new FakeProvider();
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    server = await loopbackApi((url, init) => api.fetch(url, init));
  });
  afterAll(() => server.close());

  it('has the snippet', () => {
    expect(snippet).toBeDefined();
  });

  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime} and records the run`, async () => {
      api = new FakeProvider();
      weatherAnswers(api, 'responses', false);
      const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_AGENTS_DISABLE_TRACING: '1', AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' });
      const result = await runSnippet(snippet!, runtime, 'openai-agents-aisdk', env);
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is sunny in Tokyo.');
        expect(api.requests.map((request) => new URL(request.url).pathname)).toEqual(['/v1/responses', '/v1/responses']);
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8')) as AtifDoc;
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.agent).toMatchObject({ name: 'Weather Agent', model_name: MODELS.responses.answered });
        const steps = stepsOf(doc);
        expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Tokyo?' });
        expect(toolCallIds(doc)).toEqual(['call_tokyo']);
        expect(agentSteps(doc).map((step) => step.model_name)).toEqual([MODELS.responses.answered, MODELS.responses.answered]);
        expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 22, total_cached_tokens: 96 });
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});
