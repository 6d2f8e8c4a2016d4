// experimental_decide and experimental_extract on the providers users run besides OpenAI, as their packages implement
// them: @ai-sdk/anthropic's decisionModel and extractionModel adapt a Messages model (one call with
// `output_config.format`; an extraction of more than 16 fields is sent as several calls, `maxFieldsPerCall: 16`), and
// @ai-sdk/google's decisionModel calls Google's Decisions API (POST /v1beta/decisions) while its extractionModel
// adapts generateContent. Each is run against a fake fetch speaking that provider's wire; the trajectory must show
// the tokens the provider billed, the answers the program got, and what the SDK does not tell.
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { experimental_decide, experimental_extract, stepCountIs, streamText, tool, ToolLoopAgent } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { anthropicError, anthropicMessage, anthropicStream, concurrentFetch, geminiResponse, scriptedFetch, type AnthropicUsage, type WireReply } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const CLAUDE = 'claude-sonnet-4-5-20250929';

// The docs' triage questions (03-ai-sdk-core/32-decisions.mdx).
const QUESTIONS = {
  department: { type: 'choice', instructions: 'Which team should handle this?', criteria: { billing: 'Payments and refunds', support: 'Other requests' } },
  severity: { type: 'score', instructions: 'How severe is the issue?', criteria: ['Cosmetic', 'Workaround exists', 'Blocking; no workaround'] },
  requestsRefund: { type: 'boolean', instructions: 'Is the customer requesting money back?' },
} as const;

/** A Messages answer whose text is the JSON the adapted model asked for (`output_config.format`). */
function claudeJson(id: string, value: unknown, usage: AnthropicUsage, stopReason?: string): WireReply {
  return anthropicMessage({ id, model: CLAUDE, content: [{ type: 'text', text: JSON.stringify(value) }], usage, ...(stopReason === undefined ? {} : { stopReason }) });
}

/** The agent steps' model and counts, as the trajectory writes them. */
function callsOf(doc: AtifDoc): Array<{ model: unknown; prompt: unknown; completion: unknown; cached: unknown; reasoning: unknown }> {
  return (doc.steps as AtifDoc[])
    .filter((step) => step.source === 'agent')
    .map((step) => ({ model: step.model_name, prompt: step.metrics?.prompt_tokens, completion: step.metrics?.completion_tokens, cached: step.metrics?.cached_tokens, reasoning: step.metrics?.extra?.completion_tokens_details?.reasoning_tokens }));
}

function responseUsage(recorded: ReturnType<typeof recordedPlugin>): unknown[] {
  return recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.usage);
}

