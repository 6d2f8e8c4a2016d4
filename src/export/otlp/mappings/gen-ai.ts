/**
 * `type = "gen_ai"`: the OpenTelemetry GenAI semantic conventions, as
 * native writes them: `invoke_agent <agent>`, `chat <model>` and
 * `execute_tool <tool>` spans, message content in the parts format, no
 * `nemo_relay.*` attributes and no span events (marks are dropped).
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { canonicalJson } from '../../../formats/native-text.ts';
import type { AtofScopeEvent } from '../../../formats/atof/types.ts';
import { objectOf, put, stringOf } from '../attributes.ts';
import { SpanKind, type Attributes } from '../model.ts';
import type { FinishedScope, Projection } from './types.ts';
import { errorType, markSpan, modelName, toolCallId } from './relay-attributes.ts';
import { readRequest, readResponse, sortedJson, type Message, type Part } from './llm-shapes.ts';

export const genAiProjection: Projection = {
  span(scope) {
    if (scope.start.category === 'llm') return chat(scope);
    if (scope.start.category === 'tool') return executeTool(scope);
    const out: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
    put(out, 'gen_ai.conversation.id', conversationId(scope.start));
    out['gen_ai.agent.name'] = scope.start.name;
    return { name: `invoke_agent ${scope.start.name}`, kind: SpanKind.INTERNAL, attributes: out };
  },
  markEvent: () => null,
  markSpan,
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
  if (typeof request.parameters.temperature === 'number') out['gen_ai.request.temperature'] = request.parameters.temperature;
  if (typeof request.parameters.max_tokens === 'number') out['gen_ai.request.max_tokens'] = request.parameters.max_tokens;
  if (request.system.length > 0) out['gen_ai.system_instructions'] = sortedJson(request.system.map((content) => ({ content, type: 'text' })));
  if (request.messages.length > 0) out['gen_ai.input.messages'] = sortedJson(request.messages.map(inputMessage));
  if (request.tools.length > 0) out['gen_ai.tool.definitions'] = sortedJson(request.tools.map((t) => ({ name: t.name, type: 'function' })));
  const response = readResponse(end.data);
  put(out, 'gen_ai.response.id', response.id);
  put(out, 'gen_ai.response.model', response.model);
  const finish = finishReason(response.finishReason);
  if (finish !== undefined) out['gen_ai.response.finish_reasons'] = [finish];
  if (response.message !== null && response.id !== undefined) {
    out['gen_ai.output.messages'] = sortedJson([{ finish_reason: finish, parts: response.message.parts.filter((p) => p.kind !== 'other').map(part), role: 'assistant' }]);
  }
  put(out, 'gen_ai.usage.input_tokens', response.usage.input);
  put(out, 'gen_ai.usage.output_tokens', response.usage.output);
  put(out, 'gen_ai.usage.cache_read.input_tokens', response.usage.cacheRead);
  put(out, 'gen_ai.usage.cache_write.input_tokens', response.usage.cacheWrite);
  return { name: model === undefined ? 'chat' : `chat ${model}`, kind: SpanKind.CLIENT, attributes: out };
}

function executeTool(scope: FinishedScope) {
  const { start, end } = scope;
  const out: Attributes = { 'gen_ai.operation.name': 'execute_tool' };
  put(out, 'gen_ai.conversation.id', conversationId(start));
  out['gen_ai.tool.name'] = start.name;
  put(out, 'gen_ai.tool.call.id', toolCallId(scope));
  if (start.data !== null) out['gen_ai.tool.call.arguments'] = jsonText(start.data);
  const error = errorType(end);
  if (error === undefined && end.data !== null) out['gen_ai.tool.call.result'] = jsonText(end.data);
  put(out, 'error.type', error);
  return { name: `execute_tool ${start.name}`, kind: SpanKind.INTERNAL, attributes: out };
}

/** A payload as JSON text; a string holding JSON is re-serialized compactly. */
function jsonText(value: Json): string {
  if (typeof value === 'string') {
    try {
      return sortedJson(JSON.parse(value));
    } catch {
      return JSON.stringify(value);
    }
  }
  // A payload value crossed the binding: native's number text (an integer past u32 is an f64, `1.0`).
  return canonicalJson(value);
}

/** Roles native's request codec knows; a message in any other role is passed through as one part. */
const KNOWN_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function inputMessage(message: Message) {
  if (!KNOWN_ROLES.has(message.providerRole) && message.parts.length === 1 && message.parts[0]!.kind === 'text') {
    // Native keeps an unknown role's text message whole, its role doubling as the part type.
    return { parts: [{ content: message.parts[0]!.text, role: message.providerRole, type: message.providerRole }], role: message.role };
  }
  if (message.role === 'tool') {
    return { parts: message.results.map((r) => ({ id: r.id, response: r.content, type: 'tool_call_response' })), role: 'tool' };
  }
  return { parts: message.parts.map(part), role: message.role };
}

function part(p: Part): unknown {
  if (p.kind === 'text') return { content: p.text, type: 'text' };
  if (p.kind === 'tool_call') return { arguments: p.call.arguments, id: p.call.id, name: p.call.name, type: 'tool_call' };
  return p.raw;
}

/** The conventions' finish reasons: `tool_call`, `stop`, `length`, `content_filter`. */
function finishReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (reason === 'tool_calls' || reason === 'tool_use' || reason === 'function_call') return 'tool_call';
  if (reason === 'end_turn' || reason === 'stop_sequence') return 'stop';
  if (reason === 'max_tokens') return 'length';
  return reason;
}
