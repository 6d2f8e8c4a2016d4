/**
 * Random but legal Hermes-style hook streams, from a seed: the same seed
 * gives the same stream, so a difference found by random-streams.test.ts
 * (or test/slow/random-streams.test.ts) names its seed and replays.
 *
 * A stream is 1-4 sessions whose hooks interleave at random. Each session
 * runs 1-3 turns of 0-4 API calls (retried errors, a final error, streaming
 * and not, in the OpenAI chat, Anthropic messages or OpenAI Responses
 * shape), tool calls (parallel and ended out of order, failing, results as
 * text, JSON text or objects, approvals granted or denied around them) and
 * subagents (one or two at a time, nested), and ends with a finalize, a
 * reset, or not at all. Content is drawn from awkward but legal values:
 * astral, combining and lone-surrogate text, control characters,
 * integer-like and unsorted keys, floats at the edges of the double format,
 * big nested values, empty strings, objects and arrays, long strings.
 *
 * Built on the corpus' vocabulary (test/fixtures/streams/script.ts); the
 * payloads are kept as the script built them (no JSON round trip), so -0
 * and lone surrogates reach the plugin as a host would pass them.
 */

import { Draw } from '../support/seeded-random.ts';
import type { HookName } from '../../src/hooks/names.ts';
import type { HookPayloads } from '../../src/hooks/payloads.ts';
import { Agent, openAiMessage, openAiTool, StreamRecorder, toolMessage, type AgentOptions, type ApiCall, type HookLine, type ToolCallSpec, type Turn } from '../fixtures/streams/script.ts';

type Body = Record<string, unknown>;

/** A recorder that keeps each payload as built (a structured clone), not its JSON form. */
class RawRecorder extends StreamRecorder {
  override emit<K extends HookName>(name: K, payload: HookPayloads[K]): void {
    this.lines.push({ hook: name, payload: structuredClone(payload) as Record<string, unknown> });
  }
}

/** Knobs of one stream; `large` makes more sessions, turns and bigger values more often. */
export interface RandomStreamOptions {
  large?: boolean;
  /**
   * Run some LLM and tool calls through `hooks.execute` as a host that uses
   * managed execution does (`ExecuteLine` and `SettleLine` in `lines`; see
   * random-managed.ts). Its draws are made only with this set, so every
   * other stream of a seed stays as it was.
   */
  managed?: boolean;
  /**
   * Make some sessions Gemini's (`generateContent` answers: `candidates`,
   * `usageMetadata`). Drawn only with this set, as `managed`.
   */
  gemini?: boolean;
}

/** What the host's real call does: return a value or throw, at once (`sync`), a microtask later (`async`), or when its `SettleLine` comes (`late`). */
export type ManagedOutcome = { returns: unknown } | { throws: { name: string; message: string; status?: number } };

/**
 * A managed call: the host runs `hooks.execute(kind, payload, terminal)` here.
 * `outcome` is filled in when the script decides it (before the stream is
 * replayed); a `late` call settles at its `SettleLine`, or at the stream's end
 * when the host never finished it.
 */
export interface ExecuteLine {
  hook: '@execute';
  payload: { id: string; kind: 'llm_execution' | 'tool_execution'; payload: Record<string, unknown>; timing: 'sync' | 'async' | 'late'; outcome: ManagedOutcome };
}

/** The host's real call of a `late` managed call returns (or throws) here. */
export interface SettleLine {
  hook: '@settle';
  payload: { id: string };
}

/**
 * A managed call the host gives up on fails there and then, before its
 * session can close: on native, a managed call that ends after its session
 * closed names the session's parent as its end's propagation root
 * (docs/known-limits.md, "Managed calls where native's scope stack ...").
 */
const ABANDONED_SETTLE_AT_ONCE = true;

/** A line of a managed stream. */
export type StreamLine = HookLine | ExecuteLine | SettleLine;

export interface RandomStream {
  seed: number;
  /** Hook lines only, unless the stream is `managed` (then `ExecuteLine`s and `SettleLine`s too: read `managedLines`). */
  lines: HookLine[];
  /** Every line, managed calls included (the same array as `lines`). */
  managedLines: StreamLine[];
  /** Whether any subagents were open at once under one parent (see `propagation_root_uuid` in corpus.test.ts). */
  concurrentSubagents: boolean;
  /** One line per session: what it did, for a failure message. */
  outline: string[];
}

// ------------------------------------------------------------------ awkward values


