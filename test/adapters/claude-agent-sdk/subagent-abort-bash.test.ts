// The program aborts (`options.abortController`) while a sub-agent's Bash
// command runs, and the CLI keeps no transcript (`persistSession: false`).
// On Deno the CLI outlives the abort a moment and streams the killed
// command's result: an error, `Exit code 137`, whose meta does not say the
// call was cut (the main agent's would say `non_execution_kind`), then the
// SDK throws (test/slow/claude-agent-sdk-subagent-left.test.ts, run on
// Deno). The adapter recorded a tool error. The SDK is scripted with the
// messages and hooks the CLI sent in that run: the call was running when the
// program aborted, so it ends interrupted; without the abort the same result
// is a tool error (a command killed by something else).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, usage, type Message } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a75aa83c2db2dcdde';
const session = { session_id: 'claude-session-abort-bash' };
const bashCall = { type: 'tool_use', id: 'toolu_bash_1', name: 'Bash', input: { command: 'sleep 20; echo done', description: 'Wait for the archive' } };

const before: Message[] = [
  { type: 'system', subtype: 'init', model: 'claude-main', tools: ['Agent', 'Bash'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', run_in_background: false } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', is_backgrounded: false, prompt: 'Find how Paris was founded.', ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Find how Paris was founded.' }] }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
  { type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [bashCall], usage }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
  { type: 'system', subtype: 'task_started', task_id: 'blmqi9q9u', owned_by_subagent: true, tool_use_id: 'toolu_bash_1', description: 'Wait for the archive', is_backgrounded: false, parent_task_id: AGENT_ID, task_type: 'local_bash', ...session },
];
const after: Message[] = [
  {
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', content: 'Exit code 137', is_error: true, tool_use_id: 'toolu_bash_1' }] },
    parent_tool_use_id: 'toolu_agent',
    agent_id: AGENT_ID,
    tool_use_result: 'Error: Exit code 137',
    tool_result_meta: [{ id: 'toolu_bash_1', permission_decision: { decision: 'accept', source: 'config', reason_type: 'rule' } }],
    ...session,
  },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'stopped', summary: 'research', ...session },
];

type HookCallback = (input: unknown, id: unknown, options: unknown) => Promise<unknown>;

/** An SDK that streams the run, firing the sub-agent's PreToolUse as the CLI runs the command; `abort`: the program aborts while it runs. */
function scriptedSdk(abort: boolean) {
  return {
    query: (params: { prompt: unknown; options?: { abortController?: AbortController; hooks?: Record<string, Array<{ hooks: HookCallback[] }>>; [key: string]: unknown } }) =>
      (async function* () {
        const fire = async (input: Message) => {
          for (const matcher of params.options?.hooks?.[String(input.hook_event_name)] ?? []) for (const hook of matcher.hooks) await hook(input, input.tool_use_id, { signal: new AbortController().signal });
        };
        for (const message of before) {
          if (message.type === 'assistant' && message.parent_tool_use_id === 'toolu_agent') {
            await fire({ hook_event_name: 'PreToolUse', agent_id: AGENT_ID, agent_type: 'researcher', tool_name: 'Bash', tool_use_id: 'toolu_bash_1', tool_input: bashCall.input, ...session });
          }
          yield message;
        }
        if (abort) params.options!.abortController!.abort();
        yield* after;
        if (abort) throw new Error('Operation aborted');
        yield { type: 'result', subtype: 'success', is_error: false, result: 'The researcher stopped.', num_turns: 1, usage: { input_tokens: 10, output_tokens: 7 }, ...session };
      })(),
  };
}

describe('the Claude Agent SDK adapter: a sub-agent\'s Bash call killed by the program\'s abort, with no transcript', () => {
  for (const abort of [true, false]) {
    it(`ends the call ${abort ? 'interrupted' : 'as a tool error'} (${abort ? 'the program aborted while it ran' : 'no abort'})`, async () => {
      const recorded = recordedPlugin(`claude-abort-bash-${abort}`);
      const abortController = new AbortController();
      const query = wrapClaudeAgentSdk(scriptedSdk(abort), recorded.hooks, { logger: silentLogger }).query({ prompt: 'How was Paris founded?', options: { model: 'claude-main', persistSession: false, abortController } });
      let thrown: unknown;
      try {
        for await (const _ of query as AsyncIterable<unknown>) void _;
      } catch (error) {
        thrown = error;
      }
      expect(thrown === undefined).toBe(!abort);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      const end = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_bash_1')!.payload;
      expect([end.status, end.error_type, end.result]).toEqual(['error', abort ? 'Interrupted' : 'ToolError', 'Exit code 137']);
      await sameOnNative(recorded);
    });
  }
});
