/**
 * The OpenAI Agents SDK's own MCP servers (`MCPServerStdio`,
 * `MCPServerStreamableHttp`, `MCPServerSSE`) create their MCP `Client`
 * inside, out of the program's reach: `openAIAgentsMcpOptions(hooks)` gives
 * the two extension points the SDK offers on them instead, to spread into
 * the server's options (they replace a resolver or extractor of your own).
 * `toolMetaResolver` writes the request's `_meta` as
 * `instrumentMcpClient` does; `customDataExtractor` reads the result's
 * `_meta` and links the agent's tool call to the server's trajectory (it
 * adds no custom data of its own). Both go through the one
 * `McpCallLinker` the instrumented `Client` and transport use.
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

import type { HookRegistry } from '../../hooks/registry.ts';
import { isRecord } from '../../shared/record.ts';
import { McpCallLinker, type McpClientOptions } from './client.ts';

/** What the SDK gives a `toolMetaResolver` (its `MCPToolMetaContext`); the adapter reads the tool's name and arguments. */
export interface AgentsMcpMetaContext {
  readonly toolName: string;
  readonly arguments: Record<string, unknown> | null;
}

/** What the SDK gives an MCP server's `customDataExtractor` (its `MCPToolCustomDataContext`); the adapter reads the result's `_meta`. */
export interface AgentsMcpResultContext {
  readonly resultMeta?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** The options to spread into an Agents SDK MCP server's. */
export interface AgentsMcpServerOptions {
  toolMetaResolver(context: AgentsMcpMetaContext): Promise<Record<string, unknown> | undefined>;
  customDataExtractor(context: AgentsMcpResultContext): Promise<Record<string, unknown> | undefined>;
}

/**
 * The options that make an OpenAI Agents SDK MCP server's tool calls
 * continue the agent's trace, as `instrumentMcpClient` does for a `Client`
 * you own: spread them into the server's options
 * (`new MCPServerStdio({ name, fullCommand, ...openAIAgentsMcpOptions(hooks) })`).
 * Each `tools/call` carries the trace context of the agent's tool call it
 * does the work of (recorded by `instrumentOpenAIAgents` on the same
 * `hooks`), and when the server (instrumented with `instrumentMcpServer`)
 * answers with its trajectory, the agent's tool call references it.
 */
export function openAIAgentsMcpOptions(hooks: HookRegistry, options: McpClientOptions = {}): AgentsMcpServerOptions {
  const linker = new McpCallLinker(hooks, options);
  return {
    async toolMetaResolver(context) {
      // Never released: the SDK makes one request per tool call, and the table forgets the call when it ends.
      const link = await linker.link({ name: context.toolName, arguments: context.arguments ?? {} });
      const meta = link?.params._meta;
      return isRecord(meta) ? meta : undefined;
    },
    async customDataExtractor(context) {
      linker.answeredByCaller({ _meta: context.resultMeta, ...(context.isError === true ? { isError: true } : {}) });
      // No custom data: the tool's output item stays as it is.
      return undefined;
    },
  };
}
