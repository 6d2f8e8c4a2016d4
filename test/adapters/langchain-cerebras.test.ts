// ChatCerebras (`@langchain/cerebras`, on the Cerebras SDK) as LangChain's docs write the program: `createAgent` with a
// tool, invoked and streamed, and `model.invoke` alone. ChatCerebras takes a `fetch` (the SDK's), which this test
// gives: a fake that speaks Cerebras' Chat Completions as Cerebras sends it (`/v1/chat/completions`): the usage with
// `prompt_tokens_details.cached_tokens` and `completion_tokens_details.reasoning_tokens`, `time_info` beside it; a
// stream whose finishing chunk carries the finish reason, the usage and `time_info` together; a tool call whole in
// one chunk; an error as `{message, type, param, code}` with its HTTP status. The SDK also warms its connection
// (`GET /v1/tcp_warming`) when ChatCerebras builds it, which the fake answers. Each trajectory is held to what the
// program got and to the wire; the same hooks on native write the same files.
import { describe, expect, it } from 'vitest';
import { ChatCerebras } from '@langchain/cerebras';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { finishedRun, recordedPlugin, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather, agentSteps, reported, recordedCounts, posts, handler } from './langchain-checks.ts';

const MODEL = 'gpt-oss-120b';

interface CerebrasTurn {
  text?: string;
  calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  finish?: string;
  input: number;
  output: number;
  cached?: number;
  reasoning?: number;
}

const usageOf = (turn: CerebrasTurn) => ({
  prompt_tokens: turn.input,
  completion_tokens: turn.output,
  total_tokens: turn.input + turn.output,
  prompt_tokens_details: { cached_tokens: turn.cached ?? 0 },
  completion_tokens_details: { reasoning_tokens: turn.reasoning ?? 0 },
});
const TIME_INFO = { queue_time: 0.000113, prompt_time: 0.002411, completion_time: 0.021337, total_time: 0.0263, created: 1764968400 };
const finishOf = (turn: CerebrasTurn) => turn.finish ?? (turn.calls === undefined ? 'stop' : 'tool_calls');
const toolCallsOf = (turn: CerebrasTurn) => turn.calls?.map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));

function responseOf(turn: CerebrasTurn, id: string): Record<string, unknown> {
  const message = { role: 'assistant', content: turn.text ?? null, ...(turn.calls === undefined ? {} : { tool_calls: toolCallsOf(turn) }) };
  return { id, choices: [{ finish_reason: finishOf(turn), index: 0, message }], created: 1764968400, model: MODEL, system_fingerprint: 'fp_5a4b3c2d1e', object: 'chat.completion', usage: usageOf(turn), time_info: TIME_INFO };
}

function chunksOf(turn: CerebrasTurn, id: string): Array<Record<string, unknown>> {
  const chunk = (choice: Record<string, unknown>, last = false) => ({
    id,
    choices: [{ index: 0, ...choice }],
    created: 1764968400,
    model: MODEL,
    system_fingerprint: 'fp_5a4b3c2d1e',
    object: 'chat.completion.chunk',
    ...(last ? { usage: usageOf(turn), time_info: TIME_INFO } : {}),
  });
  const chunks = [chunk({ delta: { role: 'assistant' } })];
  const text = turn.text ?? '';
  const middle = Math.floor(text.length / 2);
  for (const content of [text.slice(0, middle), text.slice(middle)]) if (content !== '') chunks.push(chunk({ delta: { content } }));
  if (turn.calls !== undefined) chunks.push(chunk({ delta: { tool_calls: toolCallsOf(turn) } }));
  chunks.push(chunk({ delta: {}, finish_reason: finishOf(turn) }, true));
  return chunks;
}

/** A fake `fetch` that answers each chat request with the next scripted turn, or an error status. */
class FakeCerebras {
  readonly requests: Array<{ url: string; body: Record<string, any> }> = [];
  warmings = 0;
  constructor(private readonly script: Array<CerebrasTurn | { status: number; message: string; type: string; code: string }>) {}
  readonly fetch = async (input: unknown, init?: { method?: string; body?: unknown }): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : String((input as { url?: unknown }).url);
    if (new URL(url).pathname === '/v1/tcp_warming') {
      this.warmings += 1;
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    }
    const body = JSON.parse(String(init?.body)) as Record<string, any>;
    this.requests.push({ url, body });
    const next = this.script.shift();
    const id = `chatcmpl-${this.requests.length}`;
    if (next === undefined) throw new Error(`FakeCerebras: no reply scripted for ${url}`);
    if ('status' in next) return new Response(JSON.stringify({ message: next.message, type: next.type, param: '', code: next.code }), { status: next.status, headers: { 'content-type': 'application/json' } });
    if (body.stream !== true) return new Response(JSON.stringify(responseOf(next, id)), { headers: { 'content-type': 'application/json' } });
    const sse = chunksOf(next, id).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('') + 'data: [DONE]\n\n';
    return new Response(sse, { headers: { 'content-type': 'text/event-stream' } });
  };
}

