// Who served a routed call, as OTLP carries it: the LLM call's end names the upstream a router says served it
// (`served_by`) and the ones it says failed first (`failed_upstreams`), as the adapters write them (src/adapters/core/run.ts).
// Native is the oracle: what it sends of them as full, gen_ai and openinference spans is what the memory relay must send.
// The adapters' response has no provider's shape, which the backends read apart on purpose (gen_ai and openinference
// spans: memory sends its finish reason, docs/backends/memory-and-native.md; otlp-native-parity.test.ts pins it): a
// routed call must add no difference to those.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { otlpDifferences } from '../support/random-tool-values.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { replayWithOtlp } from '../support/otlp-replay.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

/** A call through the AI Gateway that Bedrock served after Anthropic's attempt failed, as the AI SDK adapter writes it. */
function lines(routed: Record<string, unknown>): HookLine[] {
  const ids = { session_id: 's1', turn_id: 't0', api_request_id: 'a0', provider: 'gateway', api_mode: 'chat_completions', model: 'anthropic/claude-sonnet-4.5' };
  const message = { role: 'assistant', content: 'Hello!' };
  const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, cost_usd: 0.000918 };
  return [
    { hook: 'on_session_start', payload: { session_id: 's1' } },
    { hook: 'pre_api_request', payload: { ...ids, request: { method: 'POST', headers: {}, body: { model: ids.model, messages: [{ role: 'user', content: 'Say hello.' }] } } } },
    { hook: 'post_api_request', payload: { ...ids, finish_reason: 'stop', response_model: 'claude-sonnet-4-5-20250929', response: { id: 'msg_gw_1', model: 'claude-sonnet-4-5-20250929', assistant_message: message, finish_reason: 'stop', usage, ...routed }, usage, assistant_message: message } },
    { hook: 'on_session_finalize', payload: { session_id: 's1' } },
  ] as HookLine[];
}

const CASES: [string, Record<string, unknown>][] = [
  ['served_by alone', { served_by: 'Anthropic' }],
  ['served_by after failed upstreams', { served_by: 'bedrock', failed_upstreams: ['anthropic', 'vertex'] }],
];
const FAILED_FIRST = CASES[1]![1];

/** The differences of a response of no provider's shape, on purpose: memory reads its finish reason, native does not. */
const ON_PURPOSE = ['gen_ai: $[1]."attributes"."gen_ai.response.finish_reasons": only on memory (["stop"])', 'openinference: $[1]."attributes"."llm.finish_reason": only on memory ("complete")'];

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

/** The attributes of the LLM span native sends of the call, as `type` spans. */
async function nativeLlmAttributes(type: 'full' | 'gen_ai' | 'openinference', routed: Record<string, unknown>): Promise<Record<string, unknown>> {
  receiver.requests.length = 0;
  await replayWithOtlp(loadNativeRelay({ logger: silentLogger }), lines(routed), { endpoints: [{ type, endpoint: receiver.url }] });
  const spans = [...receiver.spans()];
  const llm = spans.find((span) => (type === 'gen_ai' ? span.attributes['gen_ai.operation.name'] === 'chat' : type === 'openinference' ? span.attributes['openinference.span.kind'] === 'LLM' : span.attributes['nemo_relay.scope_type'] === 'llm' || span.attributes['nemo_relay.end.metadata.api_request_id'] === 'a0'));
  expect(llm, `${type}: an LLM span among ${spans.map((span) => span.name).join(', ')}`).toBeDefined();
  return llm!.attributes;
}

describe.skipIf(!nativeAvailable)(`served_by in OTLP: memory sends what native does${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('a call through no router: only the differences on purpose', async () => {
    expect(await otlpDifferences(200, lines({}), receiver, ['gen_ai', 'openinference', 'full'])).toEqual(ON_PURPOSE.map((difference) => `seed 200, ${difference}`));
  });

  it.each(CASES.map(([name, routed], i) => [name, i, routed] as const))('%s: no more', async (_name, i, routed) => {
    expect(await otlpDifferences(201 + i, lines(routed), receiver, ['gen_ai', 'openinference', 'full'])).toEqual(ON_PURPOSE.map((difference) => `seed ${201 + i}, ${difference}`));
  });

  it('what native sends of them: full and openinference spans carry both (end data and output), gen_ai spans neither', async () => {
    const mentioning = (attributes: Record<string, unknown>) => Object.entries(attributes).filter(([, value]) => typeof value === 'string' && /bedrock|vertex/.test(value)).map(([key]) => key);
    const routed = ['nemo_relay.end.data.failed_upstreams', 'nemo_relay.end.data.served_by', 'nemo_relay.end.output.failed_upstreams', 'nemo_relay.end.output.served_by'];
    const full = await nativeLlmAttributes('full', FAILED_FIRST);
    expect(mentioning(full)).toEqual(routed);
    expect([full['nemo_relay.end.data.served_by'], full['nemo_relay.end.data.failed_upstreams']]).toEqual(['bedrock', JSON.stringify(['anthropic', 'vertex'])]);
    // openinference: the same, and the response's JSON as the span's output (a response of no provider's shape).
    const inference = await nativeLlmAttributes('openinference', FAILED_FIRST);
    expect(mentioning(inference)).toEqual([...routed, 'output.value']);
    expect(JSON.parse(inference['output.value'] as string)).toMatchObject(FAILED_FIRST);
    expect(mentioning(await nativeLlmAttributes('gen_ai', FAILED_FIRST))).toEqual([]);
  });
});
