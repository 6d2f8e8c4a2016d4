// interrupt() while a background sub-agent's tool runs: the CLI kills the
// agent and answers the call in its own words (the call was rejected), in
// the stream, before or after the notification that the agent stopped.
// The adapter took those words when they came before the agent's end, and
// its own (the call was cut) when after: the same run recorded two ways,
// as the machine's timing fell (found by the random wire drawing a
// background agent with interrupt(),
// test/slow/random-wire-claude-agent-sdk.test.ts, seeds 211 and 134). A
// sub-agent's call the user stopped now always ends when the agent does,
// as the transcript's answer already did. The SDK is scripted with the
// messages the CLI sends, and the sub-agent's transcript holds its reply.
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdkWithTranscript, usage } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a77c0e1d2b3f4a5b6';
const session = { session_id: 'claude-session-background-cut' };
const STOPPED = "The user doesn't want to proceed with this tool use.";
const CUT = 'the sub-agent was stopped before the tool returned';
const subCall = { type: 'tool_use', id: 'toolu_a', name: 'mcp__travel__get_time', input: {} };
const subMessage = (message: Record<string, unknown>) => ({ ...message, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session });

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Agent', 'mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find the time.', subagent_type: 'researcher', run_in_background: true } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', prompt: 'Find the time.', is_backgrounded: true, ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_agent', content: [{ type: 'text', text: 'Async agent launched successfully.' }] }] }, parent_tool_use_id: null, ...session },
  subMessage({ type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [subCall], usage } }),
  // interrupt() while its tool runs: the CLI's answer for the call comes first, here.
  subMessage({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: STOPPED, is_error: true }] }, tool_use_result: 'User rejected tool use' }),
  { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'killed' }, ...session },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'stopped', summary: 'research', ...session },
  { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', num_turns: 1, usage: { input_tokens: 10, output_tokens: 7 }, ...session },
];

/** The sub-agent's transcript: its prompt and its reply (the tool was still running). */
const transcript = [
  { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: 'Find the time.' } },
  { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [subCall], usage, stop_reason: 'tool_use' } },
]
  .map((record) => JSON.stringify(record))
  .join('\n');

let scripted: ReturnType<typeof scriptedSdkWithTranscript> | undefined;
afterEach(() => {
  scripted?.remove();
  scripted = undefined;
});

function scriptedSdk() {
  scripted = scriptedSdkWithTranscript(script, session, AGENT_ID, transcript, 'What time is it?');
  return scripted.sdk;
}

describe('the Claude Agent SDK adapter: interrupt() while a background sub-agent\'s tool runs', () => {
  it('ends the call when the agent does, cut, whether the CLI\'s answer comes before the agent\'s end or after', async () => {
    const recorded = recordedPlugin('claude-background-cut');
    const query = wrapClaudeAgentSdk(scriptedSdk(), recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } });
    for await (const _ of query as AsyncIterable<unknown>) void _;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_a').map((entry) => ({ status: entry.payload.status, error_type: entry.payload.error_type, result: entry.payload.result }));
    expect(ends).toEqual([{ status: 'error', error_type: 'Interrupted', result: CUT }]);
    const child = `${session.session_id}:sub:toolu_agent`;
    const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop' && entry.payload.child_session_id === child).map((entry) => entry.payload.child_status);
    expect(stops).toEqual(['interrupted']);
  });
});
