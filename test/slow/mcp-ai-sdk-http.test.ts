// docs/adapters/mcp.md, "The AI SDK: @ai-sdk/mcp": `createMCPClient` with the
// transports it makes itself, `{ type: 'http', url }` (Streamable HTTP, the
// server answering each POST with an event stream, or with JSON) and
// `{ type: 'sse', url }`, given as `instrumentMcpTransport({ type, url }, hooks)`
// (its `fetch` carries the messages). The MCP server runs on its own on
// loopback (agents-programs.ts's weather server), instrumented with
// `instrumentMcpServer` or not; the agent is the page's `generateText` with the
// real OpenAI provider against the fake Responses wire, recorded in this
// process. Linked: the server gets the agent's caller and trace context in
// `_meta` (and the `traceparent` in the HTTP request's headers), the agent's
// call references the server's trajectory, and the model
// is sent what it is sent without linking; an uninstrumented server answers
// as it always does and nothing is referenced. Tokens are the SDK's totalUsage;
// memory and native write the same files.
// In the slow suite (Node, Bun, Deno; both backends where native loads): its agent and servers are processes
// of their own, seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import * as z from 'zod';
import { instrumentMcpServer, instrumentMcpTransport } from '../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { runtime } from '../support/child.ts';
import { repoRoot } from '../support/doc-snippets.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { SERVER_SOURCE } from '../adapters/mcp/agents-programs.ts';
import { serveHttp } from '../adapters/mcp/agents-check.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Doc = Record<string, any>;
const MODEL = 'gpt-4o-2024-08-06';
const ANSWER = 'In Oslo it will rain.';
const SERVER_LINKING = 'return instrumentMcpServer(server, hooks);';
const JSON_ANSWERS: [string, string] = ['new StreamableHTTPServerTransport({ ', 'new StreamableHTTPServerTransport({ enableJsonResponse: true, '];
/** `http-json`: Streamable HTTP whose server answers a POST with JSON, not an event stream. */
type Transport = 'http' | 'http-json' | 'sse';

/** The server program: instrumented or not, answering Streamable HTTP POSTs as `transport` says. */
function serverSource(server: 'instrumented' | 'plain', transport: Transport): string {
  let source = SERVER_SOURCE;
  for (const [from, to] of [...(server === 'plain' ? [[SERVER_LINKING, 'return server;'] as [string, string]] : []), ...(transport === 'http-json' ? [JSON_ANSWERS] : [])]) {
    expect(source.split(from), 'the server program as the test means it').toHaveLength(2);
    source = source.replace(from, to);
  }
  return source;
}

interface Outcome {
  text: string;
  totalUsage: { inputTokens?: number | undefined; outputTokens?: number | undefined };
  /** The bodies the model was sent. */
  requests: Doc[];
  agent: AtifDoc;
  /** The server's trajectories, by file name. */
  server: Map<string, Doc>;
  /** Each call's `_meta` as the server's tool handler got it. */
  received: { city: string; meta: Doc | null }[];
  /** The W3C trace headers of each call's HTTP request, as the server got them. */
  headers: { city: string; traceparent: string | null; tracestate: string | null }[];
  recorded: ReturnType<typeof recordedPlugin>;
}

