/**
 * Agents SDK values → the plain shapes the hooks carry: a model request's
 * instructions and input items as chat messages, a `ModelResponse` as text,
 * tool calls, reasoning, the reported model and usage, and guardrail
 * results as records.
 *
 * @module
 */

import { chargedUsd, chatCacheWrites, tokenCount, tokenUsage, usageCostUsd, type ProviderUsage } from '../../formats/usage.ts';
import { toJson } from '../../shared/json.ts';
import type { ResponseParts } from '../core/run.ts';
import type { GuardrailRecord } from '../core/guardrails.ts';
import { completionServedBy } from '../core/upstream.ts';
import { chargedCostUsd, failedUpstreamsOf, finishReasonOf, servedByOf } from '../ai-sdk/messages.ts';
import { sentRequestOf } from '../ai-sdk/sent.ts';
import type { SentRequest } from '../core/sent-settings.ts';
import {
  chatToolCall,
  hostedCall,
  hostedCallOfItem,
  newProviderApprovalAnswers,
  textOfParts,
  recordedText,
  recordedValue,
  type CallOfTool,
  type ChatMessage,
  type OfferedTool,
  type ProviderApprovalAnswer,
} from '../core/shapes.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';

type Loose = Record<string, unknown>;

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (isRecord(part) && typeof part.text === 'string') text += part.text;
    else if (isRecord(part) && typeof part.refusal === 'string') text += part.refusal;
  }
  return text;
}

/** A function call item's id: the provider's `callId` (camelCase in this SDK), else `call_id`/`id`. */
function callIdOf(item: Loose): string {
  return nonEmptyString(item.callId) ?? nonEmptyString(item.call_id) ?? nonEmptyString(item.id) ?? '';
}

/**
 * The tools the program runs that are not functions, by the SDK's item of a call of one (the Responses API's
 * `shell_call`, `apply_patch_call`, `computer_call`): the SDK tool's `type`, and the item its output goes back in.
 */
const LOCAL_TOOL_CALLS = new Map([
  ['shell_call', { tool: 'shell', output: 'shell_call_output' }],
  ['apply_patch_call', { tool: 'apply_patch', output: 'apply_patch_call_output' }],
  ['computer_call', { tool: 'computer', output: 'computer_call_result' }],
]);

const LOCAL_TOOL_OUTPUTS = new Set([...LOCAL_TOOL_CALLS.values()].map((kind) => kind.output));

/**
 * What the model asked a local built-in tool for, as the Responses API sent it (snake_case, as the model's own item
 * says it): a shell call's `action` (its `commands` and the limits it gave), an apply_patch call's `operation` (the file,
 * the diff), a computer call's `actions` (a batch), or its one `action`. The SDK's camelCase copy of the item is what it
 * hands the tool events, so it is read back here.
 */
function localArguments(item: Loose): Record<string, unknown> {
  if (item.type === 'shell_call') {
    const action = isRecord(item.action) ? item.action : {};
    return {
      commands: Array.isArray(action.commands) ? action.commands : [],
      ...(typeof action.timeoutMs === 'number' ? { timeout_ms: action.timeoutMs } : {}),
      ...(typeof action.maxOutputLength === 'number' ? { max_output_length: action.maxOutputLength } : {}),
    };
  }
  if (item.type === 'apply_patch_call') {
    const { moveTo, ...operation } = isRecord(item.operation) ? item.operation : ({} as Loose);
    return moveTo === undefined ? operation : { ...operation, move_to: moveTo };
  }
  return Array.isArray(item.actions) && item.actions.length > 0 ? { actions: item.actions } : { action: item.action ?? null };
}

/**
 * A call the runner runs, from the SDK's item of it: a function call (its name and arguments), or a call of a local
 * built-in tool (`LOCAL_TOOL_CALLS`), which has no name: it is named after the agent's tool of its kind among `tools`
 * (`shellTool({ name })`; a computer tool's default is `computer_use_preview`), else after its kind, and its arguments
 * are what the model asked ({@link localArguments}).
 */
