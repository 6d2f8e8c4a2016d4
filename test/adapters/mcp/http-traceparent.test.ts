// docs/adapters/mcp.md, "Over HTTP: the traceparent header": an MCP call over Streamable HTTP (and the older SSE
// transport) carries its trace context where HTTP tracing looks for it. The server is a program of its own on
// loopback (agents-programs.ts's weather server, which writes down the `_meta` and the `traceparent`/`tracestate`
// headers each call came with, and its ATOF events); the agent is a host emitting its own hooks in this process,
// recorded by the plugin, calling through the MCP SDK's `Client` and its HTTP client transports.
// - An instrumented `Client` whose transport is given `traceparentFetch()`: a linked call's HTTP request carries the
//   `traceparent` its `_meta` carries (the agent's trace, the tool call's span); an unlinked one carries none; a
//   `traceparent` the program set in `requestInit.headers` is the one sent.
// - A plain `Client` (no `_meta`) behind a fetch that sets the header, as an OpenTelemetry-instrumented fetch does:
//   the server's session continues the agent's trace from the header alone, under the agent's tool span (its span
//   id: what a traceparent names).
// - traceparentFetch on the header shapes no client above sends (a list of pairs, a `Request` holding them), a
//   `tracestate`, a batch: it adds, never replaces, and only for what the adapter linked.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { instrumentMcpClient, traceparentFetch, type FetchLike } from '../../../src/adapters/mcp/index.ts';
import type { HookRegistry } from '../../../src/hooks/registry.ts';
import { runtime } from '../../support/child.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { SERVER_SOURCE } from './agents-programs.ts';
import { serveHttp } from './agents-check.ts';

type Doc = Record<string, any>;
type Transport = 'http' | 'sse';

const SESSION = 'agent-1';
const USER_TRACEPARENT = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;

interface Server {
  url: string;
  /** Stops the server (its files are written then) and reads what it wrote. */
  stop(): Promise<{ headers: Doc[]; meta: Doc[]; atof: Doc[]; atif: Doc[] }>;
}

async function startServer(transport: Transport): Promise<Server> {
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

async function connected(client: Client, transport: Transport, url: string, options: { fetch?: FetchLike; requestInit?: RequestInit }): Promise<Client> {
  await client.connect(transport === 'sse' ? new SSEClientTransport(new URL(url), options) : new StreamableHTTPClientTransport(new URL(url), options));
  return client;
}

/** The host's tool call `id` of the tool `forecast`, open while `call` runs. */
async function toolCall<T>(hooks: HookRegistry, id: string, city: string, call: () => Promise<T>): Promise<T> {
  const ids = { session_id: SESSION, turn_id: 't1', tool_call_id: id, tool_name: 'forecast', args: { city } };
  hooks.emit('pre_tool_call', ids);
  const result = await call();
  hooks.emit('post_tool_call', { ...ids, result: JSON.stringify(result), status: 'ok' });
  return result;
}

/** The agent's ATOF: its session root's trace and each tool call's span, by tool call id. */
function agentSpans(atof: Doc[]): { root: string; span(toolCallId: string): string } {
  const root = atof.find((event) => event.scope_category === 'start' && event.propagation_root_uuid !== undefined)!.propagation_root_uuid as string;
  return {
    root,
    span: (toolCallId) => atof.find((event) => event.category === 'tool' && event.scope_category === 'start' && event.metadata?.tool_call_id === toolCallId)!.uuid as string,
  };
}

/** The W3C traceparent naming trace `root` and span `span` (UUIDs, as ATOF writes them). */
function traceparentOf(root: string, span: string): string {
  return `00-${root.replaceAll('-', '')}-${span.replaceAll('-', '').slice(16)}-01`;
}

describe('docs/adapters/mcp.md: over HTTP, the traceparent header', () => {
  for (const transport of ['http', 'sse'] as const) {
    it(`an instrumented Client with traceparentFetch() sends its linked calls' traceparent as a header, never over the program's own (${transport}, ${runtime})`, async () => {
      const server = await startServer(transport);
      const recorded = recordedPlugin(`mcp-traceparent-${transport}`);
      const hooks = recorded.hooks;
      let served: Awaited<ReturnType<Server['stop']>>;
      try {
        hooks.emit('on_session_start', { session_id: SESSION, platform: 'cli' });
        const client = await connected(instrumentMcpClient(new Client({ name: 'weather-agent', version: '1.0.0' }), hooks), transport, server.url, { fetch: traceparentFetch(), requestInit: { headers: { 'x-tenant': 'acme' } } });
        // Its own traceparent in requestInit's headers: it stays, on every request.
        const own = await connected(instrumentMcpClient(new Client({ name: 'weather-agent', version: '1.0.0' }), hooks), transport, server.url, { fetch: traceparentFetch(), requestInit: { headers: { traceparent: USER_TRACEPARENT } } });
        try {
          await toolCall(hooks, 'call_oslo', 'Oslo', () => client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } }));
          // No tool call open: the request goes out unlinked, with no header either.
          await client.callTool({ name: 'forecast', arguments: { city: 'Bergen' } });
          await toolCall(hooks, 'call_tromso', 'Tromso', () => own.callTool({ name: 'forecast', arguments: { city: 'Tromso' } }));
        } finally {
          await client.close();
          await own.close();
        }
        hooks.emit('on_session_finalize', { session_id: SESSION, reason: 'done' });
      } finally {
        served = await server.stop();
      }
      const { atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      const agent = agentSpans(atof);

      const byCity = (rows: Doc[], city: string): Doc => rows.find((row) => row.city === city)!;
      // The linked call: the header names the agent's trace and the tool call's span, as its _meta does.
      const oslo = traceparentOf(agent.root, agent.span('call_oslo'));
      expect(byCity(served.meta, 'Oslo').meta.traceparent).toBe(oslo);
      expect(byCity(served.headers, 'Oslo')).toEqual({ city: 'Oslo', traceparent: oslo, tracestate: null });
      // Unlinked: nothing in _meta, nothing in the headers.
      expect(byCity(served.meta, 'Bergen').meta).toBeNull();
      expect(byCity(served.headers, 'Bergen')).toEqual({ city: 'Bergen', traceparent: null, tracestate: null });
      // The program's own header is sent as it set it; the _meta still names the agent's tool call.
      expect(byCity(served.headers, 'Tromso').traceparent).toBe(USER_TRACEPARENT);
      expect(byCity(served.meta, 'Tromso').meta.traceparent).toBe(traceparentOf(agent.root, agent.span('call_tromso')));
      // The server's sessions of the two linked calls continue the agent's trace (from _meta, as before).
      expect(served.atif.map((doc) => doc.extra?.caller?.tool_call_id).sort()).toEqual(['call_oslo', 'call_tromso', undefined]);
    }, 120_000);

    it(`a plain Client behind a fetch that sets traceparent (an OpenTelemetry-instrumented fetch): the server's session continues the agent's trace from the header alone (${transport}, ${runtime})`, async () => {
      const server = await startServer(transport);
      const recorded = recordedPlugin(`mcp-traceparent-plain-${transport}`);
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
      let served: Awaited<ReturnType<Server['stop']>>;
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
      const agent = agentSpans(atof);

      // The request named nothing in _meta; its HTTP request carried the tool call's traceparent.
      expect(served.meta).toEqual([{ city: 'Oslo', meta: null }]);
      expect(served.headers).toEqual([{ city: 'Oslo', traceparent: traceparentOf(agent.root, agent.span('call_oslo')), tracestate: null }]);
      // The server's whole tree has the agent's root (the trace id), and its session scope's parent is the agent's
      // tool span as a traceparent names it: its low 64 bits, the OTLP span id its spans export under (the rest of
      // the uuid a traceparent cannot carry). No caller: the header names a span, not a session or a trajectory.
      const [doc] = served.atif;
      expect(doc!.extra?.caller).toBeUndefined();
      const sessionScope = served.atof.find((event) => event.name === `${doc!.agent.name}-session-${doc!.session_id}` && event.scope_category === 'start')!;
      expect(sessionScope.parent_uuid).toBe(`00000000-0000-0000-${agent.span('call_oslo').slice(19)}`);
      expect(new Set(served.atof.map((event) => event.propagation_root_uuid))).toEqual(new Set([agent.root]));
    }, 120_000);
  }
});

