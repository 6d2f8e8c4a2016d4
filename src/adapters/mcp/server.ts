/**
 * The server side: `instrumentMcpServer(server, hooks)` records each
 * `tools/call` an `@modelcontextprotocol/sdk` server answers as a session
 * of its own that continues its caller's trace: the request's
 * `nemo-relay/propagation` context (else its W3C `traceparent`, else the
 * `traceparent` header of the HTTP request it came in) goes to
 * `on_session_start` as `propagation_context`, and the caller it names as
 * `caller`. The tool's run is that session's tool call; inside the handler,
 * `currentMcpSession()` gives the session its own hooks (or a framework
 * adapter's `sessionId`) should use. For a caller that named itself, the
 * result's `_meta` says where the session's trajectory is written, for the
 * caller's observation to point at, and names that caller back.
 *
 * It wraps the `tools/call` request handler of the low-level `Server` (an
 * `McpServer`'s `.server`), the one every tool call of either goes through,
 * whether the tools were registered before or after: the SDK keeps its
 * handlers in a map, and a handler set later is wrapped when it is set. A
 * handler set later may hand the request on to the one it replaced, already
 * wrapped (a middleware that read it back): the request is recorded once,
 * by the outermost wrapper.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { HookRegistry } from '../../hooks/registry.ts';
import { HOOK_NAMES } from '../../hooks/index.ts';
import { propagationContextFromTraceparent, propagationContextToJson } from '../../formats/propagation.ts';
import { consoleLogger, safeLog, type Logger } from '../../shared/logger.ts';
import { instrumentedBefore, markInstrumented } from './instrumented.ts';
import { isRecord } from '../../shared/record.ts';
import { Guard } from '../core/guard.ts';
import { runningToolCallById } from '../core/run.ts';
import { isAbortedSignal, reportedToolError } from '../core/shapes.ts';
import { requestHandlersOf, wrapRequestHandlers, type RequestHandler as Handler } from './handlers.ts';
import { receivedTraceparent } from './http-headers.ts';
import { CALLER_META_KEY, PROPAGATION_META_KEY, TRACEPARENT_META_KEY, TRAJECTORY_META_KEY, callerFor, metaString, requestCallerOf, resultText, withAdapterMeta, type McpCaller } from './meta.ts';

/** The session an instrumented tool handler runs in. */
export interface McpSession {
  /** The session's id: what the handler's hooks (or a framework adapter's `sessionId`) should use. */
  readonly session_id: string;
  /** The session's tool call: the caller's tool call id when it sent one. */
  readonly tool_call_id: string;
  /** The MCP tool's name. */
  readonly tool_name: string;
  /** The MCP request's id. */
  readonly request_id: string;
  /** Who called, when the client named itself (`instrumentMcpClient` does; the Claude Code CLI names its tool call only, whose session a server on the agent's own hooks finds). */
  readonly caller?: McpCaller;
  /** `platform` of the session's hooks. */
  readonly platform: string;
}

/** What `sessionId` is given to name a call's session. */
export interface McpCallInfo {
  readonly toolName: string;
  readonly requestId: string;
  readonly caller?: McpCaller;
}

/** Options of `instrumentMcpServer`. */
export interface McpServerOptions {
  /** The session id of a call. Default: `mcp-<server name>-<random uuid>` (one session per call). */
  sessionId?: (call: McpCallInfo) => string | undefined;
  /** `agent_name` of the sessions. Default: the server's name (its `serverInfo.name`). */
  agentName?: string;
  /** `platform` of the sessions' hooks. Default: `mcp`. */
  platform?: string;
  /** Where the adapter reports its own failures (it never throws into the server). Default: `console`. */
  logger?: Logger;
}

/** The part of a low-level MCP `Server` the adapter uses. */
interface LowLevelServer {
  _requestHandlers: Map<string, Handler>;
  _serverInfo?: { name?: unknown; version?: unknown };
  /** How the server sends its client a request (`createMessage`, `elicitInput` and the rest go through it). */
  request?: (request: unknown, ...rest: unknown[]) => unknown;
}

/** The caller of a call made from this process, found on the server's hooks, and the context its session continues. */
interface LocalCaller {
  readonly caller: McpCaller;
  readonly propagation: string;
}

const sessions = new AsyncLocalStorage<McpSession>();
/** What an instrumented server records into: on the server itself, so a second copy of this module sees it too. */
const INSTRUMENTED = Symbol.for('nemo-relay-hooks.mcp.server');
/** The request each open session records, and its recorder: a wrapper reached again for that request hands it on. */
const serving = new WeakMap<McpSession, { recorder: CallRecorder; extra: unknown; requestId: string | undefined }>();

