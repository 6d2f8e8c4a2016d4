/**
 * LangChain messages and results → the chat shapes the plugin reads.
 *
 * @module
 */

import type { ResponseParts } from '../core/run.ts';
import { cacheHits, billedOutput, tokenCount, usageCostUsd, type ProviderUsage } from '../../formats/usage.ts';
import { ollamaDoneReason } from '../core/finish.ts';
import { completionServedBy } from '../core/upstream.ts';
import {
  answerMessage,
  geminiCodeExecutionCalls,
  geminiGroundingCalls,
  hostedCallOfItem,
  lastUserMessage,
  newProviderApprovalAnswers,
  textOfParts,
  textOrJson,
  recordedText,
  recordedValue,
  type CallOfTool,
  type ChatMessage,
  type OfferedTool,
  type ProviderApprovalAnswer,
  type AnswerMedium,
} from '../core/shapes.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';

type Loose = Record<string, unknown>;

const ROLE_BY_TYPE: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool', developer: 'developer', function: 'function', generic: 'user' };

/** A message's type: `getType()` on a BaseMessage, `role`/`type` on a plain message. */
function typeOf(message: Loose): string | undefined {
  try {
    const getType = (message as { getType?: () => unknown; _getType?: () => unknown }).getType ?? (message as { _getType?: () => unknown })._getType;
    if (typeof getType === 'function') {
      const type = getType.call(message);
      if (typeof type === 'string') return type;
    }
  } catch {
    // a message type the installed core cannot name: fall back to its fields
  }
  return nonEmptyString(message.role) ?? nonEmptyString(message.type);
}

export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return textOfParts(content.filter((part) => typeof part !== 'object' || part === null || (isRecord(part) && part.type === 'text'))) ?? '';
  return content === undefined || content === null ? '' : recordedText(content);
}

/**
 * The calls a message's provider ran itself, which LangChain keeps out of `tool_calls`: ChatOpenAI's Responses
 * items in `additional_kwargs.tool_outputs` (`web_search_call`, `mcp_call`, ...), ChatAnthropic's `server_tool_use`
 * blocks in the content (each with its result block, where ChatAnthropic kept it), ChatGoogleGenerativeAI's
 * `groundingMetadata` and `urlContextMetadata` in `response_metadata` (Gemini's Google Search and URL context) and
 * `executableCode` blocks (Gemini's code execution, each with the `codeExecutionResult` block after it). Gemini gives
 * them no id: each is named by the message's id (LangChain's `run-<run id>`), its tool and its place.
 */
function hostedCallsOf(message: Loose, info: Loose = {}): CallOfTool[] {
  const prefix = nonEmptyString(message.id) ?? 'gemini';
  // Gemini's searches and page reads came before the answer's parts.
  const out: CallOfTool[] = geminiGroundingCalls(geminiMetadataOf(message, info), (name) => `${prefix}:${name}`);
  const kwargs = isRecord(message.additional_kwargs) ? message.additional_kwargs : {};
  const items = Array.isArray(kwargs.tool_outputs) ? kwargs.tool_outputs : [];
  const blocks = Array.isArray(message.content) ? message.content : [];
  const streamed = streamedServerInputs(blocks);
  for (const item of [...items, ...blocks]) {
    const input = isRecord(item) && item.type === 'server_tool_use' ? streamed.get(item.index) : undefined;
    const call = hostedCallOfItem(input === undefined ? item : { ...item, input }, blocks);
    if (call !== undefined) out.push(call);
  }
  out.push(...geminiCodeExecutionCalls(blocks.filter((block) => isRecord(block) && (block.type === 'executableCode' || block.type === 'codeExecutionResult')), (n) => `${prefix}:code_execution:${n}`));
  return out;
}

/**
 * The inputs of a streamed ChatAnthropic message's server tools, by block index. Streamed, a `server_tool_use` block
 * starts with `input: ''` and its input's JSON comes as `input_json_delta` blocks of the same `index`, which the
 * chunks' merge joins into one block beside it; its `tool_call_chunks` also make an `invalid_tool_calls` entry of
 * that text, with no name and no id.
 */
