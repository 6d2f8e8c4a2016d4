/**
 * The converter's fast paths against the general rules they stand in for,
 * on random and adversarial inputs: the same result, key order and
 * `undefined` members included.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../src/shared/json.ts';
import { canonicalJson } from '../../../src/formats/native-text.ts';
import { extractMetrics, generalMetrics } from '../../../src/formats/atif/payload/usage.ts';
import { removeProjectedToolCallDuplicates } from '../../../src/formats/atif/convert/finish.ts';
import { extractToolCalls, generalToolCalls } from '../../../src/formats/atif/payload/tool-calls.ts';
import type { AtifStep } from '../../../src/formats/atif/types.ts';
import { seededRandom } from '../../support/seeded-random.ts';

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

/** Text of a value that tells key order and `undefined` members apart. */
const exact = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (v === undefined ? '<undefined>' : v));

const COUNTS: unknown[] = [0, 1, 812, 18, 830, -1, 1.5, 2 ** 32, 2 ** 31 - 1, Number.NaN, '12', null, undefined, true, {}, [3]];
const USAGE_KEYS = [
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'input_tokens',
  'output_tokens',
  'cached_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'prompt_tokens_details',
  'cost_usd',
  'cost',
  'promptTokenCount',
  'inputTokens',
  'logprobs',
  'prompt_token_ids',
  'reasoning',
  '0',
];

function randomUsage(next: () => number): unknown {
  const roll = next();
  if (roll < 0.05) return pick(next, [null, 3, 'usage', [1, 2], undefined]);
  const usage: Record<string, unknown> = {};
  // Mostly the plain three keys in any order and subset, sometimes one more.
  const keys = ['prompt_tokens', 'completion_tokens', 'total_tokens'].filter(() => next() < 0.8);
  if (next() < 0.5) keys.reverse();
  if (next() < 0.35) keys.splice(Math.floor(next() * (keys.length + 1)), 0, pick(next, USAGE_KEYS));
  for (const key of keys) {
    if (key === 'prompt_tokens_details') usage[key] = { cached_tokens: pick(next, COUNTS) };
    else if (key === 'cost') usage[key] = { currency: pick(next, ['USD', 'EUR']), total: pick(next, [0.5, 1, null]) };
    else if (key === 'logprobs' || key === 'prompt_token_ids') usage[key] = [1, -0.5, 2];
    else usage[key] = pick(next, COUNTS);
  }
  return usage;
}

function randomResponse(next: () => number): Json {
  const response: Record<string, unknown> = {};
  const shape = next();
  if (shape < 0.5) response.choices = [{ index: 0, message: { role: 'assistant', content: 'hi' } }];
  else if (shape < 0.65) response.output = [];
  else if (shape < 0.8) {
    response.type = 'message';
    response.content = [];
  }
  if (next() < 0.9) response.usage = randomUsage(next);
  if (next() < 0.1) response.token_usage = randomUsage(next);
  if (next() < 0.05) response.token_usage = undefined;
  if (next() < 0.3) response.model = 'gpt-4o-mini';
  return response as Json;
}

describe('extractMetrics: the plain Chat Completions usage fast path', () => {
  it('reads what the general rules read, on 20,000 random responses', () => {
    const next = seededRandom(21);
    const providers = ['openai', 'anthropic', 'claude-proxy', 'gemini', ''];
    let fast = 0;
    for (let i = 0; i < 20_000; i++) {
      const response = randomResponse(next);
      const provider = pick(next, providers);
      const usage = (response as Record<string, unknown>).usage;
      const plain =
        typeof usage === 'object' && usage !== null && !Array.isArray(usage) && !('token_usage' in (response as object)) &&
        Object.keys(usage).every((key) => key === 'prompt_tokens' || key === 'completion_tokens' || key === 'total_tokens');
      if (plain) fast++;
      const got = exact(extractMetrics(response, provider));
      const want = exact(generalMetrics(response as Record<string, Json>, provider));
      if (got !== want) expect(got, `response ${i}: ${exact(response)} (${provider})`).toBe(want);
    }
    // The fast path is taken often enough for the comparison to mean something.
    expect(fast).toBeGreaterThan(5_000);
  });

  it('keeps the general reading for usage with an inherited or integer-like key', () => {
    const polluted = Object.create({ cache_read_input_tokens: 5 }) as Record<string, Json>;
    polluted.prompt_tokens = 10;
    polluted.completion_tokens = 2;
    const responses: Json[] = [
      { choices: [], usage: polluted },
      { type: 'message', content: [], usage: { prompt_tokens: 10, '0': 1 } },
      { usage: { prompt_tokens: 10 }, token_usage: null },
      { usage: { total_tokens: { b: 1, a: 2 } } },
      { usage: {} },
    ];
    for (const response of responses) {
      for (const provider of ['openai', 'anthropic']) {
        expect(exact(extractMetrics(response, provider))).toBe(exact(generalMetrics(response as Record<string, Json>, provider)));
      }
    }
  });
});

