// A scripted OpenAI API behind a fake `fetch`: the real `openai` client (and
// the Agents SDK's OpenAIResponsesModel / OpenAIChatCompletionsModel on top
// of it) talks to it exactly as to api.openai.com, in the Responses and Chat
// Completions JSON and SSE wire formats. Replies are scripted per requested
// model, so several agents can share one client; every request body is kept
// for the checks.
import OpenAI from 'openai';

export interface Reply {
  text?: string;
  calls?: Array<{ id: string; name: string; args: unknown }>;
  reasoning?: string;
  usage: { input: number; output: number; cached?: number; reasoning?: number };
  /** The model the API says answered (default: the requested alias plus a date). */
  model?: string;
}

export interface Failure {
  status: number;
  message: string;
}

export type Scripted = Reply | Failure;

export interface SeenRequest {
  api: 'responses' | 'chat';
  body: Record<string, any>;
}

const isFailure = (step: Scripted): step is Failure => 'status' in step;

/** The dated snapshot a real API reports for an alias. */
export const dated = (alias: string): string => `${alias}-2025-04-14`;

export class FakeOpenAI {
  readonly requests: SeenRequest[] = [];
  #script = new Map<string, Scripted[]>();
  #n = 0;

  constructor(script: Record<string, Scripted[]> = {}) {
    this.load(script);
  }

  /**
   * A new script (and no requests seen). The SDK's default provider keeps
   * the first default client it gets, so a file keeps one fake and reloads it.
   */
  load(script: Record<string, Scripted[]>): this {
    this.#script = new Map(Object.entries(script).map(([model, steps]) => [model, [...steps]]));
    this.requests.length = 0;
    return this;
  }

  /** An `openai` client on this fake; its own retries are off, so every attempt reaches the runner. */
  client(): OpenAI {
    return new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: this.fetch, maxRetries: 0 });
  }

  /** Replies not yet consumed, per model. */
  remaining(): Record<string, number> {
    return Object.fromEntries([...this.#script].map(([model, steps]) => [model, steps.length]));
  }

  readonly fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const href = typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
    const body = JSON.parse(String(init?.body ?? '{}')) as Record<string, any>;
    const api = href.endsWith('/responses') ? 'responses' : href.endsWith('/chat/completions') ? 'chat' : undefined;
    if (api === undefined) return json(404, { error: { message: `no route ${href}`, type: 'invalid_request_error' } });
    this.requests.push({ api, body });
    const steps = this.#script.get(body.model);
    const step = steps?.shift();
    if (step === undefined) return json(500, { error: { message: `no scripted reply for ${body.model}`, type: 'server_error' } });
    if (isFailure(step)) return json(step.status, { error: { message: step.message, type: 'server_error', param: null, code: null } });
    this.#n += 1;
    const model = step.model ?? dated(body.model);
    if (api === 'responses') {
      const response = responsesObject(`resp_${this.#n}`, model, step);
      return body.stream === true ? sse(responsesEvents(response)) : json(200, response);
    }
    const completion = chatObject(`chatcmpl-${this.#n}`, model, step);
    return body.stream === true ? sse(chatChunks(completion, body.stream_options?.include_usage === true)) : json(200, completion);
  };
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json', 'x-request-id': `req_${Math.random().toString(16).slice(2)}` } });
}

function sse(events: Array<{ event?: string; data: unknown }>): Response {
  const text = events.map(({ event, data }) => `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');
  const bytes = new TextEncoder().encode(text);
  // Sent in small chunks, as a real server's SSE arrives.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 97) controller.enqueue(bytes.slice(i, i + 97));
      controller.close();
    },
  });
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

// ------------------------------------------------------------ Responses API

function responsesOutput(reply: Reply, id: string): Array<Record<string, any>> {
  const output: Array<Record<string, any>> = [];
  if (reply.reasoning !== undefined) output.push({ type: 'reasoning', id: `rs_${id}`, summary: [{ type: 'summary_text', text: reply.reasoning }] });
  if (reply.text !== undefined) {
    output.push({ type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: reply.text, annotations: [] }] });
  }
  for (const call of reply.calls ?? []) {
    output.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' });
  }
  return output;
}

function responsesObject(id: string, model: string, reply: Reply): Record<string, any> {
  return {
    id,
    object: 'response',
    created_at: 1741476542,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model,
    output: responsesOutput(reply, id),
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: reply.usage.input,
      input_tokens_details: { cached_tokens: reply.usage.cached ?? 0 },
      output_tokens: reply.usage.output,
      output_tokens_details: { reasoning_tokens: reply.usage.reasoning ?? 0 },
      total_tokens: reply.usage.input + reply.usage.output,
    },
    user: null,
    metadata: {},
  };
}

function responsesEvents(response: Record<string, any>): Array<{ event: string; data: unknown }> {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const push = (type: string, fields: Record<string, unknown>) => events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  const pending = { ...response, status: 'in_progress', output: [], usage: null };
  push('response.created', { response: pending });
  push('response.in_progress', { response: pending });
  (response.output as Array<Record<string, any>>).forEach((item, index) => {
    if (item.type === 'message') {
      const text = item.content[0].text as string;
      push('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (let i = 0; i < text.length; i += 7) push('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: text.slice(i, i + 7), logprobs: [] });
      push('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] });
      push('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      push('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      push('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments });
      push('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
    } else {
      push('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
    }
    push('response.output_item.done', { output_index: index, item });
  });
  push('response.completed', { response });
  return events;
}

// ------------------------------------------------------------ Chat Completions

function chatObject(id: string, model: string, reply: Reply): Record<string, any> {
  const calls = reply.calls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: reply.text ?? null, refusal: null, annotations: [] };
  if (calls.length > 0) message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  // Not OpenAI's own field: reasoning text as OpenAI-compatible providers return it.
  if (reply.reasoning !== undefined) message.reasoning = reply.reasoning;
  return {
    id,
    object: 'chat.completion',
    created: 1741569952,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: {
      prompt_tokens: reply.usage.input,
      completion_tokens: reply.usage.output,
      total_tokens: reply.usage.input + reply.usage.output,
      prompt_tokens_details: { cached_tokens: reply.usage.cached ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: reply.usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

function chatChunks(completion: Record<string, any>, includeUsage: boolean): Array<{ data: unknown }> {
  const base = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model, service_tier: 'default', system_fingerprint: 'fp_fake' };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) } });
  const choice = completion.choices[0];
  const message = choice.message as Record<string, any>;
  const chunks: Array<{ data: unknown }> = [chunk({ role: 'assistant', content: '', refusal: null })];
  const text = (message.content ?? '') as string;
  for (let i = 0; i < text.length; i += 7) chunks.push(chunk({ content: text.slice(i, i + 7) }));
  (message.tool_calls ?? []).forEach((call: Record<string, any>, index: number) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    chunks.push(chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }));
  });
  chunks.push(chunk({}, choice.finish_reason));
  if (includeUsage) chunks.push({ data: { ...base, choices: [], usage: completion.usage } });
  chunks.push({ data: '[DONE]' });
  return chunks;
}
