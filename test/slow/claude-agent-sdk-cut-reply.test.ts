// A Claude Agent SDK query aborted (`options.abortController`) while the
// model's reply streams: the program had read part of the answer (the
// blocks the SDK streamed whole, and with `includePartialMessages` the
// deltas of the block still streaming), and the trajectory keeps it, as
// every adapter keeps what a cut stream had delivered (core's
// deliveredAnswer): the failed attempt's response, the ATIF step's message
// and reasoning, beside the error. Real SDK and CLI against the loopback
// Anthropic API, which holds the reply until the query is over.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`.
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

describe('Claude Agent SDK: a reply cut by the program keeps what the program had read of it', () => {
  for (const backend of backends()) {
    it(`aborted after the reply's thinking and first text block: the step holds them beside the error (${backend} backend)`, async () => {
      const reply = heldReply(
        [
          { type: 'thinking', thinking: 'The user wants a story.' },
          { type: 'text', text: 'Once upon a time,' },
          { type: 'text', text: ' never read.' },
        ],
        { afterBlock: 1 },
      );
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
  }
});