function streamedServerInputs(blocks: readonly unknown[]): Map<unknown, string> {
  const inputs = new Map<unknown, string>();
  for (const block of blocks) {
    if (!isRecord(block) || block.type !== 'server_tool_use' || block.input !== '' || block.index === undefined) continue;
    const text = blocks
      .filter((other) => isRecord(other) && other.type === 'input_json_delta' && other.index === block.index && typeof other.input === 'string')
      .map((other) => (other as Loose).input as string)
      .join('');
    if (text !== '') inputs.set(block.index, text);
  }
  return inputs;
}

/**
 * The answers to OpenAI's hosted MCP approval requests a model call's messages carry for the first time: the
 * `mcp_approval_response` blocks (ChatOpenAI's way to send them) of the messages after the last AI message.
 */
export function providerApprovalAnswersOf(messages: unknown): ProviderApprovalAnswer[] {
  if (!Array.isArray(messages)) return [];
  const items: unknown[] = [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const type = typeOf(message);
    if (type === 'ai' || type === 'assistant') items.push(message);
    else if (Array.isArray(message.content)) items.push(...message.content);
  }
  return newProviderApprovalAnswers(items, (item) => isRecord(item) && messages.includes(item));
}

/**
 * The calls of an AI message whose arguments the provider package could not parse (`invalid_tool_calls`: the raw
 * argument text, and the parser's error): no tool runs them.
 */
export function invalidToolCallsOf(message: Loose): Array<{ call: CallOfTool; error: string }> {
  const calls = message.invalid_tool_calls;
  if (!Array.isArray(calls)) return [];
  const out: Array<{ call: CallOfTool; error: string }> = [];
  const serverInputs = new Set(streamedServerInputs(Array.isArray(message.content) ? message.content : []).values());
  for (const call of calls) {
    if (!isRecord(call)) continue;
    // A server tool's streamed input, not a call of the model's (the hosted call holds it).
    if (nonEmptyString(call.id) === undefined && nonEmptyString(call.name) === undefined && typeof call.args === 'string' && serverInputs.has(call.args)) continue;
    out.push({ call: { id: nonEmptyString(call.id) ?? '', name: nonEmptyString(call.name) ?? 'tool', arguments: call.args ?? '' }, error: nonEmptyString(call.error) ?? 'the arguments could not be parsed' });
  }
  return out;
}

function toolCallsOf(message: Loose, info: Loose = {}): CallOfTool[] {
  const calls = message.tool_calls;
  const out: CallOfTool[] = hostedCallsOf(message, info);
  if (!Array.isArray(calls)) return out;
  for (const call of calls) {
    if (!isRecord(call)) continue;
    out.push({ id: nonEmptyString(call.id) ?? '', name: nonEmptyString(call.name) ?? 'tool', arguments: call.args ?? {} });
  }
  return out;
}

export function chatMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) return [];
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (typeof message === 'string') {
      out.push({ role: 'user', content: message });
      continue;
    }
    if (!isRecord(message)) continue;
    const type = typeOf(message) ?? 'user';
    const role = ROLE_BY_TYPE[type] ?? type;
    // An answer sent back is recorded as its response was (its text, calls, reasoning and media): its thinking blocks,
    // signatures and all, are the message's reasoning, not content.
    if (role === 'assistant') {
      out.push(answerMessage(answerOf(message)));
      continue;
    }
    const content = message.content;
    const chat: ChatMessage = { role, content: typeof content === 'string' || content === undefined ? (content ?? '') : (textOfParts(content as unknown[]) ?? recordedValue(content)) };
    if (role === 'tool') chat.tool_call_id = nonEmptyString(message.tool_call_id) ?? '';
    out.push(chat);
  }
  return out;
}

