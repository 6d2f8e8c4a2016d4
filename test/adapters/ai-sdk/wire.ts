// A fake `fetch` for the AI SDK's real provider packages (`createOpenAI({ fetch })`,
// `createAnthropic({ fetch })`, `createGoogleGenerativeAI({ fetch })`) that
// answers with the providers' own wire formats: OpenAI Responses and Chat
// Completions, Anthropic Messages, Gemini generateContent and
// streamGenerateContent, each as JSON or as an SSE stream, and Ollama's own
// `/api/chat`, as JSON or as an NDJSON stream, and Cohere's v2 `/chat`, as JSON or as its stream of typed events,
// plus their error bodies. Every request is kept,
// so a test can compare what the trajectory says was sent with what was.
import { wallMs } from '../../support/doc-snippets.ts';
import { paced } from '../../support/paced-wire.ts';
import { type AnthropicBlock, hostedItemEvents, serverToolUsage, type WebSearch, webSearchBlocks, webSearchCallItem } from '../../support/provider-wire.ts';

/** One assistant turn, as a provider would return it. */
export interface Turn {
  /** The provider's response id. */
  id: string;
  /** The model the provider reports (dated; Gemini's `modelVersion`). */
  model: string;
  text?: string;
  /** Reasoning summary (OpenAI), thinking (Anthropic) or thought parts (Gemini). */
  reasoning?: string;
  /**
   * The provider's own stop reason when it is not the one the turn implies: Gemini's `finishReason` (`MAX_TOKENS`,
   * `SAFETY`, ...), Chat Completions' `finish_reason` (`length`, ...), Anthropic's `stop_reason` (`max_tokens`, ...).
   */
  finish?: string;
  toolCalls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  /** Media the model answers with, after the text: Gemini's `inlineData` parts (an image it drew, as base64). */
  inlineData?: Array<{ mimeType: string; data: string }>;
  /**
   * Web searches the provider ran inside this call, before the text: OpenAI Responses `web_search_call` items (with
   * `action.sources`), Anthropic `server_tool_use` blocks each followed by its `web_search_tool_result`.
   */
  webSearches?: WebSearch[];
  /** Other OpenAI hosted tools' Responses items (test/support/provider-wire.ts), after the searches. */
  hostedItems?: Array<Record<string, unknown>>;
  /** Other Anthropic server tools' blocks (`serverToolBlocks`), after the searches. */
  serverTools?: AnthropicBlock[];
  /**
   * Chat Completions as another server speaks it (`@ai-sdk/openai-compatible`'s users): Ollama (no usage details, no
   * usage in a stream unless asked; a streamed tool call whole in one chunk) or DeepSeek (`reasoning_content`, its
   * cache counts as `prompt_cache_hit_tokens`/`prompt_cache_miss_tokens`, the usage on the stream's last chunk), or
   * OpenRouter (openrouterBody), or Azure OpenAI (OpenAI's Chat Completions with Azure's content-filter verdicts: the
   * prompt's in `prompt_filter_results`, each choice's in `content_filter_results`; a stream opens with a chunk of no
   * choices that holds the prompt's; `finish: 'content_filter'` is an answer the filter cut, its category marked
   * filtered), or Groq (each response's `x_groq` with its request id; a stream's usage in the finishing chunk's
   * `x_groq.usage`; a streamed tool call whole in one chunk), or Mistral (the same whole calls, the usage on the
   * finishing chunk, asked or not), or xAI (reasoning tokens apart from `completion_tokens`, in `total_tokens`; what
   * the call cost as `cost_in_usd_ticks`, from `cost`; a stream's every chunk with the usage so far, the finishing
   * one's whole, then a chunk of no choices). On the Responses wire, `'xai'` is xAI's Responses API (@ai-sdk/xai): each reasoning
   * item with its `status`, the usage with xAI's `num_sources_used`, `num_server_side_tools_used` and what the call
   * cost (`cost_in_usd_ticks`, from `cost`). Groq's reasoning is the message's `reasoning` (`reasoning_format:
   * 'parsed'`); Mistral's (Magistral) a `thinking` chunk before the text in the message's `content` array, and its
   * cache reads `num_cached_tokens`. vLLM's reasoning is in both the message's (a delta's) `reasoning` and
   * `reasoning_content`, the same text, as vLLM sent it between renaming the field and removing the old name (vLLM
   * #27752, #33402); its usage is the bare counts.
   */
  server?: 'ollama' | 'deepseek' | 'openrouter' | 'azure' | 'groq' | 'mistral' | 'xai' | 'vllm';
  /** OpenRouter's: the upstream that served the call (its `provider`, e.g. `Anthropic`). */
  provider?: string;
  /** What the call was charged, in USD: OpenRouter's `usage.cost`; xAI's, sent as `usage.cost_in_usd_ticks` (10^10 a dollar). */
  cost?: number;
  usage: Usage;
}

/** The provider's own usage counts. OpenAI and Gemini: `input` includes `cached`. Anthropic: `input` excludes the cache. Gemini and xAI: `reasoning` (thoughts) is apart from `output`. */
export interface Usage {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
  reasoning?: number;
}

export type Wire = 'responses' | 'chat' | 'anthropic' | 'gemini' | 'ollama' | 'cohere';

/** `holdMs`: how long the answer takes, paced by test/support/paced-wire.ts. */
type Reply = { status: number; headers: Record<string, string>; body: string | ReadableStream<Uint8Array>; holdMs?: number | undefined };

