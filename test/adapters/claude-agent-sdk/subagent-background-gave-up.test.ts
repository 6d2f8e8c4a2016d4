// A background sub-agent whose request the API kept refusing until the CLI's
// retries ran out: the SDK streams none of its attempts, and its transcript
// holds the CLI's message saying it gave up (`isApiErrorMessage`, model
// `<synthetic>`). The adapter took that message for a reply of the API's:
// an answered call one attempt more than the API saw, with the CLI's words
// as the model's (found by the random wire,
// test/slow/random-wire-claude-agent-sdk.test.ts, seeds 143, 277 and 287).
// The refused attempt names the model that answered the sub-agent's request
// before it, as the main agent's name one; given up on at its first request,
// it names none. The SDK is scripted with the messages the CLI sends, and the
// sub-agent's transcript is the CLI's, as written.
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdkWithTranscript, usage } from './scripted.ts';
import { expectNothingLost, llmModels, recordedPlugin } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a77c0e1d2b3f4a5b6';
const session = { session_id: 'claude-session-background-gave-up' };
const GAVE_UP = 'API Error: 529 Overloaded. This is a server-side issue, usually temporary.';
const subCall = { type: 'tool_use', id: 'toolu_a', name: 'mcp__travel__get_time', input: {} };
const subMessage = (message: Record<string, unknown>) => ({ ...message, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session });

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Agent', 'mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find the time.', subagent_type: 'researcher', run_in_background: true } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', prompt: 'Find the time.', is_backgrounded: true, ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_agent', content: [{ type: 'text', text: 'Async agent launched successfully.' }] }] }, parent_tool_use_id: null, ...session },
  ...reply(session, 'msg_2', [{ type: 'text', text: 'It is on its way.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'It is on its way.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
  subMessage({ type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [subCall], usage } }),
  subMessage({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] } }),
  // Its second request refused until the retries ran out: the stream says only that the task failed.
  { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'failed', error: GAVE_UP }, ...session },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'failed', summary: GAVE_UP, ...session },
];

/** The sub-agent's transcript: its prompt, its first reply, that reply's tool result, and the CLI's message that it gave up. */
const transcript = [
  { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: 'Find the time.' } },
  { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [subCall], usage, stop_reason: 'tool_use' } },
  { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] } },
  {
    type: 'assistant',
    isSidechain: true,
    agentId: AGENT_ID,
    message: { id: '80c7186d-00a0-4a75-9877-6d6c88ed245f', model: '<synthetic>', role: 'assistant', stop_reason: 'stop_sequence', type: 'message', usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, content: [{ type: 'text', text: GAVE_UP }] },
    error: 'server_error',
    isApiErrorMessage: true,
    apiErrorStatus: 529,
    apiErrorType: 'overloaded_error',
  },
]
  .map((record) => JSON.stringify(record))
  .join('\n');

/** The same agent given up on at its first request: nothing it did names a model (the CLI's message names `<synthetic>`). */
const firstScript = script.filter((message) => message.agent_id !== AGENT_ID);
const firstTranscript = transcript
  .split('\n')
  .filter((line) => !line.includes('"toolu_a"'))
  .join('\n');

let scripted: ReturnType<typeof scriptedSdkWithTranscript> | undefined;
afterEach(() => {
  scripted?.remove();
  scripted = undefined;
});

function scriptedSdk(messages = script, agentTranscript = transcript) {
  scripted = scriptedSdkWithTranscript(messages, session, AGENT_ID, agentTranscript, 'What time is it?');
  return scripted.sdk;
}

describe('the Claude Agent SDK adapter: a background sub-agent whose request the CLI gave up on', () => {
  it('records that request as a call whose one attempt failed with the CLI\'s words, and the sub-agent failed', async () => {
    const recorded = recordedPlugin('claude-background-gave-up');
    const query = wrapClaudeAgentSdk(scriptedSdk(), recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } });
    for await (const _ of query as AsyncIterable<unknown>) void _;
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const child = `${session.session_id}:sub:toolu_agent`;
    const ofChild = (hook: string) => recorded.log.filter((entry) => entry.hook === hook && entry.payload.session_id === child).map((entry) => entry.payload);
    // Two requests: the answered one, and the one given up on, its last attempt refused (the earlier ones are not streamed).
    expect(ofChild('pre_api_request')).toHaveLength(2);
    const requests = [...new Set(ofChild('pre_api_request').map((payload) => payload.api_request_id))];
    expect(ofChild('api_request_error').map((payload) => [payload.api_request_id, payload.status_code])).toEqual([[requests[1], 529]]);
    const steps = ((atif[0]!.subagent_trajectories as Array<Record<string, any>>)[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.tool_calls?.map((call: Record<string, unknown>) => call.tool_call_id) ?? [], step.extra?.llm_response?.error?.type ?? null])).toEqual([
      [['toolu_a'], null],
      [[], 'server_error'],
    ]);
    expect(steps[1]!.extra?.llm_response?.error?.message).toBe(GAVE_UP);
    // The refused request names the model that answered the sub-agent's other request, as the main agent's failed
    // attempts name one (a sub-agent's request says none; the CLI's message names `<synthetic>`): on its attempt, its
    // ATIF step and its LLM span.
    expect(ofChild('api_request_error').map((payload) => payload.model)).toEqual([SUB_MODEL]);
    expect(ofChild('pre_api_request').map((payload) => [payload.model, payload.retry_count])).toEqual([[undefined, 0], [SUB_MODEL, 0]]);
    expect(steps.map((step) => step.model_name)).toEqual([SUB_MODEL, SUB_MODEL]);
    expect(llmModels(atof, requests)).toEqual([[null], [SUB_MODEL]]);
    const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop' && entry.payload.child_session_id === child).map((entry) => entry.payload.child_status);
    expect(stops).toEqual(['failed']);
  });

  it('names no model on a refused first request: nothing the sub-agent did says one', async () => {
    const recorded = recordedPlugin('claude-background-gave-up-first');
    const query = wrapClaudeAgentSdk(scriptedSdk(firstScript, firstTranscript), recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } });
    for await (const _ of query as AsyncIterable<unknown>) void _;
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const child = `${session.session_id}:sub:toolu_agent`;
    const ofChild = (hook: string) => recorded.log.filter((entry) => entry.hook === hook && entry.payload.session_id === child).map((entry) => entry.payload);
    const requests = [...new Set(ofChild('pre_api_request').map((payload) => payload.api_request_id))];
    expect(requests).toHaveLength(1);
    expect(ofChild('api_request_error').map((payload) => [payload.api_request_id, payload.status_code, payload.model])).toEqual([[requests[0], 529, undefined]]);
    expect(llmModels(atof, requests)).toEqual([[null]]);
    const steps = ((atif[0]!.subagent_trajectories as Array<Record<string, any>>)[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.model_name ?? null, step.extra?.llm_response?.error?.type ?? null])).toEqual([[null, 'server_error']]);
  });
});
