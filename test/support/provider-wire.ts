// Provider wire formats for offline runs of the real provider clients
// (ChatAnthropic, ChatOpenAI, the AI SDK's providers, the OpenAI SDK): a
// fake `fetch` that answers each request with the next scripted reply, in
// the JSON and server-sent-event shapes the providers' API references
// document. The payloads are written here from those references; they are
// what the clients parse, so the clients compute usage exactly as they do
// against the real services.

export interface WireReply {
  status?: number;
  /** A JSON body. */
  json?: unknown;
  /** A server-sent-event stream: `event:` lines when `event` is set, `data:` JSON (or a raw string such as `[DONE]`). */
  sse?: ReadonlyArray<{ event?: string; data: unknown }>;
  headers?: Record<string, string>;
}

export interface SeenRequest {
  url: string;
  method: string;
  body: any;
}

/** A `fetch` that answers request N with `replies[N]`; requests are kept for checks. Running out of replies is a 500. */
export function scriptedFetch(replies: readonly WireReply[]): { fetch: typeof fetch; requests: SeenRequest[] } {
  const requests: SeenRequest[] = [];
  let next = 0;
  const fake = async (input: unknown, init?: { method?: string; body?: unknown }): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : String((input as { url?: string }).url ?? input);
    let bodyText: string | undefined;
    if (typeof init?.body === 'string') bodyText = init.body;
    else if (input instanceof Request) bodyText = await input.clone().text();
    let body: unknown = bodyText;
    try {
      body = bodyText === undefined ? undefined : JSON.parse(bodyText);
    } catch {
      // a non-JSON body stays text
    }
    requests.push({ url, method: init?.method ?? (input instanceof Request ? input.method : 'GET'), body });
    const reply = replies[next++];
    if (reply === undefined) return new Response(JSON.stringify({ error: { message: `no scripted reply for request ${next}` } }), { status: 500, headers: { 'content-type': 'application/json' } });
    // A reply that has both forms answers as the request asks (`"stream": true` or not), as the provider does.
    const wantsStream = typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
    return wireResponse(reply, `req_${next}`, wantsStream);
  };
  return { fetch: fake as typeof fetch, requests };
}

