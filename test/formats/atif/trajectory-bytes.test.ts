/**
 * The one JSON walker (`native-text/write.ts`) in each of its forms: the
 * exporter-style trajectory written straight to bytes, build after build
 * (step bytes reused), is exactly the UTF-8 of `serializeTrajectory`'s
 * text; and on generated payloads with awkward content (lone surrogates,
 * non-ASCII, numbers serde types, `__proto__` and integer-like keys, kept
 * number texts, deep nesting, `undefined` members) every form (bytes,
 * compact, pretty, sorted keys, with field types) writes what a plain
 * piece-by-piece reference writes: no shortcut to `JSON.stringify` and no
 * byte encoding changes a character.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../src/shared/json.ts';
import { LineBuilder } from '../../../src/shared/utf8-builder.ts';
import { parseJsonAsNative } from '../../../src/formats/native-text.ts';
import { exactTexts, keysInOrder, sortPayload } from '../../../src/formats/native-text/keys.ts';
import { formatF64, formatIntegerField, formatPayloadNumber } from '../../../src/formats/native-text/numbers.ts';
import { canonicalJson, toRustJson, writeRustJsonBytes, type FieldTypes, type NumberFieldType } from '../../../src/formats/native-text/write.ts';
import { ExporterBytesCache, serializeTrajectory } from '../../../src/formats/atif/serialize.ts';
import { hasNoSteps } from '../../../src/formats/atif/no-steps.ts';
import type { AtifTrajectory } from '../../../src/formats/atif/types.ts';
import { seededRandom } from '../../support/seeded-random.ts';
import { formatCount } from '../../../src/cli/io.ts';
import { generatedCount } from '../../support/slow-suite.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const NUMBERS = [
  0, -0, 1, -1, 7, 2 ** 31 - 1, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1e21, 1e300, -1e-7, 1.5, 0.1, 1e-5, 5e-6,
  -9.99e-6, 1e-6, 1e16, 123456789.125, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MIN_VALUE, Number.MAX_VALUE,
];
const STRINGS = [
  '', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab\r\u0000\u001f\u007f', 'café ünïcödé', '日本語のテキスト', 'emoji 😀 pair',
  'lone \ud800 high', 'lone \udc00 low', 'reversed \udc00\ud800', 'end \ud83d', '\u2028\u2029', 'x'.repeat(200), `${'é'.repeat(150)}"`,
  `${'a'.repeat(140)}\ud800`, '😀'.repeat(70),
];
const KEYS = ['a', 'b', 'role', 'content', '__proto__', '0', '10', '2', '1a', 'é', 'ключ', 'z\ud800', '😀', 'constructor', 'toString', ''];

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

function payload(next: () => number, depth: number): Json {
  const roll = next();
  if (depth <= 0 || roll < 0.35) {
    const kind = next();
    if (kind < 0.4) return pick(next, NUMBERS);
    if (kind < 0.8) return pick(next, STRINGS);
    if (kind < 0.9) return next() < 0.5;
    return null;
  }
  if (roll < 0.55) {
    const items: (Json | undefined)[] = [];
    const n = Math.floor(next() * 5);
    for (let i = 0; i < n; i++) items.push(next() < 0.05 ? undefined : payload(next, depth - 1));
    return items as Json[];
  }
  if (roll < 0.6) {
    // A number text native parsed itself (a tool call's arguments).
    return parseJsonAsNative(pick(next, ['{"x":1.0,"y":12345678901234567890}', '[1.50,2e3,-0.0]', '{"10":1,"2":2.0}'])) as Json;
  }
  const object: { [key: string]: Json } = {};
  const n = Math.floor(next() * 6);
  for (let i = 0; i < n; i++) {
    const key = pick(next, KEYS);
    const value = next() < 0.05 ? (undefined as unknown as Json) : payload(next, depth - 1);
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** `n` nested arrays and objects around a value. */
function deep(next: () => number, n: number): Json {
  let value: Json = pick(next, STRINGS);
  for (let i = 0; i < n; i++) value = i % 2 === 0 ? [value, pick(next, NUMBERS)] : { deeper: value, n: pick(next, NUMBERS) };
  return value;
}

