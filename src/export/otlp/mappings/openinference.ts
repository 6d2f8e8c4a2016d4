/**
 * `type = "openinference"`: OpenInference's span kinds and attributes
 * (`input.value`, `llm.*`, `tool_call.*`, `metadata`), which Phoenix reads,
 * next to the relay identity and end payload (`nemo_relay.*`), as native
 * writes them. Marks are span events, as in `full`.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { canonicalJson, nativeTrim } from '../../../formats/native-text.ts';
import { objectOf, put, spread } from '../attributes.ts';
import { SpanKind, type Attributes } from '../model.ts';
import type { FinishedScope, Projection } from './types.ts';
import { endData, handleAttributes, identity, markAttributes, markSpan, answeringModelName, session, startData, toolCallId } from './relay-attributes.ts';
import { readRequest, readResponse, responseDecodes, textOfMessage, toolCallsOf, type LlmRequestView, type Message, type Part } from './llm-shapes.ts';
import { firstParam, PARAM_FIELDS, stopList } from '../../../formats/request-codecs.ts';
import { displayText, displayTextOfString, requestDisplayText } from './display-text.ts';

const KINDS: Record<string, string> = { agent: 'AGENT', llm: 'LLM', tool: 'TOOL', retriever: 'RETRIEVER', embedder: 'EMBEDDING', reranker: 'RERANKER', guardrail: 'GUARDRAIL', evaluator: 'EVALUATOR' };

export const openInferenceProjection: Projection = {
  span(scope) {
    const { start, end } = scope;
    const out: Attributes = { 'openinference.span.kind': KINDS[start.category] ?? 'CHAIN' };
    identity(out, start);
    const metadata = end.metadata ?? start.metadata;
    if (objectOf(metadata) !== null) {
      out.metadata = canonicalJson(metadata as Json);
      spread(out, 'openinference.metadata', metadata);
    }
    if (start.category !== 'llm') {
      handleAttributes(out, start);
      startData(out, start);
    }
    endData(out, end);
    session(out, scope);
    if (start.category === 'llm') llm(out, scope);
    else {
      if (start.category === 'tool') tool(out, scope);
      // native: a tool's arguments are JSON, a string among them (its JSON text, a quoted string).
      if (start.category === 'tool' && typeof start.data === 'string') {
        out['input.value'] = canonicalJson(start.data);
        out['input.mime_type'] = 'application/json';
      } else value(out, 'input', start.data);
      // native: a tool result's output.value is its display text, by the rule an LLM payload's is read by.
      const text = start.category === 'tool' ? (displayText(end.data ?? undefined) ?? '') : '';
      if (text !== '') {
        out['output.value'] = text;
        out['output.mime_type'] = 'text/plain';
      } else if (start.category === 'tool' && typeof end.data === 'string') {
        // native: a text result its trim leaves empty is sent as its JSON, untrimmed.
        out['output.value'] = canonicalJson(end.data);
        out['output.mime_type'] = 'application/json';
      } else value(out, 'output', end.data);
    }
    const kind = start.category === 'llm' || start.category === 'tool' ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return { name: start.name, kind, attributes: out };
  },
  markEvent: (mark) => markAttributes(mark),
  markSpan(mark) {
    const shape = markSpan(mark);
    const out = shape.attributes;
    delete out['nemo_relay.scope_type'];
    out['openinference.span.kind'] = 'TOOL';
    out['tool.name'] = mark.name;
    out['tool_call.function.name'] = mark.name;
    value(out, 'output', mark.data);
    if (objectOf(mark.metadata) !== null) out.metadata = canonicalJson(mark.metadata);
    return shape;
  },
  mapsAttributes: true,
};

/** `<prefix>.value` and `<prefix>.mime_type`: text as is, anything else as JSON. */
function value(out: Attributes, prefix: 'input' | 'output', payload: Json | undefined): void {
  if (payload === null || payload === undefined) return;
  if (typeof payload === 'string') {
    out[`${prefix}.value`] = payload;
    out[`${prefix}.mime_type`] = 'text/plain';
    return;
  }
  out[`${prefix}.value`] = canonicalJson(payload);
  out[`${prefix}.mime_type`] = 'application/json';
}