/**
 * What a tool gave the model: its `ToolMessage` (a message with `content`),
 * or, for a tool that returns a LangGraph `Command` (a handoff, a state
 * update), the `ToolMessage` for this call in the Command's `update`; the
 * Command itself is routing, not what the model read. `undefined`: the tool
 * returned a plain value.
 */
export function toolMessageOf(output: unknown, toolCallId: string): Loose | undefined {
  if (!isRecord(output)) return undefined;
  if (output.lg_name !== 'Command') return 'content' in output ? output : undefined;
  const update = output.update;
  // `update` is a state object, or [channel, value] pairs.
  const values = Array.isArray(update) ? update.filter((pair) => Array.isArray(pair) && pair[0] === 'messages').map((pair) => (pair as unknown[])[1]) : isRecord(update) ? [update.messages] : [];
  for (const value of values) {
    for (const message of Array.isArray(value) ? value : [value]) {
      if (isRecord(message) && typeOf(message) === 'tool' && message.tool_call_id === toolCallId) return message;
    }
  }
  return undefined;
}

/** Tools from `invocation_params.tools` (OpenAI format, Anthropic's `{name, description, input_schema}`, or `{name, description, schema}`). */
export function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  const out: OfferedTool[] = [];
  for (const tool of tools) {
    if (!isRecord(tool)) continue;
    const fn = isRecord(tool.function) ? tool.function : tool;
    const name = nonEmptyString(fn.name);
    if (name === undefined) continue;
    // OpenAI's `parameters`, Anthropic's `input_schema` (ChatAnthropic's invocation params keep its tools in its own shape).
    out.push({ name, description: nonEmptyString(fn.description), parameters: fn.parameters ?? fn.input_schema ?? fn.schema });
  }
  return out;
}

/** What LangChain told the handler of a model run beyond its result. */
export interface RunSeen {
  /** The provider the run named (`askedProvider`). */
  readonly provider?: string;
  /** The chunks the model streamed (`handleLLMNewToken`, once per chunk; once for an answer not streamed). */
  readonly chunks?: number;
  /** The upstream a router named in the first streamed chunk's raw response that named one (`chunkServedBy`). */
  readonly servedBy?: string;
}

/**
 * `usage_metadata` (its `input_tokens` include the cache), else the legacy `llmOutput.tokenUsage`, else what a
 * streamed ChatGroq keeps (`groqStreamedUsage`), tagged for the token table; `usage_metadata` made the call's own
 * where LangChain's is not: Gemini's (`geminiUsage`), or where the wire's usage ChatOpenAI keeps (`wire`) says more
 * (`withWireCounts`).
 */
function usageOf(message: Loose, llmOutput: Loose, wire: Loose | undefined, seen: RunSeen, info: Loose): ProviderUsage | undefined {
  if (isRecord(message.usage_metadata)) {
    const usage =
      seen.provider === GEMINI
        ? geminiUsage(message.usage_metadata, seen.chunks ?? 0, geminiToolsRan(message, info))
        : seen.provider === VERTEX
          ? vertexUsage(message.usage_metadata)
          : withWireCounts(message.usage_metadata, wire);
    return { shape: 'langchain', usage };
  }
  const usage = isRecord(llmOutput.tokenUsage) ? llmOutput.tokenUsage : isRecord(llmOutput.token_usage) ? llmOutput.token_usage : groqStreamedUsage(message);
  return usage === undefined ? undefined : { shape: 'langchain', usage };
}

/** The provider ChatGoogleGenerativeAI (`@langchain/google-genai`) names. */
const GEMINI = 'google_genai';
/** The provider ChatVertexAI (`@langchain/google-vertexai`, on google-common) names. */
const VERTEX = 'google_vertexai';

/**
 * ChatVertexAI's `usage_metadata` with the input Gemini's own tools read. google-common counts the thoughts in
 * `output_tokens` (`candidatesTokenCount` + `thoughtsTokenCount`) and takes `totalTokenCount` as `total_tokens`, but
 * `promptTokenCount` alone as `input_tokens`: what the total counts beyond the two is `toolUsePromptTokenCount` (the
 * search results, pages and code results Gemini read, billed as input), which it keeps nowhere else.
 */
