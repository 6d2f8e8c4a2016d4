// The OpenAI Agents SDK adapter with a custom Model behind a custom
// ModelProvider, wired through Runner({ modelProvider }), as any non-OpenAI
// model is (no network, no API key): a scripted model that opens no
// generation or response span. A triage agent with two tools (one throws),
// a 503 retried by the runner's retry policy, an agent used as a tool (the
// sub-agent) and a handoff, through the plugin on both backends, with
// tracing on and off.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Runner, Usage, addTraceProcessor, setTraceProcessors, tool, withGenerationSpan, type Model, type ModelProvider, type ModelRequest, type ModelResponse } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { HookRegistry } from '../../../src/hooks/registry.ts';
import { backends, checkRetry, checkTrajectory, expectNothingLost, recordedPlugin } from '../support.ts';
import { hooks, sdkTotals, tokenTotals, TRACING, useTracing } from './support.ts';

type Step = Error | { output: unknown[]; usage: [number, number] };

const fc = (callId: string, name: string, args: unknown) => ({ type: 'function_call', callId, name, arguments: JSON.stringify(args), status: 'completed' });
const msg = (text: string) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });

class ScriptedModel implements Model {
  n = 0;
  constructor(readonly name: string, readonly script: Step[]) {}
  async getResponse(_request: ModelRequest): Promise<ModelResponse> {
    const step = this.script[this.n++]!;
    if (step instanceof Error) throw step;
    return {
      usage: new Usage({ requests: 1, inputTokens: step.usage[0], outputTokens: step.usage[1], totalTokens: step.usage[0] + step.usage[1] }),
      output: step.output as ModelResponse['output'],
      responseId: `${this.name}-resp-${this.n}`,
    };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not used');
  }
}

