// A Claude Agent SDK query aborted (`options.abortController`) while the
// model's reply streams: the program had read part of the answer (the
// blocks the SDK streamed whole, and with `includePartialMessages` the
// deltas of the block still streaming), and the trajectory keeps it, as
// every adapter keeps what a cut stream had delivered (core's
// deliveredAnswer): the failed attempt's response, the ATIF step's message
// and reasoning, beside the error. Real SDK and CLI against the loopback
// Anthropic API, which holds the reply until the query is over.
//
// `interrupt()` cuts the reply the same way (the CLI ends the turn with an
// aborted result, without the reply's `message_stop`): a failed step with
// the kept text, not a completed call. A program that stops reading
// (`break`) right after an assistant message holding a tool_use block keeps
// that call in the step that asked for it, with the tool's output when the
// CLI had already run it.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`.
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends, expectNothingLost, onlyTrajectory, recordedPlugin, type AtifDoc, type Recorded } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { offlineApi as offlineApiOf } from '../support/claude-checks.ts';

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const MODEL = 'claude-main-2026-01-01';

/** A reply that stops streaming where `hold` says until the test lets it go (after the query). */
function heldReply(blocks: Extract<MockReply, { blocks: unknown }>['blocks'], hold: { afterBlock: number; midBlock?: boolean }): { script: () => MockReply; release: () => void } {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  cleanups.unshift(() => release());
  return { script: () => ({ blocks, usage: { input: 30, output: 12 }, model: MODEL, hold: { ...hold, until: () => released } }), release };
}

/** The agent steps: [message, reasoning, whether the invocation failed]. */
function agentSteps(doc: AtifDoc): unknown[][] {
  return (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.message, step.reasoning_content ?? null, step.extra?.invocation?.status]);
}

function hooksOf(recorded: Recorded, hook: string): any[] {
  return recorded.log.filter((entry) => entry.hook === hook).map((entry) => entry.payload);
}


/** A reply of thinking and two text blocks, held after its first text block (the second is never read). */
function storyHeldAfterItsFirstText(): ReturnType<typeof heldReply> {
  return heldReply(
    [
      { type: 'thinking', thinking: 'The user wants a story.' },
      { type: 'text', text: 'Once upon a time,' },
      { type: 'text', text: ' never read.' },
    ],
    { afterBlock: 1 },
  );
}

