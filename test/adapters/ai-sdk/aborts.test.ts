// A ToolLoopAgent run stopped by its abortSignal while the model is still
// answering (a stop button), through the real OpenAI provider on a fetch that
// answers the first request and holds the second until the signal fires, as
// a real fetch does. streamText reports the abort as `onAbort`, generateText
// as `onError` with the abort: both must end the turn `interrupted`, the
// request cut short a failed call, the tool that ran before kept.
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, stepCountIs, tool } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a run stopped by its abortSignal (%s)', (_major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode}: the turn ends interrupted, the model call it cut short failed with the abort`, async () => {
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl_1', model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 40, output: 9 } }, { stream: mode === 'stream' });
      const controller = new AbortController();
      let held = 0;
      const fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
        if (fake.requests.length === 0) return await fake.fetch(input, init);
        held += 1;
        // The second request: the user presses stop while the model thinks; fetch rejects with the signal's reason.
        return await new Promise<Response>((_, reject) => {
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
          controller.abort();
        });
      };
      const recorded = recordedPlugin(`ai-abort-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const agent = new ToolLoopAgent({
        id: 'weather-agent',
        model: packages.openai({ apiKey: 'test-key', fetch: fetch as typeof globalThis.fetch }).chat('gpt-4o-mini'),
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }) },
        stopWhen: stepCountIs(4),
      });
      if (mode === 'generate') {
        await expect(agent.generate({ prompt: 'Weather in Paris?', abortSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
      } else {
        const result = await agent.stream({ prompt: 'Weather in Paris?', abortSignal: controller.signal });
        for await (const _part of result.fullStream) {
          // drained until the abort ends it
        }
      }
      expect(held).toBe(1);
      const turnEnd = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.interrupted, entry.payload.failed, entry.payload.turn_exit_reason]);
      expect(turnEnd).toEqual([[true, false, 'interrupted']]);
      const llmEnds = recorded.log.filter((entry) => entry.hook === 'post_api_request' || entry.hook === 'api_request_error').map((entry) => entry.hook);
      expect(llmEnds).toEqual(['post_api_request', 'api_request_error']);
      expect(recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.status])).toEqual([['call_w', 'ok']]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
    });
  }
});

// The stop pressed while a sub-agent (an agent a tool runs with the tool's abortSignal, as the SDK docs pass it on)
// waits for its model. Under streamText the SDK ends the parent's turn at once and the sub-agent's hooks arrive after
// the parent's session closed: the sub-agent must still be in the parent's trajectory, whole, under its call.
describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a stop while a sub-agent waits for its model (%s)', (_major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode}: both turns end interrupted, the sub-agent whole under the call that ran it`, async () => {
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl_1', model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: 'call_r', name: 'research', args: { topic: 'Paris' } }], usage: { input: 40, output: 9 } }, { stream: mode === 'stream' });
      fake.reply('chat', { id: 'chatcmpl_2', model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 30, output: 7 } });
      const controller = new AbortController();
      const fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
        if (fake.requests.length < 2) return await fake.fetch(input, init);
        // The sub-agent's second request: the user presses stop while its model thinks.
        return await new Promise<Response>((_, reject) => {
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
          controller.abort();
        });
      };
      const recorded = recordedPlugin(`ai-sub-abort-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const model = packages.openai({ apiKey: 'test-key', fetch: fetch as typeof globalThis.fetch }).chat('gpt-4o-mini');
      const researcher = new ToolLoopAgent({
        id: 'researcher',
        model,
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }) },
        stopWhen: stepCountIs(4),
      });
      const agent = new ToolLoopAgent({
        id: 'lead',
        model,
        tools: {
          research: tool({
            description: 'research a topic',
            inputSchema: z.object({ topic: z.string() }),
            execute: async ({ topic }, { abortSignal }) => (await researcher.generate({ prompt: topic, abortSignal })).text,
          }),
        },
        stopWhen: stepCountIs(4),
      });
      if (mode === 'generate') {
        await expect(agent.generate({ prompt: 'Research Paris', abortSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
      } else {
        const result = await agent.stream({ prompt: 'Research Paris', abortSignal: controller.signal });
        for await (const _part of result.fullStream) {
          // drained until the abort ends it
        }
      }
      // The sub-agent's own end comes when its generate() settles, after the stream has ended.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.session_id, entry.payload.interrupted]);
      expect(ends).toHaveLength(2);
      expect(ends.every(([, interrupted]) => interrupted === true)).toBe(true);
      const stop = recorded.log.find((entry) => entry.hook === 'subagent_stop')!.payload;
      expect(stop).toMatchObject({ tool_call_id: 'call_r', child_status: 'interrupted' });
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const [lead] = atif as Array<{ steps: Array<Record<string, any>>; subagent_trajectories?: Array<{ session_id: string; steps: Array<Record<string, any>> }> }>;
      const call = lead!.steps.find((step) => step.tool_calls?.[0]?.tool_call_id === 'call_r')!;
      const result = call.observation.results[0];
      // generate() hears the tool's own rejection; streamText ended the turn while the tool still ran.
      expect(result.content).toMatch(mode === 'generate' ? /AbortError/ : /^RunEnded: the run ended \(interrupted\) before this finished$/);
      expect(result.subagent_trajectory_ref.map((ref: { session_id: string }) => ref.session_id)).toEqual([stop.child_session_id]);
      const sub = lead!.subagent_trajectories!.find((trajectory) => trajectory.session_id === stop.child_session_id)!;
      expect(sub.steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
      expect(sub.steps[0]!.message).toBe('Paris');
      expect(sub.steps[1]!.observation.results.map((r: { source_call_id: string; content: string }) => [r.source_call_id, r.content])).toEqual([['call_w', 'Paris: sunny']]);
      expect(sub.steps[1]!.metrics).toMatchObject({ prompt_tokens: 30, completion_tokens: 7 });
      expect(sub.steps[2]!.message).toMatch(/aborted/);
    });
  }
});
