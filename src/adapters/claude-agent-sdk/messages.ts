/**
 * Reading the Claude Agent SDK's records: Anthropic Messages content blocks
 * (text, thinking, `tool_use`, `tool_result`) and usage, as the parts one
 * model request or one tool result is made of.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import type { ProviderUsage } from '../../formats/usage.ts';
import { answerMessage, recordedText, recordedValue, type CallOfTool, type ChatMessage } from '../core/shapes.ts';
import { trajectoryAnswering } from '../mcp/meta.ts';
import type { TrajectoryRef } from '../../shared/trajectory-ref.ts';

/** The API every request of a query goes to, the main agent's and its sub-agents' (the CLI has one client). */
export const PROVIDER = 'anthropic';

export type Loose = Record<string, unknown>;


/** What the blocks of one assistant message say, accumulated block by block. */
export class AssistantBlocks {
  text = '';
  reasoning = '';
  readonly toolCalls: CallOfTool[] = [];

  add(content: unknown): void {
    if (!Array.isArray(content)) {
      if (typeof content === 'string') this.text += content;
      return;
    }
    for (const block of content) {
      if (!isRecord(block)) continue;
      switch (block.type) {
        case 'text':
          if (typeof block.text === 'string') this.text += block.text;
          break;
        case 'thinking':
          if (typeof block.thinking === 'string') this.reasoning += block.thinking;
          break;
        case 'tool_use':
        case 'server_tool_use':
        case 'mcp_tool_use':
          if (typeof block.id === 'string' && typeof block.name === 'string') {
            this.toolCalls.push({ id: block.id, name: block.name, arguments: block.input ?? {} });
          }
          break;
        default:
          break;
      }
    }
  }

  /** The message as the next request's history holds it: as its response recorded it, its thinking included. */
  chatMessage(): ChatMessage {
    return answerMessage(this);
  }
}

/** A `tool_result` block: the tool call it answers, its text and whether it is an error. */
export interface ToolResultBlock {
  readonly toolUseId: string;
  readonly content: string;
  readonly isError: boolean;
}

/** The ids of a content's `tool_use` blocks: the calls a reply made. */
export function toolUseIds(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  const ids: string[] = [];
  for (const block of content) if (isRecord(block) && block.type === 'tool_use' && typeof block.id === 'string') ids.push(block.id);
  return ids;
}

/** The `tool_result` blocks of a user message's content. */
export function toolResults(content: unknown): ToolResultBlock[] {
  if (!Array.isArray(content)) return [];
  const out: ToolResultBlock[] = [];
  for (const block of content) {
    if (!isRecord(block) || block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
    out.push({ toolUseId: block.tool_use_id, content: contentText(block.content), isError: block.is_error === true });
  }
  return out;
}

/**
 * How a user message (the stream's, or a transcript's record) ends the call
 * its tool result answers: as the result says, and referencing the MCP
 * server's trajectory when the tool's own result (`tool_use_result` in the
 * stream, `toolUseResult` in a transcript: for an MCP tool, the server's
 * result with its `_meta`, which the model is not sent) names one for this
 * call. One result per message, as the CLI writes them.
 */
export function resultOutcome(message: Loose, result: ToolResultBlock): { failed: boolean; error?: string; result?: string; interrupted?: boolean; serverTrajectory?: TrajectoryRef } {
  const serverTrajectory = trajectoryAnswering(message.tool_use_result ?? message.toolUseResult, result.toolUseId);
  const linked = serverTrajectory === undefined ? {} : { serverTrajectory };
  if (!result.isError) return { failed: false, result: result.content, ...linked };
  return { failed: true, error: result.content, ...(cutShort(message, result.toolUseId) ? { interrupted: true } : {}), ...linked };
}

/** The CLI's kinds of a call that did not run to its end because it was stopped while it ran, not because it failed. */
const CUT_SHORT = new Set(['interrupted', 'cancelled']);

/**
 * Whether a user message (the stream's, or a transcript's record) answers
 * this call with the CLI's words for a call it stopped while it ran
 * (`tool_result_meta[].non_execution_kind` in the stream, `toolDenialKind`
 * in a transcript): the program's `abortController` cancels an in-process
 * MCP tool so, and the CLI goes on with the turn. The tool did not fail.
 */
function cutShort(message: Loose, toolUseId: string): boolean {
  const meta = Array.isArray(message.tool_result_meta) ? message.tool_result_meta.find((entry) => isRecord(entry) && entry.id === toolUseId) : undefined;
  const kind = isRecord(meta) ? meta.non_execution_kind : message.toolDenialKind;
  return typeof kind === 'string' && CUT_SHORT.has(kind);
}

/**
 * The CLI's words for an MCP call whose answer never came because the link
 * to the server ended first (one fixed sentence in the CLI). An in-process
 * MCP server lives in the program, so the program's abort ends that link.
 */
const MCP_ANSWER_CUT = 'The tool call was interrupted before a result was received.';

/** Whether a tool result is the CLI's words for an MCP call whose server link ended before it answered. */
export function mcpAnswerCut(result: ToolResultBlock): boolean {
  return result.isError && result.content.startsWith(MCP_ANSWER_CUT);
}

/**
 * Whether a user message (the stream's, or a transcript's record) answers
 * this call with the CLI's words for a call the user stopped: it says the
 * call did not run to its end because the user rejected it
 * (`tool_result_meta[].non_execution_kind` in the stream, `toolDenialKind`
 * in a transcript; `User rejected tool use` as the tool's own result in
 * both). A call that was not denied was running: `interrupt()` cut it.
 */
export function rejectedByUser(message: Loose, toolUseId: string): boolean {
  // The meta names each result's call; the other fields are the message's (one result each, as the CLI writes them).
  const meta = Array.isArray(message.tool_result_meta) ? message.tool_result_meta.find((entry) => isRecord(entry) && entry.id === toolUseId) : undefined;
  if (isRecord(meta)) return meta.non_execution_kind === 'user-rejected';
  return message.toolDenialKind === 'user-rejected' || message.toolUseResult === 'User rejected tool use' || message.tool_use_result === 'User rejected tool use';
}

/** A content value (a string or text blocks) as one string; other blocks as JSON. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : recordedText(content);
  let text = '';
  for (const block of content) {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') text += block.text;
    else text += recordedText(block);
  }
  return text;
}

/** A user prompt (a string, or an SDK user message's content) as the turn's user message. */
export function promptText(prompt: unknown): string | readonly unknown[] | undefined {
  if (typeof prompt === 'string') return prompt;
  if (!isRecord(prompt)) return undefined;
  const message = isRecord(prompt.message) ? prompt.message : prompt;
  const content = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const allText = content.every((block) => isRecord(block) && block.type === 'text' && typeof block.text === 'string');
    return allText ? contentText(content) : (recordedValue(content) as readonly unknown[]);
  }
  return undefined;
}

