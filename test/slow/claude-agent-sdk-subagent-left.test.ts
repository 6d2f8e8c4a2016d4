// Sub-agents on the real SDK and its bundled CLI, against a loopback
// Anthropic Messages API, in the cases the transcript does not settle.
//
// 1. No transcript (`persistSession: false`): the sub-agent's final answer
//    is never a streamed message unless the program asks for its text
//    (`forwardSubagentText: true`), and then with provisional usage
//    (`output_tokens: 1`) and no stop reason; the Agent call's result
//    (`tool_use_result`) has the answer's text and the API's usage of that
//    reply, but no id, stop reason or thinking. The step must hold what the
//    program got: the result's usage, and the forwarded message's id and
//    thinking when it was forwarded.
// 2. No transcript, and the program stops the query (`interrupt()`, or
//    `abortController`) while the sub-agent's Bash tool runs: the stream
//    shows no result for that call. It was cut, not failed: it must end
//    interrupted.
// 3. With a transcript the CLI writes late: where the sub-agent ends against
//    its Agent call's end, in the ATOF events and in the ATIF file, and that
//    its steps are the API's replies whichever way it falls.
//
// Slow (each query spawns the CLI): npx vitest run --config vitest.slow.config.ts.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockReply, type MockRequest } from '../support/anthropic-mock.ts';

const MAIN_MODEL = 'claude-main-2026-01-01';
const SUB_MODEL = 'claude-sub-2026-01-01';
const ANSWER = 'Founded in the 3rd century BC by the Parisii.';
const THOUGHT = 'The notes name the Parisii.';
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A loopback API where the main agent calls the researcher, which reads a file (or runs a slow command) and answers with thinking and text. */
async function loopback(subTool: 'Read' | 'Bash') {
  let home = '';
  const mock = await startAnthropicMock((request: MockRequest): MockReply => {
    if (request.system.includes('You are the researcher')) {
      if (request.assistantTurns === 0) {
        return subTool === 'Read'
          ? { blocks: [{ type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: { input: 7, output: 3 }, model: SUB_MODEL }
          : { blocks: [{ type: 'tool_use', id: 'toolu_bash_1', name: 'Bash', input: { command: 'sleep 20; echo done', description: 'Wait for the archive' } }], usage: { input: 7, output: 3 }, model: SUB_MODEL };
      }
      return { blocks: [{ type: 'thinking', thinking: THOUGHT }, { type: 'text', text: ANSWER }], usage: { input: 15, output: 8, cacheRead: 4 }, model: SUB_MODEL, id: 'msg_sub_final' };
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
  const options: sdk.Options = {
    model: 'claude-main',
    cwd: home,
    env: offline.env,
    settingSources: [],
    allowedTools: ['Read', 'Bash', 'Agent'],
    thinking: { type: 'enabled', budgetTokens: 2000 },
    agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: [subTool], model: 'claude-sub' } },
  };
  return { mock, options };
}

function subDocOf(doc: AtifDoc): AtifDoc {
  return (doc.subagent_trajectories as AtifDoc[])[0]!;
}

function agentSteps(doc: AtifDoc): AtifDoc[] {
  return (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
}

describe('wrapClaudeAgentSdk: a sub-agent\'s final answer without a transcript', () => {
  for (const forwardSubagentText of [false, true]) {
    it(`holds the Agent call's usage of the answer${forwardSubagentText ? ', and the forwarded message\'s id and thinking' : ''} (forwardSubagentText: ${forwardSubagentText})`, async () => {
      const { mock, options } = await loopback('Read');
      const recorded = recordedPlugin(`claude-final-no-transcript-${forwardSubagentText}`);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: quiet });
      const messages: any[] = [];
      for await (const message of claude.query({ prompt: 'How was Paris founded?', options: { ...options, persistSession: false, forwardSubagentText } })) messages.push(message);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(validateAtif(atif[0]!)).toEqual([]);

      // What the program got: the Agent call's result with the answer's text and usage; the forwarded message (when asked)
      // with the answer's id, thinking and text, and provisional usage.
      const report = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === null && m.tool_use_result?.status === 'completed').tool_use_result;
      expect(report.content).toEqual([{ type: 'text', text: ANSWER }]);
      expect([report.usage.input_tokens, report.usage.cache_read_input_tokens, report.usage.output_tokens]).toEqual([15, 4, 8]);
      const forwarded = messages.filter((m) => m.type === 'assistant' && m.parent_tool_use_id === 'toolu_task_1' && m.message.id === 'msg_sub_final');
      if (forwardSubagentText) {
        expect(forwarded.flatMap((m) => m.message.content.map((block: any) => block.type))).toEqual(['thinking', 'text']);
        expect(forwarded.map((m) => [m.message.usage.output_tokens, m.message.stop_reason])).toEqual([[1, null], [1, null]]);
      } else {
        expect(forwarded).toEqual([]);
      }

      const steps = agentSteps(subDocOf(atif[0]!));
      expect(steps.map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
        [SUB_MODEL, '', ['toolu_read_1']],
        [SUB_MODEL, ANSWER, []],
      ]);
      const final = steps[1]!;
      // The API's usage of the answer, as the Agent call's result reports it (the forwarded message's is provisional).
      expect([final.metrics?.prompt_tokens, final.metrics?.cached_tokens, final.metrics?.completion_tokens]).toEqual([15 + 4, 4, 8]);
      expect(final.reasoning_content).toBe(forwardSubagentText ? THOUGHT : undefined);
      const child = subDocOf(atif[0]!).session_id;
      const answer = recorded.log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === child).at(-1)!.payload as { response: { id?: string }; finish_reason?: string };
      // The id only when the forwarded message carried it; no stop reason: nothing the program got says it.
      expect([answer.response.id, answer.finish_reason ?? undefined]).toEqual([forwardSubagentText ? 'msg_sub_final' : undefined, undefined]);
      // The sub-agent's model's tokens: every step of it, as modelUsage counts them.
      const byModel = messages.at(-1).modelUsage['claude-sub'];
      const sub = steps.reduce((sum, step) => [sum[0]! + (step.metrics?.prompt_tokens ?? 0), sum[1]! + (step.metrics?.completion_tokens ?? 0)], [0, 0]);
      if (forwardSubagentText) expect(sub[1]).toBe(byModel.outputTokens - 3 + 1); // the Read step's own usage is the stream's provisional one
      expect(sub[0]).toBe(byModel.inputTokens + byModel.cacheReadInputTokens + byModel.cacheCreationInputTokens);
      expect(mock.requests.map((request) => request.model)).toEqual(['claude-main', 'claude-sub', 'claude-sub', 'claude-main']);
      await sameOnNative(recorded);
    }, 120_000);
  }
});

