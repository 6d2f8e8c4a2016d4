// The weather program through Azure OpenAI, as each framework's users write it (the AI SDK's @ai-sdk/azure,
// LangChain's AzureChatOpenAI, the Agents SDK on the `openai` package's AzureOpenAI client), against a fake fetch
// speaking Azure's wire (test/adapters/ai-sdk/wire.ts, `server: 'azure'`): the deployment in the URL or named as the
// model, the underlying model in the answer, the content filter's verdicts beside the choices, a stream that opens
// with a chunk of no choices, an answer the filter cut (`finish_reason: 'content_filter'`) and a prompt it refused
// (a 400 with `code: 'content_filter'`). What every trajectory must say of it, whatever the framework.
import { expect } from 'vitest';
import { FakeProvider, type Turn, type Wire } from './ai-sdk/wire.ts';
import { finishedRun, viewLines, type AtifDoc, type AtofEvent, type Recorded } from './support.ts';

/** The Azure resource, the deployment the program names, and the model Azure says answered. */
export const RESOURCE = 'contoso-openai';
export const DEPLOYMENT = 'weather-gpt4o';
export const ANSWERED = 'gpt-4o-2024-11-20';
export const API_VERSION = '2024-10-21';
export const PROMPT = 'What is the weather in Paris?';
export const FILTERED_TEXT = 'Here is how the storm';

/**
 * The program's two answers, as Azure gave them: the first calls the tool (`tool`, as the framework's docs name it),
 * the second reads 1024 tokens from the prompt cache. `wire`: Chat Completions (with Azure's filter verdicts) or the
 * Responses API (`/openai/v1/responses`, OpenAI's shape).
 */
export function azureTurns(tool = 'weather', wire: 'chat' | 'responses' = 'chat'): [Turn, Turn] {
  const server = wire === 'chat' ? ({ server: 'azure' } as const) : {};
  const ids = wire === 'chat' ? ['chatcmpl-AzureWeather1', 'chatcmpl-AzureWeather2'] : ['resp_azure_weather_1', 'resp_azure_weather_2'];
  return [
    { ...server, id: ids[0]!, model: ANSWERED, toolCalls: [{ id: 'call_weather_1', name: tool, args: { city: 'Paris' } }], usage: { input: 320, output: 18 } },
    { ...server, id: ids[1]!, model: ANSWERED, text: 'It is sunny in Paris, 21°C.', usage: { input: 1410, cached: 1024, output: 15 } },
  ];
}

/** An answer Azure's filter cut after a few words: `finish_reason: 'content_filter'`, the violence category filtered. */
export function filteredTurn(wire: 'chat' | 'responses' = 'chat'): Turn {
  return { ...(wire === 'chat' ? { server: 'azure' as const } : {}), id: 'chatcmpl-AzureFiltered', model: ANSWERED, text: FILTERED_TEXT, finish: 'content_filter', usage: { input: 40, output: 5 } };
}

/** Azure's wire, answering the weather program's two requests, JSON or streamed. */
export function serveWeather(stream: boolean, tool?: string, wire: Wire & ('chat' | 'responses') = 'chat'): FakeProvider {
  const [first, second] = azureTurns(tool, wire);
  return new FakeProvider().reply(wire, first, { stream }).reply(wire, second, { stream });
}

/** What the framework reported of the run, for the checks against it. */
export interface FrameworkReport {
  /** The model each step's response names, as the framework reports it (where it reports one). */
  readonly models?: readonly string[];
  /** Each call's tokens as the framework reports them: [prompt, completion]. */
  readonly tokens: ReadonlyArray<readonly [number | undefined, number | undefined]>;
  /** Each call's cached tokens as the framework reports them. */
  readonly cached: readonly number[];
  /** The provider the framework names for each request. */
  readonly provider: string;
}

/** The ATOF LLM spans' starts and ends, in order: what each names as the model. */
function llmSpans(atof: AtofEvent[], phase: 'start' | 'end'): AtofEvent[] {
  return atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === phase);
}

/** `view`'s lines of LLM calls. */
function llmLines(lines: readonly string[]): string[] {
  return lines.filter((line) => /─ LLM /.test(line));
}

/**
 * The trajectory of the weather program against Azure's wire and the framework's report: one user step, two agent
 * steps (no third from the stream's opening chunk of no choices), one LLM call per request, each to the URL the
 * deployment is reached at; the model the program asked (the deployment) on the request and the session, the one
 * Azure says answered on each step; tokens and cache reads as Azure sent them; the finish reasons.
 */