export function runnerCallOf(item: unknown, tools?: unknown): CallOfTool | undefined {
  if (!isRecord(item)) return undefined;
  if (item.type === 'function_call') return { id: callIdOf(item), name: nonEmptyString(item.name) ?? 'tool', arguments: item.arguments ?? '{}' };
  const kind = typeof item.type === 'string' ? LOCAL_TOOL_CALLS.get(item.type) : undefined;
  if (kind === undefined) return undefined;
  const tool = Array.isArray(tools) ? tools.find((candidate) => isRecord(candidate) && candidate.type === kind.tool) : undefined;
  // A shell in a container OpenAI runs (`shellTool({ environment: { type: 'container_auto' } })`): the runner runs nothing.
  if (isRecord(tool) && isRecord(tool.environment) && tool.environment.type !== 'local') return undefined;
  return { id: callIdOf(item), name: nonEmptyString((tool as Loose | undefined)?.name) ?? kind.tool, arguments: localArguments(item) };
}

/**
 * A shell call OpenAI ran in its container (the agent's shell tool has a hosted `environment`), as the hosted call
 * it is: what it asked ({@link localArguments}), and as its result the `shell_call_output` among `items` (the same
 * response's, or the request's history) that answers it.
 */
function containerShellCallOf(item: Loose, items: readonly unknown[], tools: unknown): CallOfTool | undefined {
  if (item.type !== 'shell_call' || !Array.isArray(tools)) return undefined;
  const tool = tools.find((candidate) => isRecord(candidate) && candidate.type === 'shell');
  if (!isRecord(tool) || !isRecord(tool.environment) || tool.environment.type === 'local') return undefined;
  const id = callIdOf(item);
  const answer = items.find((candidate) => isRecord(candidate) && candidate.type === 'shell_call_output' && callIdOf(candidate) === id);
  return hostedCall(id, nonEmptyString(tool.name) ?? 'shell', localArguments(item), answer);
}

/**
 * A request's input item that tells the model the outcome of a call the runner ran or answered: its call id and the
 * text of that outcome, when it has one. A function call's result (its output's text); a local built-in tool's output
 * item: an apply_patch call's `output`, a shell call's `stderr` (where the SDK puts a refusal) else its `stdout`, a
 * computer call's `providerData.message` (a rejection's; its screenshot is no text).
 */
export function toldOfCall(item: unknown): { id: string; text: string | undefined } | undefined {
  if (!isRecord(item) || (item.type !== 'function_call_result' && !LOCAL_TOOL_OUTPUTS.has(item.type as string))) return undefined;
  const id = nonEmptyString(item.callId) ?? nonEmptyString(item.call_id);
  if (id === undefined) return undefined;
  const output = item.output;
  if (typeof output === 'string') return { id, text: output };
  if (item.type === 'shell_call_output' && Array.isArray(output)) {
    const streams = output.filter(isRecord);
    const stderr = streams.map((entry) => entry.stderr).filter((text): text is string => typeof text === 'string' && text !== '');
    return { id, text: (stderr.length > 0 ? stderr : streams.map((entry) => String(entry.stdout ?? ''))).join('\n') };
  }
  if (!isRecord(output)) return { id, text: undefined };
  if (typeof output.text === 'string') return { id, text: output.text };
  return { id, text: isRecord(output.providerData) && typeof output.providerData.message === 'string' ? output.providerData.message : undefined };
}

function resultText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (isRecord(output) && typeof output.text === 'string') return output.text;
  if (Array.isArray(output)) {
    const text = textOfParts(output);
    if (text !== undefined) return text;
  }
  // A tool may return an image or a file (`{type: 'image', image}`, `input_image` items).
  return recordedText(output);
}

