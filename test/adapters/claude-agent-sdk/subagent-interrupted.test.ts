// A query interrupted (`interrupt()`) while a foreground sub-agent's tool
// runs: the stream answers the Agent call with the CLI's words for a call the
// user stopped, and shows no result for the sub-agent's own call; the CLI
// writes its answer for that call into the sub-agent's transcript a little
// later, or not before the query ends. The adapter recorded whichever came
// first: that late text as a tool error, or `RunEnded: the run ended
// (failed)` with the sub-agent failed (found by the random wire,
// test/slow/random-wire-claude-agent-sdk.test.ts, seed 170). The SDK is
// scripted here with the messages the CLI sent then, and the transcript is
// written in both orders.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, usage } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a5fa7930baf7c5aec';
const session = { session_id: 'claude-session-cut' };
/** The CLI's answer for a call the user stopped (shortened). */
const STOPPED = "The user doesn't want to proceed with this tool use. Correction to the text above: this call was stopped while running, not refused before it ran.";


const subCall = (id: string) => ({ type: 'tool_use', id, name: 'mcp__travel__get_time', input: {} });
const subAssistant = (id: string) => ({ type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [subCall(id)], usage }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session });

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Agent', 'mcp__travel__get_time'], ...session },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find the time.', subagent_type: 'researcher' } }], 'tool_use'),
  { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', prompt: 'Find the time.', ...session },
  { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Find the time.' }] }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
  subAssistant('toolu_a'),
  subAssistant('toolu_b'),
  { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] }, parent_tool_use_id: 'toolu_agent', agent_id: AGENT_ID, ...session },
  // interrupt() while toolu_b runs: the Agent call is answered with the CLI's words; toolu_b is answered nowhere in the stream.
  {
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_agent', content: STOPPED, is_error: true }] },
    parent_tool_use_id: null,
    tool_use_result: 'User rejected tool use',
    tool_result_meta: [{ id: 'toolu_agent', non_execution_kind: 'user-rejected' }],
    ...session,
  },
  { type: 'user', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }] }, parent_tool_use_id: null, ...session },
  { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'killed' }, ...session },
  { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'stopped', summary: 'research', ...session },
  { type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', num_turns: 1, usage: { input_tokens: 10, output_tokens: 7 }, ...session },
];

/** The sub-agent's transcript: its prompt, its reply's two blocks, the first call's result, and (`cut`) the CLI's answer for the stopped call. */
function transcript(cut: boolean): string {
  const records = [
    { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: 'Find the time.' } },
    { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [subCall('toolu_a')], usage } },
    { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [subCall('toolu_b')], usage } },
    { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: '12:00' }] }] } },
    ...(cut
      ? [
          { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: STOPPED, is_error: true }] }, toolUseResult: 'User rejected tool use', toolDenialKind: 'user-rejected' },
          { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }] } },
        ]
      : []),
  ];
  return records.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** An SDK that says the session's transcript, then streams the script; the sub-agent's transcript is written `when`. */
function scriptedSdk(when: 'before-the-agent-result' | 'never-complete') {
  dir = mkdtempSync(path.join(tmpdir(), 'nrh-claude-cut-'));
  const sessionTranscript = path.join(dir, 'claude-session-cut.jsonl');
  const agentTranscript = path.join(dir, 'claude-session-cut', 'subagents', `agent-${AGENT_ID}.jsonl`);
  mkdirSync(path.dirname(agentTranscript), { recursive: true });
  writeFileSync(agentTranscript, transcript(false));
  return {
    query: (params: { prompt: unknown; options?: unknown }) =>
      (async function* () {
        const options = params.options as { hooks?: Record<string, Array<{ hooks: Array<(input: unknown, id: unknown, options: unknown) => Promise<unknown>> }>> } | undefined;
        for (const matcher of options?.hooks?.UserPromptSubmit ?? []) {
          for (const hook of matcher.hooks) await hook({ hook_event_name: 'UserPromptSubmit', prompt: 'What time is it?', transcript_path: sessionTranscript, ...session }, undefined, { signal: new AbortController().signal });
        }
        for (const message of script) {
          // The CLI's late answer for the stopped call, on disk before the adapter reads the Agent call's result.
          if (when === 'before-the-agent-result' && message.parent_tool_use_id === null && message.type === 'user') writeFileSync(agentTranscript, transcript(true));
          yield message;
        }
      })(),
  };
}

describe('the Claude Agent SDK adapter: a query interrupted while its sub-agent runs a tool', () => {
  for (const when of ['before-the-agent-result', 'never-complete'] as const) {
    it(`ends the stopped call and its sub-agent interrupted (the CLI's transcript answer ${when === 'never-complete' ? 'never written' : 'written first'})`, async () => {
      const recorded = recordedPlugin(`claude-cut-${when}`);
      const query = wrapClaudeAgentSdk(scriptedSdk(when), recorded.hooks, { logger: silentLogger }).query({ prompt: 'What time is it?', options: { model: 'claude-sonnet-4-5' } });
      for await (const _ of query as AsyncIterable<unknown>) void _;
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      const ends = new Map(recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload]));
      expect(ends.get('toolu_a')).toMatchObject({ status: 'ok', result: '12:00' });
      // The stopped call: interrupted, in the same words whichever came first (the stream showed the program no result for it).
      expect(ends.get('toolu_b')).toMatchObject({ status: 'error', error_type: 'Interrupted', result: 'the sub-agent was stopped before the tool returned' });
      // The Agent call: what the model was told, as an interruption.
      expect(ends.get('toolu_agent')).toMatchObject({ status: 'error', error_type: 'Interrupted', result: STOPPED });
      // Both sessions end interrupted: the sub-agent's first.
      const sessionEnds = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload);
      expect(sessionEnds).toHaveLength(2);
      expect(sessionEnds.map((end) => [end.interrupted, end.failed])).toEqual([
        [true, false],
        [true, false],
      ]);
      expect(sessionEnds[0]!.session_id).not.toBe(sessionEnds[1]!.session_id);
    });
  }
});
