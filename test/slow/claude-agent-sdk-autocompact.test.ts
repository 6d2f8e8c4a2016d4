// The Claude Agent SDK adapter on a long session the CLI compacts by itself,
// on the real SDK and its bundled CLI against the loopback Anthropic API
// (test/support/anthropic-mock.ts): a streaming-input conversation with a
// tool-using agent whose context nears the window, so the CLI summarizes the
// conversation before it sends the next request (`compact_boundary`, trigger
// `auto`), once in the middle of a turn (between a tool's result and the
// request that carries it) and once as a turn starts (the new prompt is
// large). The CLI compacts at its own threshold only when a window is set
// (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`, or `autoCompactWindow` in settings), so
// the first test sets one. The mock reports each request's tokens as its
// body's size over four, the way the CLI estimates them, so the CLI's own
// arithmetic decides when it compacts, as it would against the API. With no
// window set the CLI compacts when the API refuses a request as too long, and
// sends it again (the second test); the third is a compaction the CLI gives
// up before asking for a summary.
//
// Every request the API saw is held against the trajectory: each is one
// recorded call in order (the summary requests as the compaction's own call,
// with the summary the model wrote), each call's messages are the ones the
// API was sent (after a compaction, the summary and what the CLI kept), and
// the tokens of every request add up to the steps plus the turn ends'
// `unattributed_usage`, which is `modelUsage`.
//
// Slow (the query spawns the CLI), so it runs in `npm run test:slow`.
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import type { MockBlock, MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { isSummary, offlineApi as offlineApiOf, statedByTurn, tokensByModel, turnByTurn } from '../support/claude-checks.ts';

/** The model the program asks for (`modelUsage` is keyed by it), and the one the API answers with. */
const ASKED = 'claude-sonnet-4-5';
const ANSWERED = 'claude-sonnet-4-5-20250929';
const askedFor = (answered: string): string => (answered === ANSWERED ? ASKED : answered);

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Tokens as the CLI estimates them: four characters each. */
const tokensOf = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4);
/** A page the agent writes: about 30,000 tokens of the model's output, which the next requests carry. */
const page = (name: string): string => `${'x'.repeat(99)}\n`.repeat(1200) + `page ${name}`;
/** A log the user pastes into the third prompt: enough to take the conversation past the threshold as that turn starts. */
const LOG = `what does this log say?\n${'log line\n'.repeat(12_000)}`;
/** The summary the model writes for the CLI's n-th compaction, as it writes it (the CLI takes the text inside the tags). */
const summaryOf = (n: number): string => `<summary>What was done so far; compaction ${n}.</summary>`;