/** The model request's instructions and input items as chat messages; `tools`, the request's, name the local built-in tools' calls. */
export function chatMessages(instructions: unknown, input: unknown, tools?: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (typeof instructions === 'string' && instructions !== '') out.push({ role: 'system', content: instructions });
  if (typeof input === 'string') {
    out.push({ role: 'user', content: input });
    return out;
  }
  if (!Array.isArray(input)) return out;
  let assistant: ChatMessage | undefined;
  for (const item of input) {
    if (!isRecord(item)) continue;
    const call = hostedCallOf(item) ?? containerShellCallOf(item, input, tools) ?? runnerCallOf(item, tools);
    if (call !== undefined) {
      if (assistant === undefined) {
        assistant = { role: 'assistant', content: null };
        out.push(assistant);
      }
      const calls = (assistant.tool_calls as unknown[] | undefined) ?? [];
      calls.push(chatToolCall(call));
      assistant.tool_calls = calls;
      continue;
    }
    // A container shell's output is its hosted call's result, on the call.
    if (item.type === 'shell_call_output' && out.some((message) => Array.isArray(message.tool_calls) && message.tool_calls.some((c) => isRecord(c) && c.id === callIdOf(item) && c.provider_executed === true))) continue;
    if (item.type === 'function_call_result' || LOCAL_TOOL_OUTPUTS.has(item.type as string)) {
      out.push({ role: 'tool', tool_call_id: callIdOf(item), content: resultText(item.output) });
      assistant = undefined;
      continue;
    }
    // A reasoning item sent back (the model's own, before its message or calls): that assistant message's reasoning,
    // as the response that made it recorded it. One with no text to read (encrypted only) adds nothing.
    if (item.type === 'reasoning') {
      const reasoning = reasoningText([item]);
      if (reasoning === undefined) continue;
      if (assistant === undefined) {
        assistant = { role: 'assistant', content: null };
        out.push(assistant);
      }
      assistant.reasoning_content = typeof assistant.reasoning_content === 'string' ? `${assistant.reasoning_content}\n\n${reasoning}` : reasoning;
      continue;
    }
    const role = nonEmptyString(item.role);
    // Hosted tool calls' leftovers and the like are the model's own context, not messages.
    if (role === undefined) continue;
    if (role === 'assistant') {
      // The text of the message its reasoning began (one answer: reasoning, text, then calls).
      if (assistant !== undefined && assistant.content === null && assistant.tool_calls === undefined) assistant.content = contentText(item.content);
      else {
        assistant = { role: 'assistant', content: contentText(item.content) };
        out.push(assistant);
      }
      continue;
    }
    assistant = undefined;
    const content = item.content;
    out.push({ role, content: typeof content === 'string' ? content : (textOfParts(Array.isArray(content) ? content : []) ?? recordedValue(content ?? '')) });
  }
  return out;
}

/** Function tools and handoffs the model was offered. */
export function offeredTools(tools: unknown, handoffs: unknown): OfferedTool[] {
  const out: OfferedTool[] = [];
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      if (isRecord(tool) && typeof tool.name === 'string') out.push({ name: tool.name, description: nonEmptyString(tool.description), parameters: tool.parameters });
    }
  }
  if (Array.isArray(handoffs)) {
    for (const handoff of handoffs) {
      if (isRecord(handoff) && typeof handoff.toolName === 'string') out.push({ name: handoff.toolName, description: nonEmptyString(handoff.toolDescription), parameters: handoff.inputJsonSchema });
    }
  }
  return out;
}

/**
 * Request-body fields beside the messages: the settings the model was called with, the structured output asked for,
 * and the server-side conversation the request continues (`conversation`, `previous_response_id`, as the Responses API
 * names them).
 */
export function requestSettings(request: Loose): Record<string, unknown> | undefined {
  const settings = isRecord(request.modelSettings) ? request.modelSettings : {};
  const body: Record<string, unknown> = {};
  if (typeof settings.temperature === 'number') body.temperature = settings.temperature;
  if (typeof settings.topP === 'number') body.top_p = settings.topP;
  if (typeof settings.maxTokens === 'number') body.max_tokens = settings.maxTokens;
  if (settings.toolChoice !== undefined) body.tool_choice = toJson(settings.toolChoice);
  if (typeof settings.parallelToolCalls === 'boolean') body.parallel_tool_calls = settings.parallelToolCalls;
  const effort = isRecord(settings.reasoning) ? nonEmptyString(settings.reasoning.effort) : undefined;
  if (effort !== undefined) body.reasoning_effort = effort;
  // The conversation the API keeps for the request (the SDK sends one or the other): its messages hold only what is new.
  const conversation = nonEmptyString(request.conversationId);
  const previous = nonEmptyString(request.previousResponseId);
  if (conversation !== undefined) body.conversation = conversation;
  else if (previous !== undefined) body.previous_response_id = previous;
  const output = request.outputType;
  if (isRecord(output) && output.type === 'json_schema') {
    body.response_format = { type: 'json_schema', json_schema: { name: output.name, strict: output.strict, schema: toJson(output.schema) } };
  }
  return Object.keys(body).length === 0 ? undefined : body;
}

