// A foreground sub-agent on the real SDK and its bundled CLI, against a
// loopback Anthropic Messages API: it reads a file and answers. The CLI runs
// the sub-agent's two requests, fires `SubagentStop` (naming its last text),
// returns the Agent call, and only then sends the main agent's next request;
// it writes the sub-agent's transcript in batches, so the record of the final
// answer may come after all of that. The trajectory must hold every reply
// the API sent the sub-agent (text, tool calls, model, the API's usage) and
// end it before the main agent's session: before its Agent call returns when
// nothing is left to wait for (no transcript: its final answer, which the
// stream never shows, is then the Agent call's result).
//
// Then the program aborts (`abortController`) while the sub-agent's
// in-process MCP tool runs, with no transcript: the CLI tells the model the
// call was interrupted before a result was received and goes on; the
// streamed result does not say the call was cut (no `non_execution_kind`,
// which the main agent's result has), the CLI's words and the program's
// abort do. The call must end interrupted, not as a tool error.
//
// Slow (each query spawns the CLI): npx vitest run --config vitest.slow.config.ts.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import * as z from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockReply, type MockRequest } from '../support/anthropic-mock.ts';

const MAIN_MODEL = 'claude-main-2026-01-01';
const SUB_MODEL = 'claude-sub-2026-01-01';
const ANSWER = 'Founded in the 3rd century BC by the Parisii.';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function runProgram(persistSession: boolean) {
  let home = '';
  /** What reached the wire, in order: who asked, and at which step of its conversation. */
  const wire: string[] = [];
  const mock = await startAnthropicMock((request: MockRequest): MockReply => {
    const sub = request.system.includes('You are the researcher');
    wire.push(`${sub ? 'sub' : 'main'}:${request.assistantTurns}`);
    if (sub) {
      if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: { input: 7, output: 3 }, model: SUB_MODEL };
      return { blocks: [{ type: 'text', text: ANSWER }], usage: { input: 15, output: 8, cacheRead: 4 }, model: SUB_MODEL };
    }
    if (request.assistantTurns === 0) {
      return { blocks: [{ type: 'tool_use', id: 'toolu_task_1', name: 'Agent', input: { description: 'research Paris', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 6 }, model: MAIN_MODEL };
    }
    return { blocks: [{ type: 'text', text: 'Paris was founded by the Parisii.' }], usage: { input: 50, output: 12 }, model: MAIN_MODEL };
  });
  const offline = offlineClaudeEnv(mock.url);
  home = offline.home;
  cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
  writeFileSync(path.join(home, 'notes.txt'), 'Paris was founded in the 3rd century BC by the Parisii.\n');
  const recorded = recordedPlugin(`claude-subagent-end-${persistSession ? 'transcript' : 'none'}`);
  const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const messages: any[] = [];
  for await (const message of claude.query({
    prompt: 'How was Paris founded?',
    options: {
      model: 'claude-main',
      cwd: home,
      env: offline.env,
      settingSources: [],
      allowedTools: ['Read', 'Agent'],
      agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: 'claude-sub' } },
      persistSession,
    },
  })) {
    messages.push(message);
  }
  return { recorded, messages, wire, mock };
}

