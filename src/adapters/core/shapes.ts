/**
 * The payload shapes the plugin and its ATIF builder read best, built from
 * plain values each adapter extracts from its framework: OpenAI chat
 * messages and tool definitions for requests, and for responses an
 * `assistant_message` with `tool_calls` plus the usage in the shape the
 * provider's own API states it (`recordedUsage`: OpenAI's `prompt_tokens`,
 * `completion_tokens`, `prompt_tokens_details.cached_tokens`; Anthropic's
 * Messages counts for a call to Anthropic). One shape for every framework
 * means the builder needs no per-framework reader.
 *
 * @module
 */

import { jsonEqual, jsonIfReadable, MEDIA_LEFT_OUT, toJson, type Json } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { argumentsObject } from '../../shared/tool-arguments.ts';

/** Arguments as an object, for `pre_tool_call.args` (the plugin applies the same rule to a host's own hooks). */
export { argumentsObject };

/** A chat message in OpenAI chat-completions form. */
export type ChatMessage = Record<string, unknown>;

/** A tool call as the adapters collect it: the provider's id, the tool name, the arguments (a JSON string or a value). */
export interface CallOfTool {
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
  /**
   * The provider ran the call inside the model call that made it (a hosted tool: OpenAI's web search, Anthropic's
   * server tools); the program ran nothing, so no tool span is recorded for it.
   */
  readonly providerExecuted?: boolean;
  /** What the provider returned for a call it ran, as it returned it. */
  readonly providerResult?: unknown;
  /** How a call the provider ran failed, as the provider said it (an MCP server's error, Anthropic's `error_code`). */
  readonly providerError?: string;
  /** The input the call ran with instead of the model's `arguments` (the framework repaired or refined them): {@link changedArgs}. */
  readonly changedArgs?: Record<string, unknown>;
  /** The tool the call ran as instead of the model's `name` (a repair renamed it: the model asked for a tool it was not given). */
  readonly changedName?: string;
  /**
   * The provider asks the program to approve the call before it runs it (OpenAI's `mcp_approval_request`; the id is
   * the request's): nothing ran in this model call, and the program answers in the next request
   * ({@link providerApprovalCall}).
   */
  readonly providerApproval?: boolean;
  /** The approval request a call the provider ran after the program approved it answers (an `mcp_call`'s `approval_request_id`). */
  readonly approvalRequestId?: string;
  /**
   * Not a call of this response: the result of a call the provider ran that an earlier response made, arriving apart
   * from it ({@link laterHostedResult}).
   */
  readonly providerResultLater?: boolean;
  /**
   * A call the provider runs whose result comes in a later response (OpenAI's programmatic tool calling: its program
   * waits on the program's function calls): the core opens its tool call and ends it with that result.
   */
  readonly providerResultPending?: boolean;
}

/** A tool the model was offered. */
export interface OfferedTool {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: unknown;
}

/** Arguments as the JSON string OpenAI tool calls carry. */
function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(toJson(args ?? {}));
  } catch {
    return '{}';
  }
}

/** What an approval says, when nobody gave a reason, of a decision that runs the call with other input than the model's. */
export const CHANGED_INPUT = 'allowed with changed input';

/**
 * The input a decision (Claude's `updatedInput`, LangChain's `editedAction.args`) runs a call with, when it is not what
 * the model asked (`asked`, an object or its JSON text): the decision's object, unless it equals the model's as JSON.
 * `undefined`: the call runs as asked, or the decision gave no input of its own.
 */
export function changedArgs(asked: unknown, given: unknown): Record<string, unknown> | undefined {
  if (!isRecord(given)) return undefined;
  return jsonEqual(given, argumentsObject(asked)) ? undefined : given;
}

/** An `AbortSignal` (a run's, a tool call's, a request's), told by its shape: signals cross realms and polyfills. */
export function isAbortSignal(value: unknown): value is AbortSignal {
  return typeof value === 'object' && value !== null && typeof (value as AbortSignal).addEventListener === 'function' && typeof (value as AbortSignal).aborted === 'boolean';
}

/** `value` is an `AbortSignal` that has fired. */
export function isAbortedSignal(value: unknown): value is AbortSignal {
  return isAbortSignal(value) && value.aborted;
}

