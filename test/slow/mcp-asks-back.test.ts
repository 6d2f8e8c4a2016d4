// An MCP server that asks its client back inside a tool (sampling,
// `server.server.createMessage`; form elicitation, `server.server.elicitInput`),
// instrumented with `instrumentMcpServer`, a child over stdio or on its own
// over Streamable HTTP, reached through the two frameworks whose MCP client
// cannot sample, run as their docs write them: the OpenAI Agents SDK's
// `MCPServerStdio` and `MCPServerStreamableHttp` with `openAIAgentsMcpOptions`
// (its `Client` is made inside, with no capabilities and no handlers), and the
// AI SDK's `createMCPClient` (`@ai-sdk/mcp`) over `instrumentMcpTransport`
// (stdio, `{ type: 'http', url }`; and without it), its tools given to
// `generateText`, declaring nothing, declaring elicitation without a handler,
// or answering it with `onElicitationRequest`; and an AI SDK tool of the
// program's own calling an instrumented MCP SDK `Client` (docs/adapters/mcp.md's
// agent), returning the result or its `content`. The server asks as the MCP SDK's examples do,
// without looking at the client's capabilities, and lets what the request
// throws escape its tool: the MCP SDK answers the call with `isError` and the
// error's text, which the model is given as an ordinary output. Nothing
// hangs: each run ends with the model's answer. What the trajectories say
// against that: the agent's call is failed with the client's error (the text
// the model got), as the server's own trajectory records it, the two
// trajectories name each other (the server's `extra.caller`, the call's
// `subagent_trajectory_ref`; not linked, neither), and an elicitation the
// client answered is an ordinary call; a tool of the program's own that hands
// on only the result's `content` is `ok` (the limit the page states). Memory
// and native write the same files.
// In the slow suite (Node, Bun, Deno; both backends where native loads): its agent and servers are processes
// of their own, seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, MCPServerStdio, MCPServerStreamableHttp, OpenAIResponsesModel, Runner } from '@openai/agents';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { generateText, stepCountIs, tool, type ToolSet } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { instrumentMcpClient, instrumentMcpTransport, openAIAgentsMcpOptions } from '../../src/adapters/mcp/index.ts';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { runtime } from '../support/child.ts';
import { repoRoot } from '../support/doc-snippets.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from '../adapters/support.ts';
import { hooks, observation, useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';
import { serveHttp } from '../adapters/mcp/agents-check.ts';
import { TRIP_SERVER } from '../adapters/mcp/trip-server-source.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** The two runs: each asks the model for one call of one tool, then answers. */
const RUNS = [
  { session: 'sight-run', prompt: 'Name a sight in Oslo.', call: 'call_sight', tool: 'name_sight', answer: 'I could not name a sight.' },
  { session: 'tour-run', prompt: 'Book a tour of Oslo.', call: 'call_tour', tool: 'book_tour', answer: 'Done with the tour.' },
] as const;

const SCRIPT = {
  'gpt-4.1': RUNS.flatMap((run, n) => [
    { calls: [{ id: run.call, name: run.tool, args: { city: 'Oslo' } }], usage: { input: 50 + n, output: 10 } },
    { text: run.answer, usage: { input: 80 + n, output: 5 } },
  ]),
};

/** What the server's tool gets from `elicitInput` when the client did not declare elicitation: the MCP SDK's own check. */
const NO_ELICITATION = 'Client does not support form elicitation.';

let folder: string;
let script: string;
beforeAll(() => {
  const home = path.join(repoRoot, '.tmp', 'mcp-asks-back');
  mkdirSync(home, { recursive: true });
  // Inside the package: `nemo-relay-hooks` resolves as it does for a user.
  folder = mkdtempSync(path.join(home, `${runtime}-`));
  script = path.join(folder, 'asking-server.mjs');
  writeFileSync(script, TRIP_SERVER);
});
afterAll(async () => {
  await Promise.all([...httpServers.values()].map(async (server) => (await server).stop()));
  rmSync(folder, { recursive: true, force: true });
});

/**
 * The server on its own over Streamable HTTP, one per backend for the file: it makes an MCP server per session, as
 * the MCP SDK's example serves it, so the tests take turns on it as clients of one deployed server do; its
 * trajectories go to one folder, where each test reads the ones its calls added.
 */
const httpServers = new Map<string, Promise<{ url: string; out: string; stop(): Promise<void> }>>();
function httpServer(backend: string): Promise<{ url: string; out: string; stop(): Promise<void> }> {
  let server = httpServers.get(backend);
  if (server === undefined) {
    const out = path.join(folder, `http-${backend}-atif`);
    server = serveHttp(script, out, serverEnv(backend), runtimeArgs, 'http').then((http) => ({ ...http, out }));
    httpServers.set(backend, server);
  }
  return server;
}

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const api = new FakeOpenAI();
/** Each backend, with the server a child over stdio or on its own over Streamable HTTP. */
const CASES = backends().flatMap((backend) => (['stdio', 'http'] as const).map((transport) => [backend, transport] as const));
const runtimeArgs = runtime === 'deno' ? ['run', '-A'] : [];
const serverArgs = (out: string): string[] => [...runtimeArgs, script, out];
const serverEnv = (backend: string): Record<string, string> => ({ ...(process.env as Record<string, string>), NEMO_RELAY_HOOKS_BACKEND: backend });

/** What the model was told of `call`, from the request after it: its text parts, or the text it was sent (a tool's JSON output). */
function toldModel(call: string): string {
  const input = api.requests.flatMap((request) => request.body.input as Array<Record<string, any>>);
  const output = input.find((item) => item.type === 'function_call_output' && item.call_id === call)?.output;
  return typeof output === 'string' ? output : (output as Array<{ text: string }>).map((part) => part.text).join('\n');
}

/** The trajectory files in a server's folder. */
const trajectoryFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.json')).sort() : []);

/**
 * The server's trajectories of this test's calls, by file name, once it wrote one per call (it writes each as its
 * call ends, off its host thread): the files not in `before`, what the folder held when the test started.
 */
async function serverFiles(dir: string, before: readonly string[]): Promise<Map<string, AtifDoc>> {
  const list = (): string[] => trajectoryFiles(dir).filter((file) => !before.includes(file));
  for (let waited = 0; list().length < RUNS.length && waited < 600; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  return new Map(list().map((file) => [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as AtifDoc]));
}

/** Each call's answer, the text the server's tool ended with: the client's error, unless it is `tour booked`. */
type Told = Record<(typeof RUNS)[number]['call'], string>;

/** Where the server writes its trajectories, and what was there before the test's calls. */
interface ServerOut {
  dir: string;
  before: readonly string[];
}

/** A test's server folder: the HTTP server's, shared by the file, or a folder of the test's own for a server over stdio. */
function serverOut(recorded: Recorded, http: { out: string } | undefined): ServerOut {
  const dir = http?.out ?? path.join(recorded.dir, 'server-atif');
  return { dir, before: trajectoryFiles(dir) };
}

/** How the agent's side is made: linked (the client instrumented) or not; whether its tool hands on the result's `isError`. */
interface Side {
  linked: boolean;
  /** False: the program's own tool returns the result's `content`, which carries no `isError`: the call is what it returned. */
  handsOnIsError: boolean;
}

/**
 * The agent's and the server's files against what the programs did: each run's call is failed with the server's
 * answer unless that is the tool's (or the agent's tool handed on no failure), in the agent's hooks and trajectory,
 * and in the server's trajectory of that call; linked, each names the other.
 */
async function expectTrue(recorded: Recorded, out: ServerOut, told: Told, side: Side = { linked: true, handsOnIsError: true }): Promise<void> {
  const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
  for (const run of RUNS) {
    const failed = told[run.call] !== 'tour booked' && side.handsOnIsError;
    expect(ended.get(run.call), run.call).toMatchObject(failed ? { status: 'error', error_type: 'ToolError', error_message: told[run.call] } : { status: 'ok', error_type: null });
  }
  const { counters } = await recorded.finish();
  expectNothingLost(counters);
  const atifDir = path.join(recorded.dir, 'atif');
  const agentFiles = new Map(readdirSync(atifDir).map((file) => [file, JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as AtifDoc]));
  const server = await serverFiles(out.dir, out.before);
  expect([...agentFiles.values()].map((doc) => doc.session_id).sort()).toEqual(['sight-run', 'tour-run']);
  expect(server.size).toBe(RUNS.length);
  for (const [file, doc] of [...agentFiles, ...server]) expect(validateAtif(doc), file).toEqual([]);
  for (const run of RUNS) {
    const text = told[run.call];
    const failed = text !== 'tour booked' && side.handsOnIsError;
    const [agentFile, agentDoc] = [...agentFiles].find(([, doc]) => doc.session_id === run.session)!;
    const results = (doc: AtifDoc): AtifDoc[] => doc.steps.flatMap((step: AtifDoc) => step.observation?.results ?? []);
    const [serverFile, serverDoc] = [...server].find(([, doc]) => results(doc).some((result) => result.content === text))!;
    // The server's: one call, the agent's when linked, ended with the answer the agent's program got.
    if (side.linked) expect(serverDoc.extra.caller).toEqual({ session_id: run.session, tool_call_id: run.call, trajectory_id: agentDoc.trajectory_id, trajectory_path: agentFile });
    else expect(serverDoc.extra?.caller).toBeUndefined();
    expect(results(serverDoc).map((result: AtifDoc) => [result.content, result.extra.metadata.status])).toEqual([[text, text === 'tour booked' ? 'ok' : 'error']]);
    if (side.linked) expect(results(serverDoc)[0].extra.metadata.tool_call_id).toBe(run.call);
    // The agent's: the call failed with the client's error (or answered), referencing the server's trajectory when linked.
    const result = observation(agentDoc, run.call)!;
    expect(result.content).toContain(JSON.stringify(text).slice(1, -1));
    expect(result.extra.metadata).toMatchObject(failed ? { status: 'error', 'error.type': 'ToolError' } : { status: 'ok' });
    if (side.linked) expect(result.subagent_trajectory_ref).toEqual([{ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile }]);
    else expect(result).not.toHaveProperty('subagent_trajectory_ref');
    expect(agentDoc.steps.at(-1).message).toBe(run.answer);
  }
  await sameOnNative(recorded);
}

describe('an MCP server that asks back, reached through the OpenAI Agents SDK (its client cannot sample or elicit)', () => {
  for (const [backend, transport] of CASES) {
    it(`the calls fail with the client's errors, linked both ways; the runs end (${transport}, ${backend})`, async () => {
      useTracing('tracing on');
      api.load(SCRIPT);
      const recorded = recordedPlugin('mcp-asks-back-agents', backend);
      let session: string = RUNS[0].session;
      uninstall = instrumentOpenAIAgents(recorded.hooks, { sessionId: () => session });
      // As the SDK's docs start a server; a child runtime starting on a loaded machine can outlast the SDK's 5 s handshake.
      const http = transport === 'http' ? await httpServer(backend) : undefined;
      const out = serverOut(recorded, http);
      const server =
        http === undefined
          ? new MCPServerStdio({ name: 'trip', command: process.execPath, args: serverArgs(out.dir), env: serverEnv(backend), clientSessionTimeoutSeconds: 60, ...openAIAgentsMcpOptions(recorded.hooks) })
          : new MCPServerStreamableHttp({ name: 'trip', url: http.url, ...openAIAgentsMcpOptions(recorded.hooks) });
      await server.connect();
      try {
        const agent = new Agent({ name: 'Trip agent', instructions: 'Plan trips.', model: new OpenAIResponsesModel(api.client(), 'gpt-4.1'), mcpServers: [server] });
        for (const run of RUNS) {
          session = run.session;
          expect((await new Runner().run(agent, run.prompt)).finalOutput).toBe(run.answer);
        }
      } finally {
        await server.close();
      }
      // The SDK's client (@modelcontextprotocol/client 2.x) answers a sampling request "Method not found"; it declares
      // no elicitation, which the server's MCP SDK refuses before asking.
      const told = { call_sight: toldModel('call_sight'), call_tour: toldModel('call_tour') };
      expect(told).toEqual({ call_sight: 'MCP error -32601: Method not found', call_tour: NO_ELICITATION });
      await expectTrue(recorded, out, told);
    }, 90_000);
  }
});

/** How the AI SDK's MCP client is made: declaring nothing, declaring elicitation without a handler, or answering it. */
type Elicitation = 'undeclared' | 'no handler' | 'handler';

/** The AI SDK's cases: each of CASES linked, and one over stdio without `instrumentMcpTransport`. */
const AI_SDK_CASES = [...CASES.map(([backend, transport]) => [backend, transport, true] as const), ...backends().map((backend) => [backend, 'stdio', false] as const)];

describe("an MCP server that asks back, reached through the AI SDK's MCP client (it cannot sample)", () => {
  for (const [backend, transport, linked] of AI_SDK_CASES) {
    for (const elicitation of linked ? (['undeclared', 'no handler', 'handler'] as const satisfies readonly Elicitation[]) : (['undeclared'] as const)) {
      it(`a refused request fails the call with the client's error${linked ? ', linked both ways' : ' (not linked)'}; the runs end (elicitation ${elicitation}, ${transport}, ${backend})`, async () => {
        api.load(SCRIPT);
        const recorded = recordedPlugin('mcp-asks-back-ai-sdk', backend);
        let session: string = RUNS[0].session;
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: () => session });
        const http = transport === 'http' ? await httpServer(backend) : undefined;
        const out = serverOut(recorded, http);
        const stdio = (): Experimental_StdioMCPTransport => new Experimental_StdioMCPTransport({ command: process.execPath, args: serverArgs(out.dir), env: serverEnv(backend) });
        const mcp = await createMCPClient({
          transport: !linked ? stdio() : http === undefined ? instrumentMcpTransport(stdio(), recorded.hooks) : instrumentMcpTransport({ type: 'http', url: http.url }, recorded.hooks),
          ...(elicitation === 'undeclared' ? {} : { capabilities: { elicitation: {} } }),
        });
        const asked: unknown[] = [];
        if (elicitation === 'handler') {
          mcp.onElicitationRequest(ElicitationRequestSchema, async (request) => {
            asked.push(request.params);
            return { action: 'accept', content: { book: true } };
          });
        }
        const outputs = new Map<string, unknown>();
        try {
          const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: api.fetch });
          const tools = (await mcp.tools()) as ToolSet;
          for (const run of RUNS) {
            session = run.session;
            const { text, steps } = await generateText({ model: openai('gpt-4.1'), prompt: run.prompt, tools, stopWhen: stepCountIs(3) });
            expect(text).toBe(run.answer);
            // The SDK's MCP tools return a result with isError as the tool's output, not as a tool error.
            for (const part of steps.flatMap((step) => step.content)) if (part.type === 'tool-result' || part.type === 'tool-error') outputs.set(part.toolCallId, part.type === 'tool-result' ? part.output : part.error);
          }
        } finally {
          await mcp.close();
        }
        const sampling = 'MCP error -32601: Unsupported request method: sampling/createMessage';
        const tour = { undeclared: NO_ELICITATION, 'no handler': 'MCP error -32601: No elicitation handler registered on client', handler: 'tour booked' }[elicitation];
        expect(Object.fromEntries(outputs)).toEqual({
          call_sight: { content: [{ type: 'text', text: sampling }], isError: true },
          call_tour: { content: [{ type: 'text', text: tour }], isError: elicitation !== 'handler' },
        });
        const told = { call_sight: toldModel('call_sight'), call_tour: toldModel('call_tour') };
        expect(told).toEqual({ call_sight: sampling, call_tour: tour });
        // The handler got the server's question as its program asked it: the adapter's name of the caller is gone.
        expect(asked).toEqual(elicitation === 'handler' ? [{ mode: 'form', message: 'Book a guided tour of Oslo?', requestedSchema: { type: 'object', properties: { book: { type: 'boolean', title: 'Book it' } }, required: ['book'] } }] : []);
        await expectTrue(recorded, out, told, { linked, handsOnIsError: true });
      }, 90_000);
    }
  }
});