export interface Request {
  url: string;
  body: Record<string, any>;
}

/** A fetch that answers each request with the next scripted reply. */
export class FakeProvider {
  readonly requests: Request[] = [];
  readonly #replies: Array<(signal: AbortSignal | undefined, body: Record<string, any>) => Reply | Promise<Reply>> = [];

  /** The `fetch` to hand to `createOpenAI` / `createAnthropic`. */
  readonly fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : String((input as { url?: unknown }).url);
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : {};
    this.requests.push({ url, body });
    const next = this.#replies.shift();
    if (next === undefined) throw new Error(`FakeProvider: no reply scripted for request ${this.requests.length} (${url})`);
    const askedMs = wallMs();
    const reply = await next(init?.signal ?? undefined, body);
    const response = new Response(reply.body, { status: reply.status, headers: reply.headers });
    return reply.holdMs === undefined ? response : paced(response, { lastByteMs: reply.holdMs }, askedMs);
  };

  /**
   * The next request gets this turn, as JSON or as an SSE stream. `hang`:
   * the stream sends its first half and then waits, until the request is
   * aborted (then it fails, as a real fetch body does). `cut`: the stream
   * sends its first half and then breaks: `'reset'`, the connection is
   * reset; an object, that frame is sent and the stream ends (Gemini's
   * `{error: {code, message, status}}` mid-stream). `holdMs`: the answer
   * takes that long, as a model's does: JSON is sent after it, a stream
   * sends its first frame at once and the rest spread over it. `pause`: the
   * stream sends its first half, then the rest once the promise settles
   * (a model still answering while the test acts), unless the request is
   * aborted first (then it fails, as `hang`'s does). `stall`: the
   * model has produced nothing yet when the request is aborted: `'request'`,
   * no answer comes and the fetch fails with the abort, as a real fetch
   * does; `'head'`, the stream sends the frames that come before any output
   * (Responses' `response.created` and `response.in_progress`, Anthropic's
   * `message_start`) and waits, until the request is aborted.
   */
  reply(wire: Wire, turn: Turn, options: { stream?: boolean; hang?: boolean; pause?: Promise<unknown>; cut?: 'reset' | Record<string, unknown>; holdMs?: number; stall?: 'request' | 'head' } = {}): this {
    this.#replies.push(async (signal, request) => {
      if (options.stall === 'request') return await abortedWith(signal);
      if (options.stream !== true) return { ...json(body(wire, turn)), holdMs: options.holdMs };
      // Chat Completions streams its usage only when the request asks (`stream_options.include_usage`); the OpenAI
      // clients these tests run all ask, an OpenAI-compatible one only when told to (`includeUsage`).
      const frames = events(wire, turn, turn.server === undefined || request.stream_options?.include_usage === true);
      if (options.stall === 'head') return sse(frames.slice(0, frames.findIndex((frame) => !HEAD_EVENTS.has(frame.event ?? ''))), { hangUntil: signal });
      const half = frames.slice(0, Math.ceil(frames.length / 2));
      if (options.hang === true) return sse(half, { hangUntil: signal });
      if (options.pause !== undefined) return sse(half, { hangUntil: signal, thenAfter: { pause: options.pause, frames: frames.slice(half.length) } });
      if (options.cut === 'reset') return sse(half, { reset: true });
      return { ...sse(options.cut === undefined ? frames : [...half, { data: options.cut }], { ndjson: wire === 'ollama' }), holdMs: options.holdMs };
    });
    return this;
  }

  /**
   * The next request fails with the provider's error body. OpenAI's and
   * Anthropic's retryable statuses carry `retry-after-ms`, as they send it;
   * Gemini sends no retry header (its body's `RetryInfo` says when), so the
   * SDK waits its own backoff (2 s) before the retry. Ollama's body is
   * `{"error": message}` alone, with no retry header.
   */
  fail(wire: Wire, status: number, message: string, server?: Turn['server']): this {
    this.#replies.push(() => ({
      status,
      headers: { 'content-type': 'application/json', ...(wire === 'gemini' || wire === 'ollama' ? {} : { 'retry-after-ms': '5' }) },
      body: JSON.stringify(
        server !== undefined && SERVER_ERRORS[server] !== undefined
          ? SERVER_ERRORS[server]!(status, message)
          : wire === 'cohere'
          ? { id: 'b7a4c1e0-9f3d-4e2a-8c55-3d1f0e6a9b21', message }
          : wire === 'ollama'
          ? { error: message }
          : wire === 'anthropic'
          ? { type: 'error', error: { type: status === 529 ? 'overloaded_error' : 'api_error', message } }
          : wire === 'gemini'
            ? { error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'INTERNAL', details: status === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }] : [] } }
            : { error: { message, type: 'server_error', param: null, code: null } },
      ),
    }));
    return this;
  }

  /**
   * The next request is OpenAI's embeddings endpoint (`/v1/embeddings`): one vector per input, in order, and the
   * tokens the inputs counted.
   */
  embeddings(model: string, vectors: number[][], tokens: number): this {
    this.#replies.push(() => json({ object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    return this;
  }

  /**
   * The next request is refused by Azure OpenAI's prompt filter: a 400 whose error is `code: 'content_filter'`, with
   * the filter's verdicts in `innererror.content_filter_result` (the `violence` category filtered).
   */
  azurePromptFiltered(): this {
    const message = "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.";
    this.#replies.push(() => ({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { message, type: null, param: 'prompt', code: 'content_filter', status: 400, innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: azureFilterResults('violence') } } }),
    }));
    return this;
  }

  get pending(): number {
    return this.#replies.length;
  }
}

