/**
 * Native's number and key-order text rules, against `nemo-relay-node`, in
 * the three places the project writes native's JSON: (a) ATOF lines and
 * subscriber events, (b) manual `AtifExporter.exportJson()` text, (c) the
 * plugin-managed ATIF file (pretty, sorted, with `extra.observed_events`).
 * One scenario carries every probe number and integer-like keys through
 * payloads (scope input/metadata, mark data, LLM request/response and
 * usage, tool arguments as objects and as JSON strings, tool results and
 * annotations) and through native's typed fields (token counts past u32,
 * costs, log probabilities, invocation timestamps).
 */

import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import type { ScopeHandle } from '../../src/relay/contract.ts';
import { AtifBuilder } from '../../src/formats/atif/builder.ts';
import { createSubtreeFilter } from '../../src/formats/atif/subtree.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import {
  native,
  nativeUnavailable,
  normalize,
  normalizeTree,
  pluginDocument,
  runMemory,
  runMemoryPlugin,
  runNative,
  runNativeAtif,
  runNativePlugin,
  type Driver,
} from '../support/native-driver.ts';

const PROBES = {
  zero: 0,
  negative_zero: -0,
  one: 1,
  minus_one: -1,
  i32_max: 2 ** 31 - 1,
  i32_max_plus_1: 2 ** 31,
  i32_min: -(2 ** 31),
  i32_min_minus_1: -(2 ** 31) - 1,
  u32_max: 2 ** 32 - 1,
  u32_max_plus_1: 2 ** 32,
  safe_max: 2 ** 53 - 1,
  past_safe: 2 ** 53 + 2,
  e15: 1e15,
  e16: 1e16,
  minus_e16: -1e16,
  e20: 1e20,
  e21: 1e21,
  one_and_half: 1.5,
  tenth: 0.1,
  e_minus_5: 1e-5,
  e_minus_6: 1e-6,
  small: 1.5e-7,
  minus_small: -1e-7,
  mixed: 123456.789,
};
const KEYS = { a: 1, '10': 2, '2': 3 };
const LIST = Object.values(PROBES);
/** Tool-call arguments as JSON text: native parses them itself, with serde's number rules. */
const ARGUMENT_TEXT =
  '{"float_one":1.0,"exponent":1e2,"minus_zero":-0,"big":123456789012,"past_safe":9007199254740993,"u64_max":18446744073709551615,' +
  '"past_u64":18446744073709551616,"past_i64":-9223372036854775809,"list":[1,2.0],"10":1,"2":2,"a":0.1}';

const ATIF_ARGS = { sessionId: 'numbers-session', agentName: 'numbers-agent', agentVersion: '1.0.0', modelName: 'm' };
const T0 = 1_764_000_000_123_456;

