// An MCP server that asks its client back mid-call, reached through the Claude
// Agent SDK's `mcpServers` (the CLI owns the MCP client): the CLI declares
// elicitation, not sampling (its client capabilities), and hands an
// elicitation to the program's `onElicitation`. The server's tool asks to
// sample only when its client can, then elicits; the program answers. What the
// trajectories say against what the program and the server did: the call's
// result is what the server returned after the answer, the server's
// trajectory names the agent's call and is referenced from it, the agent's
// tokens are the provider's, and the elicitation is the tool's business (no
// step, no call). Slow: each query spawns the CLI, which spawns the server.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockReply, type MockRequest } from '../support/anthropic-mock.ts';
import { repoRoot } from '../support/doc-snippets.ts';

/** argv[2]: the trajectory folder. Backend: the environment's. */
const SERVER_SOURCE = String.raw`
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: process.argv[2] } });
plugin.register(hooks);

const server = new McpServer({ name: 'trip-server', version: '1.0.0' });
server.registerTool('book_tour', { description: 'Books a guided tour of a city', inputSchema: { city: z.string() } }, async ({ city }) => {
  const can = server.server.getClientCapabilities() ?? {};
  let sight = 'the harbour';
  if (can.sampling) {
    const sampled = await server.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Name one sight in ' + city + '.' } }], maxTokens: 100 });
    if (sampled.content.type === 'text') sight = sampled.content.text;
  }
  const answer = await server.server.elicitInput({
    mode: 'form',
    message: 'Book a guided tour of ' + sight + ' in ' + city + '?',
    requestedSchema: { type: 'object', properties: { book: { type: 'boolean', title: 'Book it' } }, required: ['book'] },
  });
  const booked = answer.action === 'accept' && answer.content?.book === true;
  return { content: [{ type: 'text', text: sight + (booked ? ' (tour booked)' : ' (no tour: ' + answer.action + ')') + '; client capabilities: ' + Object.keys(can).sort().join(',') }] };
});
instrumentMcpServer(server, hooks);
await server.connect(new StdioServerTransport());
process.stdin.on('close', () => plugin.shutdown().then(() => process.exit(0)));
plugin.installExitHandlers();
`;

const PROMPT = 'Book me a tour of Oslo.';
const FINAL = 'Your tour of the harbour is booked.';

function script(request: MockRequest): MockReply {
  if (request.assistantTurns === 0) {
    return { blocks: [{ type: 'tool_use', id: 'toolu_book', name: 'mcp__trip__book_tour', input: { city: 'Oslo' } }], usage: { input: 40, output: 12 }, model: 'claude-mcp-2026-01-01' };
  }
  return { blocks: [{ type: 'text', text: FINAL }], usage: { input: 90, output: 9 }, model: 'claude-mcp-2026-01-01' };
}

let folder: string;
beforeAll(() => {
  const home = path.join(repoRoot, '.tmp', 'mcp-sampling-frameworks');
  mkdirSync(home, { recursive: true });
  folder = mkdtempSync(path.join(home, 'run-'));
  // Inside the package: `nemo-relay-hooks` and the SDK resolve as they do for a user.
  writeFileSync(path.join(folder, 'trip-server.mjs'), SERVER_SOURCE);
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** Waits for the server's trajectory: it writes it as its call ends, off the host thread. */
async function serverFile(dir: string): Promise<[string, AtifDoc] | undefined> {
  const deadline = Date.now() + 60_000;
  const list = (): string[] => (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.json')) : []);
  while (list().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const file = list()[0];
  return file === undefined ? undefined : [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as AtifDoc];
}

describe('an MCP server that elicits, reached through the Claude Agent SDK (the CLI cannot sample)', () => {
  for (const backend of backends()) {
    it(`onElicitation answers; the call's result, the server's trajectory and the reference are true (${backend})`, async () => {
      const mock = await startAnthropicMock(script);
      const recorded = recordedPlugin(`mcp-elicit-claude-${backend}`, backend);
      const offline = offlineClaudeEnv(mock.url);
      const serverOut = path.join(recorded.dir, 'server-atif');
      const runtimeArgs = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? ['run', '-A'] : [];
      const asked: sdk.ElicitationRequest[] = [];
      let toolUseResult: unknown;
      let answer: string | undefined;
      try {
        const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
        for await (const message of query({
          prompt: PROMPT,
          options: {
            cwd: offline.home,
            env: offline.env,
            settingSources: [],
            mcpServers: { trip: { type: 'stdio', command: process.execPath, args: [...runtimeArgs, path.join(folder, 'trip-server.mjs'), serverOut], env: { PATH: process.env.PATH ?? '', NEMO_RELAY_HOOKS_BACKEND: backend } } },
            allowedTools: ['mcp__trip__book_tour'],
            onElicitation: async (request) => {
              asked.push(request);
              return { action: 'accept', content: { book: true } };
            },
          },
        })) {
          if (message.type === 'user' && Array.isArray(message.message.content) && message.message.content.some((block) => block.type === 'tool_result')) toolUseResult = message.tool_use_result;
          if (message.type === 'result' && message.subtype === 'success') answer = message.result;
        }
        expect(answer).toBe(FINAL);
        // The CLI's MCP client declares elicitation and roots, no sampling: the server could not sample.
        const told = 'the harbour (tour booked); client capabilities: elicitation,roots';
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({ serverName: 'trip', message: 'Book a guided tour of the harbour in Oslo?', mode: 'form' });
        expect(JSON.stringify(asked)).not.toContain('nemo-relay');
        const server = await serverFile(serverOut);
        expect(server, 'the server trajectory').toBeDefined();
        const [file, serverDoc] = server!;
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        const agent = atif[0]!;
        for (const doc of [agent, serverDoc]) expect(validateAtif(doc)).toEqual([]);
        // The server's trajectory: the agent's call named (the CLI names only its tool_use id), the result after the answer.
        expect(serverDoc.extra.caller).toEqual({ tool_call_id: 'toolu_book' });
        expect((serverDoc.steps as AtifDoc[]).map((step) => step.observation.results.map((entry: AtifDoc) => [entry.content, entry.extra.metadata.tool_call_id, entry.extra.metadata.status]))).toEqual([[[told, 'toolu_book', 'ok']]]);
        // The agent's: the call's result is what the program read, referencing the server's trajectory; no step or call for the elicitation.
        const results = (agent.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []);
        expect(results.map((entry: AtifDoc) => entry.source_call_id)).toEqual(['toolu_book']);
        expect(JSON.stringify(results[0].content)).toContain(told);
        expect(JSON.stringify(toolUseResult)).toContain(told);
        expect(results[0].subagent_trajectory_ref).toEqual([{ trajectory_id: serverDoc.trajectory_id, session_id: serverDoc.session_id, trajectory_path: file }]);
        expect((agent.steps as AtifDoc[]).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id))).toEqual(['toolu_book']);
        expect(agent).not.toHaveProperty('subagent_trajectories');
        // Tokens as the provider reported them: two model calls.
        expect(agent.final_metrics).toMatchObject({ total_prompt_tokens: 130, total_completion_tokens: 21 });
      } finally {
        await mock.close();
        rmSync(offline.home, { recursive: true, force: true });
        rmSync(recorded.dir, { recursive: true, force: true });
      }
    }, 180_000);
  }
});
