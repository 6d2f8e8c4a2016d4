/**
 * AI SDK prompt and content parts → the chat shapes the plugin reads.
 *
 * @module
 */

import type { ResponseParts } from '../core/run.ts';
import { completionServedBy, gatewayFailedUpstreams, gatewayServedBy } from '../core/upstream.ts';
import { chargedUsd, usageCostUsd, xaiTicksUsd, type ProviderUsage } from '../../formats/usage.ts';
import type { AnswerMedium, CallOfTool, ChatMessage, OfferedTool } from '../core/shapes.ts';
import { answerMessage, changedArgs, geminiGroundingCalls, hostedCall, laterHostedResult, newProviderApprovalAnswers, providerApprovalCall, textOfParts, recordedText, recordedValue, type ProviderApprovalAnswer } from '../core/shapes.ts';
import { isRecord } from '../../shared/record.ts';
import { asString, nonEmptyString } from '../../shared/text.ts';

type Part = Record<string, unknown>;


/** `instructions` (a string, a system message or a list of them) and `messages` as chat messages. */
export function chatMessages(instructions: unknown, messages: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const system of Array.isArray(instructions) ? instructions : instructions === undefined ? [] : [instructions]) {
    const content = typeof system === 'string' ? system : isRecord(system) ? asString(system.content) : undefined;
    if (content !== undefined && content !== '') out.push({ role: 'system', content });
  }
  if (!Array.isArray(messages)) return out;
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const role = asString(message.role);
    const content = message.content;
    if (role === 'assistant' && Array.isArray(content)) {
      // Read as a response is: the reasoning it sends back (thinking with its signature) is the message's, as recorded then.
      out.push(answerMessage(responseOfContent(content)));
    } else if (role === 'tool' && Array.isArray(content)) {
      for (const part of content) {
        if (!isRecord(part) || part.type !== 'tool-result') continue;
        out.push({ role: 'tool', tool_call_id: asString(part.toolCallId) ?? '', content: toolOutputText(part.output) });
      }
    } else if (role !== undefined) {
      const text = Array.isArray(content) ? textOfParts(content) : undefined;
      out.push({ role, content: typeof content === 'string' ? content : (text ?? recordedValue(content)) });
    }
  }
  return out;
}

/**
 * A tool result's `output` (`{type:'text'|'json'|'error-text'|..., value}`, what `toModelOutput` returns) as text: a
 * text value as it is, any other value (a `json` value, a `content` list of parts) as its JSON, the text Chat
 * Completions sends (the Responses API and Anthropic send a `content` list as parts of their own).
 */
export function toolOutputText(output: unknown): string {
  if (!isRecord(output)) return typeof output === 'string' ? output : recordedText(output);
  const value = output.value;
  if (typeof value === 'string') return value;
  // A tool's `content` output may carry media (`{type: 'media', data, mediaType}`).
  return recordedText(value);
}

/**
 * A `file` part a model answered with (Gemini's generated images), as a medium: the SDK's (`{type: 'file', file}`, a
 * `GeneratedFile` whose `base64` it already holds for a provider that sends base64), the provider package's (`{type:
 * 'file', mediaType, data: {type: 'data', data} | {type: 'url', url}}`, in a middleware), or an assistant message's in
 * a later prompt (`{type: 'file', data, mediaType, filename}`, its data base64, bytes or a `URL`).
 */
export function answerMediumOfPart(part: Part): AnswerMedium | undefined {
  if (part.type !== 'file') return undefined;
  if (isRecord(part.file)) return { mediaType: asString(part.file.mediaType), data: typeof part.file.base64 === 'string' ? part.file.base64 : undefined };
  const medium = { mediaType: asString(part.mediaType), filename: asString(part.filename) };
  const data = part.data;
  if (data instanceof URL) return { ...medium, url: data.href };
  if (isRecord(data) && data.type === 'url') return { ...medium, url: String(data.url) };
  return { ...medium, data: isRecord(data) && data.type === 'data' ? data.data : data };
}

