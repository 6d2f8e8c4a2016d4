// `view` of a run a guardrail stopped, from the ATOF file real programs wrote: a LangChain agent whose
// `openAIModerationMiddleware` flags a tool's result (the turn completes, with the middleware's message as its
// answer: nothing else on the tree says a guardrail ended it), and an OpenAI Agents SDK agent whose input guardrail
// trips (the turn fails). The turn's row names the guardrail that tripped and what it checked; one that passed is
// not named.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, InputGuardrailTripwireTriggered, OpenAIChatCompletionsModel, run, type InputGuardrail } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { createAgent, openAIModerationMiddleware } from 'langchain';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';
import { chatCompletion, moderationReply, scriptedFetch } from '../support/provider-wire.ts';
import { cliInProcess } from './support.ts';
import { all, filesOf, viewed } from './view-json.ts';

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe('view: a turn a guardrail stopped', () => {
  it("LangChain openAIModerationMiddleware flags a tool's result: the turn's row says which guardrail tripped, on what", async () => {
    const { fetch } = scriptedFetch([
      moderationReply(false),
      chatCompletion({ id: 'chatcmpl-1', model: 'gpt-4.1', content: null, toolCalls: [{ id: 'call_news', name: 'news', args: { city: 'Oslo' } }], usage: { prompt_tokens: 60, completion_tokens: 15 } }),
      moderationReply(true),
    ]);
    const recorded = recordedPlugin('view-guardrail-langchain');
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
    const news = lcTool(async ({ city }) => `Reports of an attack in ${city}.`, { name: 'news', description: 'The news for a city', schema: z.object({ city: z.string() }) });
    const agent = createAgent({ model, tools: [news], middleware: [openAIModerationMiddleware({ model, checkToolResults: true })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'News in Oslo?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(String(result.messages.at(-1)!.content)).toContain('It was flagged for violence.');
    expectNothingLost((await recorded.finish()).counters);
    const turn = all(await viewed(filesOf(recorded.dir).atof)).find((node) => node.kind === 'turn')!;
    expect(turn.note).toBe('“News in Oslo?” · guardrail tripped: OpenAIModerationMiddleware (tool)');
    expect((await cliInProcess(['view', filesOf(recorded.dir).atof])).stdout).toContain('guardrail tripped: OpenAIModerationMiddleware (tool)');
  });

  it('OpenAI Agents SDK: an input guardrail that trips is named beside the failure; one that passed is not', async () => {
    useTracing('tracing off');
    const api = new FakeOpenAI();
    api.load({ 'gpt-4o': [{ text: 'An answer nobody should see.', usage: { input: 12, output: 6 } }] });
    const recorded = recordedPlugin('view-guardrail-agents');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const noSecrets: InputGuardrail = { name: 'No secrets', execute: async ({ input }) => ({ outputInfo: { matched: 'password' }, tripwireTriggered: JSON.stringify(input).includes('password') }) };
    const polite: InputGuardrail = { name: 'Polite', execute: async () => ({ outputInfo: {}, tripwireTriggered: false }) };
    const agent = new Agent({ name: 'Guarded', instructions: 'x', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'), inputGuardrails: [polite, noSecrets] });
    await expect(run(agent, 'my password is hunter2')).rejects.toBeInstanceOf(InputGuardrailTripwireTriggered);
    expectNothingLost((await recorded.finish()).counters);
    // No model call: no trajectory, the ATOF file alone.
    const [atof] = readdirSync(path.join(recorded.dir, 'atof'));
    const turn = all(await viewed(path.join(recorded.dir, 'atof', atof!))).find((node) => node.kind === 'turn')!;
    expect(turn.note).toBe('“my password is hunter2” · failed: InputGuardrailTripwireTriggered · guardrail tripped: No secrets (input)');
  });
});