/**
 * The error bodies of servers that do not answer OpenAI's: xAI's Responses API (`{code, error}`), Mistral's
 * (`{object: 'error', message, type, param, code}`), Groq's (OpenAI's `error` with Groq's own `type` and `code`).
 */
const SERVER_ERRORS: Partial<Record<NonNullable<Turn['server']>, (status: number, message: string) => Record<string, unknown>>> = {
  xai: (status, message) => ({ code: status === 429 ? 'Too many requests' : 'Internal error', error: message }),
  mistral: (status, message) => ({ object: 'error', message, type: status === 429 ? 'rate_limited' : 'internal_server_error', param: null, code: status === 429 ? '1300' : null }),
  groq: (status, message) => ({ error: { message, type: status === 429 ? 'tokens' : 'internal_server_error', code: status === 429 ? 'rate_limit_exceeded' : null } }),
};

/** The stream frames a provider sends before the model's first output. */
const HEAD_EVENTS = new Set(['response.created', 'response.in_progress', 'message_start']);

/** Never answers: fails with the signal's reason once the request is aborted. */
function abortedWith(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(signal!.reason);
    if (signal?.aborted === true) fail();
    else signal?.addEventListener('abort', fail, { once: true });
  });
}

function json(value: unknown): Reply {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) };
}

/** The google.rpc status Gemini's error body names for an HTTP status. */
const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

/**
 * An SSE body (with `ndjson`, Ollama's stream: one JSON object a line); with `hangUntil`, it stays open after the frames until that
 * signal aborts; with `thenAfter`, it sends those frames and closes once
 * their pause settles (unless `hangUntil` aborted first); with `reset`,
 * it fails after the frames, as a body whose connection was reset does.
 */
function sse(
  frames: Array<{ event?: string; data: unknown }>,
  end: { hangUntil?: AbortSignal | undefined; thenAfter?: { pause: Promise<unknown>; frames: Array<{ event?: string; data: unknown }> }; reset?: boolean; ndjson?: boolean } = {},
): Reply {
  const encoder = new TextEncoder();
  let done = false;
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, some: Array<{ event?: string; data: unknown }>) => {
    for (const frame of some) {
      const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
      controller.enqueue(encoder.encode(end.ndjson === true ? `${data}\n` : `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${data}\n\n`));
    }
  };
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      send(controller, frames);
      const rest = end.thenAfter;
      if (end.reset === true) controller.error(new TypeError('terminated', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }));
      else if (end.hangUntil === undefined && rest === undefined) controller.close();
      else {
        end.hangUntil?.addEventListener('abort', () => void (done || ((done = true), controller.error(new DOMException('This operation was aborted', 'AbortError')))), { once: true });
        void rest?.pause.finally(() => {
          if (done) return;
          done = true;
          send(controller, rest.frames);
          controller.close();
        });
      }
    },
    // The reader gave up (the SDK cancels the provider's stream when its own is cancelled): nothing more is sent.
    cancel() {
      done = true;
    },
  });
  return { status: 200, headers: { 'content-type': end.ndjson === true ? 'application/x-ndjson' : 'text/event-stream' }, body: stream };
}

const created = 1_764_000_000;

// ------------------------------------------------------------------ OpenAI Responses

function responsesUsage(usage: Usage, turn?: Turn): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cached ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: usage.input + usage.output,
    // xAI's: its `output_tokens` holds the reasoning, as OpenAI's does; what the call cost, in ticks of 10^-10 USD.
    ...(turn?.server === 'xai' ? { num_sources_used: 0, num_server_side_tools_used: 0, ...(turn.cost === undefined ? {} : { cost_in_usd_ticks: Math.round(turn.cost * 1e10) }) } : {}),
  };
}

function responsesOutput(turn: Turn): Array<Record<string, unknown>> {
  const output: Array<Record<string, unknown>> = [];
  if (turn.reasoning !== undefined) output.push({ id: `rs_${turn.id}`, type: 'reasoning', summary: [{ type: 'summary_text', text: turn.reasoning }], ...(turn.server === 'xai' ? { status: 'completed' } : {}) });
  for (const search of turn.webSearches ?? []) {
    output.push(webSearchCallItem(search));
  }
  output.push(...(turn.hostedItems ?? []));
  if (turn.text !== undefined) {
    output.push({ id: `msg_${turn.id}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
  }
  for (const call of turn.toolCalls ?? []) {
    output.push({ id: `fc_${call.id}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) });
  }
  return output;
}

function responsesBody(turn: Turn): Record<string, unknown> {
  return {
    id: turn.id,
    object: 'response',
    created_at: created,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: turn.model,
    output: responsesOutput(turn),
    parallel_tool_calls: true,
    usage: responsesUsage(turn.usage, turn),
  };
}

