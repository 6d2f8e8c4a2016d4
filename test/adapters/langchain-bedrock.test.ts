// LangChain on Amazon Bedrock, as @langchain/aws's docs write the program (`new ChatBedrockConverse({ model, region })`,
// credentials from the environment, a cross-region inference profile id as the model) in `createAgent`, invoked and
// streamed, against a loopback Bedrock speaking the Converse API: JSON, and the AWS event-stream framing when streamed
// (bedrock-wire.ts), reached through the AWS SDK's own BedrockRuntimeClient. The trajectory is held to what Bedrock
// sent and LangChain reports (bedrock-checks.ts), on memory and native; a throttled call the AWS SDK retried, and a
// guardrail that intervened.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatBedrockConverse } from '@langchain/aws';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { checkBedrockRun, checkGuardrail, checkRefused, checkThrottledRetry, INFERENCE_PROFILE, PROMPT } from './bedrock-checks.ts';
import { ACCESS_DENIED, GUARDRAIL_TURN, loopbackBedrock, REGION, THROTTLED, weatherTurns, type LoopbackBedrock } from './bedrock-wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { recordedPlugin } from './support.ts';

let server: LoopbackBedrock;
beforeAll(async () => {
  server = await loopbackBedrock();
});
afterAll(() => server.close());

const TOOL = 'get_weather';
const getWeather = tool(async ({ city }) => `It is sunny and 21C in ${city}.`, { name: TOOL, description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });

/** The program's agent: ChatBedrockConverse on the inference profile, in the program's region. */
function weatherAgent() {
  return createAgent({ model: new ChatBedrockConverse({ model: INFERENCE_PROFILE, region: REGION }), tools: [getWeather], name: 'weather_agent' });
}

/** What LangChain reported of each call (the AI messages' `usage_metadata`): @langchain/aws adds Bedrock's cache reads and writes to `input_tokens`. */
function reportOf(messages: BaseMessage[]) {
  const answers = messages.filter((message): message is AIMessage => message.getType() === 'ai');
  return {
    tokens: answers.map((message) => [message.usage_metadata?.input_tokens, message.usage_metadata?.output_tokens] as const),
    cacheReads: answers.map((message) => message.usage_metadata?.input_token_details?.cache_read ?? 0),
    cacheWrites: answers.map((message) => message.usage_metadata?.input_token_details?.cache_creation ?? 0),
  };
}

describe('LangChain ChatBedrockConverse on Amazon Bedrock', () => {
  it('createAgent invoked: the Converse answers, the inference profile, tokens with the cache counted once, reasoning', async () => {
    const seen = server.serve(weatherTurns(TOOL), 'aws-sdk');
    const recorded = recordedPlugin('bedrock-langchain');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    const result = await weatherAgent().invoke({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler] });

    expect(result.messages.at(-1)?.content).toBe('It is sunny in Paris, 21°C.');
    // LangChain keeps Converse's stopReason in response_metadata, as Bedrock spells it.
    expect(result.messages.filter((message) => message.getType() === 'ai').map((message) => (message.response_metadata as { stopReason?: string }).stopReason)).toEqual(['tool_use', 'end_turn']);
    // LangChain's session starts before its model is known: the session names no model, each step the one asked.
    await checkBedrockRun(recorded, seen, reportOf(result.messages), { tool: TOOL, stream: false, provider: 'amazon_bedrock', sessionModel: false });
    await sameOnNative(recorded);
  });

  it('createAgent streamed: the same from the event stream', async () => {
    const seen = server.serve(weatherTurns(TOOL), 'aws-sdk');
    const recorded = recordedPlugin('bedrock-langchain-stream');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    let streamed = '';
    let messages: BaseMessage[] = [];
    const stream = await weatherAgent().stream({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler], streamMode: ['messages', 'values'] });
    for await (const [mode, value] of stream) {
      if (mode === 'values') messages = value.messages;
      else if (value[0].getType() === 'ai' && typeof value[0].content === 'string') streamed += value[0].content;
    }

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    await checkBedrockRun(recorded, seen, reportOf(messages), { tool: TOOL, stream: true, provider: 'amazon_bedrock', sessionModel: false });
    await sameOnNative(recorded);
  });

  it('a throttled call: the AWS SDK retries it inside the one call LangChain sees, which answered', async () => {
    const [, answer] = weatherTurns(TOOL);
    const seen = server.serve([THROTTLED, answer], 'aws-sdk');
    const recorded = recordedPlugin('bedrock-langchain-throttled');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    const result = await weatherAgent().invoke({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler] });

    expect(result.messages.at(-1)?.content).toBe(answer.text);
    expect(seen).toHaveLength(2);
    // Only the AWS SDK's response metadata, which LangChain keeps, says the call took two attempts.
    expect((result.messages.at(-1)!.response_metadata as { $metadata?: { attempts?: number } }).$metadata?.attempts).toBe(2);
    await checkThrottledRetry(recorded, { status: 429, sdkRetried: false });
    await sameOnNative(recorded);
  });

  it('a model the account may not use (AccessDeniedException): one failed attempt, the turn failed with what the program caught', async () => {
    const seen = server.serve([ACCESS_DENIED], 'aws-sdk');
    const recorded = recordedPlugin('bedrock-langchain-denied');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    const caught = await weatherAgent()
      .invoke({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler] })
      .then(
        () => undefined,
        (error: Error) => error,
      );

    expect(seen).toHaveLength(1);
    expect(caught).toBeInstanceOf(Error);
    await checkRefused(recorded, { name: caught!.name, message: caught!.message });
    await sameOnNative(recorded);
  });

  for (const mode of ['invoke', 'stream'] as const) {
    it(`a guardrail that intervened (${mode}): its message is the answer, stopped for content_filter`, async () => {
      const seen = server.serve([GUARDRAIL_TURN], 'aws-sdk');
      const recorded = recordedPlugin(`bedrock-langchain-guardrail-${mode}`);
      const handler = new NemoRelayCallbackHandler(recorded.hooks);
      const model = new ChatBedrockConverse({ model: INFERENCE_PROFILE, region: REGION, guardrailConfig: { guardrailIdentifier: 'gr7x2k1q', guardrailVersion: '1', trace: 'enabled' } });
      const agent = createAgent({ model, tools: [getWeather], name: 'advisor' });
      const input = { messages: [{ role: 'user', content: 'Which stocks should I buy?' }] };

      let last: BaseMessage | undefined;
      if (mode === 'invoke') last = (await agent.invoke(input, { callbacks: [handler] })).messages.at(-1);
      else for await (const value of await agent.stream(input, { callbacks: [handler], streamMode: 'values' })) last = value.messages.at(-1);

      expect(last?.content).toBe(GUARDRAIL_TURN.text);
      expect(seen[0]!.body.guardrailConfig).toMatchObject({ guardrailIdentifier: 'gr7x2k1q' });
      await checkGuardrail(recorded);
      await sameOnNative(recorded);
    });
  }
});
