// Amazon Bedrock's Converse API on a loopback server, for the programs users write against it (the AI SDK's
// @ai-sdk/amazon-bedrock, LangChain's ChatBedrockConverse on the AWS SDK), found the way a deployment points them
// elsewhere: AWS_ENDPOINT_URL_BEDROCK_RUNTIME, with dummy credentials and a region in the environment. The shapes
// are the Converse API reference's: `POST /model/{modelId}/converse` answers JSON (`output.message.content[]` with
// `text`, `toolUse`, `reasoningContent`; `stopReason`; `usage` whose `inputTokens` leaves out the cache reads and
// writes it counts apart; `metrics.latencyMs`), `/converse-stream` the same answer as AWS event-stream frames (binary,
// CRC-checked, encoded by @smithy/eventstream-codec, the codec the clients decode with), and a refusal is an HTTP
// status with its type in the `x-amzn-ErrorType` header.
import { createServer as createHttp1Server, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { withProcessEnv } from '../support/process-env.ts';

/** One Converse answer. `usage.input`: Bedrock's `inputTokens`, the tokens read apart from the cache. */
export interface ConverseTurn {
  readonly reasoning?: { readonly text: string; readonly signature: string };
  readonly text?: string;
  readonly toolUses?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: Record<string, unknown> }>;
  readonly stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'guardrail_intervened' | 'content_filtered';
  readonly usage: { readonly input: number; readonly output: number; readonly cacheRead?: number; readonly cacheWrite?: number };
  readonly latencyMs: number;
  /** A guardrail's assessment, as Converse reports it when the request's `guardrailConfig` asks for a trace. */
  readonly trace?: Record<string, unknown>;
}

/** A refusal: the HTTP status, and the error's type as the `x-amzn-ErrorType` header names it. */
export interface ConverseRefusal {
  readonly status: number;
  readonly errorType: 'ThrottlingException' | 'ValidationException' | 'AccessDeniedException' | 'ServiceUnavailableException';
  readonly message: string;
}

export type ConverseReply = ConverseTurn | ConverseRefusal;

/** What the server was sent: the model id from the path (decoded), whether it asked for a stream, the body and headers. */
export interface SeenConverse {
  readonly modelId: string;
  readonly stream: boolean;
  readonly body: Record<string, any>;
  readonly headers: IncomingHttpHeaders;
}

/** Every token Bedrock counts for the answer: `totalTokens` adds the cache reads and writes to `inputTokens`. */
export function promptTokens(turn: ConverseTurn): number {
  return turn.usage.input + (turn.usage.cacheRead ?? 0) + (turn.usage.cacheWrite ?? 0);
}

function usageOf(turn: ConverseTurn): Record<string, number> {
  const { input, output, cacheRead, cacheWrite } = turn.usage;
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: promptTokens(turn) + output,
    ...(cacheRead === undefined ? {} : { cacheReadInputTokens: cacheRead }),
    ...(cacheWrite === undefined ? {} : { cacheWriteInputTokens: cacheWrite }),
  };
}

/** The `/converse` body. */
export function converseJson(turn: ConverseTurn): Record<string, unknown> {
  const content: unknown[] = [];
  if (turn.reasoning !== undefined) content.push({ reasoningContent: { reasoningText: { text: turn.reasoning.text, signature: turn.reasoning.signature } } });
  if (turn.text !== undefined) content.push({ text: turn.text });
  for (const use of turn.toolUses ?? []) content.push({ toolUse: { toolUseId: use.id, name: use.name, input: use.input } });
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: turn.stopReason,
    usage: usageOf(turn),
    metrics: { latencyMs: turn.latencyMs },
    ...(turn.trace === undefined ? {} : { trace: turn.trace }),
  };
}

/** The `/converse-stream` events, in order, as `[event type, payload]`: one content block per part, split where Bedrock splits text. */
export function converseEvents(turn: ConverseTurn): Array<[string, Record<string, unknown>]> {
  const events: Array<[string, Record<string, unknown>]> = [['messageStart', { role: 'assistant' }]];
  let index = 0;
  if (turn.reasoning !== undefined) {
    events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: turn.reasoning.text } } }]);
    events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: turn.reasoning.signature } } }]);
    events.push(['contentBlockStop', { contentBlockIndex: index++ }]);
  }
  if (turn.text !== undefined) {
    const half = Math.ceil(turn.text.length / 2);
    for (const piece of [turn.text.slice(0, half), turn.text.slice(half)]) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } }]);
    events.push(['contentBlockStop', { contentBlockIndex: index++ }]);
  }
  for (const use of turn.toolUses ?? []) {
    events.push(['contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: use.id, name: use.name } } }]);
    const json = JSON.stringify(use.input);
    const half = Math.ceil(json.length / 2);
    for (const piece of [json.slice(0, half), json.slice(half)]) events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } } }]);
    events.push(['contentBlockStop', { contentBlockIndex: index++ }]);
  }
  events.push(['messageStop', { stopReason: turn.stopReason }]);
  events.push(['metadata', { usage: usageOf(turn), metrics: { latencyMs: turn.latencyMs }, ...(turn.trace === undefined ? {} : { trace: turn.trace }) }]);
  return events;
}