/** Text, reasoning, tool calls and media of a content-part array (a model response or an assistant message). */
export function responseOfContent(content: readonly unknown[], deferred: ReadonlySet<string> = NO_DEFERRED_TOOLS): { text: string; reasoning: string; toolCalls: CallOfTool[]; media: AnswerMedium[] } {
  let text = '';
  let reasoning = '';
  const toolCalls: CallOfTool[] = [];
  const media: AnswerMedium[] = [];
  const asked = providerApprovalIds(content);
  for (const part of content as readonly Part[]) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part.type === 'reasoning' && typeof part.text === 'string') reasoning += part.text;
    else if (part.type === 'tool-call') {
      const call = { id: asString(part.toolCallId) ?? '', name: asString(part.toolName) ?? 'tool', arguments: part.input ?? part.args };
      toolCalls.push(part.providerExecuted === true ? providerCall(call, providerResultOf(content, call.id), asked.get(call.id), deferred.has(call.name) && !hasResult(content, call.id)) : call);
    } else if (laterProviderResult(content, part)) {
      toolCalls.push(laterHostedResult(part.toolCallId as string, asString(part.toolName) ?? 'tool', part.type === 'tool-error' ? { error: part.error } : toolOutputValue(part.output ?? part.result)));
    } else {
      const medium = answerMediumOfPart(part);
      if (medium !== undefined) media.push(medium);
    }
  }
  return { text, reasoning, toolCalls, media };
}

/** No provider tool whose result may come later: the common case, shared rather than made per call. */
export const NO_DEFERRED_TOOLS: ReadonlySet<string> = new Set();

/**
 * The provider tools whose packages mark them `supportsDeferredResults` (their result may come in a later response than
 * their call), by the id the package gives them: @ai-sdk/openai's programmatic tool calling. The prepared tools a
 * model call gets do not carry the mark; their ids do.
 */
const DEFERRED_RESULT_TOOL_IDS = new Set(['openai.programmatic_tool_calling']);

/** The names a model call's prepared tools (`{type: 'provider', id, name}`) give the provider tools whose results may come later. */
export function deferredResultTools(tools: unknown): ReadonlySet<string> {
  if (!Array.isArray(tools)) return NO_DEFERRED_TOOLS;
  let names: Set<string> | undefined;
  for (const tool of tools) if (isRecord(tool) && tool.type === 'provider' && typeof tool.id === 'string' && DEFERRED_RESULT_TOOL_IDS.has(tool.id) && typeof tool.name === 'string') (names ??= new Set()).add(tool.name);
  return names ?? NO_DEFERRED_TOOLS;
}

/**
 * A provider's result whose call is not in `content`: the result of a call an earlier response made, which the
 * package deferred to this one (OpenAI's programmatic tool calling's `program_output`, `supportsDeferredResults`).
 */
export function laterProviderResult(content: readonly unknown[], part: Part): boolean {
  // A provider package's own content does not mark its results (a model's content holds only its provider's); the SDK's does.
  if ((part.type !== 'tool-result' && part.type !== 'tool-error') || part.providerExecuted === false || typeof part.toolCallId !== 'string') return false;
  return !content.some((other) => isRecord(other) && other.type === 'tool-call' && other.toolCallId === part.toolCallId);
}

/**
 * The approval ids of the calls in `content` the provider asks the program to approve (OpenAI's hosted MCP under
 * `requireApproval`), by the SDK's id for the call: the OpenAI package makes a provider-executed `tool-call` of the
 * `mcp_approval_request` under an id of its own, and a `tool-approval-request` whose `approvalId` is the request's.
 */
function providerApprovalIds(content: readonly unknown[]): Map<string, string> {
  const executed = new Set<string>();
  for (const part of content) if (isRecord(part) && part.type === 'tool-call' && part.providerExecuted === true && typeof part.toolCallId === 'string') executed.add(part.toolCallId);
  const ids = new Map<string, string>();
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'tool-approval-request') continue;
    const toolCallId = asString(isRecord(part.toolCall) ? part.toolCall.toolCallId : undefined) ?? asString(part.toolCallId);
    const approvalId = asString(part.approvalId);
    if (toolCallId !== undefined && approvalId !== undefined && executed.has(toolCallId)) ids.set(toolCallId, approvalId);
  }
  return ids;
}

/**
 * The answers to the provider's approval requests (OpenAI's hosted MCP) a model call's prompt carries for the first
 * time, for a middleware that sees only prompts: the `tool-approval-response` parts after the last assistant message
 * (the SDK puts only the provider's in a prompt).
 */