/** Every probe through payloads and typed fields; `onRoot` gets the root scope right after it is pushed. */
function numbersScenario(d: Driver, onRoot?: (scope: ScopeHandle) => void): void {
  let t = T0;
  const ts = () => (t += 1_001);
  const root = d.pushScope({
    name: 'numbers',
    category: 'agent',
    metadata: { nemo_relay_scope_role: 'session', session_id: 'S', user_id: 'U', probes: PROBES, k: KEYS },
    input: { probes: PROBES, k: KEYS, list: LIST },
    timestampUs: ts(),
  });
  onRoot?.(root);
  d.mark({ name: 'numbers.mark', parent: root, data: { probes: PROBES, k: KEYS }, metadata: { list: LIST }, timestampUs: ts() });
  const llm = d.llmStart({
    name: 'openai',
    parent: root,
    request: { headers: { 'x-n': '1' }, content: { model: 'm', messages: [{ role: 'user', content: 'numbers?' }], params: PROBES, k: KEYS } },
    modelName: 'm',
    metadata: { k: KEYS },
    timestampUs: ts(),
  });
  d.llmEnd(llm, {
    response: {
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'calling',
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'probe', arguments: JSON.stringify({ probes: PROBES, k: KEYS }) } },
              { id: 'c2', type: 'function', function: { name: 'literals', arguments: ARGUMENT_TEXT } },
              { id: 'c3', type: 'function', function: { name: 'scalar', arguments: '5.0' } },
            ],
          },
        },
      ],
      // prompt_tokens and one token id are f64 in native (past u32), so its metrics drop them.
      usage: {
        prompt_tokens: 2 ** 32,
        completion_tokens: 7,
        total_tokens: 2 ** 32 + 7,
        cost_usd: 1,
        logprobs: [0, -1, 1e-6, 1e20, 0.1],
        prompt_token_ids: [1, 2 ** 32],
        completion_token_ids: [3, 2 ** 32 - 1],
        probes: PROBES,
        k: KEYS,
      },
      extra: PROBES,
    },
    timestampUs: ts(),
  });
  const probe = d.toolStart({ name: 'probe', parent: root, args: { probes: PROBES, k: KEYS }, toolCallId: 'c1', timestampUs: ts() });
  d.toolEnd(probe, { result: { r: PROBES, k: KEYS }, annotation: { ms: 1.5, big: 2 ** 40, k: KEYS }, timestampUs: ts() });
  const literals = d.toolStart({ name: 'literals', parent: root, args: { raw: ARGUMENT_TEXT }, toolCallId: 'c2', timestampUs: ts() });
  d.toolEnd(literals, { result: 1e21, timestampUs: ts() });
  const stray = d.toolStart({ name: 'stray', parent: root, args: { list: LIST, k: KEYS }, toolCallId: 'nobody-asked', timestampUs: ts() });
  d.toolEnd(stray, { result: LIST, timestampUs: ts() });
  // Token counts within u32 whose sums are not: native's unsigned fields stay plain integers.
  const big = d.llmStart({ name: 'anthropic', parent: root, request: { headers: {}, content: { messages: [{ role: 'user', content: 'big' }] } }, modelName: 'm', timestampUs: ts() });
  d.llmEnd(big, {
    response: {
      id: 'msg',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'big usage' }],
      usage: { input_tokens: 4_000_000_000, output_tokens: 4_000_000_000, cache_read_input_tokens: 4_000_000_000, cost: { currency: 'USD', total: 2 ** 32 + 0.5 } },
    },
    timestampUs: ts(),
  });
  d.popScope(root, { output: { probes: PROBES, k: KEYS }, timestampUs: ts() });
}

/** Texts native writes for the probes as payload numbers (from `PROBES`, keys sorted). */
const PAYLOAD_TEXTS = [
  '"e15":1000000000000000.0',
  '"e16":1e+16',
  '"e20":1e+20',
  '"e21":1e+21',
  '"e_minus_5":0.00001',
  '"e_minus_6":1e-6',
  '"i32_max_plus_1":2147483648',
  '"i32_min_minus_1":-2147483649.0',
  '"minus_e16":-1e+16',
  '"minus_small":-1e-7',
  '"mixed":123456.789',
  '"negative_zero":0',
  '"past_safe":9007199254740994.0',
  '"safe_max":9007199254740991.0',
  '"small":1.5e-7',
  '"u32_max":4294967295',
  '"u32_max_plus_1":4294967296.0',
];