function vertexUsage(usage: Loose): Loose {
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  const total = tokenCount(usage.total_tokens);
  const toolUse = input !== undefined && output !== undefined && total !== undefined ? total - input - output : 0;
  return toolUse > 0 ? { ...usage, input_tokens: input! + toolUse } : usage;
}

/**
 * The candidate's metadata of Gemini's own tools, where the LangChain packages keep it: the generation's info (the
 * candidate's fields), which LangChain also puts in the message's `response_metadata` unless a graph streamed the
 * call (its `messages` stream: the merged chunks' info only). ChatGoogleGenerativeAI names them as Gemini does;
 * ChatVertexAI (google-common) `grounding_metadata` and `url_context_metadata`, and `groundingMetadata` too when
 * invoked.
 */
function geminiMetadataOf(message: Loose, info: Loose): { groundingMetadata?: unknown; urlContextMetadata?: unknown } {
  const metadata = isRecord(message.response_metadata) ? message.response_metadata : {};
  return {
    groundingMetadata: metadata.groundingMetadata ?? info.groundingMetadata ?? metadata.grounding_metadata ?? info.grounding_metadata,
    urlContextMetadata: metadata.urlContextMetadata ?? info.urlContextMetadata ?? metadata.url_context_metadata ?? info.url_context_metadata,
  };
}

/**
 * Whether Gemini ran one of its own tools in the call: Google Search or URL context (the candidate's
 * `groundingMetadata` or `urlContextMetadata`, which ChatGoogleGenerativeAI keeps in `response_metadata`), or code
 * execution (`executableCode` blocks in the content). Their input is counted apart (`toolUsePromptTokenCount`),
 * which LangChain keeps nowhere.
 */
function geminiToolsRan(message: Loose, info: Loose): boolean {
  const metadata = geminiMetadataOf(message, info);
  if (isRecord(metadata.groundingMetadata) || isRecord(metadata.urlContextMetadata)) return true;
  return Array.isArray(message.content) && message.content.some((block) => isRecord(block) && (block.type === 'executableCode' || block.type === 'codeExecutionResult'));
}

/**
 * ChatGoogleGenerativeAI's `usage_metadata` as Gemini counted the call, in the table's reading of Gemini's own
 * `usageMetadata` (which the AI SDK's runs get). Its `output_tokens` are `candidatesTokenCount` alone, and LangChain
 * keeps `thoughtsTokenCount` nowhere: the thoughts are what its `total_tokens` (`totalTokenCount`) counts beyond the
 * input and the output, output the call is billed for, so completion and reasoning tokens. Not when Gemini ran one of
 * its own tools (`toolsRan`): that remainder also holds the tools' input (`toolUsePromptTokenCount`, billed as input),
 * and nothing LangChain keeps tells the two apart, so it is neither the input's nor the output's (the total keeps
 * it). Streamed chunk by chunk (`model.stream()`, a graph's `messages` stream), each chunk's `usage_metadata` repeats
 * `cachedContentTokenCount` (Gemini states its counts so far in every chunk, the prompt's whole from the first), which
 * the merged message adds up: the chunks LangChain told of divide it, and a sum they do not divide says nothing.
 */
function geminiUsage(usage: Loose, chunks: number, toolsRan: boolean): Loose {
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  const total = tokenCount(usage.total_tokens);
  const inputDetails = isRecord(usage.input_token_details) ? { ...usage.input_token_details } : undefined;
  const outputDetails = isRecord(usage.output_token_details) ? { ...usage.output_token_details } : {};
  const merged = tokenCount(inputDetails?.cache_read);
  if (inputDetails !== undefined && merged !== undefined && chunks > 1) {
    if (merged % chunks === 0) inputDetails.cache_read = merged / chunks;
    else delete inputDetails.cache_read;
  }
  const thoughts = !toolsRan && input !== undefined && output !== undefined && total !== undefined ? total - input - output : 0;
  return {
    ...usage,
    ...(inputDetails === undefined ? {} : { input_token_details: inputDetails }),
    ...(thoughts > 0 ? { output_tokens: output! + thoughts, output_token_details: { ...outputDetails, reasoning: thoughts } } : {}),
  };
}