export function providerApprovalAnswersOfPrompt(prompt: unknown): ProviderApprovalAnswer[] {
  if (!Array.isArray(prompt)) return [];
  const items: unknown[] = [];
  for (const message of prompt) {
    if (!isRecord(message) || !Array.isArray(message.content)) continue;
    if (message.role === 'assistant') items.push(message);
    else if (message.role === 'tool') {
      for (const part of message.content) {
        if (isRecord(part) && part.type === 'tool-approval-response') items.push({ type: 'mcp_approval_response', approval_request_id: part.approvalId, approve: part.approved, reason: part.reason });
      }
    }
  }
  return newProviderApprovalAnswers(items, (item) => isRecord(item) && item.role === 'assistant');
}

/** The server's tool a hosted MCP call names: the OpenAI package calls it `mcp.<name>`. */
function serverToolName(name: string): string {
  return name.startsWith('mcp.') && name.length > 4 ? name.slice(4) : name;
}

/**
 * A call the provider ran (`providerExecuted`), with the result it returned in the same response; or, when a
 * `tool-approval-request` names it (`approvalId`), the call the provider asks the program to approve first, which ran
 * nothing yet. `pending`: a call of a provider tool whose results may come in a later response
 * ({@link deferredResultTools}) with no result in its own.
 */
export function providerCall(call: CallOfTool, result: unknown, approvalId?: string, pending = false): CallOfTool {
  if (approvalId !== undefined) return providerApprovalCall(approvalId, serverToolName(call.name), call.arguments);
  const hosted = hostedCall(call.id, call.name, call.arguments, result);
  return pending ? { ...hosted, providerResultPending: true } : hosted;
}

/** `content` holds a result (or a provider's error) of the call `id`. */
function hasResult(content: readonly unknown[], id: string): boolean {
  return content.some((part) => isRecord(part) && part.toolCallId === id && (part.type === 'tool-result' || part.type === 'tool-error'));
}

/**
 * The result the provider returned for its own call `id`: the `tool-result` part beside the call, its `output` as
 * the provider package made it (in a conversation's assistant message, the `{type, value}` the SDK wrapped it in).
 */
function providerResultOf(content: readonly unknown[], id: string): unknown {
  for (const part of content) {
    if (!isRecord(part) || part.toolCallId !== id) continue;
    if (part.type === 'tool-result') return toolOutputValue(part.output ?? part.result);
    // A result the provider marked as an error (a fetch it could not make) is handed on as a `tool-error` part.
    if (part.type === 'tool-error' && part.providerExecuted === true) return part.error;
  }
  return undefined;
}

const WRAPPED_OUTPUTS = new Set(['json', 'text', 'content', 'error-json', 'error-text']);

/**
 * A `tool-result`'s output as the tool or provider gave it: a prompt's tool output is wrapped as `{type: 'json' |
 * 'text' | 'content' | 'error-json' | 'error-text', value}`, a provider result in a response may not be.
 */
export function toolOutputValue(output: unknown): unknown {
  return isRecord(output) && WRAPPED_OUTPUTS.has(output.type as string) && 'value' in output ? output.value : output;
}

/** Prepared tool definitions (`{type:'function', name, description, inputSchema}`). */
export function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  const out: OfferedTool[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || typeof tool.name !== 'string') continue;
    out.push({ name: tool.name, description: asString(tool.description), parameters: tool.inputSchema ?? tool.parameters });
  }
  return out;
}

/**
 * The tool choice a step asked for (`toolChoice`, as the program or its `prepareStep` wrote it), in the spelling
 * every adapter writes requests in, Chat Completions': `'auto' | 'none' | 'required'`, or a named tool as
 * `{type: 'function', function: {name}}`. `undefined` when the step left it to the provider's default.
 */
export function toolChoiceOf(choice: unknown): unknown {
  const type = typeof choice === 'string' ? choice : isRecord(choice) ? choice.type : undefined;
  if (type === 'auto' || type === 'none' || type === 'required') return type;
  const name = type === 'tool' && isRecord(choice) ? nonEmptyString(choice.toolName) : undefined;
  return name === undefined ? undefined : { type: 'function', function: { name } };
}

/** `LanguageModelUsage` (counts flat, details nested) or a provider `usage` (`{inputTokens:{total, cacheRead}}`), tagged for the token table. */
export function tokenCounts(usage: unknown): ProviderUsage | undefined {
  return isRecord(usage) ? { shape: 'ai_sdk', usage } : undefined;
}


/**
 * A finish reason as the SDK gives it to telemetry (a string) or a provider
 * result carries it (`{ unified, raw }`): the unified one, which the core
 * spells as every adapter does, except `other`, which says less than the
 * provider's own word.
 */