function responsesEvents(turn: Turn): Array<{ event?: string; data: unknown }> {
  const frames: Array<{ event?: string; data: unknown }> = [];
  let sequence = 0;
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, sequence_number: sequence++, ...data } });
  const head = { id: turn.id, object: 'response', created_at: created, status: 'in_progress', model: turn.model, output: [], usage: null };
  push('response.created', { response: head });
  push('response.in_progress', { response: head });
  responsesOutput(turn).forEach((item, index) => {
    if (item.type === 'reasoning') {
      const text = turn.reasoning!;
      push('response.output_item.added', { output_index: index, item: { id: item.id, type: 'reasoning', summary: [], ...(turn.server === 'xai' ? { status: 'in_progress' } : {}) } });
      push('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      for (const delta of halves(text)) push('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta });
      push('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text });
      push('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      const text = turn.text!;
      push('response.output_item.added', { output_index: index, item: { id: item.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      push('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const delta of halves(text)) push('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
      push('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
      push('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else if (item.type !== 'function_call') {
      for (const event of hostedItemEvents(item, index)) push(event.type, event.fields);
    } else {
      const args = item.arguments as string;
      push('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of halves(args)) push('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta });
      push('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: args });
    }
    push('response.output_item.done', { output_index: index, item });
  });
  push('response.completed', { response: responsesBody(turn) });
  return frames;
}

// ------------------------------------------------------------------ OpenAI Chat Completions

function chatUsage(usage: Usage, server?: Turn['server'], cost?: number): Record<string, unknown> {
  const counts = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
  if (server === 'ollama' || server === 'vllm') return counts;
  if (server === 'xai') {
    // xAI counts the reasoning apart from `completion_tokens` (in `completion_tokens_details`) and in `total_tokens`.
    return {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output + (usage.reasoning ?? 0),
      prompt_tokens_details: { text_tokens: usage.input, audio_tokens: 0, image_tokens: 0, cached_tokens: usage.cached ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      num_sources_used: 0,
      // What the call cost, in ticks of 10^-10 USD (xAI's cost-tracking docs: every Chat Completions usage states it).
      ...(cost === undefined ? {} : { cost_in_usd_ticks: Math.round(cost * 1e10) }),
    };
  }
  if (server === 'deepseek') {
    // DeepSeek's `prompt_tokens` holds the cache hits; reasoning tokens (deepseek-reasoner) are part of `completion_tokens`.
    return { ...counts, prompt_cache_hit_tokens: usage.cached ?? 0, prompt_cache_miss_tokens: usage.input - (usage.cached ?? 0), completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 } };
  }
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    // Mistral states its cache reads as `num_cached_tokens`.
    ...(server === 'mistral' && usage.cached !== undefined ? { num_cached_tokens: usage.cached } : {}),
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function chatFinish(turn: Turn): string {
  return turn.finish ?? ((turn.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
}

const FINGERPRINT = { ollama: 'fp_ollama', deepseek: 'fp_deepseek_prod', openrouter: 'fp_openrouter', azure: 'fp_azure', groq: 'fp_groq', mistral: 'fp_mistral', xai: 'fp_xai', vllm: null } as const;

/** Azure's content-filter verdicts on a text: every category safe, but `filtered`, which the filter cut. */
function azureFilterResults(filtered?: string): Record<string, unknown> {
  const severity = (category: string) => (category === filtered ? { filtered: true, severity: 'medium' } : { filtered: false, severity: 'safe' });
  return { hate: severity('hate'), self_harm: severity('self_harm'), sexual: severity('sexual'), violence: severity('violence') };
}

/** The prompt's verdicts, as Azure puts them beside the choices. */
const AZURE_PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: { ...azureFilterResults(), jailbreak: { filtered: false, detected: false } } }];

/** A choice's verdicts: the filter cut a `content_filter` answer for violence; an answer of tool calls has none to judge. */
function azureChoiceFilter(turn: Turn): Record<string, unknown> {
  if (turn.server !== 'azure') return {};
  return { content_filter_results: turn.text === undefined && turn.finish !== 'content_filter' ? {} : azureFilterResults(turn.finish === 'content_filter' ? 'violence' : undefined) };
}

/** Groq's usage: its timings around the counts, the details only where the turn has them (a cache hit, reasoning). */
function groqUsage(usage: Usage): Record<string, unknown> {
  return {
    queue_time: 0.01,
    ...chatUsage(usage, 'ollama'),
    ...(usage.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached } }),
    ...(usage.reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: usage.reasoning } }),
    prompt_time: 0.02,
    completion_time: 0.05,
    total_time: 0.07,
  };
}

/** Mistral's thinking (Magistral): a `thinking` chunk of text chunks, in the content array. */
const mistralThinking = (text: string) => ({ type: 'thinking', thinking: [{ type: 'text', text }] });

function chatBody(turn: Turn): Record<string, unknown> {
  const calls = (turn.toolCalls ?? []).map((call, index) => ({ ...(turn.server === 'ollama' ? { index } : {}), id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  const reasoning = turn.reasoning === undefined ? {} : turn.server === 'deepseek' ? { reasoning_content: turn.reasoning } : turn.server === 'groq' ? { reasoning: turn.reasoning } : turn.server === 'vllm' ? { reasoning: turn.reasoning, reasoning_content: turn.reasoning } : {};
  // A Mistral answer that thought is a content array: the thinking, then the text.
  const mistralContent = turn.server === 'mistral' && turn.reasoning !== undefined ? [mistralThinking(turn.reasoning), ...(turn.text === undefined ? [] : [{ type: 'text', text: turn.text }])] : undefined;
  const refusal = turn.server === undefined || turn.server === 'azure' ? { refusal: null } : {};
  return {
    id: turn.id,
    object: 'chat.completion',
    created,
    model: turn.model,
    ...(turn.server === 'azure' ? { prompt_filter_results: AZURE_PROMPT_FILTER } : {}),
    choices: [{ index: 0, message: { role: 'assistant', content: mistralContent ?? turn.text ?? (turn.server === 'ollama' ? '' : null), ...reasoning, ...refusal, ...(calls.length > 0 ? { tool_calls: calls } : {}) }, logprobs: null, finish_reason: chatFinish(turn), ...azureChoiceFilter(turn) }],
    usage: turn.server === 'groq' ? groqUsage(turn.usage) : chatUsage(turn.usage, turn.server, turn.cost),
    system_fingerprint: turn.server === undefined ? 'fp_test' : FINGERPRINT[turn.server],
    ...(turn.server === 'groq' ? { x_groq: { id: `req_${turn.id}` } } : {}),
  };
}

function chatEvents(turn: Turn, withUsage: boolean): Array<{ data: unknown }> {
  const fingerprint = turn.server === undefined ? 'fp_test' : FINGERPRINT[turn.server];
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    data: { id: turn.id, object: 'chat.completion.chunk', created, model: turn.model, system_fingerprint: fingerprint, choices, ...extra },
  });
  const usage = withUsage ? { usage: chatUsage(turn.usage, turn.server) } : {};
  const frames: Array<{ data: unknown }> = [chunk([{ index: 0, delta: { role: 'assistant', content: turn.server === 'deepseek' && turn.reasoning !== undefined ? null : '', ...(turn.server === undefined || turn.server === 'azure' ? { refusal: null } : {}) }, logprobs: null, finish_reason: null }])];
  // Azure opens with the prompt's verdicts in a chunk of no choices, before it knows the id or the model.
  if (turn.server === 'azure') frames.unshift({ data: { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: AZURE_PROMPT_FILTER } });
  if (turn.server === 'deepseek') for (const delta of halves(turn.reasoning ?? '')) frames.push(chunk([{ index: 0, delta: { content: null, reasoning_content: delta }, logprobs: null, finish_reason: null }]));
  if (turn.server === 'groq') for (const delta of halves(turn.reasoning ?? '')) frames.push(chunk([{ index: 0, delta: { reasoning: delta }, logprobs: null, finish_reason: null }]));
  if (turn.server === 'vllm') for (const delta of halves(turn.reasoning ?? '')) frames.push(chunk([{ index: 0, delta: { reasoning: delta, reasoning_content: delta }, logprobs: null, finish_reason: null }]));
  if (turn.server === 'mistral') for (const delta of halves(turn.reasoning ?? '')) frames.push(chunk([{ index: 0, delta: { content: [mistralThinking(delta)] }, finish_reason: null }]));
  for (const delta of halves(turn.text ?? '')) frames.push(chunk([{ index: 0, delta: { content: delta }, logprobs: null, finish_reason: null, ...azureChoiceFilter({ ...turn, finish: undefined }) }]));
  (turn.toolCalls ?? []).forEach((call, index) => {
    if (turn.server === 'ollama' || turn.server === 'mistral' || turn.server === 'groq' || turn.server === 'xai') {
      // Ollama, Mistral, Groq and xAI send each call whole (@ai-sdk/xai 4.x's chunk schema requires a call's id, name
      // and arguments in its one delta).
      frames.push(chunk([{ index: 0, delta: { role: 'assistant', content: '', tool_calls: [{ id: call.id, index, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] }, finish_reason: null }]));
      return;
    }
    frames.push(chunk([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, logprobs: null, finish_reason: null }]));
    for (const part of halves(JSON.stringify(call.args))) frames.push(chunk([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: part } }] }, logprobs: null, finish_reason: null }]));
  });
  // DeepSeek puts the usage on the chunk that finishes; OpenAI and Ollama send it in a chunk of its own, with no choices.
  if (turn.server === 'deepseek') frames.push(chunk([{ index: 0, delta: { content: '' }, logprobs: null, finish_reason: chatFinish(turn) }], usage));
  else if (turn.server === 'mistral') frames.push(chunk([{ index: 0, delta: { content: '' }, finish_reason: chatFinish(turn) }], { usage: chatUsage(turn.usage, turn.server) }));
  else if (turn.server === 'groq') {
    // Groq's finishing chunk carries the usage in `x_groq`, beside the request id every chunk of its stream has.
    frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: chatFinish(turn) }], { x_groq: { id: `req_${turn.id}`, usage: groqUsage(turn.usage) } }));
    if (withUsage) frames.push(chunk([], usage));
  } else if (turn.server === 'xai') {
    frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: chatFinish(turn) }]));
    // xAI counts in every chunk: the prompt's tokens, and the output's so far (the finishing chunk's, all of them, with
    // the call's cost).
    frames.forEach((frame, index) => {
      const last = index === frames.length - 1;
      const sofar = Math.round((turn.usage.output * (index + 1)) / frames.length);
      Object.assign(frame.data as Record<string, unknown>, { usage: chatUsage({ ...turn.usage, output: sofar }, 'xai', last ? turn.cost : undefined) });
    });
    frames.push(chunk([], { usage: chatUsage(turn.usage, 'xai', turn.cost) }));
  } else {
    frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: chatFinish(turn), ...(turn.finish === 'content_filter' ? azureChoiceFilter(turn) : {}) }]));
    if (withUsage) frames.push(chunk([], usage));
  }
  frames.push({ data: '[DONE]' });
  return frames;
}