function tool(out: Attributes, scope: FinishedScope): void {
  const { start } = scope;
  put(out, 'tool_call.id', toolCallId(scope));
  out['tool.name'] = start.name;
  out['tool_call.function.name'] = start.name;
  if (start.data !== null) {
    const args = canonicalJson(start.data);
    out['tool.parameters'] = args;
    out['tool_call.function.arguments'] = args;
  }
}

function llm(out: Attributes, scope: FinishedScope): void {
  const { start, end } = scope;
  const request = readRequest(start.data, start.name);
  const input = requestDisplayText(start.data ?? undefined);
  if (input !== undefined) {
    out['input.value'] = input;
    out['input.mime_type'] = 'text/plain';
  } else if (start.data !== null && start.data !== undefined) {
    // Nothing readable: the request as JSON, its headers left out.
    const data = objectOf(start.data);
    out['input.value'] = canonicalJson(data === null ? start.data : (Object.fromEntries(Object.entries(data).filter(([key]) => key !== 'headers')) as Json));
    out['input.mime_type'] = 'application/json';
  }
  put(out, 'llm.invocation_parameters', invocationParameters(request));
  let index = 0;
  // The system text (Responses `instructions`, Anthropic `system`) is one message: one string is read for its
  // display text, as a message's content; blocks' texts are joined and kept as written.
  const system = request.systemText !== undefined ? displayTextOfString(request.systemText) : nativeTrim(request.system.join('\n')) || undefined;
  if (system !== undefined) {
    out[`llm.input_messages.${index}.message.role`] = 'system';
    out[`llm.input_messages.${index++}.message.content`] = system;
  }
  for (const message of request.messages) {
    if (message.role === 'tool' && message.native === undefined) {
      // Each tool result is a message of its own (Anthropic carries several in one user message).
      for (const result of message.results) {
        const at = `llm.input_messages.${index++}.message`;
        out[`${at}.role`] = 'tool';
        out[`${at}.content`] = result.content;
        put(out, `${at}.tool_call_id`, result.id);
      }
      continue;
    }
    const at = `llm.input_messages.${index++}.message`;
    out[`${at}.role`] = message.role;
    put(out, `${at}.content`, contentText(message));
  }
  request.tools.forEach((t, i) => {
    if (t.schema !== undefined) {
      out[`llm.tools.${i}.tool.json_schema`] = t.schema;
      return;
    }
    const fn: Record<string, unknown> = { name: t.name };
    if (t.description !== undefined) fn.description = t.description;
    if (t.parameters !== undefined) fn.parameters = t.parameters;
    out[`llm.tools.${i}.tool.json_schema`] = JSON.stringify({ type: 'function', function: fn });
  });
  // native: a response its codec cannot decode loses its message and finish reason here (the rest stays).
  const read = readResponse(end.data, 'shape-then-names');
  const response = responseDecodes(end.data) ? read : { ...read, recognized: false, message: null, finishReason: undefined };
  // A shapeless (managed) response is read for its message, which native sends as JSON.
  const summary = !response.recognized && response.message !== null ? summaryOf(response.message) : '';
  const output = summary !== '' ? summary : displayText(end.data ?? undefined);
  if (output !== undefined) {
    out['output.value'] = output;
    out['output.mime_type'] = 'text/plain';
  } else value(out, 'output', end.data);
  const usage = response.usage;
  put(out, 'llm.token_count.prompt', usage.input);
  put(out, 'llm.token_count.completion', usage.output);
  put(out, 'llm.token_count.total', usage.total);
  put(out, 'llm.token_count.prompt_details.cache_read', usage.cacheRead);
  put(out, 'llm.token_count.prompt_details.cache_write', usage.cacheWrite);
  put(out, 'llm.finish_reason', response.finishAsSent === true ? response.finishReason : finishReason(response.finishReason));
  // As native: the message of any response with a provider's shape, with or without an id; none of a shapeless one's.
  if (response.message !== null && response.recognized && (hasAnswer(response.message) || (response.keepsOtherParts === true && response.message.parts.length > 0))) {
    const at = 'llm.output_messages.0.message';
    out[`${at}.role`] = 'assistant';
    put(out, `${at}.content`, contentText(response.message));
    toolCallsOf(response.message).forEach((call, i) => {
      put(out, `${at}.tool_calls.${i}.tool_call.id`, call.id);
      out[`${at}.tool_calls.${i}.tool_call.function.name`] = call.name;
      out[`${at}.tool_calls.${i}.tool_call.function.arguments`] = call.argumentsText;
    });
  }
  put(out, 'llm.model_name', answeringModelName(scope) ?? request.model);
  // OpenInference's cost is in USD: another currency is left out.
  if (scope.cost !== undefined && scope.cost.currency.toUpperCase() === 'USD') out['llm.cost.total'] = scope.cost.total;
}