/** Inside an instrumented tool handler: the session that handler's hooks should use; otherwise `undefined`. */
export function currentMcpSession(): McpSession | undefined {
  return sessions.getStore();
}

function lowLevelOf(server: unknown): LowLevelServer | undefined {
  for (const candidate of [isRecord(server) ? server.server : undefined, server]) {
    if (requestHandlersOf(candidate) !== undefined) return candidate as unknown as LowLevelServer;
  }
  return undefined;
}

/**
 * Instruments `server` (an `McpServer` or a low-level `Server`, in place) so
 * that every tool call it answers is recorded into `hooks` as a session
 * continuing its caller's trace. Returns `server`. A server is instrumented
 * once: a second call with the same hooks does nothing, and one with other
 * hooks does nothing but warn (one call, one session, one `_meta` reference:
 * register every plugin on the one registry). A server the adapter does not
 * recognise is left alone, with a warning.
 */
export function instrumentMcpServer<S extends object>(server: S, hooks: HookRegistry, options: McpServerOptions = {}): S {
  checkAdapterArguments('instrumentMcpServer', 'the second argument', hooks, options);
  const logger = options.logger ?? consoleLogger;
  const low = lowLevelOf(server);
  if (low === undefined) {
    safeLog(logger, 'warn', 'mcp adapter: instrumentMcpServer was given no @modelcontextprotocol/sdk Server or McpServer (no request handler map); its tool calls are not recorded');
    return server;
  }
  if (instrumentedBefore(low, INSTRUMENTED, hooks, logger, 'instrumentMcpServer', "this server's tool calls are recorded only into the hooks it was first instrumented with")) return server;
  markInstrumented(low, INSTRUMENTED, hooks);
  const recorder = new CallRecorder(hooks, low, options);
  // Tools registered later (McpServer installs its handler with the first tool): wrapped when set.
  wrapRequestHandlers(low._requestHandlers, (method, handler) => (method === 'tools/call' ? recorder.wrap(handler) : undefined));
  nameCallerInRequests(low);
  return server;
}

/**
 * A request the server sends its client while a handler serves a call
 * (sampling, elicitation: `server.server.createMessage(...)`, `elicitInput(...)`)
 * names that call's caller in its `_meta` (`nemo-relay/caller`), as the
 * call's result does: the client adapter runs its handler as code of the
 * host's tool call that call does the work of (the sampling's model call is
 * that tool call's, not a turn of its own), and removes the key. Only for a
 * caller that named its session: the client adapter, which removes it; any
 * other client would hand it to its program.
 */
function nameCallerInRequests(low: LowLevelServer): void {
  const original = low.request;
  if (typeof original !== 'function') return;
  const request = function (this: unknown, message: unknown, ...rest: unknown[]): unknown {
    const caller = sessions.getStore()?.caller;
    if (caller?.session_id === undefined || !isRecord(message) || typeof message.method !== 'string') return original.call(this, message, ...rest);
    const params = isRecord(message.params) ? message.params : {};
    return original.call(this, { ...message, params: { ...params, _meta: withAdapterMeta(params._meta, { [CALLER_META_KEY]: caller }) } }, ...rest);
  };
  Object.defineProperty(low, 'request', { value: request, configurable: true, writable: true });
}

class CallRecorder {
  readonly #hooks: HookRegistry;
  readonly #low: LowLevelServer;
  readonly #options: McpServerOptions;
  readonly #guard: Guard;

  constructor(hooks: HookRegistry, low: LowLevelServer, options: McpServerOptions) {
    this.#hooks = hooks;
    this.#low = low;
    this.#options = options;
    this.#guard = new Guard(options.logger ?? consoleLogger);
  }

  wrap(handler: Handler): Handler {
    return (request, extra) => this.#call(handler, request, extra);
  }

  #listening(): boolean {
    for (const name of HOOK_NAMES) if (this.#hooks.has(name)) return true;
    return false;
  }

