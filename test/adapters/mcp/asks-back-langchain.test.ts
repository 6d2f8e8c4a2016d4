// docs/adapters/mcp.md's "LangChain, MultiServerMCPClient" row, run: an MCP
// server (instrumented with `instrumentMcpServer`, a child over stdio or on
// its own over Streamable HTTP) whose tools (a) ask the client for sampling,
// (b) ask it for a form elicitation, (c) answer with `isError`, reached from
// a LangChain `createAgent` on a real `ChatOpenAI` (a fake fetch speaking
// Chat Completions) with the tools `MultiServerMCPClient.getTools()` loads,
// its `Client` instrumented as the page says (`getClient(name)` after
// `getTools()`). The package makes that `Client` with no capabilities and
// offers no sampling or elicitation option (its hooks are notifications:
// `onMessage`, `onProgress`...; `beforeToolCall`/`afterToolCall` see the
// call, not the server's requests), so the server's requests fail at once:
// the MCP SDK's v1 `Client` answers sampling "Method not found", and the
// server's SDK refuses to ask for an elicitation the client did not declare.
// The tools let the errors escape, so each call ends with `isError`, which
// the adapters throw as a `ToolException` and `createAgent`'s `ToolNode`
// gives the model as an error `ToolMessage`. Nothing hangs: each run ends
// with the model's answer. What the trajectories say against that: the
// agent's call failed, `ToolError` with the result's text (the shared rule),
// the observation what the model was told, the two trajectories naming each
// other. Without `instrumentMcpClient` nothing is linked and the agent's
// side never sees the result: the call is failed with the error LangChain
// threw. Memory and native write the same files.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NemoRelayCallbackHandler } from '../../../src/adapters/langchain/index.ts';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { runtime } from '../../support/child.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, processBackends, recordedPlugin, type AtifDoc } from '../support.ts';
import { hooks, observation } from '../openai-agents/support.ts';
import { serveHttp } from './agents-check.ts';
import { TRIP_SERVER } from './trip-server-source.ts';

/** The three runs: each asks the model for one call of one tool, then answers. */
const RUNS = [
  { session: 'sight-run', prompt: 'Name a sight in Oslo.', call: 'call_sight', tool: 'name_sight', answer: 'I could not name a sight.' },
  { session: 'tour-run', prompt: 'Book a tour of Oslo.', call: 'call_tour', tool: 'book_tour', answer: 'I could not book the tour.' },
  { session: 'alerts-run', prompt: 'Any weather alerts in Oslo?', call: 'call_alerts', tool: 'weather_alerts', answer: 'The alerts service is down.' },
] as const;
type Call = (typeof RUNS)[number]['call'];

/** The error text of each call's result (`isError`), as the server's tool ended: the client's refusals, then the tool's own. */
const FAILED: Record<Call, string> = {
  // The MCP SDK's v1 `Client` (the adapters' own), declaring no sampling, answers the request so.
  call_sight: 'MCP error -32601: Method not found',
  // The server's MCP SDK refuses to ask a client that did not declare elicitation: the request is never sent.
  call_tour: 'Client does not support form elicitation.',
  call_alerts: 'The alerts service for Oslo is down.',
};

/** What `@langchain/mcp-adapters` throws for a result with `isError`, and `createAgent`'s ToolNode tells the model of it. */
const thrown = (call: Call): string => `MCP tool '${RUNS.find((run) => run.call === call)!.tool}' on server 'trip' returned an error: ${FAILED[call]}`;
const toldModel = (call: Call): string => `ToolException: ${thrown(call)}\n Please fix your mistakes.`;