/**
 * Why a signal fired, as the error the request it cut short failed with: an AbortError (or the TimeoutError of
 * `AbortSignal.timeout`) as it is, so a stop reads the same whichever way the framework reported it; any other reason
 * (`controller.abort('user pressed stop')`) an AbortError that says it.
 */
export function abortErrorOf(reason: unknown, fallback: string): Error {
  // Told by shape, not `instanceof`: a DOMException from another realm or a polyfill is the same abort.
  if (isRecord(reason) && (reason.name === 'AbortError' || reason.name === 'TimeoutError')) return reason as unknown as Error;
  const message = isRecord(reason) && typeof reason.message === 'string' ? reason.message : typeof reason === 'string' && reason !== '' ? reason : fallback;
  return Object.assign(new Error(message), { name: 'AbortError' });
}

/** A value as text: a string as it is, anything else as its JSON (`undefined` when it has none). */
export function textOrJson(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  try {
    return JSON.stringify(toJson(value));
  } catch {
    return undefined;
  }
}

/**
 * A tool call in OpenAI chat form (`function.arguments` as JSON text). A call the provider ran carries
 * `provider_executed: true` and `provider_result` beside it, and a call run with other input than the model's its
 * `changed_args`: the ATIF builder (native's too) keeps a call's other keys as the tool call's `extra`, so the step
 * says what was searched and what came back without a tool span, which would claim a local run with a duration
 * nobody measured, and what a call ran with beside what the model asked.
 */
export function chatToolCall(call: CallOfTool): Record<string, unknown> {
  const out: Record<string, unknown> = { id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText(call.arguments) } };
  if (call.providerExecuted === true) {
    out.provider_executed = true;
    if (call.providerResult !== undefined) out.provider_result = toJson(call.providerResult, MEDIA_LEFT_OUT);
    if (call.providerError !== undefined) out.provider_error = call.providerError;
  }
  // Asked, not run: the step says so, and the call the provider runs once approved names this one.
  if (call.providerApproval === true) out.provider_approval_request = true;
  if (call.approvalRequestId !== undefined) out.approval_request_id = call.approvalRequestId;
  // The name an approval that changed the input gives it (post_approval_response), kept as the call's extra the same way.
  if (call.changedArgs !== undefined) out.changed_args = toJson(call.changedArgs);
  // The same for the tool a repair renamed the call to: the call's own name stays the model's.
  if (call.changedName !== undefined) out.changed_name = call.changedName;
  return out;
}

/**
 * The one media rule (src/shared/blobs.ts), for the payloads the adapters shape. The relay's copy applies it to
 * every payload it records, but the adapters' payloads are what every subscriber of the hooks reads, and media
 * inside JSON text (a tool's output as text) is out of the copy's sight.
 */

/** A framework's value as the adapters record it (a message's parts, a tool's output): its media left out, then copied as plain JSON. */
export function recordedValue(value: unknown): Json {
  return toJson(value, MEDIA_LEFT_OUT);
}

/** {@link recordedValue} as JSON text: a tool output or content that is not text, as the trajectory shows it. */
export function recordedText(value: unknown): string {
  return JSON.stringify(recordedValue(value ?? null));
}

/** The calls of a response the program runs (not the ones its provider ran, nor the ones it asks the program to approve). */
export function localCalls(calls: readonly CallOfTool[]): CallOfTool[] {
  return calls.filter((call) => call.providerExecuted !== true && call.providerApproval !== true);
}

/**
 * A call the provider asks the program to approve before it runs it, the one rule for every framework: OpenAI's
 * `mcp_approval_request` (its `id`, the server's tool `name`, the `arguments`). It is a tool call of the step that
 * asked, under the request's id and the server's tool's name, with `provider_approval_request: true` and no
 * `provider_executed`: nothing ran. The core records the request (`pre_approval_request`) with the response
 * ({@link AgentRun}); the program's answer is a `post_approval_response` of that id; the call the provider runs once
 * approved is a hosted call of the next response whose `approval_request_id` names this one.
 */
