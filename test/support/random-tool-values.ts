/**
 * A seeded random differential for the OTLP mappings of tool calls: a
 * session of tool calls whose arguments and results take the forms hosts and
 * frameworks hand over (nested values, JSON text with padding, a bare number
 * or `null` as text, content lists of strings and typed blocks, `summary`,
 * `message`, `text`, Responses `output` and Chat `choices` shapes, tool-call
 * lists, edge numbers), sent by the plugin on the memory relay and on native
 * 0.9.2 to a loopback receiver as full, gen_ai and openinference spans, and
 * compared after ids become labels. The random redaction-stream differential
 * found five differences here (tool results' display text, bare numbers and
 * `null` in JSON text, string arguments); this keeps them found.
 */

import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { HookLine } from '../fixtures/streams/script.ts';
import { firstDifference } from '../differential/random-diff.ts';
import type { Receiver } from './otlp-receiver.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from './otlp-normalize.ts';
import { replayWithOtlp } from './otlp-replay.ts';
import { Draw, randomText, randomValue } from './random-redaction.ts';

const BLOCK_TYPES = ['text', 'thinking', 'reasoning', 'tool_use', 'image', 'output_text', 'toolResult', 'tool_result', 'refusal'];
function block(d: Draw): unknown {
  const b: Record<string, unknown> = { type: d.pick(BLOCK_TYPES) };
  if (d.chance(0.8)) b.text = d.chance(0.2) ? d.pick(['', '  ', ' x ', '\u0085']) : randomText(d, d.int(0, 3));
  if (d.chance(0.2)) b.name = d.pick(['f', 'g', '']);
  if (d.chance(0.1)) b.stripped = d.chance(0.5);
  if (d.chance(0.1)) b.refusal = 'no';
  return b;
}
function shaped(d: Draw): unknown {
  const r = d.next();
  const text = () => (d.chance(0.3) ? d.pick(['', '  ', ' a ', '\u0085b\u0085', '-0', '1.0', 'null', '{"content":" c "}', '[" a "]']) : randomText(d, d.int(0, 3)));
  if (r < 0.15) return { content: Array.from({ length: d.int(0, 3) }, () => (d.chance(0.5) ? text() : d.chance(0.8) ? block(d) : randomValue(d, 1))) };
  if (r < 0.25) return Array.from({ length: d.int(0, 3) }, () => (d.chance(0.5) ? text() : block(d)));
  if (r < 0.35) return { [d.pick(['content', 'summary', 'message', 'text', 'prompt'])]: d.chance(0.7) ? text() : randomValue(d, 2), ...(d.chance(0.3) ? { [d.pick(['text', 'content', 'x'])]: text() } : {}) };
  if (r < 0.42) return { output: [{ type: d.pick(['message', 'function_call', 'reasoning']), name: 'f', content: [{ type: d.pick(['output_text', 'text', 'refusal']), text: text() }] }] };
  if (r < 0.48) return { choices: [{ message: { content: d.chance(0.7) ? text() : null, ...(d.chance(0.5) ? { tool_calls: [{ function: { name: 'g' } }] } : {}) } }] };
  if (r < 0.52) return { tool_calls: [{ name: 'f' }, { toolName: 'h' }, { function: { name: 'k' } }] };
  if (r < 0.62) return text();
  if (r < 0.72) { const v = shapedNoText(d); return (d.chance(0.3) ? ' ' : '') + JSON.stringify(v) + (d.chance(0.3) ? '\n' : ''); }
  if (r < 0.78) return d.pick([-0, 0, 1.5, 1e21, 2 ** 53 + 2, -(2 ** 63), 5e-324, true, false]);
  return randomValue(d, d.int(0, 3));
}
function shapedNoText(d: Draw): unknown { const v = shaped(d); return typeof v === 'string' ? { content: v } : v; }

/** The hook lines of one seed: a session of 1-6 tool calls, some failing. */
export function toolValueLines(seed: number): HookLine[] {
  const d = new Draw(seed);
  const out: unknown[] = [{ hook: 'on_session_start', payload: { session_id: 's1' } }];
  const n = d.int(1, 6);
  for (let i = 0; i < n; i++) {
    const args = d.chance(0.5) ? randomValue(d, 2) : shaped(d);
    const result = shaped(d);
    const failed = d.chance(0.1);
    out.push({ hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args } });
    out.push({ hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args, result, ...(failed ? { status: 'error', error: 'boom' } : {}) } });
  }
  out.push({ hook: 'on_session_finalize', payload: { session_id: 's1' } });
  return out as HookLine[];
}

/** Every difference of one seed, one per endpoint type that differs, each naming the seed and the span's payload. */
export async function compareToolValueSeed(seed: number, receiver: Receiver): Promise<string[]> {
  return otlpDifferences(seed, toolValueLines(seed), receiver, ['full', 'gen_ai', 'openinference'], (span) => {
    const attributes = (span as { attributes?: Record<string, unknown> } | undefined)?.attributes;
    const payload = attributes?.['nemo_relay.end.data'] ?? attributes?.['nemo_relay.start.data'];
    return payload === undefined ? '' : ` (payload ${JSON.stringify(payload).slice(0, 300)})`;
  });
}

/**
 * `lines` through the plugin on native and on the memory relay, once per endpoint type, into `receiver`; the first
 * differing path of each type's normalized spans, naming the seed (and what `about` says of memory's span there).
 */
export async function otlpDifferences(seed: number, lines: readonly HookLine[], receiver: Receiver, types: readonly ('full' | 'gen_ai' | 'openinference')[], about: (span: unknown) => string = () => ''): Promise<string[]> {
  const found: string[] = [];
  for (const type of types) {
    const sent = async (backend: 'native' | 'memory') => {
      receiver.requests.length = 0;
      const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
      const result = await replayWithOtlp(relay, lines, { endpoints: [{ type, endpoint: receiver.url }] });
      return { spans: normalizeSpans([...receiver.spans()], { ignoreResourceKeys: SDK_RESOURCE_KEYS }), problems: result.problems };
    };
    const native = await sent('native');
    const memory = await sent('memory');
    if (memory.problems.length > 0) found.push(`seed ${seed}, ${type}: memory warned: ${memory.problems.join(' | ')}`);
    const difference = firstDifference(memory.spans, native.spans, '$', false);
    if (difference === null) continue;
    const at = /^\$\[(\d+)\]/.exec(difference)?.[1];
    found.push(`seed ${seed}, ${type}: ${difference}${at === undefined ? '' : about(memory.spans[Number(at)])}`);
  }
  return found;
}
