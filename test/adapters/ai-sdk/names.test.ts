// Names: a run is named by its telemetry functionId, else by its
// ToolLoopAgent's id; a sub-agent has its own name and model; steps carry the
// model the provider reported (dated), not the alias that was asked for;
// with each provider major (test/support/ai-sdk-providers.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, generateText, stepCountIs, tool } from 'ai';
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

type Steps = Array<Record<string, any>>;

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('names and models (%s)', (_major, packages) => {
  it("a ToolLoopAgent's id names its run, a sub-agent has its own name and model, and steps carry the dated models", async () => {
    const openai = new FakeProvider();
    openai.reply('responses', { id: 'p1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_research', name: 'research', args: { topic: 'tides' } }], usage: { input: 50, output: 10 } });
    openai.reply('responses', { id: 'p2', model: 'gpt-4o-2024-08-06', text: 'Tides follow the moon.', usage: { input: 90, output: 8 } });
    const anthropic = new FakeProvider();
    anthropic.reply('anthropic', { id: 'c1', model: 'claude-haiku-4-5-20251001', text: 'The moon pulls the sea.', usage: { input: 20, output: 7 } });
    const recorded = recordedPlugin('ai-names');
    uninstall = instrumentAiSdk(recorded.hooks);

    const researcher = new ToolLoopAgent({ id: 'researcher', model: packages.anthropic({ apiKey: 'test-key', fetch: anthropic.fetch as typeof fetch })('claude-haiku-4-5') });
    const orchestrator = new ToolLoopAgent({
      id: 'orchestrator',
      model: packages.openai({ apiKey: 'test-key', fetch: openai.fetch as typeof fetch })('gpt-4o'),
      stopWhen: stepCountIs(4),
      tools: {
        research: tool({ inputSchema: z.object({ topic: z.string() }), execute: async ({ topic }) => (await researcher.generate({ prompt: `Explain ${topic}` })).text }),
      },
    });
    expect((await orchestrator.generate({ prompt: 'Why are there tides?' })).text).toBe('Tides follow the moon.');

    expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload).toMatchObject({ agent_name: 'orchestrator', model: 'gpt-4o' });
    expect(recorded.log.find((entry) => entry.hook === 'subagent_start')!.payload).toMatchObject({ child_role: 'researcher', tool_call_id: 'call_research' });
    const childTurn = recorded.log.find((entry) => entry.hook === 'pre_llm_call' && entry.payload.parent_session_id !== undefined)!.payload;
    expect(childTurn.model).toBe('claude-haiku-4-5');

    uninstall();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif[0]!.agent.name).toBe('orchestrator');
    const parentModels = (atif[0]!.steps as Steps).filter((step) => step.source === 'agent').map((step) => step.model_name);
    expect(parentModels).toEqual(['gpt-4o-2024-08-06', 'gpt-4o-2024-08-06']);
    const child = atif[0]!.subagent_trajectories[0];
    expect((child.steps as Steps).filter((step) => step.source === 'agent').map((step) => [step.model_name, step.message])).toEqual([['claude-haiku-4-5-20251001', 'The moon pulls the sea.']]);
    // The sub-agent is named after itself and its own model (as requested, like its parent's), not its parent's.
    expect(child.agent).toMatchObject({ name: 'researcher', model_name: 'claude-haiku-4-5' });
  });

  it('functionId wins over the agent id, and a run a tool starts without an id of its own does not take its parent\'s', async () => {
    const fake = new FakeProvider();
    fake.reply('chat', { id: 'a', model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: 'call_sum', name: 'summarize', args: { text: 'long' } }], usage: { input: 5, output: 5 } });
    fake.reply('chat', { id: 'b', model: 'gpt-4o-mini-2024-07-18', text: 'short', usage: { input: 5, output: 1 } });
    fake.reply('chat', { id: 'c', model: 'gpt-4o-mini-2024-07-18', text: 'done', usage: { input: 9, output: 1 } });
    const model = packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch }).chat('gpt-4o-mini');
    const recorded = recordedPlugin('ai-names-function-id');
    uninstall = instrumentAiSdk(recorded.hooks);
    const agent = new ToolLoopAgent({
      id: 'agent-id',
      model,
      telemetry: { functionId: 'support-bot' },
      stopWhen: stepCountIs(3),
      tools: { summarize: tool({ inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => (await generateText({ model, prompt: `Summarize: ${text}` })).text }) },
    });
    await agent.generate({ prompt: 'Summarize this' });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload.agent_name).toBe('support-bot');
    const sub = recorded.log.find((entry) => entry.hook === 'subagent_start')!.payload;
    expect(sub.tool_call_id).toBe('call_sum');
    expect(sub.child_role).toBeUndefined();
    const { atif } = await recorded.finish();
    expect(atif[0]!.agent.name).toBe('support-bot');
  });
});
