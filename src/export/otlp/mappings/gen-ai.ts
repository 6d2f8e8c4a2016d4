/**
 * `type = "gen_ai"`: the OpenTelemetry GenAI semantic conventions, as
 * native writes them: `invoke_agent <agent>`, `chat <model>` and
 * `execute_tool <tool>` spans, message content in the parts format, no
 * `nemo_relay.*` attributes and no span events (marks are dropped).
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { canonicalJson, parseJsonAsNative, setExactText } from '../../../formats/native-text.ts';
import type { AtofScopeEvent } from '../../../formats/atof/types.ts';
import { firstParam, PARAM_FIELDS, stopList } from '../../../formats/request-codecs.ts';
import { objectOf, put, stringOf } from '../attributes.ts';
import { SpanKind, type Attributes } from '../model.ts';
import type { FinishedScope, Projection } from './types.ts';
import { errorType, modelName, toolCallId } from './relay-attributes.ts';
import { jsonTextOfString, readDecodedResponse, readRequest, sortedJson, type LlmRequestView, type Message, type Part } from './llm-shapes.ts';

export const genAiProjection: Projection = {
  span(scope) {
    if (scope.start.category === 'llm') return chat(scope);
    if (scope.start.category === 'tool') return executeTool(scope);
    const out: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
    put(out, 'gen_ai.conversation.id', conversationId(scope.start));
    out['gen_ai.agent.name'] = scope.start.name;
    return { name: `invoke_agent ${scope.start.name}`, kind: SpanKind.INTERNAL, attributes: out };
  },
  // Native sends no marks on a gen_ai endpoint, not even as mark:<name> spans with mark_projection = "tool", and
  // aliases nothing of attribute_mappings: a gen_ai endpoint's spans are the conventions' attributes only.
  markEvent: () => null,
  markSpan: null,
  mapsAttributes: false,
};

function conversationId(start: AtofScopeEvent): Json | undefined {
  return objectOf(start.metadata)?.session_id ?? objectOf(start.data)?.session_id;
}

function chat(scope: FinishedScope) {
  const { start, end } = scope;
  const request = readRequest(start.data, start.name);
  // Native names the model of the request body first (a redacted body names a redacted model).
  const model = request.model ?? modelName(scope);
  const out: Attributes = { 'gen_ai.operation.name': 'chat' };
  put(out, 'gen_ai.provider.name', stringOf(objectOf(start.metadata)?.provider) ?? start.name);
  put(out, 'gen_ai.conversation.id', conversationId(start));
  put(out, 'gen_ai.request.model', model);
  requestParameters(out, request);
  if (request.system.length > 0) out['gen_ai.system_instructions'] = sortedJson(request.system.map((content) => ({ content, type: 'text' })));
  if (request.messages.length > 0) out['gen_ai.input.messages'] = sortedJson(request.messages.map(inputMessage));
  const tools = request.tools.filter((t) => t.name !== '');
  if (tools.length > 0) out['gen_ai.tool.definitions'] = sortedJson(tools.flatMap((t) => [{ name: t.name, type: t.type ?? 'function' }, ...(t.alsoNamed ?? []).map((kind) => ({ name: kind, type: kind }))]));
  const response = readDecodedResponse(end.data);
  put(out, 'gen_ai.response.id', response.id);
  put(out, 'gen_ai.response.model', response.model);
  const finish = response.finishAsSent === true ? response.finishReason : finishReason(response.finishReason);
  if (finish !== undefined) out['gen_ai.response.finish_reasons'] = [finish];
  // As native: the message of any response with a provider's shape, with or without an id; none of a shapeless one's.
  if (response.message !== null && response.recognized) {
    // The response's text is one part (its text blocks joined by newlines), then its tool calls; a codec that keeps
    // other parts (Gemini's) gave its message's parts as they are shown, in order.
    const texts = response.message.parts.filter((p): p is Extract<Part, { kind: 'text' }> => p.kind === 'text').map((p) => p.text);
    const calls = response.message.parts.filter((p) => p.kind === 'tool_call');
    const parts = response.keepsOtherParts === true ? response.message.parts.map(part) : [...(texts.length === 0 ? [] : [{ content: texts.join('\n'), type: 'text' }]), ...calls.map(part)];
    if (parts.length > 0) out['gen_ai.output.messages'] = sortedJson([{ finish_reason: finish ?? 'unknown', parts, role: 'assistant' }]);
  }
  put(out, 'gen_ai.usage.input_tokens', response.usage.input);
  put(out, 'gen_ai.usage.output_tokens', response.usage.output);
  put(out, 'gen_ai.usage.cache_read.input_tokens', response.usage.cacheRead);
  put(out, 'gen_ai.usage.cache_write.input_tokens', response.usage.cacheWrite);
  put(out, 'gen_ai.usage.reasoning.output_tokens', response.usage.reasoning);
  return { name: model === undefined ? 'chat' : `chat ${model}`, kind: SpanKind.CLIENT, attributes: out };
}

/**
 * The generation parameters native normalizes, under the conventions'
 * names: temperature, the token cap (whatever the provider calls it), top_p,
 * stop sequences, streaming, Anthropic's top_k, and Chat Completions'
 * penalties, choice count (other than 1) and seed.
 */