export function finishReasonOf(finish: unknown): string | undefined {
  if (typeof finish === 'string') return finish;
  if (!isRecord(finish)) return undefined;
  const unified = nonEmptyString(finish.unified);
  return unified === 'other' ? (nonEmptyString(finish.raw) ?? unified) : unified;
}

/**
 * The model a Gemini answer says answered (`modelVersion`), from the raw body
 * or chunk @ai-sdk/google hands on without reading it (its response's
 * `modelId` is the model asked for).
 */
export function modelVersionOf(raw: unknown): string | undefined {
  return isRecord(raw) ? nonEmptyString(raw.modelVersion) : undefined;
}

/**
 * What a call was charged, in USD, as the provider package hands it on: the AI Gateway's
 * `providerMetadata.gateway.cost` (a decimal string), @openrouter/ai-sdk-provider's
 * `providerMetadata.openrouter.usage.cost`, @ai-sdk/xai's `providerMetadata.xai.costInUsdTicks` (xAI's
 * `cost_in_usd_ticks`), else the usage as the server sent it (`usage.raw`), where @ai-sdk/openai-compatible keeps
 * OpenRouter's `cost` without reading it. A provider that states no charge says no cost.
 */
export function chargedCostUsd(providerMetadata: unknown, usage: unknown): number | undefined {
  const { gateway, openrouter, xai } = isRecord(providerMetadata) ? providerMetadata : {};
  return (
    (isRecord(gateway) ? chargedUsd(gateway.cost) : undefined) ??
    (isRecord(openrouter) ? usageCostUsd(openrouter.usage) : undefined) ??
    (isRecord(xai) ? xaiTicksUsd(xai.costInUsdTicks) : undefined) ??
    (isRecord(usage) ? usageCostUsd(usage.raw) : undefined)
  );
}

/**
 * The upstream a router says served the call, as the provider package hands it on: the AI Gateway's
 * `providerMetadata.gateway.routing` (its final provider), @openrouter/ai-sdk-provider's
 * `providerMetadata.openrouter.provider`, else the response body as the server sent it (`body`, which
 * @ai-sdk/openai-compatible keeps for a `doGenerate` result only), where OpenRouter names it `provider`.
 */
export function servedByOf(providerMetadata: unknown, body?: unknown): string | undefined {
  const { gateway, openrouter } = isRecord(providerMetadata) ? providerMetadata : {};
  return (isRecord(gateway) ? gatewayServedBy(gateway.routing) : undefined) ?? (isRecord(openrouter) ? nonEmptyString(openrouter.provider) : undefined) ?? completionServedBy(body);
}

/**
 * The searches and page reads Gemini ran for the answer, which @ai-sdk/google reports only as metadata
 * (`providerMetadata.google.groundingMetadata` and `urlContextMetadata`) and `source` parts: calls the provider ran,
 * before the answer's other calls, named by the response's id (`geminiGroundingCalls`).
 */
export function groundingCallsOf(providerMetadata: unknown, responseId: unknown): CallOfTool[] {
  const google = isRecord(providerMetadata) && isRecord(providerMetadata.google) ? providerMetadata.google : undefined;
  if (google === undefined) return [];
  const prefix = nonEmptyString(responseId) ?? 'gemini';
  return geminiGroundingCalls(google, (name) => `${prefix}:${name}`);
}

/** The upstreams the AI Gateway's routing says failed before the one that answered (`providerMetadata.gateway.routing`). */
export function failedUpstreamsOf(providerMetadata: unknown): string[] | undefined {
  const gateway = isRecord(providerMetadata) ? providerMetadata.gateway : undefined;
  return isRecord(gateway) ? gatewayFailedUpstreams(gateway.routing) : undefined;
}

/** A model response from its content parts and what came with them. */
export function responseOf(content: unknown, details: { usage: unknown; finishReason: unknown; model: unknown; id: unknown; providerMetadata?: unknown; body?: unknown }, deferred: ReadonlySet<string> = NO_DEFERRED_TOOLS): ResponseParts {
  const parts = responseOfContent(Array.isArray(content) ? content : [], deferred);
  const costUsd = chargedCostUsd(details.providerMetadata, details.usage);
  const servedBy = servedByOf(details.providerMetadata, details.body);
  const failedUpstreams = failedUpstreamsOf(details.providerMetadata);
  return {
    text: parts.text,
    reasoning: parts.reasoning === '' ? undefined : parts.reasoning,
    toolCalls: [...groundingCallsOf(details.providerMetadata, details.id), ...parts.toolCalls],
    ...(parts.media.length > 0 ? { media: parts.media } : {}),
    usage: tokenCounts(details.usage),
    finishReason: finishReasonOf(details.finishReason),
    model: nonEmptyString(details.model),
    id: nonEmptyString(details.id),
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(servedBy === undefined ? {} : { servedBy }),
    ...(failedUpstreams === undefined ? {} : { failedUpstreams }),
  };
}

