// WHEN things happened, not only what: the Claude Agent SDK program of the
// docs (an in-process SDK MCP tool, `query()` read to its result) on the real
// SDK and its bundled CLI, against a loopback Anthropic Messages API that
// takes its time (each stream's first event after 200 ms, a model's time to
// first token, and its last at 500 ms), with a tool that awaits 200 ms. The
// spans in the ATOF file, the ATIF steps' stamps and `view`'s durations are
// checked against the server's and the tool's own clocks
// (test/adapters/timing-checks.ts), on each backend.
//
// The main agent only: a foreground sub-agent's requests are stamped when
// its transcript is read (docs/adapters/claude-agent-sdk.md). Slow (the
// query spawns the CLI), so it runs in `npm run test:slow`.
import { rmSync } from 'node:fs';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends, expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { checkTimes, timedTool, type ProgramTimes } from '../adapters/timing-checks.ts';
import { offlineClaudeEnv } from '../support/anthropic-mock.ts';
import { loopbackApi, wallMs } from '../support/doc-snippets.ts';
import { paced, type Pace } from '../support/paced-wire.ts';
import { anthropicError, anthropicStream, wireResponse, type AnthropicBlock } from '../support/provider-wire.ts';

const PACE: Pace = { firstByteMs: 200, lastByteMs: 500 };
const MODEL = 'claude-main-2026-01-01';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Claude Agent SDK: the times a recorded query says are the times it took', () => {
  for (const backend of backends()) {
    it(`a tool call and the answer after it, ${backend} backend`, async () => {
      const others: string[] = [];
      const toolRuns: Array<ProgramTimes['tool']> = [];
      const server = await loopbackApi(async (url, init) => {
        const path = new URL(url).pathname;
        if (path !== '/v1/messages') {
          others.push(path);
          return wireResponse(anthropicError(404, 'not_found_error', 'not served here'), 'req_other', false);
        }
        const receivedMs = wallMs();
        const body = JSON.parse(init.body);
        const asked = body.messages.some((message: { role: string }) => message.role === 'assistant');
        const content: AnthropicBlock[] = asked ? [{ type: 'text', text: 'Paris: sunny, 21 °C.' }] : [{ type: 'tool_use', id: 'toolu_paris', name: 'mcp__weather__get_weather', input: { city: 'Paris' } }];
        const n = server.exchanges.length + 1;
        const reply = anthropicStream({ id: `msg_${n}`, model: MODEL, content, usage: { input_tokens: 20, output_tokens: 6 } });
        return paced(wireResponse(reply, `req_${n}`), PACE, receivedMs);
      });
      const offline = offlineClaudeEnv(server.url);
      cleanups.push(() => server.close(), () => rmSync(offline.home, { recursive: true, force: true }));

      const recorded = recordedPlugin(`claude-timing-${backend}`, backend);
      const { query, tool, createSdkMcpServer } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const weather = createSdkMcpServer({
        name: 'weather',
        version: '1.0.0',
        tools: [
          tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => {
            const ran = { startMs: 0, endMs: 0 };
            toolRuns.push(ran);
            await timedTool(ran);
            return { content: [{ type: 'text', text: `${city}: sunny, 21 °C` }] };
          }),
        ],
      });
      const runStartMs = wallMs();
      let answer: string | undefined;
      for await (const message of query({
        prompt: 'What is the weather in Paris?',
        options: { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [], mcpServers: { weather }, allowedTools: ['mcp__weather__get_weather'] },
      })) {
        if (message.type === 'result' && message.subtype === 'success') answer = message.result;
      }
      const runEndMs = wallMs();
      expect(answer).toBe('Paris: sunny, 21 °C.');
      expect(others, 'no traffic besides the model requests').toEqual([]);
      expect(server.exchanges).toHaveLength(2);
      expect(toolRuns).toHaveLength(1);

      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      // The CLI is another process: the announcement of a request reaches the SDK through its output, a little after
      // it may have sent the request, and far before its first byte. The CLI starts the tool as soon as its block is
      // complete, while the reply still streams, and so does the call's span.
      checkTimes(atof, atif[0]!, { runStartMs, runEndMs, exchanges: server.exchanges, answerMs: PACE.lastByteMs, tool: toolRuns[0]!, streamed: true, announceMs: 100, toolDuringReply: true });
    }, 120_000);
  }
});
