// A loopback Vercel AI Gateway for the AI SDK's own gateway provider (`@ai-sdk/gateway`, what a plain string model
// id such as 'anthropic/claude-sonnet-4.5' goes through). The gateway's wire is not a provider's: the package POSTs
// the SDK's call options to `{baseURL}/language-model` (the model id in the `ai-language-model-id` header, streaming
// in `ai-language-model-streaming`) and reads back the SDK's own result as JSON (`content`, `finishReason`, `usage`,
// `providerMetadata`, `response`) or, streaming, the SDK's stream parts as SSE. The routing and the cost the gateway
// charged come in `providerMetadata.gateway`, beside the upstream provider's own metadata; the cost is a decimal
// string in USD. Errors are `{error: {message, type, param, code}, generationId}` with the HTTP status.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { closeLoopback } from '../../support/doc-snippets.ts';
import type { AddressInfo } from 'node:net';

/** One model answer as the gateway relays it from the provider it routed to. */
export interface GatewayTurn {
  /** The model id the program asked for, which the gateway's routing names. */
  asked: string;
  /** The upstream response id. */
  id: string;
  /** The model the upstream provider answered with (dated). */
  model: string;
  /** The provider the gateway routed to and that answered (`routing.finalProvider`). */
  provider: string;
  /**
   * The provider the gateway planned first and tried, whose attempt failed, so that it fell back to `provider`
   * (`routing.resolvedProvider`, and a failed attempt before the one that succeeded).
   */
  fallbackFrom?: string;
  text?: string;
  reasoning?: string;
  toolCalls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  /** The SDK's usage (LanguageModelV4Usage), as the gateway passes it on. */
  usage: { input: number; cacheRead?: number; cacheWrite?: number; output: number; reasoning?: number };
  /** What the gateway charged for the call, in USD, as it writes it (a decimal string). */
  cost: string;
  generationId: string;
}

export interface SeenGatewayRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

type Reply = { status: number; body: string; contentType: string };

export interface LoopbackGateway {
  /** What `createGateway({ baseURL })` takes: the server's `/v4/ai`. */
  readonly baseURL: string;
  readonly requests: SeenGatewayRequest[];
  /** The next request gets this answer, as JSON or as SSE stream parts. */
  reply(turn: GatewayTurn, options?: { stream?: boolean }): LoopbackGateway;
  /** The next request fails with the gateway's error body (`authentication_error` 401, `rate_limit_exceeded` 429, ...). */
  fail(status: number, type: string, message: string): LoopbackGateway;
  close(): Promise<void>;
}

export async function startGateway(): Promise<LoopbackGateway> {
  const requests: SeenGatewayRequest[] = [];
  const replies: Array<(streaming: boolean) => Reply> = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({ path: request.url ?? '', headers: request.headers, body: text === '' ? {} : JSON.parse(text) });
      const next = replies.shift();
      const reply = next === undefined ? { status: 500, contentType: 'application/json', body: JSON.stringify({ error: { message: `no reply scripted for request ${requests.length}`, type: 'internal_server_error' } }) } : next(request.headers['ai-language-model-streaming'] === 'true');
      response.writeHead(reply.status, { 'content-type': reply.contentType });
      response.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const gateway: LoopbackGateway = {
    baseURL: `http://127.0.0.1:${port}/v4/ai`,
    requests,
    reply(turn, options = {}) {
      replies.push(() =>
        options.stream === true
          ? { status: 200, contentType: 'text/event-stream', body: streamParts(turn).map((part) => `data: ${JSON.stringify(part)}\n\n`).join('') }
          : { status: 200, contentType: 'application/json', body: JSON.stringify(result(turn)) },
      );
      return gateway;
    },
    fail(status, type, message) {
      replies.push(() => ({ status, contentType: 'application/json', body: JSON.stringify({ error: { message, type, param: null, code: null }, generationId: `gen_failed_${requests.length}` }) }));
      return gateway;
    },
    close: () => closeLoopback(server),
  };
  return gateway;
}

function usage(turn: GatewayTurn): Record<string, unknown> {
  const { input, cacheRead = 0, cacheWrite = 0, output, reasoning = 0 } = turn.usage;
  return {
    inputTokens: { total: input, noCache: input - cacheRead - cacheWrite, cacheRead, cacheWrite },
    outputTokens: { total: output, text: output - reasoning, reasoning },
  };
}

function finishReason(turn: GatewayTurn): { unified: string; raw: string } {
  const calls = (turn.toolCalls ?? []).length > 0;
  // Anthropic's model answers with Anthropic's stop reasons whichever provider hosts it.
  return turn.model.startsWith('claude') ? { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_use' : 'end_turn' } : { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' };
}

