// WHEN things happened, not only what: the Claude Agent SDK program of the
// docs (an in-process SDK MCP tool, `query()` read to its result) on the real
// SDK and its bundled CLI, against a loopback Anthropic Messages API that
// takes its time (each stream's first event after 200 ms, a model's time to
// first token, and its last at 500 ms), with a tool that awaits 200 ms. The
// spans in the ATOF file, the ATIF steps' stamps and `view`'s durations are
// checked against the server's and the tool's own clocks
// (test/adapters/timing-checks-paced.ts), on each backend.
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
import { checkAtifTimes, checkAtofTimes, checkViewDurations, spans, type Timeline, type ToolRun } from '../adapters/timing-checks-paced.ts';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { AtofEvent as TypedAtofEvent } from '../../src/formats/atof/types.ts';
import type { AtifDoc, AtofEvent } from '../adapters/support.ts';
import { offlineClaudeEnv } from '../support/anthropic-mock.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { paced, wallMs, type Pace, type Served } from '../support/paced-wire.ts';
import { anthropicError, anthropicStream, wireResponse, type AnthropicBlock } from '../support/provider-wire.ts';

const PACE: Pace = { firstByteMs: 200, lastByteMs: 500 };
const TOOL_MS = 200;
const MODEL = 'claude-main-2026-01-01';

const cleanups: Array<() => Promise<void> | void> = [];

/**
 * The shared checks, for a tool that starts while the reply that asked for it
 * still streams: the shared checker wants a tool span after the LLM span
 * that asked for it (every other adapter's test reads the tool's call before
 * it runs), so its LLM, session and turn checks run on the events without the
 * tool scopes, and the tool span is checked here: from the tool's own start
 * (within the reply that asked for it) to its return, before the next request.
 * The ATIF stamps and `view`'s durations are the shared checks, tool included.
 */
function checkToolDuringReply(atof: readonly AtofEvent[], doc: AtifDoc, line: Timeline): void {
  const withoutTools = atof.filter((event) => !(event.kind === 'scope' && event.category === 'tool'));
  const { llm } = checkAtofTimes(withoutTools, { ...line, tools: [] });
  const tools = spans(atof, 'tool');
  expect(tools.length, 'one tool span per call').toBe(line.tools.length);
  const sessionEnd = spans(atof, 'agent')[0]!.endMs;
  const turnEnd = atof.find((event) => event.kind === 'mark' && event.name === 'hermes.turn.end')!;
  tools.forEach((span, i) => {
    const run = line.tools[i]!;
    const ms = (at: number): string => (at - line.startedMs).toFixed(1);
    const what = `tool span ${i + 1} (${ms(span.startMs)} to ${ms(span.endMs)} ms; the tool ran ${ms(run.startMs)} to ${ms(run.endMs!)} ms)`;
    expect(span.startMs, `${what}: after the request that asked for it started`).toBeGreaterThanOrEqual(llm[i]!.startMs);
    expect(span.startMs, `${what}: starts by the tool's own start`).toBeLessThanOrEqual(run.startMs + 1);
    expect(span.endMs, `${what}: ends no sooner than the tool returned`).toBeGreaterThanOrEqual(run.endMs! - 1);
    expect(span.endMs, `${what}: ends soon after the tool returned`).toBeLessThanOrEqual(run.endMs! + 2000);
    expect(span.endMs - span.startMs, `${what}: lasts the tool's time`).toBeGreaterThanOrEqual(0.8 * line.toolMs);
    expect(llm[i + 1]?.startMs ?? Infinity, `${what}: ends before the next request starts`).toBeGreaterThanOrEqual(span.endMs);
    expect(sessionEnd, `${what}: ends in the session`).toBeGreaterThanOrEqual(span.endMs);
    expect(Date.parse(String(turnEnd.timestamp)), `${what}: ends in the turn`).toBeGreaterThanOrEqual(Math.floor(span.endMs));
  });
  const found = { llm, tools };
  checkAtifTimes(doc, found);
  const roots = treesFromAtof(atof as readonly TypedAtofEvent[]);
  expect(roots).toHaveLength(1);
  checkViewDurations(roots[0]!, line, found, 'view of the ATOF file');
  checkViewDurations(treeFromAtif(doc), line, found, 'view of the ATIF file');
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Claude Agent SDK: the times a recorded query says are the times it took', () => {
  for (const backend of backends()) {
    it(`a tool call and the answer after it, ${backend} backend`, async () => {
      const served: Served[] = [];
      const others: string[] = [];
      const toolRuns: ToolRun[] = [];
      const server = await loopbackApi(async (url, init) => {
        const path = new URL(url).pathname;
        if (path !== '/v1/messages') {
          others.push(path);
          return wireResponse(anthropicError(404, 'not_found_error', 'not served here'), 'req_other', false);
        }
        const request: Served = { path, stream: true, receivedMs: wallMs() };
        served.push(request);
        const body = JSON.parse(init.body);
        const asked = body.messages.some((message: { role: string }) => message.role === 'assistant');
        const content: AnthropicBlock[] = asked ? [{ type: 'text', text: 'Paris: sunny, 21 °C.' }] : [{ type: 'tool_use', id: 'toolu_paris', name: 'mcp__weather__get_weather', input: { city: 'Paris' } }];
        const reply = anthropicStream({ id: `msg_${served.length}`, model: MODEL, content, usage: { input_tokens: 20, output_tokens: 6 } });
        return paced(wireResponse(reply, `req_${served.length}`), PACE, request);
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
            const ran: ToolRun = { startMs: wallMs() };
            toolRuns.push(ran);
            await new Promise((resolve) => setTimeout(resolve, TOOL_MS));
            ran.endMs = wallMs();
            return { content: [{ type: 'text', text: `${city}: sunny, 21 °C` }] };
          }),
        ],
      });
      const startedMs = wallMs();
      let answer: string | undefined;
      for await (const message of query({
        prompt: 'What is the weather in Paris?',
        options: { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [], mcpServers: { weather }, allowedTools: ['mcp__weather__get_weather'] },
      })) {
        if (message.type === 'result' && message.subtype === 'success') answer = message.result;
      }
      const endedMs = wallMs();
      expect(answer).toBe('Paris: sunny, 21 °C.');
      expect(others, 'no traffic besides the model requests').toEqual([]);
      expect(served).toHaveLength(2);
      expect(toolRuns).toHaveLength(1);

      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      // The CLI is another process: the announcement of a request reaches the SDK through its output, a little after
      // it may have sent the request, and far before its first byte. The CLI starts the tool as soon as its block is
      // complete, while the reply still streams, and so does the call's span.
      checkToolDuringReply(atof, atif[0]!, { served, answerMs: PACE.lastByteMs, tools: toolRuns, toolMs: TOOL_MS, startedMs, endedMs, announceMs: 100 });
    }, 120_000);
  }
});