const TEXT_PIECES = [
  'plain words',
  'é',
  'e\u0301',
  '漢字',
  '😀',
  '𝄞',
  '👩‍👩‍👧',
  '\u{10FFFF}',
  '\uFEFF',
  '\u2028',
  '\u2029',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\t',
  '\n',
  '\r\n',
  '"',
  '\\',
  '/',
  '</script>',
  '\uD83D', // a lone high surrogate: text cut in the middle of an emoji
  '\uDE00', // a lone low surrogate
  '{"looks":"like json"}',
  '0',
  '-0',
  '1e21',
  'null',
  ' ',
  '',
];

/**
 * Keys as hosts send them. No NUL in a key: native replaces it with U+FFFD
 * and memory keeps it, on purpose (docs/backends/memory-and-native.md, "A NUL
 * in a payload key").
 */
const KEYS = ['10', '9', '0', '01', '-1', '1.5', '4294967295', '4294967294', 'b', 'a', 'A', '_', '', ' ', 'é', 'e\u0301', '😀', '\uE000', '\uFF01', '\u0001', '\u2028', 'constructor', 'toString', 'valueOf', 'kind', 'type', 'role', 'content', 'timestamp_like'];

const NUMBERS = [0, -0, 1, -1, 0.1 + 0.2, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, -(2 ** 53), 2 ** 31, 1.5, -1.5e300, 123456789.123, 1e300, 0.000001, 100, 7];

class Values {
  constructor(readonly d: Draw) {}

  text(maxPieces = 6): string {
    const d = this.d;
    if (d.chance(0.03)) return '';
    if (d.chance(0.03)) return this.long();
    let out = '';
    const n = d.int(1, maxPieces);
    for (let i = 0; i < n; i++) out += d.pick(TEXT_PIECES);
    return out;
  }

  long(): string {
    const d = this.d;
    const unit = d.pick(['abcdefghij', 'é😀\u0301 ', 'line\n', '\u0000\u0001']);
    return unit.repeat(d.int(200, 3000));
  }

  number(): number {
    return this.d.chance(0.5) ? this.d.pick(NUMBERS) : this.d.int(-1000, 100000);
  }

  key(): string {
    // No NUL (see KEYS).
    return this.d.chance(0.7) ? this.d.pick(KEYS) : this.text(2).replaceAll('\u0000', '');
  }

  scalar(): unknown {
    switch (this.d.int(0, 5)) {
      case 0:
        return this.number();
      case 1:
        return this.d.chance(0.5);
      case 2:
        return null;
      default:
        return this.text();
    }
  }

  value(depth: number): unknown {
    if (depth <= 0 || this.d.chance(0.45)) return this.scalar();
    return this.d.chance(0.5) ? this.object(depth - 1) : this.array(depth - 1);
  }

  object(depth: number, maxKeys = 5): Body {
    const out: Body = {};
    const n = this.d.chance(0.1) ? 0 : this.d.int(1, maxKeys);
    // No `__proto__` key: native's subscriber delivery drops it, so the
    // plugin's ATIF on the native backend loses it where memory keeps it
    // (docs/known-limits.md, "A payload key named `__proto__`"). KEYS holds
    // no such key, and a drawn text cannot spell it.
    for (let i = 0; i < n; i++) out[this.key()] = this.value(depth);
    return out;
  }

  array(depth: number): unknown[] {
    const n = this.d.chance(0.1) ? 0 : this.d.int(1, 4);
    return Array.from({ length: n }, () => this.value(depth));
  }

  /** Deeply nested: up to past toJson's depth limit. */
  nested(): unknown {
    const depth = this.d.int(20, 70);
    let value: unknown = this.scalar();
    for (let i = 0; i < depth; i++) value = this.d.chance(0.5) ? [value] : { [this.key()]: value };
    return value;
  }

  /** Tool arguments: usually small, now and then big or deep. */
  args(): Body {
    const d = this.d;
    const args = this.object(d.int(0, 3));
    if (d.chance(0.1)) args[this.key()] = this.nested();
    if (d.chance(0.05)) args.big = Array.from({ length: d.int(50, 400) }, (_, i) => ({ i, v: this.scalar() }));
    return args;
  }

  /** A tool result: text, JSON text, or an object. */
  result(): unknown {
    switch (this.d.int(0, 3)) {
      case 0:
        return this.text();
      case 1:
        return JSON.stringify(this.object(2));
      case 2:
        return this.object(2);
      default:
        return this.d.pick(['', '[]', '{}', this.value(2)]);
    }
  }
}

// ------------------------------------------------------------------ provider shapes

type ApiMode = NonNullable<AgentOptions['apiMode']>;