/**
 * A ChatOpenAI-based model's `usage_metadata`, with what the wire's usage (`wire`, taken once) says that it does not:
 * DeepSeek's cache hits (`cacheHits`); the call's total where LangChain's merge added up two (ChatXAI gives the
 * finishing chunk of a stream xAI's usage as its `usage_metadata`, and ChatOpenAI's usage chunk adds its own, so the
 * merged `total_tokens` counts the call's twice); and the reasoning in the output where the wire counts it apart
 * (`billedOutput`).
 */
function withWireCounts(usage: Loose, wire: Loose | undefined): Loose {
  // Chat Completions' usage only (`prompt_tokens`): whether another kept in `response_metadata.usage` was added up over a stream's chunks is not told.
  if (wire === undefined || tokenCount(wire.prompt_tokens) === undefined) return usage;
  const details = isRecord(usage.input_token_details) ? usage.input_token_details : {};
  const hits = cacheHits(tokenCount(details.cache_read), wire);
  const total = tokenCount(wire.total_tokens);
  const billed = billedOutput(tokenCount(usage.output_tokens), wire);
  return {
    ...usage,
    ...(hits === undefined ? {} : { input_token_details: { ...details, cache_read: hits } }),
    ...(total === undefined ? {} : { total_tokens: total }),
    ...(billed === undefined ? {} : { output_tokens: billed.output }),
  };
}

/**
 * The usage the provider sent, which ChatOpenAI keeps as it came in `response_metadata.usage` (OpenRouter's `cost`,
 * DeepSeek's cache hits with it), taken once. A streamed answer's message is its chunks merged, which adds up the
 * numbers of every chunk that carried it: ChatOpenAI passes the usage chunk on twice when it carries a choice
 * (OpenRouter's) or when the finishing chunk carries it (DeepSeek's), and ChatXAI keeps xAI's on its finishing chunk
 * too. The counts LangChain took once (`usage_metadata`) say how many times it was added; a count that does not
 * divide says nothing (undefined).
 */
function wireUsageOf(message: Loose, metadata: Loose): Loose | undefined {
  const merged = isRecord(metadata.usage) ? metadata.usage : undefined;
  const counted = isRecord(message.usage_metadata) ? message.usage_metadata : undefined;
  if (merged === undefined || counted === undefined) return merged;
  const pairs: Array<[unknown, unknown]> = [
    [merged.prompt_tokens, counted.input_tokens],
    [merged.completion_tokens, counted.output_tokens],
  ];
  for (const [sum, once] of pairs) {
    if (typeof sum !== 'number' || typeof once !== 'number' || once <= 0) continue;
    const times = sum / once;
    return Number.isInteger(times) && times >= 1 ? divided(merged, times) : undefined;
  }
  return merged;
}

/** Every number of a merged usage, nested ones too, divided by the times it was added. */
function divided(usage: Loose, times: number): Loose {
  if (times === 1) return usage;
  const out: Loose = {};
  for (const [key, value] of Object.entries(usage)) out[key] = typeof value === 'number' ? value / times : isRecord(value) && !Array.isArray(value) ? divided(value, times) : value;
  return out;
}

/**
 * A streamed ChatGroq answer sets no `usage_metadata`: it keeps the finishing chunk's `x_groq.usage` as LangChain's
 * counts in `response_metadata.usage`, where the `usage` of the chunk `stream_options.include_usage` asks for merges
 * in, its `total_tokens` summed into theirs; so the input and output counts alone.
 */