/** The pass as it was before its early exit: the reference the fast exit must agree with. */
function referenceRemoveProjected(steps: AtifStep[]): void {
  let observedLater = new Set<string>();
  const keep = new Array<boolean>(steps.length).fill(true);
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index] as AtifStep;
    if (step.source !== 'agent') {
      observedLater = new Set();
      continue;
    }
    const projected =
      step.message === '' &&
      step.observation === undefined &&
      step.reasoning_content === undefined &&
      step.reasoning_effort === undefined &&
      step.llm_call_count === 1 &&
      step.tool_calls !== undefined &&
      step.tool_calls.length > 0;
    const results = step.observation?.results ?? [];
    const keys = (step.tool_calls ?? [])
      .filter((call) => call.tool_call_id !== '')
      .map((call) => ({ id: call.tool_call_id, key: `${call.tool_call_id}\u0000${call.function_name}\u0000${canonicalJson(call.arguments)}` }));
    if (projected && keys.length > 0 && keys.every((key) => observedLater.has(key.key))) keep[index] = false;
    for (const result of results) {
      if (result.source_call_id === undefined) continue;
      for (const key of keys) if (key.id === result.source_call_id) observedLater.add(key.key);
    }
  }
  let write = 0;
  for (let index = 0; index < steps.length; index++) if (keep[index]) steps[write++] = steps[index] as AtifStep;
  steps.length = write;
}

function randomSteps(next: () => number): AtifStep[] {
  const steps: AtifStep[] = [];
  const length = Math.floor(next() * 12);
  for (let i = 0; i < length; i++) {
    const source = pick(next, ['agent', 'agent', 'agent', 'user', 'system'] as const);
    const step = { step_id: i + 1, source, message: next() < 0.8 ? '' : 'text' } as AtifStep;
    if (source === 'agent') {
      if (next() < 0.8) {
        step.tool_calls = [];
        const calls = Math.floor(next() * 3);
        for (let c = 0; c < calls; c++) {
          step.tool_calls.push({ tool_call_id: pick(next, ['', 'a', 'b', 'c']), function_name: pick(next, ['f', 'g']), arguments: pick<Json>(next, [{}, { q: 1 }, { q: 2 }]) });
        }
      }
      if (next() < 0.5) {
        step.observation = { results: [] };
        for (const call of step.tool_calls ?? []) if (next() < 0.8) step.observation.results.push({ source_call_id: call.tool_call_id, content: 'r' });
        if (next() < 0.2) step.observation.results.push({ content: 'standalone' });
      }
      step.llm_call_count = next() < 0.9 ? 1 : 0;
      if (next() < 0.05) step.reasoning_content = 'why';
    }
    steps.push(step);
  }
  return steps;
}

describe('removeProjectedToolCallDuplicates: the exit when no candidate can be dropped', () => {
  it('drops exactly the steps the full pass drops, on 50,000 random step lists', () => {
    const next = seededRandom(7);
    let dropped = 0;
    for (let i = 0; i < 50_000; i++) {
      const steps = randomSteps(next);
      const expected = steps.slice();
      referenceRemoveProjected(expected);
      const actual = steps.slice();
      removeProjectedToolCallDuplicates(actual);
      if (actual.length !== expected.length || actual.some((step, s) => step !== expected[s])) {
        expect(actual, `list ${i}: ${exact(steps)}`).toEqual(expected);
        expect(actual.map((step) => steps.indexOf(step)), `list ${i}`).toEqual(expected.map((step) => steps.indexOf(step)));
      }
      dropped += steps.length - actual.length;
    }
    expect(dropped).toBeGreaterThan(100);
  });
});

