/**
 * The client side: `instrumentMcpClient(client, hooks)` makes every
 * `tools/call` request of an `@modelcontextprotocol/sdk` `Client` carry the
 * trace context of the host's tool call it does the work of, and records
 * where the server wrote its trajectory.
 *
 * The host records its tool call as usual (`pre_tool_call`, then
 * `await client.callTool(...)`, then `post_tool_call`). Which open tool call
 * an MCP request belongs to is decided, in order, by the caller's
 * `toolCall` option, by the framework adapter whose tool is running (an AI
 * SDK or OpenAI Agents tool calling MCP from its `execute`), and by the
 * registry's open tool calls: the oldest unclaimed one whose name is the
 * MCP tool's name (or ends with it after a `_`, `.`, `:`, `/` or `-`, as in
 * `mcp__weather__forecast`), one with the request's arguments first, else
 * the only one open. Inside an instrumented MCP server's tool handler (an
 * MCP server calling another), only that handler's session is searched, and
 * its own tool call is the one when none matches. A request tied to none
 * goes out unchanged.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import type { TraceContext } from '../../hooks/index.ts';
import { consoleLogger, type Logger } from '../../shared/logger.ts';
import { instrumentedBefore, markInstrumented } from './instrumented.ts';
import { jsonEqual } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import type { TrajectoryRef } from '../../shared/trajectory-ref.ts';
import { currentToolFrame, runInToolFrame, type ToolFrame } from '../core/context.ts';
import { argumentsObject } from '../core/shapes.ts';
import { Guard } from '../core/guard.ts';
import { runningToolCall } from '../core/run.ts';
import { requestHandlersOf, wrapRequestHandlers } from './handlers.ts';
import { CALLER_META_KEY, PROPAGATION_META_KEY, TRACEPARENT_META_KEY, asToolReturned, callerFor, callerOf, callerSessionId, mcpErrorText, trajectoryOf, withAdapterMeta } from './meta.ts';
import { currentMcpSession } from './server.ts';

/** The part of an MCP `Client` the adapter uses: every request goes through `request()` (`callTool` included). */
export interface McpClientLike {
  request(request: { method: string; params?: unknown }, ...rest: any[]): Promise<any>;
}

/** An MCP tool call as the client sends it. */
export interface McpToolRequest {
  readonly name: string;
  readonly arguments?: unknown;
}

/** The host's tool call an MCP call does the work of. */
export interface HostToolCall {
  readonly session_id: string;
  readonly tool_call_id?: string;
  /** For hosts whose tool calls have no id: the turn and the tool's name, as their hooks give them. */
  readonly turn_id?: string;
  readonly tool_name?: string;
}

/** Options of `instrumentMcpClient`. */
export interface McpClientOptions {
  /** Says which of the host's tool calls an MCP call belongs to; `undefined` falls back to the adapter's own choice. */
  toolCall?: (request: McpToolRequest) => HostToolCall | undefined;
  /** Where the adapter reports its own failures (it never throws into the call). Default: `console`. */
  logger?: Logger;
}

interface OpenCall extends HostToolCall {
  readonly key: string;
  /** The host's arguments (`args`), to tell same-named calls open at once apart. */
  readonly args: unknown;
  claimed: number;
  /** A request carrying its caller went out for it: a result naming it may link it. */
  sent: boolean;
  /** The session id that request named its caller by (the recorder's, as redaction leaves it). */
  sentAs?: string;
}

const INSTRUMENTED = Symbol.for('nemo-relay-hooks.mcp.client');
const SEPARATORS = new Set(['_', '.', ':', '/', '-']);

/** The host's open tool calls, one table per registry, kept from its `pre_tool_call`/`post_tool_call`. */
class OpenToolCalls {
  readonly #open = new Map<string, OpenCall>();

  constructor(hooks: HookRegistry) {
    hooks.on('pre_tool_call', (payload) => {
      const call = openCallOf(payload);
      if (call !== undefined) this.#open.set(call.key, call);
    });
    hooks.on('post_tool_call', (payload) => {
      const call = openCallOf(payload);
      if (call !== undefined) this.#open.delete(call.key);
    });
  }