/** A scripted reply as the `Response` a provider's server sends. */
export function wireResponse(reply: WireReply, requestId: string, wantsStream = true): Response {
  const headers = { 'x-request-id': requestId, ...(reply.headers ?? {}) };
  // A reply with both forms is streamed only when the request asked for a stream.
  if (reply.sse !== undefined && (reply.json === undefined || wantsStream)) {
    const text = reply.sse.map((e) => `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('');
    return new Response(text, { status: reply.status ?? 200, headers: { 'content-type': 'text/event-stream', ...headers } });
  }
  return new Response(JSON.stringify(reply.json ?? {}), { status: reply.status ?? 200, headers: { 'content-type': 'application/json', ...headers } });
}

export interface Route {
  /** Text the request's body contains. */
  readonly when: string;
  readonly reply: WireReply;
  /** Requests of one wave are held until all of them arrived, then answered last-come first. */
  readonly wave?: string;
}

/**
 * A provider API answering each request with the first unused route whose
 * text its body contains. A wave's requests wait for each other: none is
 * answered before all of them are in flight, so the program's parallel calls
 * overlap for real and end in the reverse order of their start.
 */
export function concurrentFetch(routes: readonly Route[]): { fetch: typeof fetch; bodies: string[]; maxInFlight: () => number } {
  const used = new Set<number>();
  const held = new Map<string, Array<() => void>>();
  const bodies: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fake = async (_input: unknown, init?: { body?: unknown }): Promise<Response> => {
    const body = String(init?.body);
    bodies.push(body);
    const index = routes.findIndex((route, i) => !used.has(i) && body.includes(route.when));
    if (index < 0) return new Response(JSON.stringify({ error: { message: `no route for ${body.slice(0, 200)}` } }), { status: 500, headers: { 'content-type': 'application/json' } });
    used.add(index);
    const route = routes[index]!;
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (route.wave !== undefined) {
      const size = routes.filter((r) => r.wave === route.wave).length;
      const waiting = held.get(route.wave) ?? [];
      held.set(route.wave, waiting);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === size) [...waiting].reverse().forEach((release, i) => setTimeout(release, i * 3));
      });
    }
    inFlight -= 1;
    // A reply with both forms answers as the request asks, as the provider does.
    return wireResponse(route.reply, `req_${index + 1}`, /"stream":\s*true/.test(body));
  };
  return { fetch: fake as typeof fetch, bodies, maxInFlight: () => maxInFlight };
}

// ------------------------------------------------------------------ Anthropic Messages

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  /** Thinking the API's safety systems encrypted: `data` is opaque, sent whole in its block's start. */
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'server_tool_use'; id: string; name: string; input: Record<string, unknown>; caller: { type: 'direct' } }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: Array<Record<string, unknown>>; caller: { type: 'direct' } }
  | { type: `${string}_tool_result`; tool_use_id: string; content: unknown };

// ------------------------------------------------------------------ hosted web search

/** A web search the provider runs inside a model call: the id it gives the call, the query, what it found. */
export interface WebSearch {
  id: string;
  query: string;
  results: Array<{ url: string; title: string }>;
}

/** A Responses `web_search_call` output item, completed, with `action.sources` (the `web_search_call.action.sources` include). */
export function webSearchCallItem(search: WebSearch): Record<string, unknown> {
  return { id: search.id, type: 'web_search_call', status: 'completed', action: { type: 'search', query: search.query, sources: search.results.map((result) => ({ type: 'url', url: result.url })) } };
}

/**
 * The stream events of a `web_search_call` item before its `response.output_item.done`: the item announced
 * without its query, then its three stages.
 */
export function webSearchCallEvents(item: Record<string, unknown>, outputIndex: number): Array<{ type: string; fields: Record<string, unknown> }> {
  return [
    { type: 'response.output_item.added', fields: { output_index: outputIndex, item: { id: item.id, type: 'web_search_call', status: 'in_progress', action: { type: 'search' } } } },
    ...['in_progress', 'searching', 'completed'].map((stage) => ({ type: `response.web_search_call.${stage}`, fields: { item_id: item.id, output_index: outputIndex } })),
  ];
}

/** A Responses `file_search_call` item, completed, with its results (the `file_search_call.results` include). */
export function fileSearchCallItem(id: string, queries: string[], results: Array<{ file_id: string; filename: string; score: number; text: string }>): Record<string, unknown> {
  return { id, type: 'file_search_call', status: 'completed', queries, results: results.map((result) => ({ attributes: {}, ...result })) };
}

/** A Responses `code_interpreter_call` item, completed, with its outputs (the `code_interpreter_call.outputs` include). */
export function codeInterpreterCallItem(id: string, code: string, logs: string): Record<string, unknown> {
  return { id, type: 'code_interpreter_call', status: 'completed', code, container_id: 'cntr_68a1', outputs: [{ type: 'logs', logs }] };
}

/** A Responses `image_generation_call` item, completed: `result` is the image as base64. */
export function imageGenerationCallItem(id: string, base64: string): Record<string, unknown> {
  return { id, type: 'image_generation_call', status: 'completed', background: 'opaque', output_format: 'png', quality: 'low', size: '1024x1024', revised_prompt: 'A small red square', result: base64 };
}

/** A Responses `mcp_list_tools` item: the tools OpenAI listed on the program's MCP server. */
export function mcpListToolsItem(id: string, serverLabel: string, tools: Array<{ name: string; description: string }>): Record<string, unknown> {
  return { id, type: 'mcp_list_tools', server_label: serverLabel, tools: tools.map((tool) => ({ ...tool, input_schema: { type: 'object', properties: {} } })) };
}

/**
 * A Responses `mcp_call` item: OpenAI called the server's tool `name`; `output` or `error` is what came back.
 * `approvalRequestId`: the `mcp_approval_request` the program approved before OpenAI ran it.
 */
export function mcpCallItem(id: string, serverLabel: string, name: string, args: Record<string, unknown>, outcome: { output: string } | { error: Record<string, unknown> }, approvalRequestId?: string): Record<string, unknown> {
  const failed = 'error' in outcome;
  return { id, type: 'mcp_call', status: failed ? 'failed' : 'completed', approval_request_id: approvalRequestId ?? null, server_label: serverLabel, name, arguments: JSON.stringify(args), output: failed ? null : outcome.output, error: failed ? outcome.error : null };
}

// ------------------------------------------------------------------ tools the program runs (Responses)

/** A Responses `shell_call` item: the model asks the program's shell to run `commands` in order. */
export function shellCallItem(callId: string, commands: string[], limits: { timeout_ms?: number; max_output_length?: number } = {}): Record<string, unknown> {
  return { id: `sh_${callId}`, type: 'shell_call', call_id: callId, status: 'completed', action: { commands, timeout_ms: limits.timeout_ms ?? null, max_output_length: limits.max_output_length ?? null } };
}

/** A Responses `shell_call_output` item: what a hosted container's shell (`environment: container_auto`) answered, in the same response. */
export function shellCallOutputItem(callId: string, outputs: Array<{ stdout: string; stderr?: string; exit_code: number }>): Record<string, unknown> {
  return { id: `sho_${callId}`, type: 'shell_call_output', call_id: callId, status: 'completed', output: outputs.map((o) => ({ stdout: o.stdout, stderr: o.stderr ?? '', outcome: { type: 'exit', exit_code: o.exit_code } })) };
}

/** A Responses `apply_patch_call` item: the model asks the program's editor to create, update or delete a file (V4A diff). */
export function applyPatchCallItem(callId: string, operation: { type: 'create_file' | 'update_file'; path: string; diff: string } | { type: 'delete_file'; path: string }): Record<string, unknown> {
  return { id: `apc_${callId}`, type: 'apply_patch_call', call_id: callId, status: 'completed', operation };
}

/** A Responses `computer_call` item of the GA computer tool: a batch of actions for the program's computer. */
export function computerCallItem(callId: string, actions: Array<Record<string, unknown>>): Record<string, unknown> {
  return { id: `cu_${callId}`, type: 'computer_call', call_id: callId, status: 'completed', actions, pending_safety_checks: [] };
}

/** A Responses `mcp_approval_request` item: under `require_approval`, OpenAI asks the program before it calls the server's tool. */
export function mcpApprovalRequestItem(id: string, serverLabel: string, name: string, args: Record<string, unknown>): Record<string, unknown> {
  return { id, type: 'mcp_approval_request', server_label: serverLabel, name, arguments: JSON.stringify(args) };
}

/**
 * The stream events OpenAI sends for a hosted tool's item before its `response.output_item.done`: the item
 * announced in progress (without what it found), then its stages (`response.<type>.*`; a code interpreter's code and
 * an MCP call's arguments as deltas).
 */
export function hostedItemEvents(item: Record<string, any>, outputIndex: number): Array<{ type: string; fields: Record<string, unknown> }> {
  if (item.type === 'web_search_call') return webSearchCallEvents(item, outputIndex);
  const at = { item_id: item.id, output_index: outputIndex };
  const stages = (type: string, names: string[]) => names.map((stage) => ({ type: `response.${type}.${stage}`, fields: at }));
  const added = (fields: Record<string, unknown>) => ({ type: 'response.output_item.added', fields: { output_index: outputIndex, item: { ...item, ...fields } } });
  switch (item.type) {
    case 'file_search_call':
      return [added({ status: 'in_progress', results: null }), ...stages('file_search_call', ['in_progress', 'searching', 'completed'])];
    case 'code_interpreter_call':
      return [
        added({ status: 'in_progress', code: '', outputs: null }),
        ...stages('code_interpreter_call', ['in_progress']),
        { type: 'response.code_interpreter_call_code.delta', fields: { ...at, delta: item.code } },
        { type: 'response.code_interpreter_call_code.done', fields: { ...at, code: item.code } },
        ...stages('code_interpreter_call', ['interpreting', 'completed']),
      ];
    case 'image_generation_call':
      return [added({ status: 'in_progress', result: null }), ...stages('image_generation_call', ['in_progress', 'generating', 'completed'])];
    case 'mcp_list_tools':
      return [added({ tools: [] }), ...stages('mcp_list_tools', ['in_progress', item.error == null ? 'completed' : 'failed'])];
    case 'mcp_call':
      return [
        added({ status: 'in_progress', arguments: '', output: null, error: null }),
        ...stages('mcp_call', ['in_progress']),
        { type: 'response.mcp_call_arguments.delta', fields: { ...at, delta: item.arguments } },
        { type: 'response.mcp_call_arguments.done', fields: { ...at, arguments: item.arguments } },
        ...stages('mcp_call', [item.error == null ? 'completed' : 'failed']),
      ];
    default:
      return [added({})];
  }
}

/** Anthropic's `server_tool_use` block and the `web_search_tool_result` that follows it in the same message. */
export function webSearchBlocks(search: WebSearch): AnthropicBlock[] {
  const results = search.results.map((result) => ({ type: 'web_search_result', url: result.url, title: result.title, encrypted_content: `enc_${result.url}`, page_age: null }));
  return [
    { type: 'server_tool_use', id: search.id, name: 'web_search', input: { query: search.query }, caller: { type: 'direct' } },
    { type: 'web_search_tool_result', tool_use_id: search.id, content: results, caller: { type: 'direct' } },
  ];
}

/**
 * A server tool Anthropic runs other than web search, as its two blocks: `server_tool_use` (`name`, `input`) and the
 * `<resultType>` block (`code_execution_tool_result`, `bash_code_execution_tool_result`, `web_fetch_tool_result`)
 * whose `content` is what it returned.
 */
export function serverToolBlocks(id: string, name: string, input: Record<string, unknown>, resultType: `${string}_tool_result`, content: unknown): AnthropicBlock[] {
  return [
    { type: 'server_tool_use', id, name, input, caller: { type: 'direct' } },
    { type: resultType, tool_use_id: id, content },
  ];
}

/** Anthropic's usage counts the searches and fetches it ran (`server_tool_use.web_search_requests`, `web_fetch_requests`). */
export function serverToolUsage(content: readonly AnthropicBlock[]): Record<string, unknown> {
  const uses = content.filter((block): block is Extract<AnthropicBlock, { type: 'server_tool_use' }> => block.type === 'server_tool_use');
  const searches = uses.filter((block) => block.name === 'web_search').length;
  const fetches = uses.filter((block) => block.name === 'web_fetch').length;
  if (searches === 0 && fetches === 0) return {};
  return { server_tool_use: { web_search_requests: searches, ...(fetches === 0 ? {} : { web_fetch_requests: fetches }) } };
}

export function anthropicMessage(options: { id: string; model: string; content: AnthropicBlock[]; usage: AnthropicUsage; stopReason?: string }): WireReply {
  const stop = options.stopReason ?? (options.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  return {
    json: {
      id: options.id,
      type: 'message',
      role: 'assistant',
      model: options.model,
      content: options.content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: 'standard', ...options.usage, ...serverToolUsage(options.content) },
    },
  };
}

/** The same message as Anthropic streams it: input and cache counts in `message_start`, output in `message_delta`. */
export function anthropicStream(options: { id: string; model: string; content: AnthropicBlock[]; usage: AnthropicUsage; stopReason?: string }): WireReply {
  const stop = options.stopReason ?? (options.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...options.usage };
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: { type: 'message_start', message: { id: options.id, type: 'message', role: 'assistant', model: options.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } },
    },
  ];
  options.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      const half = Math.ceil(block.text.length / 2);
      for (const piece of [block.text.slice(0, half), block.text.slice(half)]) {
        if (piece !== '') events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
      }
    } else if (block.type === 'thinking') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } } });
    } else if (block.type === 'redacted_thinking' || block.type.endsWith('_tool_result')) {
      // A server tool's result, and redacted thinking, arrive whole in their block's start.
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: block } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } });
      const json = JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: options.usage.output_tokens, ...serverToolUsage(options.content) } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return { sse: events };
}

export function anthropicError(status: number, type: string, message: string): WireReply {
  return { status, json: { type: 'error', error: { type, message } } };
}

// ------------------------------------------------------------------ OpenAI Chat Completions

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached?: number;
  reasoning?: number;
}

function chatUsageJson(usage: ChatUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** The arguments; a string is the model's text as it was sent (a model can send JSON that does not parse). */
  args: Record<string, unknown> | string;
}

/** A call's `arguments` on the wire. */
export function argumentsText(args: ChatToolCall['args']): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/**
 * `audio`: what OpenAI answers when asked for `modalities: ['text', 'audio']`: the spoken answer's id, its base64 and
 * its transcript, with `content` null.
 */
export function chatCompletion(options: { id: string; model: string; content: string | null; toolCalls?: ChatToolCall[]; usage: ChatUsage; audio?: { id: string; data: string; transcript: string } }): WireReply {
  const calls = options.toolCalls ?? [];
  return {
    json: {
      id: options.id,
      object: 'chat.completion',
      created: 1_764_000_000,
      model: options.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: options.content,
            refusal: null,
            ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsText(c.args) } })) } : {}),
            ...(options.audio === undefined ? {} : { audio: { ...options.audio, expires_at: 1_764_003_600 } }),
            annotations: [],
          },
          logprobs: null,
          finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        },
      ],
      usage: chatUsageJson(options.usage),
      service_tier: 'default',
      system_fingerprint: 'fp_test',
    },
  };
}

/** OpenAI's moderation endpoint's reply (`POST /v1/moderations`), flagged for violence or clean in every category. */
export function moderationReply(flagged: boolean): WireReply {
  const names = ['harassment', 'hate', 'illicit', 'self_harm', 'sexual', 'violence'];
  return {
    json: {
      id: `modr-${flagged ? 'flagged' : 'clean'}`,
      model: 'omni-moderation-latest',
      results: [{ flagged, categories: Object.fromEntries(names.map((name) => [name, flagged && name === 'violence'])), category_scores: Object.fromEntries(names.map((name) => [name, flagged && name === 'violence' ? 0.93 : 0.001])) }],
    },
  };
}

/** A completion the client may ask for either way: JSON, or streamed when the request says `"stream": true`. */
export function chatCompletionEither(options: { id: string; model: string; content: string | null; toolCalls?: ChatToolCall[]; usage: ChatUsage }): WireReply {
  return { json: chatCompletion(options).json, sse: chatCompletionStream(options).sse };
}

/** The same completion streamed as chunks, with the usage chunk `stream_options.include_usage` asks for. */
export function chatCompletionStream(options: { id: string; model: string; content: string | null; toolCalls?: ChatToolCall[]; usage: ChatUsage }): WireReply {
  const calls = options.toolCalls ?? [];
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id: options.id,
    object: 'chat.completion.chunk',
    created: 1_764_000_000,
    model: options.model,
    system_fingerprint: 'fp_test',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  });
  const events: Array<{ data: unknown }> = [{ data: chunk({ role: 'assistant', content: calls.length > 0 && options.content === null ? null : '', refusal: null }, null) }];
  const text = options.content ?? '';
  const half = Math.ceil(text.length / 2);
  for (const piece of [text.slice(0, half), text.slice(half)]) if (piece !== '') events.push({ data: chunk({ content: piece }, null) });
  calls.forEach((call, index) => {
    events.push({ data: chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null) });
    events.push({ data: chunk({ tool_calls: [{ index, function: { arguments: argumentsText(call.args) } }] }, null) });
  });
  events.push({ data: chunk({}, calls.length > 0 ? 'tool_calls' : 'stop') });
  events.push({ data: { id: options.id, object: 'chat.completion.chunk', created: 1_764_000_000, model: options.model, system_fingerprint: 'fp_test', choices: [], usage: chatUsageJson(options.usage) } });
  events.push({ data: '[DONE]' });
  return { sse: events };
}

export function openAiError(status: number, type: string, message: string): WireReply {
  return { status, json: { error: { message, type, param: null, code: null } } };
}

// ------------------------------------------------------------------ OpenAI Responses

export interface ResponsesOptions {
  id: string;
  model: string;
  /** The assistant message's text; none when the model only calls tools. */
  text?: string;
  toolCalls?: ChatToolCall[];
  /** A reasoning item's summary text, or its summary parts (a reasoning model's `summary: 'auto'` writes several). */
  reasoning?: string | string[];
  /** The reasoning item's `encrypted_content` (with `store: false` and the `reasoning.encrypted_content` include). */
  encryptedReasoning?: string;
  /** Web searches the provider ran, as `web_search_call` items before the message. */
  webSearches?: WebSearch[];
  /** Other hosted tools' items (`fileSearchCallItem`, `mcpCallItem`, ...), after the searches, before the message. */
  hostedItems?: Array<Record<string, unknown>>;
  /** Calls of the tools the program runs (`shellCallItem`, `applyPatchCallItem`, `computerCallItem`), after the function calls. */
  localCalls?: Array<Record<string, unknown>>;
  usage: ChatUsage;
}

function responsesObject(options: ResponsesOptions): Record<string, any> {
  const output: Array<Record<string, unknown>> = [];
  if (options.reasoning !== undefined) {
    const parts = typeof options.reasoning === 'string' ? [options.reasoning] : options.reasoning;
    const encrypted = options.encryptedReasoning === undefined ? {} : { encrypted_content: options.encryptedReasoning };
    output.push({ type: 'reasoning', id: `rs_${options.id}`, summary: parts.map((text) => ({ type: 'summary_text', text })), ...encrypted });
  }
  for (const search of options.webSearches ?? []) output.push(webSearchCallItem(search));
  output.push(...(options.hostedItems ?? []));
  if (options.text !== undefined) {
    output.push({ type: 'message', id: `msg_${options.id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: options.text, annotations: [] }] });
  }
  for (const call of options.toolCalls ?? []) {
    output.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: argumentsText(call.args), status: 'completed' });
  }
  output.push(...(options.localCalls ?? []));
  return {
    id: options.id,
    object: 'response',
    created_at: 1_764_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    model: options.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: options.usage.prompt_tokens,
      input_tokens_details: { cached_tokens: options.usage.cached ?? 0 },
      output_tokens: options.usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: options.usage.reasoning ?? 0 },
      total_tokens: options.usage.prompt_tokens + options.usage.completion_tokens,
    },
  };
}