const utf8 = new TextEncoder();
const codec = new EventStreamCodec((bytes) => (typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes)), (text) => utf8.encode(text));

/** The events as Bedrock frames them: each an event-stream message with its type headers and a JSON body (with Bedrock's `p` padding). */
function framed(turn: ConverseTurn): Uint8Array[] {
  return converseEvents(turn).map(([type, payload]) =>
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: utf8.encode(JSON.stringify({ ...payload, p: 'abcdefghijkl' })),
    }),
  );
}

/** What the answer uses of either protocol's response. */
interface Reply {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: Uint8Array): unknown;
  end(): unknown;
  end(body: string): unknown;
}

const isRefusal = (reply: ConverseReply): reply is ConverseRefusal => 'errorType' in reply;

export interface LoopbackBedrock {
  /**
   * The next requests get `replies`, in order; sets the environment the programs find Bedrock through, for the running
   * test, to the server for `client`: the AI SDK's `fetch` or the AWS SDK's HTTP/2.
   */
  serve(replies: readonly ConverseReply[], client: 'fetch' | 'aws-sdk'): SeenConverse[];
  close(): Promise<void>;
}

/** The region the programs are given; the server answers any. */
export const REGION = 'us-east-1';

export async function loopbackBedrock(): Promise<LoopbackBedrock> {
  let replies: readonly ConverseReply[] = [];
  let seen: SeenConverse[] = [];
  let answered = 0;
  const answer = (request: IncomingMessage | Http2ServerRequest, response: Reply): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.url ?? '');
      const requestId = `0f6d0f5a-7d1c-4c2e-9b7a-00000000000${answered}`;
      const reply = replies[answered++];
      if (match === null || reply === undefined) {
        response.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'UnknownOperationException' });
        response.end(JSON.stringify({ message: `no reply for ${request.method} ${request.url}` }));
        return;
      }
      const stream = match[2] === 'converse-stream';
      seen.push({ modelId: decodeURIComponent(match[1]!), stream, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: request.headers });
      if (isRefusal(reply)) {
        response.writeHead(reply.status, { 'content-type': 'application/json', 'x-amzn-requestid': requestId, 'x-amzn-errortype': `${reply.errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
        response.end(JSON.stringify({ message: reply.message }));
        return;
      }
      if (!stream) {
        response.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': requestId });
        response.end(JSON.stringify(converseJson(reply)));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId });
      for (const frame of framed(reply)) response.write(frame);
      response.end();
    });
  };
  // Bedrock's endpoint takes either protocol (chosen over TLS, which loopback has no certificate for): the AWS SDK's
  // BedrockRuntimeClient speaks HTTP/2 from its first bytes, fetch HTTP/1.1; one server each, one script.
  const servers = [createHttp1Server((request, response) => answer(request, response)), createHttp2Server((request, response) => answer(request, response))] as const;
  const sockets = new Set<Socket>();
  const urls: string[] = [];
  for (const server of servers) {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return {
    serve(next, client) {
      const url = urls[client === 'aws-sdk' ? 1 : 0]!;
      replies = next;
      seen = [];
      answered = 0;
      // As a deployment does: the SDKs' own variables, read when the first request is made; the keys are not keys.
      withProcessEnv({ AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url, AWS_REGION: REGION, AWS_DEFAULT_REGION: REGION, AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' });
      return seen;
    },
    async close() {
      const closed = servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
      // The clients keep their connections open (HTTP/2 sessions, fetch's keep-alive).
      for (const socket of sockets) socket.destroy();
      await Promise.all(closed);
    },
  };
}

/**
 * The weather program's two answers, as Claude gives them through Bedrock: the first reasons, writes the prompt
 * cache and calls the tool (`tool`, as the framework's docs name it), the second reads the cache.
 */
export function weatherTurns(tool: string): [ConverseTurn, ConverseTurn] {
  return [
    {
      reasoning: { text: 'The user wants Paris weather; call the tool.', signature: 'EqQBCkYIARgCIkB0ZXN0LXNpZ25hdHVyZQ==' },
      text: 'Let me look that up.',
      toolUses: [{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: tool, input: { city: 'Paris' } }],
      stopReason: 'tool_use',
      usage: { input: 100, output: 52, cacheWrite: 900 },
      latencyMs: 1163,
    },
    { text: 'It is sunny in Paris, 21°C.', stopReason: 'end_turn', usage: { input: 110, output: 15, cacheRead: 900 }, latencyMs: 612 },
  ];
}

/** What a guardrail that blocked the prompt answers: its own message, `guardrail_intervened`, and its assessment in the trace. */
export const GUARDRAIL_TURN: ConverseTurn = {
  text: 'Sorry, the model cannot answer this question.',
  stopReason: 'guardrail_intervened',
  usage: { input: 0, output: 0 },
  latencyMs: 210,
  trace: { guardrail: { inputAssessment: { gr7x2k1q: { topicPolicy: { topics: [{ name: 'Investment advice', type: 'DENY', action: 'BLOCKED' }] } } } } },
};

export const THROTTLED: ConverseRefusal = { status: 429, errorType: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' };

export const ACCESS_DENIED: ConverseRefusal = { status: 403, errorType: 'AccessDeniedException', message: "You don't have access to the model with the specified model ID." };