export function providerApprovalCall(id: string, name: string, args: unknown): CallOfTool {
  return { id, name, arguments: hostedArguments(args, undefined), providerApproval: true };
}

/**
 * The calls of a response with the approval each answers, where the framework dropped the `approval_request_id` OpenAI
 * sent (the AI SDK's OpenAI package does): a hosted call the provider ran with the name and arguments of a request the
 * program approved (`approved`, the {@link providerApprovalCall}s answered yes and not matched yet; a match is taken out).
 */
export function linkApprovedCalls(calls: readonly CallOfTool[], approved: CallOfTool[]): CallOfTool[] {
  if (approved.length === 0) return [...calls];
  return calls.map((call) => {
    if (call.providerExecuted !== true || call.approvalRequestId !== undefined) return call;
    const index = approved.findIndex((asked) => asked.name === call.name && jsonEqual(argumentsObject(asked.arguments), argumentsObject(call.arguments)));
    if (index < 0) return call;
    const [asked] = approved.splice(index, 1);
    return { ...call, approvalRequestId: asked!.id };
  });
}

/** The program's answer to a provider's approval request, as it went to the provider (`mcp_approval_response`). */
export interface ProviderApprovalAnswer {
  readonly id: string;
  readonly approved: boolean;
  readonly reason?: string;
}

/**
 * The answers to provider approval requests a request carries for the first time: the `mcp_approval_response` items
 * (`approval_request_id`, `approve`, `reason`) after the last item the model produced (`modelItem`). An answer
 * before it was answered in an earlier request, which the history carries again.
 */
export function newProviderApprovalAnswers(items: readonly unknown[], modelItem: (item: unknown) => boolean): ProviderApprovalAnswer[] {
  let from = 0;
  items.forEach((item, index) => {
    if (modelItem(item)) from = index + 1;
  });
  const out: ProviderApprovalAnswer[] = [];
  for (const item of items.slice(from)) {
    if (!isRecord(item) || item.type !== 'mcp_approval_response' || typeof item.approval_request_id !== 'string' || typeof item.approve !== 'boolean') continue;
    out.push({ id: item.approval_request_id, approved: item.approve, ...(typeof item.reason === 'string' && item.reason !== '' ? { reason: item.reason } : {}) });
  }
  return out;
}

/**
 * What the model asked a hosted tool for: the call's input when it has one (Anthropic's `{query}`, `{url}`,
 * `{command}`; the AI SDK's input), else what the provider's item says was asked, wherever the framework left the
 * item (on the call or in the result it made of it): a web search's `action` (its query; the sources it found stay in
 * the result), a file search's `queries`, a code interpreter's `code` and `container_id`, an MCP call's `arguments`,
 * the server an MCP tool list was asked of.
 */
export function hostedArguments(input: unknown, result: unknown): unknown {
  let parsed = input;
  if (typeof parsed === 'string') {
    // Text that is not JSON stays as the model sent it (argumentsObject would wrap it).
    const read = jsonIfReadable(parsed);
    if (read === undefined) return input;
    parsed = read.value;
  }
  if (isRecord(parsed) && Object.keys(parsed).length > 0) return parsed;
  return askedOf(result) ?? parsed ?? {};
}

function askedOf(item: unknown): Record<string, unknown> | undefined {
  if (!isRecord(item)) return undefined;
  if (isRecord(item.action)) {
    const { sources: _found, ...asked } = item.action;
    return asked;
  }
  if (Array.isArray(item.queries)) return { queries: item.queries };
  if (typeof item.code === 'string') return typeof item.container_id === 'string' ? { code: item.code, container_id: item.container_id } : { code: item.code };
  if (typeof item.arguments === 'string') return argumentsObject(item.arguments);
  if (item.type === 'mcp_list_tools' && typeof item.server_label === 'string') return { server_label: item.server_label };
  return undefined;
}

/**
 * How a call the provider ran failed, from its result: an `error` (an MCP call's or tool list's: its message, or
 * the text its server returned), or Anthropic's `*_error` result with its `error_code` (`errorCode` once the AI SDK
 * renamed it). `undefined`: it did not fail, or the result does not say.
 */
