// The prompt a compaction keeps after its summary, named by the id the program
// gave it: the CLI writes a streamed user message under its `uuid` and the
// boundary's `preserved_messages` names it so, while the session's transcript,
// which the CLI writes as it goes, may not hold that prompt yet (it holds
// nothing here). The SDK is scripted with the messages the real CLI streamed
// when the API refused the request after the second turn's first call as too
// long (test/slow/claude-agent-sdk-autocompact.test.ts runs the CLI itself).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { userMessage, type Uuid } from '../../support/claude-checks.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { reply, type Message } from './scripted.ts';

const session = { session_id: 'claude-session-kept-prompt' };
const init = { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Bash'], ...session };
const requesting = { type: 'system', subtype: 'status', status: 'requesting', ...session };
const result = { type: 'result', subtype: 'success', is_error: false, result: '', num_turns: 1, usage: { input_tokens: 10, output_tokens: 1 }, ...session };
/** The ids the program gives its two prompts. */
const ECHO_ONE: Uuid = '5b0c1f0e-1d7a-4c55-9d0e-2f3a4b5c6d01';
const ECHO_TWO: Uuid = '5b0c1f0e-1d7a-4c55-9d0e-2f3a4b5c6d02';
const SUMMARY = 'This session is being continued from a previous conversation. Summary: echoed one.';

/** A reply whose assistant messages carry the ids the stream gives them (one per block, as the CLI's). */
function replyWithIds(id: string, content: Message[], stop: string, uuids: string[]): Message[] {
  let block = 0;
  return reply(session, id, content, stop).map((message) => (message.type === 'assistant' ? { ...message, uuid: uuids[block++] } : message));
}

const toolResult = (id: string, uuid: string): Message => ({ type: 'user', uuid, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: id }] }, parent_tool_use_id: null, ...session });
const bash = (id: string): Message => ({ type: 'tool_use', id, name: 'Bash', input: { command: 'echo', description: 'echo' } });

/**
 * An SDK whose query takes the program's next message before each turn and streams that turn; the second turn's
 * request after its first call is refused as too long (the stream does not say so), and the CLI compacts, keeping the
 * first turn's answer, the second prompt (by `keptPrompt`, the id the CLI wrote it under) and the call with its result.
 */
function compactingSdk(keptPrompt: string) {
  const turns: Message[][] = [
    [init, requesting, ...replyWithIds('msg_1', [bash('toolu_one')], 'tool_use', ['a-call-one']), toolResult('toolu_one', 'r-one'), requesting, ...replyWithIds('msg_2', [{ type: 'text', text: 'echoed one' }], 'end_turn', ['a-echoed-one']), result],
    [
      init,
      requesting,
      ...replyWithIds('msg_3', [bash('toolu_two')], 'tool_use', ['a-call-two']),
      toolResult('toolu_two', 'r-two'),
      requesting,
      { type: 'system', subtype: 'status', status: 'compacting', ...session },
      { type: 'system', subtype: 'status', status: null, compact_result: 'success', ...session },
      // The ids of the attachments the CLI wrote beside the prompt and the result are in the list too; the stream never shows those.
      { type: 'system', subtype: 'compact_boundary', compact_metadata: { trigger: 'auto', pre_tokens: 14_846, preserved_messages: { anchor_uuid: 'u-summary', uuids: ['a-echoed-one', keptPrompt, 'attachment-1', 'a-call-two', 'r-two', 'attachment-2'] } }, ...session },
      { type: 'user', uuid: 'u-summary', message: { role: 'user', content: [{ type: 'text', text: SUMMARY }] }, parent_tool_use_id: null, ...session },
      requesting,
      ...replyWithIds('msg_4', [{ type: 'text', text: 'echoed two' }], 'end_turn', ['a-echoed-two']),
      result,
    ],
  ];
  return {
    query: (params: { prompt: AsyncIterable<unknown>; options?: unknown }) =>
      (async function* () {
        const prompts = params.prompt[Symbol.asyncIterator]();
        for (const turn of turns) {
          if ((await prompts.next()).done === true) return;
          yield* turn;
        }
      })(),
  };
}

/** The messages of each request the adapter recorded, as `role: text` (a tool call or result by its id). */
function requests(log: Array<{ hook: string; payload: Record<string, any> }>): string[][] {
  return log
    .filter((entry) => entry.hook === 'pre_api_request')
    .map((entry) => (entry.payload.request.body.messages as any[]).map((m) => (m.role === 'tool' ? `tool: ${m.tool_call_id}` : `${m.role}: ${[m.content ?? '', ...(m.tool_calls ?? []).map((call: any) => call.id)].filter((part) => part !== '').join(' ')}`)));
}

describe('the Claude Agent SDK adapter: the prompt a compaction keeps', () => {
  it('is in the request after the compaction when the program gave it an id, with no transcript to read it from', async () => {
    const recorded = recordedPlugin('claude-kept-prompt');
    const { query } = wrapClaudeAgentSdk(compactingSdk(ECHO_TWO), recorded.hooks);
    async function* conversation() {
      yield userMessage('echo one', ECHO_ONE);
      yield userMessage('echo two', ECHO_TWO);
    }
    for await (const _ of query({ prompt: conversation(), options: {} }) as AsyncIterable<unknown>) void _;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const sent = requests(recorded.log);
    // The request refused as too long is the compaction's call; the one sent again after the summary keeps the prompt.
    expect(sent).toHaveLength(5);
    expect(sent[3]).toEqual(['user: echo one', 'assistant: toolu_one', 'tool: toolu_one', 'assistant: echoed one', 'user: echo two', 'assistant: toolu_two', 'tool: toolu_two']);
    expect(sent[4]).toEqual([`user: ${SUMMARY}`, 'assistant: echoed one', 'user: echo two', 'assistant: toolu_two', 'tool: toolu_two']);
  });

  it('leaves out a prompt the boundary does not name, whatever id the program gave it', async () => {
    const recorded = recordedPlugin('claude-kept-prompt-not-named');
    // The CLI kept something else under that place: the program's prompt is not among the messages named.
    const { query } = wrapClaudeAgentSdk(compactingSdk('some-other-record'), recorded.hooks);
    async function* conversation() {
      yield userMessage('echo one', ECHO_ONE);
      yield userMessage('echo two', ECHO_TWO);
    }
    for await (const _ of query({ prompt: conversation(), options: {} }) as AsyncIterable<unknown>) void _;
    await recorded.finish();
    expect(requests(recorded.log)[4]).toEqual([`user: ${SUMMARY}`, 'assistant: echoed one', 'assistant: toolu_two', 'tool: toolu_two']);
  });
});