const ARGUMENTS: unknown[] = ['{"query":"runner 3"}', '{"b":1,"a":[1.0,2]}', '', 'not json', '[1,2]', '7', 'null', null, undefined, { q: 1 }, 3, '{"x":1e400}'];

function randomToolCall(next: () => number): unknown {
  if (next() < 0.03) return pick(next, [null, 'call', 3, [1]]);
  const call: Record<string, unknown> = {};
  const keys = ['id', 'type', 'function'].filter(() => next() < 0.93);
  if (next() < 0.3) keys.reverse();
  if (next() < 0.1) keys.push(pick(next, ['name', 'tool_call_id', 'index', 'arguments', 'extra_field']));
  for (const key of keys) {
    if (key === 'id') call.id = pick(next, ['call_1', 'call_2', '', 5, null]);
    else if (key === 'type') call.type = pick(next, ['function', 'custom', 1]);
    else if (key === 'function') {
      if (next() < 0.05) {
        call.function = pick(next, [null, 'f', []]);
        continue;
      }
      const fn: Record<string, unknown> = {};
      const fnKeys = ['name', 'arguments'].filter(() => next() < 0.93);
      if (next() < 0.3) fnKeys.reverse();
      if (next() < 0.1) fnKeys.push(pick(next, ['strict', 'description', 'parameters']));
      for (const fnKey of fnKeys) fn[fnKey] = fnKey === 'name' ? pick(next, ['search_notes', '', 7]) : fnKey === 'arguments' ? pick(next, ARGUMENTS) : true;
      call.function = fn;
    } else call[key] = pick(next, ['x', 1, { a: 1 }]);
  }
  return call;
}

function randomToolResponse(next: () => number): Json {
  const response: Record<string, unknown> = {};
  const message: Record<string, unknown> = { role: 'assistant', content: next() < 0.5 ? null : 'text' };
  if (next() < 0.9) {
    const count = Math.floor(next() * 4);
    message.tool_calls = next() < 0.03 ? 'calls' : Array.from({ length: count }, () => randomToolCall(next));
  }
  const choice: Record<string, unknown> = { index: 0, finish_reason: 'tool_calls', message };
  if (next() < 0.03) choice.message = 'message';
  response.choices = next() < 0.03 ? [] : next() < 0.03 ? {} : [choice];
  const extra = next();
  if (extra < 0.04) response.tool_calls = [randomToolCall(next)];
  else if (extra < 0.06) response.tool_calls = null;
  else if (extra < 0.09) response.assistant_message = { tool_calls: [randomToolCall(next)] };
  else if (extra < 0.12) response.raw_response = { choices: [{ message: { tool_calls: [randomToolCall(next)] } }] };
  else if (extra < 0.14) response.output = [{ type: 'function_call', name: 'f', arguments: '{}', call_id: 'c' }];
  return response as Json;
}

describe('extractToolCalls: the plain Chat Completions tool-call fast path', () => {
  it('reads what the general rules read, on 20,000 random responses', () => {
    const next = seededRandom(42);
    let withCalls = 0;
    for (let i = 0; i < 20_000; i++) {
      const response = randomToolResponse(next);
      const got = extractToolCalls(response);
      const want = generalToolCalls(response as Record<string, Json>);
      if (want !== undefined) withCalls++;
      if (exact(got) !== exact(want)) expect(exact(got), `response ${i}: ${exact(response)}`).toBe(exact(want));
    }
    expect(withCalls).toBeGreaterThan(8_000);
  });

  it('keeps the general reading for a call with an inherited key', () => {
    const call = Object.create({ name: 'inherited' }) as Record<string, Json>;
    call.id = 'call_1';
    call.type = 'function';
    call.function = { name: 'f', arguments: '{}' };
    const response: Json = { choices: [{ message: { tool_calls: [call] } }] };
    expect(exact(extractToolCalls(response))).toBe(exact(generalToolCalls(response as Record<string, Json>)));
  });
});
