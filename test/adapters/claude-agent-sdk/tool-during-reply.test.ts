// The CLI starts a tool as soon as the block that asks for it is complete,
// while the reply still streams (its `PreToolUse` hook fires then): the call
// is recorded from then, not from the reply's end, and still belongs to the
// step that asked for it. A hook that comes before the caller read the block
// (the CLI ahead of its reader) waits for it; a call no hook took up (the CLI
// refused its input before any hook) is recorded at the reply's end, as
// before. A call started from a reply that breaks off and is retried ends
// then: the CLI drops it. The SDK is scripted here, its hooks called where
// the CLI calls them (the real CLI's times:
// test/slow/claude-agent-sdk-timing.test.ts).
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { treeFromAtif } from '../../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../../src/cli/view/model.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import type { AtofEvent as TypedAtofEvent } from '../../../src/formats/atof/types.ts';
import { validateAtofEvents } from '../../../src/formats/atof/validate.ts';
import { spans } from '../timing-checks.ts';
import { reply, type Message } from './scripted.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';

const session = { session_id: 'claude-session-tool-during-reply' };
const WAIT_MS = 150;
/** Stamps compared across readings of one clock, or written to the millisecond (ATIF). */
const ROUNDING_MS = 1;

type HookCallback = (input: unknown, id: unknown, options: unknown) => Promise<unknown>;
/** A step of the script: a message, a pause, or the CLI calling the `PreToolUse` hooks for a call. */
type Item = Message | 'wait' | { readonly preToolUse: string };

/** An SDK whose query yields `script`, pausing and calling the query's `PreToolUse` hooks where it says. */
function scriptedSdk(script: readonly Item[]) {
  return {
    query: (params: { prompt: unknown; options?: unknown }) =>
      (async function* () {
        const options = params.options as { hooks?: Record<string, Array<{ hooks: HookCallback[] }>> } | undefined;
        for (const item of script) {
          if (item === 'wait') await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
          else if ('preToolUse' in item) {
            const input = { hook_event_name: 'PreToolUse', tool_name: 'mcp__travel__get_time', tool_input: {}, tool_use_id: item.preToolUse, ...session };
            for (const matcher of options?.hooks?.PreToolUse ?? []) for (const hook of matcher.hooks) await hook(input, item.preToolUse, { signal: new AbortController().signal });
          } else yield item;
        }
      })(),
  };
}

