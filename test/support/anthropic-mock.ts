// A loopback server speaking the Anthropic Messages API the way the Claude
// Agent SDK's bundled CLI calls it: POST /v1/messages with stream: true,
// answered with the real SSE event sequence (message_start, ping,
// content_block_start / delta / stop per block, message_delta with the final
// usage, message_stop), or an HTTP error body such as a 529 overloaded.
// A script decides each answer from the request, so a test writes its
// conversation the way the model would have.
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type MockBlock =
  | { type: 'text'; text: string }
  /** `signature`: what the API signs it with (opaque; `sig-mock` unless given). */
  | { type: 'thinking'; thinking: string; signature?: string }
  /** Thinking the API's safety systems encrypted: `data` is opaque, and the stream sends the block whole, without deltas. */
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface MockUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export type MockReply =
  | {
      blocks: MockBlock[];
      usage: MockUsage;
      model?: string;
      id?: string;
      /**
       * Once block `afterBlock` (0-based) is sent, the stream pauses until what `until()` returns settles, as a slow
       * model would between blocks; `midBlock`: after the first half of that block's text, before the block ends.
       */
      hold?: { afterBlock: number; until: () => Promise<unknown>; midBlock?: boolean };
    }
  | { status: number; errorType: string; message: string };

export interface MockRequest {
  readonly body: Record<string, any>;
  /** The system prompt as one string. */
  readonly system: string;
  readonly model: string;
  /** Assistant messages in the request's history: which step of its conversation this is. */
  readonly assistantTurns: number;
  /** Every tool_result block in the request's last message. */
  readonly toolResults: Array<{ tool_use_id: string; is_error: boolean; content: string }>;
}

export interface AnthropicMock {
  readonly url: string;
  /** Every /v1/messages request, in arrival order. */
  readonly requests: MockRequest[];
  /** Requests to anything else (token counting, telemetry): the CLI should send none here. */
  readonly others: string[];
  /** Replies sent, with the id each message got. */
  readonly replies: Array<{ id: string; model: string; reply: MockReply }>;
  close(): Promise<void>;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : JSON.stringify(part))).join('');
  return value === undefined ? '' : JSON.stringify(value);
}

function requestOf(body: Record<string, any>): MockRequest {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const toolResults = Array.isArray(last?.content)
    ? last.content.filter((block: any) => block?.type === 'tool_result').map((block: any) => ({ tool_use_id: block.tool_use_id, is_error: block.is_error === true, content: textOf(block.content) }))
    : [];
  return {
    body,
    system: textOf(body.system),
    model: String(body.model),
    assistantTurns: messages.filter((message: any) => message?.role === 'assistant').length,
    toolResults,
  };
}

async function sse(res: http.ServerResponse, id: string, model: string, reply: Extract<MockReply, { blocks: unknown }>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${id}` });
  const send = (event: Record<string, unknown>): void => void res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  const usage = reply.usage;
  const cache = { cache_read_input_tokens: usage.cacheRead ?? 0, cache_creation_input_tokens: usage.cacheWrite ?? 0 };
  send({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1, ...cache } } });
  send({ type: 'ping' });
  for (const [index, block] of reply.blocks.entries()) {
    if (block.type === 'text') {
      send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const half = Math.ceil(block.text.length / 2);
      send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text.slice(0, half) } });
      if (reply.hold?.afterBlock === index && reply.hold.midBlock === true) await reply.hold.until();
      send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text.slice(half) } });
    } else if (block.type === 'thinking') {
      send({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      send({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      send({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature ?? 'sig-mock' } });
    } else if (block.type === 'redacted_thinking') {
      send({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: block.data } });
    } else {
      send({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } });
      send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } });
    }
    send({ type: 'content_block_stop', index });
    if (reply.hold?.afterBlock === index && reply.hold.midBlock !== true) await reply.hold.until();
  }
  const stop = reply.blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  send({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { input_tokens: usage.input, output_tokens: usage.output, ...cache } });
  send({ type: 'message_stop' });
  res.end();
}

/** A request without `stream: true` gets the whole message as JSON, as the API answers it. */
function json(res: http.ServerResponse, id: string, model: string, reply: Extract<MockReply, { blocks: unknown }>): void {
  const usage = reply.usage;
  const content = reply.blocks.map((block) => (block.type === 'thinking' ? { ...block, signature: block.signature ?? 'sig-mock' } : block));
  const stop = reply.blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${id}` });
  res.end(
    JSON.stringify({
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: usage.output, cache_read_input_tokens: usage.cacheRead ?? 0, cache_creation_input_tokens: usage.cacheWrite ?? 0 },
    }),
  );
}

export async function startAnthropicMock(script: (request: MockRequest) => MockReply): Promise<AnthropicMock> {
  const requests: MockRequest[] = [];
  const others: string[] = [];
  const replies: AnthropicMock['replies'] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const url = req.url ?? '';
      if (req.method !== 'POST' || !/^\/v1\/messages(\?|$)/.test(url)) {
        others.push(`${req.method} ${url}`);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not served by the mock' } }));
        return;
      }
      let request: MockRequest;
      let reply: MockReply;
      try {
        request = requestOf(JSON.parse(raw) as Record<string, any>);
        requests.push(request);
        reply = script(request);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `mock script failed: ${String(error)}` } }));
        return;
      }
      if ('status' in reply) {
        replies.push({ id: '', model: request.model, reply });
        res.writeHead(reply.status, { 'content-type': 'application/json', 'request-id': `req_error_${replies.length}` });
        res.end(JSON.stringify({ type: 'error', error: { type: reply.errorType, message: reply.message } }));
        return;
      }
      const id = reply.id ?? `msg_mock_${replies.length + 1}`;
      const model = reply.model ?? request.model;
      replies.push({ id, model, reply });
      if (request.body.stream === true) void sse(res, id, model, reply);
      else json(res, id, model, reply);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    others,
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The environment the CLI runs with: the mock as the API, a fake key, no
 * traffic but the model requests, and a temporary HOME and config folder so
 * nothing of the user's is read or written.
 */
export function offlineClaudeEnv(mockUrl: string, extra: Record<string, string> = {}): { env: Record<string, string>; home: string } {
  const home = mkdtempSync(path.join(tmpdir(), 'nrh-claude-home-'));
  return {
    home,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      USERPROFILE: home,
      TMPDIR: home,
      CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
      ANTHROPIC_BASE_URL: mockUrl,
      ANTHROPIC_API_KEY: 'sk-ant-offline-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_ENABLE_TELEMETRY: '0',
      ...extra,
    },
  };
}