describe('Claude Agent SDK: a reply cut by the program keeps what the program had read of it', () => {
  for (const backend of backends()) {
    it(`aborted after the reply's thinking and first text block: the step holds them beside the error (${backend} backend)`, async () => {
      const reply = storyHeldAfterItsFirstText();
      const { mock, env, home } = await offlineApi(reply.script);
      const recorded = recordedPlugin(`claude-cut-blocks-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const abortController = new AbortController();
      let read = '';
      let thrown: unknown;
      try {
        for await (const message of query({ prompt: 'Tell me a story.', options: { model: 'claude-main', cwd: home, env, settingSources: [], abortController } })) {
          if (message.type !== 'assistant') continue;
          for (const block of message.message.content as any[]) if (block.type === 'text') read += block.text;
          if (read !== '') abortController.abort();
        }
      } catch (error) {
        thrown = error;
      }
      reply.release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(String(thrown)).toMatch(/abort/i);
      expect(read).toBe('Once upon a time,');
      expect(mock.requests).toHaveLength(1);

      expect(hooksOf(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'interrupted' }, response: { assistant_message: { content: read } } }]);
      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc)).toEqual([[read, 'The user wants a story.', 'failed']]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`aborted mid-block by a program that asked for partial messages: the step holds the deltas it read (${backend} backend)`, async () => {
      const reply = heldReply([{ type: 'text', text: 'Once upon a time, there was a relay.' }], { afterBlock: 0, midBlock: true });
      const { env, home } = await offlineApi(reply.script);
      const recorded = recordedPlugin(`claude-cut-deltas-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const abortController = new AbortController();
      let read = '';
      try {
        for await (const message of query({ prompt: 'Tell me a story.', options: { model: 'claude-main', cwd: home, env, settingSources: [], abortController, includePartialMessages: true } })) {
          if (message.type !== 'stream_event') continue;
          const event = message.event as any;
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            read += event.delta.text;
            abortController.abort();
          }
        }
      } catch {
        // The SDK throws on the abort: what the program asked for.
      }
      reply.release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      // The loopback API sends the first half of the block's text, then holds the rest.
      expect(read).toBe('Once upon a time, ');

      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc)).toEqual([[read, null, 'failed']]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`interrupted (\`interrupt()\`) after the reply's thinking and first text block: a failed step with them and the interrupted error, as an abort gives (${backend} backend)`, async () => {
      const reply = storyHeldAfterItsFirstText();
      const { mock, env, home } = await offlineApi(reply.script);
      const recorded = recordedPlugin(`claude-cut-interrupt-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      let read = '';
      let result: any;
      try {
        const running = query({ prompt: 'Tell me a story.', options: { model: 'claude-main', cwd: home, env, settingSources: [] } });
        for await (const message of running) {
          if (message.type === 'result') result = message;
          if (message.type !== 'assistant') continue;
          for (const block of message.message.content as any[]) if (block.type === 'text') read += block.text;
          if (read !== '') await running.interrupt();
        }
      } catch {
        // Whether the SDK throws after the interrupted turn's result is not this test's point.
      }
      reply.release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(read).toBe('Once upon a time,');
      expect(result).toMatchObject({ subtype: 'error_during_execution', terminal_reason: 'aborted_streaming' });
      expect(mock.requests).toHaveLength(1);

      expect(hooksOf(recorded, 'post_api_request')).toEqual([]);
      // The CLI counts the cut reply's tokens in modelUsage: its step keeps them, as the completed call it was taken for did.
      expect(hooksOf(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'interrupted', message: 'the query ended during the request' }, response: { assistant_message: { content: read }, usage: { input_tokens: 30 } } }]);
      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc)).toEqual([[read, 'The user wants a story.', 'failed']]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`left (\`break\`) right after the assistant message holding a tool_use block: the step keeps the call (${backend} backend)`, async () => {
      let replies = 0;
      const { env, home } = await offlineApi(() =>
        replies++ === 0
          ? { blocks: [{ type: 'text', text: 'A' }, { type: 'tool_use', id: 'toolu_left', name: 'Bash', input: { command: 'echo 1', description: 'prints 1' } }], usage: { input: 30, output: 12 }, model: MODEL }
          : { blocks: [{ type: 'text', text: 'B' }], usage: { input: 40, output: 3 }, model: MODEL },
      );
      const recorded = recordedPlugin(`claude-cut-break-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      for await (const message of query({ prompt: 'Print 1.', options: { model: 'claude-main', cwd: home, env, settingSources: [], allowedTools: ['Bash'] } })) {
        if (message.type === 'assistant' && (message.message.content as any[]).some((block) => block.type === 'tool_use')) break;
      }
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      expect(hooksOf(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'interrupted' }, response: { assistant_message: { content: 'A', tool_calls: [{ id: 'toolu_left' }] } } }]);
      expect(hooksOf(recorded, 'pre_tool_call')).toMatchObject([{ tool_call_id: 'toolu_left', tool_name: 'Bash' }]);
      expect(hooksOf(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'toolu_left' }]);
      const doc = onlyTrajectory(atif);
      const steps = (doc.steps as AtifDoc[]).filter((step) => step.source !== 'user');
      expect(steps.map((step) => [step.source, step.message, step.extra?.invocation?.status, (step.tool_calls ?? []).map((call: any) => [call.tool_call_id, call.arguments])])).toEqual([
        ['agent', 'A', 'failed', [['toolu_left', { command: 'echo 1', description: 'prints 1' }]]],
      ]);
      expect(steps[0]!.observation.results.map((result: any) => result.source_call_id)).toEqual(['toolu_left']);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ interrupted: true }]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`left (\`break\`) after the CLI ran the call its block asked for: the tool's output is the call's observation, in the step that asked for it (${backend} backend)`, async () => {
      const reply = heldReply(
        [
          { type: 'tool_use', id: 'toolu_ran', name: 'Bash', input: { command: 'touch ran.txt', description: 'makes a file' } },
          { type: 'text', text: 'never read' },
        ],
        { afterBlock: 0 },
      );
      const { env, home } = await offlineApi(reply.script);
      const recorded = recordedPlugin(`claude-cut-break-ran-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const ran = path.join(home, 'ran.txt');
      for await (const message of query({ prompt: 'Make a file.', options: { model: 'claude-main', cwd: home, env, settingSources: [], allowedTools: ['Bash'] } })) {
        if (message.type !== 'assistant' || !(message.message.content as any[]).some((block) => block.type === 'tool_use')) continue;
        // The CLI runs the call while the reply streams: the program stops reading once it did.
        await expect.poll(() => existsSync(ran), { timeout: 30_000 }).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 500));
        break;
      }
      reply.release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      const doc = onlyTrajectory(atif);
      const steps = (doc.steps as AtifDoc[]).filter((step) => step.source !== 'user');
      expect(steps.map((step) => [step.source, step.extra?.invocation?.status, (step.tool_calls ?? []).map((call: any) => call.tool_call_id)])).toEqual([['agent', 'failed', ['toolu_ran']]]);
      const [result] = steps[0]!.observation.results as any[];
      expect(result.source_call_id).toBe('toolu_ran');
      // What the tool returned, as its PostToolUse hook said: the model was never sent a tool_result for it.
      expect(hooksOf(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'toolu_ran', status: 'ok' }]);
      await sameOnNative(recorded);
    }, 180_000);
  }
});
