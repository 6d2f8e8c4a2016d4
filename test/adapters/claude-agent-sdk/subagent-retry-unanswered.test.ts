// A sub-agent stopped while the CLI waits to retry its refused request
// (`interrupt()` during the retry's delay, here while the refused request is
// its second): the stream said the attempt failed (`tool_progress
// .subagent_retry`), and no answer ever came. The adapter kept the failed
// attempt for a next request that never was, so the provider's request was
// in no trajectory (possible in the random plans where two sub-agents run at
// once and one's tool interrupts the query while the other waits,
// test/slow/random-wire-claude-agent-sdk.test.ts). That attempt names the
// model that answered the sub-agent's first request. The SDK is scripted with
// the messages the CLI sends, and the sub-agent's transcript holds its first
// request.
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdkWithTranscript, usage } from './scripted.ts';
import { expectNothingLost, llmModels, recordedPlugin } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a77c0e1d2b3f4a5b6';
const session = { session_id: 'claude-session-retry-cut' };
const STOPPED = "The user doesn't want to proceed with this tool use.";
const subCall = { type: 'tool_use', id: 'toolu_a', name: 'mcp__travel__get_time', input: {} };
const subMessage = (message: Record<string, unknown>) => ({ ...message, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session });

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Agent', 'mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find the time.', subagent_type: 'researcher', run_in_background: false } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', prompt: 'Find the time.', ...session },
  subMessage({ type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [subCall], usage } }),
  subMessage({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] } }),
  // Its second request refused: the CLI says so, and waits before it retries.
  { type: 'tool_progress', tool_use_id: 'toolu_agent', tool_name: 'Agent', parent_tool_use_id: null, elapsed_time_seconds: 1, subagent_retry: { agent_id: AGENT_ID, attempt: 1, max_retries: 10, retry_delay_ms: 600, error_status: 529, error_category: 'overloaded' }, ...session },
  // interrupt() during the wait.
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_agent', content: STOPPED, is_error: true }] }, parent_tool_use_id: null, tool_use_result: 'User rejected tool use', ...session },
  { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'killed' }, ...session },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'stopped', summary: 'research', ...session },
  { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', num_turns: 1, usage: { input_tokens: 10, output_tokens: 7 }, ...session },
];

/** The sub-agent's transcript: its prompt, its first reply and that reply's tool result. */
const transcript = [
  { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: 'Find the time.' } },
  { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [subCall], usage, stop_reason: 'tool_use' } },
  { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] } },
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

describe('the Claude Agent SDK adapter: a sub-agent stopped while its refused request waits to be retried', () => {
  it('records the refused request as a call of the sub-agent whose one attempt failed', async () => {
    const recorded = recordedPlugin('claude-retry-cut');
    const query = wrapClaudeAgentSdk(scriptedSdk(), recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } });
    for await (const _ of query as AsyncIterable<unknown>) void _;
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const child = `${session.session_id}:sub:toolu_agent`;
    const ofChild = (hook: string) => recorded.log.filter((entry) => entry.hook === hook && entry.payload.session_id === child).map((entry) => entry.payload);
    // Two requests: the answered one, and the refused one, failed.
    const requests = [...new Set(ofChild('pre_api_request').map((payload) => payload.api_request_id))];
    expect(requests).toHaveLength(2);
    expect(ofChild('api_request_error').map((payload) => [payload.api_request_id, payload.status_code])).toEqual([[requests[1], 529]]);
    const steps = ((atif[0]!.subagent_trajectories as Array<Record<string, any>>)[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.tool_calls?.map((call: Record<string, unknown>) => call.tool_call_id) ?? [], step.extra?.llm_response?.error?.type ?? null])).toEqual([
      [['toolu_a'], null],
      [[], 'overloaded'],
    ]);
    // The refused request names the model that answered the sub-agent's first, as the main agent's failed attempts name
    // one (a sub-agent's request says none): on its attempt, its ATIF step and its LLM span; the answered one is as before.
    expect(ofChild('api_request_error').map((payload) => payload.model)).toEqual([SUB_MODEL]);
    expect(ofChild('pre_api_request').map((payload) => payload.model)).toEqual([undefined, SUB_MODEL]);
    expect(steps.map((step) => step.model_name)).toEqual([SUB_MODEL, SUB_MODEL]);
    expect(llmModels(atof, requests)).toEqual([[null], [SUB_MODEL]]);
  });
});