const chatCerebras = (fake: FakeCerebras, fields: Record<string, unknown> = {}) =>
  new ChatCerebras({ model: MODEL, apiKey: 'csk-test-not-a-key', fetch: fake.fetch as typeof fetch, maxRetries: 0, ...fields });


/** Two calls, then the answer; Cerebras states each call's cache hits and reasoning tokens. */
const LOOP: CerebrasTurn[] = [
  {
    calls: [
      { id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } },
    ],
    input: 182,
    output: 31,
    cached: 128,
    reasoning: 19,
  },
  { text: 'It is sunny in Paris and in Rome.', input: 251, output: 12, cached: 192, reasoning: 5 },
];


describe('ChatCerebras in createAgent, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`${mode === 'invoke' ? 'agent.invoke' : 'agent.stream (streamMode "messages")'}: the calls under Cerebras' ids with their results, tokens = usage_metadata = the wire's counts, the model that answered`, async () => {
      const fake = new FakeCerebras([...LOOP]);
      const agent = createAgent({ model: chatCerebras(fake), tools: [getWeather], systemPrompt: 'You answer weather questions.' });
      const recorded = recordedPlugin(`lc-cerebras-agent-${mode}`);
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
      expect(fake.requests.map((request) => [new URL(request.url).pathname, request.body.stream, request.body.model, request.body.tools?.[0]?.function?.name])).toEqual(
        Array(2).fill(['/v1/chat/completions', mode === 'stream', MODEL, 'get_weather']),
      );
      expect(fake.requests[0]!.body.messages[0]).toMatchObject({ role: 'system' });
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
      // Tokens: usage_metadata, the wire's prompt, completion and total.
      expect(reported(answers)).toEqual([
        [182, 31, 213],
        [251, 12, 263],
      ]);
      expect(recordedCounts(doc)).toEqual(reported(answers));
      // ChatCerebras keeps none of the usage's details (usage_metadata has the three counts, response_metadata no
      // usage): the cache hits and reasoning tokens Cerebras stated are nowhere the handler can read, so none are said.
      expect(answers.map((m) => [m.usage_metadata?.input_token_details?.cache_read, m.usage_metadata?.output_token_details?.reasoning, m.response_metadata.usage])).toEqual(Array(2).fill([undefined, undefined, undefined]));
      expect(agentSteps(doc).map((step) => step.metrics.cached_tokens)).toEqual([undefined, undefined]);
      // The finish reason: streamed, ChatCerebras keeps the finishing chunk's in generationInfo, which the handler
      // reads; invoked, it keeps none (response_metadata is the response without its choices), so none is said.
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(mode === 'stream' ? ['tool_calls', 'stop'] : [null, null]);
      // The model that answered: response_metadata's `model` invoked, the finishing chunk's generationInfo streamed.
      expect(steps.map((step) => step.model_name)).toEqual([MODEL, MODEL]);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'cerebras']));
      await sameOnNative(recorded);
    });
  }
});

describe('ChatCerebras on its own, through the LangChain adapter', () => {
  it("model.stream() cut by max_completion_tokens: the text, length, the tokens", async () => {
    const fake = new FakeCerebras([{ text: 'The weather in Paris is', finish: 'length', input: 90, output: 8 }]);
    const recorded = recordedPlugin('lc-cerebras-stream-length');
    let merged: AIMessageChunk | undefined;
    for await (const chunk of await chatCerebras(fake, { maxCompletionTokens: 8 }).stream('What is the weather in Paris?', handler(recorded))) merged = merged === undefined ? chunk : merged.concat(chunk);
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, max_completion_tokens: 8 });
    expect(merged!.text).toBe('The weather in Paris is');
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => step.message)).toEqual(['The weather in Paris is']);
    expect(reported([merged!])).toEqual([[90, 8, 98]]);
    expect(recordedCounts(doc)).toEqual([[90, 8, 98]]);
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
    await sameOnNative(recorded);
  });

  // `named`: the error's name as the program catches it. The SDK's errors keep the name `Error` (the handler names
  // them by class); LangChain's caller renames a 429's after what the body says of the limit (a request rate here).
  for (const [status, name, named, type, code, message] of [
    [429, 'RateLimitError', 'RateLimitCapacityError', 'too_many_requests_error', 'request_quota_exceeded', 'Requests per minute limit exceeded - too many requests sent.'],
    [400, 'BadRequestError', 'BadRequestError', 'invalid_request_error', 'wrong_api_format', 'Unsupported parameter: logit_bias.'],
  ] as const) {
    it(`model.invoke() refused with ${status} (${name}): a failed call with Cerebras' status, the turn failed with what the program caught`, async () => {
      const fake = new FakeCerebras([{ status, message, type, code }]);
      const recorded = recordedPlugin(`lc-cerebras-${status}`);
      let caught: Error | undefined;
      try {
        await chatCerebras(fake).invoke('Hello?', handler(recorded));
      } catch (error) {
        caught = error as Error;
      }
      expect([caught!.constructor.name, (caught as Error & { status?: number }).status]).toEqual([name, status]);
      expect(recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload)).toMatchObject([{ status_code: status, error: { type: named, message: `${status} ${message}` } }]);
      expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: named, error_message: caught!.message });
      await sameOnNative(recorded);
    });
  }
});
