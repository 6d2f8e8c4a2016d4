// LangChain chat models of other providers, as LangChain's docs write the program: `createAgent` with a tool and our
// handler in `callbacks`, each model its real package against a loopback server speaking the provider's Chat
// Completions JSON and SSE as that provider sends it (test/adapters/ai-sdk/wire.ts): ChatGroq (groq-sdk), ChatMistralAI
// (the Mistral SDK, which hands LangChain camelCase fields), ChatDeepSeek and ChatXAI (both ChatOpenAI). Each package
// keeps the finish reason, the model that answered, the usage and the provider under its own keys; each trajectory is
// held to what the program got (`usage_metadata`, the tool call ids, the texts) and to the wire, and a refused call
// keeps its HTTP status. The same hooks on native write the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatGroq } from '@langchain/groq';
import { ChatMistralAI } from '@langchain/mistralai';
import { ChatDeepSeek } from '@langchain/deepseek';
import { ChatXAI } from '@langchain/xai';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { createAgent } from 'langchain';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather, agentSteps, reported, recordedCounts, posts, handler } from './langchain-checks.ts';

let fake = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
beforeAll(async () => {
  server = await loopbackApi((url, init) => fake.fetch(url, init));
});
afterAll(() => server?.close());

type Server = 'groq' | 'mistral' | 'deepseek' | 'xai';

/** The next requests get `turns`, as Chat Completions JSON or SSE. */
function serve(server: Server, stream: boolean, ...turns: Turn[]): void {
  fake = new FakeProvider();
  for (const turn of turns) fake.reply('chat', { ...turn, server }, { stream });
}


/**
 * Two calls, then the answer; `cached`: the cache hits of each, which DeepSeek's usage states (its
 * `prompt_cache_hit_tokens`); `reasoning`: the reasoning tokens of each, which xAI counts apart from `completion_tokens`.
 */
const loop = (model: string, cached: [number, number] | undefined, reasoning: [number, number] | undefined): Turn[] => [
  {
    id: 'chatcmpl-1',
    model,
    toolCalls: [
      { id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } },
    ],
    usage: { input: 182, output: 31, ...(cached === undefined ? {} : { cached: cached[0] }), ...(reasoning === undefined ? {} : { reasoning: reasoning[0] }) },
  },
  { id: 'chatcmpl-2', model, text: 'It is sunny in Paris and in Rome.', usage: { input: 251, output: 12, ...(cached === undefined ? {} : { cached: cached[1] }), ...(reasoning === undefined ? {} : { reasoning: reasoning[1] }) } },
];

/** The cache hits the DeepSeek server states for the loop's two calls. */
const DEEPSEEK_HITS: [number, number] = [64, 192];
/** The reasoning tokens xAI states for the loop's two calls (grok-4 always reasons; it returns no reasoning text). */
const XAI_REASONING: [number, number] = [96, 30];

const recordedCached = (doc: AtifDoc): Array<number | undefined> => agentSteps(doc).map((step) => step.metrics.cached_tokens);
const recordedReasoning = (doc: AtifDoc): Array<number | undefined> => agentSteps(doc).map((step) => step.metrics.extra?.completion_tokens_details?.reasoning_tokens);

interface Provider {
  name: string;
  server: Server;
  /** Whether createAgent's call streams even when invoked (ChatMistralAI streams whenever it is given a signal). */
  agentStreams: boolean;
  /** What the adapter records as the provider. */
  provider: string;
  model: string;
  /** The path the client posts to. */
  path: string;
  make(options?: { maxTokens?: number }): BaseChatModel;
  /** The error the client throws for a refused call: its name and where it keeps the status. */
  refused: (status: number) => Record<string, unknown>;
}

const PROVIDERS: Provider[] = [
  {
    name: 'ChatGroq (@langchain/groq, groq-sdk)',
    server: 'groq',
    agentStreams: false,
    provider: 'groq',
    model: 'llama-3.3-70b-versatile',
    path: '/openai/v1/chat/completions',
    make: (options = {}) => new ChatGroq({ model: 'llama-3.3-70b-versatile', apiKey: 'gsk-test-not-a-key', baseUrl: server!.url, maxRetries: 0, ...options }),
    refused: (status) => ({ status }),
  },
  {
    name: 'ChatMistralAI (@langchain/mistralai, @mistralai/mistralai)',
    server: 'mistral',
    agentStreams: true,
    provider: 'mistral',
    model: 'mistral-large-latest',
    path: '/v1/chat/completions',
    make: (options = {}) => new ChatMistralAI({ model: 'mistral-large-latest', apiKey: 'test-not-a-key', serverURL: server!.url, maxRetries: 0, ...options }),
    refused: (status) => ({ statusCode: status }),
  },
  {
    name: 'ChatDeepSeek (@langchain/deepseek, ChatOpenAI on Chat Completions)',
    server: 'deepseek',
    agentStreams: false,
    provider: 'deepseek',
    model: 'deepseek-chat',
    path: '/chat/completions',
    make: (options = {}) => new ChatDeepSeek({ model: 'deepseek-chat', apiKey: 'sk-test-not-a-key', configuration: { baseURL: server!.url }, maxRetries: 0, ...options }),
    refused: (status) => ({ status }),
  },
  {
    name: 'ChatXAI (@langchain/xai, ChatOpenAI on Chat Completions)',
    server: 'xai',
    agentStreams: false,
    provider: 'xai',
    model: 'grok-4',
    path: '/v1/chat/completions',
    make: (options = {}) => new ChatXAI({ model: 'grok-4', apiKey: 'xai-test-not-a-key', baseURL: `${server!.url}/v1`, maxRetries: 0, ...options }),
    refused: (status) => ({ status }),
  },
];