export async function checkAzureRun(
  recorded: Recorded,
  api: FakeProvider,
  report: FrameworkReport,
  expected: { urls: readonly string[]; tool?: string; sessionModel?: boolean; asked?: string | undefined },
): Promise<AtifDoc> {
  // `asked`: what the requests say they asked for, when the framework does not show the deployment (undefined: nothing).
  const asked = 'asked' in expected ? expected.asked : DEPLOYMENT;
  const [first, second] = azureTurns();
  const { doc, agent, atof } = await finishedRun(recorded);
  const steps = doc.steps as AtifDoc[];
  expect(steps[0]).toMatchObject({ source: 'user', message: PROMPT });
  expect(agent.map((step) => step.message)).toEqual([expect.anything(), second.text]);
  expect(agent[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'call_weather_1', function_name: expected.tool ?? 'weather', arguments: { city: 'Paris' } })]);
  expect(JSON.stringify(agent[0]!.observation.results[0].content)).toContain('sunny');

  // One LLM call per request Azure got, each to the deployment's URL.
  expect(api.requests.map((request) => request.url)).toEqual(expected.urls);
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests).toHaveLength(2);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request')).toHaveLength(2);
  expect(requests.map((entry) => entry.payload.provider)).toEqual([report.provider, report.provider]);

  // The models: the request's is the deployment the program asked for, each step's the model Azure says answered.
  expect(requests.map((entry) => entry.payload.model)).toEqual([asked, asked]);
  if (expected.sessionModel !== false) expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload).toMatchObject({ model: asked });
  if (report.models !== undefined) expect(report.models).toEqual([ANSWERED, ANSWERED]);
  expect(agent.map((step) => step.model_name)).toEqual([ANSWERED, ANSWERED]);
  expect(llmSpans(atof, 'start').map((event) => event.category_profile?.model_name)).toEqual([asked, asked]);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);

  // Tokens: what Azure sent and the framework reported, call by call and in total, the cache reads with them.
  expect(report.tokens).toEqual([
    [first.usage.input, first.usage.output],
    [second.usage.input, second.usage.output],
  ]);
  expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(report.tokens);
  expect(report.cached).toEqual([0, 1024]);
  expect(agent.map((step) => step.metrics.cached_tokens ?? 0)).toEqual(report.cached);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: first.usage.input + second.usage.input, total_completion_tokens: first.usage.output + second.usage.output });
  // ATOF keeps both: each LLM span's start names the deployment, its end the response with the model that answered.
  expect(llmSpans(atof, 'end').map((event) => event.data?.model)).toEqual([ANSWERED, ANSWERED]);
  // `view` of either file names the model that answered each call, and the one its request asked for (what `asked` is).
  const shownModel = asked === undefined ? ANSWERED : `${ANSWERED} (asked ${asked})`;
  const models = async (of: 'atif' | 'atof') => llmLines(await viewLines(recorded, of)).map((line) => line.replace(/^.*─ LLM /, '').replace(/^\S+ (?=gpt)/, '').split('  ')[0]);
  expect(await models('atif')).toEqual([shownModel, shownModel]);
  expect(await models('atof')).toEqual([shownModel, shownModel]);
  return doc;
}

/**
 * An answer Azure's filter cut: one call to the deployment that ended `content_filter` (not `stop`) on the hook, the
 * trajectory's step and the ATOF span's end, its few words the step's message, its counts.
 */
export async function checkFilteredAnswer(recorded: Recorded): Promise<void> {
  const turn = filteredTurn();
  const { agent, atof } = await finishedRun(recorded);
  expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.model)).toEqual([DEPLOYMENT]);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['content_filter']);
  expect(agent.map((step) => [step.message, step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens, step.extra.llm_response.finish_reason])).toEqual([
    [FILTERED_TEXT, ANSWERED, turn.usage.input, turn.usage.output, 'content_filter'],
  ]);
  expect(llmSpans(atof, 'end').map((event) => event.data?.finish_reason)).toEqual(['content_filter']);
}

/**
 * A prompt Azure's filter refused: one failed call and no response, with the 400 and Azure's error as the framework
 * threw it; the trajectory's one agent step is that failed call, and the turn failed with it.
 */
export async function checkRefusedPrompt(recorded: Recorded, thrown: Error): Promise<void> {
  const { agent, atof } = await finishedRun(recorded);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request')).toEqual([]);
  const failed = recorded.log.filter((entry) => entry.hook === 'api_request_error').map((entry) => entry.payload);
  expect(failed.map((payload) => payload.status_code)).toEqual([400]);
  expect((failed[0]!.error as { message?: string }).message).toBe(thrown.message);
  expect(thrown.message).toContain("Azure OpenAI's content management policy");
  expect(agent.map((step) => [step.extra.invocation.status, step.extra.llm_response.error.message, step.metrics])).toEqual([['failed', thrown.message, undefined]]);
  expect(llmSpans(atof, 'end').map((event) => event.metadata['otel.status_code'])).toEqual(['ERROR']);
}