describe('traceparentFetch: the headers a request is given, in each shape a client gives them', () => {
  const linked = (traceparent: string, more: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forecast', arguments: {}, _meta: { traceparent, 'nemo-relay/caller': { session_id: 's', tool_call_id: 'c' }, ...more } } });
  const OURS = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
  /** What the base fetch was handed, through `traceparentFetch`. */
  async function sent(input: unknown, init: Record<string, unknown> | undefined): Promise<{ input: unknown; init: Record<string, unknown> | undefined }> {
    let seen: { input: unknown; init: Record<string, unknown> | undefined } | undefined;
    await traceparentFetch(async (input, init) => {
      seen = { input, init };
      return new Response('{}');
    })(input, init);
    return seen!;
  }

  it('adds to a record, a list of pairs and a Headers, keeping their shape and the rest of each', async () => {
    const body = JSON.stringify(linked(OURS, { tracestate: 'vendor=1' }));
    expect((await sent('http://mcp.test/mcp', { method: 'POST', body, headers: { 'x-tenant': 'acme' } })).init!.headers).toEqual({ 'x-tenant': 'acme', traceparent: OURS, tracestate: 'vendor=1' });
    expect((await sent('http://mcp.test/mcp', { method: 'POST', body, headers: [['x-tenant', 'acme']] })).init!.headers).toEqual([['x-tenant', 'acme'], ['traceparent', OURS], ['tracestate', 'vendor=1']]);
    const headers = (await sent('http://mcp.test/mcp', { method: 'POST', body, headers: new Headers({ 'x-tenant': 'acme' }) })).init!.headers as Headers;
    expect([...headers]).toEqual([['traceparent', OURS], ['tracestate', 'vendor=1'], ['x-tenant', 'acme']]);
  });

  it("never changes a request's own traceparent, in any case, in init or in the Request it is given", async () => {
    const body = JSON.stringify(linked(OURS));
    const init = { method: 'POST', body, headers: { TraceParent: USER_TRACEPARENT } };
    expect((await sent('http://mcp.test/mcp', init)).init).toBe(init);
    const request = new Request('http://mcp.test/mcp', { method: 'POST', headers: { traceparent: USER_TRACEPARENT } });
    const bare = { method: 'POST', body };
    expect((await sent(request, bare)).init).toBe(bare);
  });

  it('leaves alone what the adapter did not link: no caller, no body, a batch naming two contexts', async () => {
    const other = `00-${'3'.repeat(32)}-${'4'.repeat(16)}-01`;
    const plain = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forecast', _meta: { traceparent: OURS } } };
    for (const init of [{ method: 'POST', body: JSON.stringify(plain) }, { method: 'GET' }, { method: 'POST', body: JSON.stringify([linked(OURS), linked(other)]) }, undefined]) {
      expect((await sent('http://mcp.test/mcp', init)).init).toBe(init);
    }
    // A batch whose linked requests name one context carries it.
    const batch = await sent('http://mcp.test/mcp', { method: 'POST', body: JSON.stringify([linked(OURS), plain]) });
    expect(batch.init!.headers).toEqual({ traceparent: OURS });
  });
});