/** A tool call as the model sent it: the name it asked for and its input, before the SDK parsed or repaired them. */
export interface SentCall {
  readonly name: string | undefined;
  readonly input: unknown;
}

/**
 * `onLanguageModelCallEnd`'s event as a response. Its tool calls carry the tool and input the SDK will run them with,
 * parsed, and repaired (`experimental_repairToolCall`) or refined (`experimental_refineToolInput`) when the program
 * asked: `sent` (each call as the model sent it, by call id) puts the model's name and input back, and the others as
 * `changedName` and `changedArgs`. A repair that renames the call (a `NoSuchToolError`'s) would otherwise be recorded
 * as a call of a tool the model never named.
 */
export function responseOfCallEnd(event: Record<string, unknown>, sent?: ReadonlyMap<string, SentCall>, deferred: ReadonlySet<string> = NO_DEFERRED_TOOLS): ResponseParts {
  const response = responseOf(event.content, { usage: event.usage, finishReason: event.finishReason, model: event.modelId, id: event.responseId, providerMetadata: event.providerMetadata }, deferred);
  if (sent === undefined || sent.size === 0) return response;
  const toolCalls = response.toolCalls.map((call) => {
    const asked = call.providerExecuted === true ? undefined : sent.get(call.id);
    if (asked === undefined) return call;
    const changed = changedArgs(asked.input, call.arguments);
    const renamed = asked.name !== undefined && asked.name !== call.name ? call.name : undefined;
    if (changed === undefined && renamed === undefined) return call;
    return { ...call, name: asked.name ?? call.name, arguments: asked.input, ...(changed === undefined ? {} : { changedArgs: changed }), ...(renamed === undefined ? {} : { changedName: renamed }) };
  });
  return { ...response, toolCalls };
}

/**
 * A model's tool call as the provider package gives it (a `tool-call` part of `doGenerate`'s content or `doStream`'s
 * stream), noted in `sent` by id: its name, and its input as the model's JSON text, before the SDK parses it. An
 * empty one is the SDK's `{}`.
 */
export function noteSentCall(sent: Map<string, SentCall>, part: unknown): void {
  if (!isRecord(part) || part.type !== 'tool-call' || part.providerExecuted === true || typeof part.toolCallId !== 'string') return;
  const input = part.input;
  sent.set(part.toolCallId, { name: asString(part.toolName), input: typeof input === 'string' && input.trim() === '' ? '{}' : input });
}

/** `onObjectStepEnd`'s event (`generateObject`/`streamObject`) as a response: the object's JSON text is the message. */
export function responseOfObjectStep(event: Record<string, unknown>): ResponseParts {
  const response = isRecord(event.response) ? event.response : {};
  const reasoning = typeof event.reasoning === 'string' ? event.reasoning : Array.isArray(event.reasoning) ? responseOfContent(event.reasoning).reasoning : '';
  // The same router facts as a text call's: what the call was charged and who served it.
  const costUsd = chargedCostUsd(event.providerMetadata, event.usage);
  const servedBy = servedByOf(event.providerMetadata);
  const failedUpstreams = failedUpstreamsOf(event.providerMetadata);
  return {
    text: asString(event.objectText) ?? '',
    reasoning: reasoning === '' ? undefined : reasoning,
    toolCalls: [],
    usage: tokenCounts(event.usage),
    finishReason: asString(event.finishReason),
    model: asString(response.modelId) ?? asString(event.modelId),
    id: asString(response.id),
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(servedBy === undefined ? {} : { servedBy }),
    ...(failedUpstreams === undefined ? {} : { failedUpstreams }),
  };
}

/** A `needsApproval` request as a step's content shows it. */
export interface ApprovalRequest {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly reason: string | undefined;
  /** Decided by the call's `toolApproval` policy in the same step, not by a person. */
  readonly automatic: boolean;
  /** The provider asks (OpenAI's hosted MCP): `toolCallId` is the approval id, the call's id in the trajectory. */
  readonly provider?: boolean;
}

