// A main-agent request starts when the CLI announces it
// (`system/status: requesting`, before it sends it), not at its first
// streamed byte: its LLM span holds the wait for the first token. The
// announcement opens the session too, before any answer names the model,
// and the trajectory still takes the model the API answered with, also when
// that first attempt was refused (a 529 the CLI retries). A turn that ends
// before the announced request streams ends it as an attempt the query
// ended. The SDK is scripted here, with the pauses of a real stream (the
// messages as the CLI sends them in partial-message mode; the real CLI's in
// test/slow/claude-agent-sdk-timing.test.ts).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { spans } from '../timing-checks.ts';
import { MODEL, reply, type Message } from './scripted.ts';
import { expectNothingLost, expectRetriedFirstCall, recordedPlugin } from '../support.ts';

const session = { session_id: 'claude-session-announced' };
const WAIT_MS = 150;

/** An SDK whose query yields `script`, pausing `WAIT_MS` where it says `'wait'`. */
function pacedSdk(script: ReadonlyArray<Message | 'wait'>) {
  return {
    query: (_params: unknown) =>
      (async function* () {
        for (const item of script) {
          if (item === 'wait') await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
          else yield item;
        }
      })(),
  };
}

const init = { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['mcp__travel__get_time'], ...session };
const requesting = { type: 'system', subtype: 'status', status: 'requesting', ...session };

describe('the Claude Agent SDK adapter: a request starts when the CLI announces it', () => {
  it('starts each LLM span at the announcement, and names the answered model after a refused first attempt', async () => {
    const script: Array<Message | 'wait'> = [
      init,
      requesting,
      'wait',
      { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: 529, error: 'overloaded', ...session },
      ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_1', name: 'mcp__travel__get_time', input: {} }], 'tool_use'),
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'noon' }] }] }, parent_tool_use_id: null, ...session },
      requesting,
      // The model's time to first token.
      'wait',
      ...reply(session, 'msg_2', [{ type: 'text', text: 'It is noon.' }], 'end_turn'),
      { type: 'result', subtype: 'success', is_error: false, result: 'It is noon.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
    ];
    const recorded = recordedPlugin('claude-announced');
    for await (const _ of wrapClaudeAgentSdk(pacedSdk(script), recorded.hooks).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } }) as AsyncIterable<unknown>) void _;
    // The refused attempt is the one announced; its retry is the same call.
    expectRetriedFirstCall(recorded.log);
    const start = recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload;
    expect(start.model, 'no answer has named the model when the session starts').toBeUndefined();
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif[0]!.agent.model_name).toBe(MODEL);
    const agentSteps = (atif[0]!.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => step.model_name)).toEqual(['claude-sonnet-4-5', MODEL, MODEL]);
    // The refused attempt waited for its refusal, the answered one after the tool for its first byte.
    const llm = spans(atof, 'llm');
    expect(llm).toHaveLength(3);
    expect(llm[0]!.endMs - llm[0]!.startMs).toBeGreaterThanOrEqual(0.8 * WAIT_MS);
    expect(llm[2]!.endMs - llm[2]!.startMs).toBeGreaterThanOrEqual(0.8 * WAIT_MS);
  });

  it('ends an announced request the turn ended before it streamed as an attempt the query ended', async () => {
    const script: Message[] = [
      init,
      requesting,
      { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_streaming', errors: ['Request was aborted.'], num_turns: 0, usage: { input_tokens: 0, output_tokens: 0 }, ...session },
    ];
    const recorded = recordedPlugin('claude-announced-cut');
    for await (const _ of wrapClaudeAgentSdk(pacedSdk(script), recorded.hooks).query({ prompt: 'What time is it?', options: {} }) as AsyncIterable<unknown>) void _;
    const attempts = recorded.log.filter((entry) => entry.hook === 'pre_api_request' || entry.hook === 'api_request_error' || entry.hook === 'post_api_request');
    expect(attempts.map((entry) => entry.hook)).toEqual(['pre_api_request', 'api_request_error']);
    expect(attempts[1]!.payload).toMatchObject({ reason: 'interrupted', error: { type: 'interrupted', message: 'the query ended during the request' } });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ interrupted: true, completed: false, failed: false });
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
  });
});
