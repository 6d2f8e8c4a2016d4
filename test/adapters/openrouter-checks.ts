// The weather program through OpenRouter, as each framework's users write it (the AI SDK's
// @openrouter/ai-sdk-provider, the Agents SDK and LangChain on an OpenAI client pointed at OpenRouter), against a
// loopback server speaking OpenRouter's Chat Completions (test/adapters/ai-sdk/wire.ts, `server: 'openrouter'`). What every
// trajectory must say of it, whatever the framework: what OpenRouter sent and the program saw.
import { expect } from 'vitest';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { finishedRun, viewLines, type AtifDoc, type Recorded } from './support.ts';
import { detailOf } from '../../src/cli/view/detail.ts';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';

/** The model the program asks OpenRouter for, and the one OpenRouter says answered. */
export const ASKED = 'anthropic/claude-sonnet-4.5';
export const ANSWERED = 'anthropic/claude-4.5-sonnet-20250929';
export const PROMPT = 'What is the weather in Paris?';
export const REASONING = 'The user wants Paris weather; call the tool.';

/**
 * The program's two answers, as Anthropic's model gave them through OpenRouter: the first, served by Anthropic, writes
 * the prompt cache and calls the tool (`tool`, as the framework's docs name it) after reasoning, the second, served by
 * Amazon Bedrock, reads the cache. `cost`: what OpenRouter charged for each.
 */
export function openrouterTurns(tool = 'weather'): [Turn, Turn] {
  return [
    {
      server: 'openrouter',
      id: 'gen-1764000000-AAAAAAAAAAAAAAAAAAAA',
      provider: 'Anthropic',
      model: ANSWERED,
      reasoning: REASONING,
      text: 'Let me look that up.',
      toolCalls: [{ id: 'toolu_weather_1', name: tool, args: { city: 'Paris' } }],
      usage: { input: 1000, cacheWrite: 900, output: 52, reasoning: 12 },
      cost: 0.006405,
    },
    // OpenRouter routed the second request to another upstream serving the same model.
    { server: 'openrouter', id: 'gen-1764000001-BBBBBBBBBBBBBBBBBBBB', provider: 'Amazon Bedrock', model: ANSWERED, text: 'It is sunny in Paris, 21°C.', usage: { input: 1410, cached: 1310, output: 15 }, cost: 0.000918 },
  ];
}

/** OpenRouter on a loopback server: `url` is the base URL the program's client is given (OpenRouter's `/api/v1`). */
export interface LoopbackOpenRouter {
  readonly url: string;
  /** The next two requests get the weather program's answers, as JSON or streamed; returns what sees the requests. */
  serve(stream: boolean, tool?: string): FakeProvider;
  close(): Promise<void>;
}

export async function loopbackOpenRouter(): Promise<LoopbackOpenRouter> {
  let api = new FakeProvider();
  const server = await loopbackApi((url, init) => api.fetch(url, init));
  return {
    url: `${server.url}/api/v1`,
    serve(stream, tool) {
      const [first, second] = openrouterTurns(tool);
      api = new FakeProvider();
      return api.reply('chat', first, { stream }).reply('chat', second, { stream });
    },
    close: () => server.close(),
  };
}

/** What the framework reported of the run, for the checks against it. */
export interface FrameworkReport {
  /** The model each step's response names, as the framework reports it (where it reports one). */
  readonly models?: readonly string[];
  /** Each call's tokens as the framework reports them: [prompt, completion]. */
  readonly tokens: ReadonlyArray<readonly [number | undefined, number | undefined]>;
  /** Each call's cached tokens as the framework reports them: cache reads and writes. */
  readonly cached: readonly number[];
  /** Each call's reasoning tokens as the framework reports them. */
  readonly reasoningTokens: ReadonlyArray<number | undefined>;
  /** The provider the framework names for each request. */
  readonly provider: string;
  /**
   * The upstream OpenRouter says served each call (its `provider`), as the program can read it from the framework;
   * undefined where the framework drops it.
   */
  readonly servedBy: ReadonlyArray<string | undefined>;
}

/**
 * The trajectory of the weather program against OpenRouter's wire and the framework's report: the steps, one LLM call
 * per request, the models asked and answered, tokens, reasoning, tool calls and results, and the cost OpenRouter
 * charged (`usage.cost`) as each step's `cost_usd`, summed in the final metrics and shown by `view` of either file.
 */