/** What a request's messages hold, in order: texts (the CLI's reminders left out), tool calls and tool results. */
function sentParts(messages: any[]): string[] {
  return messages.flatMap((message) => {
    const blocks: any[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    return blocks.flatMap((block) => {
      if (block.type === 'tool_use') return [`call ${block.id}`];
      if (block.type === 'tool_result') return [`result ${block.tool_use_id}`];
      // The CLI's reminders, and its instruction to write a summary, which ends a summary request.
      if (block.type !== 'text' || block.text.startsWith('<system-reminder>') || block.text.startsWith('CRITICAL: Respond with TEXT ONLY')) return [];
      return [`text ${block.text.trim()}`];
    });
  });
}

/** The same of a recorded request's messages (the adapter's chat shape). */
function recordedParts(messages: any[]): string[] {
  return messages.flatMap((message) => {
    if (message.role === 'tool') return [`result ${message.tool_call_id}`];
    const text = typeof message.content === 'string' && message.content.trim() !== '' ? [`text ${message.content.trim()}`] : [];
    return [...text, ...(message.tool_calls ?? []).map((call: any) => `call ${call.id}`)];
  });
}

describe('Claude Agent SDK: a long session the CLI compacts by itself', () => {
  for (const backend of backends()) {
    it(`every request the API saw is a recorded call with its messages and tokens; the compaction is its own call with the summary; the requests after it carry the compacted conversation (${backend} backend)`, async () => {
      let summaries = 0;
      const { mock, env, home } = await offlineApi((request) => {
        const reply = (blocks: MockBlock[]): MockReply => ({ blocks, usage: { input: tokensOf(request.body), output: tokensOf(blocks) }, model: ANSWERED });
        if (isSummary(request)) return reply([{ type: 'text', text: summaryOf(++summaries) }]);
        if (request.toolResults.length > 0) return reply([{ type: 'text', text: `wrote ${request.toolResults.map((result) => result.tool_use_id).join(', ')}` }]);
        const last = JSON.stringify(request.body.messages.at(-1));
        const name = ['one', 'two'].find((word) => last.includes(`write page ${word}`));
        if (name !== undefined) return reply([{ type: 'tool_use', id: `toolu_page_${name}`, name: 'Write', input: { file_path: `${home}/page-${name}.txt`, content: page(name) } }]);
        return reply([{ type: 'text', text: 'The log repeats one line.' }]);
      });
      const recorded = recordedPlugin(`claude-autocompact-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const prompts = ['write page one', 'write page two', LOG];
      // Each message once the previous turn's result was read: one turn each.
      const messages = await turnByTurn(query, prompts, { model: ASKED, cwd: home, env: { ...env, CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000' }, settingSources: [], allowedTools: ['Write'] });
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // The CLI compacted twice by itself: after the second page's result (before the request carrying it) and as the
      // third turn started; each time its summary request went first.
      expect(mock.requests.map((request) => (isSummary(request) ? 'summary' : 'main'))).toEqual(['main', 'main', 'main', 'summary', 'main', 'summary', 'main']);
      expect(messages.filter((m) => m.type === 'system' && m.subtype === 'compact_boundary').map((m) => m.compact_metadata.trigger)).toEqual(['auto', 'auto']);

      // Every request the API saw is one recorded call, in order: its answer, and the tokens the API reported for it.
      // A summary request's answer is the summary the model wrote; its tokens are said nowhere but modelUsage, so its
      // call has none and its turn's end states them.
      const calls = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload as any);
      let summary = 0;
      expect(calls.map((call) => [call.assistant_message.content ?? '', (call.assistant_message.tool_calls ?? []).map((c: any) => c.id), call.usage?.input_tokens ?? null, call.usage?.output_tokens ?? null])).toEqual(
        mock.replies.map(({ reply }, index) => {
          if (!('blocks' in reply)) throw new Error('the mock answered every request');
          if (isSummary(mock.requests[index]!)) return [summaryOf(++summary), [], null, null];
          const text = reply.blocks.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
          return [text, reply.blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])), reply.usage.input, reply.usage.output];
        }),
      );
      expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(mock.requests.length);

      // Each call's messages are the ones the API was sent: after a compaction the summary, then the messages the CLI
      // kept (the last call and its result; the answer before the new prompt), then the new prompt. A compaction's call
      // is announced before the CLI says it compacts, so it names the conversation as it stood (docs' Limits): the
      // summary request the API saw leaves out what the CLI then keeps verbatim after the summary (here the last call
      // and its result) and, as a turn starts, the new prompt, which it sends after the summary; it ends with the CLI's
      // instruction to summarize, which the stream does not show.
      const sent = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => recordedParts((entry.payload.request as any).body.messages));
      const wire = mock.requests.map((request) => sentParts(request.body.messages));
      for (const index of [0, 1, 2, 4, 6]) expect(sent[index]).toEqual(wire[index]);
      expect(sent[3]).toEqual([...wire[3]!, 'call toolu_page_two', 'result toolu_page_two']);
      expect(sent[5]).toEqual([...wire[5]!, `text ${LOG.trim()}`]);
      // What those were: the request after the mid-turn compaction starts at its summary and keeps the call it answers.
      expect(wire[4]!.slice(1)).toEqual(['call toolu_page_two', 'result toolu_page_two']);
      expect(wire[4]![0]).toMatch(/^text This session is being continued[\s\S]*\nWhat was done so far; compaction 1\./);
      expect(wire[6]!.slice(1)).toEqual(['text wrote toolu_page_two', `text ${LOG.trim()}`]);
      expect(wire[6]![0]).toMatch(/^text This session is being continued[\s\S]*\nWhat was done so far; compaction 2\./);

      // The trajectory: each compaction is a step of its own, in the turn it happened in, its message the summary the
      // model wrote, without tokens (its turn's end states them). The request after the compaction as the third turn
      // starts sends the prompt again, after the summary, so it is a user step again.
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect((doc.steps as AtifDoc[]).map((step) => [step.source, step.message, step.metrics === undefined])).toEqual([
        ['user', 'write page one', true],
        ['agent', '', false],
        ['agent', 'wrote toolu_page_one', false],
        ['user', 'write page two', true],
        ['agent', '', false],
        ['agent', summaryOf(1), true],
        ['agent', 'wrote toolu_page_two', false],
        ['user', LOG, true],
        ['agent', summaryOf(2), true],
        ['user', LOG, true],
        ['agent', 'The log repeats one line.', false],
      ]);

      // The tokens: each compaction's turn states its summary request's, exactly; with the steps they are every token
      // the API reported, and modelUsage's.
      const summaryUsage = mock.requests.flatMap((request, index) => {
        const reply = mock.replies[index]!.reply;
        return isSummary(request) && 'blocks' in reply ? [{ input_tokens: reply.usage.input, output_tokens: reply.usage.output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }] : [];
      });
      expect(statedByTurn(recorded.log)).toEqual([undefined, { [ASKED]: summaryUsage[0] }, { [ASKED]: summaryUsage[1] }]);
      const spent = mock.replies.reduce<[number, number]>((sum, { reply }) => ('blocks' in reply ? [sum[0] + reply.usage.input, sum[1] + reply.usage.output] : sum), [0, 0]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: spent });
      expect(held).toEqual(reported);
    }, 300_000);

    // The prompt the CLI keeps after the compaction is named by its id: the one the program gave the message (the
    // SDK's `uuid`, which the CLI keeps), else the CLI's own, which only its transcript holds (docs' Limits).
    for (const ids of [true, false]) {
      it(`without a window the CLI compacts when the API refuses a request as too long, and sends it again: the compaction is its call, the request after it carries the compacted conversation, ${ids ? 'the kept prompt by the id the program gave it' : 'the kept prompt from the transcript when the CLI wrote it in time'} (${backend} backend)`, async () => {
        let refused = false;
        const { mock, env, home } = await offlineApi((request) => {
          const reply = (blocks: MockBlock[]): MockReply => ({ blocks, usage: { input: tokensOf(request.body), output: tokensOf(blocks) }, model: ANSWERED });
          if (isSummary(request)) return reply([{ type: 'text', text: summaryOf(1) }]);
          const last = JSON.stringify(request.body.messages.at(-1));
          if (last.includes('toolu_echo_two') && !refused) {
            refused = true;
            return { status: 400, errorType: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' };
          }
          if (request.toolResults.length > 0) return reply([{ type: 'text', text: `echoed ${request.toolResults.map((result) => result.tool_use_id).join(', ')}` }]);
          const name = ['one', 'two'].find((word) => last.includes(`echo ${word}`));
          return reply(name === undefined ? [{ type: 'text', text: 'nothing to echo' }] : [{ type: 'tool_use', id: `toolu_echo_${name}`, name: 'Bash', input: { command: `echo ${name}`, description: `echo ${name}` } }]);
        });
        const recorded = recordedPlugin(`claude-autocompact-refused-${backend}`, backend);
        const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
        const prompts = ['echo one', 'echo two'];
        // Each message once the previous turn's result was read: one turn each.
        const uuids = ids ? prompts.map(() => randomUUID()) : undefined;
        const messages = await turnByTurn(query, prompts, { model: ASKED, cwd: home, env, settingSources: [], allowedTools: ['Bash'] }, uuids);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);

        // The request carrying the second call's result was refused; the CLI summarized, then sent it again, compacted.
        expect(mock.requests.map((request, index) => (isSummary(request) ? 'summary' : 'blocks' in mock.replies[index]!.reply ? 'main' : 'refused'))).toEqual(['main', 'main', 'main', 'refused', 'summary', 'main']);
        expect(messages.filter((m) => m.type === 'system' && m.subtype === 'compact_boundary').map((m) => m.compact_metadata.trigger)).toEqual(['auto']);
        // The stream says nothing of the refusal (no api_retry, no error): the call the CLI announced for the refused
        // request is the compaction's, with that request's messages (docs' Limits); it has no tokens, and the API
        // charged none for the refusal.
        const sent = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => recordedParts((entry.payload.request as any).body.messages));
        const wire = mock.requests.map((request) => sentParts(request.body.messages));
        expect(sent.slice(0, 4)).toEqual([wire[0], wire[1], wire[2], wire[3]]);
        // The request sent again, as sent. Without ids, the kept prompt comes from the transcript, which the CLI writes as
        // it goes: as sent, or without that prompt when the file did not hold it yet as the boundary was read (docs'
        // Limits). Nothing else may differ.
        if (ids) expect(sent[4]).toEqual(wire[5]);
        else expect([wire[5], wire[5]!.filter((part) => part !== 'text echo two')]).toContainEqual(sent[4]);
        // The boundary names the prompt it keeps by the id the program gave it.
        if (uuids !== undefined) expect(messages.find((m) => m.type === 'system' && m.subtype === 'compact_boundary').compact_metadata.preserved_messages.uuids).toContain(uuids[1]);
        // Sent again after the summary: the messages the CLI kept, the second prompt among them (named by its id).
        expect(wire[5]!.slice(1)).toEqual(['text echoed toolu_echo_one', 'text echo two', 'call toolu_echo_two', 'result toolu_echo_two']);
        expect(wire[5]![0]).toMatch(/^text This session is being continued[\s\S]*\nWhat was done so far; compaction 1\./);
        const calls = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload as any);
        const answer = (index: number): unknown[] => {
          const reply = mock.replies[index]!.reply;
          return 'blocks' in reply ? [reply.usage.input, reply.usage.output] : [];
        };
        expect(calls.map((call) => [call.assistant_message.content ?? '', call.usage?.input_tokens ?? null, call.usage?.output_tokens ?? null])).toEqual([
          ['', ...answer(0)],
          ['echoed toolu_echo_one', ...answer(1)],
          ['', ...answer(2)],
          [summaryOf(1), null, null],
          ['echoed toolu_echo_two', ...answer(5)],
        ]);
        const summaryReply = answer(4) as [number, number];
        expect(statedByTurn(recorded.log)).toEqual([undefined, { [ASKED]: { input_tokens: summaryReply[0], output_tokens: summaryReply[1], cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } }]);
        expect(validateAtif(atif[0]!)).toEqual([]);
        const spent = mock.replies.reduce<[number, number]>((sum, { reply }) => ('blocks' in reply ? [sum[0] + reply.usage.input, sum[1] + reply.usage.output] : sum), [0, 0]);
        const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
        expect(reported).toEqual({ [ASKED]: spent });
        expect(held).toEqual(reported);
      }, 300_000);
    }

    it(`a compaction the CLI gives up before asking for a summary is no call: the request it announced goes out as it was (${backend} backend)`, async () => {
      // The first answer says its request took nearly the whole window while its messages are a few words: the CLI
      // takes the rest for a prefix (system prompt, tools) no summary can shrink, tries to compact what it can, finds
      // too little to summarize and sends the request as it was.
      const { mock, env, home } = await offlineApi((request) => {
        if (request.toolResults.length > 0) return { blocks: [{ type: 'text', text: 'said hi' }], usage: { input: 95_100, output: 3 }, model: ANSWERED };
        return { blocks: [{ type: 'tool_use', id: 'toolu_hi', name: 'Bash', input: { command: 'echo hi', description: 'say hi' } }], usage: { input: 95_000, output: 20 }, model: ANSWERED };
      });
      const recorded = recordedPlugin(`claude-autocompact-failed-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      const options = { model: ASKED, cwd: home, env: { ...env, CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000' }, settingSources: [], allowedTools: ['Bash'] };
      for await (const message of query({ prompt: 'say hi', options })) messages.push(message);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      expect(messages.filter((m) => m.type === 'system' && m.subtype === 'status' && (m.status === 'compacting' || m.compact_result !== undefined)).map((m) => m.status ?? m.compact_result)).toEqual(['compacting', 'failed']);
      expect(mock.requests.map((request) => (isSummary(request) ? 'summary' : 'main'))).toEqual(['main', 'main']);
      const calls = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload as any);
      expect(calls.map((call) => [call.usage.input_tokens, call.usage.output_tokens])).toEqual([[95_000, 20], [95_100, 3]]);
      const sent = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => recordedParts((entry.payload.request as any).body.messages));
      expect(sent).toEqual(mock.requests.map((request) => sentParts(request.body.messages)));
      expect(sent[1]).toEqual(['text say hi', 'call toolu_hi', 'result toolu_hi']);
      expect(validateAtif(atif[0]!)).toEqual([]);
      expect(statedByTurn(recorded.log)).toEqual([undefined]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: [190_100, 23] });
      expect(held).toEqual(reported);
    }, 300_000);
  }
});
