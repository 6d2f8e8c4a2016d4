// A sub-agent's reply whose tool calls got their results before the reply
// ended: the CLI runs a call as soon as its block arrives, so a result that
// comes at once (a denial, a call the CLI refuses itself) is written and
// streamed between two blocks of the same reply. The adapter took each
// result as the end of the request and recorded one reply as two requests
// (found by the random wire, test/slow/random-wire-claude-agent-sdk.test.ts:
// a query aborted while its sub-agent ran). The SDK is scripted here: the
// messages the CLI sends, without a transcript (`persistSession: false`,
// so the sub-agent is read from the stream, as from a transcript).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdk, usage } from './scripted.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const session = { session_id: 'claude-session-2' };


/** A block of the sub-agent's reply, as the stream shows it. */
const sub = (id: string, block: Record<string, unknown>) => ({ type: 'assistant', message: { id, type: 'message', role: 'assistant', model: SUB_MODEL, content: [block], usage: { ...usage, input_tokens: 30 } }, parent_tool_use_id: 'toolu_agent', ...session });
const subResult = (id: string, text: string) => ({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text, is_error: true }] }, parent_tool_use_id: 'toolu_agent', ...session });

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Agent', 'mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find the time.', subagent_type: 'researcher' } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: 'agent-1', tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', prompt: 'Find the time.', ...session },
  // One reply, two calls: each refused before the reply's next block.
  sub('msg_s1', { type: 'tool_use', id: 'toolu_a', name: 'mcp__travel__get_time', input: {} }),
  subResult('toolu_a', 'No time now.'),
  sub('msg_s1', { type: 'tool_use', id: 'toolu_b', name: 'mcp__travel__get_time', input: {} }),
  subResult('toolu_b', 'Still no time.'),
  sub('msg_s2', { type: 'text', text: 'I could not find the time.' }),
  { type: 'system', subtype: 'task_notification', task_id: 'agent-1', tool_use_id: 'toolu_agent', status: 'completed', summary: 'I could not find the time.', ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_agent', content: [{ type: 'text', text: 'I could not find the time.' }] }] }, parent_tool_use_id: null, ...session },
  ...reply(session, 'msg_2', [{ type: 'text', text: 'No time today.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'No time today.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
];

const sdk = scriptedSdk(script);

describe('the Claude Agent SDK adapter: a sub-agent reply with tool results between its blocks', () => {
  it('records the reply as one request with both calls, each call answered with its result', async () => {
    const recorded = recordedPlugin('claude-split-reply');
    const query = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5', persistSession: false } });
    for await (const _ of query as AsyncIterable<unknown>) void _;
    const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
    expect(requests).toHaveLength(4);
    // The sub-agent's requests go to the same API as the main agent's: the CLI has one provider.
    expect(requests.map((entry) => entry.payload.provider)).toEqual(['anthropic', 'anthropic', 'anthropic', 'anthropic']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const child = (atif[0]!.subagent_trajectories as AtifDoc[])[0]!;
    const steps = (child.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), (step.observation?.results ?? []).map((result: AtifDoc) => result.content)])).toEqual([
      ['', ['toolu_a', 'toolu_b'], ['No time now.', 'Still no time.']],
      ['I could not find the time.', [], []],
    ]);
    // The second request carried the reply and both results.
    const second = recorded.log.filter((entry) => entry.hook === 'pre_api_request')[2]!.payload.request as { body: { messages: Array<{ role: string }> } };
    expect(second.body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
  });
});
