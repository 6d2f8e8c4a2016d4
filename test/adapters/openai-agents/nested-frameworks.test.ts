// A run of another framework inside an Agents SDK function tool is that
// call's sub-agent, and an Agents SDK run inside another framework's tool
// links its own calls' sub-agents to its own calls, not to the outer one. The
// adapter leaves the tool's `invoke` as the SDK made it: it finds the call by
// the `function` span the SDK makes current for it (a no-op one with tracing
// off). A runner that makes no spans (`new Runner({ tracingDisabled: true })`)
// gives nothing to find the call by: another framework's run inside its tool
// is then a session of its own (pinned below).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool as aiTool } from 'ai';
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { hooks, useTracing } from './support.ts';
import { FakeOpenAI } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const api = new FakeOpenAI();
const modelProvider = new OpenAIProvider({ openAIClient: api.client() });

let uninstall: Array<() => void> = [];
afterEach(() => {
  for (const remove of uninstall) remove();
  uninstall = [];
});

/** An AI SDK model on a fake Responses API that answers `text` once. */
function aiModel(text: string) {
  const provider = new FakeProvider();
  provider.reply('responses', { id: 'ai_1', model: 'gpt-4o-2024-08-06', text, usage: { input: 20, output: 5 } });
  return createOpenAI({ apiKey: 'sk-test-not-a-key', fetch: provider.fetch as typeof fetch })('gpt-4o');
}

type Mode = 'tracing on' | 'tracing off' | 'runner tracingDisabled';

describe('runs of other frameworks inside Agents SDK tools, and the other way round', () => {
  for (const mode of ['tracing on', 'tracing off', 'runner tracingDisabled'] as const satisfies readonly Mode[]) {
    it(`generateText inside an Agents SDK function tool (${mode})`, async () => {
      useTracing(mode === 'tracing on' ? 'tracing on' : 'tracing off');
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_research', name: 'research', args: { topic: 'tides' } }], usage: { input: 30, output: 8 } },
          { text: 'Tides follow the moon.', usage: { input: 60, output: 6 } },
        ],
      });
      const recorded = recordedPlugin('agents-nested-ai-sdk');
      uninstall.push(instrumentOpenAIAgents(recorded.hooks), instrumentAiSdk(recorded.hooks));
      const research = tool({
        name: 'research',
        description: 'Research a topic',
        parameters: z.object({ topic: z.string() }),
        execute: async ({ topic }) => (await generateText({ model: aiModel('The moon pulls the sea.'), prompt: `Explain ${topic}` })).text,
      });
      const agent = new Agent({ name: 'Orchestrator', instructions: 'Research.', model: 'gpt-4.1', tools: [research] });
      const runner = new Runner({ modelProvider, ...(mode === 'runner tracingDisabled' ? { tracingDisabled: true } : {}) });
      expect((await runner.run(agent, 'Why are there tides?')).finalOutput).toBe('Tides follow the moon.');
      const starts = hooks(recorded, 'on_session_start');
      if (mode === 'runner tracingDisabled') {
        // No span says which call the AI SDK run is in: it is a session of its own, not a sub-agent.
        expect(hooks(recorded, 'subagent_start')).toEqual([]);
        expect(starts).toHaveLength(2);
      } else {
        expect(hooks(recorded, 'subagent_start')).toMatchObject([{ tool_call_id: 'call_research' }]);
        expect(starts).toHaveLength(1);
      }
      expectNothingLost((await recorded.finish()).counters);
    }, 30_000);
  }

  for (const mode of ['tracing on', 'tracing off'] as const) {
    it(`an Agents SDK run inside an AI SDK tool, with generateText inside its own tool: each sub-agent under its own call (${mode})`, async () => {
      useTracing(mode);
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_inner', name: 'research', args: { topic: 'tides' } }], usage: { input: 30, output: 8 } },
          { text: 'The moon, mostly.', usage: { input: 60, output: 6 } },
        ],
      });
      const recorded = recordedPlugin('agents-nested-both-ways');
      uninstall.push(instrumentOpenAIAgents(recorded.hooks), instrumentAiSdk(recorded.hooks));
      const research = tool({
        name: 'research',
        description: 'Research a topic',
        parameters: z.object({ topic: z.string() }),
        execute: async ({ topic }) => (await generateText({ model: aiModel('The moon pulls the sea.'), prompt: `Explain ${topic}` })).text,
      });
      const agent = new Agent({ name: 'Researcher', instructions: 'Research.', model: 'gpt-4.1', tools: [research] });
      const runner = new Runner({ modelProvider });
      const outer = new FakeProvider();
      outer.reply('responses', { id: 'o_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_outer', name: 'ask_researcher', args: { question: 'tides' } }], usage: { input: 40, output: 9 } });
      outer.reply('responses', { id: 'o_2', model: 'gpt-4o-2024-08-06', text: 'The moon, mostly.', usage: { input: 70, output: 6 } });
      const result = await generateText({
        model: createOpenAI({ apiKey: 'sk-test-not-a-key', fetch: outer.fetch as typeof fetch })('gpt-4o'),
        prompt: 'Why tides?',
        stopWhen: stepCountIs(3),
        tools: { ask_researcher: aiTool({ inputSchema: z.object({ question: z.string() }), execute: async ({ question }) => String((await runner.run(agent, question)).finalOutput) }) },
      });
      expect(result.text).toBe('The moon, mostly.');
      // The Agents SDK run under the AI SDK's call; the innermost AI SDK run under the Agents SDK's call, not the outer one.
      expect(hooks(recorded, 'subagent_start').map((payload) => payload.tool_call_id)).toEqual(['call_outer', 'call_inner']);
      expectNothingLost((await recorded.finish()).counters);
    }, 30_000);
  }
});
