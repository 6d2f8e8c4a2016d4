// Seeded random provider replies, in the JSON and server-sent-event shapes
// of OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini
// generateContent as their API references document them: what the real provider clients parse
// when no one wrote the reply by hand. A scenario is an agent loop of 1-4
// model turns (each turn but the last calls 1-3 tools, in parallel, the
// last answers and stops for a drawn reason); each reply is drawn again at
// request time, because its form follows the request (`stream`,
// `stream_options.include_usage`), as the provider's does:
// - text split at random UTF-16 indexes, so a delta may end inside an
//   astral character's surrogate pair (JSON escapes the half, as the wire
//   allows), with empty deltas between;
// - the SSE body cut into random byte slices, so a multi-byte character
//   may arrive in two network reads;
// - tool arguments split across chunks, `{}` for a tool without parameters;
// - usage with and without the cached/reasoning details, only in the last
//   chunk, or absent when the request did not ask for it;
// - finish reasons: stop, length, tool calls, content filter, refusals;
// - reasoning (a Responses summary, an Anthropic thinking block, Gemini's
//   thought parts) before the answer;
// - Gemini: function calls without ids (two of one function may share a
//   turn), a thought signature on the first call now and then, usage in every
//   chunk (the prompt's count until the last), the finish reason in the last
//   chunk or in one more of an empty text.
// A failing seed replays from its number alone.
import { Draw } from './seeded-random.ts';

export type RandomWireKind = 'chat' | 'responses' | 'anthropic' | 'gemini';

/** A tool the program offers, with a drawer of legal arguments (`{}` for one without parameters). */
export interface RandomTool {
  name: string;
  args(draw: Draw): Record<string, unknown>;
}

export interface RandomCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** How a turn ends: a model that calls tools, or one of the ways a final answer stops. */
export type Finish = 'tool_calls' | 'stop' | 'length' | 'content_filter' | 'refusal' | 'stop_sequence';

/** The provider's counts. OpenAI and Gemini: `input` includes `cached`. Anthropic: `input` excludes the cache (`cached` read, `cacheWrite` created). Gemini: `reasoning` (thoughts) is apart from `output`. */
export interface RandomUsage {
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
  reasoning: number;
}

export interface RandomTurn {
  id: string;
  model: string;
  /** The answer's text; undefined when the turn has none (a tool call alone, or a refusal). */
  text?: string;
  /** A refusal's text (OpenAI's `refusal` field and part; Anthropic says it with `stop_reason: "refusal"`). */
  refusal?: string;
  /** The model's reasoning: a Responses reasoning item's summary, an Anthropic thinking block, Gemini's thought parts (Chat Completions has none). */
  reasoning?: string;
  calls: RandomCall[];
  finish: Finish;
  usage: RandomUsage;
  /** Whether the usage carries the optional details objects (OpenAI) or cache fields (Anthropic). */
  details: boolean;
}

export interface RandomScenario {
  wire: RandomWireKind;
  turns: RandomTurn[];
  /** One line per turn, for a failure message. */
  outline: string[];
}

/** Pieces texts are built from: ASCII, JSON's escapes, multi-byte and astral characters, a line separator. */
const PIECES = ['Paris', ' ', 'sunny', ', ', '21°C', '.', 'é', '中文', '😀', '𝄞', '\n', '"quoted"', '\\', '\u2028', 'ok', '🇫🇷', 'naïve', '\t'];

export function randomText(draw: Draw, max = 12): string {
  let text = '';
  const n = draw.int(1, max);
  for (let i = 0; i < n; i++) text += draw.pick(PIECES);
  return text;
}

/** For a program that answers some last turns with another request (the Claude Agent SDK's CLI re-prompts after a refusal or an empty answer). */
export interface ScenarioLimits {
  /** The ways the last turn may stop. */
  finals?: readonly Finish[];
  /** Whether the last turn may answer with no text (default true). */
  emptyAnswer?: boolean;
}