for (const p of PROVIDERS) {
  describe(`${p.name} in createAgent, through the LangChain adapter`, () => {
    for (const mode of ['invoke', 'stream'] as const) {
      it(`${mode === 'invoke' ? 'agent.invoke' : 'agent.stream (streamMode "messages")'}: the calls and results, usage_metadata = the wire's counts, finish tool_calls then stop, the model that answered`, async () => {
        const answered = `${p.model}-2025-01`;
        const hits = p.server === 'deepseek' ? DEEPSEEK_HITS : undefined;
        const reasoning = p.server === 'xai' ? XAI_REASONING : undefined;
        serve(p.server, mode === 'stream' || p.agentStreams, ...loop(answered, hits, reasoning));
        const agent = createAgent({ model: p.make(), tools: [getWeather], systemPrompt: 'You answer weather questions.' });
        const recorded = recordedPlugin(`lc-${p.provider}-agent-${mode}`);
        const input = { messages: [{ role: 'user', content: 'What is the weather in Paris and Rome?' }] };
        let messages: BaseMessage[] = [];
        if (mode === 'invoke') messages = (await agent.invoke(input, handler(recorded))).messages;
        else {
          let tokens = 0;
          for await (const [kind, value] of await agent.stream(input, { ...handler(recorded), streamMode: ['messages', 'values'] })) {
            if (kind === 'messages' && AIMessageChunk.isInstance((value as [BaseMessage, unknown])[0])) tokens += 1;
            if (kind === 'values') messages = (value as { messages: BaseMessage[] }).messages;
          }
          expect(tokens).toBeGreaterThan(2);
        }
        expect(fake.requests.map((request) => [new URL(request.url).pathname, request.body.tools?.[0]?.function?.name])).toEqual(Array(2).fill([p.path, 'get_weather']));
        const answers = messages.filter((m) => AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) as AIMessage[];
        expect(answers.map((m) => m.text)).toEqual(['', 'It is sunny in Paris and in Rome.']);
        expect(answers[0]!.tool_calls!.map((call) => call.id)).toEqual(['call_paris', 'call_rome']);

        const { doc, agent: steps } = await finishedRun(recorded);
        expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
        expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
          ['call_paris', 'get_weather', { city: 'Paris' }],
          ['call_rome', 'get_weather', { city: 'Rome' }],
        ]);
        expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content])).toEqual([
          ['call_paris', 'It is sunny in Paris.'],
          ['call_rome', 'It is sunny in Rome.'],
        ]);
        // Tokens: the wire's counts, which are usage_metadata where the package sets it. Streamed, ChatGroq sets none:
        // it keeps `x_groq.usage` as LangChain's counts in response_metadata.usage, where the include_usage chunk's
        // `usage` merges in beside them (its total summed into the first's). xAI's reasoning tokens are output the call
        // is billed for, apart from its completion_tokens: the step's completion counts them, as every other's does.
        const thought = (index: number): number => reasoning?.[index] ?? 0;
        const wire = [
          [182, 31 + thought(0), 182 + 31 + thought(0)],
          [251, 12 + thought(1), 251 + 12 + thought(1)],
        ];
        if (p.server === 'groq' && mode === 'stream') {
          expect(recordedCounts(doc)).toEqual(wire);
          expect(reported(answers)).toEqual([]);
          expect(answers.map((m) => m.response_metadata.usage)).toMatchObject([
            { input_tokens: 182, output_tokens: 31, total_tokens: 426 },
            { input_tokens: 251, output_tokens: 12, total_tokens: 526 },
          ]);
        } else if (p.server === 'xai') {
          // ChatXAI's usage_metadata keeps xAI's completion_tokens, without the reasoning, as its output_tokens (the
          // reasoning in output_token_details). Streamed, ChatXAI gives the finishing chunk xAI's own usage as its
          // usage_metadata and ChatOpenAI's usage chunk adds LangChain's: merged, the input and output counts are once
          // and the total twice. The step's total is the wire's, as response_metadata.usage (xAI's usage, added up as
          // often) says it taken once.
          const times = mode === 'stream' ? 2 : 1;
          expect(reported(answers)).toEqual(wire.map(([input, , total], index) => [input, index === 0 ? 31 : 12, total! * times]));
          expect(answers.map((m) => m.usage_metadata?.output_token_details?.reasoning)).toEqual(XAI_REASONING);
          expect(answers.map((m) => m.response_metadata.usage)).toMatchObject(
            wire.map(([input, , total], index) => ({ prompt_tokens: input! * times, completion_tokens: (index === 0 ? 31 : 12) * times, total_tokens: total! * times })),
          );
          expect(recordedCounts(doc)).toEqual(wire);
          expect(recordedReasoning(doc)).toEqual(XAI_REASONING);
        } else {
          expect(recordedCounts(doc)).toEqual(wire);
          expect(reported(answers)).toEqual(wire);
        }
        // Cache hits: DeepSeek's prompt_cache_hit_tokens, which LangChain's usage_metadata does not carry (ChatOpenAI keeps
        // DeepSeek's usage as it came in response_metadata.usage, streamed added up twice: the finishing chunk carries
        // it, and ChatOpenAI passes it on again as its usage chunk). No other server here states any.
        if (p.server === 'deepseek') {
          expect(answers.map((m) => m.usage_metadata?.input_token_details?.cache_read)).toEqual([undefined, undefined]);
          expect(answers.map((m) => (m.response_metadata.usage as { prompt_cache_hit_tokens: number }).prompt_cache_hit_tokens)).toEqual(DEEPSEEK_HITS.map((n) => (mode === 'stream' ? 2 * n : n)));
          expect(fake.requests.every((request) => mode === 'invoke' || request.body.stream_options?.include_usage === true)).toBe(true);
          expect(recordedCached(doc)).toEqual(DEEPSEEK_HITS);
        } else expect(recordedCached(doc).every((cached) => cached === undefined || cached === 0)).toBe(true);
        expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
        expect(steps.map((step) => step.model_name)).toEqual([answered, answered]);
        expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => e.payload.provider)).toEqual([p.provider, p.provider]);
        // From either file, the model that answered, and the one the request asked for where they differ.
        const shownModel = answered === p.model ? answered : `${answered} (asked ${p.model})`;
        for (const of of ['atof', 'atif'] as const) {
          expect(await viewRows(recorded, of)).toEqual([
            `LLM ${shownModel}  182 in${hits === undefined ? '' : ` (${hits[0]} cached)`} / ${wire[0]![1]} out  → get_weather, get_weather`,
            'tool get_weather  {"city":"Paris"}',
            'tool get_weather  {"city":"Rome"}',
            `LLM ${shownModel}  251 in${hits === undefined ? '' : ` (${hits[1]} cached)`} / ${wire[1]![1]} out  It is sunny in Paris and in Rome.`,
          ]);
        }
        await sameOnNative(recorded);
      });
    }

    // Mistral says `model_length` when the model's context window, not maxTokens, cut the answer.
    for (const finish of p.server === 'mistral' ? ['length', 'model_length'] : ['length']) {
      it(`model.invoke() cut (${finish}): finish length`, async () => {
        serve(p.server, false, { id: 'chatcmpl-3', model: p.model, text: 'The weather in Paris is', finish, usage: { input: 18, output: 5 } });
        const recorded = recordedPlugin(`lc-${p.provider}-${finish}`);
        const answer = await p.make({ maxTokens: 5 }).invoke('What is the weather in Paris?', handler(recorded));
        expect(answer.text).toBe('The weather in Paris is');
        const { doc } = await finishedRun(recorded);
        expect(recordedCounts(doc)).toEqual([[18, 5, 23]]);
        expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
        await sameOnNative(recorded);
      });
    }

    for (const status of [401, 429]) {
      it(`a refused call (${status}): the failed call keeps the HTTP status, the turn failed with what the program caught`, async () => {
        fake = new FakeProvider();
        fake.fail('chat', status, status === 401 ? 'Invalid API Key' : 'Rate limit reached');
        const recorded = recordedPlugin(`lc-${p.provider}-${status}`);
        let caught: Error | undefined;
        try {
          await p.make().invoke('Hello?', handler(recorded));
        } catch (error) {
          caught = error as Error;
        }
        expect(caught).toMatchObject(p.refused(status));
        expect(recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload)).toMatchObject([{ status_code: status }]);
        expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: caught!.message });
        await sameOnNative(recorded);
      });
    }
  });
}