function hostedError(result: unknown): string | undefined {
  if (!isRecord(result)) return undefined;
  const error = result.error;
  if (typeof error === 'string' && error !== '') return error;
  if (isRecord(error)) {
    if (typeof error.message === 'string' && error.message !== '') return error.message;
    const text = Array.isArray(error.content) ? textOfParts(error.content) : undefined;
    return text !== undefined && text !== '' ? text : textOrJson(error);
  }
  const code = result.error_code ?? result.errorCode;
  if (typeof result.type === 'string' && result.type.endsWith('_error') && typeof code === 'string') return code;
  // Gemini's URL context: no page of the call's was retrieved (each page's `urlRetrievalStatus`).
  if (Array.isArray(result.urlMetadata) && result.urlMetadata.length > 0 && result.urlMetadata.every((page) => isRecord(page) && typeof page.urlRetrievalStatus === 'string' && page.urlRetrievalStatus !== 'URL_RETRIEVAL_STATUS_SUCCESS')) {
    return result.urlMetadata.map((page) => `${String((page as Record<string, unknown>).retrievedUrl)}: ${String((page as Record<string, unknown>).urlRetrievalStatus)}`).join('; ');
  }
  // Gemini's code execution: an `outcome` other than OUTCOME_OK (a failed run, one past its deadline), its output the traceback.
  if (typeof result.outcome === 'string' && result.outcome.startsWith('OUTCOME_') && result.outcome !== 'OUTCOME_OK') {
    return typeof result.output === 'string' && result.output !== '' ? `${result.outcome}: ${result.output}` : result.outcome;
  }
  if (isProgramOutput(result) && result.status !== 'completed') return result.result !== '' ? `${result.status}: ${result.result}` : result.status;
  return undefined;
}

/**
 * OpenAI's programmatic tool calling: a program's result as every framework hands it on, `{result, status}` (the
 * `program_output` item's two fields, as @ai-sdk/openai's tool output and the Agents SDK's item keep them). Its
 * terminal status is `completed` or `incomplete`: a program that did not complete failed, its result what it got to.
 * Only that exact shape, so a provider's item that happens to carry a `status` (a web search's) is not read as one.
 */
function isProgramOutput(result: Record<string, unknown>): result is { result: string; status: string } {
  const keys = Object.keys(result);
  return keys.length === 2 && typeof result.status === 'string' && typeof result.result === 'string';
}

/**
 * A call the provider ran, the one rule for every framework: `name` as the framework gave it, unless the result is
 * an MCP call's (OpenAI's `mcp_call` item, the AI SDK's `{type: 'call', serverLabel, name}`), which names the server's
 * tool; the arguments asked (`hostedArguments`); the result as returned; how it failed, if it did.
 */
export function hostedCall(id: string, name: string, input: unknown, result: unknown): CallOfTool {
  const mcp = isRecord(result) && (result.type === 'mcp_call' || (result.type === 'call' && typeof result.serverLabel === 'string')) && typeof result.name === 'string';
  const approval = isRecord(result) && typeof result.approval_request_id === 'string' && result.approval_request_id !== '' ? result.approval_request_id : undefined;
  const call: CallOfTool = { id, name: mcp ? (result.name as string) : name, arguments: hostedArguments(input, result), providerExecuted: true, providerResult: result, ...(approval === undefined ? {} : { approvalRequestId: approval }) };
  const error = hostedError(result);
  return error === undefined ? call : { ...call, providerError: error };
}

/**
 * The result of a call the provider ran, arriving in a later response than the call (OpenAI's programmatic tool
 * calling: the model's program is a call of one response, it asks the program for function calls, and its result,
 * `program_output`, comes in the response to their outputs). The one rule for every framework that hands such a result
 * on: the core records it as the outcome of the call the earlier response made (the same id, marked
 * `providerResultPending`), once, rather than as a call of the response that carried it, which made no such call
 * (`AgentRun.providerResultArrived`). How it failed is read as {@link hostedCall} reads it.
 */
export function laterHostedResult(id: string, name: string, result: unknown): CallOfTool {
  return { ...hostedCall(id, name, undefined, result), providerResultLater: true };
}

