// The Agents SDK on an AI Gateway model, as its docs write a model of the AI SDK: `aisdk(gateway('anthropic/claude-
// sonnet-4.5'))` with the `gateway` provider of `ai` (`createGateway`, here at a loopback gateway speaking the
// gateway's own wire, ../ai-sdk/gateway-wire.ts), run and streamed, with a tool. The gateway planned Anthropic for the
// first call, whose attempt failed, and fell back to Amazon Bedrock, which served both. Each trajectory is held to
// what the gateway sent and what the SDK reports: the cost the gateway charged (`providerMetadata.gateway.cost`), the
// provider that served each call (`routing.finalProvider`), tokens equal to `result.state.usage`, the model that
// answered, the tool call by id; on memory and native.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, run, type RunResult, type StreamedRunResult } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { createGateway } from 'ai';
import { startGateway, type GatewayTurn, type LoopbackGateway } from '../ai-sdk/gateway-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin } from '../support.ts';
import { agentSteps, instrumentEachTest, observation, useTracing, weatherTool } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const MODEL = 'anthropic/claude-sonnet-4.5';
const DATED = 'claude-sonnet-4-5-20250929';
const TOOL = 'get_weather';

let server: LoopbackGateway;
beforeAll(async () => {
  server = await startGateway();
});
afterAll(() => server.close());

const instrument = instrumentEachTest();
const getWeather = weatherTool();

function turns(): [GatewayTurn, GatewayTurn] {
  return [
    {
      asked: MODEL,
      id: 'msg_gw_1',
      model: DATED,
      provider: 'bedrock',
      fallbackFrom: 'anthropic',
      text: 'Let me look that up.',
      toolCalls: [{ id: 'toolu_weather_1', name: TOOL, args: { city: 'Paris' } }],
      usage: { input: 1000, cacheWrite: 900, output: 52 },
      cost: '0.0064050',
      generationId: 'gen_01KAW0000000000000000001',
    },
    { asked: MODEL, id: 'msg_gw_2', model: DATED, provider: 'bedrock', text: 'It is sunny in Paris, 21°C.', usage: { input: 1410, cacheRead: 1310, output: 15 }, cost: '0.0009180', generationId: 'gen_01KAW0000000000000000002' },
  ];
}

describe('OpenAI Agents SDK on an AI Gateway model (aisdk(gateway(...)))', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'a streamed run' : 'run()'}: each call costs what the gateway charged, served by the provider its routing says answered`, async () => {
      useTracing('tracing off');
      for (const turn of turns()) server.reply(turn, { stream });
      server.requests.length = 0;
      const recorded = recordedPlugin(`gateway-agents${stream ? '-stream' : ''}`);
      instrument(recorded.hooks);

      // As the Agents SDK's docs write a model of the AI SDK, the AI SDK's gateway provider given to aisdk().
      const gateway = createGateway({ baseURL: server.baseURL, apiKey: 'vck_test_not_a_key' });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(gateway(MODEL)), tools: [getWeather] });
      // What the program reads of each call: the gateway's provider metadata, in the result aisdk() keeps or the
      // stream's `finish` parts.
      const metadata: Array<Record<string, any> | undefined> = [];
      let result: RunResult<any, any> | StreamedRunResult<any, any>;
      if (!stream) {
        result = await run(agent, 'What is the weather in Paris?');
        metadata.push(...result.rawResponses.map((response) => response.providerData?.providerMetadata?.gateway));
      } else {
        const streamed = await run(agent, 'What is the weather in Paris?', { stream: true });
        for await (const event of streamed) {
          const part = event.type === 'raw_model_stream_event' && event.data.type === 'model' ? (event.data.event as { type?: string; providerMetadata?: Record<string, any> }) : undefined;
          if (part?.type === 'finish') metadata.push(part.providerMetadata?.gateway);
        }
        await streamed.completed;
        result = streamed;
      }
      expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');

      // One call per request the gateway got, each under the id asked for, streamed or not.
      expect(server.requests.map((request) => [request.path, request.headers['ai-language-model-id'], request.headers['ai-language-model-streaming']])).toEqual([
        ['/v4/ai/language-model', MODEL, String(stream)],
        ['/v4/ai/language-model', MODEL, String(stream)],
      ]);
      const { doc, atof } = await finishedRun(recorded);
      const answered = agentSteps(doc);
      expect(answered).toHaveLength(2);
      const calls = answered[0]!.tool_calls;
      expect(calls).toEqual([expect.objectContaining({ tool_call_id: 'toolu_weather_1', function_name: TOOL, arguments: { city: 'Paris' } })]);
      expect(observation(doc, 'toolu_weather_1')?.content).toBe('The weather in Paris is sunny.');
      expect(answered[1]!.message).toBe('It is sunny in Paris, 21°C.');

      // The provider that served each call: the routing's `finalProvider` (Bedrock, after Anthropic failed for the
      // first), not the one it planned.
      const routing = metadata.map((entry) => entry?.routing);
      expect(routing.map((route) => [route?.resolvedProvider, route?.finalProvider])).toEqual([
        ['anthropic', 'bedrock'],
        ['bedrock', 'bedrock'],
      ]);
      expect(answered.map((step) => step.extra.llm_response.served_by)).toEqual(routing.map((route) => route.finalProvider));
      // And the attempts that failed before it, as the routing lists them: Anthropic's, for the first call only.
      expect(routing.map((route) => (route.attempts as Array<{ provider: string; success: boolean }>).filter((attempt) => !attempt.success).map((attempt) => attempt.provider))).toEqual([['anthropic'], []]);
      expect(answered.map((step) => step.extra.llm_response.failed_upstreams)).toEqual([['anthropic'], undefined]);
      const ends = atof.filter((event) => event.category === 'llm' && event.scope_category === 'end');
      expect(ends.map((event) => [event.data.served_by, event.data.failed_upstreams])).toEqual([
        ['bedrock', ['anthropic']],
        ['bedrock', undefined],
      ]);

      // The cost: what the gateway charged for each call.
      const charged = metadata.map((entry) => Number(entry?.cost));
      expect(charged).toEqual([0.006405, 0.000918]);
      expect(answered.map((step) => step.metrics.cost_usd)).toEqual(charged);
      expect(doc.final_metrics.total_cost_usd).toBeCloseTo(charged[0]! + charged[1]!, 12);

      // The model that answered, as the gateway's routing and the response name it.
      expect(answered.map((step) => step.model_name)).toEqual([DATED, DATED]);

      // Tokens: each step what the SDK got for its call, the totals `result.state.usage`.
      expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0])).toEqual(
        result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens, response.usage.inputTokensDetails.reduce((sum, details) => sum + (details.cached_tokens ?? 0) + (details.cache_write_tokens ?? 0), 0)]),
      );
      expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual([
        [1000, 52, 900],
        [1410, 15, 1310],
      ]);
      expect(result.state.usage).toMatchObject({ inputTokens: 2410, outputTokens: 67 });
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: result.state.usage.inputTokens, total_completion_tokens: result.state.usage.outputTokens });
      await sameOnNative(recorded);
    });
  }
});
