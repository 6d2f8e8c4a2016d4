// experimental_decide and experimental_extract as the AI SDK's docs write them (03-ai-sdk-core/32-decisions.mdx,
// 33-extractions.mdx), with @ai-sdk/openai's decisionModel (the Decisions API: POST /decisions) and extractionModel
// (Responses with a JSON schema), against a fake fetch speaking those wires. Each call is a model call the program
// pays for: the trajectory must show it with the tokens OpenAI reported, as a turn of its own, or as the sub-agent of
// the tool that made it (the docs' triage helper called from a generateText tool).
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { experimental_decide, experimental_extract, generateText, stepCountIs, tool, type Experimental_DecisionModel, type Experimental_ExtractionModel } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { openAiResponse, scriptedFetch, type WireReply } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** A Decisions API answer, as OpenAI's Decisions reference writes it (the shape @ai-sdk/openai parses). */
function decisionsReply(model: string, usage: { input: number; cached: number; output: number; reasoning: number }): WireReply {
  return {
    json: {
      model,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning },
        total_tokens: usage.input + usage.output,
      },
      answers: [
        { type: 'choice', name: 'department', choice: 'billing', confidence: 0.91, probabilities: [{ value: 'billing', probability: 0.93 }, { value: 'support', probability: 0.07 }] },
        { type: 'score', name: 'severity', score: 1.1, confidence: 0.8, probabilities: [{ value: 0, probability: 0.1 }, { value: 1, probability: 0.7 }, { value: 2, probability: 0.2 }] },
        { type: 'predicate', name: 'requestsRefund', probability: 0.98 },
      ],
    },
  };
}

// The docs' triage helper, word for word.
async function triage(model: Experimental_DecisionModel, message: string) {
  return experimental_decide({
    model,
    state: { message },
    questions: {
      department: {
        type: 'choice',
        instructions: 'Which team should handle this?',
        criteria: {
          billing: 'Payments and refunds',
          support: 'Other requests',
        },
      },
      severity: {
        type: 'score',
        instructions: 'How severe is the issue?',
        criteria: ['Cosmetic', 'Workaround exists', 'Blocking; no workaround'],
      },
      requestsRefund: {
        type: 'boolean',
        instructions: 'Is the customer requesting money back?',
      },
    },
  });
}

// The docs' invoice reader, word for word.
async function readInvoice(model: Experimental_ExtractionModel, text: string) {
  return experimental_extract({
    model,
    state: text,
    referenceDate: '2026-11-11',
    fields: {
      invoiceNumber: { type: 'text', instructions: 'The invoice number' },
      total: {
        type: 'number',
        instructions: 'Total amount due',
        unit: 'USD',
        decimals: 2,
      },
      dueDate: { type: 'date', instructions: 'Payment due date' },
      contacts: { type: 'list', items: 'text', instructions: 'Contact names' },
    },
  });
}

const INVOICE = 'Invoice INV-2041, total due $1,250.00 by March 3. Contacts: Ana, Bo.';
const INVOICE_ANSWER = { f0: 'INV-2041', f1: 1250, f2: '2027-03-03', f3: ['Ana', 'Bo'] };

/** The one agent step's tokens and model, as the trajectory writes them. */
function callOf(doc: AtifDoc): { message: unknown; model: unknown; prompt: unknown; completion: unknown; cached: unknown } {
  const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(agent).toHaveLength(1);
  const step = agent[0]!;
  return { message: JSON.parse(step.message as string), model: step.model_name, prompt: step.metrics?.prompt_tokens, completion: step.metrics?.completion_tokens, cached: step.metrics?.cached_tokens };
}