// ------------------------------------------------------------------ OpenRouter Chat Completions

/**
 * OpenRouter's usage, as its usage-accounting docs state it (always sent, streamed or not): OpenAI's counts
 * (`prompt_tokens` holds the cache reads and writes), the cache writes beside the reads in `prompt_tokens_details`,
 * and what the call was charged (`cost`, USD) with its breakdown (`cost_details`, the upstream's cost set only for
 * BYOK).
 */
function openrouterUsage(turn: Turn): Record<string, unknown> {
  const { usage } = turn;
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    cost: turn.cost ?? 0,
    is_byok: false,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, cache_write_tokens: usage.cacheWrite ?? 0, audio_tokens: 0, video_tokens: 0 },
    cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, image_tokens: 0 },
  };
}

/** The upstream's own stop reason OpenRouter passes along (`native_finish_reason`): Anthropic's, for these turns. */
function nativeFinish(turn: Turn): string {
  const finish = chatFinish(turn);
  return finish === 'tool_calls' ? 'tool_use' : finish === 'stop' ? 'end_turn' : finish === 'length' ? 'max_tokens' : finish;
}

function reasoningDetails(text: string): Array<Record<string, unknown>> {
  return [{ type: 'reasoning.text', text, signature: 'sig_test', format: 'anthropic-claude-v1', index: 0 }];
}