/** The ways a wire's last turn stops (Gemini has no refusal: a blocked answer is its content filter). */
const FINALS: Record<RandomWireKind, readonly Finish[]> = {
  chat: ['stop', 'stop', 'length', 'content_filter', 'refusal'],
  responses: ['stop', 'stop', 'length', 'content_filter', 'refusal'],
  anthropic: ['stop', 'stop', 'length', 'refusal', 'stop_sequence'],
  gemini: ['stop', 'stop', 'length', 'content_filter'],
};

/** Draws a scenario of 1-4 turns on `wire`, calling `tools`. */
export function randomScenario(seed: number, wire: RandomWireKind, model: string, tools: readonly RandomTool[], limits: ScenarioLimits = {}): RandomScenario {
  const { finals } = limits;
  const draw = new Draw(seed);
  const count = draw.int(1, 4);
  const turns: RandomTurn[] = [];
  let callNumber = 0;
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    const calls: RandomCall[] = [];
    if (!last) {
      const n = draw.int(1, 3);
      for (let c = 0; c < n; c++) {
        const tool = draw.pick(tools);
        calls.push({ id: `call_${seed}_${++callNumber}`, name: tool.name, args: tool.args(draw) });
      }
    }
    let finish: Finish = 'tool_calls';
    if (last) finish = draw.pick(finals ?? FINALS[wire]);
    let text: string | undefined;
    let refusal: string | undefined;
    if (finish === 'refusal' && wire !== 'anthropic') refusal = randomText(draw);
    else if (!last) text = draw.chance(0.5) ? randomText(draw) : undefined;
    else if (finish === 'refusal') text = draw.chance(0.5) ? randomText(draw) : undefined;
    else text = draw.chance(0.9) || limits.emptyAnswer === false ? randomText(draw) : '';
    const input = draw.int(1, 5000);
    const output = draw.int(1, 800);
    const details = draw.chance(0.7);
    const usage: RandomUsage =
      wire === 'anthropic'
        ? { input, output, cached: details && draw.chance(0.5) ? draw.int(0, 4000) : 0, cacheWrite: details && draw.chance(0.5) ? draw.int(0, 2000) : 0, reasoning: 0 }
        : { input, output, cached: details && draw.chance(0.6) ? draw.int(0, input) : 0, cacheWrite: 0, reasoning: details && draw.chance(0.5) ? draw.int(0, output) : 0 };
    // Drawn last, so the rest of a seed's scenario is what it was before reasoning was drawn.
    const reasoning = wire !== 'chat' && draw.chance(0.3) ? randomText(draw) : undefined;
    turns.push({ id: `${wire}_${seed}_${i + 1}`, model, text, refusal, calls, finish, usage, details, ...(reasoning === undefined ? {} : { reasoning }) });
  }
  const outline = turns.map(
    (turn, i) =>
      `turn ${i + 1}: ${turn.calls.length} call(s) [${turn.calls.map((c) => c.name).join(', ')}], finish ${turn.finish}, text ${JSON.stringify(turn.text)}, refusal ${JSON.stringify(turn.refusal)}, usage ${JSON.stringify(turn.usage)}${turn.details ? '' : ' (no details)'}`,
  );
  return { wire, turns, outline };
}

export interface RandomWireRequest {
  url: string;
  body: Record<string, any>;
}

/**
 * A `fetch` that answers request N with turn N of `scenario`, drawn into the
 * wire form the request asks for; requests are kept. Running out of turns is
 * the provider's 500.
 */
export class RandomWire {
  readonly requests: RandomWireRequest[] = [];
  /** The requests (0-based) answered with a retryable error rather than a turn. */
  readonly failedRequests: number[] = [];
  readonly #scenario: RandomScenario;
  readonly #seed: number;
  readonly #failFirst: Set<number>;
  readonly #refuseAll: Set<number>;
  #turn = 0;

  /** How many turns were served (requests answered with a reply). */
  get turnsServed(): number {
    return this.#turn;
  }

  /**
   * `failFirstAttemptOf`: turns (0-based) whose first request gets the provider's retryable error (an overload, with a
   * short `retry-after-ms`); `refuseAllOf`: turns whose every request gets it (the client's retries run out).
   */
  constructor(seed: number, scenario: RandomScenario, options: { failFirstAttemptOf?: readonly number[]; refuseAllOf?: readonly number[] } = {}) {
    this.#seed = seed;
    this.#scenario = scenario;
    this.#failFirst = new Set(options.failFirstAttemptOf ?? []);
    this.#refuseAll = new Set(options.refuseAllOf ?? []);
  }

