// `maxBudgetUsd` spent by the first answer: the CLI checks the budget after
// the reply and stops the query with an `error_max_budget_usd` result, which
// the SDK then throws. A call of that reply the CLI had not taken up yet (no
// `PreToolUse`: the real CLI does so for a `Write` call, as the timing falls)
// never ran, and was recorded as a tool cut while running ("Interrupted").
// The SDK is scripted here: the messages the CLI sent in partial-message mode,
// in order; test/slow/claude-agent-sdk-options.test.ts runs the real CLI for
// a call it did take up.
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { MODEL, reply, type Message } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';

const session = { session_id: 'claude-session-1' };
const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const script: Message[] = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Write'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'notes.txt', content: 'x' } }], 'tool_use'),
  {
    type: 'result',
    subtype: 'error_max_budget_usd',
    is_error: true,
    terminal_reason: 'budget_exhausted',
    stop_reason: 'tool_use',
    num_turns: 1,
    usage,
    modelUsage: { 'claude-sonnet-4-5': { inputTokens: 10, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0.0001 } },
    total_cost_usd: 0.0001,
    errors: ['Reached maximum budget ($0.00001)'],
    permission_denials: [],
    ...session,
  },
];

/** The SDK's query: the script, then its throw after an error result. */
const sdk = {
  query: (_params: unknown) =>
    (async function* () {
      yield* script;
      throw new Error('Claude Code returned an error result: Reached maximum budget ($0.00001)');
    })(),
};

describe('the Claude Agent SDK adapter: a query stopped by its budget before the CLI took a call up', () => {
  it('ends that call failed with the error that stopped the query, not as a tool interrupted while running', async () => {
    const recorded = recordedPlugin('claude-stopped-before-tool');
    await expect(
      (async () => {
        for await (const _ of wrapClaudeAgentSdk(sdk, recorded.hooks).query({ prompt: 'Write notes.', options: { model: 'claude-sonnet-4-5', maxBudgetUsd: 0.00001 } }) as AsyncIterable<unknown>) void _;
      })(),
    ).rejects.toThrow('Reached maximum budget');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => entry.payload);
    expect(ends).toMatchObject([{ tool_call_id: 'toolu_write', status: 'error', error_type: 'error_max_budget_usd', error_message: 'Reached maximum budget ($0.00001)', result: 'Reached maximum budget ($0.00001)' }]);
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'error_max_budget_usd', result_subtype: 'error_max_budget_usd' });
    const agent = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    expect(agent.map((step) => [step.model_name, step.tool_calls.map((call: Record<string, unknown>) => call.tool_call_id)])).toEqual([[MODEL, ['toolu_write']]]);
    expect(agent[0]!.observation.results[0].extra.metadata['error.type']).toBe('error_max_budget_usd');
  });
});