/**
 * A completion as OpenRouter returns it: the `gen-` id, the upstream that served it (`provider`), the model that
 * answered as OpenRouter names it (`model`), the reasoning as text and as details on the message, each call's
 * `index`, and the upstream's stop reason beside OpenRouter's.
 */
function openrouterBody(turn: Turn): Record<string, unknown> {
  const calls = (turn.toolCalls ?? []).map((call, index) => ({ id: call.id, index, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  const reasoning = turn.reasoning === undefined ? {} : { reasoning: turn.reasoning, reasoning_details: reasoningDetails(turn.reasoning) };
  return {
    id: turn.id,
    provider: turn.provider,
    model: turn.model,
    object: 'chat.completion',
    created,
    choices: [{ logprobs: null, finish_reason: chatFinish(turn), native_finish_reason: nativeFinish(turn), index: 0, message: { role: 'assistant', content: turn.text ?? '', refusal: null, ...reasoning, ...(calls.length > 0 ? { tool_calls: calls } : {}) } }],
    usage: openrouterUsage(turn),
  };
}

/**
 * OpenRouter's stream: every chunk names the provider and the model; reasoning comes as `reasoning` deltas with their
 * details; the finish chunk is followed by one more that carries the usage (and the cost) with an empty delta, as
 * OpenRouter sends it whether the request asked for usage or not.
 */
function openrouterEvents(turn: Turn): Array<{ data: unknown }> {
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
    data: { id: turn.id, provider: turn.provider, model: turn.model, object: 'chat.completion.chunk', created, choices: [{ index: 0, delta: { role: 'assistant', ...delta }, finish_reason: finish, native_finish_reason: finish === null ? null : nativeFinish(turn), logprobs: null }], ...extra },
  });
  const frames: Array<{ data: unknown }> = [];
  for (const delta of halves(turn.reasoning ?? '')) frames.push(chunk({ content: '', reasoning: delta, reasoning_details: reasoningDetails(delta) }, null));
  for (const delta of halves(turn.text ?? '')) frames.push(chunk({ content: delta }, null));
  (turn.toolCalls ?? []).forEach((call, index) => {
    frames.push(chunk({ content: null, tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null));
    for (const part of halves(JSON.stringify(call.args))) frames.push(chunk({ content: null, tool_calls: [{ index, type: 'function', function: { arguments: part } }] }, null));
  });
  frames.push(chunk({ content: '' }, chatFinish(turn)));
  frames.push(chunk({ content: '' }, null, { usage: openrouterUsage(turn) }));
  frames.push({ data: '[DONE]' });
  return frames;
}

// ------------------------------------------------------------------ Anthropic Messages

function anthropicUsage(usage: Usage, content: ReadonlyArray<Record<string, unknown>> = []): Record<string, unknown> {
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite ?? 0,
    cache_read_input_tokens: usage.cached ?? 0,
    output_tokens: usage.output,
    ...serverToolUsage(content as AnthropicBlock[]),
    service_tier: 'standard',
  };
}

function anthropicContent(turn: Turn): Array<Record<string, unknown>> {
  const content: Array<Record<string, unknown>> = [];
  if (turn.reasoning !== undefined) content.push({ type: 'thinking', thinking: turn.reasoning, signature: `sig_${turn.id}` });
  for (const search of turn.webSearches ?? []) content.push(...(webSearchBlocks(search) as Array<Record<string, unknown>>));
  content.push(...((turn.serverTools ?? []) as Array<Record<string, unknown>>));
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
  return content;
}

function anthropicStop(turn: Turn): string {
  return turn.finish ?? ((turn.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn');
}

function anthropicBody(turn: Turn): Record<string, unknown> {
  return {
    id: turn.id,
    type: 'message',
    role: 'assistant',
    model: turn.model,
    content: anthropicContent(turn),
    stop_reason: anthropicStop(turn),
    stop_sequence: null,
    usage: anthropicUsage(turn.usage, anthropicContent(turn)),
  };
}

function anthropicEvents(turn: Turn): Array<{ event: string; data: unknown }> {
  const frames: Array<{ event: string; data: unknown }> = [];
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, ...data } });
  // message_start carries the input side of the usage; message_delta the final output count.
  push('message_start', {
    message: { id: turn.id, type: 'message', role: 'assistant', model: turn.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicUsage(turn.usage), output_tokens: 1 } },
  });
  anthropicContent(turn).forEach((block, index) => {
    if (block.type === 'thinking') {
      push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const delta of halves(block.thinking as string)) push('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: delta } });
      push('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'text') {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const delta of halves(block.text as string)) push('content_block_delta', { index, delta: { type: 'text_delta', text: delta } });
    } else if ((block.type as string).endsWith('_tool_result')) {
      // A server tool's result arrives whole in its block's start.
      push('content_block_start', { index, content_block: block });
    } else {
      push('content_block_start', { index, content_block: { ...block, input: {} } });
      for (const part of halves(JSON.stringify(block.input))) push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    push('content_block_stop', { index });
  });
  push('message_delta', { delta: { stop_reason: anthropicStop(turn), stop_sequence: null }, usage: { output_tokens: turn.usage.output, ...serverToolUsage(anthropicContent(turn) as AnthropicBlock[]) } });
  push('message_stop', {});
  return frames;
}

// ------------------------------------------------------------------ Gemini generateContent

/** `usageMetadata`: `promptTokenCount` includes `cachedContentTokenCount`; `thoughtsTokenCount` is apart from `candidatesTokenCount`. */
function geminiUsage(usage: Usage): Record<string, unknown> {
  return {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.output + (usage.reasoning ?? 0),
    ...(usage.cached === undefined ? {} : { cachedContentTokenCount: usage.cached }),
    ...(usage.reasoning === undefined ? {} : { thoughtsTokenCount: usage.reasoning }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.input }],
  };
}