interface Answer {
  response: Body;
  usage?: Body;
  assistant?: Body;
  finishReason?: string;
  /** What the assistant said, for the turn's end. */
  text: string;
}

function usageOf(d: Draw, mode: ApiMode): Body | undefined {
  const n = () => (d.chance(0.1) ? d.pick([0, 2 ** 31, 1e21, 1.5]) : d.int(1, 5000));
  switch (mode) {
    case 'chat_completions': {
      const prompt = n();
      const completion = n();
      const usage: Body = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
      if (d.chance(0.4)) usage.prompt_tokens_details = { cached_tokens: d.int(0, 1000) };
      if (d.chance(0.3)) usage.completion_tokens_details = { reasoning_tokens: d.int(0, 500) };
      return usage;
    }
    case 'anthropic_messages': {
      const usage: Body = { input_tokens: n(), output_tokens: n() };
      if (d.chance(0.6)) usage.cache_read_input_tokens = d.int(0, 2000);
      if (d.chance(0.6)) usage.cache_creation_input_tokens = d.int(0, 2000);
      return usage;
    }
    default: {
      const input = n();
      const output = n();
      const usage: Body = { input_tokens: input, output_tokens: output, total_tokens: input + output };
      if (d.chance(0.5)) usage.input_tokens_details = { cached_tokens: d.int(0, 1000) };
      if (d.chance(0.5)) usage.output_tokens_details = { reasoning_tokens: d.int(0, 500) };
      return usage;
    }
  }
}

/** The keys the three response shapes here give meaning to. */
const RESPONSE_KEYS: ReadonlySet<string> = new Set(['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage', 'object', 'created', 'created_at', 'status', 'output', 'choices']);

/**
 * Gemini's `usageMetadata`: whole counts, no `thoughtsTokenCount` nor
 * `toolUsePromptTokenCount` (which the plugin's own trajectory counts in and
 * native's `atif` component does not: docs/known-limits.md, "Gemini: the
 * plugin's own trajectory counts what the call is billed for ...").
 */
function geminiUsage(d: Draw): Body {
  const prompt = d.int(1, 5000);
  const candidates = d.int(0, 5000);
  const usage: Body = { promptTokenCount: prompt, candidatesTokenCount: candidates };
  if (d.chance(0.5)) usage.cachedContentTokenCount = d.int(0, 1000);
  if (d.chance(0.8)) usage.totalTokenCount = prompt + candidates;
  return usage;
}

/** A Gemini `generateContent` answer: text and function-call parts (a thought part now and then), `usageMetadata` in its own shape. */
function geminiAnswerOf(v: Values, model: string, id: string, text: string, tools: readonly ToolCallSpec[]): Answer {
  const d = v.d;
  const usage = d.chance(0.1) ? undefined : geminiUsage(d);
  const parts: Body[] = [];
  if (d.chance(0.3)) parts.push({ text: v.text(), thought: true });
  if (text !== '' || tools.length === 0) parts.push({ text });
  // Two calls of one function now and then: native's decode then rejects the answer and reads no counts (src/formats/gemini.ts).
  for (const call of tools) parts.push({ functionCall: { name: call.name, args: call.args } });
  const finish = tools.length > 0 ? 'STOP' : d.pick(['STOP', 'MAX_TOKENS', 'SAFETY']);
  const response: Body = { candidates: [{ content: { role: 'model', parts }, finishReason: finish, index: 0 }], ...(usage ? { usageMetadata: usage } : {}), modelVersion: model, responseId: id };
  const assistant = d.chance(0.5) ? openAiMessage(text, tools) : undefined;
  return { response, usage, assistant, finishReason: d.chance(0.8) ? finish : undefined, text };
}

