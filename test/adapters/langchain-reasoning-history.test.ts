// A LangChain agent on a thinking model, as LangChain's docs write one
// (createAgent, ChatAnthropic with `thinking` enabled), calls a tool and then
// answers: the second request sends the first answer's thinking back (with
// its signature, and a redacted block beside it), so its recorded messages
// hold that reasoning, on the assistant message it came with, as the first
// response recorded it. The signature and the redacted data, which nobody can
// read, are written nowhere. The history used to record the answer's raw
// content blocks instead, signatures and all, and no reasoning.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicMessage, anthropicStream, openAiResponse, openAiResponseStream, scriptedFetch, type AnthropicBlock } from '../support/provider-wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { expectNothingLost, recordedPlugin, writtenFiles } from './support.ts';

const CLAUDE = 'claude-sonnet-4-5-20250929';
const THOUGHT = 'The user wants Paris; one call of get_weather will do.';
const SIGNATURE = 'EqQBSignatureOfThinking' + 'c2lnbmF0dXJl'.repeat(40);
const REDACTED = 'EmwKRedactedThinking' + 'cmVkYWN0ZWQ'.repeat(40);

const weather = tool(async ({ city }) => `Sunny and 21C in ${city}`, {
  name: 'get_weather',
  description: 'The current weather of a city',
  schema: z.object({ city: z.string() }),
});

const first: AnthropicBlock[] = [
  { type: 'thinking', thinking: THOUGHT, signature: SIGNATURE },
  { type: 'redacted_thinking', data: REDACTED },
  { type: 'text', text: 'Let me check.' },
  { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } },
];
const second: AnthropicBlock[] = [{ type: 'text', text: 'It is sunny and 21C in Paris.' }];

/** What OpenAI returns as `encrypted_content` (store: false): opaque, its prefix what a leak would show. */
const ENCRYPTED = 'gAAAAABpReasoning' + 'Zm9vYmFy'.repeat(300);

const apiHooks = (log: Array<{ hook: string; payload: Record<string, any> }>, name: string) => log.filter((entry) => entry.hook === name).map((entry) => entry.payload);

describe('LangChain adapter: a request that sends earlier thinking back', () => {
  for (const streaming of [false, true]) {
    it(`createAgent on ChatAnthropic with thinking, ${streaming ? 'streamed' : 'invoked'}: the second request's assistant message is the first response's, reasoning included; signatures written nowhere`, async () => {
      const reply = streaming ? anthropicStream : anthropicMessage;
      const { fetch, requests } = scriptedFetch([
        reply({ id: 'msg_01Think', model: CLAUDE, content: first, usage: { input_tokens: 80, output_tokens: 60 } }),
        reply({ id: 'msg_02Answer', model: CLAUDE, content: second, usage: { input_tokens: 160, output_tokens: 12 } }),
      ]);
      const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, streaming, maxTokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, clientOptions: { fetch } });
      const recorded = recordedPlugin('lc-reasoning-history');
      const agent = createAgent({ model, tools: [weather], systemPrompt: 'You answer weather questions.' });
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(result.messages.at(-1)!.text).toBe('It is sunny and 21C in Paris.');
      // What went over the wire: the thinking sent back with its signature, and the redacted block.
      const sentBack = JSON.stringify(requests[1]!.body.messages);
      expect(sentBack).toContain(SIGNATURE);
      expect(sentBack).toContain(REDACTED);

      const answered = apiHooks(recorded.log, 'post_api_request')[0]!.assistant_message;
      expect(answered).toEqual({ role: 'assistant', content: 'Let me check.', reasoning_content: THOUGHT, tool_calls: [{ id: 'toolu_01Weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
      expect(apiHooks(recorded.log, 'pre_api_request')[1]!.request.body.messages).toEqual([
        { role: 'system', content: 'You answer weather questions.' },
        { role: 'user', content: 'Weather in Paris?' },
        answered,
        { role: 'tool', tool_call_id: 'toolu_01Weather', content: 'Sunny and 21C in Paris' },
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const steps = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
      expect(steps.map((step) => step.reasoning_content)).toEqual([THOUGHT, undefined]);
      const written = writtenFiles(recorded);
      expect(written).toContain(THOUGHT);
      expect(written).not.toContain('SignatureOfThinking');
      expect(written).not.toContain('RedactedThinking');
      // Nor in what the hooks handed every subscriber (an OTLP exporter, a program's own).
      expect(JSON.stringify(recorded.log)).not.toMatch(/SignatureOfThinking|RedactedThinking/);
      await sameOnNative(recorded);
    });
  }

  for (const streaming of [false, true]) {
    it(`createAgent on ChatOpenAI's Responses API with reasoning and zdrEnabled, ${streaming ? 'streamed' : 'invoked'}: the summary sent back with the encrypted reasoning is the second request's assistant message's reasoning; the encrypted reasoning is written nowhere`, async () => {
      const reply = streaming ? openAiResponseStream : openAiResponse;
      const { fetch, requests } = scriptedFetch([
        reply({ id: 'resp_01', model: 'o4-mini-2025-04-16', reasoning: THOUGHT, encryptedReasoning: ENCRYPTED, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 60, reasoning: 40 } }),
        reply({ id: 'resp_02', model: 'o4-mini-2025-04-16', text: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 160, completion_tokens: 12 } }),
      ]);
      const model = new ChatOpenAI({ model: 'o4-mini', apiKey: 'sk-test', maxRetries: 0, streaming, useResponsesApi: true, zdrEnabled: true, reasoning: { effort: 'high', summary: 'auto' }, configuration: { fetch } });
      const recorded = recordedPlugin('lc-reasoning-history-openai');
      const agent = createAgent({ model, tools: [weather], systemPrompt: 'You answer weather questions.' });
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(result.messages.at(-1)!.text).toBe('It is sunny and 21C in Paris.');
      // What went over the wire: the reasoning sent back, encrypted (the API keeps nothing).
      expect(JSON.stringify(requests[1]!.body.input)).toContain(ENCRYPTED);

      const answered = apiHooks(recorded.log, 'post_api_request')[0]!.assistant_message;
      expect(answered).toEqual({ role: 'assistant', content: null, reasoning_content: THOUGHT, tool_calls: [{ id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
      expect(apiHooks(recorded.log, 'pre_api_request')[1]!.request.body.messages).toEqual([
        { role: 'system', content: 'You answer weather questions.' },
        { role: 'user', content: 'Weather in Paris?' },
        answered,
        { role: 'tool', tool_call_id: 'call_paris', content: 'Sunny and 21C in Paris' },
      ]);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      for (const written of [writtenFiles(recorded), JSON.stringify(recorded.log)]) expect(written).not.toContain('gAAAAAB');
      await sameOnNative(recorded);
    });
  }
});