/**
 * A `hosted_tool_call` item (a tool OpenAI ran inside the model call: web search, file search, code interpreter,
 * image generation, hosted MCP) as its provider's item: the SDK keeps the wire item in `providerData`, less its
 * `status` (on the item, where an MCP call's says `completed` even when the call failed) and what it moved to the
 * item's `output` (an image's `result`, an MCP call's `output`).
 */
function hostedCallOf(item: Loose): CallOfTool | undefined {
  // Programmatic tool calling's items, which the SDK keeps apart from hosted calls, back in their wire spelling.
  if (item.type === 'program') return hostedCallOfItem({ type: 'program', id: item.id ?? item.callId, call_id: item.callId, code: item.code, fingerprint: item.fingerprint });
  if (item.type === 'program_output') return hostedCallOfItem({ type: 'program_output', id: item.id ?? item.callId, call_id: item.callId, result: item.output, status: item.status });
  if (item.type !== 'hosted_tool_call' || !isRecord(item.providerData)) return undefined;
  const wire: Loose = { ...item.providerData, id: item.id ?? item.providerData.id, status: item.providerData.status ?? item.status };
  if (item.output !== undefined && item.output !== null) wire[item.providerData.type === 'image_generation_call' ? 'result' : 'output'] = item.output;
  return hostedCallOfItem(wire);
}

/** The wire item of a `hosted_tool_call` whose `providerData` is one (`mcp_approval_request`, `mcp_approval_response`). */
function hostedWire(item: unknown): Loose | undefined {
  return isRecord(item) && item.type === 'hosted_tool_call' && isRecord(item.providerData) ? item.providerData : undefined;
}

/**
 * The answers to OpenAI's hosted MCP approval requests a model request carries for the first time (the
 * `mcp_approval_response` items the runner added after the model's last output: from the tool's `onApproval`, or
 * from the decisions on the run's interruption), each with who decided: `onApproval` when the hosted MCP tool of the
 * request's server has one (the SDK asks the program nothing then), else the program.
 */
export function providerApprovalAnswers(input: unknown, tools: unknown): Array<{ answer: ProviderApprovalAnswer; decidedBy?: string }> {
  if (!Array.isArray(input)) return [];
  // The SDK keeps an answer as a hosted item whose `providerData` is the wire's fields, without the wire's `type`.
  const items = input.map((item) => (isRecord(item) && item.name === 'mcp_approval_response' && hostedWire(item) !== undefined ? { ...hostedWire(item), type: 'mcp_approval_response' } : item));
  const modelItem = (item: unknown) => isRecord(item) && (item.role === 'assistant' || item.type === 'function_call' || item.type === 'hosted_tool_call' || item.type === 'reasoning');
  return newProviderApprovalAnswers(items, modelItem).map((answer) => {
    const asked = input.map(hostedWire).find((wire) => wire?.type === 'mcp_approval_request' && wire.id === answer.id);
    const tool = Array.isArray(tools) ? tools.find((candidate) => isRecord(candidate) && isRecord(candidate.providerData) && candidate.providerData.server_label === asked?.server_label) : undefined;
    const policy = isRecord(tool) && isRecord(tool.providerData) && typeof tool.providerData.on_approval === 'function';
    return policy ? { answer, decidedBy: 'onApproval' } : { answer };
  });
}

/**
 * The call an interruption asks about when it is OpenAI's hosted MCP approval request (the SDK's approval item keeps
 * the wire item in `rawItem.providerData`): a {@link providerApprovalCall}, whose request and answer the core records.
 */
export function hostedApprovalOf(interruption: unknown): CallOfTool | undefined {
  const call = hostedCallOfItem(isRecord(interruption) && isRecord(interruption.rawItem) ? hostedWire(interruption.rawItem) : undefined);
  return call?.providerApproval === true ? call : undefined;
}

/** The calls among output items the runner runs (function calls, local built-in tools' calls), or hands off with. */
export function functionCalls(output: unknown, tools?: unknown): CallOfTool[] {
  const calls: CallOfTool[] = [];
  if (!Array.isArray(output)) return calls;
  for (const item of output) {
    const call = runnerCallOf(item, tools);
    if (call !== undefined) calls.push(call);
  }
  return calls;
}

function outputText(output: unknown): string {
  let text = '';
  if (!Array.isArray(output)) return text;
  for (const item of output) if (isRecord(item) && (item.type === 'message' || item.role === 'assistant')) text += contentText(item.content);
  return text;
}

