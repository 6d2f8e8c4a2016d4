// A foreground sub-agent that completes: its `SubagentStop` hook names its
// last text, and its Agent call returns (the hook, then the stream's result)
// before the CLI has written that final answer into the sub-agent's
// transcript (it writes transcripts in batches: in a run of the real CLI,
// test/slow/claude-agent-sdk-subagent-end.test.ts, the record came only
// after the main agent's next reply). The adapter compared the summary with
// the last request it had recorded, not the one it was still reading: the
// sub-agent ended only when the whole query did. The SDK is scripted with
// the messages and hook inputs the CLI sent in that run, and the transcript
// is written both ways: whole before the call returns (the sub-agent ends
// before its call, as the CLI ran them), and without the final answer until
// just before the query's result (the sub-agent waits for that record, which
// says what the call's result does not: the response's id and stop reason,
// and ends as it comes, not at the query's end).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, usage, type Message } from './scripted.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

const SUB_MODEL = 'claude-sub-2026-01-01';
const AGENT_ID = 'a558313258c945554';
const session = { session_id: 'claude-session-final' };
const ANSWER = 'Founded by the Parisii.';
/** The API's usage of the sub-agent's final reply, as its transcript record and the Agent call's result both give it. */
const FINAL_USAGE = { input_tokens: 15, output_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const readCall = { type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: '/home/notes.txt' } };
const readResult = { type: 'tool_result', tool_use_id: 'toolu_read_1', content: '1\tParis was founded by the Parisii.' };
/** What the Agent call returned (`PostToolUse`'s `tool_response`, the stream's `tool_use_result`), as the CLI sent it, shortened. */
const agentResponse = {
  status: 'completed',
  prompt: 'Find how Paris was founded.',
  agentId: AGENT_ID,
  agentType: 'researcher',
  content: [{ type: 'text', text: ANSWER }],
  resolvedModel: 'claude-sub',
  totalDurationMs: 151,
  totalTokens: 23,
  totalToolUseCount: 1,
  usage: { ...FINAL_USAGE, service_tier: 'standard' },
};

type Step = { message: Message } | { hook: Message } | { write: 'whole' };

