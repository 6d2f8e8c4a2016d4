// ChatCohere (`@langchain/cohere`) as LangChain's docs write the program: `createAgent` with a tool, invoked and
// streamed, and `model.invoke` alone. ChatCohere speaks Cohere's v1 chat (`POST /v1/chat`, through the `cohere-ai`
// client it is given: `client: new CohereClient({ token, environment })`), so a loopback server speaks that wire as
// Cohere sends it: snake_case JSON (the client hands LangChain camelCase), tool calls with no id (`{name,
// parameters}`; ChatCohere makes each a uuid), `finish_reason` in capitals (`COMPLETE` after tool calls too), `meta`
// with `tokens` (what the model processed) beside `billed_units`; streamed, one JSON object a line (`stream-start`,
// `text-generation`, `tool-calls-chunk`, `tool-calls-generation`, then `stream-end` with the whole response); an error
// as `{message}` with its HTTP status. Each trajectory is held to what the program got and to the wire; the same hooks
// on native write the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatCohere } from '@langchain/cohere';
import { CohereClient } from 'cohere-ai';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { loopbackApi } from '../support/doc-snippets.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather, agentSteps, reported, recordedCounts, posts, handler } from './langchain-checks.ts';

const MODEL = 'command-r-plus-08-2024';
/** The tokens of Cohere's prompt template, which `tokens` counts and `billed_units` does not. */
const TEMPLATE = 64;

interface CohereTurn {
  text: string;
  calls?: Array<{ name: string; parameters: Record<string, unknown> }>;
  /** Cohere's v1 `finish_reason`: `COMPLETE` (after a text or tool calls), `MAX_TOKENS`, `ERROR_TOXIC`, ... */
  finish?: string;
  input: number;
  output: number;
}

/** A v1 `NonStreamedChatResponse`, as Cohere sends it. */
function responseOf(turn: CohereTurn, index: number): Record<string, unknown> {
  return {
    response_id: `resp-${index}`,
    text: turn.text,
    generation_id: `gen-${index}`,
    chat_history: [],
    finish_reason: turn.finish ?? 'COMPLETE',
    ...(turn.calls === undefined ? {} : { tool_calls: turn.calls }),
    meta: {
      api_version: { version: '1' },
      billed_units: { input_tokens: turn.input - TEMPLATE, output_tokens: turn.output },
      tokens: { input_tokens: turn.input, output_tokens: turn.output },
    },
  };
}

/** The v1 stream: one JSON object a line, the text in two pieces, the calls' chunks then the calls whole, then `stream-end`. */
function eventsOf(turn: CohereTurn, index: number): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [{ is_finished: false, event_type: 'stream-start', generation_id: `gen-${index}` }];
  const middle = Math.floor(turn.text.length / 2);
  if (turn.calls === undefined) {
    for (const text of [turn.text.slice(0, middle), turn.text.slice(middle)]) if (text !== '') events.push({ is_finished: false, event_type: 'text-generation', text });
  } else {
    turn.calls.forEach((call, at) => {
      events.push({ is_finished: false, event_type: 'tool-calls-chunk', tool_call_delta: { index: at, name: call.name } });
      events.push({ is_finished: false, event_type: 'tool-calls-chunk', tool_call_delta: { index: at, parameters: JSON.stringify(call.parameters) } });
    });
    events.push({ is_finished: false, event_type: 'tool-calls-generation', text: turn.text, tool_calls: turn.calls });
  }
  events.push({ is_finished: true, event_type: 'stream-end', finish_reason: turn.finish ?? 'COMPLETE', response: responseOf(turn, index) });
  return events;
}

/** Each request gets the next turn, as JSON or (the request's `stream`) as Cohere's stream; or an error status. */
let script: Array<CohereTurn | { status: number; message: string }> = [];
const requests: Array<{ url: string; body: Record<string, any> }> = [];
let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
beforeAll(async () => {
  server = await loopbackApi(async (url, init) => {
    const body = JSON.parse(init.body) as Record<string, any>;
    requests.push({ url, body });
    const next = script.shift();
    const index = requests.length;
    if (next === undefined) return new Response(JSON.stringify({ message: 'no reply scripted' }), { status: 500 });
    if ('status' in next) return new Response(JSON.stringify({ message: next.message }), { status: next.status, headers: { 'content-type': 'application/json' } });
    if (body.stream !== true) return new Response(JSON.stringify(responseOf(next, index)), { headers: { 'content-type': 'application/json' } });
    return new Response(eventsOf(next, index).map((event) => `${JSON.stringify(event)}\n`).join(''), { headers: { 'content-type': 'application/stream+json' } });
  });
});
afterAll(() => server?.close());