  readonly fetch = async (input: unknown, init?: { body?: unknown }): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : String((input as { url?: unknown }).url);
    let text: string | undefined;
    if (typeof init?.body === 'string') text = init.body;
    else if (input instanceof Request) text = await input.clone().text();
    const body = (text === undefined ? {} : JSON.parse(text)) as Record<string, any>;
    this.requests.push({ url, body });
    const request = this.requests.length - 1;
    const index = this.#turn;
    const turn = this.#scenario.turns[index];
    const headers = { 'x-request-id': `req_${this.#seed}_${request + 1}` };
    if (turn === undefined) {
      return new Response(JSON.stringify({ error: { message: `no turn ${index + 1} in seed ${this.#seed}`, type: 'server_error', param: null, code: null } }), {
        status: 500,
        headers: { 'content-type': 'application/json', ...headers },
      });
    }
    const wire = this.#scenario.wire;
    if (this.#failFirst.delete(index) || this.#refuseAll.has(index)) {
      this.failedRequests.push(request);
      // Gemini sends no retry header (its body's RetryInfo says when); the short one keeps the SDK from waiting its 2 s backoff.
      const [status, body] = FAILURES[wire];
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'retry-after-ms': '1', ...headers } });
    }
    this.#turn += 1;
    // The reply's form is drawn from its own seed, so the scenario does not depend on what the client asked.
    const draw = new Draw(this.#seed * 31 + index + 1);
    // Gemini streams from another method (`:streamGenerateContent?alt=sse`); the others say `stream: true`.
    if (wire === 'gemini' ? url.includes(':streamGenerateContent') : body.stream === true) {
      const frames = wire === 'chat' ? chatFrames(draw, turn, body.stream_options?.include_usage === true) : wire === 'responses' ? responsesFrames(draw, turn) : wire === 'gemini' ? geminiFrames(draw, turn) : anthropicFrames(draw, turn);
      return new Response(sseBody(draw, frames), { status: 200, headers: { 'content-type': 'text/event-stream', ...headers } });
    }
    const json = wire === 'chat' ? chatJson(turn) : wire === 'responses' ? responsesJson(turn, 'completed') : wire === 'gemini' ? geminiJson(draw, turn) : anthropicJson(turn);
    return new Response(JSON.stringify(json), { status: 200, headers: { 'content-type': 'application/json', ...headers } });
  };
}

type Frame = { event?: string; data: unknown };

/** Each wire's retryable refusal of a request: an overload, or Gemini's rate limit. */
const FAILURES: Record<RandomWireKind, [number, unknown]> = {
  chat: [503, { error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } }],
  responses: [503, { error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } }],
  anthropic: [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
  gemini: [429, { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }],
};

/** The frames as SSE text, sent in random byte slices (a multi-byte character may be cut between two reads). */
function sseBody(draw: Draw, frames: readonly Frame[]): ReadableStream<Uint8Array> {
  const text = frames.map((frame) => `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data)}\n\n`).join('');
  const bytes = new TextEncoder().encode(text);
  const slices: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = draw.chance(0.3) ? draw.int(1, 8) : draw.int(9, 400);
    slices.push(bytes.slice(at, at + size));
    at += size;
  }
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = slices.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

/**
 * `text` in 1-6 deltas cut at random UTF-16 indexes (a cut may fall inside
 * a surrogate pair: each half is a JSON escape on the wire), with empty
 * deltas mixed in when `empties` (a provider may send them).
 */
export function splitText(draw: Draw, text: string, empties = true): string[] {
  const cuts = new Set<number>();
  const n = draw.int(0, Math.min(5, text.length));
  for (let i = 0; i < n; i++) cuts.add(draw.int(1, Math.max(1, text.length - 1)));
  const sorted = [...cuts].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const cut of sorted) {
    pieces.push(text.slice(from, cut));
    from = cut;
  }
  pieces.push(text.slice(from));
  const out: string[] = [];
  for (const piece of pieces) {
    if (empties && draw.chance(0.15)) out.push('');
    if (piece !== '') out.push(piece);
  }
  return out;
}