/** The name a Responses `program` item's call is recorded by: the tool that made it, as the OpenAI Agents SDK names it. */
const PROGRAM = 'programmatic_tool_calling';

/**
 * The Responses output items of tools OpenAI runs, and the name each call is recorded by (`computer_call`,
 * `local_shell_call` and the like are the program's to run; an `mcp_call` is named by the server's tool it called).
 */
const HOSTED_ITEMS = new Map([
  ['web_search_call', 'web_search'],
  ['file_search_call', 'file_search'],
  ['code_interpreter_call', 'code_interpreter'],
  ['image_generation_call', 'image_generation'],
  ['mcp_list_tools', 'mcp_list_tools'],
  ['mcp_call', 'mcp_call'],
]);

/**
 * A hosted call from the provider's own wire items, as frameworks that keep them hand them on: an OpenAI
 * Responses output item of a tool OpenAI runs (`HOSTED_ITEMS`; the item itself its result), or an Anthropic
 * `server_tool_use` block (its result the content of the `*_tool_result` block whose `tool_use_id` names it, found
 * among `blocks`). An `mcp_approval_request` asks the program first and runs nothing: {@link providerApprovalCall}.
 * A `program` (programmatic tool calling) is a call whose result, a `program_output` of its `call_id`, comes in a later
 * response ({@link laterHostedResult}). Anything else is not a hosted call.
 */
export function hostedCallOfItem(item: unknown, blocks: readonly unknown[] = []): CallOfTool | undefined {
  if (!isRecord(item) || typeof item.id !== 'string' || typeof item.type !== 'string') return undefined;
  if (item.type === 'server_tool_use') {
    const name = typeof item.name === 'string' ? item.name : 'server_tool';
    const answer = blocks.find((block) => isRecord(block) && block.tool_use_id === item.id && typeof block.type === 'string' && block.type.endsWith('_tool_result'));
    return hostedCall(item.id, name, item.input, isRecord(answer) ? answer.content : undefined);
  }
  if (item.type === 'mcp_approval_request') return providerApprovalCall(item.id, typeof item.name === 'string' ? item.name : 'mcp_call', item.arguments);
  // Programmatic tool calling: the model's program, its result in a later response (`program_output`, same `call_id`).
  if (item.type === 'program' && typeof item.call_id === 'string') {
    return { ...hostedCall(item.call_id, PROGRAM, { code: item.code, ...(item.fingerprint === undefined ? {} : { fingerprint: item.fingerprint }) }, undefined), providerResultPending: true };
  }
  if (item.type === 'program_output' && typeof item.call_id === 'string') return laterHostedResult(item.call_id, PROGRAM, { result: item.result, status: item.status });
  const name = HOSTED_ITEMS.get(item.type);
  return name === undefined ? undefined : hostedCall(item.id, name, undefined, item);
}

/**
 * The code Gemini ran itself (its code execution tool), from an answer's parts in order, as a framework that keeps
 * them hands them on (ChatGoogleGenerativeAI's content blocks): each `executableCode` part is a call named
 * `code_execution`, as the AI SDK's Google package names it, with the code as its arguments (`{language, code}`) and
 * the `codeExecutionResult` part that follows it as its result (`{outcome, output}`). Gemini gives these parts no id:
 * `idOf(n)` names the call of the nth.
 */
export function geminiCodeExecutionCalls(parts: readonly unknown[], idOf: (index: number) => string): CallOfTool[] {
  const calls: Array<{ id: string; code: unknown; result?: unknown }> = [];
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (isRecord(part.executableCode)) calls.push({ id: idOf(calls.length), code: part.executableCode });
    else if (isRecord(part.codeExecutionResult) && calls.length > 0 && calls.at(-1)!.result === undefined) calls.at(-1)!.result = part.codeExecutionResult;
  }
  return calls.map((call) => hostedCall(call.id, 'code_execution', call.code, call.result));
}