describe('@ai-sdk/anthropic decisionModel', () => {
  it('is one Messages call: the tokens Anthropic billed, cache reads and writes included, and the answers', async () => {
    const wire = scriptedFetch([claudeJson('msg_d', { q0: 'c0', q1: 1.2, q2: 0.97 }, { input_tokens: 40, output_tokens: 20, cache_read_input_tokens: 300, cache_creation_input_tokens: 50 })]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-anthropic');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_decide({ model: anthropic.decisionModel('claude-sonnet-4-5'), state: { message: 'I was charged twice.' }, questions: QUESTIONS });

    expect(wire.requests.map((request) => request.url)).toEqual(['https://api.anthropic.com/v1/messages']);
    expect(wire.requests[0]!.body.output_config.format.type).toBe('json_schema');
    expect(result.answers).toEqual({ department: { type: 'choice', choice: 'billing' }, severity: { type: 'score', score: 1.2 }, requestsRefund: { type: 'boolean', probability: 0.97 } });
    // The SDK's input counts the cache as Anthropic bills it: 40 + 300 read + 50 written.
    expect(result.usage).toEqual({ inputTokens: 390, outputTokens: 20, totalTokens: 410 });
    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(JSON.parse(agent[0]!.message as string)).toEqual(result.answers);
    expect(callsOf(doc)).toEqual([{ model: CLAUDE, prompt: 390, completion: 20, cached: 350, reasoning: undefined }]);
    // Recorded as Anthropic sent it: the input without the cache, the reads and writes apart.
    expect(responseUsage(recorded)).toEqual([expect.objectContaining({ input_tokens: 40, cache_read_input_tokens: 300, cache_creation_input_tokens: 50, output_tokens: 20 })]);
    await sameOnNative(recorded);
  });

  it('a refusal (`stop_reason: refusal`) fails the turn, and the call Anthropic billed keeps its tokens', async () => {
    const wire = scriptedFetch([anthropicMessage({ id: 'msg_refused', model: CLAUDE, content: [], usage: { input_tokens: 120, output_tokens: 3, cache_read_input_tokens: 64 }, stopReason: 'refusal' })]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-anthropic-refused');
    uninstall = instrumentAiSdk(recorded.hooks);

    type Refused = Error & { data: { usage: { inputTokens: { total: number }; outputTokens: { total: number } } } };
    const error = await experimental_decide({ model: anthropic.decisionModel('claude-sonnet-4-5'), state: 'Tell me a joke.', questions: QUESTIONS }).then(
      () => undefined,
      (caught: unknown) => caught as Refused,
    );
    if (error === undefined) throw new Error('the refused decision resolved');

    // Thrown by @ai-sdk/provider-utils' DecisionLanguageModel (not a retryable error: one request), with the
    // language model's result as its data.
    expect(error.name).toBe('AI_InvalidResponseDataError');
    expect(error.message).toBe('Decision did not complete: content-filter.');
    expect(wire.requests).toHaveLength(1);
    const { doc } = await finishedRun(recorded);
    expect(callsOf(doc)).toEqual([{ model: CLAUDE, prompt: error.data.usage.inputTokens.total, completion: error.data.usage.outputTokens.total, cached: 64, reasoning: undefined }]);
    expect(recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload).toMatchObject({ finish_reason: 'content_filter', response: { id: 'msg_refused' } });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'AI_InvalidResponseDataError' });
    await sameOnNative(recorded);
  });

  it('a 500 the SDK retries (maxRetries) is one call: the answer\'s tokens; the failed attempt is not told', async () => {
    const failed = anthropicError(500, 'api_error', 'Internal server error');
    const wire = scriptedFetch([{ ...failed, headers: { 'retry-after-ms': '0' } }, claudeJson('msg_d2', { q0: 'c1', q1: 0.4, q2: 0.1 }, { input_tokens: 210, output_tokens: 15 })]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-anthropic-retry');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_decide({ model: anthropic.decisionModel('claude-sonnet-4-5'), state: 'The logo is a bit blurry.', questions: QUESTIONS, maxRetries: 1 });

    expect(wire.requests).toHaveLength(2);
    expect(result.answers.department.choice).toBe('support');
    const { doc } = await finishedRun(recorded);
    expect(callsOf(doc)).toEqual([{ model: CLAUDE, prompt: result.usage.inputTokens, completion: result.usage.outputTokens, cached: 0, reasoning: undefined }]);
    // The SDK retries inside doDecide and tells telemetry of the call once (ai's decide: `retry(() => model.doDecide(...))`
    // between one ModelCallStart and one ModelCallEnd): no error is recorded for the 500, which Anthropic did not bill.
    expect(recorded.log.filter((entry) => entry.hook === 'api_request_error')).toEqual([]);
    expect(recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload.retry_count).toBe(0);
    await sameOnNative(recorded);
  });

  it('inside a ToolLoopAgent tool is that call\'s sub-agent; the agent\'s totals are its own calls\'', async () => {
    const wire = scriptedFetch([
      anthropicMessage({ id: 'msg_1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_route', name: 'route', input: { message: 'I was charged twice.' } }], usage: { input_tokens: 60, output_tokens: 12, cache_read_input_tokens: 10 } }),
      claudeJson('msg_d', { q0: 'c0', q1: 1, q2: 0.99 }, { input_tokens: 100, output_tokens: 5, cache_creation_input_tokens: 30 }),
      anthropicMessage({ id: 'msg_2', model: CLAUDE, content: [{ type: 'text', text: 'Sent to billing.' }], usage: { input_tokens: 90, output_tokens: 3 } }),
    ]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-agent');
    uninstall = instrumentAiSdk(recorded.hooks);
    let decided: Awaited<ReturnType<typeof experimental_decide<typeof QUESTIONS>>> | undefined;
    const agent = new ToolLoopAgent({
      model: anthropic('claude-sonnet-4-5'),
      stopWhen: stepCountIs(3),
      tools: {
        route: tool({
          description: 'Route a support ticket',
          inputSchema: z.object({ message: z.string() }),
          execute: async ({ message }) => {
            decided = await experimental_decide({ model: anthropic.decisionModel('claude-sonnet-4-5'), state: { message }, questions: QUESTIONS });
            return decided.answers.department.choice;
          },
        }),
      },
    });

    const result = await agent.generate({ prompt: 'Route this ticket: I was charged twice.' });

    expect(result.text).toBe('Sent to billing.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const parent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(parent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    // The agent's totals are what its own calls billed (the SDK's totalUsage); the decision's are its sub-agent's.
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: result.totalUsage.inputTokens, total_completion_tokens: result.totalUsage.outputTokens, total_cached_tokens: 10 });
    const link = parent[0]!.observation.results[0];
    expect([link.source_call_id, link.content]).toEqual(['toolu_route', 'billing']);
    const sub = (doc.subagent_trajectories as AtifDoc[]).find((trajectory) => trajectory.session_id === link.subagent_trajectory_ref[0].session_id)!;
    expect(callsOf(sub)).toEqual([{ model: CLAUDE, prompt: decided!.usage.inputTokens, completion: decided!.usage.outputTokens, cached: 30, reasoning: undefined }]);
    expect(sub.final_metrics).toMatchObject({ total_prompt_tokens: 130, total_completion_tokens: 5 });
    await sameOnNative(recorded);
  });
});