describe.skipIf(native === null)(`native JSON text rules, against nemo-relay-node${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  it('(a) ATOF lines and subscriber events: the memory relay writes every probe number and integer-like key as native does', async () => {
    const theirs = await runNative((d) => numbersScenario(d));
    const ours = await runMemory((d) => numbersScenario(d));
    const nativeLine = theirs.lines[0]!;
    for (const text of PAYLOAD_TEXTS) expect(nativeLine).toContain(text);
    expect(nativeLine).toContain('"k":{"10":2,"2":3,"a":1}');
    expect(nativeLine).toContain('"list":[0,0,1,-1,2147483647,2147483648,-2147483648,-2147483649.0,4294967295,4294967296.0,');
    expect(normalize(ours.lines)).toEqual(normalize(theirs.lines));
    expect(normalize(ours.events)).toEqual(normalize(theirs.events));
    const parsed = parseAtofJsonl(`${ours.lines.join('\n')}\n`);
    expect(parsed.errors).toEqual([]);
    expect(validateAtofEvents(parsed.events)).toEqual([]);
  });

  it('(b) manual AtifExporter text: the builder reproduces payload numbers, parsed argument literals, f64 and unsigned fields', async () => {
    const raw: AtofEvent[] = [];
    const subscriber = 'native-json-differential-raw';
    native!.registerSubscriber(subscriber, (event) => void raw.push(event as AtofEvent));
    let theirs: string;
    try {
      theirs = await runNativeAtif((d) => numbersScenario(d), ATIF_ARGS);
    } finally {
      native!.deregisterSubscriber(subscriber);
    }
    // Pin the rules native applied, so a change in native names itself here.
    for (const text of PAYLOAD_TEXTS) expect(theirs).toContain(text);
    expect(theirs).toContain('"arguments":{"10":1,"2":2,"a":0.1,"big":123456789012,"exponent":100.0,"float_one":1.0,"list":[1,2.0],');
    expect(theirs).toContain('"past_safe":9007199254740993,"past_u64":1.8446744073709552e+19,"u64_max":18446744073709551615}');
    expect(theirs).toContain('"arguments":{"value":5.0}');
    expect(theirs).toContain('"metrics":{"completion_tokens":7,"cost_usd":1.0,"prompt_token_ids":[1],"completion_token_ids":[3,4294967295],"logprobs":[0.0,-1.0,1e-6,1e+20,0.1],');
    expect(theirs).toContain('"metrics":{"prompt_tokens":8000000000,"completion_tokens":4000000000,"cached_tokens":4000000000,"cost_usd":4294967296.5}');
    expect(theirs).toContain('"total_prompt_tokens":8000000000,');
    expect(theirs).toMatch(/"start_timestamp":1764000000\.12\d,/);

    // The native adapter's path: the builder over native's own events, byte for byte.
    const builder = new AtifBuilder(ATIF_ARGS);
    for (const event of raw) builder.add(event);
    expect(builder.toJson()).toBe(theirs);
    expect(validateAtif(builder.build())).toEqual([]);

    // The memory relay's path: its exporter over its own events, equal after uuid labelling.
    const relay = createMemoryRelay({ logger: silentLogger });
    let exporter: ReturnType<typeof relay.registerAtifExporter> | undefined;
    numbersScenario(relay as unknown as Driver, (scope) => {
      exporter = relay.registerAtifExporter({ scope, ...ATIF_ARGS });
    });
    expect(normalize([await exporter!.exportJson()])).toEqual(normalize([theirs]));
  });

  it('(c) plugin-managed ATIF files: pretty and sorted, observed events and agent config with native number text', async () => {
    const atifConfig = { tool_definitions: [{ name: 'probe', limits: PROBES, k: KEYS }], extra: { probes: PROBES, k: KEYS } };
    const document = pluginDocument(atifConfig);
    const theirs = await runNativePlugin(document, (d) => numbersScenario(d));
    const ours = await runMemoryPlugin(document, (d) => numbersScenario(d));
    const atifName = Object.keys(theirs).find((name) => name.endsWith('.json'))!;
    const file = theirs[atifName]!;
    expect(file).toContain('"e16": 1e+16,');
    expect(file).toContain('"u32_max_plus_1": 4294967296.0,');
    expect(file).toContain('"float_one": 1.0,');
    expect(file).toContain('"total_prompt_tokens": 8000000000,');
    expect(file).toMatch(/"k": \{\n\s+"10": 2,\n\s+"2": 3,\n\s+"a": 1\n/);
    expect(normalizeTree(ours)).toEqual(normalizeTree(theirs));

    // The builder alone, over the events native's plugin wrote to its ATOF file, byte for byte.
    const parsed = parseAtofJsonl(theirs['events.jsonl']!);
    expect(parsed.errors).toEqual([]);
    expect(validateAtofEvents(parsed.events)).toEqual([]);
    const rootUuid = parsed.events[0]!.uuid;
    const inTree = createSubtreeFilter(rootUuid);
    const builder = new AtifBuilder({
      rootUuid,
      agentName: 'probe-agent',
      agentVersion: '0.0.1',
      modelName: 'm',
      style: 'plugin-host',
      toolDefinitions: atifConfig.tool_definitions,
      extra: atifConfig.extra,
    });
    for (const event of parsed.events) if (inTree(event)) builder.add(event);
    expect(builder.toJson()).toBe(file);
    expect(validateAtif(JSON.parse(file))).toEqual([]);
    expect(validateAtif(JSON.parse(ours[Object.keys(ours).find((name) => name.endsWith('.json'))!]!))).toEqual([]);
  });
});