function answerOf(v: Values, mode: ApiMode, model: string, id: string, text: string, tools: readonly ToolCallSpec[], created: number, gemini = false): Answer {
  if (gemini) return geminiAnswerOf(v, model, id, text, tools);
  const d = v.d;
  // Usage always in the call's own shape: native's plugins.toml `atif` component
  // reads the cache counts by the provider's name, memory by the shape
  // (src/formats/usage.ts; docs/backends/memory-and-native.md, "Token usage
  // whose own shape ..."), so a shape another provider's name would differ there.
  const usage = d.chance(0.1) ? undefined : usageOf(d, mode);
  // A field the provider did not document, added beside the response's own (never in place of one: a
  // Messages response whose `content` is no block list is no Messages response, and native, reading by
  // the provider's name, drops it; docs/backends/memory-and-native.md, "Token usage whose own shape ...").
  const extraKey = v.key();
  const extra = d.chance(0.2) && !RESPONSE_KEYS.has(extraKey) ? { [extraKey]: v.value(2) } : {};
  const content = text === '' && tools.length > 0 && d.chance(0.5) ? null : text;
  switch (mode) {
    case 'anthropic_messages': {
      const blocks: Body[] = [];
      if (d.chance(0.3)) blocks.push({ type: 'thinking', thinking: v.text(), signature: `sig-${id}` });
      if (content !== null) blocks.push({ type: 'text', text: content });
      for (const call of tools) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
      const stop = tools.length > 0 ? 'tool_use' : d.pick(['end_turn', 'max_tokens', 'stop_sequence']);
      const response: Body = { id, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stop, stop_sequence: null, ...(usage ? { usage } : {}), ...extra };
      const assistant = d.chance(0.5) ? openAiMessage(content, tools) : undefined;
      return { response, usage, assistant, finishReason: d.chance(0.8) ? stop : undefined, text: content ?? '' };
    }
    case 'codex_responses': {
      const output: Body[] = [];
      if (d.chance(0.3)) output.push({ type: 'reasoning', id: `rs_${id}`, summary: [{ type: 'summary_text', text: v.text() }] });
      if (content !== null) output.push({ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: content, annotations: [] }] });
      for (const call of tools) output.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' });
      const response: Body = { id, object: 'response', created_at: Math.floor(created), status: 'completed', model, output, ...(usage ? { usage } : {}), ...extra };
      const assistant = d.chance(0.7) ? openAiMessage(content, tools) : undefined;
      return { response, usage, assistant, finishReason: d.chance(0.5) ? (tools.length > 0 ? 'tool_calls' : 'stop') : undefined, text: content ?? '' };
    }
    default: {
      const message = openAiMessage(content, tools);
      const finish = tools.length > 0 ? 'tool_calls' : d.pick(['stop', 'length', 'content_filter']);
      const response: Body = { id, object: d.chance(0.2) ? 'chat.completion.chunk' : 'chat.completion', created: Math.floor(created), model, choices: [{ index: 0, message, finish_reason: finish }], ...(usage ? { usage } : {}), ...extra };
      return { response, usage, assistant: d.chance(0.8) ? message : undefined, finishReason: d.chance(0.8) ? finish : undefined, text: content ?? '' };
    }
  }
}

const FAILURES = [
  { status: 429, type: 'rate_limit_error', retryable: true },
  { status: 500, type: 'server_error', retryable: true },
  { status: 503, type: 'overloaded', retryable: true },
  { status: 529, type: 'overloaded_error', retryable: true },
  { status: 400, type: 'invalid_request_error', retryable: false },
  { status: 401, type: 'authentication_error', retryable: false },
];

// ------------------------------------------------------------------ the scheduler

/** What a session's script yields: nothing (let the others go), or subagents to wait for. */
type Yield = undefined | { children: Script[] };
type Script = Generator<Yield, void, void>;

interface Actor {
  script: Script;
  waitingFor: Actor[];
  done: boolean;
}

function runInterleaved(d: Draw, roots: Script[]): void {
  const actors: Actor[] = roots.map((script) => ({ script, waitingFor: [], done: false }));
  for (;;) {
    const runnable = actors.filter((a) => !a.done && a.waitingFor.every((child) => child.done));
    if (runnable.length === 0) return;
    const actor = d.pick(runnable);
    actor.waitingFor = [];
    const step = actor.script.next();
    if (step.done) {
      actor.done = true;
      continue;
    }
    if (step.value !== undefined) {
      const children = step.value.children.map((script) => ({ script, waitingFor: [], done: false }));
      actors.push(...children);
      actor.waitingFor = children;
    }
  }
}

// ------------------------------------------------------------------ sessions

const MODELS: Record<ApiMode, string[]> = {
  chat_completions: ['gpt-4o-2024-08-06', 'gpt-4o-mini-2024-07-18'],
  anthropic_messages: ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5'],
  codex_responses: ['gpt-5-codex', 'o4-mini'],
};
const PROVIDER: Record<ApiMode, string> = { chat_completions: 'openai', anthropic_messages: 'anthropic', codex_responses: 'openai' };
/** A PNG as a data URL, its base64 past the media rule's 1,024 characters. */
const IMAGE_URL = `data:image/png;base64,iVBORw0KGgo${'QUJD'.repeat(300)}`;
const TOOL_NAMES = ['read_file', 'search_code', 'terminal', 'write_file', 'web_search', 'patch', 'ツール', 'tool with spaces'];