/**
 * The searches and page reads Gemini ran itself for an answer (its Google Search and URL context tools), from the
 * candidate's metadata as a framework hands it on (the AI SDK's `providerMetadata.google`, ChatGoogleGenerativeAI's
 * `response_metadata`): a call named `google_search` when `groundingMetadata` names the searches it ran
 * (`webSearchQueries`, its arguments `{queries}`), its result the `groundingMetadata` (the pages found,
 * `groundingChunks`, and the spans of the answer each supports, `groundingSupports`); a call named `url_context` when
 * `urlContextMetadata` lists pages, its arguments `{urls}`, its result the `urlContextMetadata` (each page's retrieval
 * status). Gemini reports neither as a call and gives them no id: `idOf(name)` names them. Metadata of other sources
 * (a retrieval store's) is not a search of Gemini's: no call.
 */
export function geminiGroundingCalls(metadata: { groundingMetadata?: unknown; urlContextMetadata?: unknown }, idOf: (name: string) => string): CallOfTool[] {
  const calls: CallOfTool[] = [];
  const grounding = metadata.groundingMetadata;
  const queries = isRecord(grounding) && Array.isArray(grounding.webSearchQueries) ? grounding.webSearchQueries.filter((query) => typeof query === 'string') : [];
  if (queries.length > 0) calls.push(hostedCall(idOf('google_search'), 'google_search', { queries }, grounding));
  const pages = metadata.urlContextMetadata;
  const urls = isRecord(pages) && Array.isArray(pages.urlMetadata) ? pages.urlMetadata.flatMap((page) => (isRecord(page) && typeof page.retrievedUrl === 'string' ? [page.retrievedUrl] : [])) : [];
  if (urls.length > 0) calls.push(hostedCall(idOf('url_context'), 'url_context', { urls }, pages));
  return calls;
}

/**
 * A medium a model answered with: an image Gemini drew, the audio OpenAI spoke. `data`: its bytes or base64, as the
 * framework gave them (left out by {@link recordedValue}); `url`: where it is, when the provider gave a place instead.
 */
export interface AnswerMedium {
  /** What it is, when its media type does not say (OpenAI's audio answer names no media type). */
  readonly kind?: 'image' | 'audio' | 'file';
  readonly mediaType?: string;
  readonly data?: unknown;
  readonly url?: string;
  readonly filename?: string;
  /** The provider's id for it (OpenAI's `audio.id`, which a later request can name). */
  readonly id?: string;
  /** What spoken audio says, when the provider wrote it down. */
  readonly transcript?: string;
}

/**
 * A medium of an answer as a content part, the request side's rule for answers: the part says what it was (`image`,
 * `audio` or `file` by its media type, the media type, file name, URL, id, transcript) and its bytes are left out as
 * {@link recordedValue} leaves them out of a prompt. Without it the answer's message held only its text, and nobody
 * reading the trajectory could tell the model had returned an image.
 */
export function answerPart(medium: AnswerMedium): Record<string, unknown> {
  const kind = medium.kind ?? (medium.mediaType?.startsWith('image/') === true ? 'image' : medium.mediaType?.startsWith('audio/') === true ? 'audio' : 'file');
  const part: Record<string, unknown> = { type: kind };
  if (medium.mediaType !== undefined) part.media_type = medium.mediaType;
  if (medium.filename !== undefined) part.filename = medium.filename;
  if (medium.url !== undefined) part.url = recordedValue(medium.url);
  if (medium.id !== undefined) part.id = medium.id;
  if (medium.transcript !== undefined) part.transcript = medium.transcript;
  if (medium.data !== undefined) part.data = recordedValue(medium.data);
  return part;
}

/** What an answer of the model is made of, as an adapter reads it from its framework's message. */
export interface AnswerParts {
  readonly text: string;
  readonly toolCalls: readonly CallOfTool[];
  /** The reasoning's readable text; reasoning nobody can read (Anthropic's `redacted_thinking`, OpenAI's `encrypted_content`) is no part of it. */
  readonly reasoning?: string | undefined;
  readonly media?: readonly AnswerMedium[] | undefined;
}

/**
 * An answer's assistant message, the one rule for the response that produced it and for every later request that
 * sends it back (its history): an adapter reads both with the same reader of its framework's message, so a request
 * records the reasoning it sends back as the `reasoning_content` of the message it came with, as the response recorded
 * it. Without it a request that re-sent thinking (with its signature) or reasoning (with its encrypted content) was
 * recorded lighter than the one on the wire. Reasoning with no readable text adds nothing, and is written nowhere.
 *
 * `content` is `null` when the model only called tools. An answer that held media has content parts: its text (when
 * it has any), then a part for each medium ({@link answerPart}).
 */
