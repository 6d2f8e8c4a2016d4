// createAgentUIStream as its reference page writes it (07-reference/01-ai-sdk-core/17-create-agent-ui-stream.mdx): a
// ToolLoopAgent run from UI messages, its UI message chunks read by `for await` in the program's own runtime, with no
// Response. The model is the real @ai-sdk/openai (Responses API) on a fake fetch speaking its SSE (wire.ts). What the
// program read (the tool call's id, input and output, the text, each step's usage given to onStepEnd, the finish) is
// what the trajectory says. A reader that stops reading (break) does not stop the agent: its next model call is
// made and recorded; the SDK reports no end of the run, and none is made up.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { ToolLoopAgent, createAgentUIStream, isStepCount, type LanguageModelUsage, type UIMessage } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';
import { FakeProvider } from './wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-2024-08-06';
const ANSWER = 'It is sunny in Paris, 21 °C.';

function agentOn(fake: FakeProvider, onStepEnd?: (usage: LanguageModelUsage) => void) {
  const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
  const agent = new ToolLoopAgent({ model: openai('gpt-4o'), instructions: 'You are a helpful assistant.', tools: { weather }, stopWhen: isStepCount(3) });
  return { agent, onStepEnd: onStepEnd === undefined ? undefined : ({ usage }: { usage: LanguageModelUsage }) => onStepEnd(usage) };
}

// The reference page's generator, as written.
async function* streamAgent(agent: ToolLoopAgent<never, { weather: typeof weather }>, uiMessages: unknown[], abortSignal?: AbortSignal, onStepEnd?: (event: { usage: LanguageModelUsage }) => void) {
  const stream = await createAgentUIStream({ agent, uiMessages, abortSignal, ...(onStepEnd === undefined ? {} : { onStepEnd }) });
  for await (const chunk of stream) {
    yield chunk; // Each chunk is a UI message output from the agent.
  }
}

const question: UIMessage[] = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] }];

describe('createAgentUIStream, iterated directly', () => {
  it('read to the end: the tool call, its output, the answer and each step\'s usage are the trajectory\'s', async () => {
    const fake = new FakeProvider()
      .reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 80, output: 15, cached: 64 } }, { stream: true })
      .reply('responses', { id: 'resp_2', model: MODEL, text: ANSWER, usage: { input: 120, output: 11 } }, { stream: true });
    const recorded = recordedPlugin('ai-agent-ui-stream');
    uninstall = instrumentAiSdk(recorded.hooks);
    const usages: LanguageModelUsage[] = [];
    const { agent, onStepEnd } = agentOn(fake, (usage) => void usages.push(usage));

    const chunks: Array<Record<string, any>> = [];
    for await (const chunk of streamAgent(agent, question, undefined, onStepEnd)) chunks.push(chunk as Record<string, any>);

    const input = chunks.find((chunk) => chunk.type === 'tool-input-available')!;
    const output = chunks.find((chunk) => chunk.type === 'tool-output-available')!;
    const text = chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta).join('');
    expect([input.toolCallId, input.toolName, input.input]).toEqual(['call_paris', 'weather', { city: 'Paris' }]);
    expect([output.toolCallId, output.output]).toEqual(['call_paris', { city: 'Paris', forecast: 'sunny', tempC: 21 }]);
    expect(text).toBe(ANSWER);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(usages).toHaveLength(2);

    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect([steps[0]!.source, steps[0]!.message]).toEqual(['user', 'Weather in Paris?']);
    const agentSteps = steps.filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual(
      usages.map((usage) => [MODEL, usage.inputTokens, usage.outputTokens, usage.inputTokenDetails.cacheReadTokens]),
    );
    expect(agentSteps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([[input.toolCallId, input.toolName, input.input]]);
    expect(agentSteps[0]!.observation.results.map((entry: AtifDoc) => [entry.source_call_id, JSON.parse(entry.content)])).toEqual([[output.toolCallId, output.output]]);
    expect(agentSteps[1]!.message).toBe(text);
    expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).not.toHaveProperty('failed', true);
    await sameOnNative(recorded);
  });

  it('a reader that stops after the tool call (break): the SDK goes on with the next model call, recorded with its tokens; it reports no end of the run, so the turn stays open (docs/adapters/ai-sdk.md)', async () => {
    const fake = new FakeProvider()
      .reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 80, output: 15 } }, { stream: true })
      .reply('responses', { id: 'resp_2', model: MODEL, text: ANSWER, usage: { input: 120, output: 11 } }, { stream: true });
    const recorded = recordedPlugin('ai-agent-ui-stream-break');
    uninstall = instrumentAiSdk(recorded.hooks);
    const { agent } = agentOn(fake);

    const seen: string[] = [];
    for await (const chunk of streamAgent(agent, question)) {
      seen.push(chunk.type);
      if (chunk.type === 'tool-output-available') break;
    }
    expect(seen.at(-1)).toBe('tool-output-available');
    // Leaving the loop does not stop the agent: it sends the tool's output to the model, which answers (and bills).
    await vi.waitFor(() => expect(recorded.log.filter((entry) => entry.hook === 'post_api_request')).toHaveLength(2));
    expect(fake.requests).toHaveLength(2);
    // What it did is recorded as it happened; the SDK reports no end of the run, and none is invented.
    expect(recorded.log.map((entry) => entry.hook)).toEqual(['on_session_start', 'pre_llm_call', 'pre_api_request', 'post_api_request', 'pre_tool_call', 'post_tool_call', 'pre_api_request', 'post_api_request']);
    expect(recorded.log.find((entry) => entry.hook === 'post_tool_call')!.payload).toMatchObject({ tool_call_id: 'call_paris', status: 'ok' });
    expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);
    uninstall();
    uninstall = undefined;
    // The session closes at shutdown with both calls, their tokens as billed, and the tool's output.
    const { atif, counters } = await recorded.finish();
    expect(counters.dropped).toBe(0);
    const agentSteps = (atif[0]!.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => [step.message, step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual([['', 80, 15], [ANSWER, 120, 11]]);
    expect((agentSteps[0]!.observation.results as AtifDoc[]).map((result) => result.source_call_id)).toEqual(['call_paris']);
  });

  it('a reader that aborts its signal as it stops reading stops the agent: no further model call, the turn ends interrupted', async () => {
    const fake = new FakeProvider()
      .reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 80, output: 15 } }, { stream: true })
      .reply('responses', { id: 'resp_2', model: MODEL, text: ANSWER, usage: { input: 120, output: 11 } }, { stream: true });
    const recorded = recordedPlugin('ai-agent-ui-stream-abort');
    uninstall = instrumentAiSdk(recorded.hooks);
    const { agent } = agentOn(fake);
    const controller = new AbortController();

    for await (const chunk of streamAgent(agent, question, controller.signal)) {
      if (chunk.type === 'tool-output-available') {
        controller.abort();
        break;
      }
    }
    await vi.waitFor(() => expect(recorded.log.some((entry) => entry.hook === 'on_session_end')).toBe(true));
    expect(fake.requests).toHaveLength(1);
    uninstall();
    uninstall = undefined;
    const { doc } = await finishedRun(recorded);
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ interrupted: true, turn_exit_reason: 'interrupted' });
    const agentSteps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => [step.metrics?.prompt_tokens, step.tool_calls?.length])).toEqual([[80, 1]]);
    await sameOnNative(recorded);
  });
});