  /**
   * The open call a request for tool `name` with `args` belongs to: the
   * oldest unclaimed one named after the tool, one with the same arguments
   * first, else the only one open; undefined for none. Oldest first: a host
   * running tool calls at once opens them in the order it starts them.
   * `sessionId` limits the search to one session.
   */
  match(name: string, args: unknown, sessionId?: string): OpenCall | undefined {
    let only: OpenCall | undefined;
    let count = 0;
    let named: OpenCall | undefined;
    for (const call of this.#open.values()) {
      if (sessionId !== undefined && call.session_id !== sessionId) continue;
      count += 1;
      only = call;
      if (call.claimed !== 0 || call.tool_name === undefined || !namesTool(call.tool_name, name)) continue;
      if (jsonEqual(argumentsObject(call.args), args)) return call;
      named ??= call;
    }
    return named ?? (count === 1 ? only : undefined);
  }

  get(key: string): OpenCall | undefined {
    return this.#open.get(key);
  }

  /** The open call a request went out for, naming its caller `sessionId` and `toolCallId`. */
  sentFor(sessionId: string, toolCallId: string): OpenCall | undefined {
    const direct = this.#open.get(callKey(sessionId, toolCallId));
    if (direct !== undefined && direct.sent && direct.sentAs === sessionId) return direct;
    // Named by the session id as redaction left it: not the key the host's own id makes.
    for (const call of this.#open.values()) if (call.sent && call.sentAs === sessionId && call.tool_call_id === toolCallId) return call;
    return undefined;
  }
}

const tables = new WeakMap<HookRegistry, OpenToolCalls>();

function openCallOf(payload: Record<string, unknown>): OpenCall | undefined {
  const sessionId = payload.session_id;
  if (typeof sessionId !== 'string' || sessionId === '') return undefined;
  const toolCallId = typeof payload.tool_call_id === 'string' && payload.tool_call_id !== '' ? payload.tool_call_id : undefined;
  const toolName = typeof payload.tool_name === 'string' ? payload.tool_name : undefined;
  const turnId = typeof payload.turn_id === 'string' ? payload.turn_id : undefined;
  if (toolCallId === undefined && toolName === undefined) return undefined;
  const key = toolCallId !== undefined ? callKey(sessionId, toolCallId) : `${sessionId}\0${turnId ?? ''}\0${toolName}`;
  return {
    key,
    args: payload.args,
    claimed: 0,
    sent: false,
    session_id: sessionId,
    ...(toolCallId !== undefined ? { tool_call_id: toolCallId } : {}),
    ...(turnId !== undefined ? { turn_id: turnId } : {}),
    ...(toolName !== undefined ? { tool_name: toolName } : {}),
  };
}

/** The table key of a tool call with an id. */
function callKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}\0${toolCallId}`;
}

/** `hostName` names the MCP tool `mcpName`: equal, or ending with it after a separator. */
function namesTool(hostName: string, mcpName: string): boolean {
  if (hostName === mcpName) return true;
  return hostName.length > mcpName.length && hostName.endsWith(mcpName) && SEPARATORS.has(hostName[hostName.length - mcpName.length - 1]!);
}

/**
 * Instruments `client` (in place, before or after it connects) so that each
 * `tools/call` request tied to one of the host's open tool calls carries, in
 * `params._meta`, the W3C `traceparent` of that tool call's span and NeMo
 * Relay's propagation context under `nemo-relay/propagation` (from the
 * recorder registered on `hooks`, e.g. the NeMo Relay plugin), and its
 * caller under `nemo-relay/caller`. When the server (instrumented with
 * `instrumentMcpServer`) answers with where it wrote its trajectory, the
 * host's tool call references it (`subagent_stop` with `child_trajectory`),
 * and the result goes on without that reference: the program gets what the
 * tool returned. Errors are the client's own. Returns `client`. A client is
 * instrumented once: a second call with the same hooks does nothing, and one
 * with other hooks does nothing but warn (a request names one caller).
 */
export function instrumentMcpClient<C extends McpClientLike>(client: C, hooks: HookRegistry, options: McpClientOptions = {}): C {
  checkAdapterArguments('instrumentMcpClient', 'the second argument', hooks, options);
  if (instrumentedBefore(client, INSTRUMENTED, hooks, options.logger, 'instrumentMcpClient', "this client's requests are tied only to the tool calls of the hooks it was first instrumented with")) return client;
  const linker = new McpCallLinker(hooks, options);
  const original = client.request.bind(client);
  const request = async (message: { method: string; params?: unknown }, ...rest: unknown[]): Promise<unknown> => {
    if (!isRecord(message) || message.method !== 'tools/call' || !isRecord(message.params)) return original(message, ...rest);
    const link = await linker.link(message.params);
    if (link === undefined) return original(message, ...rest);
    try {
      return link.answered(await original({ ...message, params: link.params }, ...rest));
    } finally {
      link.release();
    }
  };
  Object.defineProperty(client, 'request', { value: request, configurable: true, writable: true });
  // The server's requests (sampling, elicitation): every one goes through the handler the client set for its method.
  const handlers = requestHandlersOf(client);
  if (handlers !== undefined) wrapRequestHandlers(handlers, (_method, handler) => (message, extra) => linker.serverRequest(message, (plain) => handler(plain, extra)));
  markInstrumented(client, INSTRUMENTED, hooks);
  return client;
}

/** One `tools/call` request tied to a host tool call. */
export interface McpCallLink {
  /** The request's params, with the trace context and the caller in `_meta`. */
  readonly params: Record<string, unknown>;
  /**
   * The host's tool call references the trajectory `result` names; returns
   * `result` without what the server added for the adapter (the trajectory,
   * the caller named back), as the tool returned it.
   */
  answered(result: unknown): unknown;
  /** The request is over (answered, failed or cancelled): a later request may be tied to its host call again. */
  release(): void;
}

/**
 * Ties `tools/call` requests to the host's tool calls, writes their
 * `_meta` and reads their answers: the one piece behind
 * `instrumentMcpClient` (a `Client`'s `request`), `instrumentMcpTransport`
 * (a transport's messages) and `openAIAgentsMcpOptions` (the Agents SDK's
 * MCP servers, which show their options the result but not its request).
 * Never throws: a failure is logged once and the request goes out as it was.
 */
export class McpCallLinker {
  readonly #hooks: HookRegistry;
  readonly #options: McpClientOptions;
  readonly #open: OpenToolCalls;
  readonly #guard: Guard;
  /**
   * The framework tool calls (their frames) whose linked requests are in
   * flight, by the caller each request names: a server's request made while
   * it serves one of them names that caller back.
   */
  readonly #serving = new Map<string, ToolFrame>();

  constructor(hooks: HookRegistry, options: McpClientOptions) {
    let table = tables.get(hooks);
    if (table === undefined) {
      table = new OpenToolCalls(hooks);
      tables.set(hooks, table);
    }
    this.#hooks = hooks;
    this.#options = options;
    this.#open = table;
    this.#guard = new Guard(options.logger ?? consoleLogger);
  }

  /**
   * The link of a request with `params`, or undefined when it is tied to no
   * host tool call, or already names its caller (an instrumented `Client`
   * over an instrumented transport): it goes out unchanged. The host call is
   * chosen and claimed before the first `await`, so requests started at once
   * each get their own.
   */
  async link(params: Record<string, unknown>): Promise<McpCallLink | undefined> {
    if (callerOf(params._meta) !== undefined) return undefined;
    const call = this.#guard.run('choosing the tool call of an MCP request', () => hostCallOf(params, this.#open, this.#options));
    if (call === undefined) return undefined;
    // The framework tool running this request, else the host's call it was paired with, when an adapter records it
    // (a LangChain tool tells the client nothing, but its call is open): a server's request for it runs as its code.
    const frame = currentToolFrame() ?? (call.host.tool_call_id === undefined ? undefined : runningToolCall(this.#hooks, call.host.session_id, call.host.tool_call_id));
    const claimed = call.key === undefined ? undefined : this.#open.get(call.key);
    if (claimed !== undefined) claimed.claimed += 1;
    let released = false;
    const context = await this.#hooks.traceContext(call.host);
    const meta = this.#guard.run('writing the MCP request trace context', () => metaWith(params._meta, call.host, context));
    if (meta !== undefined) this.#markSent(call.host, callerSessionId(call.host, context));
    const named = callerOf(meta);
    const serving = frame === undefined || named?.session_id === undefined || named.tool_call_id === undefined ? undefined : callKey(named.session_id, named.tool_call_id);
    if (serving !== undefined) {
      // A request whose link is never released (the Agents SDK's options make one per call and see no end): its
      // entry goes once its run has ended.
      for (const [key, held] of this.#serving) if (held.run.ended) this.#serving.delete(key);
      this.#serving.set(serving, frame!);
    }
    return {
      params: meta === undefined ? params : { ...params, _meta: meta },
      answered: (result) => {
        this.#guard.run('reading the MCP server trajectory', () => linkTrajectory(this.#hooks, call.host, result));
        // A framework may throw its own error for a result that says it failed (LangChain's MCP tools): its adapter
        // records the call failed as the result said, the rule every adapter follows.
        if (frame !== undefined) {
          this.#guard.run('reading whether the MCP result failed', () => {
            const failure = mcpErrorText(result);
            if (failure !== undefined) frame.run.toolReportedFailure(frame.toolCallId, failure);
          });
        }
        return this.#withoutAdded(result);
      },
      release: () => {
        if (released) return;
        released = true;
        if (serving !== undefined && this.#serving.get(serving) === frame) this.#serving.delete(serving);
        if (claimed !== undefined) claimed.claimed -= 1;
      },
    };
  }

  /**
   * A request the server sent this client (sampling, elicitation, …),
   * answered by `answer`. When it names the caller of a call it serves (an
   * instrumented server names it) and an adapter records the host's tool
   * call that request was made for (a framework tool running it, or the open
   * call it was paired with), `answer` runs as code of that tool call: a model call it makes
   * is the tool call's sub-agent, where the framework puts any run started
   * inside its tool, not a turn of its own. `answer` gets the request without
   * that name, as the server's program sent it.
   */
  serverRequest<T>(message: unknown, answer: (message: unknown) => T): T {
    const params = isRecord(message) ? message.params : undefined;
    const caller = this.#guard.run('reading the caller an MCP server request names', () => callerOf(isRecord(params) ? params._meta : undefined));
    if (caller === undefined) return answer(message);
    const frame = caller.session_id === undefined || caller.tool_call_id === undefined ? undefined : this.#serving.get(callKey(caller.session_id, caller.tool_call_id));
    // The same removal as a result's: the request's params are a record with `_meta`, as a result is.
    const plain = { ...(message as Record<string, unknown>), params: asToolReturned(params) };
    return frame === undefined ? answer(plain) : runInToolFrame(frame, () => answer(plain));
  }

  /**
   * A result that reaches the adapter without its request (the Agents SDK's
   * `customDataExtractor` gets no call id): the host call it answered is the
   * caller the server names back in its `_meta`, and only an open call of
   * this registry that a request went out for, so a server cannot make the
   * host link a call it was never sent. Links it as `answered` does; returns
   * that host call, or undefined when the result names none of them.
   */
  answeredByCaller(result: unknown): HostToolCall | undefined {
    const host = this.#guard.run('reading the caller an MCP result names', () => this.#sentCallNamedBy(result));
    if (host !== undefined) this.#guard.run('reading the MCP server trajectory', () => linkTrajectory(this.#hooks, host, result));
    return host;
  }

  #withoutAdded(result: unknown): unknown {
    return this.#guard.run('removing what the MCP server added to the result', () => asToolReturned(result)) ?? result;
  }

  /** A request carrying its caller went out for `host`: a result naming it back may link it. */
  #markSent(host: HostToolCall, sentAs: string): void {
    const open = host.tool_call_id === undefined ? undefined : this.#open.get(callKey(host.session_id, host.tool_call_id));
    if (open === undefined) return;
    open.sent = true;
    open.sentAs = sentAs;
  }

  #sentCallNamedBy(result: unknown): HostToolCall | undefined {
    const caller = callerOf(isRecord(result) ? result._meta : undefined);
    if (caller?.session_id === undefined || caller.tool_call_id === undefined) return undefined;
    const open = this.#open.sentFor(caller.session_id, caller.tool_call_id);
    if (open === undefined) return undefined;
    return { session_id: open.session_id, tool_call_id: caller.tool_call_id, ...(open.turn_id !== undefined ? { turn_id: open.turn_id } : {}), ...(open.tool_name !== undefined ? { tool_name: open.tool_name } : {}) };
  }
}

/** The host call a `tools/call` request belongs to, with its table key when it came from the table. */
function hostCallOf(params: Record<string, unknown>, open: OpenToolCalls, options: McpClientOptions): { host: HostToolCall; key?: string } | undefined {
  const name = typeof params.name === 'string' ? params.name : '';
  const chosen = options.toolCall?.({ name, arguments: params.arguments });
  if (chosen !== undefined && typeof chosen.session_id === 'string' && chosen.session_id !== '') return { host: chosen };
  const frame = currentToolFrame();
  if (frame !== undefined) return { host: { session_id: frame.run.sessionId, tool_call_id: frame.toolCallId } };
  // An MCP server's handler calling another server: its session's calls, else the handler's own tool call.
  const serving = currentMcpSession();
  const call = open.match(name, params.arguments ?? {}, serving?.session_id);
  if (call === undefined) return serving === undefined ? undefined : { host: { session_id: serving.session_id, tool_call_id: serving.tool_call_id, tool_name: serving.tool_name } };
  const host: HostToolCall = {
    session_id: call.session_id,
    ...(call.tool_call_id !== undefined ? { tool_call_id: call.tool_call_id } : {}),
    ...(call.turn_id !== undefined ? { turn_id: call.turn_id } : {}),
    ...(call.tool_name !== undefined ? { tool_name: call.tool_name } : {}),
  };
  return { host, key: call.key };
}

/** The request's `_meta` with the trace context added; a `traceparent` the caller set stays. Undefined when nothing is known. */
function metaWith(existing: unknown, host: HostToolCall, context: TraceContext): Record<string, unknown> | undefined {
  if (context.propagation === undefined && context.traceparent === undefined) return undefined;
  const ours: Record<string, unknown> = {};
  if (context.traceparent !== undefined) ours[TRACEPARENT_META_KEY] = context.traceparent;
  if (context.propagation !== undefined) ours[PROPAGATION_META_KEY] = context.propagation;
  ours[CALLER_META_KEY] = callerFor(host, context);
  return withAdapterMeta(existing, ours);
}

/** The host's tool call references the server's trajectory, when the server named one. */
function linkTrajectory(hooks: HookRegistry, host: HostToolCall, result: unknown): void {
  const ref = trajectoryOf(result);
  if (ref !== undefined) referenceServerTrajectory(hooks, host, ref, isRecord(result) && result.isError === true);
}

/**
 * The host's open tool call references the MCP server's trajectory `ref`
 * (`subagent_stop` with `child_trajectory`, kept for the call and written
 * on its end): before its `post_tool_call`.
 */
export function referenceServerTrajectory(hooks: HookRegistry, host: HostToolCall, ref: TrajectoryRef, failed: boolean): void {
  hooks.emit('subagent_stop', () => ({
    session_id: host.session_id,
    parent_session_id: host.session_id,
    ...(host.turn_id !== undefined ? { parent_turn_id: host.turn_id, turn_id: host.turn_id } : {}),
    ...(host.tool_call_id !== undefined ? { tool_call_id: host.tool_call_id } : {}),
    ...(host.tool_name !== undefined ? { tool_name: host.tool_name } : {}),
    ...(ref.session_id !== undefined ? { child_session_id: ref.session_id } : {}),
    child_status: failed ? 'failed' : 'completed',
    child_trajectory: ref,
  }));
}
