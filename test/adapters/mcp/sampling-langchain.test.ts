// An MCP server that samples and elicits (sampling-programs.ts's trip server, a
// child over stdio) reached through LangChain: `@langchain/mcp-adapters`'
// `loadMcpTools` on a `Client` the program owns (its README's "your own MCP
// client"), the only way LangChain lets a program answer a server's requests
// (MultiServerMCPClient makes its `Client` with no sampling or elicitation
// capability). The program is written as LangChain's docs write one: a
// `createAgent` on `ChatOpenAI`, the client's sampling handler asking
// `ChatOpenAI` too, both with the program's one `NemoRelayCallbackHandler`;
// the models on a fake fetch speaking Chat Completions. The sampling's model
// call must be a sub-agent of the tool call whose server asked for it (as with
// an AI SDK tool), not a conversation of its own; the tool call's result is
// what the agent got, the server's trajectory referenced; the tokens as the
// provider reported them, each counted once. The same files on native.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadMcpTools, MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ChatOpenAI } from '@langchain/openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createAgent } from 'langchain';
import { afterAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { NemoRelayCallbackHandler } from '../../../src/adapters/langchain/index.ts';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { onlyTrajectory, recordedPlugin } from '../support.ts';
import { TRIP_SERVER } from './sampling-programs.ts';

type Doc = Record<string, any>;

/** A sampling message's text (the SDK types its content as one block or a list). */
function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((block: Doc) => (block?.type === 'text' ? String(block.text) : '')).join('');
}