/** An Anthropic Messages `usage`, tagged for the token table (its `input_tokens` leave cache reads and writes out). */
export function anthropicUsage(usage: unknown): ProviderUsage | undefined {
  return isRecord(usage) ? { shape: 'anthropic_messages', usage } : undefined;
}

/** The later usage over the earlier one: `message_delta` may carry only the counts that changed. */
export function mergeUsage(earlier: unknown, later: unknown): Loose | undefined {
  if (!isRecord(later)) return isRecord(earlier) ? earlier : undefined;
  if (!isRecord(earlier)) return later;
  const merged: Loose = { ...earlier };
  for (const key of Object.keys(later)) if (later[key] !== undefined && later[key] !== null) merged[key] = later[key];
  return merged;
}

/** An attempt that failed with an HTTP status, as the core describes errors. */
export class ApiAttemptError extends Error {
  readonly status: number | undefined;
  readonly isRetryable: boolean;

  constructor(kind: string, message: string, status: number | undefined, retryable: boolean) {
    super(message);
    this.name = kind;
    this.status = status;
    this.isRetryable = retryable;
  }
}

/** `system/api_retry` (or a sub-agent's `subagent_retry`): the attempt that failed and will be retried. */
export function retryError(retry: Loose): ApiAttemptError {
  const status = typeof retry.error_status === 'number' ? retry.error_status : undefined;
  const kind = nonEmptyString(retry.error) ?? nonEmptyString(retry.error_category) ?? 'api_error';
  const attempt = typeof retry.attempt === 'number' ? retry.attempt : undefined;
  const max = typeof retry.max_retries === 'number' ? retry.max_retries : undefined;
  const delay = typeof retry.retry_delay_ms === 'number' ? retry.retry_delay_ms : undefined;
  const what = status === undefined ? kind : `HTTP ${status} ${kind}`;
  const then = attempt === undefined ? 'retried' : `retry ${attempt}${max === undefined ? '' : ` of ${max}`}${delay === undefined ? '' : ` in ${delay} ms`}`;
  return new ApiAttemptError(kind, `${what} (${then})`, status, true);
}

/**
 * `system/model_fallback`: the CLI gave up on the model asked for (`trigger`: why, `overloaded`) and sends the
 * request to `fallback_model` next. The attempt it gave up on failed; the message says no status.
 */
export function fallbackError(fallback: Loose): ApiAttemptError {
  const kind = nonEmptyString(fallback.trigger) ?? 'api_error';
  const to = nonEmptyString(fallback.fallback_model);
  return new ApiAttemptError(kind, nonEmptyString(fallback.content) ?? (to === undefined ? 'switched to the fallback model' : `switched to ${to}`), undefined, true);
}