function scenario() {
  const models: Record<string, ScriptedModel> = {
    triage: new ScriptedModel('triage', [
      Object.assign(new Error('mock 503'), { status: 503 }),
      { output: [msg('Checking.'), fc('call_weather_1', 'weather', { city: 'Paris' }), fc('call_broken_1', 'broken', { x: 1 })], usage: [10, 5] },
      { output: [fc('call_research_1', 'research', { input: 'history of Paris' })], usage: [30, 6] },
      { output: [msg('Paris is sunny; founded long ago.')], usage: [50, 12] },
    ]),
    researcher: new ScriptedModel('researcher', [
      { output: [fc('call_search_1', 'search', { q: 'Paris founding' })], usage: [7, 3] },
      { output: [msg('Founded in the 3rd century BC.')], usage: [15, 8] },
    ]),
  };
  const provider: ModelProvider = { getModel: (name?: string) => models[name ?? 'triage']! };
  const search = tool({ name: 'search', description: 'search', parameters: z.object({ q: z.string() }), execute: async ({ q }) => `${q}: 3rd c. BC` });
  const researcher = new Agent({ name: 'researcher', instructions: 'You research.', model: 'researcher', tools: [search] });
  const triage = new Agent({
    name: 'triage',
    instructions: 'You triage.',
    model: 'triage',
    modelSettings: { retry: { maxRetries: 2, backoff: { initialDelayMs: 5, jitter: false }, policy: () => true } },
    tools: [
      tool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: async ({ city }) => JSON.stringify({ city, sky: 'sunny' }) }),
      tool({ name: 'broken', description: 'fails', parameters: z.object({ x: z.number() }), execute: async (): Promise<string> => { throw new Error('tool exploded'); } }),
      researcher.asTool({ toolName: 'research', toolDescription: 'delegate research' }),
    ],
  });
  const runner = new Runner({ modelProvider: provider, workflowName: 'offline-demo', groupId: 'session-42' });
  return { runner, triage };
}

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe('instrumentOpenAIAgents', () => {
  for (const backend of backends()) {
  for (const tracing of TRACING) {
  it(`records a run with a failing tool, a retried call and an agent-as-tool as one valid trajectory (${backend} backend, ${tracing})`, async () => {
    useTracing(tracing);
    const recorded = recordedPlugin('agents', backend);
    const { runner, triage } = scenario();
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const result = await runner.run(triage, 'What is the weather in Paris, and its history?');
    expect(result.finalOutput).toBe('Paris is sunny; founded long ago.');
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect(atif[0]!.session_id).toBe('session-42');
    checkTrajectory(atif[0]!, {
      userPrompt: 'What is the weather in Paris, and its history?',
      model: 'triage',
      parentTools: [['call_weather_1', false], ['call_broken_1', true]],
      subagentCall: 'call_research_1',
      subagentTools: ['call_search_1'],
      parentUsage: [[10, 5], [30, 6], [50, 12]],
      childUsage: [[7, 3], [15, 8]],
      // The SDK hands the model this text instead of the thrown error.
      failureText: /An error occurred while running the tool/,
    });
    checkRetry(atof);
    const start = recorded.log.find((entry) => entry.hook === 'subagent_start')!;
    expect(start.payload).toMatchObject({ parent_session_id: 'session-42', tool_call_id: 'call_research_1', child_role: 'researcher', child_goal: 'history of Paris' });
    expect(recorded.log.at(-1)!.hook).toBe('on_session_finalize');
    expect(atif[0]!.agent.name).toBe('triage');
    // The model saw the prompt, the tools' results by id, and the sub-agent its own input.
    const requests = hooks(recorded, 'pre_api_request');
    expect(requests[0]!.request.body.messages).toEqual([
      { role: 'system', content: 'You triage.' },
      { role: 'user', content: 'What is the weather in Paris, and its history?' },
    ]);
    const afterTools = requests.find((payload) => payload.request.body.messages.some((message: Record<string, any>) => message.tool_call_id === 'call_broken_1'))!;
    expect(afterTools.request.body.messages.filter((message: Record<string, any>) => message.role === 'tool').map((message: Record<string, any>) => message.tool_call_id)).toEqual(['call_weather_1', 'call_broken_1']);
    expect(requests.find((payload) => payload.model === 'researcher')!.request.body.messages.at(-1)).toEqual({ role: 'user', content: 'history of Paris' });
    expect(tokenTotals(atif[0]!)).toEqual(sdkTotals(result.state.usage));
  });
  }
  }

  it('leaves the models and tools it wraps as the SDK copies them: a spread tool keeps its invoke', async () => {
    useTracing('tracing off');
    const recorded = recordedPlugin('agents-wrapped-shapes');
    const { runner, triage } = scenario();
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const keysBefore = triage.tools.map((t) => Object.keys(t).sort());
    await runner.run(triage, 'What is the weather in Paris, and its history?');
    expect(triage.tools.map((t) => Object.keys(t).sort())).toEqual(keysBefore);
    for (const wrapped of triage.tools) expect(typeof ({ ...wrapped } as { invoke?: unknown }).invoke).toBe('function');
    await recorded.finish();
  });

  it('keeps results untouched and records nothing when no plugin listens', async () => {
    useTracing('tracing on');
    const { runner, triage } = scenario();
    uninstall = instrumentOpenAIAgents(new HookRegistry());
    const result = await runner.run(triage, 'hi');
    expect(result.finalOutput).toBe('Paris is sunny; founded long ago.');
  });

  it('records a handoff as the transfer tool call, and the next agent as its sub-agent', async () => {
    useTracing('tracing off');
    const recorded = recordedPlugin('agents-handoff');
    const billing = new Agent({ name: 'billing', instructions: 'Billing.', model: 'billing', handoffDescription: 'billing questions' });
    const models: Record<string, ScriptedModel> = {
      triage: new ScriptedModel('triage', [{ output: [fc('call_handoff_1', 'transfer_to_billing', {})], usage: [4, 1] }]),
      billing: new ScriptedModel('billing', [{ output: [msg('Your invoice is paid.')], usage: [6, 2] }]),
    };
    const runner = new Runner({ modelProvider: { getModel: (name?: string) => models[name!]! } });
    uninstall = instrumentOpenAIAgents(recorded.hooks, { sessionId: 'handoff-session' });
    const triage = new Agent({ name: 'triage', instructions: 'Triage.', model: 'triage', handoffs: [billing] });
    const result = await runner.run(triage, 'Is my bill paid?');
    expect(result.finalOutput).toBe('Your invoice is paid.');
    const ended = recorded.log.find((entry) => entry.hook === 'post_tool_call')!;
    expect(ended.payload).toMatchObject({ tool_call_id: 'call_handoff_1', tool_name: 'transfer_to_billing', result: '{"assistant":"billing"}', status: 'ok' });
    const models_ = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => [entry.payload.session_id, entry.payload.model]);
    expect(models_).toEqual([['handoff-session', 'triage'], ['handoff-session:sub:call_handoff_1', 'billing']]);
    const { atif } = await recorded.finish();
    expect(atif).toHaveLength(1);
    const agentModels = (doc: Record<string, any>) => (doc.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent' && step.model_name !== undefined).map((step) => step.model_name);
    expect(agentModels(atif[0]!)).toEqual(['triage']);
    const children = atif[0]!.subagent_trajectories as Array<Record<string, any>>;
    expect(children.map((child) => [child.session_id, child.agent.name])).toEqual([['handoff-session:sub:call_handoff_1', 'billing']]);
    expect(agentModels(children[0]!)).toEqual(['billing']);
  });

  it('records each attempt once when the custom model opens its own generation spans, behind a slower processor', async () => {
    useTracing('tracing on');
    // A processor added before ours whose callbacks take a turn of the event loop.
    addTraceProcessor({
      onTraceStart: async () => {},
      onTraceEnd: async () => {},
      onSpanStart: async () => {},
      onSpanEnd: async () => {},
      shutdown: async () => {},
      forceFlush: async () => {},
    });
    const recorded = recordedPlugin('agents-genspans');
    let n = 0;
    const model: Model = {
      getResponse: (request: ModelRequest) =>
        withGenerationSpan(async (span) => {
          n += 1;
          if (n === 1) throw Object.assign(new Error('mock 503'), { status: 503 });
          const output = [msg('done')] as ModelResponse['output'];
          span.spanData.output = output as never;
          span.spanData.usage = { input_tokens: 9, output_tokens: 2 };
          return { output, usage: new Usage({ requests: 1, inputTokens: 9, outputTokens: 2, totalTokens: 11 }), responseId: 'r' };
        }, { data: { model: 'gen-model', input: request.input as never } }),
      async *getStreamedResponse() {
        throw new Error('not used');
      },
    };
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const runner = new Runner({ modelProvider: { getModel: () => model } });
    const agent = new Agent({ name: 'solo', instructions: 'Answer.', model: 'gen-model', modelSettings: { retry: { maxRetries: 1, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } } });
    expect((await runner.run(agent, 'go')).finalOutput).toBe('done');
    const attempts = recorded.log.filter((entry) => ['pre_api_request', 'api_request_error', 'post_api_request'].includes(entry.hook));
    expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count ?? null])).toEqual([
      ['pre_api_request', 0],
      ['api_request_error', 0],
      ['pre_api_request', 1],
      ['post_api_request', null],
    ]);
    expect(new Set(attempts.map((entry) => entry.payload.api_request_id)).size).toBe(1);
    const { atif, atof } = await recorded.finish();
    checkRetry(atof);
    const last = (atif[0]!.steps as Array<Record<string, any>>).at(-1)!;
    expect(last.metrics).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    setTraceProcessors([]);
  });

  it('never breaks the run when the adapter itself fails', async () => {
    useTracing('tracing on');
    const recorded = recordedPlugin('agents-broken');
    const { runner, triage } = scenario();
    uninstall = instrumentOpenAIAgents(recorded.hooks, {
      sessionId: () => {
        throw new Error('a broken session function');
      },
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const result = await runner.run(triage, 'hi');
    expect(result.finalOutput).toBe('Paris is sunny; founded long ago.');
    await recorded.finish();
  });

  it('records a streamed run: the response_done event ends the attempt', async () => {
    useTracing('tracing off');
    const recorded = recordedPlugin('agents-stream');
    const streamed: Model = {
      async getResponse() {
        throw new Error('not used');
      },
      async *getStreamedResponse() {
        yield { type: 'output_text_delta', delta: 'Hel' } as never;
        yield {
          type: 'response_done',
          response: { id: 'stream-resp', usage: { requests: 1, inputTokens: 8, outputTokens: 3, totalTokens: 11, inputTokensDetails: { cached_tokens: 5 } }, output: [msg('Hello.')] },
        } as never;
      },
    };
    const runner = new Runner({ modelProvider: { getModel: () => streamed } });
    uninstall = instrumentOpenAIAgents(recorded.hooks, { sessionId: 'stream' });
    const result = await runner.run(new Agent({ name: 'streamer', instructions: 'Hi.', model: 'stream-model' }), 'hi', { stream: true });
    for await (const _event of result) {
      // drain
    }
    await result.completed;
    expect(result.finalOutput).toBe('Hello.');
    const { atif } = await recorded.finish();
    const last = (atif[0]!.steps as Array<Record<string, any>>).at(-1)!;
    expect(last).toMatchObject({ message: 'Hello.', model_name: 'stream-model', metrics: { prompt_tokens: 8, completion_tokens: 3, cached_tokens: 5 } });
  });
});
