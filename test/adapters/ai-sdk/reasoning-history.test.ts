// An AI SDK program on a thinking model, as the SDK's docs write one
// (`generateText`/`streamText` with tools and `stopWhen`, @ai-sdk/anthropic
// with `providerOptions.anthropic.thinking`), calls a tool and then answers:
// the second request sends the first answer's thinking back (a reasoning
// part with its signature, and a redacted one beside it), so its recorded
// messages hold that reasoning, on the assistant message it came with, as the
// first response recorded it; through instrumentAiSdk and through
// aiSdkMiddleware alike. The signature and the redacted data, which nobody can
// read, are written nowhere.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, wrapLanguageModel, type LanguageModel } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { anthropicMessage, anthropicStream, openAiResponse, openAiResponseStream, scriptedFetch, type AnthropicBlock } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, writtenFiles, type Recorded } from '../support.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const SONNET = 'claude-sonnet-4-5-20250929';
const THOUGHT = 'The user wants Paris; one call of weather will do.';
const SIGNATURE = 'EqQBSignatureOfThinking' + 'c2lnbmF0dXJl'.repeat(40);
const REDACTED = 'EmwKRedactedThinking' + 'cmVkYWN0ZWQ'.repeat(40);

const first: AnthropicBlock[] = [
  { type: 'thinking', thinking: THOUGHT, signature: SIGNATURE },
  { type: 'redacted_thinking', data: REDACTED },
  { type: 'text', text: 'Let me check.' },
  { type: 'tool_use', id: 'toolu_01Weather', name: 'weather', input: { city: 'Paris' } },
];
const second: AnthropicBlock[] = [{ type: 'text', text: 'It is sunny and 21C in Paris.' }];

/** What OpenAI returns as `encrypted_content` (store: false): opaque, its prefix what a leak would show. */
const ENCRYPTED = 'gAAAAABpReasoning' + 'Zm9vYmFy'.repeat(300);

const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);

describe('AI SDK: a request that sends earlier thinking back', () => {
  for (const how of ['instrumentAiSdk', 'aiSdkMiddleware'] as const) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${mode} on @ai-sdk/anthropic with thinking (${how}): the second request's assistant message is the first response's, reasoning included; signatures written nowhere`, async () => {
        const stream = mode === 'streamText';
        const reply = stream ? anthropicStream : anthropicMessage;
        const { fetch, requests } = scriptedFetch([
          reply({ id: 'msg_01Think', model: SONNET, content: first, usage: { input_tokens: 80, output_tokens: 60 } }),
          reply({ id: 'msg_02Answer', model: SONNET, content: second, usage: { input_tokens: 160, output_tokens: 12 } }),
        ]);
        const recorded = recordedPlugin(`ai-reasoning-history-${how}-${mode}`);
        const anthropic = createAnthropic({ apiKey: 'test-key', fetch });
        let model: LanguageModel = anthropic('claude-sonnet-4-5');
        if (how === 'instrumentAiSdk') uninstall = instrumentAiSdk(recorded.hooks);
        else model = wrapLanguageModel({ model: anthropic('claude-sonnet-4-5'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'reasoning-history' }) });
        const options = {
          model,
          system: 'You answer weather questions.',
          prompt: 'Weather in Paris?',
          tools: { weather },
          stopWhen: stepCountIs(5),
          providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
        } as const;
        const text = stream ? await streamText(options).text : (await generateText(options)).text;
        expect(text).toBe('It is sunny and 21C in Paris.');
        // What went over the wire: the thinking sent back with its signature, and the redacted block.
        const sentBack = JSON.stringify(requests[1]!.body.messages);
        expect(sentBack).toContain(SIGNATURE);
        expect(sentBack).toContain(REDACTED);

        const answered = hooksOf(recorded, 'post_api_request')[0]!.assistant_message;
        expect(answered).toEqual({ role: 'assistant', content: 'Let me check.', reasoning_content: THOUGHT, tool_calls: [{ id: 'toolu_01Weather', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] });
        expect(hooksOf(recorded, 'pre_api_request')[1]!.request.body.messages).toEqual([
          { role: 'system', content: 'You answer weather questions.' },
          { role: 'user', content: 'Weather in Paris?' },
          answered,
          { role: 'tool', tool_call_id: 'toolu_01Weather', content: '{"city":"Paris","forecast":"sunny","tempC":21}' },
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
  }

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode} on @ai-sdk/openai's Responses API with store: false: the summary sent back with the encrypted reasoning is the second request's assistant message's reasoning, as the first response recorded it; the encrypted reasoning is written nowhere`, async () => {
      const stream = mode === 'streamText';
      const reply = stream ? openAiResponseStream : openAiResponse;
      const { fetch, requests } = scriptedFetch([
        reply({ id: 'resp_01', model: 'o4-mini-2025-04-16', reasoning: THOUGHT, encryptedReasoning: ENCRYPTED, toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 60, reasoning: 40 } }),
        reply({ id: 'resp_02', model: 'o4-mini-2025-04-16', text: 'It is sunny and 21C in Paris.', usage: { prompt_tokens: 160, completion_tokens: 12 } }),
      ]);
      const recorded = recordedPlugin(`ai-reasoning-history-openai-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const options = {
        model: createOpenAI({ apiKey: 'test-key', fetch }).responses('o4-mini'),
        system: 'You answer weather questions.',
        prompt: 'Weather in Paris?',
        tools: { weather },
        stopWhen: stepCountIs(5),
        providerOptions: { openai: { reasoningEffort: 'high', reasoningSummary: 'auto', store: false, include: ['reasoning.encrypted_content'] } },
      } as const;
      const text = stream ? await streamText(options).text : (await generateText(options)).text;
      expect(text).toBe('It is sunny and 21C in Paris.');
      // What went over the wire: the reasoning sent back, encrypted (the API keeps nothing).
      expect(JSON.stringify(requests[1]!.body.input)).toContain(ENCRYPTED);

      const answered = hooksOf(recorded, 'post_api_request')[0]!.assistant_message;
      expect(answered).toEqual({ role: 'assistant', content: null, reasoning_content: THOUGHT, tool_calls: [{ id: 'call_paris', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] });
      expect(hooksOf(recorded, 'pre_api_request')[1]!.request.body.messages).toEqual([
        { role: 'system', content: 'You answer weather questions.' },
        { role: 'user', content: 'Weather in Paris?' },
        answered,
        { role: 'tool', tool_call_id: 'call_paris', content: '{"city":"Paris","forecast":"sunny","tempC":21}' },
      ]);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      for (const written of [writtenFiles(recorded), JSON.stringify(recorded.log)]) expect(written).not.toContain('gAAAAAB');
      await sameOnNative(recorded);
    });
  }
});