export async function checkOpenRouterRun(recorded: Recorded, api: FakeProvider, report: FrameworkReport, options: { tool?: string; reasoning?: boolean; sessionModel?: boolean; answeredModel?: string } = {}): Promise<AtifDoc> {
  const [first, second] = openrouterTurns();
  const { doc } = await finishedRun(recorded);
  const steps = doc.steps as AtifDoc[];
  expect(steps[0]).toMatchObject({ source: 'user', message: PROMPT });
  const answered = steps.filter((step) => step.source === 'agent');
  expect(answered.map((step) => step.message)).toEqual([first.text, second.text]);
  if (options.reasoning !== false) expect(answered[0]!.reasoning_content).toBe(REASONING);
  expect(answered[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'toolu_weather_1', function_name: options.tool ?? 'weather', arguments: { city: 'Paris' } })]);
  expect(JSON.stringify(answered[0]!.observation.results[0].content)).toContain('sunny');

  // One LLM call per request OpenRouter got, each to its chat-completions endpoint for the model asked.
  expect(api.requests.map((request) => [new URL(request.url).pathname, request.body.model])).toEqual([
    ['/api/v1/chat/completions', ASKED],
    ['/api/v1/chat/completions', ASKED],
  ]);
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests).toHaveLength(2);
  expect(requests.map((entry) => entry.payload.provider)).toEqual([report.provider, report.provider]);
  if (options.sessionModel !== false) expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload).toMatchObject({ model: ASKED });

  // The models: each step's is the one OpenRouter says answered, as the framework reports it (`answeredModel`: the
  // model a framework that drops it names instead, the one asked).
  if (report.models !== undefined) expect(report.models).toEqual([ANSWERED, ANSWERED]);
  const model = options.answeredModel ?? ANSWERED;
  expect(answered.map((step) => step.model_name)).toEqual([model, model]);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);

  // Tokens: what OpenRouter sent and the framework reported, call by call and in total.
  expect(report.tokens).toEqual([
    [first.usage.input, first.usage.output],
    [second.usage.input, second.usage.output],
  ]);
  expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(report.tokens);
  // The cache and reasoning counts are the framework's (each test holds them to the wire, or says what it drops).
  expect(answered.map((step) => step.metrics.cached_tokens ?? 0)).toEqual(report.cached);
  expect(answered.map((step) => step.metrics.extra?.completion_tokens_details?.reasoning_tokens)).toEqual(report.reasoningTokens);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: first.usage.input + second.usage.input, total_completion_tokens: first.usage.output + second.usage.output });

  // The cost: what OpenRouter charged for each call (`usage.cost`), not a price book's estimate.
  expect(answered.map((step) => step.metrics.cost_usd)).toEqual([first.cost, second.cost]);
  expect(doc.final_metrics.total_cost_usd).toBeCloseTo(first.cost! + second.cost!, 12);

  // The upstream that served each call: OpenRouter's `provider`, where the framework lets the program read it, in the
  // LLM call's end (the ATIF step's `extra.llm_response`); the request's provider stays the one the program called.
  if (report.servedBy.some((name) => name !== undefined)) expect(report.servedBy).toEqual([first.provider, second.provider]);
  expect(answered.map((step) => step.extra?.llm_response?.served_by)).toEqual(report.servedBy);
  const { atof } = await finishedRun(recorded);
  const ends = atof.filter((event) => event.category === 'llm' && event.scope_category === 'end');
  expect(ends.map((event) => event.data?.served_by)).toEqual(report.servedBy);
  expect(ends.map((event) => event.metadata?.provider)).toEqual([report.provider, report.provider]);
  for (const of of ['atif', 'atof'] as const) {
    const view = (await viewLines(recorded, of)).join('\n');
    expect(view, of).toContain('$0.0073');
    // view names the upstream beside each call it is known for.
    for (const name of report.servedBy) if (name !== undefined) expect(view, of).toContain(`(served by ${name})`);
    if (report.servedBy.every((name) => name === undefined)) expect(view, of).not.toContain('served by');
  }
  // The HTML view's detail of each LLM call lists it among the step's facts.
  const llms: ViewNode[] = [];
  const walk = (at: ViewNode): void => {
    if (at.kind === 'llm') llms.push(at);
    at.children.forEach(walk);
  };
  walk(treeFromAtif(doc));
  const facts = llms.map((llm) => detailOf(llm).sections.find((section) => section.title === 'Step') as { facts: Array<[string, string]> });
  expect(facts.map((section) => section.facts.find(([key]) => key === 'served_by')?.[1])).toEqual(report.servedBy);
  return doc;
}
