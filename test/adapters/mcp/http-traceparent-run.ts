// The two-process MCP run over HTTP that docs/adapters/mcp.md's "Over HTTP: the traceparent header" describes: the
// server a program of its own on loopback (agents-programs.ts's weather server, which writes down the `_meta` and the
// `traceparent`/`tracestate` headers each call came with, and its ATOF events), the agent a host emitting its own
// hooks in this process, recorded by the plugin. Used by http-traceparent.test.ts and by the viewer's tests of a
// server session whose caller came only as a traceparent (test/cli/view-traceparent.test.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '../../../src/adapters/mcp/index.ts';
import type { HookRegistry } from '../../../src/hooks/registry.ts';
import { runtime } from '../../support/child.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { SERVER_SOURCE } from './agents-programs.ts';
import { serveHttp } from './agents-check.ts';

export type Doc = Record<string, any>;
export type Transport = 'http' | 'sse';

export const SESSION = 'agent-1';

export interface Server {
  url: string;
  /** Stops the server (its files are written then) and reads what it wrote. */
  stop(): Promise<ServedFiles>;
}

/** What the server wrote: the `_meta` and headers each call came with, its ATOF events and its trajectories. */
export interface ServedFiles {
  headers: Doc[];
  meta: Doc[];
  atof: Doc[];
  atif: Doc[];
}

export async function startServer(transport: Transport): Promise<Server> {
  const home = path.join(repoRoot, '.tmp', 'mcp-http-traceparent');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, `${runtime}-${transport}-`));
  writeFileSync(path.join(folder, 'server.mjs'), SERVER_SOURCE);
  const out = path.join(folder, 'trajectories');
  const http = await serveHttp(path.join(folder, 'server.mjs'), out, { ...process.env, NEMO_RELAY_HOOKS_BACKEND: 'memory' }, runtime === 'deno' ? ['run', '-A'] : [], transport);
  const lines = (file: string): Doc[] => readFileSync(file, 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Doc);
  return {
    url: http.url,
    stop: async () => {
      await http.stop();
      try {
        return {
          headers: lines(`${out}-headers.jsonl`),
          meta: lines(`${out}-meta.jsonl`),
          atof: readdirSync(`${out}-atof`).flatMap((file) => lines(path.join(`${out}-atof`, file))),
          atif: readdirSync(out).map((file) => JSON.parse(readFileSync(path.join(out, file), 'utf8')) as Doc),
        };
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}

export async function connected(client: Client, transport: Transport, url: string, options: { fetch?: FetchLike; requestInit?: RequestInit }): Promise<Client> {
  await client.connect(transport === 'sse' ? new SSEClientTransport(new URL(url), options) : new StreamableHTTPClientTransport(new URL(url), options));
  return client;
}

/** The host's tool call `id` of the tool `forecast`, open while `call` runs. */
export async function toolCall<T>(hooks: HookRegistry, id: string, city: string, call: () => Promise<T>): Promise<T> {
  const ids = { session_id: SESSION, turn_id: 't1', tool_call_id: id, tool_name: 'forecast', args: { city } };
  hooks.emit('pre_tool_call', ids);
  const result = await call();
  hooks.emit('post_tool_call', { ...ids, result: JSON.stringify(result), status: 'ok' });
  return result;
}

/** The agent's ATOF: its session root's trace and each tool call's span, by tool call id. */
export function agentSpans(atof: Doc[]): { root: string; span(toolCallId: string): string } {
  const root = atof.find((event) => event.scope_category === 'start' && event.propagation_root_uuid !== undefined)!.propagation_root_uuid as string;
  return {
    root,
    span: (toolCallId) => atof.find((event) => event.category === 'tool' && event.scope_category === 'start' && event.metadata?.tool_call_id === toolCallId)!.uuid as string,
  };
}

/** The W3C traceparent naming trace `root` and span `span` (UUIDs, as ATOF writes them). */
export function traceparentOf(root: string, span: string): string {
  return `00-${root.replaceAll('-', '')}-${span.replaceAll('-', '').slice(16)}-01`;
}

/**
 * A plain `Client` (no `_meta`) behind a fetch that sets `traceparent`, as an OpenTelemetry-instrumented fetch does:
 * the agent's tool call `call_oslo` calls the server's `forecast` for Oslo, the header naming that tool call's span.
 * Returns the agent's ATOF events and what the server wrote.
 */
export async function plainClientRun(transport: Transport, label: string): Promise<{ agentAtof: Doc[]; served: ServedFiles }> {
  const server = await startServer(transport);
  const recorded = recordedPlugin(label);
  const hooks = recorded.hooks;
  // What an instrumented fetch does: the active span (here, the host's open tool call) in the request's headers.
  let active: { session_id: string; tool_call_id: string } | undefined;
  const instrumented: FetchLike = async (input, init) => {
    const traceparent = active === undefined ? undefined : (await hooks.traceContext(active)).traceparent;
    if (traceparent === undefined) return fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set('traceparent', traceparent);
    return fetch(input, { ...init, headers });
  };
  let served: ServedFiles;
  try {
    hooks.emit('on_session_start', { session_id: SESSION, platform: 'cli' });
    const client = await connected(new Client({ name: 'plain-agent', version: '1.0.0' }), transport, server.url, { fetch: instrumented });
    try {
      await toolCall(hooks, 'call_oslo', 'Oslo', async () => {
        active = { session_id: SESSION, tool_call_id: 'call_oslo' };
        try {
          return await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
        } finally {
          active = undefined;
        }
      });
    } finally {
      await client.close();
    }
    hooks.emit('on_session_finalize', { session_id: SESSION, reason: 'done' });
  } finally {
    served = await server.stop();
  }
  const { atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  return { agentAtof: atof as Doc[], served };
}
