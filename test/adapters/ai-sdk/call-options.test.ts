// A call's options as the SDK's docs write them (07-reference/01-ai-sdk-core/01-generate-text.mdx: `temperature`,
// `topP`, `seed`, `maxOutputTokens`, `toolChoice`, `activeTools`, `headers`, `providerOptions`; 03-agents/
// 05-configuring-call-options.mdx: a ToolLoopAgent whose `callOptionsSchema` + `prepareCall` choose the instructions,
// the active tools and the provider options), over the real @ai-sdk/openai and @ai-sdk/anthropic on a fake fetch that
// speaks their wire (wire.ts). What each `pre_api_request` says was asked is compared with what went on the wire: the
// model, the instructions, the tools offered (after `activeTools`), the tool choice and the settings the provider sent.
// Headers and provider options are not recorded (a header may hold a secret). A setting the provider package drops
// (a reasoning model's `temperature`, Anthropic's with thinking on, the Responses API's `seed`) or changes (Anthropic's
// `max_tokens` plus the thinking budget) is known only once the call answered (the SDK's warnings, the body the package
// built): the response records it (`settings_not_sent`, `settings_as_sent`), checked against the wire.
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createCohere } from '@ai-sdk/cohere';
import { createOpenAI } from '@ai-sdk/openai';
import { ToolLoopAgent, generateText, isStepCount, streamText, tool } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { PARAM_FIELDS, firstParam, requestSurface } from '../../../src/formats/request-codecs.ts';
import type { Json, JsonObject } from '../../../src/shared/json.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type AtofEvent, type Recorded } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const GPT = 'gpt-4o-2024-08-06';
const SECRET = 'tenant-7f3e9c-secret';
type Payload = Record<string, any>;

/**
 * The generation parameters of each ATOF LLM start as the exporters read them (the request's shape, then that shape's
 * fields: `PARAM_FIELDS`, the rule the gen_ai and OpenInference mappings use): [temperature, top_p, the token cap].
 */
function exportedParams(atof: AtofEvent[]): unknown[][] {
  return atof
    .filter((event) => event.category === 'llm' && event.scope_category === 'start')
    .map((event) => {
      const content = event.data.content as JsonObject;
      const fields = PARAM_FIELDS[requestSurface(content, event.metadata.provider as string) as 'openai_chat' | 'anthropic_messages'];
      const number = (value: Json) => (typeof value === 'number' ? value : undefined);
      return [firstParam(content, fields.temperature, number), firstParam(content, fields.top_p, number), firstParam(content, fields.max_tokens, number)];
    });
}

const responsesOf = (recorded: Recorded): Payload[] => recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => (entry.payload as Payload).response);
/** Each response's word on the recorded settings: [not sent, sent as another value]. */
const sentDifference = (recorded: Recorded): unknown[][] => responsesOf(recorded).map((response) => [response.settings_not_sent, response.settings_as_sent]);
const requestsOf = (recorded: Recorded): Payload[] => recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => (entry.payload as Payload).request.body);
const wireToolNames = (body: Payload): string[] => ((body.tools ?? []) as Payload[]).map((t) => t.name ?? t.function?.name);
const recordedToolNames = (body: Payload): string[] => ((body.tools ?? []) as Payload[]).map((t) => t.function.name);

const readDatabase = tool({ description: 'Read a user record.', inputSchema: z.object({ userId: z.string() }), execute: async ({ userId }) => ({ userId, plan: 'pro' }) });
const writeDatabase = tool({ description: 'Update a user record.', inputSchema: z.object({ userId: z.string(), plan: z.string() }), execute: async ({ userId, plan }) => ({ userId, plan, updated: true }) });