export function openAiResponse(options: ResponsesOptions): WireReply {
  return { json: responsesObject(options) };
}

/** A response the client may ask for either way: JSON, or streamed when the request says `"stream": true`. */
export function openAiResponseEither(options: ResponsesOptions): WireReply {
  return { json: responsesObject(options), sse: openAiResponseStream(options).sse };
}

/** The same response streamed: `response.created`, each output item added, its deltas and done, then `response.completed`. */
export function openAiResponseStream(options: ResponsesOptions): WireReply {
  const response = responsesObject(options);
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
    } else if (item.type !== 'reasoning') {
      for (const event of hostedItemEvents(item, index)) push(event.type, event.fields);
    } else {
      push('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
      // Each summary part streamed as the API streams it (clients that stream read the summary only from these).
      (item.summary as Array<{ text: string }>).forEach((part, summaryIndex) => {
        const at = { item_id: item.id, output_index: index, summary_index: summaryIndex };
        push('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        push('response.reasoning_summary_text.delta', { ...at, delta: part.text });
        push('response.reasoning_summary_text.done', { ...at, text: part.text });
        push('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: part.text } });
      });
    }
    push('response.output_item.done', { output_index: index, item });
  });
  push('response.completed', { response });
  return { sse: events };
}

// ------------------------------------------------------------------ Gemini generateContent

export function geminiResponse(options: { model: string; text: string; usage: { prompt: number; candidates: number; cached?: number; thoughts?: number } }): WireReply {
  const u = options.usage;
  return {
    json: {
      candidates: [{ content: { parts: [{ text: options.text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: u.prompt,
        candidatesTokenCount: u.candidates,
        totalTokenCount: u.prompt + u.candidates + (u.thoughts ?? 0),
        ...(u.cached === undefined ? {} : { cachedContentTokenCount: u.cached }),
        ...(u.thoughts === undefined ? {} : { thoughtsTokenCount: u.thoughts }),
      },
      modelVersion: options.model,
      responseId: 'resp-gemini-1',
    },
  };
}