describe('wrapClaudeAgentSdk: the program stops the query while a sub-agent\'s Bash call runs, with no transcript', () => {
  for (const how of ['interrupt', 'abort'] as const) {
    it(`ends the Bash call and the sub-agent interrupted (${how === 'interrupt' ? 'interrupt()' : 'abortController.abort()'})`, async () => {
      const { mock, options } = await loopback('Bash');
      const recorded = recordedPlugin(`claude-stop-bash-${how}`);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: quiet });
      const abortController = new AbortController();
      const query = claude.query({ prompt: 'How was Paris founded?', options: { ...options, persistSession: false, abortController } });
      const messages: any[] = [];
      let thrown: unknown;
      let bashStarted = () => {};
      const started = new Promise<void>((resolve) => (bashStarted = resolve));
      try {
        for await (const message of query) {
          messages.push(message);
          if (message.type === 'system' && message.subtype === 'task_started' && (message as any).tool_use_id === 'toolu_bash_1') bashStarted();
          if (message.type === 'assistant' && message.parent_tool_use_id === 'toolu_task_1' && message.message.content.some((block: any) => block.type === 'tool_use')) {
            // Stopped once the command runs: the CLI starts a task of its own (`local_bash`) for a command that outlasts a moment.
            void started.then(async () => {
              if (how === 'interrupt') await query.interrupt();
              else abortController.abort();
            });
          }
        }
      } catch (error) {
        thrown = error;
      }
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(validateAtif(atif[0]!)).toEqual([]);
      // What the program got: the sub-agent's Bash call, then either no result for it (the CLI answered the Agent call, or
      // the SDK stopped the CLI, first: Node, Bun) or the CLI's error result for the killed command (`Exit code 137`, its
      // meta silent on why: Deno, where the CLI outlives the abort a moment), then the SDK threw.
      const streamed = messages.filter((m) => m.type === 'user' && m.message.content.some?.((block: any) => block.tool_use_id === 'toolu_bash_1'));
      const told = streamed.flatMap((m) => m.message.content.filter((block: any) => block.tool_use_id === 'toolu_bash_1'));
      console.log(`the stream's result for the cut Bash call: ${told.length === 0 ? 'none' : JSON.stringify(told[0].content)}`);
      expect(told.every((block: any) => block.is_error === true)).toBe(true);
      expect(streamed.every((m) => m.tool_result_meta?.every((meta: any) => meta.non_execution_kind === undefined) ?? true)).toBe(true);
      expect(mock.requests.slice(0, 2).map((request) => request.model)).toEqual(['claude-main', 'claude-sub']);
      if (how === 'abort') expect(String(thrown)).toContain('aborted');

      // The call was cut, not failed: interrupted, with what the model was told when the stream said it.
      const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_bash_1');
      expect(ends).toHaveLength(1);
      expect([ends[0]!.payload.status, ends[0]!.payload.error_type]).toEqual(['error', 'Interrupted']);
      if (told.length > 0) expect(ends[0]!.payload.result).toBe(told[0].content);
      const subDoc = subDocOf(atif[0]!);
      expect(agentSteps(subDoc)[0]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['toolu_bash_1']);
      await sameOnNative(recorded);
    }, 120_000);
  }
});