/** The answer to an approval request. */
export interface ApprovalAnswer {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly approved: boolean;
  readonly reason: string | undefined;
  /** The tool call the request was for, when the messages still hold it. */
  readonly toolName?: string;
  readonly input?: unknown;
  /** The provider asked (OpenAI's hosted MCP): `toolCallId` is the approval id, the call's id in the trajectory. */
  readonly provider?: boolean;
}

/** Approval requests in a step's content (`tool-approval-request` parts). */
export function approvalRequests(content: unknown): ApprovalRequest[] {
  if (!Array.isArray(content)) return [];
  const out: ApprovalRequest[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'tool-approval-request') continue;
    const call = isRecord(part.toolCall) ? part.toolCall : {};
    const approvalId = asString(part.approvalId);
    const toolCallId = asString(call.toolCallId) ?? asString(part.toolCallId);
    if (approvalId === undefined || toolCallId === undefined) continue;
    if (call.providerExecuted === true) {
      out.push({ approvalId, toolCallId: approvalId, toolName: serverToolName(asString(call.toolName) ?? 'tool'), input: call.input, reason: asString(part.reason), automatic: part.isAutomatic === true, provider: true });
      continue;
    }
    out.push({ approvalId, toolCallId, toolName: asString(call.toolName) ?? 'tool', input: call.input, reason: asString(part.reason), automatic: part.isAutomatic === true });
  }
  return out;
}

/** Decisions a `toolApproval` policy made within a step (`tool-approval-response` parts of its content). */
export function approvalDecisions(content: unknown): ApprovalAnswer[] {
  if (!Array.isArray(content)) return [];
  const out: ApprovalAnswer[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'tool-approval-response') continue;
    const call = isRecord(part.toolCall) ? part.toolCall : {};
    const approvalId = asString(part.approvalId);
    const toolCallId = asString(call.toolCallId);
    if (approvalId === undefined || toolCallId === undefined) continue;
    out.push({ approvalId, toolCallId, approved: part.approved === true, reason: asString(part.reason), toolName: asString(call.toolName), input: call.input });
  }
  return out;
}

/**
 * The answers a run starts from: the `tool-approval-response` parts of the
 * last message when it is a tool message (the answers the SDK acts on),
 * joined to their requests and tool calls in the earlier assistant messages.
 * An approved call whose result is already there was answered before, and
 * so was a call a `toolApproval` policy decided (its request is automatic).
 */
export function approvalAnswers(messages: unknown): ApprovalAnswer[] {
  if (!Array.isArray(messages) || messages.length === 0) return [];
  const last = messages[messages.length - 1];
  if (!isRecord(last) || last.role !== 'tool' || !Array.isArray(last.content)) return [];
  const responses = last.content.filter((part): part is Part => isRecord(part) && part.type === 'tool-approval-response');
  if (responses.length === 0) return [];
  const requests = new Map<string, string>();
  const automatic = new Set<string>();
  const calls = new Map<string, Part>();
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isRecord(part)) continue;
      if (part.type === 'tool-approval-request' && typeof part.approvalId === 'string' && typeof part.toolCallId === 'string') {
        requests.set(part.approvalId, part.toolCallId);
        if (part.isAutomatic === true) automatic.add(part.approvalId);
      } else if (part.type === 'tool-call' && typeof part.toolCallId === 'string') calls.set(part.toolCallId, part);
    }
  }
  const answered = new Set<string>();
  for (const part of last.content) if (isRecord(part) && part.type === 'tool-result' && typeof part.toolCallId === 'string') answered.add(part.toolCallId);
  const out: ApprovalAnswer[] = [];
  for (const response of responses) {
    const approvalId = asString(response.approvalId);
    const toolCallId = approvalId === undefined ? undefined : requests.get(approvalId);
    // A policy's decision (an automatic request) was recorded in the step that made it; the tool message the SDK
    // returned carries it, and a program may add its person's answers to that same message.
    if (approvalId === undefined || toolCallId === undefined || automatic.has(approvalId)) continue;
    const approved = response.approved === true;
    if (approved && answered.has(toolCallId)) continue;
    const call = calls.get(toolCallId);
    if (call?.providerExecuted === true) {
      out.push({ approvalId, toolCallId: approvalId, approved, reason: asString(response.reason), toolName: serverToolName(asString(call.toolName) ?? 'tool'), input: call.input, provider: true });
      continue;
    }
    out.push({ approvalId, toolCallId, approved, reason: asString(response.reason), toolName: asString(call?.toolName), input: call?.input });
  }
  return out;
}