// ------------------------------------------------------------------ OpenAI Chat Completions

const CREATED = 1_764_000_000;

function chatUsage(turn: RandomTurn): Record<string, unknown> {
  const u = turn.usage;
  const usage: Record<string, unknown> = { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output };
  if (turn.details) {
    usage.prompt_tokens_details = { cached_tokens: u.cached, audio_tokens: 0 };
    usage.completion_tokens_details = { reasoning_tokens: u.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 };
  }
  return usage;
}

function chatFinish(turn: RandomTurn): string {
  // A refusal ends as `stop`: the refusal field says it.
  return turn.finish === 'refusal' || turn.finish === 'stop_sequence' ? 'stop' : turn.finish;
}

function chatJson(turn: RandomTurn): Record<string, unknown> {
  const calls = turn.calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
  return {
    id: turn.id,
    object: 'chat.completion',
    created: CREATED,
    model: turn.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: turn.text ?? null, refusal: turn.refusal ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}), annotations: [] },
        logprobs: null,
        finish_reason: chatFinish(turn),
      },
    ],
    usage: chatUsage(turn),
    service_tier: 'default',
    system_fingerprint: 'fp_random',
  };
}

function chatFrames(draw: Draw, turn: RandomTurn, includeUsage: boolean): Frame[] {
  // With include_usage every chunk says `usage: null` but the last, which has no choices.
  const chunk = (delta: Record<string, unknown>, finish: string | null): Frame => ({
    data: {
      id: turn.id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model: turn.model,
      system_fingerprint: 'fp_random',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    },
  });
  const frames: Frame[] = [chunk({ role: 'assistant', content: turn.text === undefined && turn.calls.length > 0 ? null : '', refusal: null }, null)];
  for (const piece of splitText(draw, turn.text ?? '')) frames.push(chunk({ content: piece }, null));
  for (const piece of splitText(draw, turn.refusal ?? '')) frames.push(chunk({ refusal: piece }, null));
  // Parallel calls: each call's first delta names it; its arguments follow in pieces. Consecutive deltas
  // sometimes share a chunk (the last piece of one call with the first of the next).
  const deltas: Array<Record<string, unknown>> = [];
  turn.calls.forEach((call, index) => {
    const args = splitText(draw, JSON.stringify(call.args), false);
    const first = draw.chance(0.5) ? (args.shift() ?? '') : '';
    deltas.push({ index, id: call.id, type: 'function', function: { name: call.name, arguments: first } });
    for (const piece of args) deltas.push({ index, function: { arguments: piece } });
  });
  while (deltas.length > 0) frames.push(chunk({ tool_calls: deltas.splice(0, draw.chance(0.25) ? 2 : 1) }, null));
  frames.push(chunk({}, chatFinish(turn)));
  if (includeUsage) frames.push({ data: { id: turn.id, object: 'chat.completion.chunk', created: CREATED, model: turn.model, system_fingerprint: 'fp_random', choices: [], usage: chatUsage(turn) } });
  frames.push({ data: '[DONE]' });
  return frames;
}

// ------------------------------------------------------------------ OpenAI Responses

function responsesUsage(turn: RandomTurn): Record<string, unknown> {
  const u = turn.usage;
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: turn.details ? u.cached : 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: turn.details ? u.reasoning : 0 },
    total_tokens: u.input + u.output,
  };
}

