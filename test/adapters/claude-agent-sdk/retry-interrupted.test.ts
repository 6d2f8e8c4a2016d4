// `interrupt()` while the CLI waits to retry a refused request (a 529,
// `system/api_retry`): the CLI ends the turn with an `error_during_execution`
// result that says it was aborted, and the SDK throws after it. The turn was
// recorded failed (the throw's word) rather than interrupted as the result
// says, because the retry it never answered was still pending (found by the
// random wire drawing a background agent with an interruption,
// test/slow/random-wire-claude-agent-sdk.test.ts, seed 66 of a variant plan).
// The SDK is scripted here: the messages the CLI sends in partial-message
// mode, in order.
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, type Message } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';

const session = { session_id: 'claude-session-1' };

const script: Message[] = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_1', name: 'mcp__travel__get_time', input: {} }], 'tool_use'),
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'noon' }] }] }, parent_tool_use_id: null, ...session },
  { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: 583, error_status: 529, error: 'overloaded', ...session },
  { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_streaming', num_turns: 2, usage: { input_tokens: 10, output_tokens: 7 }, errors: [], ...session },
];

/** The SDK's query: the script, then its throw after an error result. */
const sdk = {
  query: (_params: unknown) =>
    (async function* () {
      yield* script;
      throw new Error('Claude Code returned an error result: [ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use');
    })(),
};

describe('the Claude Agent SDK adapter: interrupt() while a refused request waits for its retry', () => {
  it('ends the turn interrupted, as the result says, and the retry as an attempt the query ended', async () => {
    const recorded = recordedPlugin('claude-retry-interrupted');
    let thrown: unknown;
    try {
      for await (const _ of wrapClaudeAgentSdk(sdk, recorded.hooks).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } }) as AsyncIterable<unknown>) void _;
    } catch (error) {
      thrown = error;
    }
    // The caller still gets the SDK's throw.
    expect(String(thrown)).toContain('error result');
    const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => ({ interrupted: entry.payload.interrupted, completed: entry.payload.completed }));
    expect(ends).toEqual([{ interrupted: true, completed: false }]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const agentSteps = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    // The refused attempt, then the retry the turn ended (whether it was sent the stream does not say: the page's "Limits").
    expect(agentSteps.map((step) => step.extra?.llm_response?.error?.type ?? 'answered')).toEqual(['answered', 'overloaded', 'interrupted']);
    expect(agentSteps.slice(1).map((step) => ({ prompt: step.metrics?.prompt_tokens, completion: step.metrics?.completion_tokens }))).toEqual([
      { prompt: undefined, completion: undefined },
      { prompt: undefined, completion: undefined },
    ]);
  });
});