describe('AI SDK call options: what the request records is what was sent', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode} with temperature, topP, seed, maxOutputTokens, a forced tool, activeTools, headers and providerOptions (Responses API): the settings, the one tool offered and the choice as sent; no header, no provider option`, async () => {
      const fake = new FakeProvider()
        .reply('responses', { id: 'resp_1', model: GPT, toolCalls: [{ id: 'call_read', name: 'readDatabase', args: { userId: 'u_42' } }], usage: { input: 90, output: 12 } }, { stream: mode === 'streamText' })
        .reply('responses', { id: 'resp_2', model: GPT, text: 'User u_42 is on the pro plan.', usage: { input: 130, output: 9 } }, { stream: mode === 'streamText' });
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const recorded = recordedPlugin(`ai-call-options-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const options = {
        model: openai('gpt-4o'),
        tools: { readDatabase, writeDatabase },
        activeTools: ['readDatabase'] as Array<'readDatabase' | 'writeDatabase'>,
        prepareStep: ({ stepNumber }: { stepNumber: number }) => (stepNumber === 0 ? { toolChoice: { type: 'tool' as const, toolName: 'readDatabase' as const } } : {}),
        temperature: 0.2,
        topP: 0.9,
        seed: 7,
        maxOutputTokens: 300,
        headers: { 'x-tenant-token': SECRET },
        providerOptions: { openai: { user: SECRET, parallelToolCalls: false } },
        stopWhen: isStepCount(3),
        prompt: 'Which plan is user u_42 on?',
      };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const [text, steps] = await Promise.all([result.text, result.steps]);
      expect(text).toBe('User u_42 is on the pro plan.');
      expect(steps.map((step) => step.toolCalls.map((call) => call.toolCallId))).toEqual([['call_read'], []]);

      const wire = fake.requests.map((request) => request.body);
      // On the wire: the settings, the one active tool, the forced choice on the first request, the header.
      expect(wire.map((body) => [body.temperature, body.top_p, body.max_output_tokens, wireToolNames(body), body.tool_choice])).toEqual([
        [0.2, 0.9, 300, ['readDatabase'], { type: 'function', name: 'readDatabase' }],
        [0.2, 0.9, 300, ['readDatabase'], 'auto'],
      ]);
      // The Responses API has no seed: the package leaves it out and warns.
      expect(wire.map((body) => body.seed)).toEqual([undefined, undefined]);
      expect(steps[0]!.warnings).toContainEqual({ type: 'unsupported', feature: 'seed' });

      const asked = requestsOf(recorded);
      expect(asked.map((body) => [body.model, body.temperature, body.top_p, body.max_tokens, recordedToolNames(body), body.tool_choice])).toEqual([
        ['gpt-4o', 0.2, 0.9, 300, ['readDatabase'], { type: 'function', function: { name: 'readDatabase' } }],
        ['gpt-4o', 0.2, 0.9, 300, ['readDatabase'], undefined],
      ]);
      // The seed is the call's, as the SDK gave it to the provider; each response says it was not sent (the warning).
      expect(asked.map((body) => body.seed)).toEqual([7, 7]);
      expect(sentDifference(recorded)).toEqual([[['seed'], undefined], [['seed'], undefined]]);
      // Neither the headers nor the provider options are recorded, anywhere.
      const { doc, atof } = await finishedRun(recorded);
      for (const written of [JSON.stringify(recorded.log), JSON.stringify(doc), JSON.stringify(atof)]) expect(written).not.toContain(SECRET);
      // The exporters read the settings that were sent: temperature, top_p and the cap.
      expect(exportedParams(atof)).toEqual(wire.map((body) => [body.temperature, body.top_p, body.max_output_tokens]));
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.response.modelId, step.usage.inputTokens, step.usage.outputTokens]));
      expect(agent[0]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['call_read']);
      await sameOnNative(recorded);
    });
  }

  it('ToolLoopAgent with callOptionsSchema and prepareCall (the docs\' "Combining Multiple Modifications"): the instructions, model and active tools prepareCall chose are the requests\', as sent; its provider options are not recorded', async () => {
    const fake = new FakeProvider()
      .reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', toolCalls: [{ id: 'toolu_read', name: 'readDatabase', args: { userId: 'u_42' } }], usage: { input: 200, output: 20 } })
      .reply('anthropic', { id: 'msg_2', model: 'claude-sonnet-4-5-20250929', text: 'u_42 is on pro; I can only read records.', usage: { input: 260, output: 14 } });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const recorded = recordedPlugin('ai-call-options-agent');
    uninstall = instrumentAiSdk(recorded.hooks);

    const agent = new ToolLoopAgent({
      model: openai('gpt-4o'),
      callOptionsSchema: z.object({ userRole: z.enum(['admin', 'user']), urgency: z.enum(['low', 'high']) }),
      tools: { readDatabase, writeDatabase },
      prepareCall: ({ options, ...settings }) => ({
        ...settings,
        // Upgrade model for urgent requests
        model: options.urgency === 'high' ? anthropic('claude-sonnet-4-5') : settings.model,
        // Limit tools based on user role
        activeTools: options.userRole === 'admin' ? ['readDatabase', 'writeDatabase'] : ['readDatabase'],
        instructions: `You are a ${options.userRole} assistant.\n${options.userRole === 'admin' ? 'You have full database access.' : 'You have read-only access.'}`,
        maxOutputTokens: 500,
        providerOptions: { anthropic: { metadata: { userId: SECRET } } },
      }),
    });
    const result = await agent.generate({ prompt: 'Update the user record u_42 to the free plan.', options: { userRole: 'user', urgency: 'high' } });
    expect(result.text).toBe('u_42 is on pro; I can only read records.');

    const wire = fake.requests.map((request) => request.body);
    expect(fake.requests.every((request) => request.url === 'https://api.anthropic.com/v1/messages')).toBe(true);
    expect(wire.map((body) => [body.model, body.system?.[0]?.text, wireToolNames(body), body.max_tokens, body.metadata?.user_id])).toEqual([
      ['claude-sonnet-4-5', 'You are a user assistant.\nYou have read-only access.', ['readDatabase'], 500, SECRET],
      ['claude-sonnet-4-5', 'You are a user assistant.\nYou have read-only access.', ['readDatabase'], 500, SECRET],
    ]);
    const starts = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload as Payload);
    expect(starts.map((payload) => [payload.provider, payload.request.body.model, payload.request.body.messages[0], recordedToolNames(payload.request.body), payload.request.body.max_tokens])).toEqual([
      ['anthropic.messages', 'claude-sonnet-4-5', { role: 'system', content: 'You are a user assistant.\nYou have read-only access.' }, ['readDatabase'], 500],
      ['anthropic.messages', 'claude-sonnet-4-5', { role: 'system', content: 'You are a user assistant.\nYou have read-only access.' }, ['readDatabase'], 500],
    ]);
    const { doc, atof } = await finishedRun(recorded);
    for (const written of [JSON.stringify(recorded.log), JSON.stringify(doc), JSON.stringify(atof)]) expect(written).not.toContain(SECRET);
    expect(exportedParams(atof)).toEqual(wire.map((body) => [body.temperature, body.top_p, body.max_tokens]));
    const steps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(steps.map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.response.modelId, step.usage.inputTokens, step.usage.outputTokens]));
    await sameOnNative(recorded);
  });

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: a setting the provider package drops (a reasoning model's temperature and topP; Anthropic's temperature with thinking on) or changes (max_tokens plus the thinking budget) is recorded as asked, and the response says what was sent instead, as the wire shows`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider()
        .reply('responses', { id: 'resp_r', model: 'gpt-5-2025-08-07', text: 'Four.', usage: { input: 12, output: 40, reasoning: 32 } }, { stream })
        .reply('anthropic', { id: 'msg_t', model: 'claude-sonnet-4-5-20250929', text: 'Four.', usage: { input: 14, output: 30 } }, { stream });
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const recorded = recordedPlugin(`ai-call-options-dropped-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const run = mode === 'generateText' ? generateText : streamText;
      const reasoning = await run({ model: openai('gpt-5'), prompt: 'What is 2 + 2?', temperature: 0.2, topP: 0.9, maxOutputTokens: 300 });
      const [reasoningText, reasoningWarnings] = await Promise.all([reasoning.text, reasoning.warnings]);
      const thinking = await run({ model: anthropic('claude-sonnet-4-5'), prompt: 'What is 2 + 2?', temperature: 0.2, maxOutputTokens: 300, providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } });
      const [thinkingText, thinkingWarnings] = await Promise.all([thinking.text, thinking.warnings]);
      expect([reasoningText, thinkingText]).toEqual(['Four.', 'Four.']);
      const [gpt, claude] = fake.requests.map((request) => request.body);
      expect([gpt!.temperature, gpt!.top_p, gpt!.max_output_tokens]).toEqual([undefined, undefined, 300]);
      // Anthropic's max_tokens is the answer's cap plus the thinking budget.
      expect([claude!.temperature, claude!.max_tokens]).toEqual([undefined, 1324]);
      expect(reasoningWarnings!.map((warning) => (warning as { feature?: string }).feature)).toEqual(['temperature', 'topP']);
      expect(thinkingWarnings!.map((warning) => (warning as { feature?: string }).feature)).toEqual(['temperature']);

      // The request records what the call asked, at its start (the warnings and the body come with the answer).
      const asked = requestsOf(recorded);
      expect(asked.map((body) => [body.model, body.temperature, body.top_p, body.max_tokens])).toEqual([
        ['gpt-5', 0.2, 0.9, 300],
        ['claude-sonnet-4-5', 0.2, undefined, 300],
      ]);
      // The response says which of them the provider never got, and what it got in their place: the wire's.
      const notSent = (body: Payload, recordedBody: Payload) => ['temperature', 'top_p', 'max_tokens'].filter((name) => recordedBody[name] !== undefined && body[name === 'max_tokens' ? (body === gpt ? 'max_output_tokens' : 'max_tokens') : name] === undefined);
      expect(sentDifference(recorded)).toEqual([
        [notSent(gpt!, asked[0]!), undefined],
        [notSent(claude!, asked[1]!), { max_tokens: claude!.max_tokens }],
      ]);
      expect(sentDifference(recorded)).toEqual([[['temperature', 'top_p'], undefined], [['temperature'], { max_tokens: 1324 }]]);
      // The ATOF LLM end of each call carries it (two runs: two trajectories), on both backends.
      const { atof, counters } = await recorded.finish();
      expect(counters.dropped ?? 0).toBe(0);
      const ids = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => (entry.payload as Payload).api_request_id);
      const ends = new Map(atof.filter((event) => event.category === 'llm' && event.scope_category === 'end').map((event) => [(event.metadata as Payload).api_request_id, event.data as Payload]));
      expect(ids.map((id) => [ends.get(id)?.settings_not_sent, ends.get(id)?.settings_as_sent])).toEqual(sentDifference(recorded));
      await sameOnNative(recorded);
    });
  }

  it('a setting the package sends in its own way is no setting dropped: Anthropic clamps temperature 1.5 to 1 (and warns), Chat Completions sends the seed, Cohere sends topP as `p`; only the clamp is recorded, as the value sent', async () => {
    const fake = new FakeProvider()
      .reply('anthropic', { id: 'msg_c', model: 'claude-sonnet-4-5-20250929', text: 'Four.', usage: { input: 14, output: 3 } })
      .reply('chat', { id: 'chatcmpl_s', model: GPT, text: 'Four.', usage: { input: 12, output: 2 } })
      .reply('cohere', { id: 'co_p', model: 'command-a-03-2025', text: 'Four.', usage: { input: 10, output: 2 } });
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const cohere = createCohere({ apiKey: 'co-test-not-a-key', fetch: fake.fetch as typeof fetch });
    const recorded = recordedPlugin('ai-call-options-sent-otherwise');
    uninstall = instrumentAiSdk(recorded.hooks);

    const clamped = await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'What is 2 + 2?', temperature: 1.5, maxOutputTokens: 100 });
    await generateText({ model: openai.chat('gpt-4o'), prompt: 'What is 2 + 2?', temperature: 0.2, seed: 7, maxOutputTokens: 100 });
    await generateText({ model: cohere('command-a-03-2025'), prompt: 'What is 2 + 2?', temperature: 0.2, topP: 0.9, maxOutputTokens: 100 });
    const [claude, chat, co] = fake.requests.map((request) => request.body);
    expect([claude!.temperature, claude!.max_tokens]).toEqual([1, 100]);
    expect(clamped.warnings!.map((warning) => (warning as { feature?: string }).feature)).toEqual(['temperature']);
    expect([chat!.temperature, chat!.seed, chat!.max_tokens]).toEqual([0.2, 7, 100]);
    expect([co!.temperature, co!.p, co!.top_p, co!.max_tokens]).toEqual([0.2, 0.9, undefined, 100]);

    expect(requestsOf(recorded).map((body) => [body.temperature, body.top_p, body.seed, body.max_tokens])).toEqual([
      [1.5, undefined, undefined, 100],
      [0.2, undefined, 7, 100],
      [0.2, 0.9, undefined, 100],
    ]);
    // Claude got temperature 1 (the body says it, beside the warning); the seed and Cohere's `p` were sent.
    expect(sentDifference(recorded)).toEqual([
      [undefined, { temperature: claude!.temperature }],
      [undefined, undefined],
      [undefined, undefined],
    ]);
    await recorded.finish();
    await sameOnNative(recorded);
  });
});
