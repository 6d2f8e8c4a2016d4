// A request the API refuses before it streams (a 529 the CLI retries,
// `system/api_retry`) in the middle of a conversation: its failed attempt
// sent the conversation so far, and the trajectory says so. The adapter
// recorded it with no messages, which the trajectory showed as a user step
// holding the request's JSON (found by the random wire,
// test/slow/random-wire-claude-agent-sdk.test.ts). The SDK is scripted here:
// the messages the CLI sends in partial-message mode, in order.
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdk } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';

const session = { session_id: 'claude-session-1' };


const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_1', name: 'mcp__travel__get_time', input: {} }], 'tool_use'),
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'noon' }] }] }, parent_tool_use_id: null, ...session },
  { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: 529, error: 'overloaded', ...session },
  ...reply(session, 'msg_2', [{ type: 'text', text: 'It is noon.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'It is noon.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
];

const sdk = scriptedSdk(script);

describe('the Claude Agent SDK adapter: a request retried after a 529 mid-conversation', () => {
  it('records the failed attempt with the conversation it sent, and no user step made of the request', async () => {
    const recorded = recordedPlugin('claude-retry');
    for await (const _ of wrapClaudeAgentSdk(sdk, recorded.hooks).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } }) as AsyncIterable<unknown>) void _;
    const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => (entry.payload.request as { body: { messages: Array<{ role: string }> } }).body.messages);
    expect(requests.map((messages) => messages.map((message) => message.role))).toEqual([['user'], ['user', 'assistant', 'tool'], ['user', 'assistant', 'tool']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const steps = atif[0]!.steps as Array<Record<string, any>>;
    expect(steps.filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['What time is it?']);
    expect(steps.filter((step) => step.source === 'agent').map((step) => step.extra?.llm_response?.error?.type ?? 'answered')).toEqual(['answered', 'overloaded', 'answered']);
  });
});
