// The weather program on Amazon Bedrock, as each framework's users write it (the AI SDK's @ai-sdk/amazon-bedrock,
// LangChain's ChatBedrockConverse), against the loopback Converse API of bedrock-wire.ts. What every trajectory must
// say of it, whatever the framework: what Bedrock sent and the program saw.
import { expect } from 'vitest';
import { promptTokens, REGION, weatherTurns, ACCESS_DENIED, GUARDRAIL_TURN, THROTTLED, type SeenConverse } from './bedrock-wire.ts';
import { expectRetriedFirstCall, expectTurnEndInAtif, finishedRun, viewLines, type AtifDoc, type Recorded } from './support.ts';

/** A cross-region inference profile id, what a program names to reach Claude on Bedrock outside one region. */
export const INFERENCE_PROFILE = 'us.anthropic.claude-3-5-sonnet-20241022-v2:0';
export const PROMPT = 'What is the weather in Paris?';

/** What the framework reported of each model call. */
export interface BedrockReport {
  /** The model each step's response names, where the framework reports one. */
  readonly models?: readonly string[];
  /** [prompt, completion] tokens. */
  readonly tokens: ReadonlyArray<readonly [number | undefined, number | undefined]>;
  readonly cacheReads: readonly number[];
  readonly cacheWrites: readonly number[];
  /** Why each call stopped, as the framework spells it. */
  readonly finishReasons?: readonly unknown[];
}

/** Each request was SigV4-signed for Bedrock in the program's region, with the environment's access key. */
function expectSigned(seen: readonly SeenConverse[]): void {
  for (const request of seen) expect(request.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/\\d{8}/${REGION}/bedrock/aws4_request, `));
}

/**
 * The trajectory of the weather program against Bedrock's answers and the framework's report: one LLM call per
 * Converse request, the inference profile as the model asked and answered (Converse names no other), tokens with
 * Bedrock's cache reads and writes counted once in the prompt, reasoning, the tool call under Bedrock's `toolUseId`
 * and its result, and why each call stopped.
 */
export async function checkBedrockRun(recorded: Recorded, seen: readonly SeenConverse[], report: BedrockReport, options: { tool: string; stream: boolean; provider: string; sessionModel?: boolean }): Promise<AtifDoc> {
  const [first, second] = weatherTurns(options.tool);
  expect(seen.map((request) => [request.modelId, request.stream])).toEqual([
    [INFERENCE_PROFILE, options.stream],
    [INFERENCE_PROFILE, options.stream],
  ]);
  expectSigned(seen);
  // The second request carries the tool's result under Bedrock's id.
  expect(JSON.stringify(seen[1]!.body.messages)).toContain(first.toolUses![0]!.id);

  // The framework counts Bedrock's tokens once: `inputTokens` plus the cache reads and writes it counts apart.
  const expectedTokens = [
    [promptTokens(first), first.usage.output],
    [promptTokens(second), second.usage.output],
  ];
  expect(report.tokens).toEqual(expectedTokens);
  expect([report.cacheReads, report.cacheWrites]).toEqual([
    [0, 900],
    [900, 0],
  ]);
  if (report.models !== undefined) expect(report.models).toEqual([INFERENCE_PROFILE, INFERENCE_PROFILE]);

  const { doc, atof } = await finishedRun(recorded);
  const steps = doc.steps as AtifDoc[];
  expect(steps[0]).toMatchObject({ source: 'user', message: PROMPT });
  const answered = steps.filter((step) => step.source === 'agent');
  expect(answered.map((step) => step.message)).toEqual([first.text, second.text]);
  expect(answered[0]!.reasoning_content).toBe(first.reasoning!.text);
  expect(answered[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: first.toolUses![0]!.id, function_name: options.tool, arguments: { city: 'Paris' } })]);
  expect(JSON.stringify(answered[0]!.observation.results[0].content)).toContain('sunny');

  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests.map((entry) => [entry.payload.provider, entry.payload.model])).toEqual([
    [options.provider, INFERENCE_PROFILE],
    [options.provider, INFERENCE_PROFILE],
  ]);
  if (options.sessionModel !== false) expect(recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload).toMatchObject({ model: INFERENCE_PROFILE });
  expect(answered.map((step) => step.model_name)).toEqual([INFERENCE_PROFILE, INFERENCE_PROFILE]);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);

  // Tokens: as the framework reported them, call by call and in total; the cache's part of the prompt once.
  expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(expectedTokens);
  expect(answered.map((step) => step.metrics.cached_tokens ?? 0)).toEqual([900, 900]);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: promptTokens(first) + promptTokens(second), total_completion_tokens: first.usage.output + second.usage.output });
  // The ATOF LLM spans name the profile asked, and `view` of either file the model and the run's tokens.
  const llmStarts = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'start');
  expect(llmStarts.map((event) => event.category_profile?.model_name)).toEqual([INFERENCE_PROFILE, INFERENCE_PROFILE]);
  for (const of of ['atif', 'atof'] as const) expect((await viewLines(recorded, of)).join('\n'), of).toContain(INFERENCE_PROFILE);
  return doc;
}

/**
 * A call Bedrock throttled (429, `ThrottlingException`) and then answered. `sdkRetried`: the framework's own retry
 * loop made the second attempt, which the trajectory records as a retry of the same call; otherwise the AWS SDK
 * retried inside one call, where no framework callback sees the refused attempt.
 */
export async function checkThrottledRetry(recorded: Recorded, options: { status: number; sdkRetried: boolean }): Promise<AtifDoc> {
  const [, answer] = weatherTurns('weather');
  if (options.sdkRetried) {
    const attempts = expectRetriedFirstCall(recorded.log, true);
    expect(attempts[1]!.payload).toMatchObject({ status_code: options.status });
    expect(JSON.stringify(attempts[1]!.payload)).toContain('Too many requests');
  }
  const { doc, agent } = await finishedRun(recorded);
  const answeredStep = [answer.text, promptTokens(answer), answer.usage.output, 'completed'];
  const row = (step: AtifDoc) => [step.message, step.metrics?.prompt_tokens, step.metrics?.completion_tokens, step.extra.invocation.status];
  // The refused attempt is a failed step of its own, with Bedrock's message and no tokens, before the answer.
  if (options.sdkRetried) expect(agent.map(row)).toEqual([[expect.stringContaining(THROTTLED.message), undefined, undefined, 'failed'], answeredStep]);
  else expect(agent.map(row)).toEqual([answeredStep]);
  return doc;
}

/** A guardrail that intervened: the call answered the guardrail's message, stopped for `content_filter`, with no tokens. */
export async function checkGuardrail(recorded: Recorded): Promise<AtifDoc> {
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['content_filter']);
  const { doc, agent } = await finishedRun(recorded);
  expect(agent.map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[GUARDRAIL_TURN.text, 0, 0]]);
  return doc;
}

/**
 * A request Bedrock refused for good (403, `AccessDeniedException`: the account may not use the model), tried once:
 * the call failed with Bedrock's status and message, and the turn ended `failed` with the error the program caught.
 */
export async function checkRefused(recorded: Recorded, caught: { name: string; message: string }): Promise<void> {
  expect(caught.message).toContain(ACCESS_DENIED.message);
  const errors = recorded.log.filter((entry) => entry.hook === 'api_request_error');
  expect(errors.map((entry) => [entry.payload.status_code, entry.payload.retry_count])).toEqual([[ACCESS_DENIED.status, 0]]);
  expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(1);
  const { atif } = await recorded.finish();
  expect(atif).toHaveLength(1);
  await expectTurnEndInAtif(recorded, atif[0]!, { status: 'failed', error: caught });
}