describe('experimental_decide', () => {
  it('is a turn: the state as the user message, the answers as the reply, the tokens OpenAI reported', async () => {
    const wire = scriptedFetch([decisionsReply('gpt-6-luna-2026-10-01', { input: 180, cached: 128, output: 9, reasoning: 0 })]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'triage' });

    const result = await triage(openai.decisionModel('gpt-6-luna'), 'I was charged twice.');

    expect(wire.requests.map((request) => request.url)).toEqual(['https://api.openai.com/v1/decisions']);
    expect(result.answers.department.choice).toBe('billing');
    expect(result.usage).toEqual({ inputTokens: 180, outputTokens: 9, totalTokens: 189 });
    uninstall();
    uninstall = undefined;
    const { doc } = await finishedRun(recorded);
    expect(doc.session_id).toBe('triage');
    const steps = doc.steps as AtifDoc[];
    expect(steps[0]!.source).toBe('user');
    expect(JSON.parse(steps[0]!.message as string)).toEqual({ message: 'I was charged twice.' });
    // The tokens the program was told of, and the cache reads OpenAI reported beside them (the SDK drops those).
    expect(callOf(doc)).toEqual({ message: result.answers, model: 'gpt-6-luna-2026-10-01', prompt: result.usage.inputTokens, completion: result.usage.outputTokens, cached: 128 });
    // The request names what was asked.
    const request = recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload;
    expect(JSON.stringify(request)).toContain('Which team should handle this?');
    await sameOnNative(recorded);
  });

  it('inside a generateText tool is that tool call\'s sub-agent, with its own tokens', async () => {
    const wire = scriptedFetch([
      openAiResponse({ id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_route', name: 'route', args: { message: 'I was charged twice.' } }], usage: { prompt_tokens: 60, completion_tokens: 12 } }),
      decisionsReply('gpt-6-luna-2026-10-01', { input: 150, cached: 0, output: 7, reasoning: 0 }),
      openAiResponse({ id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Sent to billing.', usage: { prompt_tokens: 90, completion_tokens: 5 } }),
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-tool');
    uninstall = instrumentAiSdk(recorded.hooks);
    let decided: Awaited<ReturnType<typeof triage>> | undefined;

    const result = await generateText({
      model: openai('gpt-4o'),
      prompt: 'Route this ticket: I was charged twice.',
      stopWhen: stepCountIs(3),
      tools: {
        route: tool({
          description: 'Route a support ticket',
          inputSchema: z.object({ message: z.string() }),
          execute: async ({ message }) => {
            decided = await triage(openai.decisionModel('gpt-6-luna'), message);
            return decided.answers.department.choice;
          },
        }),
      },
    });

    expect(result.text).toBe('Sent to billing.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const parentAgent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(parentAgent.map((step) => [step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    const results = parentAgent[0]!.observation.results as AtifDoc[];
    expect(results.map((entry) => [entry.source_call_id, entry.content])).toEqual([['call_route', 'billing']]);
    const child = results[0]!.subagent_trajectory_ref[0].session_id;
    const sub = (doc.subagent_trajectories as AtifDoc[]).find((trajectory) => trajectory.session_id === child)!;
    expect(callOf(sub)).toEqual({ message: decided!.answers, model: 'gpt-6-luna-2026-10-01', prompt: decided!.usage.inputTokens, completion: decided!.usage.outputTokens, cached: 0 });
    await sameOnNative(recorded);
  });

  it('a state with a file: the user message names the file and keeps none of its bytes, as any prompt\'s file', async () => {
    const reply = decisionsReply('gpt-6-luna-2026-10-01', { input: 900, cached: 0, output: 9, reasoning: 0 });
    (reply.json as { answers: unknown[] }).answers.splice(1);
    const wire = scriptedFetch([reply]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-file');
    uninstall = instrumentAiSdk(recorded.hooks);
    const screenshot = new Uint8Array(64).map((_, index) => (index * 37) % 256);
    const base64 = Buffer.from(screenshot).toString('base64');

    // The decisions page's multimodal state: text and a screenshot, in order.
    await experimental_decide({
      model: openai.decisionModel('gpt-6-luna'),
      state: [
        { type: 'text', text: 'The customer attached this screenshot of their statement.' },
        { type: 'file', mediaType: 'image/png', data: screenshot },
      ],
      questions: { department: { type: 'choice', instructions: 'Which team should handle this?', criteria: { billing: 'Payments and refunds', support: 'Other requests' } } },
    });

    // The provider was sent the image; the trajectory says an image was read, of what type, without its bytes.
    expect(JSON.stringify(wire.requests[0]!.body)).toContain(base64);
    const { doc } = await finishedRun(recorded);
    const user = (doc.steps as AtifDoc[])[0]!;
    expect(user.source).toBe('user');
    const parts = (typeof user.message === 'string' ? JSON.parse(user.message) : user.message) as Array<Record<string, unknown>>;
    expect(parts.map((part) => [part.type, part.text ?? part.mediaType])).toEqual([['text', 'The customer attached this screenshot of their statement.'], ['file', 'image/png']]);
    expect(JSON.stringify(recorded.log)).not.toContain(base64);
    expect(JSON.stringify(doc)).not.toContain(base64);
    await sameOnNative(recorded);
  });

  it('a refusal fails the turn: the program gets the error, the trajectory says so', async () => {
    const refused = decisionsReply('gpt-6-luna-2026-10-01', { input: 50, cached: 0, output: 2, reasoning: 0 });
    (refused.json as { answers: unknown[] }).answers = [
      { type: 'refusal', name: 'department' },
      { type: 'score', name: 'severity', score: 1.1, probabilities: [{ value: 0, probability: 0.1 }, { value: 1, probability: 0.7 }, { value: 2, probability: 0.2 }] },
      { type: 'predicate', name: 'requestsRefund', probability: 0.5 },
    ];
    const wire = scriptedFetch([refused]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-decide-refused');
    uninstall = instrumentAiSdk(recorded.hooks);
    const error = await triage(openai.decisionModel('gpt-6-luna'), 'Tell me a joke.').catch((caught: unknown) => caught as Error);
    expect((error as Error).name).toBe('AI_DecisionRefusalError');
    const { doc } = await finishedRun(recorded);
    expect(recorded.log.find((entry) => entry.hook === 'api_request_error')!.payload).toMatchObject({ error: { type: 'AI_DecisionRefusalError' } });
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'AI_DecisionRefusalError' });
    expect((doc.steps as AtifDoc[])[0]!.source).toBe('user');
    await sameOnNative(recorded);
  });
});

describe('experimental_extract', () => {
  it('is a turn: the answers as the reply, the tokens OpenAI reported', async () => {
    const wire = scriptedFetch([openAiResponse({ id: 'resp_x', model: 'gpt-6.1-sol-2026-09-01', text: JSON.stringify(INVOICE_ANSWER), usage: { prompt_tokens: 410, completion_tokens: 31, cached: 256 } })]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-extract');
    uninstall = instrumentAiSdk(recorded.hooks);

    const { answers, usage } = await readInvoice(openai.extractionModel('gpt-6.1-sol'), INVOICE);

    expect(wire.requests.map((request) => request.url)).toEqual(['https://api.openai.com/v1/responses']);
    expect(answers.total.value).toBe(1250);
    expect(answers.contacts.value).toEqual(['Ana', 'Bo']);
    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect([steps[0]!.source, steps[0]!.message]).toEqual(['user', INVOICE]);
    expect(callOf(doc)).toEqual({ message: answers, model: 'gpt-6.1-sol-2026-09-01', prompt: usage.inputTokens, completion: usage.outputTokens, cached: 256 });
    const request = recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload;
    expect(JSON.stringify(request)).toContain('2026-11-11');
    await sameOnNative(recorded);
  });
});
