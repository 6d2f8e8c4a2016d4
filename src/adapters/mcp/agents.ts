/**
 * The OpenAI Agents SDK's own MCP servers (`MCPServerStdio`,
 * `MCPServerStreamableHttp`, `MCPServerSSE`) create their MCP `Client`
 * inside, out of the program's reach: `openAIAgentsMcpOptions(hooks)` gives
 * the two extension points the SDK offers on them instead, to spread into
 * the server's options; a resolver or extractor of the program's own is
 * handed in and called from them. `toolMetaResolver` writes the request's
 * `_meta` as `instrumentMcpClient` does (over the program's); and
 * `customDataExtractor` reads the result's `_meta` and links the agent's
 * tool call to the server's trajectory (a result with `isError` makes the
 * call failed whether or not these options are given: the Agents adapter
 * reads it from the server's `callTool`). It adds no custom data of its
 * own. Both go through the one `McpCallLinker` the instrumented `Client`
 * and transport use.
 *
 * Unlike those, the options cannot give the program the result without what
 * the server added to its `_meta` (its trajectory, the caller named back):
 * the SDK calls the extractor after the tool's output is made, with a copy.
 * The model does not see it: the SDK's tool output is the result's
 * `content` (or its `structuredContent`), never the result's `_meta`.
 *
 * The SDK's types are described here, not imported: this module loads
 * without `@openai/agents`, and its functions fit the SDK's
 * `MCPToolMetaResolver` and `MCPToolCustomDataExtractor`.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import { isRecord } from '../../shared/record.ts';
import { McpCallLinker, type McpClientOptions } from './client.ts';
import { withAdapterMeta } from './meta.ts';

/** What the SDK gives a `toolMetaResolver` (its `MCPToolMetaContext`); the adapter reads the tool's name and arguments. */
export interface AgentsMcpMetaContext {
  readonly toolName: string;
  readonly arguments: Record<string, unknown> | null;
}

/** What the SDK gives an MCP server's `customDataExtractor` (its `MCPToolCustomDataContext`); the adapter reads the result's `_meta` and `isError`. */
export interface AgentsMcpResultContext {
  readonly resultMeta?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly toolOutput?: unknown;
}

/** The options to spread into an Agents SDK MCP server's. */
export interface AgentsMcpServerOptions<M extends AgentsMcpMetaContext = AgentsMcpMetaContext, R extends AgentsMcpResultContext = AgentsMcpResultContext> {
  toolMetaResolver(context: M): Promise<Record<string, unknown> | undefined>;
  customDataExtractor(context: R): Promise<Record<string, unknown> | undefined>;
}

/** Options of `openAIAgentsMcpOptions`: `instrumentMcpClient`'s, and the program's own resolver and extractor. */
export interface AgentsMcpOptions<M extends AgentsMcpMetaContext = AgentsMcpMetaContext, R extends AgentsMcpResultContext = AgentsMcpResultContext> extends McpClientOptions {
  /**
   * Your `toolMetaResolver`, called with the SDK's context: the request's
   * `_meta` is what it returns with the adapter's keys over it
   * (`nemo-relay/propagation`, `nemo-relay/caller`, and `traceparent` unless
   * yours set one). What it throws is the SDK's to handle, as without the adapter.
   */
  toolMetaResolver?: (context: M) => Record<string, unknown> | null | undefined | Promise<Record<string, unknown> | null | undefined>;
  /** Your `customDataExtractor`: the tool output's custom data is what it returns (the adapter adds none). */
  customDataExtractor?: (context: R) => Record<string, unknown> | null | undefined | Promise<Record<string, unknown> | null | undefined>;
}

/**
 * The options that make an OpenAI Agents SDK MCP server's tool calls
 * continue the agent's trace, as `instrumentMcpClient` does for a `Client`
 * you own: spread them into the server's options
 * (`new MCPServerStdio({ name, fullCommand, ...openAIAgentsMcpOptions(hooks) })`).
 * Each `tools/call` carries the trace context of the agent's tool call it
 * does the work of (recorded by `instrumentOpenAIAgents` on the same
 * `hooks`), and when the server (instrumented with `instrumentMcpServer`)
 * answers with its trajectory, the agent's tool call references it. A
 * `toolMetaResolver` or `customDataExtractor` of your own goes in
 * `options`, and is called from these.
 */
export function openAIAgentsMcpOptions<M extends AgentsMcpMetaContext = AgentsMcpMetaContext, R extends AgentsMcpResultContext = AgentsMcpResultContext>(
  hooks: HookRegistry,
  options: AgentsMcpOptions<M, R> = {},
): AgentsMcpServerOptions<M, R> {
  checkAdapterArguments('openAIAgentsMcpOptions', 'the first argument', hooks, options);
  const linker = new McpCallLinker(hooks, options);
  const own = { resolver: options.toolMetaResolver, extractor: options.customDataExtractor };
  return {
    async toolMetaResolver(context) {
      // Ours first: the host call is claimed before any await, so calls started at once each get their own. Never
      // released: the SDK makes one request per tool call, and the table forgets the call when it ends.
      const linking = linker.link({ name: context.toolName, arguments: context.arguments ?? {} });
      let theirs: unknown;
      try {
        theirs = await own.resolver?.(context);
      } catch (error) {
        // The SDK fails the call with it, as without us; no request goes out, and the call's end releases its claim.
        await linking;
        throw error;
      }
      const ours = (await linking)?.params._meta;
      // Nothing of ours (the request is tied to no open call), or theirs is not an object (the SDK refuses it with its
      // own error): theirs as it is.
      if (!isRecord(ours) || (theirs !== null && theirs !== undefined && !isRecord(theirs))) return theirs as Record<string, unknown> | undefined;
      return withAdapterMeta(theirs, ours);
    },
    async customDataExtractor(context) {
      // Before theirs: what they throw reaches the SDK, and the link is already recorded.
      linker.answeredByCaller({ _meta: context.resultMeta, ...(context.isError === true ? { isError: true } : {}) });
      return (await own.extractor?.(context)) ?? undefined;
    },
  };
}