function groqStreamedUsage(message: Loose): Loose | undefined {
  const metadata = isRecord(message.response_metadata) ? message.response_metadata : {};
  if (metadata.model_provider !== 'groq' || !isRecord(metadata.usage) || typeof metadata.usage.input_tokens !== 'number') return undefined;
  return { input_tokens: metadata.usage.input_tokens, output_tokens: metadata.usage.output_tokens };
}

/**
 * An AI message's reasoning: LangChain's standard content blocks
 * (`contentBlocks`, `type: "reasoning"`), which read Anthropic's thinking
 * blocks and OpenAI's reasoning summaries alike; on a plain message (no
 * getter), its `thinking` and `reasoning` parts.
 */
function reasoningOf(message: Loose): string | undefined {
  let blocks: unknown;
  try {
    blocks = (message as { contentBlocks?: unknown }).contentBlocks;
  } catch {
    // a message the installed core cannot convert: its own parts below
  }
  const parts = Array.isArray(blocks) ? blocks : Array.isArray(message.content) ? message.content : [];
  let text = '';
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (part.type === 'reasoning' && typeof part.reasoning === 'string') text += part.reasoning;
    else if (part.type === 'thinking' && typeof part.thinking === 'string') text += part.thinking;
  }
  return text === '' ? rawReasoningOf(message) : text;
}

/**
 * The `reasoning` of OpenRouter's Chat Completions (`message.reasoning`, streamed as `delta.reasoning`), which
 * ChatOpenAI does not read (only `reasoning_content`): there only when the program asked ChatOpenAI to keep the raw
 * response (`__includeRawResponse: true`, in `additional_kwargs.__raw_response`). A streamed message's raw responses
 * are its chunks' merged, their `reasoning` deltas joined in order.
 */
function rawReasoningOf(message: Loose): string | undefined {
  const raw = rawResponseOf(message) ?? {};
  const choice = Array.isArray(raw.choices) && isRecord(raw.choices[0]) ? raw.choices[0] : {};
  const said = isRecord(choice.message) ? choice.message : isRecord(choice.delta) ? choice.delta : {};
  return nonEmptyString(said.reasoning);
}

/** The raw response ChatOpenAI keeps in a message when the program asks (`__includeRawResponse: true`). */
function rawResponseOf(message: unknown): Loose | undefined {
  const kwargs = isRecord(message) && isRecord(message.additional_kwargs) ? message.additional_kwargs : {};
  return isRecord(kwargs.__raw_response) ? kwargs.__raw_response : undefined;
}

/**
 * The upstream OpenRouter names in a streamed chunk (`provider`, in every chunk), from the raw chunk ChatOpenAI keeps
 * with `__includeRawResponse`: read chunk by chunk, since the merged message joins the chunks' strings (`Anthropic`
 * as many times as there were chunks).
 */
export function chunkServedBy(chunk: unknown): string | undefined {
  return isRecord(chunk) ? completionServedBy(rawResponseOf(chunk.message)) : undefined;
}

/**
 * The upstream a router says served the call: a stream's, read from its chunks (`RunSeen.servedBy`), else the raw
 * response of an answer not streamed. ChatOpenAI keeps it nowhere else (not in `response_metadata`).
 */
function servedByOf(message: Loose, seen: RunSeen): string | undefined {
  return seen.servedBy ?? ((seen.chunks ?? 0) > 1 ? undefined : completionServedBy(rawResponseOf(message)));
}

const MEDIA_BLOCKS = new Set(['image', 'audio', 'file']);

/**
 * The media an AI message answered with: its content's image, audio and file blocks (LangChain's standard blocks,
 * `{type, data | url, mimeType}` or the older `mime_type`; ChatOpenAI's `image` blocks of an OpenRouter image; an
 * `image_url` block), and the audio ChatOpenAI keeps in `additional_kwargs.audio` (`modalities: ['text', 'audio']`).
 */