/** `providerMetadata`: the upstream provider's own, and the gateway's routing and cost. */
function providerMetadata(turn: GatewayTurn): Record<string, unknown> {
  const requested = turn.asked;
  const planned = turn.fallbackFrom ?? turn.provider;
  const others = ['anthropic', 'vertex', 'bedrock'].filter((provider) => provider !== planned);
  const attempt = (provider: string, success: boolean, startTime: number, endTime: number) => ({ provider, internalModelId: `${provider}:${turn.model}`, providerApiModelId: turn.model, credentialType: 'system', success, startTime, endTime });
  const attempts = turn.fallbackFrom === undefined ? [attempt(turn.provider, true, 1_764_000_000_000, 1_764_000_000_900)] : [attempt(turn.fallbackFrom, false, 1_764_000_000_000, 1_764_000_000_300), attempt(turn.provider, true, 1_764_000_000_300, 1_764_000_001_200)];
  return {
    [turn.provider]: turn.provider === 'anthropic' ? { cacheCreationInputTokens: turn.usage.cacheWrite ?? 0, stopSequence: null } : { responseId: turn.id },
    gateway: {
      routing: {
        originalModelId: requested,
        resolvedProvider: planned,
        resolvedProviderApiModelId: turn.model,
        internalResolvedModelId: `${planned}:${turn.model}`,
        fallbacksAvailable: others,
        internalReasoning: `Selected ${planned} as preferred provider for ${requested}. 2 fallback(s) available: ${others.join(', ')}`,
        planningReasoning: `System credentials planned for: ${[planned, ...others].join(', ')}. Total execution order: ${[planned, ...others].map((provider) => `${provider}(system)`).join(' → ')}`,
        canonicalSlug: requested,
        finalProvider: turn.provider,
        attempts,
        modelAttemptCount: 1,
        modelAttempts: [{ modelId: requested, canonicalSlug: requested, success: true, providerAttemptCount: attempts.length }],
        totalProviderAttemptCount: attempts.length,
      },
      cost: turn.cost,
      marketCost: turn.cost,
      generationId: turn.generationId,
    },
  };
}

function content(turn: GatewayTurn): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [];
  if (turn.reasoning !== undefined) parts.push({ type: 'reasoning', text: turn.reasoning, providerMetadata: { anthropic: { signature: `sig_${turn.id}` } } });
  if (turn.text !== undefined) parts.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) });
  return parts;
}

/** `doGenerate`'s result, as the gateway sends it. */
function result(turn: GatewayTurn): Record<string, unknown> {
  return {
    content: content(turn),
    finishReason: finishReason(turn),
    usage: usage(turn),
    providerMetadata: providerMetadata(turn),
    response: { id: turn.id, modelId: turn.model, timestamp: '2025-11-24T16:00:00.000Z' },
    warnings: [],
  };
}

/** `doStream`'s parts, as the gateway sends them: the generation id comes on the first content part, the cost on `finish`. */
function streamParts(turn: GatewayTurn): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: turn.id, modelId: turn.model, timestamp: '2025-11-24T16:00:00.000Z' }];
  const early = { gateway: { generationId: turn.generationId } };
  let first = true;
  const marked = () => (first ? ((first = false), { providerMetadata: early }) : {});
  if (turn.reasoning !== undefined) {
    parts.push({ type: 'reasoning-start', id: 'reasoning-0', ...marked() });
    for (const delta of halves(turn.reasoning)) parts.push({ type: 'reasoning-delta', id: 'reasoning-0', delta });
    parts.push({ type: 'reasoning-end', id: 'reasoning-0', providerMetadata: { anthropic: { signature: `sig_${turn.id}` } } });
  }
  if (turn.text !== undefined) {
    parts.push({ type: 'text-start', id: 'text-1', ...marked() });
    for (const delta of halves(turn.text)) parts.push({ type: 'text-delta', id: 'text-1', delta });
    parts.push({ type: 'text-end', id: 'text-1' });
  }
  for (const call of turn.toolCalls ?? []) {
    const input = JSON.stringify(call.args);
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name, ...marked() });
    for (const delta of halves(input)) parts.push({ type: 'tool-input-delta', id: call.id, delta });
    parts.push({ type: 'tool-input-end', id: call.id });
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input });
  }
  parts.push({ type: 'finish', finishReason: finishReason(turn), usage: usage(turn), providerMetadata: providerMetadata(turn) });
  return parts;
}

function halves(text: string): string[] {
  if (text.length < 2) return text === '' ? [] : [text];
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}