class StreamScript {
  readonly r = new RawRecorder();
  /** The subagents of each session still open (never finalized). */
  readonly #openChildren = new Map<Agent, Set<Agent>>();
  /**
   * Subagents started beside a sibling, and their own subagents: native runs the one whose scope opens second
   * on a scope stack of its own (which one depends on how the sessions interleave).
   */
  readonly #ownStack = new Set<Agent>();
  readonly v: Values;
  readonly outline: string[] = [];
  concurrentSubagents = false;
  #ids = 0;

  constructor(
    readonly d: Draw,
    readonly large: boolean,
    readonly managed = false,
    readonly gemini = false,
  ) {
    this.v = new Values(d);
  }

  /**
   * With `managed`: whether this call runs through `hooks.execute` (drawn
   * only then), as an `ExecuteLine` whose outcome is set by `settle`.
   */
  execute(kind: ExecuteLine['payload']['kind'], payload: Record<string, unknown>, agent: Agent): ExecuteLine | null {
    if (!this.managed || !this.d.chance(0.6)) return null;
    // No managed LLM call in a subagent open beside a sibling: on native it runs on its own scope stack, and
    // its request carries no `x-dynamo-parent-session-id` (docs/known-limits.md, "Managed calls where native's scope stack and the call's parent disagree").
    if (kind === 'llm_execution' && this.#ownStack.has(agent)) return null;
    // No managed call in a session whose subagent is still open: native takes the subagent (the top of its scope
    // stack) for the call's `x-dynamo-session-id` and its cache mark's parent, memory the call's own session
    // (docs/known-limits.md, "Managed calls where native's scope stack ...").
    if ((this.#openChildren.get(agent)?.size ?? 0) > 0) return null;
    const line: ExecuteLine = { hook: '@execute', payload: { id: this.id('exec'), kind, payload: structuredClone(payload), timing: this.d.pick(['sync', 'async', 'late', 'late'] as const), outcome: { returns: null } } };
    (this.r.lines as StreamLine[]).push(line);
    return line;
  }

  /** The managed call's outcome; a `late` one settles here (pass `at: false` for a call the host never finished: it settles at the stream's end). */
  settle(line: ExecuteLine | null | undefined, outcome: ManagedOutcome, at = true): void {
    if (line == null) return;
    line.payload.outcome = outcome;
    if (line.payload.timing === 'late' && at) (this.r.lines as StreamLine[]).push({ hook: '@settle', payload: { id: line.payload.id } });
  }

  /** What a managed LLM call's payload carries: the hooks' ids and routing, and the request. */
  llmPayload(agent: Agent, turn: Turn, call: ApiCall): Record<string, unknown> {
    const o = agent.options;
    return { ...turn.ids, api_request_id: call.id, api_call_count: call.count, platform: agent.platform, model: o.model, provider: o.provider, api_mode: o.apiMode, request: call.body };
  }

  id(prefix: string): string {
    this.#ids += 1;
    return `${prefix}-${this.#ids}`;
  }

  sessionId(): string {
    const base = this.id('s');
    // Now and then a session id a file name cannot hold as is.
    return this.d.chance(0.1) ? `${base} ${this.d.pick(['é😀', 'a/b', '..', 'x:y', '\u0301'])}` : base;
  }

  /** Sessions that answer in Gemini's shape (with `gemini`). */
  readonly geminiSessions = new Set<string>();

  agentOptions(sessionId: string): AgentOptions {
    const d = this.d;
    if (this.gemini && d.chance(0.4)) {
      this.geminiSessions.add(sessionId);
      return { sessionId, model: d.pick(['gemini-2.5-pro', 'gemini-2.5-flash']), provider: d.pick(['gemini', 'google']), apiMode: 'chat_completions', platform: d.pick(['cli', 'api_server']) };
    }
    const apiMode = d.pick(['chat_completions', 'anthropic_messages', 'codex_responses'] as const);
    return {
      sessionId,
      model: d.pick(MODELS[apiMode]),
      provider: PROVIDER[apiMode],
      apiMode,
      platform: d.pick(['cli', 'telegram', 'slack', 'discord', 'api_server']),
      ...(d.chance(0.3) ? { taskId: this.id('task') } : {}),
    };
  }

  pause(): void {
    if (this.d.chance(0.3)) this.r.pause(this.d.pick([0, 0.001, 1, 50, 2000]));
  }

  /** A top-level session: started, 1-3 turns, then finalized, reset or left open. */
  *session(agent: Agent, depth: number, parent?: Agent, goal?: string): Script {
    const d = this.d;
    const log: string[] = [];
    this.outline.push(`${depth === 0 ? 'session' : `${'  '.repeat(depth)}subagent`} ${JSON.stringify(agent.sessionId)} (${agent.options.apiMode}): `);
    const line = this.outline.length - 1;
    if (depth === 0 || d.chance(0.3)) {
      if (d.chance(0.3)) {
        // What a framework host adds: the agent's own name and version.
        this.r.emit('on_session_start', { session_id: agent.sessionId, model: agent.options.model, platform: agent.platform, agent_name: this.v.text(2), ...(d.chance(0.5) ? { agent_version: d.pick(['1.0.0', '', this.v.text(1)]) } : {}) });
      } else agent.start();
      yield;
    }
    const turns = depth > 0 ? 1 : d.int(1, this.large ? 4 : 3);
    for (let t = 0; t < turns; t++) {
      const turn = agent.turn(this.id(`${agent.sessionId}-turn`));
      const ended = yield* this.turn(agent, turn, depth, t === 0 && goal !== undefined ? goal : this.v.text(), log);
      if (!ended) break;
    }
    // A session whose subagent is still open stays open too: native delivers
    // the end of a scope closed before its child only after the child's end
    // (native/scopes.ts; docs/backends/memory-and-native.md, "A scope closed
    // before its child"), memory in the program's order.
    const close = (this.#openChildren.get(agent)?.size ?? 0) > 0 ? 'open' : depth > 0 ? d.pick(['finalize', 'finalize', 'finalize', 'open']) : d.pick(['finalize', 'finalize', 'reset', 'open']);
    if (close === 'finalize') agent.finalize(d.pick(['cli_exit', 'gateway_shutdown', 'subagent_complete', this.v.text(2)]));
    else if (close === 'reset') agent.reset(d.pick(['new_command', 'idle']));
    log.push(close);
    this.outline[line] += log.join(' ');
    if (close !== 'open' && parent !== undefined) this.#openChildren.get(parent)?.delete(agent);
    // The same session id again after it closed (a host that reuses ids after a reset).
    if (close !== 'open' && depth === 0 && d.chance(0.15)) {
      this.outline[line] += ' | again:';
      yield* this.session(new Agent(this.r, agent.options), depth, parent);
    }
  }

  /** One turn; false when it was left unfinished (the session stops there). */
  *turn(agent: Agent, turn: Turn, depth: number, message: string, log: string[]): Generator<Yield, boolean, void> {
    const d = this.d;
    const history: Body[] = d.chance(0.3) ? [{ role: 'user', content: this.v.text() }, { role: 'assistant', content: this.v.text() }] : [];
    // Now and then a multimodal message: content parts instead of a string, the image long enough for the media rule
    // (an observed call's copy leaves it out, a managed call's keeps it whole: the cache's key).
    const content: unknown = d.chance(0.1) ? [{ type: 'text', text: message }, { type: 'image_url', image_url: { url: IMAGE_URL } }] : message;
    turn.user(content as string, history);
    yield;
    const mode = agent.options.apiMode!;
    const model = agent.options.model;
    const messages: Body[] = [{ role: 'system', content: this.v.text(3) }, ...history, { role: 'user', content }];
    const calls = d.int(0, this.large ? 4 : 3);
    let said = '';
    let failed = false;
    const steps: string[] = [];
    for (let c = 0; c < calls && !failed; c++) {
      const body: Body = { model, messages: [...messages], max_tokens: d.pick([256, 4096, 0]) };
      if (d.chance(0.5)) body.tools = [openAiTool(d.pick(TOOL_NAMES), this.v.text(2), { x: { type: 'string' } })];
      if (d.chance(0.4)) body.stream = true;
      if (d.chance(0.2)) body.stream_options = { include_usage: true };
      if (d.chance(0.2)) body[this.v.key()] = this.v.value(2);
      const call = turn.apiCall(body);
      const last = c === calls - 1;
      // Attempts: some failures, then an answer, or a failure that ends the turn.
      let retry = 0;
      let answered = false;
      let lastManaged: ExecuteLine | null = null;
      while (!answered) {
        // Credentials in the request headers now and then: the plugin drops them on both backends.
        turn.attempt(call, retry, d.chance(0.2) ? { 'content-type': 'application/json', authorization: `Bearer sk-${this.id('key')}`, 'x-api-key': 'secret', 'X-Request-Id': this.id('req') } : undefined);
        const managed = this.execute('llm_execution', this.llmPayload(agent, turn, call), agent);
        if (managed) steps.push(`managed-${managed.payload.timing}`);
        yield;
        // A call that never ends (the host crashed mid-request): the turn goes no further.
        if (d.chance(0.03)) {
          this.settle(managed, { throws: { name: 'AbortError', message: 'the host gave up on the call' } }, ABANDONED_SETTLE_AT_ONCE);
          log.push(`[${[...steps, 'pending'].join(',')}]`, 'unended');
          return false;
        }
        this.pause();
        if (d.chance(0.2) && retry < 3) {
          const failure = d.pick(FAILURES);
          const message = this.v.text(3);
          this.settle(managed, { throws: { name: `ProviderError${failure.status}`, message, status: failure.status } });
          turn.failed(call, retry, { ...failure, message });
          steps.push(`error${failure.status}`);
          yield;
          if (!failure.retryable || d.chance(0.2)) {
            failed = true;
            break;
          }
          retry += 1;
          continue;
        }
        answered = true;
        lastManaged = managed;
      }
      if (failed) break;
      const toolCount = last ? 0 : d.pick([0, 1, 1, 2, 3]);
      const tools: ToolCallSpec[] = Array.from({ length: toolCount }, () => ({ id: this.id(d.pick(['call', 'toolu', 'fc'])), name: d.pick(TOOL_NAMES), args: this.v.args() }));
      const delegating = depth < 2 && toolCount > 0 && d.chance(this.large ? 0.35 : 0.25);
      if (delegating) tools[0]!.name = 'delegate_task';
      const text = toolCount > 0 && d.chance(0.5) ? '' : this.v.text();
      const answer = answerOf(this.v, mode, model, this.id('resp'), text, tools, this.r.now(), this.geminiSessions.has(agent.sessionId));
      this.settle(lastManaged, { returns: structuredClone(answer.response) });
      turn.answered(call, answer.response, { ...(answer.usage ? { usage: answer.usage } : {}), ...(answer.assistant ? { assistant: answer.assistant } : {}), ...(answer.finishReason ? { finishReason: answer.finishReason } : {}) });
      steps.push(`llm${retry > 0 ? `(retried ${retry})` : ''}`);
      said = answer.text;
      yield;
      messages.push(answer.assistant ?? { role: 'assistant', content: answer.text });
      if (toolCount > 0) {
        steps.push(`tools:${toolCount}${delegating ? '+delegate' : ''}`);
        yield* this.tools(agent, turn, call, tools, depth, delegating, messages);
      }
    }
    // Ends nobody started: a tool result, an API response and an API error whose starts never came.
    if (d.chance(0.05)) {
      const ghost = turn.apiCall({ model, messages: [] });
      turn.toolEnded(ghost, this.id('ghost'), d.pick(TOOL_NAMES), {}, this.v.result());
      turn.answered(ghost, answerOf(this.v, mode, model, this.id('resp'), this.v.text(), [], this.r.now(), this.geminiSessions.has(agent.sessionId)).response);
      turn.failed(turn.apiCall({ model, messages: [] }), 0, { ...d.pick(FAILURES), message: this.v.text(2) });
      steps.push('ghosts');
      yield;
    }
    log.push(`[${steps.join(',')}]`);
    // A turn the host never ends (interrupted, crashed): the session goes no further.
    if (d.chance(0.1)) {
      log.push('unended');
      return false;
    }
    turn.end(said, d.chance(0.3) ? [...messages.slice(1)] : [], failed ? { failed: true, reason: 'api_error' } : d.chance(0.1) ? { reason: 'interrupted' } : {});
    yield;
    return true;
  }

  *tools(agent: Agent, turn: Turn, call: ApiCall, tools: ToolCallSpec[], depth: number, delegating: boolean, messages: Body[]): Generator<Yield, void, void> {
    const d = this.d;
    // A tool call the host does not tie to its API call (an empty api_request_id).
    const untied = new Set(tools.filter(() => d.chance(0.1)).map((tool) => tool.id));
    const callOf = (tool: ToolCallSpec) => (untied.has(tool.id) ? null : call);
    const managed = new Map<string, ExecuteLine | null>();
    for (const tool of tools) {
      turn.toolStarted(callOf(tool), tool.id, tool.name, tool.args);
      managed.set(tool.id, this.execute('tool_execution', { ...turn.ids, api_request_id: callOf(tool)?.id ?? '', tool_call_id: tool.id, tool_name: tool.name, args: tool.args }, agent));
      yield;
    }
    const denied = new Set<string>();
    for (const tool of tools) {
      if (tool.name === 'delegate_task' || !d.chance(0.2)) continue;
      const approval = {
        session_id: agent.sessionId,
        turn_id: turn.turnId,
        tool_call_id: tool.id,
        session_key: agent.sessionId,
        command: this.v.text(3),
        description: this.v.text(2),
        pattern_key: 'rm',
        pattern_keys: d.chance(0.5) ? ['rm', 'rm -rf'] : [],
        surface: d.pick(['cli', 'gateway'] as const),
      };
      this.r.emit('pre_approval_request', approval);
      yield;
      const choice = d.pick(['once', 'session', 'always', 'deny']);
      if (choice === 'deny') denied.add(tool.id);
      this.r.emit('post_approval_response', { ...approval, choice, ...(d.chance(0.5) ? { decided_by: 'user' } : {}) });
      yield;
    }
    // An approval from a surface that knows only the session key.
    if (d.chance(0.05)) {
      this.r.emit('pre_approval_request', { session_key: agent.sessionId, command: this.v.text(2), surface: 'gateway' });
      this.r.emit('post_approval_response', { session_key: agent.sessionId, command: this.v.text(2), surface: 'gateway', choice: d.pick(['once', 'deny']) });
      yield;
    }
    if (delegating) {
      const goal = this.v.text(3);
      const n = d.chance(0.4) ? 2 : 1;
      const open = this.#openChildren.get(agent) ?? new Set<Agent>();
      this.#openChildren.set(agent, open);
      if (n > 1 || open.size > 0) this.concurrentSubagents = true;
      const openBefore = open.size;
      const children = Array.from({ length: n }, () => {
        const options = this.agentOptions(this.sessionId());
        const role = d.pick(['reader', 'reviewer', this.v.text(2)]);
        const child = agent.delegate(turn, options, role, goal, this.id('subagent'));
        if (n > 1 || openBefore > 0 || this.#ownStack.has(agent)) this.#ownStack.add(child);
        return { child, role };
      });
      for (const { child } of children) open.add(child);
      yield { children: children.map(({ child }) => this.session(child, depth + 1, agent, goal)) };
      for (const { child, role } of d.shuffle(children)) {
        if (d.chance(0.3)) {
          // As Hermes sends it when it knows the delegating call: its tool_call_id too.
          this.r.emit('subagent_stop', {
            parent_session_id: agent.sessionId,
            parent_turn_id: turn.turnId,
            child_session_id: child.sessionId,
            child_role: role,
            child_summary: this.v.text(3),
            child_status: d.pick(['completed', 'failed']),
            tool_call_history: [{ tool_name: d.pick(TOOL_NAMES), ok: d.chance(0.5) }],
            duration_ms: d.pick([0, 1200, 1.5]),
            tool_call_id: tools[0]!.id,
          });
        } else agent.subagentStopped(turn, child, role, this.v.text(3), d.pick(['completed', 'failed', 'interrupted']));
        yield;
      }
    }
    for (const tool of d.shuffle(tools)) {
      const result = denied.has(tool.id) ? 'BLOCKED: the user denied this command' : this.v.result();
      const failure = denied.has(tool.id)
        ? { status: 'blocked', errorType: 'ApprovalDenied', errorMessage: 'denied by the user' }
        : d.chance(0.2)
          ? { status: d.pick(['error', 'timeout']), errorType: d.pick(['NonZeroExit', 'TimeoutError', this.v.text(1)]), errorMessage: this.v.text(3) }
          : undefined;
      this.pause();
      // A tool the host never ends: the session's close ends it.
      if (!denied.has(tool.id) && tool.name !== 'delegate_task' && d.chance(0.03)) {
        this.settle(managed.get(tool.id), { throws: { name: 'AbortError', message: 'the host gave up on the tool' } }, ABANDONED_SETTLE_AT_ONCE);
        continue;
      }
      this.settle(managed.get(tool.id), failure !== undefined && !denied.has(tool.id) ? { throws: { name: failure.errorType, message: failure.errorMessage } } : { returns: structuredClone(result) });
      turn.toolEnded(callOf(tool), tool.id, tool.name, tool.args, result, failure);
      messages.push(toolMessage(tool.id, typeof result === 'string' ? result : JSON.stringify(result)));
      yield;
    }
  }
}

/** The stream of `seed`. */
export function randomStream(seed: number, options: RandomStreamOptions = {}): RandomStream {
  const d = new Draw(seed);
  const g = new StreamScript(d, options.large === true, options.managed === true, options.gemini === true);
  const sessions = d.int(1, options.large ? 4 : 3);
  const roots = Array.from({ length: sessions }, () => g.session(new Agent(g.r, g.agentOptions(g.sessionId())), 0));
  runInterleaved(d, roots);
  return { seed, lines: g.r.lines, managedLines: g.r.lines, concurrentSubagents: g.concurrentSubagents, outline: g.outline };
}