export function answerMessage(answer: AnswerParts): ChatMessage {
  const { text, reasoning } = answer;
  const media = answer.media ?? [];
  // A later result of an earlier message's call (a conversation's history) is no call of this message.
  const calls = answer.toolCalls.some((call) => call.providerResultLater === true) ? answer.toolCalls.filter((call) => call.providerResultLater !== true) : answer.toolCalls;
  const content = media.length > 0 ? [...(text === '' ? [] : [{ type: 'text', text }]), ...media.map(answerPart)] : text === '' && calls.length > 0 ? null : text;
  const message: ChatMessage = { role: 'assistant', content };
  if (calls.length > 0) message.tool_calls = calls.map(chatToolCall);
  if (reasoning !== undefined && reasoning !== '') message.reasoning_content = reasoning;
  return message;
}

export function chatTool(tool: OfferedTool): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.parameters !== undefined) fn.parameters = toJson(tool.parameters);
  return { type: 'function', function: fn };
}

/** The text of the last user message, or its content parts when it has more than text. */
export function lastUserMessage(messages: readonly ChatMessage[]): string | readonly unknown[] | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    const content = message.content;
    if (typeof content === 'string' || Array.isArray(content)) return content as string | readonly unknown[];
    return undefined;
  }
  return undefined;
}

/** Joins text parts (`{type:'text', text}` and kin) into one string; `undefined` when a part is not text. */
export function textOfParts(parts: readonly unknown[]): string | undefined {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    const record = part as { type?: unknown; text?: unknown } | null;
    if (record === null || typeof record !== 'object' || typeof record.text !== 'string') return undefined;
    text += record.text;
  }
  return text;
}

/** The HTTP status of the response an error keeps (a fetch `Response`, or a plain `{status}`), if it is one. */
function responseStatus(response: unknown): number | undefined {
  try {
    const status = typeof response === 'object' && response !== null ? (response as { status?: unknown }).status : undefined;
    return typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A tool's failure as its own answer says it, the framework having taken that answer as an output (an MCP result's
 * `isError`, an editor's `status: 'failed'`): `ToolError`, as a tool that reported failure is named by every adapter.
 */
export function reportedToolError(text: string): Error {
  const described = new Error(text);
  described.name = 'ToolError';
  return described;
}

/** `{type, message}` of a thrown value, and the HTTP status and retryability when the error says. */
export function describeError(error: unknown): { type: string; message: string; statusCode?: number; retryable?: boolean } {
  const record = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  let type = 'Error';
  let message = '';
  try {
    type = typeof record.name === 'string' && record.name !== '' ? record.name : error instanceof Error ? 'Error' : typeof error;
    // Error subclasses that keep the inherited name ("Error", e.g. the openai client's APIError family) name themselves by class.
    const ctor = (error as { constructor?: { name?: unknown } }).constructor?.name;
    if (type === 'Error' && typeof ctor === 'string' && ctor !== '' && ctor !== 'Error' && ctor !== 'Object') type = ctor;
    message = error instanceof Error ? error.message : typeof record.message === 'string' ? record.message : String(error);
  } catch {
    message = '[unprintable error]';
  }
  // `status_code`: the ollama client's ResponseError (ChatOllama's), which keeps the HTTP status only there; `$metadata`:
  // the AWS SDK's service exceptions (Bedrock's through ChatBedrockConverse); `response`: @langchain/google-common's
  // request error (ChatVertexAI's), which keeps the HTTP status only on the response it failed with.
  const status = record.statusCode ?? record.status ?? record.status_code ?? (record.$metadata as { httpStatusCode?: unknown } | undefined)?.httpStatusCode ?? responseStatus(record.response);
  const described: { type: string; message: string; statusCode?: number; retryable?: boolean } = { type, message };
  if (typeof status === 'number') described.statusCode = status;
  if (typeof record.isRetryable === 'boolean') described.retryable = record.isRetryable;
  return described;
}