function serve(...turns: Array<CohereTurn | { status: number; message: string }>): void {
  script = turns;
  requests.length = 0;
}

/** ChatCohere as its docs build it, its client pointed at the loopback server. */
const chatCohere = (fields: Record<string, unknown> = {}) =>
  new ChatCohere({ model: MODEL, client: new CohereClient({ token: 'co-test-not-a-key', environment: server!.url, maxRetries: 0 }), maxRetries: 0, ...fields });


/** Two calls (Cohere's words before them are the turn's text), then the answer. */
const LOOP: CohereTurn[] = [
  {
    text: 'I will look up the weather in Paris and Rome.',
    calls: [
      { name: 'get_weather', parameters: { city: 'Paris' } },
      { name: 'get_weather', parameters: { city: 'Rome' } },
    ],
    input: 182,
    output: 31,
  },
  { text: 'It is sunny in Paris and in Rome.', input: 251, output: 12 },
];


describe('ChatCohere in createAgent, through the LangChain adapter', () => {
  const input = { messages: [{ role: 'user', content: 'What is the weather in Paris and Rome?' }] };

  it("agent.invoke: the calls under ChatCohere's ids with their results, tokens = Cohere's `tokens`, COMPLETE after calls is tool_calls, then stop", async () => {
    serve(...LOOP);
    // No systemPrompt: createAgent sends it as a SystemMessage of content blocks, which ChatCohere refuses (text only).
    const agent = createAgent({ model: chatCohere(), tools: [getWeather] });
    const recorded = recordedPlugin('lc-cohere-agent-invoke');
    const { messages } = await agent.invoke(input, handler(recorded));
    // Two requests to /v1/chat, the tool offered in Cohere's v1 shape.
    expect(requests.map((request) => [new URL(request.url).pathname, request.body.stream, request.body.model, request.body.tools?.[0]?.name])).toEqual(Array(2).fill(['/v1/chat', false, MODEL, 'get_weather']));
    expect(requests[0]!.body.message).toBe('What is the weather in Paris and Rome?');
    // The second request sends the tools' results back, under the calls they answer.
    expect(requests[1]!.body.tool_results.map((r: any) => [r.call.parameters.city, r.outputs[0].output])).toEqual([
      ['Paris', 'It is sunny in Paris.'],
      ['Rome', 'It is sunny in Rome.'],
    ]);
    const answers = messages.filter((m) => AIMessage.isInstance(m)) as AIMessage[];
    // The words Cohere said before its calls are the first message's text.
    expect(answers.map((m) => m.text)).toEqual([LOOP[0]!.text, LOOP[1]!.text]);
    // Cohere's v1 calls carry no id: ChatCohere gives each a uuid, which the ToolMessages answer.
    const ids = answers[0]!.tool_calls!.map((call) => call.id!);
    expect(new Set(ids).size).toBe(2);

    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
    expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
      [ids[0], 'get_weather', { city: 'Paris' }],
      [ids[1], 'get_weather', { city: 'Rome' }],
    ]);
    expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content])).toEqual([
      [ids[0], 'It is sunny in Paris.'],
      [ids[1], 'It is sunny in Rome.'],
    ]);
    // Tokens: usage_metadata, which is Cohere's `tokens` (the prompt with Cohere's template; `billed_units` less).
    expect(reported(answers)).toEqual([
      [182, 31, 213],
      [251, 12, 263],
    ]);
    expect(recordedCounts(doc)).toEqual(reported(answers));
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 433, total_completion_tokens: 43 });
    // Cohere's v1 says COMPLETE after an answer of tool calls as after a text; ChatCohere keeps it as `finishReason`.
    expect(answers.map((m) => m.response_metadata.finishReason)).toEqual(['COMPLETE', 'COMPLETE']);
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
    // Cohere's answer names no model: the one asked for, under ChatCohere's provider name.
    expect(steps.map((step) => step.model_name)).toEqual([MODEL, MODEL]);
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'cohere']));
    await sameOnNative(recorded);
  });

  it("agent.stream: ChatCohere garbles its streamed calls' arguments, LangChain refuses them and the agent stops; the trajectory says so", async () => {
    serve(...LOOP);
    const agent = createAgent({ model: chatCohere(), tools: [getWeather] });
    const recorded = recordedPlugin('lc-cohere-agent-stream');
    let messages: BaseMessage[] = [];
    // The model streams (the request says `stream: true`), but ChatCohere tells LangChain its tokens without their
    // chunks, which the messages stream passes on only whole, once the model has answered.
    for await (const [kind, value] of await agent.stream(input, { ...handler(recorded), streamMode: ['messages', 'values'] })) {
      if (kind === 'values') messages = (value as { messages: BaseMessage[] }).messages;
    }
    expect(requests.map((request) => [new URL(request.url).pathname, request.body.stream])).toEqual([['/v1/chat', true]]);
    // ChatCohere 1.0.5 gives its stream-end chunk the calls' `parameters` objects as tool_call_chunks' `args`, which
    // must be text: merged, each is "[object Object]", which LangChain cannot parse. No tool runs; the agent ends on
    // that message (with no text: ChatCohere keeps Cohere's words before the calls in additional_kwargs only).
    const answer = messages.at(-1) as AIMessage;
    expect(answer.tool_calls).toEqual([]);
    expect(answer.invalid_tool_calls!.map((call) => [call.name, call.args, call.error])).toEqual(Array(2).fill(['get_weather', '[object Object]', 'Malformed args.']));
    expect(answer.additional_kwargs.text).toBe(LOOP[0]!.text);
    const ids = answer.invalid_tool_calls!.map((call) => call.id);

    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => step.message)).toEqual(['']);
    // The model asked for the calls, with what LangChain holds of their arguments, each refused with LangChain's error.
    expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual(ids.map((id) => [id, 'get_weather', { raw: '[object Object]' }]));
    expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content, r.extra.metadata['error.type']])).toEqual(ids.map((id) => [id, 'Malformed args.', 'ToolCallRefused']));
    expect(reported([answer])).toEqual([[182, 31, 213]]);
    expect(recordedCounts(doc)).toEqual([[182, 31, 213]]);
    // Streamed, the finish reason is the stream-end response's, merged into generationInfo.
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls']);
    expect(steps[0]!.model_name).toBe(MODEL);
    await sameOnNative(recorded);
  });
});

