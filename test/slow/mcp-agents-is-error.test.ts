// docs/adapters/mcp.md, "isError": an OpenAI Agents SDK agent whose MCP
// server (a child over stdio, as the SDK's docs start one) is not
// instrumented and answers a call with `isError`. The SDK gives the model
// that result as an ordinary output; the Agents adapter reads the result the
// server's `callTool` returned inside the call's own function span, so that
// call is failed (the result's text its error, the observation what the model
// got) and the others beside it are not: calls made at once, streamed runs,
// tracing on and off (`setTracingDisabled`), with or without
// `openAIAgentsMcpOptions`. A runner that disables tracing in its own config
// makes no span per call: there the call stays `ok` (pinned below).
//
// Each `connect()` of the SDK's `MCPServerStdio` starts the server twice: its
// MCP client (@modelcontextprotocol/client 2.x, `versionNegotiation: 'auto'`)
// asks a throwaway copy of the server for `server/discover` before it starts
// the one it keeps. So the runs without options share one server, connected
// once for the file, as a program serving several runs does; a run with
// options needs a server made with its own recorder's hooks.
// In the slow suite (Node, Bun, Deno; both backends where native loads): its agent and servers are processes
// of their own, seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, MCPServerStdio, OpenAIResponsesModel, Runner } from '@openai/agents';
import { openAIAgentsMcpOptions } from '../../src/adapters/mcp/index.ts';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { runtime } from '../support/child.ts';
import { repoRoot } from '../support/doc-snippets.ts';
import { backends, expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { hooks, observation, onlyTrajectory, TRACING, useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';

/** A weather server as the MCP SDK's docs write one, without nemo-relay-hooks: its alerts service is down. */
const SERVER = String.raw`
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
server.registerTool('forecast', { description: 'The forecast for a city', inputSchema: { city: z.string() } }, async ({ city }) => {
  // Oslo answers last: the answers come back in another order than the calls went out.
  if (city === 'Oslo') await new Promise((resolve) => setTimeout(resolve, 40));
  return { content: [{ type: 'text', text: city + ': rain' }] };
});
server.registerTool('alerts', { description: 'The weather alerts for a city', inputSchema: { city: z.string() } }, async ({ city }) => {
  return { content: [{ type: 'text', text: 'the alert service is down for ' + city }], isError: true };
});
await server.connect(new StdioServerTransport());
`;

const ALERT_TEXT = 'the alert service is down for Oslo';

let folder: string;
let script: string;
/** The server of the runs without options: they share it, connected once. */
let plain: MCPServerStdio | undefined;
beforeAll(async () => {
  const home = path.join(repoRoot, '.tmp', 'mcp-is-error');
  mkdirSync(home, { recursive: true });
  folder = mkdtempSync(path.join(home, `${runtime}-`));
  script = path.join(folder, 'server.mjs');
  writeFileSync(script, SERVER);
  plain = weatherServer({});
  await plain.connect();
});
afterAll(async () => {
  await plain?.close();
  rmSync(folder, { recursive: true, force: true });
});

const api = new FakeOpenAI();

function script3(): void {
  api.load({
    'gpt-4.1': [
      {
        calls: [
          { id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } },
          { id: 'call_alerts', name: 'alerts', args: { city: 'Oslo' } },
          { id: 'call_bergen', name: 'forecast', args: { city: 'Bergen' } },
        ],
        usage: { input: 60, output: 20 },
      },
      { text: 'Oslo: rain. Bergen: rain. Alerts unavailable.', usage: { input: 120, output: 9 } },
    ],
  });
}

/**
 * The server as the SDK's docs start it, with the options or without. The SDK gives the MCP handshake 5 s by
 * default (`clientSessionTimeoutSeconds`); a child runtime starting on a loaded machine can take longer, so the
 * test gives it the SDK's own option instead of losing the run to the clock.
 */
function weatherServer(options: object): MCPServerStdio {
  return new MCPServerStdio({ name: 'weather', command: process.execPath, args: runtime === 'deno' ? ['run', '-A', script] : [script], env: process.env as Record<string, string>, clientSessionTimeoutSeconds: 60, ...options });
}

/** What the model was told of each call, from the request after it. */
function toldModel(): Record<string, unknown> {
  const input = api.requests[1]!.body.input as Array<Record<string, any>>;
  return Object.fromEntries(input.filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, item.output]));
}