  /** This request is the call an open session of this recorder records: a wrapper reached again from inside it. */
  #recording(extra: unknown): boolean {
    const session = sessions.getStore();
    const entry = session === undefined ? undefined : serving.get(session);
    if (entry?.recorder !== this) return false;
    return entry.extra === extra || (entry.requestId !== undefined && entry.requestId === requestIdOf(extra));
  }

  async #call(handler: Handler, request: unknown, extra: unknown): Promise<unknown> {
    // A handler set over the wrapped one that hands the request on to it (wrapped in turn when it was set).
    if (!this.#listening() || this.#recording(extra)) return handler(request, extra);
    const finding = this.#guard.run('finding the MCP call caller in this process', () => this.#callerInProcess(request));
    const local = finding === undefined ? undefined : await finding;
    const session = this.#guard.run('opening the MCP call session', () => this.#open(request, extra, local));
    if (session === undefined) return handler(request, extra);
    const args = isRecord(request) && isRecord(request.params) && isRecord(request.params.arguments) ? request.params.arguments : {};
    const hooks = this.#hooks;
    const ids = { session_id: session.session_id, tool_call_id: session.tool_call_id, platform: session.platform };
    hooks.emit('pre_tool_call', () => ({ ...ids, tool_name: session.tool_name, args }));
    const started = Date.now();
    let result: unknown;
    try {
      result = await sessions.run(session, () => handler(request, extra));
    } catch (error) {
      if (await this.#cancelled(session, args, extra, started)) throw error;
      hooks.emit('post_tool_call', () => ({
        ...ids,
        tool_name: session.tool_name,
        args,
        status: 'error',
        error_type: error instanceof Error ? error.name : typeof error,
        error_message: error instanceof Error ? error.message : String(error),
        duration_ms: Date.now() - started,
      }));
      await this.#close(session, 'mcp_call_failed');
      throw error;
    }
    // The SDK drops the answer to a cancelled request: the client never sees it.
    if (await this.#cancelled(session, args, extra, started)) return result;
    // An `isError` answer is named as the client's adapters name the same failure (`ToolError`): one trace, one error type.
    const failure = isRecord(result) && result.isError === true ? reportedToolError(resultText(result)) : undefined;
    const failed = failure !== undefined;
    hooks.emit('post_tool_call', () => ({
      ...ids,
      tool_name: session.tool_name,
      args,
      result: resultText(result),
      status: failed ? 'error' : 'ok',
      ...(failure !== undefined ? { error_type: failure.name, error_message: failure.message } : {}),
      duration_ms: Date.now() - started,
    }));
    const trajectory = await this.#close(session, failed ? 'mcp_call_failed' : 'mcp_call_complete');
    // Only a caller that named itself gets the reference, and the caller it answered as it named it (a client that
    // sees only the result, as the OpenAI Agents SDK's options do, tells its calls apart by it): the client adapter,
    // which removes both, or the Claude Code CLI, which never shows the model a result's `_meta`. Any other client
    // would pass them on to its program (LangChain's MCP adapters show a result's `_meta` to the model).
    if (trajectory === undefined || !isRecord(result) || session.caller === undefined) return result;
    return { ...result, _meta: { ...(isRecord(result._meta) ? result._meta : {}), [TRAJECTORY_META_KEY]: trajectory, [CALLER_META_KEY]: session.caller } };
  }

  /**
   * When the client cancelled the request (`notifications/cancelled`, which
   * aborts `extra.signal`), records the call as failed with error type
   * `cancelled`, whatever the handler did after, and closes the session.
   */
  async #cancelled(session: McpSession, args: Record<string, unknown>, extra: unknown, started: number): Promise<boolean> {
    const signal = isRecord(extra) ? extra.signal : undefined;
    if (!isAbortedSignal(signal)) return false;
    const ids = { session_id: session.session_id, tool_call_id: session.tool_call_id, platform: session.platform };
    const reason: unknown = signal.reason;
    const message = `the client cancelled the call${reason === undefined ? '' : `: ${reason instanceof Error ? reason.message : String(reason)}`}`;
    this.#hooks.emit('post_tool_call', () => ({ ...ids, tool_name: session.tool_name, args, result: message, status: 'error', error_type: 'cancelled', error_message: message, duration_ms: Date.now() - started }));
    await this.#close(session, 'mcp_call_cancelled');
    return true;
  }

  /**
   * The caller of a request that names only its tool call (the Claude Code
   * CLI's `claudecode/toolUseId`: no session, no trace context) when that
   * call is running in this process on the server's own hooks (an
   * in-process `createSdkMcpServer` server on the agent's registry): the
   * call's session, trajectory and trace context, as the client adapter
   * would have sent them, so the session nests under that call as a linked
   * call from another process does. Undefined otherwise: the call is then
   * recorded as the request names it.
   */
  #callerInProcess(request: unknown): Promise<LocalCaller | undefined> | undefined {
    const meta = isRecord(request) && isRecord(request.params) ? request.params._meta : undefined;
    const named = requestCallerOf(meta);
    if (named?.tool_call_id === undefined || named.session_id !== undefined || receivedPropagation(meta) !== undefined) return undefined;
    const running = runningToolCallById(this.#hooks, named.tool_call_id);
    if (running === undefined) return undefined;
    const host = { session_id: running.run.sessionId, tool_call_id: running.toolCallId };
    // traceContext never rejects; what is made of its answer is guarded as the lookup is.
    return this.#hooks.traceContext(host).then((context) =>
      this.#guard.run('finding the MCP call caller in this process', () => {
        const propagation = continuedPropagation(context.propagation, context.traceparent);
        return propagation === undefined ? undefined : { caller: callerFor(host, context), propagation };
      }),
    );
  }

  #open(request: unknown, extra: unknown, local: LocalCaller | undefined): McpSession {
    const params = isRecord(request) && isRecord(request.params) ? request.params : {};
    const meta = params._meta;
    const toolName = typeof params.name === 'string' ? params.name : 'unknown';
    const sent = requestIdOf(extra);
    const requestId = sent ?? randomUUID();
    const caller = local?.caller ?? requestCallerOf(meta);
    const info = this.#low._serverInfo;
    const serverName = typeof info?.name === 'string' && info.name !== '' ? info.name : 'server';
    const chosen = this.#options.sessionId?.({ toolName, requestId, ...(caller !== undefined ? { caller } : {}) });
    const session: McpSession = {
      session_id: typeof chosen === 'string' && chosen !== '' ? chosen : `mcp-${serverName}-${randomUUID()}`,
      tool_call_id: caller?.tool_call_id ?? `mcp-request-${requestId}`,
      tool_name: toolName,
      request_id: requestId,
      platform: this.#options.platform ?? 'mcp',
      ...(caller !== undefined ? { caller } : {}),
    };
    serving.set(session, { recorder: this, extra, requestId: sent });
    // A client that is not ours may send its context only in the HTTP request's headers (an OpenTelemetry-instrumented
    // fetch under a plain MCP client): `_meta`, which names the MCP call itself, comes first.
    const propagation = local?.propagation ?? receivedPropagation(meta) ?? continuedPropagation(undefined, receivedTraceparent(extra));
    this.#hooks.emit('on_session_start', () => ({
      session_id: session.session_id,
      platform: session.platform,
      agent_name: this.#options.agentName ?? serverName,
      ...(typeof info?.version === 'string' && info.version !== '' ? { agent_version: info.version } : {}),
      ...(propagation !== undefined ? { propagation_context: propagation } : {}),
      ...(caller !== undefined ? { caller } : {}),
    }));
    return session;
  }

  /** Asks where the session's trajectory is written, then closes the session. */
  async #close(session: McpSession, reason: string): Promise<{ session_id?: string; trajectory_id?: string; trajectory_path?: string } | undefined> {
    let trajectory: { session_id?: string; trajectory_id?: string; trajectory_path?: string } | undefined;
    try {
      trajectory = (await this.#hooks.traceContext({ session_id: session.session_id })).trajectory;
    } catch {
      // traceContext never rejects; nothing to link if it did.
    }
    this.#hooks.emit('on_session_finalize', () => ({ session_id: session.session_id, platform: session.platform, reason }));
    return trajectory;
  }
}

/** The JSON-RPC id of the request the SDK's `extra` is for, as text. */
function requestIdOf(extra: unknown): string | undefined {
  return isRecord(extra) && (typeof extra.requestId === 'string' || typeof extra.requestId === 'number') ? String(extra.requestId) : undefined;
}

/** The context a request's `_meta` continues, as native's JSON text. */
function receivedPropagation(meta: unknown): string | undefined {
  return continuedPropagation(metaString(meta, PROPAGATION_META_KEY), metaString(meta, TRACEPARENT_META_KEY));
}

/** The caller's context as native's JSON text: its NeMo Relay context, else one continuing its W3C traceparent. */
function continuedPropagation(text: string | undefined, traceparent: string | undefined): string | undefined {
  if (text !== undefined) return text;
  const context = traceparent === undefined ? undefined : propagationContextFromTraceparent(traceparent);
  return context === undefined ? undefined : propagationContextToJson(context);
}