describe('@ai-sdk/anthropic extractionModel', () => {
  // 20 fields: the package's `maxFieldsPerCall: 16` sends fields 1-16 and 17-20 as two Messages calls at once.
  const FIELDS = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`item${String(i + 1).padStart(2, '0')}`, { type: 'text' as const, instructions: `Line item ${i + 1}` }]));
  const FIRST = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`f${i}`, `value ${i + 1}`]));
  const SECOND = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f${i}`, `value ${i + 17}`]));

  it('over 16 fields is several calls reported as one: the tokens are their sum; the cache counts the SDK keeps of one are not written', async () => {
    const first = { input_tokens: 50, output_tokens: 90, cache_read_input_tokens: 400 };
    const second = { input_tokens: 30, output_tokens: 25, cache_creation_input_tokens: 400 };
    const wire = concurrentFetch([
      { when: 'item17', reply: claudeJson('msg_second', SECOND, second) },
      { when: 'item01', reply: claudeJson('msg_first', FIRST, first) },
    ]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-anthropic-20');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_extract({ model: anthropic.extractionModel('claude-sonnet-4-5'), state: 'Twenty line items.', fields: FIELDS });

    expect(wire.bodies).toHaveLength(2);
    expect(result.answers.item01!.value).toBe('value 1');
    expect(result.answers.item20!.value).toBe('value 20');
    const billedInput = 50 + 400 + 30 + 400;
    expect(result.usage).toEqual({ inputTokens: billedInput, outputTokens: 115, totalTokens: billedInput + 115 });
    const { doc } = await finishedRun(recorded);
    expect(JSON.parse((doc.steps as AtifDoc[]).find((step) => step.source === 'agent')!.message as string)).toEqual(result.answers);
    // One step with the sum billed. The SDK hands on the first call's metadata and response only
    // (ExtractionLanguageModel.doExtract: `providerMetadata: results[0].providerMetadata`), so the cache reads and
    // writes of the other call are not known: none are written, rather than the first call's as the whole.
    expect(callsOf(doc)).toEqual([{ model: CLAUDE, prompt: billedInput, completion: 115, cached: undefined, reasoning: undefined }]);
    await sameOnNative(recorded);
  });

  it('over 16 fields with one call failing once: the SDK retries every call and reports the last attempt\'s sum only', async () => {
    const failed = anthropicError(500, 'api_error', 'Internal server error');
    const wire = concurrentFetch([
      { when: 'item17', reply: { ...failed, headers: { 'retry-after-ms': '0' } } },
      { when: 'item01', reply: claudeJson('msg_first_a', FIRST, { input_tokens: 450, output_tokens: 90 }) },
      { when: 'item17', reply: claudeJson('msg_second', SECOND, { input_tokens: 430, output_tokens: 25 }) },
      { when: 'item01', reply: claudeJson('msg_first_b', FIRST, { input_tokens: 450, output_tokens: 90 }) },
    ]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-anthropic-20-retry');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_extract({ model: anthropic.extractionModel('claude-sonnet-4-5'), state: 'Twenty line items.', fields: FIELDS, maxRetries: 1 });

    // Four requests: the first group's ran twice, since ai's retry wraps the whole doExtract (its Promise.all).
    expect(wire.bodies).toHaveLength(4);
    expect(result.usage).toEqual({ inputTokens: 880, outputTokens: 115, totalTokens: 995 });
    const { doc } = await finishedRun(recorded);
    // The trajectory has what the SDK reports: the last attempt's sum. The first group's first answer (450 + 90,
    // billed) reaches neither the program nor telemetry.
    expect(callsOf(doc)).toEqual([{ model: CLAUDE, prompt: 880, completion: 115, cached: undefined, reasoning: undefined }]);
    expect(recorded.log.filter((entry) => entry.hook === 'api_request_error')).toEqual([]);
    await sameOnNative(recorded);
  });

  it('a refusal fails the turn; the SDK raises it without the call\'s usage, so none is written', async () => {
    const wire = scriptedFetch([claudeJson('msg_refused', { f0: null }, { input_tokens: 100, output_tokens: 1 }, 'refusal')]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-anthropic-refused');
    uninstall = instrumentAiSdk(recorded.hooks);

    const error = await experimental_extract({ model: anthropic.extractionModel('claude-sonnet-4-5'), state: 'x', fields: { invoice: { type: 'text', instructions: 'The invoice number' } } }).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    if (error === undefined) throw new Error('the refused extraction resolved');

    expect(error.name).toBe('AI_ExtractionRefusalError');
    const { doc } = await finishedRun(recorded);
    expect(callsOf(doc)).toEqual([{ model: 'claude-sonnet-4-5', prompt: undefined, completion: undefined, cached: undefined, reasoning: undefined }]);
    expect(recorded.log.find((entry) => entry.hook === 'api_request_error')!.payload).toMatchObject({ error: { type: 'AI_ExtractionRefusalError' } });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'AI_ExtractionRefusalError' });
    await sameOnNative(recorded);
  });

  it('inside a streamText tool is that call\'s sub-agent; the stream\'s totals are its own calls\'', async () => {
    const wire = scriptedFetch([
      anthropicStream({ id: 'msg_1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_read', name: 'readInvoice', input: { text: 'Invoice INV-2041' } }], usage: { input_tokens: 60, output_tokens: 12 } }),
      claudeJson('msg_x', { f0: 'INV-2041' }, { input_tokens: 100, output_tokens: 5, cache_read_input_tokens: 20 }),
      anthropicStream({ id: 'msg_2', model: CLAUDE, content: [{ type: 'text', text: 'It is INV-2041.' }], usage: { input_tokens: 90, output_tokens: 6 } }),
    ]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-stream');
    uninstall = instrumentAiSdk(recorded.hooks);
    let extracted: { usage: { inputTokens?: number; outputTokens?: number } } | undefined;

    const result = streamText({
      model: anthropic('claude-sonnet-4-5'),
      prompt: 'Which invoice is this? Invoice INV-2041',
      stopWhen: stepCountIs(3),
      tools: {
        readInvoice: tool({
          description: 'Read an invoice',
          inputSchema: z.object({ text: z.string() }),
          execute: async ({ text }) => {
            const read = await experimental_extract({ model: anthropic.extractionModel('claude-sonnet-4-5'), state: text, fields: { invoiceNumber: { type: 'text', instructions: 'The invoice number' } } });
            extracted = read;
            return read.answers.invoiceNumber.value;
          },
        }),
      },
    });

    expect(await result.text).toBe('It is INV-2041.');
    const totalUsage = await result.totalUsage;
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: totalUsage.inputTokens, total_completion_tokens: totalUsage.outputTokens });
    const link = (doc.steps as AtifDoc[]).find((step) => step.source === 'agent')!.observation.results[0];
    expect([link.source_call_id, link.content]).toEqual(['toolu_read', 'INV-2041']);
    const sub = (doc.subagent_trajectories as AtifDoc[]).find((trajectory) => trajectory.session_id === link.subagent_trajectory_ref[0].session_id)!;
    expect(callsOf(sub)).toEqual([{ model: CLAUDE, prompt: extracted!.usage.inputTokens, completion: extracted!.usage.outputTokens, cached: 20, reasoning: undefined }]);
    await sameOnNative(recorded);
  });
});

describe('@ai-sdk/google decisionModel and extractionModel', () => {
  it('a decision is one call to the Decisions API: its usage and answers', async () => {
    const wire = scriptedFetch([
      {
        json: {
          answers: {
            department: { type: 'choice', choice: 'billing', probabilities: { billing: 0.93, support: 0.07 }, confidence: 0.9 },
            severity: { type: 'score', score: 1.1, probabilities: { '0': 0.1, '1': 0.7, '2': 0.2 } },
            requestsRefund: { type: 'noul', noul: 0.98 },
          },
          usage: { total_input_tokens: 120, total_output_tokens: 6, total_tokens: 126, input_tokens_by_modality: [{ modality: 'TEXT', tokens: 120 }] },
        },
      },
    ]);
    const google = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-google');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_decide({ model: google.decisionModel('gemini-3-flash'), state: { message: 'I was charged twice.' }, questions: QUESTIONS });

    expect(wire.requests.map((request) => request.url)).toEqual(['https://generativelanguage.googleapis.com/v1beta/decisions']);
    expect(result.answers.requestsRefund).toEqual({ type: 'boolean', probability: 0.98 });
    expect(result.usage).toEqual({ inputTokens: 120, outputTokens: 6, totalTokens: 126 });
    const { doc } = await finishedRun(recorded);
    expect(JSON.parse((doc.steps as AtifDoc[]).find((step) => step.source === 'agent')!.message as string)).toEqual(result.answers);
    // The Decisions answer names no model: the one asked for.
    expect(callsOf(doc)).toEqual([{ model: 'gemini-3-flash', prompt: 120, completion: 6, cached: undefined, reasoning: undefined }]);
    await sameOnNative(recorded);
  });

  it('an extraction is one generateContent call: the cache reads and thoughts Gemini billed, and the model that answered', async () => {
    const wire = scriptedFetch([geminiResponse({ model: 'gemini-3-flash-001', text: JSON.stringify({ f0: 'INV-2041', f1: 1250 }), usage: { prompt: 300, candidates: 12, cached: 200, thoughts: 40 } })]);
    const google = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-google');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await experimental_extract({
      model: google.extractionModel('gemini-3-flash'),
      state: 'Invoice INV-2041, total due $1,250.00.',
      fields: { invoiceNumber: { type: 'text', instructions: 'The invoice number' }, total: { type: 'number', instructions: 'Total amount due', unit: 'USD', decimals: 2 } },
    });

    expect(wire.requests.map((request) => request.url)).toEqual(['https://generativelanguage.googleapis.com/v1beta/models/gemini-3-flash:generateContent']);
    expect(result.answers.total.value).toBe(1250);
    // The SDK keeps the input and output (thoughts included) and drops the rest.
    expect(result.usage).toEqual({ inputTokens: 300, outputTokens: 52, totalTokens: 352 });
    const { doc } = await finishedRun(recorded);
    expect(callsOf(doc)).toEqual([{ model: 'gemini-3-flash-001', prompt: 300, completion: 52, cached: 200, reasoning: 40 }]);
    await sameOnNative(recorded);
  });

  it('an extraction Gemini cut short (MAX_TOKENS) fails the turn, and the call Gemini billed keeps its tokens', async () => {
    const cut = geminiResponse({ model: 'gemini-3-flash-001', text: '{"f0": "INV-', usage: { prompt: 300, candidates: 8, thoughts: 16 } });
    ((cut.json as { candidates: Array<{ finishReason: string }> }).candidates[0]!).finishReason = 'MAX_TOKENS';
    const wire = scriptedFetch([cut]);
    const google = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract-google-cut');
    uninstall = instrumentAiSdk(recorded.hooks);

    const error = await experimental_extract({ model: google.extractionModel('gemini-3-flash'), state: 'Invoice INV-2041.', fields: { invoiceNumber: { type: 'text', instructions: 'The invoice number' } }, maxOutputTokens: 24 }).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    if (error === undefined) throw new Error('the cut extraction resolved');

    expect([error.name, error.message]).toEqual(['AI_InvalidResponseDataError', 'Extraction did not complete: length.']);
    expect(wire.requests).toHaveLength(1);
    const { doc } = await finishedRun(recorded);
    expect(callsOf(doc)).toEqual([{ model: 'gemini-3-flash-001', prompt: 300, completion: 24, cached: undefined, reasoning: 16 }]);
    expect(recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload).toMatchObject({ finish_reason: 'length' });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'AI_InvalidResponseDataError' });
    await sameOnNative(recorded);
  });
});