/**
 * Reasoning items' text: their summaries, else their raw reasoning text, a paragraph each part. A reasoning model's
 * summary (`summary: 'auto'`) comes in parts, each its own paragraph under its own heading, with no whitespace at their
 * ends: run together, one part's last sentence ran into the next one's heading.
 */
function reasoningText(output: unknown): string | undefined {
  if (!Array.isArray(output)) return undefined;
  const texts: string[] = [];
  for (const item of output) {
    if (!isRecord(item) || item.type !== 'reasoning') continue;
    const summary = partTexts(item.content);
    texts.push(...(summary.length > 0 ? summary : partTexts(item.rawContent)));
  }
  return texts.length === 0 ? undefined : reasoningOfParts(texts);
}

/** Reasoning parts as one text: each its own paragraph (`reasoningText`). */
function reasoningOfParts(texts: readonly string[]): string {
  return texts.filter((text) => text !== '').join('\n\n');
}

/** The one part a Chat Completions stream's reasoning is (the SDK makes one reasoning item of it). */
const CHAT_PART = 'chat';

/**
 * The reasoning a model's stream has handed on so far, from the raw events the SDK passes on (each `model` event's
 * `event`): what a program that shows the reasoning as it streams has shown, written as a finished response's is, a
 * paragraph each part. The three models' streams say it their own way: a Responses model's
 * `response.reasoning_summary_text.delta` (each summary part by its item and `summary_index`), a Chat Completions
 * model's chunk (`delta.reasoning`, or `delta.reasoning_content` as DeepSeek and vLLM say it; one part, as the SDK
 * makes one reasoning item of it), an `aisdk()` model's `reasoning-delta` part (each reasoning block by its `id`).
 */
export class StreamedReasoning {
  readonly #parts = new Map<string, string>();

  /** One raw event of the model's stream (a `model` event's `event`). */
  note(event: unknown): void {
    const delta = reasoningDelta(event);
    if (delta !== undefined) this.#parts.set(delta.part, (this.#parts.get(delta.part) ?? '') + delta.text);
  }