function responsesOutput(turn: RandomTurn): Array<Record<string, any>> {
  const output: Array<Record<string, any>> = [];
  if (turn.reasoning !== undefined) output.push({ id: `rs_${turn.id}`, type: 'reasoning', summary: [{ type: 'summary_text', text: turn.reasoning }] });
  if (turn.text !== undefined || turn.refusal !== undefined) {
    const content = turn.refusal !== undefined ? [{ type: 'refusal', refusal: turn.refusal }] : [{ type: 'output_text', text: turn.text, annotations: [], logprobs: [] }];
    output.push({ id: `msg_${turn.id}`, type: 'message', status: 'completed', role: 'assistant', content });
  }
  for (const call of turn.calls) output.push({ id: `fc_${call.id}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) });
  return output;
}

function responsesIncomplete(turn: RandomTurn): { status: string; incomplete_details: { reason: string } | null } {
  if (turn.finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (turn.finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

function responsesJson(turn: RandomTurn, _status: 'completed'): Record<string, unknown> {
  return {
    id: turn.id,
    object: 'response',
    created_at: CREATED,
    ...responsesIncomplete(turn),
    error: null,
    instructions: null,
    model: turn.model,
    output: responsesOutput(turn),
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: responsesUsage(turn),
  };
}

function responsesFrames(draw: Draw, turn: RandomTurn): Frame[] {
  const frames: Frame[] = [];
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, sequence_number: frames.length, ...data } });
  const head = { id: turn.id, object: 'response', created_at: CREATED, status: 'in_progress', error: null, incomplete_details: null, model: turn.model, output: [], usage: null };
  push('response.created', { response: head });
  push('response.in_progress', { response: head });
  responsesOutput(turn).forEach((item, index) => {
    if (item.type === 'reasoning') {
      const text = item.summary[0].text as string;
      push('response.output_item.added', { output_index: index, item: { id: item.id, type: 'reasoning', summary: [] } });
      push('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      for (const delta of splitText(draw, text)) push('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta });
      push('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text });
      push('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      const part = item.content[0] as Record<string, any>;
      push('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      if (part.type === 'refusal') {
        push('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'refusal', refusal: '' } });
        for (const delta of splitText(draw, part.refusal)) push('response.refusal.delta', { item_id: item.id, output_index: index, content_index: 0, delta });
        push('response.refusal.done', { item_id: item.id, output_index: index, content_index: 0, refusal: part.refusal });
      } else {
        push('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
        for (const delta of splitText(draw, part.text)) push('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
        push('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] });
      }
      push('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    } else {
      push('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of splitText(draw, item.arguments, false)) push('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta });
      push('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments });
    }
    push('response.output_item.done', { output_index: index, item });
  });
  const final = responsesJson(turn, 'completed');
  push(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return frames;
}

// ------------------------------------------------------------------ Anthropic Messages

const STOP_SEQUENCE = '###';

function anthropicStop(turn: RandomTurn): string {
  switch (turn.finish) {
    case 'tool_calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    case 'stop_sequence':
      return 'stop_sequence';
    default:
      return 'end_turn';
  }
}

/** Anthropic's usage; without details the cache fields are null (as older messages and some gateways send them). */
function anthropicUsage(turn: RandomTurn): Record<string, unknown> {
  const u = turn.usage;
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: turn.details ? u.cacheWrite : null,
    cache_read_input_tokens: turn.details ? u.cached : null,
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

function anthropicContent(turn: RandomTurn): Array<Record<string, unknown>> {
  const content: Array<Record<string, unknown>> = [];
  if (turn.reasoning !== undefined) content.push({ type: 'thinking', thinking: turn.reasoning, signature: `sig_${turn.id}` });
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  for (const call of turn.calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
  return content;
}

function anthropicJson(turn: RandomTurn): Record<string, unknown> {
  return {
    id: turn.id,
    type: 'message',
    role: 'assistant',
    model: turn.model,
    content: anthropicContent(turn),
    stop_reason: anthropicStop(turn),
    stop_sequence: turn.finish === 'stop_sequence' ? STOP_SEQUENCE : null,
    usage: anthropicUsage(turn),
  };
}

function anthropicFrames(draw: Draw, turn: RandomTurn): Frame[] {
  const frames: Frame[] = [];
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, ...data } });
  // message_start carries the input side and a first output count; message_delta the final output count,
  // and (as the API now sends it) sometimes the input side again, cumulative.
  push('message_start', { message: { id: turn.id, type: 'message', role: 'assistant', model: turn.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...anthropicUsage(turn), output_tokens: draw.int(1, 3) } } });
  anthropicContent(turn).forEach((block, index) => {
    if (block.type === 'thinking') {
      push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const delta of splitText(draw, block.thinking as string)) push('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: delta } });
      push('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'text') {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const delta of splitText(draw, block.text as string)) push('content_block_delta', { index, delta: { type: 'text_delta', text: delta } });
    } else {
      push('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      // An empty input may come as no delta at all, or as one empty partial_json.
      const pieces = json === '{}' ? draw.pick([[], [''], ['{}']]) : splitText(draw, json, false);
      for (const part of pieces) push('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    push('content_block_stop', { index });
  });
  const cumulative = draw.chance(0.5);
  const usage = cumulative ? anthropicUsage(turn) : { output_tokens: turn.usage.output };
  if (cumulative) delete (usage as Record<string, unknown>).service_tier;
  push('message_delta', { delta: { stop_reason: anthropicStop(turn), stop_sequence: turn.finish === 'stop_sequence' ? STOP_SEQUENCE : null }, usage });
  push('message_stop', {});
  return frames;
}

// ------------------------------------------------------------------ Gemini generateContent

const GEMINI_FINISH: Record<Finish, string> = { tool_calls: 'STOP', stop: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY', refusal: 'STOP', stop_sequence: 'STOP' };

/** `usageMetadata`: `promptTokenCount` includes the cache, `thoughtsTokenCount` is apart from `candidatesTokenCount`; counts of 0 are left out, as the API leaves them. */
function geminiUsage(turn: RandomTurn): Record<string, unknown> {
  const u = turn.usage;
  const thoughts = turn.details ? u.reasoning : 0;
  return {
    promptTokenCount: u.input,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.output + thoughts,
    ...(turn.details && u.cached > 0 ? { cachedContentTokenCount: u.cached } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: u.input }],
  };
}

/** The answer's parts in order: thoughts, text, function calls (no ids; the first sometimes signed, as thinking models sign it). */
function geminiParts(draw: Draw, turn: RandomTurn, split: boolean): Array<Record<string, unknown>> {
  const texts = (text: string | undefined, extra: Record<string, unknown>) => (text === undefined ? [] : (split ? splitText(draw, text) : [text]).map((piece) => ({ text: piece, ...extra })));
  const signed = turn.calls.length > 0 && draw.chance(0.5);
  return [
    ...texts(turn.reasoning, { thought: true }),
    ...texts(turn.text, {}),
    ...turn.calls.map((call, index) => ({ functionCall: { name: call.name, args: call.args }, ...(signed && index === 0 ? { thoughtSignature: `sig_${turn.id}` } : {}) })),
  ];
}

function geminiCandidate(parts: Array<Record<string, unknown>>, finish: string | undefined): Record<string, unknown> {
  // A candidate blocked before it said anything has no content.
  return { ...(parts.length === 0 ? {} : { content: { parts, role: 'model' } }), ...(finish === undefined ? {} : { finishReason: finish }), index: 0 };
}

function geminiJson(draw: Draw, turn: RandomTurn): Record<string, unknown> {
  return { candidates: [geminiCandidate(geminiParts(draw, turn, false), GEMINI_FINISH[turn.finish])], usageMetadata: geminiUsage(turn), modelVersion: turn.model, responseId: turn.id };
}

/** One chunk per 1-2 parts, each with the usage so far (the prompt's count); the last with the finish reason and the whole usage, or one more chunk of an empty text says it. */
function geminiFrames(draw: Draw, turn: RandomTurn): Frame[] {
  const parts = geminiParts(draw, turn, true);
  const groups: Array<Array<Record<string, unknown>>> = [];
  while (parts.length > 0) groups.push(parts.splice(0, draw.chance(0.3) ? 2 : 1));
  if (groups.length === 0 || draw.chance(0.3)) groups.push(groups.length === 0 && draw.chance(0.5) ? [] : [{ text: '' }]);
  const soFar = { promptTokenCount: turn.usage.input, totalTokenCount: turn.usage.input, promptTokensDetails: [{ modality: 'TEXT', tokenCount: turn.usage.input }] };
  return groups.map((group, index) => {
    const last = index === groups.length - 1;
    return { data: { candidates: [geminiCandidate(group, last ? GEMINI_FINISH[turn.finish] : undefined)], usageMetadata: last ? geminiUsage(turn) : soFar, modelVersion: turn.model, responseId: turn.id } };
  });
}
