/**
 * What the MCP adapters put in a request's and a result's `_meta`, and how
 * they read it back. `traceparent` is W3C trace context, the key MCP is
 * converging on (and OpenInference's MCP instrumentation uses); the
 * `nemo-relay/…` keys carry what a traceparent cannot: NeMo Relay's
 * propagation context (native's `propagationContextToJson` text, so a
 * native server can read it with native's own function), who called, and
 * where the server's trajectory was written.
 *
 * @module
 */

import type { TraceContext } from '../../hooks/index.ts';
import { isRecord } from '../../shared/record.ts';
import { callerRefOf, trajectoryRefOf, type CallerRef, type TrajectoryRef } from '../../shared/trajectory-ref.ts';

/** `params._meta` key: NeMo Relay's propagation context, as JSON text. */
export const PROPAGATION_META_KEY = 'nemo-relay/propagation';
/** `params._meta` key: the caller's session, tool call and trajectory (and the result's, as the server names it back). */
export const CALLER_META_KEY = 'nemo-relay/caller';
/** The result's `_meta` key: the server's session and trajectory. */
export const TRAJECTORY_META_KEY = 'nemo-relay/trajectory';
/** `params._meta` key: W3C trace context. */
export const TRACEPARENT_META_KEY = 'traceparent';
/**
 * `params._meta` key the Claude Code CLI (and so the Claude Agent SDK's
 * `query()`) puts in every `tools/call` it sends: the model's `tool_use` id
 * the call runs for. It is the only thing of its caller such a request names.
 */
export const CLAUDE_CODE_TOOL_USE_META_KEY = 'claudecode/toolUseId';

/** Who made an MCP tool call, as the client adapter sends it. */
export type McpCaller = CallerRef;

/** A tool call of the host's, as the caller an MCP call names: its session, and the call when it has an id. */
export interface CallerCall {
  readonly session_id: string;
  readonly tool_call_id?: string;
}

/**
 * The session id an MCP call names its caller by: the session as the
 * recorder's outputs name it (its id as redaction leaves it: the server
 * must not receive what the host's own files may not hold), else the host's.
 */
export function callerSessionId(host: CallerCall, context: TraceContext): string {
  return context.session_id ?? host.session_id;
}

/** The caller an MCP call names for the host's tool call `host`, whose trace context is `context`: its session, call and trajectory. */
export function callerFor(host: CallerCall, context: TraceContext): McpCaller {
  const caller: McpCaller = { session_id: callerSessionId(host, context) };
  if (host.tool_call_id !== undefined) caller.tool_call_id = host.tool_call_id;
  if (context.trajectory?.trajectory_id !== undefined) caller.trajectory_id = context.trajectory.trajectory_id;
  if (context.trajectory?.trajectory_path !== undefined) caller.trajectory_path = context.trajectory.trajectory_path;
  return caller;
}

/**
 * A request's `_meta`: the caller's own (`existing`: what the program put
 * there, or what its own resolver returned) with the adapter's keys over
 * it, but a `traceparent` the caller set stays (OpenTelemetry's MCP
 * instrumentation sets its own; the server follows `nemo-relay/propagation`
 * first either way). The one rule of every client-side adapter.
 */
export function withAdapterMeta(existing: unknown, ours: Record<string, unknown>): Record<string, unknown> {
  const meta: Record<string, unknown> = isRecord(existing) ? { ...existing } : {};
  for (const [key, value] of Object.entries(ours)) {
    if (key === TRACEPARENT_META_KEY && typeof meta[key] === 'string') continue;
    meta[key] = value;
  }
  return meta;
}

/** The caller a request's `_meta` names. */
export function callerOf(meta: unknown): McpCaller | undefined {
  return callerRefOf(isRecord(meta) ? meta[CALLER_META_KEY] : undefined);
}

/**
 * The caller a request's `_meta` names: the client adapter's
 * `nemo-relay/caller`, else the tool call the Claude Code CLI names
 * (`claudecode/toolUseId`; it names no session or trajectory).
 */
export function requestCallerOf(meta: unknown): McpCaller | undefined {
  const toolUseId = metaString(meta, CLAUDE_CODE_TOOL_USE_META_KEY);
  return callerOf(meta) ?? (toolUseId === undefined ? undefined : { tool_call_id: toolUseId });
}

/**
 * The server's trajectory a result names when it answers the tool call
 * `toolCallId`: the caller it names back must be that call, so a result
 * cannot make the host link a call it does not answer.
 */
export function trajectoryAnswering(result: unknown, toolCallId: string): TrajectoryRef | undefined {
  const caller = callerOf(isRecord(result) ? result._meta : undefined);
  return caller?.tool_call_id === toolCallId ? trajectoryOf(result) : undefined;
}

/** The server's trajectory a result's `_meta` names (it needs an id or a path). */
export function trajectoryOf(result: unknown): TrajectoryRef | undefined {
  const meta = isRecord(result) ? result._meta : undefined;
  return trajectoryRefOf(isRecord(meta) ? meta[TRAJECTORY_META_KEY] : undefined);
}

/**
 * `result` without what an instrumented server adds to its `_meta` for the
 * client adapter (its trajectory, and the caller it answered), and without
 * `_meta` when that was all it held: the result as the tool returned it.
 * A framework that passes `_meta` on (LangChain's MCP adapters give it to
 * the model with the text) would otherwise show them to the agent.
 */
export function asToolReturned(result: unknown): unknown {
  if (!isRecord(result) || !isRecord(result._meta) || !(TRAJECTORY_META_KEY in result._meta || CALLER_META_KEY in result._meta)) return result;
  const { [TRAJECTORY_META_KEY]: _, [CALLER_META_KEY]: __, ...meta } = result._meta;
  const { _meta: ___, ...rest } = result;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/** A string field of `_meta`, when it is one. */
export function metaString(meta: unknown, key: string): string | undefined {
  const value = isRecord(meta) ? meta[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A tool result as the model would read it: its text content joined, else the result as JSON. */
export function resultText(result: unknown): string {
  if (isRecord(result) && Array.isArray(result.content)) {
    const texts = result.content.filter((part): part is { type: 'text'; text: string } => isRecord(part) && part.type === 'text' && typeof part.text === 'string').map((part) => part.text);
    if (texts.length === result.content.length && texts.length > 0) return texts.join('\n');
  }
  try {
    return JSON.stringify(result) ?? '';
  } catch {
    return String(result);
  }
}

/**
 * The text of an MCP tool result that says it failed (`isError`), as a client hands it on: the result itself (the
 * MCP SDK's `callTool`, the AI SDK's MCP tools, which return such a result as the tool's output), or its `content`
 * list carrying `isError` (the OpenAI Agents SDK's `callTool`); else undefined. Clients give it to the model as an
 * ordinary output, so the adapters record the call failed by this one rule, as the server records it.
 */
export function mcpErrorText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const content = Array.isArray(value) ? value : record.content;
  const isError = record.isError ?? (Array.isArray(content) ? (content as unknown as Record<string, unknown>).isError : undefined);
  return isError === true ? resultText({ content }) : undefined;
}
