// pii_redaction on whole random hook streams, through the plugin, on the
// memory relay and on native 0.9.2 with the same plugins.toml: the random
// streams of test/differential/random-stream.ts (interleaved sessions,
// retries and errors, three provider shapes, tools, approvals, subagents,
// awkward text, keys and numbers) under the random redaction configs of
// test/support/random-redaction.ts (the 14 detectors, every action,
// profiles). redaction-random.test.ts compares the engines value by value;
// this compares where redaction sits in the event's path: which payloads
// each surface hands it, and what reaches the ATOF file, the trajectories and
// the OTLP spans (full, gen_ai, openinference).
// A failure names its seed; the same seed replays
// (test/components/redaction-streams-random.test.ts, and more seeds in
// test/slow/redaction-streams-random.test.ts).
import type { HookName } from '../../src/hooks/names.ts';
import type { Json } from '../../src/shared/json.ts';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { attemptsAsMemory, normalize, normalizeEvents, UuidLabels } from '../differential/normalize.ts';
import { firstDifference, hasFailedCall } from '../differential/random-diff.ts';
import { randomStream } from '../differential/random-stream.ts';
import { runComponents, type ComponentRunResult, type OtlpType } from './component-run.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from './otlp-normalize.ts';
import { detectResponseSurface } from '../../src/formats/atif/payload/surface.ts';
import type { DecodedSpan } from './otlp-receiver.ts';
import { detectorCase } from './random-redaction.ts';

/**
 * A config without selectors: under `target_paths` or `target_path_globs`, native erases LLM payloads and memory
 * keeps them (docs/operators/redaction.md; pinned in redaction-parity.test.ts), so selectors are left to that test.
 * `remove` needs a selector (both refuse it without one), so it becomes `redact`.
 */
function withoutSelectors(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSelectors);
  if (value === null || typeof value !== 'object') return value;
  const out = Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'target_paths' && key !== 'target_path_globs').map(([key, v]) => [key, withoutSelectors(v)]));
  if (out.action === 'remove') out.action = 'redact';
  return out;
}