function answerMediaOf(message: Loose): AnswerMedium[] {
  const media: AnswerMedium[] = [];
  // ChatOpenAI also puts the image of an `image_generation` call in the content, under the call's id: the hosted
  // call's result already says it, as every adapter records a hosted call, so it is not a second medium.
  const hosted = new Set(hostedCallsOf(message).map((call) => call.id));
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (!isRecord(block) || typeof block.type !== 'string' || (typeof block.id === 'string' && hosted.has(block.id))) continue;
    if (block.type === 'image_url') {
      const url = isRecord(block.image_url) ? block.image_url.url : block.image_url;
      if (typeof url === 'string') media.push({ kind: 'image', url });
    } else if (MEDIA_BLOCKS.has(block.type)) {
      media.push({
        kind: block.type as 'image' | 'audio' | 'file',
        mediaType: nonEmptyString(block.mimeType) ?? nonEmptyString(block.mime_type),
        data: block.data,
        url: nonEmptyString(block.url),
        filename: nonEmptyString(block.filename),
        id: nonEmptyString(block.fileId) ?? nonEmptyString(block.id),
      });
    }
  }
  const kwargs = isRecord(message.additional_kwargs) ? message.additional_kwargs : {};
  const audio = kwargs.audio;
  if (isRecord(audio)) media.push({ kind: 'audio', data: audio.data, id: nonEmptyString(audio.id), transcript: nonEmptyString(audio.transcript) });
  return media;
}

/**
 * What an AI message answered, read the same way for the response that produced it and for a later request that sends
 * it back ({@link answerMessage}): its text, its calls (those the model asked for that could not be parsed too: they
 * are in its answer), its reasoning and its media. `info`: the generation's, which only a response has.
 */
function answerOf(message: Loose, info: Loose = {}): { text: string; toolCalls: CallOfTool[]; reasoning: string | undefined; media: AnswerMedium[] } {
  return {
    text: contentText(message.content),
    toolCalls: [...toolCallsOf(message, info), ...invalidToolCallsOf(message).map((invalid) => invalid.call)],
    reasoning: reasoningOf(message),
    media: answerMediaOf(message),
  };
}

/** The first generation of an `LLMResult`. */
export function responseOfResult(output: unknown, seen: RunSeen = {}): ResponseParts & { refused: Array<{ call: CallOfTool; error: string }> } {
  const result = isRecord(output) ? output : {};
  const generations = Array.isArray(result.generations) && Array.isArray(result.generations[0]) ? (result.generations[0] as unknown[]) : [];
  const generation = isRecord(generations[0]) ? generations[0] : {};
  const message = isRecord(generation.message) ? generation.message : undefined;
  const llmOutput = isRecord(result.llmOutput) ? result.llmOutput : {};
  const metadata = message !== undefined && isRecord(message.response_metadata) ? message.response_metadata : {};
  const info = isRecord(generation.generationInfo) ? generation.generationInfo : {};
  // A streamed ChatAnthropic answer keeps message_start's `model` and message_delta's `stop_reason` only here.
  const kwargs = message !== undefined && isRecord(message.additional_kwargs) ? message.additional_kwargs : {};
  // ChatBedrockConverse keeps Converse's `stopReason` as Bedrock spells it: at the top when invoked, in the
  // `messageStop` event's own object when streamed (the chunks' response_metadata merged).
  const messageStop = isRecord(metadata.messageStop) ? metadata.messageStop : {};
  const wire = message === undefined ? undefined : wireUsageOf(message, metadata);
  // What the call was charged, in USD, when the answer says: OpenRouter's `cost` or xAI's `cost_in_usd_ticks`, in the
  // usage it sent.
  const costUsd = usageCostUsd(wire);
  const servedBy = message === undefined ? undefined : servedByOf(message, seen);
  const answer = message !== undefined ? answerOf(message, info) : { text: nonEmptyString(generation.text) ?? '', toolCalls: [] };
  const toolCalls = answer.toolCalls;
  return {
    ...answer,
    refused: message !== undefined ? invalidToolCallsOf(message) : [],
    usage: usageOf(message ?? {}, llmOutput, wire, seen, info),
    // ChatGoogleGenerativeAI keeps Gemini's `finishReason` as the API spells it, in generationInfo (and so in
    // response_metadata, unless the answer was streamed).
    finishReason:
      nonEmptyString(metadata.finish_reason) ??
      nonEmptyString(metadata.stop_reason) ??
      nonEmptyString(info.finish_reason) ??
      nonEmptyString(info.finishReason) ??
      nonEmptyString(kwargs.stop_reason) ??
      nonEmptyString(metadata.stopReason) ??
      nonEmptyString(messageStop.stopReason) ??
      // ChatOllama keeps the last object of Ollama's stream in response_metadata, its `done_reason` with it.
      ollamaDoneReason(nonEmptyString(metadata.done_reason), toolCalls.length > 0),
    // The provider-reported (dated) model: in response_metadata, in generationInfo when the model streamed (streamEvents;
    // ChatMistralAI's `model`, which it keeps nowhere else), in additional_kwargs when ChatAnthropic streamed.
    model:
      nonEmptyString(metadata.model_name) ??
      nonEmptyString(metadata.model) ??
      nonEmptyString(info.model_name) ??
      nonEmptyString(info.model) ??
      nonEmptyString(llmOutput.model_name) ??
      nonEmptyString(kwargs.model),
    id: message !== undefined ? nonEmptyString(message.id) : undefined,
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(servedBy === undefined ? {} : { servedBy }),
  };
}