describe('wrapClaudeAgentSdk: a foreground sub-agent ends where the CLI ended it', () => {
  for (const persistSession of [true, false]) {
    it(`ends the sub-agent with every reply the API sent it, before its call returns when nothing is left to wait for (persistSession: ${persistSession})`, async () => {
      const { recorded, messages, wire, mock } = await runProgram(persistSession);
      // The CLI's order: the sub-agent's two requests, then the main agent's next one.
      expect(wire).toEqual(['main:0', 'sub:0', 'sub:1', 'main:1']);
      const toolResult = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === null && m.message.content.some((b: any) => b.tool_use_id === 'toolu_task_1'));
      expect(toolResult.tool_use_result).toMatchObject({ status: 'completed', content: [{ type: 'text', text: ANSWER }] });
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);

      const log = recorded.log;
      const child = log.find((entry) => entry.hook === 'subagent_start')!.payload.child_session_id;
      const subEnd = log.findIndex((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child);
      const agentCallEnd = log.findIndex((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_task_1');
      const mainRequests = log.flatMap((entry, index) => (entry.hook === 'pre_api_request' && entry.payload.session_id === doc.session_id ? [index] : []));
      expect(mainRequests).toHaveLength(2);
      expect(subEnd).toBeGreaterThan(-1);
      expect(agentCallEnd, 'the call returns before the main agent asks again').toBeLessThan(mainRequests[1]!);
      if (persistSession) {
        // With a transcript, the sub-agent ends before its call returns when the CLI has written its transcript up to
        // the final answer by then (test/adapters/claude-agent-sdk/subagent-final-answer.test.ts plays both timings);
        // else as soon as it has, and before the query's session ends.
        expect(subEnd).toBeLessThan(log.findIndex((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id));
      } else {
        // No transcript to wait for: the sub-agent ends as its call returns, before it.
        expect(subEnd, 'the sub-agent ends before its Agent call returns').toBeLessThan(agentCallEnd);
      }
      expect(log[subEnd]!.payload).toMatchObject({ completed: true });
      // Every request of the sub-agent starts and ends in its session before it ends.
      const subRequestEnds = log.flatMap((entry, index) => (entry.hook === 'post_api_request' && entry.payload.session_id === child ? [index] : []));
      expect(subRequestEnds).toHaveLength(2);
      expect(Math.max(...subRequestEnds)).toBeLessThan(subEnd);

      // Its steps are the API's replies: text, tool calls and model; its final answer has the API's usage of it.
      const subDoc = (doc.subagent_trajectories as AtifDoc[])[0]!;
      const steps = (subDoc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      const replies = mock.replies.filter((entry) => entry.model === SUB_MODEL).map((entry) => entry.reply as Extract<MockReply, { blocks: unknown }>);
      expect(steps.map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual(
        replies.map((reply) => [SUB_MODEL, reply.blocks.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join(''), reply.blocks.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id)]),
      );
      expect([steps[1]!.metrics?.prompt_tokens, steps[1]!.metrics?.completion_tokens]).toEqual([15 + 4, 8]);
      // With a transcript, every step has the API's usage; the SDK's modelUsage for the sub-agent's model says the same.
      if (persistSession) {
        expect([steps[0]!.metrics?.prompt_tokens, steps[0]!.metrics?.completion_tokens]).toEqual([7, 3]);
        const byModel = messages.at(-1).modelUsage['claude-sub'];
        expect([byModel.inputTokens + byModel.cacheReadInputTokens + byModel.cacheCreationInputTokens, byModel.outputTokens]).toEqual([7 + 15 + 4, 3 + 8]);
      }
      await sameOnNative(recorded);
    }, 120_000);
  }
});

describe('wrapClaudeAgentSdk: a sub-agent\'s MCP call cut by the program\'s abort, with no transcript', () => {
  it('ends the call interrupted, with what the model was told, and the sub-agent with its final answer', async () => {
    const mock = await startAnthropicMock((request: MockRequest): MockReply => {
      if (request.system.includes('You are the researcher.')) {
        return request.assistantTurns === 0
          ? { blocks: [{ type: 'text', text: 'Looking it up.' }, { type: 'tool_use', id: 'toolu_subslow', name: 'mcp__ops__slow_lookup', input: { word: 'abort' } }], usage: { input: 11, output: 3 }, model: SUB_MODEL }
          : { blocks: [{ type: 'text', text: 'The lookup was cut.' }], usage: { input: 21, output: 4 }, model: SUB_MODEL };
      }
      return request.assistantTurns === 0
        ? { blocks: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'Look up', prompt: 'Look up abort.', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 8 }, model: MAIN_MODEL }
        : { blocks: [{ type: 'text', text: 'The researcher was cut off.' }], usage: { input: 60, output: 7 }, model: MAIN_MODEL };
    });
    const { env, home } = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
    // The sub-agent's tool says when it started and returns only once the query is over.
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    let release: () => void = () => {};
    const queryOver = new Promise<void>((resolve) => (release = resolve));
    const ops = sdk.createSdkMcpServer({
      name: 'ops',
      version: '1.0.0',
      tools: [sdk.tool('slow_lookup', 'Looks a word up, slowly', { word: z.string() }, async (args) => (started(), await queryOver, { content: [{ type: 'text', text: `${args.word}: found` }] }))],
    });
    const recorded = recordedPlugin('claude-abort-subagent-no-transcript');
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const abortController = new AbortController();
    const messages: any[] = [];
    let thrown: unknown;
    try {
      for await (const message of claude.query({
        prompt: 'Ask the researcher to look up abort.',
        options: {
          model: 'claude-main',
          cwd: home,
          env,
          settingSources: [],
          mcpServers: { ops },
          allowedTools: ['Agent', 'mcp__ops__slow_lookup'],
          abortController,
          persistSession: false,
          agents: { researcher: { description: 'Looks words up', prompt: 'You are the researcher.', tools: ['mcp__ops__slow_lookup'], model: 'claude-sub' } },
        },
      })) {
        messages.push(message);
        // Aborted once the sub-agent's tool runs, as the program would cancel a query that takes too long.
        if (message.type === 'assistant' && message.parent_tool_use_id === 'toolu_agent' && message.message.content.some((block: any) => block.type === 'tool_use')) {
          await running;
          abortController.abort();
        }
      }
    } catch (error) {
      thrown = error;
    }
    release();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);

    // What the program got: no transcript; the call's result in the stream is an error in the CLI's words, whose meta
    // does not say it was cut; both agents answered, then the SDK threw.
    expect(projectFiles(path.join(home, '.claude')), 'the SDK wrote no transcript').toEqual([]);
    const cut = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === 'toolu_agent' && m.message.content.some((block: any) => block.tool_use_id === 'toolu_subslow'));
    expect(cut.tool_result_meta.find((meta: any) => meta.id === 'toolu_subslow').non_execution_kind).toBeUndefined();
    const toldResult = mock.requests.flatMap((request) => request.toolResults).find((result) => result.tool_use_id === 'toolu_subslow')!;
    expect(toldResult.is_error).toBe(true);
    expect(toldResult.content).toContain('interrupted before a result was received');
    expect(mock.requests.map((request) => request.model)).toEqual(['claude-main', 'claude-sub', 'claude-sub', 'claude-main']);
    expect(String(thrown)).toContain('aborted');

    // The call was cut, not failed: interrupted, with what the model was told.
    const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_subslow');
    expect(ends).toHaveLength(1);
    expect([ends[0]!.payload.status, ends[0]!.payload.error_type, ends[0]!.payload.result]).toEqual(['error', 'Interrupted', toldResult.content]);
    const subDoc = (atif[0]!.subagent_trajectories as AtifDoc[])[0]!;
    expect(validateAtif(atif[0]!)).toEqual([]);
    // Its steps: the call (from the stream, which left out the text beside it), then its final answer (the Agent call's
    // result; the stream never shows it).
    expect(messages.filter((m) => m.parent_tool_use_id === 'toolu_agent' && m.type === 'assistant').flatMap((m) => m.message.content.map((block: any) => block.type))).toEqual(['tool_use']);
    const steps = (subDoc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
      [SUB_MODEL, '', ['toolu_subslow']],
      [SUB_MODEL, 'The lookup was cut.', []],
    ]);
    await sameOnNative(recorded);
  }, 120_000);
});

/** The files under the CLI's projects folder (its transcripts), none when it keeps none. */
function projectFiles(dir: string): string[] {
  try {
    return readdirSync(path.join(dir, 'projects'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl')).map((entry) => entry.name);
  } catch {
    return [];
  }
}