/** A JSON value as a TOML inline value (the configs hold strings, integers, booleans, arrays and tables). */
function tomlInline(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlInline).join(', ')}]`;
  return `{ ${Object.entries(value as Record<string, unknown>)
    .map(([key, v]) => `${JSON.stringify(key)} = ${tomlInline(v)}`)
    .join(', ')} }`;
}

export function redactionComponent(config: unknown): string {
  const lines = ['[[components]]', 'kind = "pii_redaction"', '', '[components.config]'];
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) lines.push(`${JSON.stringify(key)} = ${tomlInline(value)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * An LLM call closed by `api_request_error` ends with `otel.status_code` "ERROR" on memory and "OK" on native (a
 * documented difference; `failedLlmEndsAsNative` in normalize.ts). Redaction may then rewrite the two texts
 * differently (a hash of each, a mask of one and not of the other), so on both sides that one field of such an end
 * reads `<failed LLM status>`.
 */
function failedLlmStatus(event: Record<string, any>): Record<string, any> {
  const metadata = event.metadata as Record<string, unknown> | null | undefined;
  if (event.category !== 'llm' || event.scope_category !== 'end' || metadata?.['error.type'] === undefined || metadata['otel.status_code'] === undefined) return event;
  return { ...event, metadata: { ...metadata, 'otel.status_code': '<failed LLM status>' } };
}

/** The span ids (the low 64 bits of the ATOF uuid) of a run's LLM calls closed by an API error. */
function failedLlmSpanIds(run: ComponentRunResult): Set<string> {
  return new Set(run.events.filter((event) => failedLlmStatus(event as Record<string, any>) !== event).map((event) => event.uuid.replace(/-/g, '').slice(16)));
}

/** `failedLlmStatus` for a span: its status and every text that carries the status code (attributes and JSON-text attributes). */
function failedLlmSpanStatus(span: DecodedSpan, failed: ReadonlySet<string>): DecodedSpan {
  if (!failed.has(span.spanId)) return span;
  const attributes = Object.fromEntries(
    Object.entries(span.attributes).map(([key, value]) => {
      if (key.endsWith('otel.status_code')) return [key, '<failed LLM status>'];
      return [key, typeof value === 'string' ? value.replace(/("otel\.status_code":\s?)"(?:[^"\\]|\\.)*"/g, '$1"<failed LLM status>"') : value];
    }),
  ) as DecodedSpan['attributes'];
  return { ...span, attributes, status: { code: -1, message: '' } };
}

/**
 * The span ids of a run's LLM calls whose response, as redaction left it, has no provider's shape (hashing an
 * Anthropic response's `type: "message"` makes it shapeless): native leaves such a response out of gen_ai and
 * OpenInference, memory reads it (a documented difference: docs/operators/pricing.md, "Differences from native").
 */
function shapelessResponseSpanIds(run: ComponentRunResult): Set<string> {
  const ids = new Set<string>();
  for (const event of run.events as unknown as Record<string, any>[]) {
    if (event.category !== 'llm' || event.scope_category !== 'end' || event.data === null || typeof event.data !== 'object' || Array.isArray(event.data)) continue;
    if (detectResponseSurface(event.data as Json) === undefined) ids.add(String(event.uuid).replace(/-/g, '').slice(16));
  }
  return ids;
}

/** What gen_ai and OpenInference read from a response: left out of both sides' spans for a shapeless one. */
const RESPONSE_READ = /^(gen_ai\.(response|usage|output)\.|llm\.(token_count|finish_reason|output_messages)|output\.(value|mime_type)$)/;

function withoutResponseRead(span: DecodedSpan, shapeless: ReadonlySet<string>): DecodedSpan {
  if (!shapeless.has(span.spanId)) return span;
  return { ...span, attributes: Object.fromEntries(Object.entries(span.attributes).filter(([key]) => !RESPONSE_READ.test(key))) as DecodedSpan['attributes'] };
}

/** A plugin-host document with `failedLlmStatus` applied to its observed events. */
function observedStatus<T>(doc: T): T {
  const extra = (doc as { extra?: { observed_events?: unknown[] } }).extra;
  if (!Array.isArray(extra?.observed_events)) return doc;
  return { ...doc, extra: { ...extra, observed_events: extra.observed_events.map((event) => failedLlmStatus(event as Record<string, any>)) } };
}

/** The OTLP endpoint types each run sends to (one loopback receiver each). */
const OTLP: readonly OtlpType[] = ['full', 'gen_ai', 'openinference'];

/** Every difference of one seed: the ATOF events, each trajectory, the spans of each OTLP endpoint type. */
export async function compareRedactionStreamSeed(seed: number, large = false): Promise<string[]> {
  const stream = randomStream(seed, { large });
  const config = withoutSelectors(detectorCase(seed).config);
  const components = redactionComponent(config);
  const script = ({ hooks }: { hooks: { emit(name: HookName, payload: never): void } }) => {
    for (const line of stream.lines) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  };
  const [memory, native] = (await Promise.all(FILE_BACKENDS.map((backend) => runComponents(backend.create(), { components, script, otlp: OTLP })))) as [ComponentRunResult, ComponentRunResult];
  const options = stream.concurrentSubagents ? { drop: ['propagation_root_uuid'] } : {};
  const found: string[] = [];
  const say = (what: string, difference: string | null) => {
    if (difference !== null) found.push(`${what}: ${difference}`);
  };
  // A config both refuse: neither writes anything (fail closed), which is all there is to compare.
  const refused = (run: ComponentRunResult) => run.problems.length > 0 && run.problems.every((problem) => problem.includes('rejected plugins.toml')) && run.events.length === 0;
  if (refused(memory) && refused(native)) return [];
  if (memory.problems.length > 0) found.push(`memory warned: ${memory.problems.join(' | ')}`);
  if (native.problems.length > 0) found.push(`native warned: ${native.problems.join(' | ')}`);
  say('ATOF events', firstDifference(normalizeEvents(memory.events.map((event) => failedLlmStatus(event as Record<string, any>)), options), normalizeEvents(native.events.map((event) => failedLlmStatus(event as Record<string, any>)), options)));
  const ours = [...memory.trajectories.values()].map((doc) => normalize(observedStatus(doc), new UuidLabels(), options));
  const failed = [...native.trajectories.values()].some(hasFailedCall);
  const theirs = [...native.trajectories.values()].map((doc) => normalize(observedStatus(failed ? attemptsAsMemory(structuredClone(doc)) : doc), new UuidLabels(), options));
  // Files are named by root scope uuids, which differ per run: compared as a multiset of documents.
  const sorted = (docs: Json[]) => docs.map((doc) => [JSON.stringify(doc), doc] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, doc]) => doc);
  // A document rewritten for native's failed attempts has lost its key order: compared by content then, as random-diff.ts does.
  say('ATIF documents', firstDifference(sorted(ours), sorted(theirs), '$', !failed));
  for (const type of OTLP) {
    const spans = (run: ComponentRunResult) => {
      const failed = failedLlmSpanIds(run);
      const shapeless = shapelessResponseSpanIds(run);
      return normalizeSpans((run.spans[type] ?? []).map((span) => withoutResponseRead(failedLlmSpanStatus(span, failed), shapeless)), { ignoreResourceKeys: SDK_RESOURCE_KEYS });
    };
    say(`OTLP ${type} spans`, firstDifference(spans(memory), spans(native), '$', false));
  }
  if (found.length > 0) found.unshift(`seed ${seed}${large ? ' (large)' : ''}, config ${JSON.stringify(config)}`, `stream:\n  ${stream.outline.join('\n  ')}`);
  return found;
}