/**
 * The last user message of a chain's `inputs` (`{messages}`, `{input}` or a string): its text, or its content parts
 * when it has more than text (an image), as every adapter gives a turn's message.
 */
export function userMessageOfInputs(inputs: unknown): string | readonly unknown[] | undefined {
  if (typeof inputs === 'string') return inputs;
  if (!isRecord(inputs)) return undefined;
  if (Array.isArray(inputs.messages)) {
    const message = lastUserMessage(chatMessages(inputs.messages));
    if (message !== undefined) return message;
  }
  return nonEmptyString(inputs.input) ?? nonEmptyString(inputs.question);
}

/** The text of the last user message of a chain's `inputs` (a sub-agent's task, a handoff's goal): its media left out. */
export function userTextOfInputs(inputs: unknown): string | undefined {
  const message = userMessageOfInputs(inputs);
  return message === undefined || typeof message === 'string' ? message : contentText(message);
}

/** A LangChain message (a `BaseMessage`), not a parsed object that happens to have a `content` field. */
const isMessageObject = (value: Loose): boolean =>
  typeof (value as { getType?: unknown }).getType === 'function' || typeof (value as { _getType?: unknown })._getType === 'function';

/**
 * The result of a plain runnable (not a graph) that is neither text nor a message: what a parser or
 * `withStructuredOutput` gave the program (an object, as JSON). LangChain reports a value that is not an object as
 * `{ output: value }`. `undefined` for a message (its text is the answer) or a state with messages.
 */
export function parsedResultOf(outputs: unknown): string | undefined {
  if (!isRecord(outputs) || Array.isArray(outputs.messages) || isMessageObject(outputs)) return undefined;
  const keys = Object.keys(outputs);
  return textOrJson(keys.length === 1 && keys[0] === 'output' ? outputs.output : outputs);
}

/**
 * The final answer of a chain's outputs: an agent's `structuredResponse` (its `responseFormat`) as JSON, which is
 * what the program reads (the message `createAgent` adds after a structured-output tool call is its own sentence,
 * not the model's); else the last assistant text.
 */
export function finalTextOfOutputs(outputs: unknown): string | undefined {
  if (typeof outputs === 'string') return outputs;
  if (!isRecord(outputs)) return undefined;
  if (outputs.structuredResponse !== undefined) {
    const structured = textOrJson(outputs.structuredResponse);
    if (structured !== undefined) return structured;
  }
  if (Array.isArray(outputs.messages)) {
    const messages = chatMessages(outputs.messages);
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'assistant') return contentText(messages[i]!.content);
  }
  return nonEmptyString(outputs.output) ?? nonEmptyString(outputs.text);
}