const typed = (next: () => number): number => pick(next, [0, 1, 3, 2 ** 40, 2 ** 53 + 2, 1e21, 0.5, 1700000000, 1700000000.25, -0, 1e-7, Number.NaN]);

function step(next: () => number, id: number, plain: Set<object>): Json {
  const p = (): Json => {
    const value = next() < 0.05 ? deep(next, 30 + Math.floor(next() * 60)) : payload(next, 4);
    // As the converter does: payloads it finds written exactly by JSON.stringify are listed.
    return next() < 0.7 ? sortPayload(value, plain) : value;
  };
  const out: { [key: string]: Json } = {
    step_id: next() < 0.9 ? id : typed(next),
    timestamp: '2026-12-03T02:21:00.000000Z',
    source: pick(next, ['user', 'agent', 'system']),
    message: p(),
  };
  if (next() < 0.7) out.model_name = pick(next, STRINGS);
  if (next() < 0.6) out.tool_calls = [{ tool_call_id: pick(next, STRINGS), function_name: 'f', arguments: p() }];
  if (next() < 0.5) out.observation = { results: [{ source_call_id: 'c', content: p() }] };
  if (next() < 0.7) {
    out.metrics = {
      prompt_tokens: typed(next),
      completion_tokens: typed(next),
      cached_tokens: typed(next),
      cost_usd: typed(next),
      ...(next() < 0.3 ? { prompt_token_ids: [typed(next), typed(next)], logprobs: [typed(next), -0.25, 0] } : {}),
      ...(next() < 0.2 ? { extra: p() } : {}),
    };
  }
  if (next() < 0.7) {
    out.extra = {
      invocation: { start_timestamp: typed(next), end_timestamp: typed(next), name: pick(next, STRINGS) },
      tool_invocations: [{ start_timestamp: typed(next), end_timestamp: 1700000001.5 }],
      ...(next() < 0.3 ? { other: p() } : {}),
    };
  }
  if (next() < 0.1) out.llm_call_count = typed(next);
  if (next() < 0.05) out.undefined_member = undefined as unknown as Json;
  return out;
}

function trajectory(next: () => number, plain: Set<object>, depth = 0): AtifTrajectory {
  const steps: Json[] = [];
  const n = Math.floor(next() * 8);
  for (let i = 0; i < n; i++) steps.push(step(next, i + 1, plain));
  const document: { [key: string]: Json } = {
    schema_version: 'ATIF-v1.7',
    session_id: pick(next, STRINGS),
    agent: { name: pick(next, STRINGS), version: '1.0', ...(next() < 0.5 ? { model_name: pick(next, STRINGS) } : {}) },
    steps,
    final_metrics: { total_prompt_tokens: typed(next), total_completion_tokens: typed(next), total_cost_usd: typed(next), total_steps: n },
  };
  if (depth < 2 && next() < 0.15) document.subagent_trajectories = [trajectory(next, plain, depth + 1) as unknown as Json];
  if (next() < 0.2) document.extra = { caller: payload(next, 3) };
  if (next() < 0.1) document.notes = undefined as unknown as Json;
  return document as unknown as AtifTrajectory;
}

const utf8 = (text: string): Uint8Array => encoder.encode(text);

/**
 * The reference: every value written piece by piece by the rules alone
 * (number text per field type or the kept text, keys in native's order),
 * at the indentation `newline` (`''`: compact).
 */