/**
 * docs/adapters/mcp.md's agent ("The client"): an AI SDK tool of the program's own whose `execute` calls the MCP SDK's
 * `Client` (instrumented with `instrumentMcpClient`, no capabilities: its v1 `Client` answers a sampling request
 * "Method not found"). Returning the result whole hands on its `isError`: the call is failed. Returning its
 * `content`, as the page's snippet does, hands on none: the call is what the tool returned, `ok`, the server's
 * trajectory saying the call failed (a limit the page states).
 */
describe("an MCP server that asks back, reached through an AI SDK tool of the program's own calling the MCP SDK's Client", () => {
  for (const backend of backends()) {
    for (const returns of ['result', 'content'] as const) {
      it(`the tool returns the call's ${returns}: the agent's call is ${returns === 'result' ? 'failed' : 'ok'}, linked both ways (${backend})`, async () => {
        api.load(SCRIPT);
        const recorded = recordedPlugin('mcp-asks-back-client', backend);
        let session: string = RUNS[0].session;
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: () => session });
        const out = serverOut(recorded, undefined);
        const client = instrumentMcpClient(new Client({ name: 'trip-agent', version: '1.0.0' }), recorded.hooks);
        await client.connect(new StdioClientTransport({ command: process.execPath, args: serverArgs(out.dir), env: serverEnv(backend) }));
        try {
          const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: api.fetch });
          const tools = Object.fromEntries(
            RUNS.map((run) => [
              run.tool,
              tool({
                description: run.tool,
                inputSchema: z.object({ city: z.string() }),
                execute: async ({ city }) => {
                  const result = await client.callTool({ name: run.tool, arguments: { city } });
                  return returns === 'result' ? result : result.content;
                },
              }),
            ]),
          );
          for (const run of RUNS) {
            session = run.session;
            expect((await generateText({ model: openai('gpt-4.1'), prompt: run.prompt, tools, stopWhen: stepCountIs(3) })).text).toBe(run.answer);
          }
        } finally {
          await client.close();
        }
        const told = { call_sight: 'MCP error -32601: Method not found', call_tour: NO_ELICITATION };
        // The model got the tool's output as JSON: the result, or its content, with the error's text.
        for (const [call, text] of Object.entries(told)) {
          const content = [{ type: 'text', text }];
          expect(JSON.parse(toldModel(call))).toEqual(returns === 'result' ? { content, isError: true } : content);
        }
        await expectTrue(recorded, out, told, { linked: true, handsOnIsError: returns === 'result' });
      }, 90_000);
    }
  }
});