function requestParameters(out: Attributes, request: LlmRequestView): void {
  const p = request.parameters;
  const number = (v: Json | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const count = (v: Json | undefined) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const surface = request.surface;
  const fields = PARAM_FIELDS[surface];
  put(out, 'gen_ai.request.temperature', firstParam(p, fields.temperature, number));
  put(out, 'gen_ai.request.max_tokens', firstParam(p, fields.max_tokens, count));
  put(out, 'gen_ai.request.top_p', firstParam(p, fields.top_p, number));
  const stop = firstParam(p, fields.stop, (v) => stopList(v, surface));
  if (stop !== undefined) out['gen_ai.request.stop_sequences'] = stop;
  if (p.stream === true) out['gen_ai.request.stream'] = true;
  if (surface === 'anthropic_messages') put(out, 'gen_ai.request.top_k', count(p.top_k));
  if (surface === 'openai_chat') {
    put(out, 'gen_ai.request.frequency_penalty', number(p.frequency_penalty));
    const n = count(p.n);
    if (n !== 1) put(out, 'gen_ai.request.choice.count', n);
    put(out, 'gen_ai.request.presence_penalty', number(p.presence_penalty));
    put(out, 'gen_ai.request.seed', typeof p.seed === 'number' && Number.isInteger(p.seed) ? p.seed : undefined);
  }
}

function executeTool(scope: FinishedScope) {
  const { start, end } = scope;
  const out: Attributes = { 'gen_ai.operation.name': 'execute_tool' };
  put(out, 'gen_ai.conversation.id', conversationId(start));
  out['gen_ai.tool.name'] = start.name;
  put(out, 'gen_ai.tool.call.id', toolCallId(scope));
  if (start.data !== null) put(out, 'gen_ai.tool.call.arguments', jsonText(start.data));
  const error = errorType(end);
  if (error === undefined && end.data !== null) put(out, 'gen_ai.tool.call.result', jsonText(end.data));
  put(out, 'error.type', error);
  return { name: `execute_tool ${start.name}`, kind: SpanKind.INTERNAL, attributes: out };
}

/** A payload as JSON text; a string holding JSON is re-serialized compactly, and one holding `null` is no payload (native). */
function jsonText(value: Json): string | undefined {
  if (typeof value === 'string') {
    const parsed = parseJsonAsNative(value);
    return parsed !== undefined && parsed.value === null ? undefined : jsonTextOfString(value, parsed);
  }
  // A payload value crossed the binding: native's number text (an integer past u32 is an f64, `1.0`).
  return canonicalJson(value);
}

/** A conversation message in the parts format, as native writes it (a provider item whole, its kind as the part type). */
function inputMessage(message: Message) {
  if (message.native !== undefined) {
    const role = stringOf(message.native.value.role) ?? 'provider_native';
    return { parts: [{ ...message.native.value, type: message.native.kind }], role };
  }
  if (message.role === 'tool') {
    return { parts: message.results.map((r) => ({ id: r.id, response: r.response !== undefined ? r.response : r.content, type: 'tool_call_response' })), role: 'tool' };
  }
  if (message.providerRole === 'function') {
    // A legacy function result: a tool response named by the function.
    return { name: message.name, parts: [{ response: message.plainText ?? null, type: 'tool_call_response' }], role: 'tool' };
  }
  return { name: message.name, parts: message.parts.map(part), role: message.role };
}

function part(p: Part): unknown {
  if (p.kind === 'text') return { content: p.text, type: 'text' };
  if (p.kind === 'tool_call') {
    const out = { arguments: p.call.arguments, id: p.call.id, name: p.call.name, type: 'tool_call' };
    if (p.call.argumentsNumberText !== undefined) setExactText(out, 'arguments', p.call.argumentsNumberText);
    return out;
  }
  return p.raw;
}

/** The conventions' finish reasons: `tool_call`, `stop`, `length`, `content_filter`. */
function finishReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (reason === 'tool_calls' || reason === 'tool_use' || reason === 'function_call') return 'tool_call';
  // native: Anthropic's `stop_sequence` is sent as it is.
  if (reason === 'end_turn') return 'stop';
  if (reason === 'max_tokens') return 'length';
  return reason;
}