function reference(value: Json | undefined, types: FieldTypes | NumberFieldType | undefined, newline: string, sortKeys: boolean): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return types === 'f64' ? formatF64(value) : types === 'integer' ? formatIntegerField(value) : formatPayloadNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null || value === undefined) return 'null';
  const node = typeof types === 'object' ? types : undefined;
  const texts = exactTexts.get(value);
  const inner = newline === '' ? '' : `${newline}  `;
  const item = (v: Json | undefined, at: string | number, t: FieldTypes | NumberFieldType | undefined): string =>
    typeof v === 'number' && texts?.get(at) !== undefined ? (texts.get(at) as string) : reference(v, t, inner, sortKeys);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v, i) => inner + item(v, i, node?.items)).join(',')}${newline}]`;
  }
  const members: string[] = [];
  for (const key of keysInOrder(value, sortKeys)) {
    const v = value[key];
    if (v === undefined) continue;
    const t = node?.fields !== undefined && Object.prototype.hasOwnProperty.call(node.fields, key) ? node.fields[key] : undefined;
    members.push(`${inner}${JSON.stringify(key)}${newline === '' ? ':' : ': '}${item(v, key, t)}`);
  }
  return members.length === 0 ? '{}' : `{${members.join(',')}${newline}}`;
}

describe('the JSON walker', () => {
  const trajectories = generatedCount(1000);
  it(`is the UTF-8 of serializeTrajectory on ${formatCount(trajectories)} generated trajectories, build after build`, () => {
    for (let seed = 1; seed <= trajectories; seed++) {
      const next = seededRandom(seed);
      const plain = new Set<object>();
      const cache = new ExporterBytesCache();
      let document = trajectory(next, plain);
      for (let build = 0; build < 3; build++) {
        const bytes = cache.write(document, plain);
        const text = serializeTrajectory(document, 'exporter', plain);
        if (decoder.decode(bytes) !== text || !Buffer.from(bytes).equals(utf8(text))) {
          expect({ seed, build, bytes: decoder.decode(bytes) }).toEqual({ seed, build, bytes: text });
        }
        expect(hasNoSteps(bytes)).toBe(hasNoSteps(text));
        // The next build: some steps kept as they are (their bytes reused), some rebuilt equal, some changed, some added.
        const steps = (document.steps as unknown as Json[]).map((s, i) => {
          const roll = next();
          if (roll < 0.5) return s;
          if (roll < 0.7) return JSON.parse(JSON.stringify(s)) as Json;
          return step(next, i + 1, plain);
        });
        if (next() < 0.5) steps.push(step(next, steps.length + 1, plain));
        if (next() < 0.1) steps.length = Math.floor(steps.length / 2);
        document = { ...document, steps } as unknown as AtifTrajectory;
      }
    }
  });

  it('writes any value with any field types, in every form, as the reference does', () => {
    const types: (FieldTypes | undefined)[] = [
      undefined,
      { fields: { a: 'f64', b: 'integer', '0': 'f64', __proto__: 'integer', content: { items: 'f64' } } },
      { items: { fields: { a: 'integer', b: { fields: { role: 'f64' } } } } },
    ];
    const out = new LineBuilder(16);
    for (let seed = 1; seed <= generatedCount(5000); seed++) {
      const next = seededRandom(seed);
      const plain = new Set<object>();
      const raw = next() < 0.05 ? deep(next, 5 + Math.floor(next() * 60)) : payload(next, 6);
      const value = next() < 0.5 ? sortPayload(raw, plain) : raw;
      const fieldTypes = pick(next, types);
      const compact = reference(value, fieldTypes, '', false);
      out.length = 0;
      writeRustJsonBytes(out, value, { fieldTypes, plain });
      if (out.text() !== compact) expect({ seed, bytes: out.text() }).toEqual({ seed, bytes: compact });
      expect(Buffer.from(out.bytes.subarray(0, out.length)).equals(utf8(compact))).toBe(true);
      for (const pretty of [false, true]) {
        for (const sortKeys of [false, true]) {
          const text = toRustJson(value, { fieldTypes, plain, pretty, sortKeys });
          const expected = reference(value, fieldTypes, pretty ? '\n' : '', sortKeys);
          if (text !== expected) expect({ seed, pretty, sortKeys, text }).toEqual({ seed, pretty, sortKeys, text: expected });
        }
      }
      const sorted = canonicalJson(value);
      if (sorted !== reference(value, undefined, '', true)) expect({ seed, sorted }).toEqual({ seed, sorted: reference(value, undefined, '', true) });
    }
  });

  it('says a document without steps has none, from its bytes as from its text', () => {
    for (const text of ['{"agent":{"steps":[1]},"steps":[]}', '{"a":"\\"steps\\"","steps": [ ]}', '{"steps":[{}]}', '{"x":1}', '{"é":"日本","steps":[]}']) {
      expect(hasNoSteps(utf8(text))).toBe(hasNoSteps(text));
    }
  });
});