const init = { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['mcp__travel__get_time'], ...session };
const requesting = { type: 'system', subtype: 'status', status: 'requesting', ...session };
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'mcp__travel__get_time', input: {} });
const toolResults = (...results: Array<[id: string, text: string, isError?: boolean]>) => ({
  type: 'user',
  message: { role: 'user', content: results.map(([id, text, isError]) => ({ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }], ...(isError === true ? { is_error: true } : {}) })) },
  parent_tool_use_id: null,
  ...session,
});
const answer = [requesting, ...reply(session, 'msg_2', [{ type: 'text', text: 'It is noon.' }], 'end_turn'), { type: 'result', subtype: 'success', is_error: false, result: 'It is noon.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session }];

/** The first reply with its blocks first, then `between`, then the rest of it (message_delta, message_stop). */
function firstReply(blocks: Message[], between: Item[]): Item[] {
  const messages = reply(session, 'msg_1', blocks, 'tool_use');
  return [...messages.slice(0, 1 + blocks.length), ...between, ...messages.slice(1 + blocks.length)];
}

async function run(script: readonly Item[], label: string, backend: 'memory' | 'native' = 'memory') {
  const recorded = recordedPlugin(label, backend);
  for await (const _ of wrapClaudeAgentSdk(scriptedSdk(script), recorded.hooks).query({ prompt: 'What time is it?', options: {} }) as AsyncIterable<unknown>) void _;
  const order = recorded.log.filter(({ hook }) => hook.includes('api_request') || hook.endsWith('_tool_call')).map(({ hook, payload }) => `${hook} ${String(payload.tool_call_id ?? payload.api_request_id)}`);
  const requestIds = recorded.log.filter(({ hook }) => hook === 'pre_api_request').map(({ payload }) => payload.api_request_id);
  const toolCalls = recorded.log.filter(({ hook }) => hook === 'pre_tool_call').map(({ payload }) => payload);
  const { atif, atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(validateAtofEvents(atof)).toEqual([]);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  return { order, requestIds, toolCalls, atof, doc: atif[0]!, llm: spans(atof, 'llm'), tools: spans(atof, 'tool') };
}

/** The agent steps: each one's text, the calls it made, and the results its observation holds (call id and text). */
function agentSteps(doc: AtifDoc) {
  return (doc.steps as AtifDoc[])
    .filter((step) => step.source === 'agent')
    .map((step) => [step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), (step.observation?.results ?? []).map((result: AtifDoc) => [result.source_call_id, result.content])]);
}

/** What `view` shows of the tool calls: each one's duration (ms), in start order. */
function viewedToolMs(root: ViewNode): number[] {
  const found: ViewNode[] = [];
  const walk = (node: ViewNode): void => {
    if (node.kind === 'tool') found.push(node);
    node.children.forEach(walk);
  };
  walk(root);
  return found.sort((a, b) => a.startUs! - b.startUs!).map((node) => (node.endUs! - node.startUs!) / 1000);
}

describe('the Claude Agent SDK adapter: a tool the CLI starts while its reply streams', () => {
  for (const backend of backends()) {
    it(`records the call from its PreToolUse hook, in the step that asked for it, ${backend} backend`, async () => {
      const script: Item[] = [
        init,
        requesting,
        // The block is complete: the CLI starts the tool, and the reply streams on for a while.
        ...firstReply([toolUse('toolu_1')], [{ preToolUse: 'toolu_1' }, 'wait']),
        toolResults(['toolu_1', 'noon']),
        ...answer,
      ];
      const { order, requestIds, toolCalls, atof, doc, llm, tools } = await run(script, `claude-tool-during-reply-${backend}`, backend);
      const [first, second] = requestIds;
      expect(order).toEqual([`pre_api_request ${first}`, 'pre_tool_call toolu_1', `post_api_request ${first}`, 'post_tool_call toolu_1', `pre_api_request ${second}`, `post_api_request ${second}`]);
      expect(toolCalls[0]!.api_request_id, 'the call names the request that asked for it').toBe(first);

      expect(llm).toHaveLength(2);
      expect(tools).toHaveLength(1);
      const [asking] = llm;
      const tool = tools[0]!;
      expect(tool.startMs, 'the call starts after its request').toBeGreaterThanOrEqual(asking!.startMs);
      expect(asking!.endMs - tool.startMs, 'the call starts while the reply still streams').toBeGreaterThanOrEqual(0.8 * WAIT_MS);
      expect(llm[1]!.startMs, 'the next request starts after the call ended').toBeGreaterThanOrEqual(tool.endMs);

      // ATIF: the call stays in the step that asked for it, its result in that step's observation; its times are its span's.
      expect(agentSteps(doc)).toEqual([
        ['', ['toolu_1'], [['toolu_1', 'noon']]],
        ['It is noon.', [], []],
      ]);
      const invocation = (doc.steps as AtifDoc[]).flatMap((step) => step.extra?.tool_invocations ?? [])[0];
      expect(Math.abs(invocation.start_timestamp * 1000 - tool.startMs)).toBeLessThanOrEqual(ROUNDING_MS);
      expect(Math.abs(invocation.end_timestamp * 1000 - tool.endMs)).toBeLessThanOrEqual(ROUNDING_MS);
      // `view` shows the call as long as its span, from either file.
      const shown = [viewedToolMs(treesFromAtof(atof as unknown as readonly TypedAtofEvent[])[0]!), viewedToolMs(treeFromAtif(doc))];
      for (const durations of shown) {
        expect(durations).toHaveLength(1);
        expect(Math.abs(durations[0]! - (tool.endMs - tool.startMs))).toBeLessThanOrEqual(ROUNDING_MS);
      }
    });
  }

  it('records once a call whose tool returned while the reply that asked for it still streamed', async () => {
    const script: Item[] = [
      init,
      requesting,
      // The CLI starts the tool, the tool returns and its result is read, and only then does the reply end.
      ...firstReply([toolUse('toolu_fast')], [{ preToolUse: 'toolu_fast' }, toolResults(['toolu_fast', 'noon']), 'wait']),
      ...answer,
    ];
    const { order, requestIds, doc, llm, tools, atof } = await run(script, 'claude-tool-returned-mid-reply');
    const [first, second] = requestIds;
    expect(order).toEqual([`pre_api_request ${first}`, 'pre_tool_call toolu_fast', 'post_tool_call toolu_fast', `post_api_request ${first}`, `pre_api_request ${second}`, `post_api_request ${second}`]);
    expect(tools, 'one tool span, ended with its result').toHaveLength(1);
    expect(atof.filter((event) => event.category === 'tool' && event.scope_category === 'end').map((event) => event.data)).toEqual(['noon']);
    expect(tools[0]!.endMs, 'the call ended before its reply did').toBeLessThanOrEqual(llm[0]!.endMs);
    // No second, unanswered call: the trajectory's steps are the question, the call with its result, and the answer.
    expect((doc.steps as AtifDoc[]).map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
    expect(agentSteps(doc)).toEqual([
      ['', ['toolu_fast'], [['toolu_fast', 'noon']]],
      ['It is noon.', [], []],
    ]);
  });

  it('waits for the caller to read the block when the hook came first, and records a call no hook took up at the reply end', async () => {
    const script: Item[] = [
      init,
      requesting,
      // The CLI is ahead of its reader: the hook fires before the reader reached the reply.
      { preToolUse: 'toolu_a' },
      'wait',
      // Two calls at once: the second one's input did not fit the tool, and the CLI refused it before any hook.
      ...firstReply([toolUse('toolu_a'), toolUse('toolu_b')], ['wait']),
      toolResults(['toolu_a', 'noon'], ['toolu_b', 'InputValidationError: city is required', true]),
      ...answer,
    ];
    const { order, requestIds, toolCalls, doc, llm, tools } = await run(script, 'claude-tool-hook-first');
    const [first, second] = requestIds;
    expect(order).toEqual([
      `pre_api_request ${first}`,
      'pre_tool_call toolu_a',
      `post_api_request ${first}`,
      'pre_tool_call toolu_b',
      'post_tool_call toolu_a',
      'post_tool_call toolu_b',
      `pre_api_request ${second}`,
      `post_api_request ${second}`,
    ]);
    expect(toolCalls.map((call) => call.api_request_id)).toEqual([first, first]);
    const [asking] = llm;
    const [a, b] = tools;
    expect(a!.startMs - asking!.startMs, 'the call starts when its block is read, not at the hook').toBeGreaterThanOrEqual(0.8 * WAIT_MS);
    expect(asking!.endMs - a!.startMs, 'the call starts while the reply still streams').toBeGreaterThanOrEqual(0.8 * WAIT_MS);
    expect(b!.startMs, 'the call no hook took up starts at the reply end').toBeGreaterThanOrEqual(asking!.endMs);
    expect(agentSteps(doc)).toEqual([
      ['', ['toolu_a', 'toolu_b'], [['toolu_a', 'noon'], ['toolu_b', 'InputValidationError: city is required']]],
      ['It is noon.', [], []],
    ]);
  });

  it('ends a call it started when the reply that asked for it breaks off and is retried (the CLI drops the call)', async () => {
    const broken = reply(session, 'msg_1', [toolUse('toolu_1')], 'tool_use').slice(0, 2);
    const script: Item[] = [
      init,
      requesting,
      ...broken,
      { preToolUse: 'toolu_1' },
      { type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10, retry_delay_ms: 5, error_status: 500, error: 'api_error', ...session },
      ...answer.slice(1),
    ];
    const { order, requestIds, doc } = await run(script, 'claude-tool-reply-broke-off');
    const [first] = requestIds;
    expect(new Set(requestIds), 'the retry is the same request').toEqual(new Set([first]));
    expect(order).toEqual([`pre_api_request ${first}`, 'pre_tool_call toolu_1', `api_request_error ${first}`, 'post_tool_call toolu_1', `pre_api_request ${first}`, `post_api_request ${first}`]);
    // ATIF: no answered step asked for the call (the broken reply is a failed attempt, with no content), so its
    // observation stands on its own, naming the call in its metadata.
    expect(agentSteps(doc).flatMap(([, calls]) => calls)).toEqual([]);
    const ended = (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []).filter((result: AtifDoc) => result.extra?.metadata?.tool_call_id === 'toolu_1');
    expect(ended.map((result: AtifDoc) => [result.content, result.extra.metadata.status])).toEqual([['the reply that asked for it broke off; the request was retried', 'error']]);
  });
});
