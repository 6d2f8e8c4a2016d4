// Background sub-agents with `forwardSubagentText: true` and no transcript
// (`persistSession: false`), replayed from the messages the real CLI sent
// (CLI 2.1.337 of SDK 0.3.337, against the loopback API with the replies
// test/slow/claude-agent-sdk-background-forwarded.test.ts sends, the Agent
// calls leaving `run_in_background` to the CLI's default and no reply held;
// the CLI's init lists, uuids, times and home folder trimmed): one agent, and
// two at once whose messages interleave.
// A background agent's call returns as it starts, so no result reports its
// final answer's usage; the forwarded answer carries the provisional
// `output_tokens: 1`, and the task notification `usage.total_tokens`: the
// answer's prompt and output tokens together. The API sent each final
// answer with 15 input tokens, 4 cache reads and 8 output tokens, and each
// Read call with 7 and 3 (modelUsage in the last result says so).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';
import { scriptedSdk, type Message } from './scripted.ts';

const fixture = (name: string): Message[] =>
  readFileSync(new URL(`../../fixtures/claude-agent-sdk/${name}.messages.jsonl`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Message);

async function replay(name: string) {
  const messages = fixture(name);
  const recorded = recordedPlugin(`claude-background-forwarded-${name}`);
  const { query } = wrapClaudeAgentSdk(scriptedSdk(messages), recorded.hooks, { logger: silentLogger });
  for await (const _ of query({ prompt: 'How were Paris and Lyon founded?', options: { model: 'claude-main', persistSession: false, forwardSubagentText: true } }) as AsyncIterable<unknown>) void _;
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  return { messages, recorded, doc: atif[0]! };
}

/** Each sub-agent's steps, by the Agent call that started it: [message, thinking, tool call ids, prompt, cached, completion]. */
function subagentSteps(doc: AtifDoc): Record<string, unknown[][]> {
  return Object.fromEntries(
    ((doc.subagent_trajectories ?? []) as AtifDoc[]).map((sub) => [
      String(sub.session_id).replace(/^.*:sub:/, ''),
      (sub.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.message, step.reasoning_content, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), step.metrics?.prompt_tokens, step.metrics?.cached_tokens, step.metrics?.completion_tokens]),
    ]),
  );
}

/** What the CLI said of each agent's end: its notification's total, by the Agent call. */
function notifiedTotals(messages: Message[]): Record<string, unknown> {
  return Object.fromEntries(messages.filter((m) => m.subtype === 'task_notification').map((m) => [m.tool_use_id, (m.usage as { total_tokens: number }).total_tokens]));
}

describe('the Claude Agent SDK adapter: a background sub-agent\'s forwarded final answer, without a transcript', () => {
  it("gives the answer's step the API's output tokens, its notification's total less the answer's prompt tokens", async () => {
    const { messages, recorded, doc } = await replay('background-forwarded-one');
    expect(notifiedTotals(messages)).toEqual({ toolu_task_paris: 15 + 4 + 8 });
    // The Read call's output stays the stream's provisional 1: nothing the program got says it.
    expect(subagentSteps(doc)).toEqual({
      toolu_task_paris: [
        ['', undefined, ['toolu_read_paris'], 7, 0, 1],
        ['answer paris', 'thought paris', [], 19, 4, 8],
      ],
    });
    const child = `${String(doc.session_id)}:sub:toolu_task_paris`;
    const answers = recorded.log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === child).map((entry) => (entry.payload.response as { id?: string }).id);
    expect(answers).toEqual(['msg_mock_2', 'msg_sub_final_paris']);
    // The turn end states only the Read call's shortfall: modelUsage counts 3 + 8 output tokens for the sub-agent's model.
    const byModel = (messages.filter((m) => m.type === 'result').at(-1)!.modelUsage as Record<string, { outputTokens: number }>)['claude-sub']!;
    expect(byModel.outputTokens).toBe(3 + 8);
    const end = recorded.log.find((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id)!;
    expect((end.payload.unattributed_usage as Record<string, { output_tokens: number }>)['claude-sub']!.output_tokens).toBe(3 + 8 - 1 - 8);
    await sameOnNative(recorded);
  });

  it('keeps each of two agents\' interleaved answers in its own session, with its own notification\'s tokens', async () => {
    const { messages, recorded, doc } = await replay('background-forwarded-two');
    expect(notifiedTotals(messages)).toEqual({ toolu_task_paris: 27, toolu_task_lyon: 27 });
    const order = messages.filter((m) => m.type === 'assistant' && m.parent_tool_use_id !== null).map((m) => m.parent_tool_use_id);
    expect(order).toEqual(['toolu_task_paris', 'toolu_task_lyon', 'toolu_task_lyon', 'toolu_task_lyon', 'toolu_task_paris', 'toolu_task_paris']);
    expect(subagentSteps(doc)).toEqual({
      toolu_task_paris: [
        ['', undefined, ['toolu_read_paris'], 7, 0, 1],
        ['answer paris', 'thought paris', [], 19, 4, 8],
      ],
      toolu_task_lyon: [
        ['', undefined, ['toolu_read_lyon'], 7, 0, 1],
        ['answer lyon', 'thought lyon', [], 19, 4, 8],
      ],
    });
    const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop').map((entry) => [entry.payload.tool_call_id, entry.payload.child_status, entry.payload.child_summary]);
    expect(stops).toEqual([
      ['toolu_task_lyon', 'completed', 'answer lyon'],
      ['toolu_task_paris', 'completed', 'answer paris'],
    ]);
    await sameOnNative(recorded, true);
  });
});