/** The answer's parts: thoughts, text, then function calls (which carry no id on the Gemini API). */
function geminiParts(turn: Turn): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [];
  if (turn.reasoning !== undefined) parts.push({ text: turn.reasoning, thought: true });
  if (turn.text !== undefined) parts.push({ text: turn.text });
  for (const inlineData of turn.inlineData ?? []) parts.push({ inlineData });
  for (const call of turn.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.args } });
  return parts;
}

function geminiBody(turn: Turn): Record<string, unknown> {
  const parts = geminiParts(turn);
  return {
    // An answer blocked for safety has no content.
    candidates: [{ ...(parts.length === 0 ? {} : { content: { parts, role: 'model' } }), finishReason: turn.finish ?? 'STOP', index: 0 }],
    usageMetadata: geminiUsage(turn.usage),
    modelVersion: turn.model,
    responseId: turn.id,
  };
}

/**
 * `streamGenerateContent?alt=sse`: one chunk per part (a text in two), each
 * with the response id, the model version and the usage so far (the prompt
 * count from the first); the last carries the finish reason and the whole
 * usage.
 */
function geminiEvents(turn: Turn): Array<{ data: unknown }> {
  const pieces: Array<Record<string, unknown>> = [];
  for (const part of geminiParts(turn)) {
    if (typeof part.text === 'string') for (const text of halves(part.text)) pieces.push({ ...part, text });
    else pieces.push(part);
  }
  const soFar = { promptTokenCount: turn.usage.input, totalTokenCount: turn.usage.input, ...(turn.usage.cached === undefined ? {} : { cachedContentTokenCount: turn.usage.cached }) };
  // An answer of no parts (one blocked for safety) is one chunk: the finish reason, no content.
  if (pieces.length === 0) return [{ data: { candidates: [{ finishReason: turn.finish ?? 'STOP', index: 0 }], usageMetadata: geminiUsage(turn.usage), modelVersion: turn.model, responseId: turn.id } }];
  return pieces.map((part, index) => {
    const last = index === pieces.length - 1;
    return {
      data: {
        candidates: [{ content: { parts: [part], role: 'model' }, ...(last ? { finishReason: turn.finish ?? 'STOP' } : {}), index: 0 }],
        usageMetadata: last ? geminiUsage(turn.usage) : soFar,
        modelVersion: turn.model,
        responseId: turn.id,
      },
    };
  });
}

// ------------------------------------------------------------------ Ollama /api/chat

/** Ollama's timings, in nanoseconds, as every final answer carries them. */
const OLLAMA_DURATIONS = { total_duration: 1_830_412_250, load_duration: 21_902_125, prompt_eval_duration: 402_117_000, eval_duration: 1_380_006_000 };
const ollamaCreated = '2026-12-05T18:00:00.000000Z';

/**
 * The whole answer's message: `thinking` when the request asked to think, `tool_calls` with no id (each call is its
 * function's name and its arguments as an object).
 */
function ollamaMessage(turn: Turn): Record<string, unknown> {
  return {
    role: 'assistant',
    content: turn.text ?? '',
    ...(turn.reasoning === undefined ? {} : { thinking: turn.reasoning }),
    ...(turn.toolCalls === undefined ? {} : { tool_calls: turn.toolCalls.map((call) => ({ function: { name: call.name, arguments: call.args } })) }),
  };
}

/** The last object of an answer: `done`, why (`done_reason`: `stop` also after tool calls), the counts and timings. */
function ollamaDone(turn: Turn): Record<string, unknown> {
  return { done: true, done_reason: turn.finish ?? 'stop', ...OLLAMA_DURATIONS, prompt_eval_count: turn.usage.input, eval_count: turn.usage.output };
}

/** `"stream": false`: one object, the model name as the request gave it. */
function ollamaBody(turn: Turn): Record<string, unknown> {
  return { model: turn.model, created_at: ollamaCreated, message: ollamaMessage(turn), ...ollamaDone(turn) };
}

/**
 * The NDJSON stream: the thinking and the text each in two pieces, the tool calls whole in one object, then the
 * `done` object with an empty message.
 */
