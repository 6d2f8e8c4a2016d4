// The program aborts (`options.abortController`) while a sub-agent's
// in-process MCP tool runs, and the CLI keeps no transcript
// (`persistSession: false`): the CLI answers the call in its words for an
// MCP call whose answer never came ("The tool call was interrupted before a
// result was received…"), but the streamed result's meta does not say it was
// cut (the main agent's has `non_execution_kind: "interrupted"`), and no
// transcript comes to say so. The adapter recorded a tool error. The SDK is
// scripted with the messages the CLI sent in a real run
// (test/slow/claude-agent-sdk-subagent-end.test.ts): the program aborts before
// the cut call's result is read, or not at all (then the same words are a
// tool error: nothing says the program cut it).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, usage, type Message } from './scripted.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a3bcad65e2c8bdb01';
const session = { session_id: 'claude-session-abort' };
const CUT = 'The tool call was interrupted before a result was received. It may or may not have completed on the server — verify before assuming it succeeded, and retry if needed.';
const agentResponse = { status: 'completed', agentId: AGENT_ID, agentType: 'researcher', content: [{ type: 'text', text: 'The lookup was cut.' }], usage: { input_tokens: 21, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };

const before: Message[] = [
  { type: 'system', subtype: 'init', model: 'claude-main', tools: ['Agent', 'mcp__ops__slow_lookup'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'Look up', prompt: 'Look up abort.', subagent_type: 'researcher', run_in_background: false } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', is_backgrounded: false, prompt: 'Look up abort.', ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Look up abort.' }] }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
  { type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [{ type: 'tool_use', id: 'toolu_subslow', name: 'mcp__ops__slow_lookup', input: { word: 'abort' } }], usage }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
];
const after: Message[] = [
  {
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', content: CUT, is_error: true, tool_use_id: 'toolu_subslow' }] },
    parent_tool_use_id: 'toolu_agent',
    agent_id: AGENT_ID,
    tool_use_result: `Error: ${CUT}`,
    tool_result_meta: [{ id: 'toolu_subslow', permission_decision: { decision: 'accept', source: 'config', reason_type: 'rule' } }],
    ...session,
  },
  { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'completed' }, ...session },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'completed', summary: 'The lookup was cut.', ...session },
  { type: 'user', message: { role: 'user', content: [{ tool_use_id: 'toolu_agent', type: 'tool_result', content: [{ type: 'text', text: 'The report follows:\n  The lookup was cut.' }] }] }, parent_tool_use_id: null, tool_use_result: agentResponse, ...session },
  ...reply(session, 'msg_2', [{ type: 'text', text: 'The researcher was cut off.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'The researcher was cut off.', num_turns: 2, usage: { input_tokens: 90, output_tokens: 15 }, ...session },
];

/** An SDK that streams the run; `abort`: the program aborts while the sub-agent's call runs, and the SDK throws at the end. */
function scriptedSdk(abort: boolean) {
  return {
    query: (params: { prompt: unknown; options?: { abortController?: AbortController; [key: string]: unknown } }) =>
      (async function* () {
        yield* before;
        if (abort) params.options!.abortController!.abort();
        yield* after;
        if (abort) throw new Error('Operation aborted');
      })(),
  };
}

describe('the Claude Agent SDK adapter: a sub-agent\'s MCP call cut by the program\'s abort, with no transcript', () => {
  for (const abort of [true, false]) {
    it(`ends the call ${abort ? 'interrupted' : 'as a tool error'} (${abort ? 'the program aborted' : 'no abort'})`, async () => {
      const recorded = recordedPlugin(`claude-abort-no-transcript-${abort}`);
      const abortController = new AbortController();
      const query = wrapClaudeAgentSdk(scriptedSdk(abort), recorded.hooks, { logger: silentLogger }).query({ prompt: 'Ask the researcher to look up abort.', options: { model: 'claude-main', persistSession: false, abortController } });
      let thrown: unknown;
      try {
        for await (const _ of query as AsyncIterable<unknown>) void _;
      } catch (error) {
        thrown = error;
      }
      expect(thrown === undefined).toBe(!abort);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const end = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_subslow')!.payload;
      expect([end.status, end.error_type, end.result]).toEqual(['error', abort ? 'Interrupted' : 'ToolError', CUT]);
      const subDoc = (atif[0]!.subagent_trajectories as AtifDoc[])[0]!;
      const steps = (subDoc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(steps.map((step) => [step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
        ['', ['toolu_subslow']],
        ['The lookup was cut.', []],
      ]);
    });
  }
});
