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
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { instrumentMcpClient, traceparentFetch } from '../../../src/adapters/mcp/index.ts';
import { runtime } from '../../support/child.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { SESSION, agentSpans, connected, plainClientRun, startServer, toolCall, traceparentOf, type Doc, type Server } from './http-traceparent-run.ts';

const USER_TRACEPARENT = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;

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
      const { agentAtof: atof, served } = await plainClientRun(transport, `mcp-traceparent-plain-${transport}`);
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