let folder: string;
let script: string;
beforeAll(() => {
  const home = path.join(repoRoot, '.tmp', 'mcp-asks-back-langchain');
  mkdirSync(home, { recursive: true });
  // Inside the package: `nemo-relay-hooks` resolves as it does for a user.
  folder = mkdtempSync(path.join(home, `${runtime}-`));
  script = path.join(folder, 'asking-server.mjs');
  writeFileSync(script, TRIP_SERVER);
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const runtimeArgs = runtime === 'deno' ? ['run', '-A'] : [];
const serverEnv = (backend: string): Record<string, string> => ({ ...(process.env as Record<string, string>), NEMO_RELAY_HOOKS_BACKEND: backend });

/** The server's trajectories, by file name, once it wrote one per call (it writes each as its call ends, off its host thread). */
async function serverFiles(dir: string): Promise<Map<string, AtifDoc>> {
  const list = (): string[] => (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.json')).sort() : []);
  for (let waited = 0; list().length < RUNS.length && waited < 600; waited += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  return new Map(list().map((file) => [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as AtifDoc]));
}

/** Each backend over stdio and Streamable HTTP with the client instrumented, and over stdio without it. */
const CASES = processBackends().flatMap((backend) => [...(['stdio', 'http'] as const).map((transport) => [backend, transport, true] as const), [backend, 'stdio', false] as const]);

describe("an MCP server that asks back and answers isError, reached through LangChain's MultiServerMCPClient", () => {
  for (const [backend, transport, linked] of CASES) {
    const title = linked ? "each call fails with the result's text (ToolError), linked both ways" : 'not linked, each call fails with the error LangChain threw';
    it(`${title}; the runs end (${transport}, ${backend})`, async () => {
      const api = new FakeProvider();
      RUNS.forEach((run, n) => {
        api.reply('chat', { id: `chatcmpl_${n}a`, model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: run.call, name: run.tool, args: { city: 'Oslo' } }], usage: { input: 50 + n, output: 10 } });
        api.reply('chat', { id: `chatcmpl_${n}b`, model: 'gpt-4o-2024-08-06', text: run.answer, usage: { input: 80 + n, output: 5 } });
      });
      const recorded = recordedPlugin('mcp-asks-back-langchain', backend);
      const handler = new NemoRelayCallbackHandler(recorded.hooks, { logger: silentLogger });
      const serverOut = path.join(recorded.dir, 'server-atif');
      const http = transport === 'http' ? await serveHttp(script, serverOut, serverEnv(backend), runtimeArgs, 'http') : undefined;
      // As the package's README configures a server, and as docs/adapters/mcp.md instruments its client.
      const mcp = new MultiServerMCPClient({
        mcpServers: {
          trip: http === undefined ? { transport: 'stdio', command: process.execPath, args: [...runtimeArgs, script, serverOut], env: serverEnv(backend), stderr: 'ignore' } : { transport: 'http', url: http.url },
        },
      });
      const told = new Map<string, unknown>();
      try {
        const tools = await mcp.getTools();
        expect(tools.map((tool) => tool.name)).toEqual(['name_sight', 'book_tour', 'weather_alerts']);
        if (linked) instrumentMcpClient((await mcp.getClient('trip'))!, recorded.hooks, { logger: silentLogger });
        const agent = createAgent({ model: new ChatOpenAI({ model: 'gpt-4o', apiKey: 'sk-test-not-a-key', maxRetries: 0, configuration: { fetch: api.fetch as typeof fetch } }), tools });
        for (const run of RUNS) {
          const { messages } = await agent.invoke({ messages: [{ role: 'user', content: run.prompt }] }, { callbacks: [handler], configurable: { thread_id: run.session } });
          expect(messages.at(-1)!.content).toBe(run.answer);
          const message = messages.find((entry) => (entry as { tool_call_id?: string }).tool_call_id === run.call) as { content: unknown; status?: string };
          told.set(run.call, [message.content, message.status]);
        }
      } finally {
        await mcp.close();
        await http?.stop();
      }
      handler.close();
      // What the program got (the ToolMessage in the state) and what the model was sent next: the adapters' error.
      expect(Object.fromEntries(told)).toEqual(Object.fromEntries(RUNS.map((run) => [run.call, [toldModel(run.call), 'error']])));
      for (const run of RUNS) {
        const sent = api.requests.flatMap((request) => request.body.messages as Array<Record<string, any>>).find((message) => message.role === 'tool' && message.tool_call_id === run.call);
        expect(sent?.content).toBe(toldModel(run.call));
      }

      // The agent's hooks: each call failed, ToolError with the result's text, as the server's trajectory says; its
      // result what the model was told. Not linked, the agent's side never sees the result: the call failed with the
      // error the MCP adapters threw.
      const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
      for (const run of RUNS) {
        const error = linked ? { error_type: 'ToolError', error_message: FAILED[run.call] } : { error_type: 'ToolException', error_message: thrown(run.call) };
        expect(ended.get(run.call), run.call).toMatchObject({ status: 'error', ...error, result: toldModel(run.call) });
      }
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      const atifDir = path.join(recorded.dir, 'atif');
      const agentFiles = new Map(readdirSync(atifDir).map((file) => [file, JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as AtifDoc]));
      const server = await serverFiles(serverOut);
      expect([...agentFiles.values()].map((doc) => doc.session_id).sort()).toEqual(RUNS.map((run) => run.session).sort());
      expect(server.size).toBe(RUNS.length);
      for (const [file, doc] of [...agentFiles, ...server]) expect(validateAtif(doc), file).toEqual([]);
      const results = (doc: AtifDoc): AtifDoc[] => doc.steps.flatMap((step: AtifDoc) => step.observation?.results ?? []);
      for (const run of RUNS) {
        const [agentFile, agentDoc] = [...agentFiles].find(([, doc]) => doc.session_id === run.session)!;
        const [serverFile, serverDoc] = [...server].find(([, doc]) => results(doc).some((result) => result.content === FAILED[run.call]))!;
        // The server's: one call, the agent's, failed with the text the agent's program got inside its error.
        if (linked) expect(serverDoc.extra.caller).toEqual({ session_id: run.session, tool_call_id: run.call, trajectory_id: agentDoc.trajectory_id, trajectory_path: agentFile });
        else expect(serverDoc.extra?.caller).toBeUndefined();
        expect(results(serverDoc).map((result: AtifDoc) => [result.content, result.extra.metadata.status])).toEqual([[FAILED[run.call], 'error']]);
        if (linked) expect(results(serverDoc)[0].extra.metadata.tool_call_id).toBe(run.call);
        // The agent's: the call failed, observed as the ToolMessage the model read (ToolNode's sentence around the
        // thrown error), referencing the server's trajectory.
        const result = observation(agentDoc, run.call)!;
        expect(result.content).toBe(toldModel(run.call));
        expect(result.extra.metadata).toMatchObject({ status: 'error', 'error.type': linked ? 'ToolError' : 'ToolException' });
        if (linked) expect(result.subagent_trajectory_ref).toEqual([{ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile }]);
        else expect(result).not.toHaveProperty('subagent_trajectory_ref');
        expect(agentDoc.steps.at(-1).message).toBe(run.answer);
      }
      await sameOnNative(recorded);
    }, 90_000);
  }
});