/** The page's agent against a server of its own on loopback; `link`: the client's transport goes through `instrumentMcpTransport`. */
async function runAgent(transport: Transport, server: 'instrumented' | 'plain', link: boolean): Promise<Outcome> {
  const home = path.join(repoRoot, '.tmp', 'mcp-ai-sdk-http');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, `${runtime}-${transport}-`));
  try {
    writeFileSync(path.join(folder, 'server.mjs'), serverSource(server, transport));
    const out = path.join(folder, 'server-trajectories');
    const http = await serveHttp(path.join(folder, 'server.mjs'), out, { ...process.env, NEMO_RELAY_HOOKS_BACKEND: 'memory' }, runtime === 'deno' ? ['run', '-A'] : [], transport === 'sse' ? 'sse' : 'http');
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
    fake.reply('responses', { id: 'resp_2', model: MODEL, text: ANSWER, usage: { input: 130, output: 12 } });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const recorded = recordedPlugin(`ai-mcp-${transport}-${server}-${link}`);
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
    let result: Awaited<ReturnType<typeof generateText>>;
    try {
      // As the page writes it, with the transport the SDK makes from a URL.
      const config = { type: transport === 'sse' ? ('sse' as const) : ('http' as const), url: http.url };
      const mcp = await createMCPClient({ transport: link ? instrumentMcpTransport(config, recorded.hooks) : config });
      try {
        result = await generateText({ model: openai('gpt-4o'), prompt: 'What is the weather in Oslo?', // The page's program is JavaScript; @ai-sdk/mcp types its tools' schemas apart from ai's ToolSet.
        tools: (await mcp.tools()) as ToolSet, stopWhen: stepCountIs(3) });
      } finally {
        await mcp.close();
      }
    } finally {
      await http.stop();
    }
    uninstall();
    uninstall = undefined;
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const serverDocs = new Map<string, Doc>();
    for (const file of server === 'instrumented' ? readdirSync(out).sort() : []) serverDocs.set(file, JSON.parse(readFileSync(path.join(out, file), 'utf8')) as Doc);
    for (const doc of [...atif, ...serverDocs.values()]) expect(validateAtif(doc)).toEqual([]);
    const received = readFileSync(`${out}-meta.jsonl`, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Outcome['received'][number]);
    const headers = readFileSync(`${out}-headers.jsonl`, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Outcome['headers'][number]);
    return { text: result.text, totalUsage: result.totalUsage, requests: fake.requests.map((request) => request.body), agent: atif[0]!, server: serverDocs, received, headers, recorded };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const observed = (doc: AtifDoc, id: string): Doc => (doc.steps as Doc[]).flatMap((step) => step.observation?.results ?? []).find((entry: Doc) => entry.source_call_id === id);

describe("docs/adapters/mcp.md: the AI SDK's own HTTP and SSE transports, through their fetch", () => {
  for (const transport of ['http', 'http-json', 'sse'] as const) {
    it(`${transport}: linked to an instrumented server, as without linking to one that is not (${runtime})`, async () => {
      const plain = await runAgent(transport, 'instrumented', false);
      const linked = await runAgent(transport, 'instrumented', true);
      const unlinkedServer = await runAgent(transport, 'plain', true);

      for (const outcome of [plain, linked, unlinkedServer]) {
        expect(outcome.text).toBe(ANSWER);
        // The run's tokens are the SDK's.
        expect([outcome.agent.final_metrics.total_prompt_tokens, outcome.agent.final_metrics.total_completion_tokens]).toEqual([outcome.totalUsage.inputTokens, outcome.totalUsage.outputTokens]);
        expect(outcome.totalUsage).toMatchObject({ inputTokens: 220, outputTokens: 27 });
        const call = observed(outcome.agent, 'call_oslo');
        expect(call.content).toContain('Oslo: rain (answer 1)');
        expect(call.content).not.toContain('nemo-relay');
        // The model is sent what it is sent without linking: nothing the server added for the adapter.
        expect(outcome.requests).toEqual(plain.requests);
      }

      // Without linking: the server's call names no caller and is referenced by nothing.
      expect(plain.received).toEqual([{ city: 'Oslo', meta: null }]);
      expect(observed(plain.agent, 'call_oslo').subagent_trajectory_ref).toBeUndefined();
      expect([...plain.server.values()].map((doc) => doc.extra?.caller)).toEqual([undefined]);

      // Linked: the request carried the agent's tool call and its trace context; each trajectory points at the other.
      const [meta] = linked.received.map((entry) => entry.meta!);
      expect(meta!['nemo-relay/caller']).toMatchObject({ session_id: 'user-42', tool_call_id: 'call_oslo', trajectory_id: linked.agent.trajectory_id });
      expect(meta!.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      // Its HTTP request carried that traceparent as a header too, for HTTP tracing; without linking, none.
      expect(linked.headers).toEqual([{ city: 'Oslo', traceparent: meta!.traceparent, tracestate: null }]);
      expect(plain.headers).toEqual([{ city: 'Oslo', traceparent: null, tracestate: null }]);
      const [[serverFile, serverDoc]] = [...linked.server] as [[string, Doc]];
      expect(serverDoc.extra.caller).toMatchObject({ session_id: 'user-42', tool_call_id: 'call_oslo', trajectory_id: linked.agent.trajectory_id });
      expect(observed(linked.agent, 'call_oslo').subagent_trajectory_ref).toEqual([{ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile }]);

      // An uninstrumented server: the same request (it ignores the _meta), its answer as it gave it, nothing referenced.
      expect(unlinkedServer.received.map((entry) => entry.meta?.['nemo-relay/caller']?.tool_call_id)).toEqual(['call_oslo']);
      expect(observed(unlinkedServer.agent, 'call_oslo').subagent_trajectory_ref).toBeUndefined();
      expect(unlinkedServer.server.size).toBe(0);

      await sameOnNative(linked.recorded);
      await sameOnNative(unlinkedServer.recorded);
    }, 120_000);
  }
});

/** `body` as a slow network may hand it over: every line ending CRLF, one byte per chunk. */
function byteByByte(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let bytes: Uint8Array = new Uint8Array(0);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (at >= bytes.length) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        bytes = encoder.encode(decoder.decode(value, { stream: true }).replace(/\r?\n/g, '\r\n'));
        at = 0;
      }
      controller.enqueue(bytes.slice(at, at + 1));
      at += 1;
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

describe('instrumentMcpTransport on an event stream cut anywhere', () => {
  it('every message reaches the client whole, the linked answer without what the server added', async () => {
    // The server in this process, instrumented, behind the fetch the client is given.
    const serverSide = recordedPlugin('ai-mcp-bytes-server');
    const server = instrumentMcpServer(new McpServer({ name: 'weather-server', version: '1.0.0' }), serverSide.hooks);
    server.registerTool('forecast', { description: 'The forecast for a city', inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    const http = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await server.connect(http);
    let streams = 0;
    const served = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const response = await http.handleRequest(new Request(input, init));
      if (!(response.headers.get('content-type') ?? '').includes('text/event-stream') || response.body === null) return response;
      streams += 1;
      return new Response(byteByByte(response.body), { status: response.status, headers: response.headers });
    };

    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
    fake.reply('responses', { id: 'resp_2', model: MODEL, text: ANSWER, usage: { input: 130, output: 12 } });
    const recorded = recordedPlugin('ai-mcp-bytes');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
    const config = instrumentMcpTransport({ type: 'http', url: 'http://mcp.test/mcp', fetch: served }, recorded.hooks);
    // A copy with its own fetch; given again, it is left as it is (its fetch would link every call twice).
    expect(config.fetch).not.toBe(served);
    expect(instrumentMcpTransport(config, recorded.hooks)).toBe(config);
    const mcp = await createMCPClient({ transport: config });
    let result: Awaited<ReturnType<typeof generateText>>;
    try {
      result = await generateText({ model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), prompt: 'What is the weather in Oslo?', tools: (await mcp.tools()) as ToolSet, stopWhen: stepCountIs(3) });
    } finally {
      await mcp.close();
      await server.close();
    }
    expect(result.text).toBe(ANSWER);
    // initialize, tools/list and tools/call were each answered down an event stream.
    expect(streams).toBeGreaterThanOrEqual(3);
    // The model got the tool's answer as the tool gave it.
    const output = (fake.requests[1]!.body.input as Doc[]).find((item) => item.type === 'function_call_output');
    expect(output!.output).toEqual([{ type: 'input_text', text: 'Oslo: rain' }]);
    // The program's tool result is the server's, without what it added for the adapter (its trajectory, the caller).
    const [toolResult] = result.steps[0]!.toolResults as Doc[];
    expect(toolResult!.output).toMatchObject({ content: [{ type: 'text', text: 'Oslo: rain' }] });
    expect(JSON.stringify(toolResult!.output)).not.toContain('nemo-relay');
    uninstall();
    uninstall = undefined;
    const { atif, counters } = await recorded.finish();
    const serverRun = await serverSide.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const [serverDoc] = serverRun.atif;
    expect(serverDoc!.extra.caller).toMatchObject({ session_id: 'user-42', tool_call_id: 'call_oslo' });
    expect(observed(atif[0]!, 'call_oslo').subagent_trajectory_ref).toMatchObject([{ session_id: serverDoc!.session_id, trajectory_id: serverDoc!.trajectory_id }]);
    expect([atif[0]!.final_metrics.total_prompt_tokens, atif[0]!.final_metrics.total_completion_tokens]).toEqual([result.totalUsage.inputTokens, result.totalUsage.outputTokens]);
  });
});