  get text(): string {
    return reasoningOfParts([...this.#parts.values()]);
  }

  /** What a Chat Completions stream's chunks said: a finished answer's reasoning where the SDK made no item of it. */
  get chatText(): string {
    return this.#parts.get(CHAT_PART) ?? '';
  }
}

/** The reasoning one raw stream event hands on, and the part it adds to; `undefined` when it hands on none. */
function reasoningDelta(event: unknown): { part: string; text: string } | undefined {
  if (!isRecord(event)) return undefined;
  if (event.type === 'response.reasoning_summary_text.delta') return typeof event.delta === 'string' ? { part: `responses:${String(event.item_id)}:${String(event.summary_index)}`, text: event.delta } : undefined;
  if (event.type === 'reasoning-delta') return typeof event.delta === 'string' ? { part: `aisdk:${String(event.id ?? 'default')}`, text: event.delta } : undefined;
  if (!Array.isArray(event.choices)) return undefined;
  // The SDK reads choice 0 only. A server that says both fields (vLLM) says the same text twice: one is read.
  const choice = event.choices.find((each) => isRecord(each) && each.index === 0) as Loose | undefined;
  const delta = isRecord(choice?.delta) ? choice.delta : undefined;
  const text = nonEmptyString(delta?.reasoning) ?? nonEmptyString(delta?.reasoning_content);
  return text === undefined ? undefined : { part: CHAT_PART, text };
}

function partTexts(content: unknown): string[] {
  return Array.isArray(content) ? content.flatMap((part) => (isRecord(part) && typeof part.text === 'string' && part.text !== '' ? [part.text] : [])) : [];
}

/**
 * The usage of one response, for the token table: the SDK's `Usage` (what
 * `result.state.usage` adds up, whatever the model), tagged with its shape.
 */
function usageOf(response: Loose): ProviderUsage | undefined {
  if (!isRecord(response.usage)) return undefined;
  const usage = response.usage;
  const writes = leftOutCacheWrites(response);
  if (writes === undefined) return { shape: 'openai_agents', usage };
  // The SDK's details are a list, one entry per request: the writes are one more entry, which the table adds up.
  const details = usage.inputTokensDetails;
  const withWrites = Array.isArray(details) ? [...details, { cache_write_tokens: writes }] : isRecord(details) ? { ...details, cache_write_tokens: writes } : { cache_write_tokens: writes };
  return { shape: 'openai_agents', usage: { ...usage, inputTokensDetails: withWrites } };
}

/**
 * The cache writes a Chat Completions answer stated (OpenRouter's `prompt_tokens_details.cache_write_tokens`) where the
 * SDK's usage has none: the SDK reads only `cached_tokens`, and its input count holds the writes. The raw completion is
 * in `providerData`; a streamed one's last chunk said them (`cache_write_tokens`, set by the stream's observer).
 */
function leftOutCacheWrites(response: Loose): number | undefined {
  const usage = response.usage as Loose;
  if (tokenUsage('openai_agents', usage)?.cacheWrite !== undefined) return undefined;
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  const writes = tokenCount(response.cache_write_tokens) ?? chatCacheWrites(provider?.usage);
  return writes === undefined || writes === 0 ? undefined : writes;
}

/**
 * The model the provider says answered (OpenAI's `model` field, e.g. a dated snapshot), when it says. An `aisdk()`
 * model keeps the AI SDK model's result as its `providerData`, where the provider's answer names it
 * (`response.modelId`).
 */
function reportedModel(response: Loose): string | undefined {
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  const aiSdkResponse = isRecord(provider?.response) ? provider.response : undefined;
  return nonEmptyString(provider?.model) ?? nonEmptyString(response.model) ?? nonEmptyString(aiSdkResponse?.modelId) ?? bodyModel(aiSdkResponse?.body);
}

/**
 * The model a generated answer's raw body names (`response.modelId`): the AI Gateway's provider replaces the result's
 * `response` with the headers and the body as sent, so the model the gateway says answered is only there.
 */
function bodyModel(body: unknown): string | undefined {
  return isRecord(body) && isRecord(body.response) ? nonEmptyString(body.response.modelId) : undefined;
}

/**
 * The model a stream's first or raw event names (a Chat Completions chunk, a Responses `response.created`; an
 * `aisdk()` model's `response-metadata` part).
 */
export function streamedModel(data: unknown): string | undefined {
  if (!isRecord(data)) return undefined;
  if (data.type === 'response-metadata') return nonEmptyString(data.modelId);
  const response = isRecord(data.response) ? data.response : undefined;
  return nonEmptyString(data.model) ?? nonEmptyString(response?.model);
}

/**
 * Why the model stopped, when the provider said it: a Chat Completions
 * response keeps the raw completion in `providerData` (its choice's
 * `finish_reason`), an `aisdk()` model the AI SDK model's result (its
 * `finishReason`, which the model returns also for an answer cut at
 * `length`); a streamed one's chunks or parts said it (`finish_reason`, set
 * by the stream's observer). A `length` or `content_filter` stop is not a
 * `stop`; Responses says only whether it failed, and a failed one throws.
 */
function reportedFinish(response: Loose): string | undefined {
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  return nonEmptyString(response.finish_reason) ?? firstChoiceFinish(provider) ?? (provider === undefined ? undefined : finishReasonOf(provider.finishReason));
}

/** The finish reason a stream's event says: a Chat Completions chunk's, or an `aisdk()` model's `finish` part's. */
export function streamedFinish(event: unknown): string | undefined {
  if (isRecord(event) && event.type === 'finish') return finishReasonOf(event.finishReason);
  return firstChoiceFinish(event);
}

/**
 * What a stream's event says the call was charged: a Chat Completions chunk's usage (OpenRouter's `usage.cost`, on the
 * last chunk), a Responses stream's finishing event's response usage (xAI's `cost_in_usd_ticks`: the SDK's
 * `response_done` keeps only its own `Usage`), or an `aisdk()` model's `finish` part, as the AI SDK provider package
 * hands the charge on.
 */
export function streamedCost(event: unknown): number | undefined {
  if (!isRecord(event)) return undefined;
  if (event.type === 'finish') return chargedCostUsd(event.providerMetadata, event.usage);
  if ((event.type === 'response.completed' || event.type === 'response.incomplete') && isRecord(event.response)) return usageCostUsd(event.response.usage);
  return usageCostUsd(event.usage);
}

/**
 * The tokens a Responses stream's `response.failed` event says the failed response spent: the SDK counts them in
 * `result.state.usage` before it throws, so the failed attempt's step carries them too.
 */
export function streamedFailedUsage(event: unknown): ProviderUsage | undefined {
  if (!isRecord(event) || event.type !== 'response.failed' || !isRecord(event.response) || !isRecord(event.response.usage)) return undefined;
  return { shape: 'openai_responses', usage: event.response.usage };
}

/** The cache writes a stream's Chat Completions chunk states (OpenRouter's, in the usage of the last chunk). */
export function streamedCacheWrites(event: unknown): number | undefined {
  return isRecord(event) ? chatCacheWrites(event.usage) : undefined;
}

/**
 * The upstream a stream's event says serves the call: a Chat Completions chunk's (OpenRouter's `provider`, on every
 * chunk), or an `aisdk()` model's `finish` part's provider metadata.
 */
export function streamedServedBy(event: unknown): string | undefined {
  if (isRecord(event) && event.type === 'finish') return servedByOf(event.providerMetadata);
  return completionServedBy(event);
}

/**
 * The warnings an `aisdk()` model's stream says its provider package gave (its first part, `stream-start`: the
 * settings it did not send), which the non-streamed result keeps in `providerData.warnings`.
 */
export function streamedWarnings(event: unknown): unknown[] | undefined {
  return isRecord(event) && event.type === 'stream-start' && Array.isArray(event.warnings) ? event.warnings : undefined;
}

/** The upstreams an `aisdk()` model's `finish` part says failed before the one serving the call (the AI Gateway's routing). */
export function streamedFailedUpstreams(event: unknown): string[] | undefined {
  return isRecord(event) && event.type === 'finish' ? failedUpstreamsOf(event.providerMetadata) : undefined;
}

/** A Chat Completions completion's or chunk's first choice: the one the SDK's model reads. */
function firstChoice(completion: unknown): Loose | undefined {
  const choices = isRecord(completion) ? completion.choices : undefined;
  return Array.isArray(choices) && isRecord(choices[0]) ? choices[0] : undefined;
}

/** The finish reason of a Chat Completions completion or chunk: its first choice's, when it says one. */
export function firstChoiceFinish(completion: unknown): string | undefined {
  return nonEmptyString(firstChoice(completion)?.finish_reason);
}

/**
 * The reasoning a Chat Completions provider sent as `reasoning_content` (DeepSeek, vLLM and SGLang servers), which the
 * SDK's model makes no reasoning item of: it reads only `reasoning`. Read only where the answer has no reasoning item,
 * so a provider whose `reasoning` the SDK read (OpenRouter; vLLM, which sends both) is not counted twice. Not streamed:
 * the first choice's message of the raw completion the SDK keeps in `providerData`; streamed: what the chunks said
 * (`reasoning_content`, set by the stream's observer).
 */
function leftOutReasoning(response: Loose): string | undefined {
  const message = firstChoice(response.providerData)?.message;
  return nonEmptyString(response.reasoning_content) ?? (isRecord(message) ? nonEmptyString(message.reasoning_content) : undefined);
}

/**
 * What the call was charged, in USD, when the answer says (OpenRouter's `usage.cost`): a Chat Completions response
 * keeps the raw completion in `providerData`, whose usage has it (the SDK's `Usage` does not), an `aisdk()` model the
 * AI SDK model's result, whose provider metadata has it; a streamed one's last chunk or `finish` part said it
 * (`cost_usd`, set by the stream's observer).
 */
function chargedCost(response: Loose): number | undefined {
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  return chargedUsd(response.cost_usd) ?? usageCostUsd(provider?.usage) ?? (provider === undefined ? undefined : chargedCostUsd(provider.providerMetadata, provider.usage));
}

/**
 * The upstream a router says served the call (OpenRouter's `provider`): in the raw completion a Chat Completions
 * response keeps in `providerData`, or a streamed one's chunks (`served_by`, set by the stream's observer).
 */
function servedBy(response: Loose): string | undefined {
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  if (provider === undefined) return nonEmptyString(response.served_by);
  // An `aisdk()` model keeps the AI SDK model's result: its provider metadata, and the body as the server sent it.
  const body = isRecord(provider.response) ? provider.response.body : undefined;
  return nonEmptyString(response.served_by) ?? completionServedBy(provider) ?? servedByOf(provider.providerMetadata, body);
}

/**
 * The upstreams a router says failed before the one that served the call (the AI Gateway's routing): in the provider
 * metadata of the AI SDK model's result an `aisdk()` model keeps, or a streamed one's `finish` part
 * (`failed_upstreams`, set by the stream's observer).
 */
function failedUpstreams(response: Loose): string[] | undefined {
  if (Array.isArray(response.failed_upstreams)) return response.failed_upstreams.filter((name): name is string => typeof name === 'string');
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  return provider === undefined ? undefined : failedUpstreamsOf(provider.providerMetadata);
}

/** A `ModelResponse` (or a streamed `response_done` response) as the trajectory needs it. */
export function responseParts(response: Loose, requestedModel: string | undefined, tools?: unknown): ResponseParts {
  const output = response.output;
  const costUsd = chargedCost(response);
  const upstream = servedBy(response);
  const failed = failedUpstreams(response);
  const toolCalls = functionCalls(output, tools);
  const hosted = Array.isArray(output) ? output.flatMap((item) => (isRecord(item) ? (hostedCallOf(item) ?? containerShellCallOf(item, output, tools) ?? []) : [])) : [];
  return {
    text: outputText(output),
    toolCalls: hosted.length === 0 ? toolCalls : [...hosted, ...toolCalls],
    reasoning: reasoningText(output) ?? leftOutReasoning(response),
    usage: usageOf(response),
    model: reportedModel(response) ?? requestedModel,
    id: nonEmptyString(response.responseId) ?? nonEmptyString(response.id),
    finishReason: reportedFinish(response) ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(upstream === undefined ? {} : { servedBy: upstream }),
    ...(failed === undefined ? {} : { failedUpstreams: failed }),
    ...sentByAiSdk(response),
  };
}

/**
 * What an `aisdk()` model's provider package says it sent, the same rule as the AI SDK adapter's; nothing for another
 * model. Not streamed: the AI SDK model's result it keeps in `providerData` (the body it built, its warnings).
 * Streamed: the warnings of the stream's first part (`warnings`, set by the stream's observer); `aisdk()` hands on no
 * body of a stream (it keeps only `doStream`'s `stream`), so a setting sent with another value is not known then.
 */
function sentByAiSdk(response: Loose): { sent?: SentRequest } {
  const provider = isRecord(response.providerData) ? response.providerData : undefined;
  if (provider !== undefined && Array.isArray(provider.warnings)) return { sent: sentRequestOf(provider as { request?: { body?: unknown }; warnings?: unknown }) };
  return Array.isArray(response.warnings) ? { sent: sentRequestOf({ warnings: response.warnings }) } : {};
}

/** The last user message of a run's input, and the messages before it. */
export function userTurn(input: unknown): { message: string | readonly unknown[] | undefined; history: ChatMessage[] } {
  const messages = chatMessages(undefined, input);
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    const content = message.content;
    return { message: typeof content === 'string' || Array.isArray(content) ? (content as string | readonly unknown[]) : undefined, history: messages.slice(0, i) };
  }
  return { message: undefined, history: messages };
}

function guardrailRecord(result: unknown, fallbackKind: 'input' | 'output'): GuardrailRecord | undefined {
  if (!isRecord(result)) return undefined;
  const guardrail = isRecord(result.guardrail) ? result.guardrail : {};
  const output = isRecord(result.output) ? result.output : {};
  const kind = guardrail.type === 'input' || guardrail.type === 'output' ? guardrail.type : fallbackKind;
  return { kind, name: nonEmptyString(guardrail.name) ?? 'guardrail', tripwire_triggered: output.tripwireTriggered === true, output_info: toJson(output.outputInfo ?? null) };
}

/** Every input and output guardrail verdict a run (or its error) holds, each once. */
export function guardrailRecords(sources: ReadonlyArray<{ results: unknown; kind: 'input' | 'output' }>): GuardrailRecord[] {
  const seen = new Set<unknown>();
  const records: GuardrailRecord[] = [];
  for (const { results, kind } of sources) {
    const list = Array.isArray(results) ? results : results === undefined ? [] : [results];
    for (const result of list) {
      if (seen.has(result)) continue;
      seen.add(result);
      const record = guardrailRecord(result, kind);
      if (record !== undefined) records.push(record);
    }
  }
  return records;
}

/** A run's final output as the text the turn ends with (structured output as JSON). */
export function finalText(output: unknown): string | undefined {
  if (output === undefined || output === null) return undefined;
  if (typeof output === 'string') return output;
  try {
    return JSON.stringify(toJson(output));
  } catch {
    return undefined;
  }
}