function ollamaEvents(turn: Turn): Array<{ data: unknown }> {
  const frame = (message: Record<string, unknown>, last = false) => ({ data: { model: turn.model, created_at: ollamaCreated, message: { role: 'assistant', content: '', ...message }, ...(last ? ollamaDone(turn) : { done: false }) } });
  return [
    ...halves(turn.reasoning ?? '').map((thinking) => frame({ thinking })),
    ...halves(turn.text ?? '').map((content) => frame({ content })),
    ...(turn.toolCalls === undefined ? [] : [frame({ tool_calls: (ollamaMessage(turn) as { tool_calls: unknown[] }).tool_calls })]),
    frame({}, true),
  ];
}

// ------------------------------------------------------------------ Cohere v2 /chat

/** The tokens Cohere's prompt template adds to what is billed (`tokens` counts them, `billed_units` does not). */
const COHERE_TEMPLATE_TOKENS = 64;

/** `usage`: what the model processed (`tokens`) and what is billed (`billed_units`, the prompt without Cohere's template). */
function cohereUsage(usage: Usage): Record<string, unknown> {
  return { billed_units: { input_tokens: usage.input - COHERE_TEMPLATE_TOKENS, output_tokens: usage.output }, tokens: { input_tokens: usage.input, output_tokens: usage.output } };
}

function cohereFinish(turn: Turn): string {
  return turn.finish ?? ((turn.toolCalls ?? []).length > 0 ? 'TOOL_CALL' : 'COMPLETE');
}

/**
 * A v2 chat response: the `id`, the message's content parts (thinking, then text), and on a turn of tool calls the
 * words before them as `tool_plan` (the turn's text) with no content, the calls' ids as Cohere makes them
 * (`<tool>_<random>`), `finish_reason` in capitals.
 */
function cohereBody(turn: Turn): Record<string, unknown> {
  const calls = (turn.toolCalls ?? []).map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  const content = [...(turn.reasoning === undefined ? [] : [{ type: 'thinking', thinking: turn.reasoning }]), ...(turn.text === undefined || calls.length > 0 ? [] : [{ type: 'text', text: turn.text }])];
  const message = calls.length > 0 ? { role: 'assistant', ...(content.length > 0 ? { content } : {}), tool_plan: turn.text, tool_calls: calls } : { role: 'assistant', content };
  return { id: turn.id, message, finish_reason: cohereFinish(turn), usage: cohereUsage(turn.usage) };
}

/**
 * The v2 stream (each frame named by its `type`): `message-start`, the thinking and text as content blocks, the tool
 * plan in `tool-plan-delta`s, each call as `tool-call-start` (no arguments yet), `tool-call-delta`s and
 * `tool-call-end`, then `message-end` with the finish reason and the usage.
 */
function cohereEvents(turn: Turn): Array<{ event: string; data: unknown }> {
  const frames: Array<{ event: string; data: unknown }> = [];
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, ...data } });
  push('message-start', { id: turn.id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
  let index = 0;
  if (turn.reasoning !== undefined) {
    push('content-start', { index, delta: { message: { content: { type: 'thinking', thinking: '' } } } });
    for (const thinking of halves(turn.reasoning)) push('content-delta', { index, delta: { message: { content: { thinking } } } });
    push('content-end', { index });
    index += 1;
  }
  const calls = turn.toolCalls ?? [];
  if (calls.length > 0) {
    for (const tool_plan of halves(turn.text ?? '')) push('tool-plan-delta', { delta: { message: { tool_plan } } });
    calls.forEach((call, at) => {
      push('tool-call-start', { index: at, delta: { message: { tool_calls: { id: call.id, type: 'function', function: { name: call.name, arguments: '' } } } } });
      for (const part of halves(JSON.stringify(call.args))) push('tool-call-delta', { index: at, delta: { message: { tool_calls: { function: { arguments: part } } } } });
      push('tool-call-end', { index: at });
    });
  } else if (turn.text !== undefined) {
    push('content-start', { index, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const text of halves(turn.text)) push('content-delta', { index, delta: { message: { content: { text } } } });
    push('content-end', { index });
  }
  push('message-end', { delta: { finish_reason: cohereFinish(turn), usage: cohereUsage(turn.usage) } });
  return frames;
}

// ------------------------------------------------------------------ dispatch

function body(wire: Wire, turn: Turn): unknown {
  if (wire === 'chat' && turn.server === 'openrouter') return openrouterBody(turn);
  if (wire === 'ollama') return ollamaBody(turn);
  if (wire === 'cohere') return cohereBody(turn);
  return wire === 'responses' ? responsesBody(turn) : wire === 'chat' ? chatBody(turn) : wire === 'gemini' ? geminiBody(turn) : anthropicBody(turn);
}

function events(wire: Wire, turn: Turn, withChatUsage: boolean): Array<{ event?: string; data: unknown }> {
  if (wire === 'chat' && turn.server === 'openrouter') return openrouterEvents(turn);
  if (wire === 'ollama') return ollamaEvents(turn);
  if (wire === 'cohere') return cohereEvents(turn);
  return wire === 'responses' ? responsesEvents(turn) : wire === 'chat' ? chatEvents(turn, withChatUsage) : wire === 'gemini' ? geminiEvents(turn) : anthropicEvents(turn);
}

/** A text in two deltas, as providers stream it. */
function halves(text: string): string[] {
  if (text.length < 2) return text === '' ? [] : [text];
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}