// Inside the package, so the server's 'nemo-relay-hooks' is this one; its own outputs land in its cwd.
const home = path.join(repoRoot, '.tmp', 'mcp-sampling-langchain');
mkdirSync(home, { recursive: true });
const folder = mkdtempSync(path.join(home, 'server-'));
const script = path.join(folder, 'trip-server.mjs');
writeFileSync(script, TRIP_SERVER);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("an MCP server that samples and elicits, reached through LangChain's loadMcpTools", () => {
  it("MultiServerMCPClient's Client cannot answer: it is connected without the capabilities, and refuses the handlers", async () => {
    const mcp = new MultiServerMCPClient({ mcpServers: { trip: { transport: 'stdio', command: process.execPath, args: process.versions.deno ? ['run', '-A', script] : [script], env: process.env as Record<string, string>, stderr: 'ignore' } } });
    try {
      expect((await mcp.getTools()).map((tool) => tool.name)).toEqual(['plan_trip']);
      const client = await mcp.getClient('trip');
      expect(client).toBeDefined();
      expect(() => client!.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }))).toThrow(/does not support sampling/);
      expect(() => client!.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }))).toThrow(/does not support elicitation/);
    } finally {
      await mcp.close();
    }
  }, 60_000);

  for (const answer of ['accept', 'decline'] as const) {
    it(`the sampling's model call is a sub-agent of the LangChain tool call, the elicitation (${answer}) the tool's; the same on native`, async () => {
      const told = answer === 'accept' ? 'Vigeland Park (tour booked)' : 'Vigeland Park (no tour: decline)';
      const final = answer === 'accept' ? 'Visit Vigeland Park; your tour is booked.' : 'Visit Vigeland Park on your own.';
      const api = new FakeProvider();
      api.reply('chat', { id: 'chatcmpl_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_trip', name: 'plan_trip', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
      api.reply('chat', { id: 'chatcmpl_sample', model: 'gpt-4o-mini-2024-07-18', text: 'Vigeland Park', usage: { input: 30, output: 4 } });
      api.reply('chat', { id: 'chatcmpl_2', model: 'gpt-4o-2024-08-06', text: final, usage: { input: 130, output: 12 } });
      const openai = (model: string, more: Record<string, unknown> = {}) =>
        new ChatOpenAI({ model, apiKey: 'sk-test-not-a-key', maxRetries: 0, configuration: { fetch: api.fetch as typeof fetch }, ...more });
      const recorded = recordedPlugin('mcp-sampling-langchain');
      const handler = new NemoRelayCallbackHandler(recorded.hooks, { logger: silentLogger });

      const client = new Client({ name: 'trip-agent', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
      const asked: Doc[] = [];
      // The server asks for a completion: this program's model answers it, recorded by the program's handler.
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        asked.push(request.params);
        const reply = await openai('gpt-4o-mini', { maxTokens: request.params.maxTokens }).invoke(
          request.params.messages.map((message) => [message.role === 'assistant' ? 'ai' : 'human', textOf(message.content)] as [string, string]),
          { callbacks: [handler] },
        );
        return { role: 'assistant', content: { type: 'text', text: reply.text }, model: 'gpt-4o-mini', stopReason: 'endTurn' };
      });
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return answer === 'accept' ? { action: 'accept', content: { book: true } } : { action: answer };
      });
      instrumentMcpClient(client, recorded.hooks, { logger: silentLogger });
      const cwd = mkdtempSync(path.join(home, 'cwd-'));
      await client.connect(new StdioClientTransport({ command: process.execPath, args: process.versions.deno ? ['run', '-A', script] : [script], env: process.env as Record<string, string>, cwd, stderr: 'ignore' }));
      let messages: Doc[];
      try {
        const tools = await loadMcpTools('trip', client);
        const agent = createAgent({ model: openai('gpt-4o'), tools });
        ({ messages } = await agent.invoke({ messages: [{ role: 'user', content: 'Plan a day in Oslo.' }] }, { callbacks: [handler], configurable: { thread_id: 'user-42' } }));
      } finally {
        await client.close();
      }
      handler.close();

      // What the program got: the server's requests as its program sent them (no adapter key), the tool's answer, the model's.
      expect(asked[0]).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'Name one sight in Oslo.' } }], maxTokens: 100 });
      expect(asked[1]).toMatchObject({ mode: 'form', message: 'Book a guided tour of Vigeland Park?' });
      expect(JSON.stringify(asked)).not.toContain('nemo-relay');
      const toolMessage = messages.find((message) => message.tool_call_id === 'call_trip')!;
      expect(toolMessage.content).toBe(told);
      expect(messages.at(-1)!.content).toBe(final);
      expect(api.requests.map((request) => request.body.model)).toEqual(['gpt-4o', 'gpt-4o-mini', 'gpt-4o']);

      const { atif, counters } = await recorded.finish();
      expect(counters.errors ?? 0).toBe(0);
      // One trajectory: the sampling is no session of its own.
      const doc = onlyTrajectory(atif);
      expect(doc.session_id).toBe('user-42');
      expect(doc.steps.map((step: Doc) => [step.source, step.message, step.model_name ?? null, (step.tool_calls ?? []).map((call: Doc) => call.tool_call_id)])).toEqual([
        ['user', 'Plan a day in Oslo.', null, []],
        ['agent', '', 'gpt-4o-2024-08-06', ['call_trip']],
        ['agent', final, 'gpt-4o-2024-08-06', []],
      ]);
      const results = doc.steps[1].observation.results as Doc[];
      expect(results).toHaveLength(1);
      expect(results[0]!.source_call_id).toBe('call_trip');
      expect(results[0]!.content).toBe(told);
      // The sampling beside the server's trajectory, both referenced from the call that caused them.
      expect(results[0]!.subagent_trajectory_ref.map((ref: Doc) => ref.session_id)).toEqual(['user-42:sub:call_trip', expect.stringMatching(/^mcp-trip-server-[0-9a-f-]{36}$/)]);
      expect(results[0]!.subagent_trajectory_ref[1]).toMatchObject({ trajectory_id: expect.any(String), trajectory_path: expect.stringMatching(/\.json$/) });
      const sampling = doc.subagent_trajectories as Doc[];
      expect(sampling.map((sub) => sub.session_id)).toEqual(['user-42:sub:call_trip']);
      expect(sampling[0]!.steps.map((step: Doc) => [step.source, step.message, step.model_name ?? null])).toEqual([
        ['user', 'Name one sight in Oslo.', null],
        ['agent', 'Vigeland Park', 'gpt-4o-mini-2024-07-18'],
      ]);
      // Tokens once, as the provider reported them: the agent's two calls in its totals, the sampling's in the sub-agent's.
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 27 });
      expect(sampling[0]!.final_metrics).toMatchObject({ total_prompt_tokens: 30, total_completion_tokens: 4 });
      // The server's trajectory, where the reference says, names the agent's call and holds what the tool returned.
      try {
        const server = JSON.parse(readFileSync(path.join(cwd, 'trajectories', results[0]!.subagent_trajectory_ref[1].trajectory_path), 'utf8')) as Doc;
        expect(validateAtif(server)).toEqual([]);
        expect(server.session_id).toBe(results[0]!.subagent_trajectory_ref[1].session_id);
        expect(server.extra.caller).toMatchObject({ session_id: 'user-42', tool_call_id: 'call_trip', trajectory_id: doc.trajectory_id });
        expect(server.steps.map((step: Doc) => step.observation.results.map((entry: Doc) => [entry.content, entry.extra.metadata.tool_call_id, entry.extra.metadata.status]))).toEqual([[[told, 'call_trip', 'ok']]]);
        // The model call is the client's: the server records none (its tokens would count twice).
        expect(server.final_metrics).not.toHaveProperty('total_prompt_tokens');
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
      expect(recorded.log.filter((entry) => entry.hook === 'subagent_start').map((entry) => [entry.payload.parent_session_id, entry.payload.tool_call_id])).toEqual([['user-42', 'call_trip']]);
      await sameOnNative(recorded);
    }, 60_000);
  }
});