describe('ChatCohere on its own, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`model.${mode}() cut by MAX_TOKENS: the text, length, the tokens`, async () => {
      serve({ text: 'The weather in Paris is', finish: 'MAX_TOKENS', input: 90, output: 8 });
      const recorded = recordedPlugin(`lc-cohere-alone-${mode}`);
      const model = chatCohere();
      let answer: AIMessage | AIMessageChunk;
      if (mode === 'invoke') answer = await model.invoke('What is the weather in Paris?', handler(recorded));
      else {
        let merged: AIMessageChunk | undefined;
        for await (const chunk of await model.stream('What is the weather in Paris?', handler(recorded))) merged = merged === undefined ? chunk : merged.concat(chunk);
        answer = merged!;
      }
      expect(requests.map((request) => [request.body.stream, request.body.message])).toEqual([[mode === 'stream', 'What is the weather in Paris?']]);
      expect(answer.text).toBe('The weather in Paris is');
      const { doc, agent: steps } = await finishedRun(recorded);
      expect(steps.map((step) => step.message)).toEqual(['The weather in Paris is']);
      expect(reported([answer])).toEqual([[90, 8, 98]]);
      expect(recordedCounts(doc)).toEqual([[90, 8, 98]]);
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
      await sameOnNative(recorded);
    });
  }

  it("ERROR_TOXIC: Cohere's filter withheld the answer, content_filter", async () => {
    serve({ text: '', finish: 'ERROR_TOXIC', input: 40, output: 0 });
    const recorded = recordedPlugin('lc-cohere-toxic');
    const answer = await chatCohere().invoke('Say something awful.', handler(recorded));
    expect(answer.response_metadata.finishReason).toBe('ERROR_TOXIC');
    await finishedRun(recorded);
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['content_filter']);
    await sameOnNative(recorded);
  });

  for (const [status, name, message] of [
    [429, 'TooManyRequestsError', 'You are using a Trial key, which is limited to 10 API calls / minute.'],
    [400, 'BadRequestError', "invalid request: message must be at least 1 token long or tool results must be specified."],
  ] as const) {
    it(`a ${status} (${name}): a failed call with Cohere's status, the turn failed with what the program caught`, async () => {
      serve({ status, message });
      const recorded = recordedPlugin(`lc-cohere-${status}`);
      let caught: Error | undefined;
      try {
        await chatCohere().invoke('Hello?', handler(recorded));
      } catch (error) {
        caught = error as Error;
      }
      expect(caught).toMatchObject({ name, statusCode: status, body: { message } });
      expect(recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload)).toMatchObject([{ status_code: status, error: { type: name } }]);
      expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: name, error_message: caught!.message });
      await sameOnNative(recorded);
    });
  }
});