/** The media kinds of native's normalized parts (a Chat `image_url`, `file` or audio, a Messages `image` or `document`, a Responses image or file): a `text` beside one is no text of the message. */
const MEDIA_PARTS: ReadonlySet<string> = new Set(['image_url', 'audio', 'file', 'image']);

/**
 * Whether native writes an output message for a response's message: it has text (an empty text too) or a
 * tool call. An answer of nothing, of reasoning only or of a message-level refusal has none.
 */
function hasAnswer(message: Message): boolean {
  if (message.native !== undefined || message.plainText !== undefined) return true;
  return message.parts.some((part) => part.kind === 'tool_call' || partText(part) !== undefined);
}

/** A part's text as native reads it into a message's content: a text part's, a refusal's, a provider part's `text`; none of a media part. */
function partText(part: Part): string | undefined {
  if (part.kind === 'text') return part.text;
  if (part.kind !== 'other' || MEDIA_PARTS.has(part.raw.type as string)) return undefined;
  return typeof part.raw.text === 'string' ? part.raw.text : typeof part.raw.refusal === 'string' ? part.raw.refusal : undefined;
}

/**
 * A message's text as native writes `message.content`: the display text of
 * content given as one string, else its text parts (refusals included) one
 * per line; a provider item's own `content`. Undefined when there is none.
 */
function contentText(message: Message): string | undefined {
  if (message.native !== undefined) return displayText(message.native.value.content);
  if (message.plainText !== undefined) return displayTextOfString(message.plainText);
  const texts = message.parts.flatMap((part) => {
    const text = partText(part);
    return text === undefined ? [] : [text];
  });
  const text = nativeTrim(texts.join('\n'));
  return text === '' ? undefined : text;
}

/**
 * `llm.invocation_parameters` as native writes it: only the generation
 * parameters it normalizes, in its order (`temperature`, `max_tokens`,
 * `top_p`, `stop`), read from the request's own shape's fields
 * (`PARAM_FIELDS`: a Chat cap is `max_completion_tokens` or `max_tokens`, a
 * Messages stop `stop_sequences`, ...), with `temperature` and `top_p` as
 * floats (`1.0`). Everything else (`tool_choice`, `seed`,
 * `response_format`, ...) is left out; nothing at all gives no attribute.
 */
function invocationParameters(request: LlmRequestView): string | undefined {
  const float = (value: Json | undefined) =>
    typeof value !== 'number' || !Number.isFinite(value) ? undefined : Number.isInteger(value) && Math.abs(value) < 1e16 ? `${value}.0` : JSON.stringify(value);
  const count = (value: Json | undefined) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);
  const { parameters, surface } = request;
  const fields = PARAM_FIELDS[surface];
  const parts: string[] = [];
  const temperature = firstParam(parameters, fields.temperature, float);
  if (temperature !== undefined) parts.push(`"temperature":${temperature}`);
  const maxTokens = firstParam(parameters, fields.max_tokens, count);
  if (maxTokens !== undefined) parts.push(`"max_tokens":${maxTokens}`);
  const topP = firstParam(parameters, fields.top_p, float);
  if (topP !== undefined) parts.push(`"top_p":${topP}`);
  const stop = firstParam(parameters, fields.stop, (v) => stopList(v, surface));
  if (stop !== undefined) parts.push(`"stop":${JSON.stringify(stop)}`);
  return parts.length === 0 ? undefined : `{${parts.join(',')}}`;
}

function summaryOf(message: Message): string {
  const text = textOfMessage(message);
  const calls = toolCallsOf(message);
  const requested = calls.length > 0 ? `Requested tools: ${calls.map((c) => c.name).join(', ')}` : '';
  return [text, requested].filter((s) => s !== '').join('\n');
}

/** OpenInference's finish reasons: `tool_use`, `complete`, ... */
function finishReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (reason === 'tool_calls' || reason === 'tool_use' || reason === 'function_call') return 'tool_use';
  // native: Anthropic's `stop_sequence` is sent as it is.
  if (reason === 'stop' || reason === 'end_turn') return 'complete';
  if (reason === 'max_tokens') return 'length';
  return reason;
}