const timeline: Step[] = [
  { message: { type: 'system', subtype: 'init', model: 'claude-main', tools: ['Agent', 'Read'], ...session } },
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'research', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', run_in_background: false } }], 'tool_use').map((message) => ({ message })),
  { hook: { hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_use_id: 'toolu_agent', tool_input: {}, ...session } },
  { message: { type: 'system', subtype: 'task_started', task_id: AGENT_ID, tool_use_id: 'toolu_agent', task_type: 'local_agent', subagent_type: 'researcher', is_backgrounded: false, prompt: 'Find how Paris was founded.', ...session } },
  { hook: { hook_event_name: 'SubagentStart', agent_id: AGENT_ID, agent_type: 'researcher', ...session } },
  { message: { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'Find how Paris was founded.' }] }, parent_tool_use_id: 'toolu_agent', ...session } },
  { message: { type: 'assistant', message: { id: 'msg_s1', type: 'message', role: 'assistant', model: SUB_MODEL, content: [readCall], usage }, parent_tool_use_id: 'toolu_agent', ...session } },
  { hook: { hook_event_name: 'PreToolUse', agent_id: AGENT_ID, tool_name: 'Read', tool_use_id: 'toolu_read_1', tool_input: readCall.input, ...session } },
  { hook: { hook_event_name: 'PostToolUse', agent_id: AGENT_ID, tool_name: 'Read', tool_use_id: 'toolu_read_1', tool_input: readCall.input, tool_response: { type: 'text' }, ...session } },
  { message: { type: 'user', message: { role: 'user', content: [readResult] }, parent_tool_use_id: 'toolu_agent', ...session } },
  { hook: { hook_event_name: 'SubagentStop', agent_id: AGENT_ID, agent_type: 'researcher', agent_transcript_path: '<agent transcript>', last_assistant_message: ANSWER, ...session } },
  { message: { type: 'system', subtype: 'task_updated', task_id: AGENT_ID, patch: { status: 'completed' }, ...session } },
  { message: { type: 'system', subtype: 'task_notification', task_id: AGENT_ID, tool_use_id: 'toolu_agent', status: 'completed', summary: ANSWER, usage: { total_tokens: 23, tool_uses: 1, duration_ms: 147 }, ...session } },
  { hook: { hook_event_name: 'PostToolUse', tool_name: 'Agent', tool_use_id: 'toolu_agent', tool_input: {}, tool_response: agentResponse, ...session } },
  { message: { type: 'user', message: { role: 'user', content: [{ tool_use_id: 'toolu_agent', type: 'tool_result', content: [{ type: 'text', text: `The report follows:\n  ${ANSWER}` }] }] }, parent_tool_use_id: null, tool_use_result: agentResponse, ...session } },
  ...reply(session, 'msg_2', [{ type: 'text', text: 'Paris was founded by the Parisii.' }], 'end_turn').map((message) => ({ message })),
  { write: 'whole' },
  { message: { type: 'result', subtype: 'success', is_error: false, result: 'Paris was founded by the Parisii.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session } },
];

/** The sub-agent's transcript: its prompt, its first reply and that call's result, then (`whole`) its final answer. */
function transcript(whole: boolean): string {
  const records = [
    { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: 'Find how Paris was founded.' } },
    { type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s1', role: 'assistant', model: SUB_MODEL, content: [readCall], stop_reason: 'tool_use', usage: { input_tokens: 7, output_tokens: 3 } } },
    { type: 'user', isSidechain: true, agentId: AGENT_ID, message: { role: 'user', content: [readResult] } },
    ...(whole ? [{ type: 'assistant', isSidechain: true, agentId: AGENT_ID, message: { id: 'msg_s2', role: 'assistant', model: SUB_MODEL, content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn', usage: FINAL_USAGE } }] : []),
  ];
  return records.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

type HookCallback = (input: unknown, id: unknown, options: unknown) => Promise<unknown>;

/** An SDK that plays the timeline: messages yielded, hook inputs given to the hooks; the final answer reaches the transcript `when`. */
function scriptedSdk(when: 'before-the-call-returns' | 'after-the-next-reply') {
  dir = mkdtempSync(path.join(tmpdir(), 'nrh-claude-final-'));
  const sessionTranscript = path.join(dir, `${session.session_id}.jsonl`);
  const agentTranscript = path.join(dir, session.session_id, 'subagents', `agent-${AGENT_ID}.jsonl`);
  mkdirSync(path.dirname(agentTranscript), { recursive: true });
  writeFileSync(agentTranscript, transcript(when === 'before-the-call-returns'));
  return {
    query: (params: { prompt: unknown; options?: unknown }) =>
      (async function* () {
        const hooks = (params.options as { hooks?: Record<string, Array<{ hooks: HookCallback[] }>> } | undefined)?.hooks ?? {};
        const fire = async (input: Message) => {
          for (const matcher of hooks[String(input.hook_event_name)] ?? []) for (const hook of matcher.hooks) await hook(input, input.tool_use_id, { signal: new AbortController().signal });
        };
        await fire({ hook_event_name: 'UserPromptSubmit', prompt: 'How was Paris founded?', transcript_path: sessionTranscript, ...session });
        for (const step of timeline) {
          if ('write' in step) writeFileSync(agentTranscript, transcript(true));
          else if ('hook' in step) await fire({ ...step.hook, transcript_path: sessionTranscript, ...(step.hook.agent_transcript_path === undefined ? {} : { agent_transcript_path: agentTranscript }) });
          else yield step.message;
        }
      })(),
  };
}

describe('the Claude Agent SDK adapter: a foreground sub-agent whose SubagentStop names its last text', () => {
  for (const when of ['before-the-call-returns', 'after-the-next-reply'] as const) {
    it(`ends the sub-agent as soon as its transcript holds its final answer (${when.replaceAll('-', ' ')})`, async () => {
      const recorded = recordedPlugin(`claude-final-${when}`);
      const query = wrapClaudeAgentSdk(scriptedSdk(when), recorded.hooks, { logger: silentLogger }).query({ prompt: 'How was Paris founded?', options: { model: 'claude-main' } });
      /** How much was recorded when the program read the query's result. */
      let atResult = -1;
      for await (const message of query as AsyncIterable<Message>) if (message.type === 'result') atResult = recorded.log.length;
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // The order the CLI ran them: the sub-agent answered, then its call returned, then the main agent asked again.
      const log = recorded.log;
      const child = log.find((entry) => entry.hook === 'subagent_start')!.payload.child_session_id;
      const subEnd = log.findIndex((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child);
      const agentCallEnd = log.findIndex((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_agent');
      const mainRequests = log.flatMap((entry, index) => (entry.hook === 'pre_api_request' && entry.payload.session_id === session.session_id ? [index] : []));
      expect(mainRequests).toHaveLength(2);
      expect(subEnd).toBeGreaterThan(-1);
      expect(agentCallEnd).toBeLessThan(mainRequests[1]!);
      if (when === 'before-the-call-returns') {
        expect(subEnd).toBeLessThan(agentCallEnd);
        expect(log.findIndex((entry) => entry.hook === 'subagent_stop')).toBeLessThan(agentCallEnd);
      } else {
        // Late by the transcript, and no later: by the message read after it was written, not at the query's end.
        expect(subEnd).toBeGreaterThan(mainRequests[1]!);
        expect(subEnd).toBeLessThan(atResult);
      }
      expect(log.find((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child)!.payload).toMatchObject({ completed: true });

      // Its steps: the Read call with its result, then its final answer with the API's usage of that reply.
      const subTrajectory = (atif[0]!.subagent_trajectories as AtifDoc[])[0]!;
      const steps = (subTrajectory.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(steps.map((step) => [step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), step.model_name, step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual([
        ['', ['toolu_read_1'], SUB_MODEL, 7, 3],
        [ANSWER, [], SUB_MODEL, 15, 8],
      ]);
      expect(resultOf(subTrajectory, 'toolu_read_1')?.content).toBe(readResult.content);
      // The final request carried the conversation so far: the prompt, the Read call and its result.
      const subRequests = log.filter((entry) => entry.hook === 'pre_api_request' && entry.payload.session_id === child);
      expect((subRequests.at(-1)!.payload.request as { body: { messages: Array<{ role: string }> } }).body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
      // Its final answer is the transcript's record of it: the response's id and its stop reason.
      const final = log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === child).at(-1)!.payload as { response: { id?: string; finish_reason?: string } };
      expect([final.response.id, final.response.finish_reason]).toEqual(['msg_s2', 'stop']);
      await sameOnNative(recorded);
    });
  }
});

function resultOf(doc: AtifDoc, callId: string): AtifDoc | undefined {
  for (const step of doc.steps as AtifDoc[]) {
    const result = (step.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === callId);
    if (result !== undefined) return result;
  }
  return undefined;
}