describe('an OpenAI Agents SDK agent whose MCP server (not instrumented) answers with isError', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      for (const backend of backends()) {
        for (const withOptions of [false, true]) {
          it(`that call failed with the result's text, the calls beside it not (${tracing}, ${stream ? 'streamed' : 'not streamed'}, ${backend}, ${withOptions ? 'with' : 'without'} openAIAgentsMcpOptions)`, async () => {
            useTracing(tracing);
            script3();
            const recorded = recordedPlugin('agents-mcp-is-error', backend);
            const uninstall = instrumentOpenAIAgents(recorded.hooks);
            const server = withOptions ? weatherServer(openAIAgentsMcpOptions(recorded.hooks)) : plain!;
            if (withOptions) await server.connect();
            try {
              const agent = new Agent({ name: 'Weather agent', instructions: 'You are a helpful weather assistant.', model: new OpenAIResponsesModel(api.client(), 'gpt-4.1'), mcpServers: [server] });
              const runner = new Runner();
              if (stream) {
                const result = await runner.run(agent, 'Weather and alerts for Oslo and Bergen?', { stream: true });
                for await (const _event of result) {
                  // Consumed as the docs do.
                }
                await result.completed;
                expect(result.finalOutput).toBe('Oslo: rain. Bergen: rain. Alerts unavailable.');
              } else {
                const result = await runner.run(agent, 'Weather and alerts for Oslo and Bergen?');
                expect(result.finalOutput).toBe('Oslo: rain. Bergen: rain. Alerts unavailable.');
              }
            } finally {
              if (withOptions) await server.close();
              uninstall();
            }
            // The SDK told the model the error's text as an ordinary output: the result's one content item.
            const told = toldModel();
            expect(JSON.stringify(told.call_alerts)).toContain(ALERT_TEXT);
            const output = (text: string): string => JSON.stringify({ type: 'text', text });
            const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
            expect([...ended.keys()].sort()).toEqual(['call_alerts', 'call_bergen', 'call_oslo']);
            expect(ended.get('call_alerts')).toMatchObject({ status: 'error', error_type: 'ToolError', error_message: ALERT_TEXT, result: output(ALERT_TEXT) });
            expect(ended.get('call_oslo')).toMatchObject({ status: 'ok', result: output('Oslo: rain') });
            expect(ended.get('call_bergen')).toMatchObject({ status: 'ok', result: output('Bergen: rain') });
            const { atif, counters } = await recorded.finish();
            expectNothingLost(counters);
            const doc = onlyTrajectory(atif);
            expect(observation(doc, 'call_alerts')).toMatchObject({ content: output(ALERT_TEXT), extra: { metadata: { status: 'error', 'error.type': 'ToolError' } } });
            expect(observation(doc, 'call_oslo')?.extra?.metadata?.status).toBe('ok');
            expect(observation(doc, 'call_bergen')?.extra?.metadata?.status).toBe('ok');
          }, 60_000);
        }
      }
    }
  }

  it('a runner whose own config disables tracing makes no span per call: the isError call stays ok, as the SDK saw it', async () => {
    useTracing('tracing on');
    script3();
    const recorded = recordedPlugin('agents-mcp-is-error-no-spans');
    const uninstall = instrumentOpenAIAgents(recorded.hooks);
    try {
      const agent = new Agent({ name: 'Weather agent', instructions: 'You are a helpful weather assistant.', model: new OpenAIResponsesModel(api.client(), 'gpt-4.1'), mcpServers: [plain!] });
      const result = await new Runner({ tracingDisabled: true }).run(agent, 'Weather and alerts for Oslo and Bergen?');
      expect(result.finalOutput).toBe('Oslo: rain. Bergen: rain. Alerts unavailable.');
    } finally {
      uninstall();
    }
    const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status]));
    expect(Object.fromEntries(ended)).toEqual({ call_oslo: 'ok', call_alerts: 'ok', call_bergen: 'ok' });
    expectNothingLost((await recorded.finish()).counters);
  }, 60_000);
});