describe('wrapClaudeAgentSdk: a foreground sub-agent whose transcript the CLI writes after its call returns', () => {
  // The CLI writes the transcript in batches: at the call's return it may hold everything, or not yet the final answer,
  // or less. The order the program saw: the sub-agent answered, then its call returned, then the main agent asked again.
  // Only the transcript's record of each reply says its stop reason, and (without forwarding) its id and thinking, and
  // of a reply that called tools its output tokens: the sub-agent ends when the transcript holds them, which is before
  // its call's end when the CLI wrote them by then, else after (often after the main agent's next request).
  for (const forwardSubagentText of [false, true]) {
    it(`ends the sub-agent with every reply as the API sent it, before its Agent call's end when the transcript held them by then (forwardSubagentText: ${forwardSubagentText})`, async () => {
      const { mock, options } = await loopback('Read');
      const recorded = recordedPlugin(`claude-late-transcript-${forwardSubagentText}`);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: quiet });
      const messages: any[] = [];
      for await (const message of claude.query({ prompt: 'How was Paris founded?', options: { ...options, forwardSubagentText } })) messages.push(message);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(mock.requests.map((request) => request.model)).toEqual(['claude-main', 'claude-sub', 'claude-sub', 'claude-main']);

      const log = recorded.log;
      const subDoc = subDocOf(doc);
      const child = subDoc.session_id;
      const callEnd = log.findIndex((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_task_1');
      const subStop = log.findIndex((entry) => entry.hook === 'subagent_stop');
      const subEnd = log.findIndex((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child);
      const mainNextRequest = log.findLastIndex((entry) => entry.hook === 'pre_api_request' && entry.payload.session_id === doc.session_id);
      expect(callEnd).toBeLessThan(mainNextRequest);
      expect(subStop).toBeGreaterThan(subEnd);
      const before = subEnd < callEnd;
      console.log(`the sub-agent ended ${before ? 'before its call (its transcript complete by then)' : mainNextRequest < subEnd ? "after its call and the main agent's next request (its transcript written later)" : 'after its call (its transcript written later)'}`);
      if (before) {
        expect(subStop, 'subagent_stop before the call ends').toBeLessThan(callEnd);
        // In the ATIF file too: its last step is no later than the main agent's step after the call.
        expect(Date.parse(agentSteps(subDoc).at(-1)!.timestamp)).toBeLessThanOrEqual(Date.parse(agentSteps(doc).at(-1)!.timestamp));
      }
      expect(subEnd, 'and before the query ends').toBeLessThan(log.findIndex((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id));
      expect(log[subEnd]!.payload).toMatchObject({ completed: true });

      // Either way every reply is the API's: text, tool calls, tokens (as modelUsage counts them), and the answer's id,
      // stop reason and thinking (the transcript's record of it).
      const steps = agentSteps(subDoc);
      expect(steps.map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
        [SUB_MODEL, '', ['toolu_read_1']],
        [SUB_MODEL, ANSWER, []],
      ]);
      expect(steps.map((step) => [step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual([[7, 3], [15 + 4, 8]]);
      const byModel = messages.at(-1).modelUsage['claude-sub'];
      expect([byModel.inputTokens + byModel.cacheReadInputTokens + byModel.cacheCreationInputTokens, byModel.outputTokens]).toEqual([7 + 15 + 4, 3 + 8]);
      const answers = log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === child).map((entry) => entry.payload as { response: { id?: string }; finish_reason?: string });
      expect(answers.map((answer) => answer.finish_reason)).toEqual(['tool_calls', 'stop']);
      expect([answers[1]!.response.id, steps[1]!.reasoning_content]).toEqual(['msg_sub_final', THOUGHT]);
      await sameOnNative(recorded);
    }, 120_000);
  }
});
