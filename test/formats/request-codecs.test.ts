// Native's request-codec rules as the cache key and the OTLP reader both read them: which shape a request
// has, which messages a decode reads as their role, and what the normalized form makes of content parts and
// generation parameters. The native-compared tests (test/components/adaptive-parity.test.ts for the key,
// test/export/otlp-request-shapes.test.ts for spans) check the outputs built on these; this file pins the
// rules themselves, so a change to one shows here before it shows as a hash or span difference.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { keyedRequest } from '../../src/components/cache/request-key.ts';
import { readRequest } from '../../src/export/otlp/mappings/llm-shapes.ts';
import { firstParam, keptAsSent, normalizedPart, PARAM_FIELDS, readsAsRole, requestSurface, stopList } from '../../src/formats/request-codecs.ts';

describe('request surface', () => {
  it('detects in native order, the exact Anthropic provider names breaking the Chat/Messages tie', () => {
    const messages = [{ role: 'user', content: 'x' }];
    expect(requestSurface({ input: 'x', messages }, 'anthropic')).toBe('openai_responses');
    expect(requestSurface({ system: 's' }, 'openai')).toBe('anthropic_messages');
    expect(requestSurface({ messages }, 'anthropic.messages')).toBe('anthropic_messages');
    expect(requestSurface({ messages }, 'claude-3')).toBe('openai_chat');
    expect(requestSurface({ tools: [] }, 'anthropic')).toBeUndefined();
    expect(requestSurface({ contents: [] }, undefined)).toBe('gemini_generate_content');
    expect(requestSurface('text', 'openai')).toBeUndefined();
  });
});

describe('messages a decode reads as their role', () => {
  it('takes a known role with only that role’s fields and plain tool calls', () => {
    expect(readsAsRole({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: {} }] }, 'assistant', 'openai_chat')).toBe(true);
    expect(readsAsRole({ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: {} }] }, 'assistant', 'openai_chat')).toBe(false);
    expect(readsAsRole({ role: 'user', content: 'x', name: 'n' }, 'user', 'openai_chat')).toBe(true);
    expect(readsAsRole({ role: 'user', content: 'x', name: 'n' }, 'user', 'anthropic_messages')).toBe(false);
    expect(readsAsRole({ role: 'critic', content: 'x' }, 'critic', 'openai_chat')).toBe(false);
  });

  it('keeps a message whose role is an Object prototype name whole, in the span and out of the key', () => {
    const body = { model: 'm', messages: [{ role: 'constructor', content: 'x' }] };
    expect(readsAsRole(body.messages[0]!, 'constructor', 'openai_chat')).toBe(false);
    expect(readRequest({ content: body }, 'openai').messages[0]!.native).toEqual({ kind: 'constructor', value: body.messages[0] });
    expect(keyedRequest('openai', body).codec).toBeNull();
  });
});

describe('content parts in the normalized form', () => {
  it('keeps text as sent, re-wraps media and wraps any other kind as provider-native', () => {
    expect(normalizedPart({ type: 'text', text: 'x' }, 'openai_chat')).toEqual({ type: 'text', text: 'x' });
    expect(normalizedPart({ type: 'image_url', image_url: { url: 'u', detail: null, extra: 1 } }, 'openai_chat')).toEqual({ image_url: { url: 'u' }, type: 'image_url' });
    expect(normalizedPart({ type: 'input_audio', input_audio: { data: 'a' } }, 'openai_chat')).toEqual({ audio: { data: 'a' }, type: 'audio' });
    expect(normalizedPart({ type: 'document', source: { data: 'd' } }, 'anthropic_messages')).toEqual({ file: { source: { data: 'd' } }, type: 'file' });
    expect(normalizedPart({ type: 'input_image', image_url: 'u', note: 1 }, 'openai_responses')).toEqual({ note: 1, image: { image_url: 'u' }, type: 'image' });
    expect(normalizedPart({ type: 'image', source: {} }, 'openai_chat')).toEqual({ type: 'provider_native', provider: 'openai_chat', kind: 'image', value: { type: 'image', source: {} } });
    expect(normalizedPart({ text: 'no type' }, 'anthropic_messages')).toMatchObject({ type: 'provider_native', kind: 'unknown' });
  });

  it('counts a part as kept only when the normalized form gives it back, keys in any order', () => {
    expect(keptAsSent({ image_url: { detail: 'low', url: 'u' }, type: 'image_url' }, 'openai_chat')).toBe(true);
    expect(keptAsSent({ type: 'image_url', image_url: { url: 'u', detail: null } }, 'openai_chat')).toBe(false);
    expect(keptAsSent({ type: 'refusal', refusal: 'no' }, 'openai_responses')).toBe(true);
    expect(keptAsSent({ type: 'input_text', text: 'renamed' }, 'openai_responses')).toBe(false);
    expect(keptAsSent({ type: 'tool_use', id: 'i', name: 'n', input: {} }, 'anthropic_messages')).toBe(true);
  });

  it('the key trusts exactly the parts the span shows unchanged', () => {
    const chat = (part: Json) => ({ model: 'm', messages: [{ role: 'user', content: [part] }] });
    expect(keyedRequest('openai', chat({ type: 'image_url', image_url: { url: 'u', detail: 'high' } })).codec).toBe('openai_chat');
    expect(keyedRequest('openai', chat({ type: 'image_url', image_url: { url: 'u', detail: null } })).codec).toBeNull();
    const shown = readRequest({ content: chat({ type: 'image_url', image_url: { url: 'u', detail: null } }) }, 'openai').messages[0]!.parts[0];
    expect(shown).toEqual({ kind: 'other', raw: { image_url: { url: 'u' }, type: 'image_url' } });
  });
});

describe('generation parameters', () => {
  it('reads each shape’s own field names, the first usable one winning', () => {
    const count = (v: Json) => (typeof v === 'number' ? v : undefined);
    const request = { max_tokens: 8, max_completion_tokens: 9, max_output_tokens: 7 };
    expect(firstParam(request, PARAM_FIELDS.openai_chat.max_tokens, count)).toBe(9);
    expect(firstParam({ ...request, max_completion_tokens: 'x' }, PARAM_FIELDS.openai_chat.max_tokens, count)).toBe(8);
    expect(firstParam(request, PARAM_FIELDS.anthropic_messages.max_tokens, count)).toBe(8);
    expect(firstParam(request, PARAM_FIELDS.openai_responses.max_tokens, count)).toBe(7);
    expect(PARAM_FIELDS.openai_responses.stop).toEqual([]);
  });

  it('lists a single stop only for Chat', () => {
    expect(stopList('x', 'openai_chat')).toEqual(['x']);
    expect(stopList('x', 'anthropic_messages')).toBeUndefined();
    expect(stopList(['a', 'b'], 'anthropic_messages')).toEqual(['a', 'b']);
    expect(stopList(['a', 1], 'openai_chat')).toBeUndefined();
  });
});