/** A tool call a step left for the program to answer: its tool has no `execute` (a client-side tool of a chat). */
export interface UnansweredCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/**
 * Tool calls of a step's content that nothing in the step answered: no
 * result, error, denial or approval request names them, and the provider did
 * not run them. The SDK stops the run there; the program answers them (a
 * chat client's `addToolOutput`) and sends the conversation again.
 */
export function unansweredCalls(content: unknown): UnansweredCall[] {
  if (!Array.isArray(content)) return [];
  const answered = new Set<string>();
  for (const part of content) {
    if (!isRecord(part) || part.type === 'tool-call') continue;
    const id = asString(part.toolCallId) ?? (isRecord(part.toolCall) ? asString(part.toolCall.toolCallId) : undefined);
    if (id !== undefined) answered.add(id);
  }
  const out: UnansweredCall[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'tool-call' || part.providerExecuted === true) continue;
    const id = asString(part.toolCallId);
    if (id === undefined || answered.has(id)) continue;
    out.push({ toolCallId: id, toolName: asString(part.toolName) ?? 'tool', input: part.input });
  }
  return out;
}

/** A call the SDK refused without running it: the model's call, the SDK's error and the text the model is given. */
export interface RefusedCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly error: unknown;
  readonly text: string;
}

/**
 * The text the SDK tells the model of a tool call that failed (its tool message's `error-text`, @ai-sdk/provider's
 * `getErrorMessage`): a string as it is, an Error as `toString()` (`Error: <message>`, whatever its class), anything
 * else as its JSON, nothing as `unknown error`.
 */
export function toldToolError(error: unknown): string {
  if (error === undefined || error === null) return 'unknown error';
  if (typeof error === 'string') return error;
  if (error instanceof Error) return error.toString();
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * The step's calls the SDK refused (`NoSuchToolError`, `InvalidToolInputError`, a repair that gave up): a `tool-call`
 * part marked `invalid`, answered in the same step by the `tool-error` the model is sent. The tool never runs, so no
 * tool execution event reports them.
 */
export function refusedCalls(content: unknown): RefusedCall[] {
  if (!Array.isArray(content)) return [];
  const errors = new Map<string, unknown>();
  for (const part of content) {
    if (isRecord(part) && part.type === 'tool-error' && part.providerExecuted !== true) {
      const id = asString(part.toolCallId);
      if (id !== undefined) errors.set(id, part.error);
    }
  }
  const out: RefusedCall[] = [];
  for (const part of content) {
    if (!isRecord(part) || part.type !== 'tool-call' || part.invalid !== true || part.providerExecuted === true) continue;
    const id = asString(part.toolCallId);
    if (id === undefined || !errors.has(id)) continue;
    const said = errors.get(id);
    out.push({ toolCallId: id, toolName: asString(part.toolName) ?? 'tool', input: part.input, error: part.error ?? said, text: toldToolError(said) });
  }
  return out;
}

/** A program's answer to a tool call, as a tool message carries it (`tool-result` parts). */
export interface ProgramToolResult {
  readonly toolCallId: string;
  /** `ok`: the output; `error`: the error text the program gave (`error-text`/`error-json`); `denied`: `execution-denied`. */
  readonly outcome: 'ok' | 'error' | 'denied';
  readonly output: unknown;
}

/** Every `tool-result` part of the tool messages, by call id (the last one of an id wins). */
export function toolResults(messages: unknown): Map<string, ProgramToolResult> {
  const out = new Map<string, ProgramToolResult>();
  if (!Array.isArray(messages)) return out;
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isRecord(part) || part.type !== 'tool-result') continue;
      const toolCallId = asString(part.toolCallId);
      if (toolCallId === undefined) continue;
      const output = part.output;
      const type = isRecord(output) ? asString(output.type) : undefined;
      const outcome = type === 'error-text' || type === 'error-json' ? 'error' : type === 'execution-denied' ? 'denied' : 'ok';
      const value = outcome === 'denied' ? (isRecord(output) ? asString(output.reason) : undefined) : toolOutputValue(output);
      out.set(toolCallId, { toolCallId, outcome, output: value });
    }
  }
  return out;
}
