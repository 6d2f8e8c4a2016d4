/**
 * Makes two OTLP captures of the same hook stream comparable: spans and log
 * records are ordered by time (then name), every id (trace ids, span ids and
 * the uuids inside attributes) is replaced by a label in order of first
 * appearance, and every time by its rank among the capture's times. What is
 * left — names, kinds, statuses, parents, attribute keys, types and values,
 * events, resource and scope — must match exactly.
 */

import type { AttributeValue, Attributes, DecodedLog, DecodedSpan } from './otlp-receiver.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class Labels {
  private readonly ids = new Map<string, string>();
  private readonly times: string[];

  constructor(times: string[]) {
    this.times = [...new Set(times)].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  }

  /** A span id, or the low 64 bits of a uuid (the same label: native derives one from the other). */
  id(value: string): string {
    if (value === '') return '';
    const key = UUID.test(value) ? value.replace(/-/g, '').slice(16).toLowerCase() : value.length === 32 ? `trace:${value}` : value;
    let label = this.ids.get(key);
    if (label === undefined) {
      label = `${key.startsWith('trace:') ? 'trace' : 'id'}#${this.ids.size}`;
      this.ids.set(key, label);
    }
    return label;
  }

  trace(value: string): string {
    return this.id(value);
  }

  time(value: string): string {
    return `t${this.times.indexOf(value)}`;
  }

  value(value: AttributeValue): AttributeValue {
    if (typeof value === 'string' && UUID.test(value)) return this.id(value);
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (value !== null && typeof value === 'object') return this.attributes(value);
    return value;
  }

  attributes(attributes: Attributes): Attributes {
    const out: Attributes = {};
    for (const key of Object.keys(attributes).sort()) out[key] = this.value(attributes[key]!);
    return out;
  }
}

function byTime<T>(time: (item: T) => string, name: (item: T) => string) {
  return (a: T, b: T): number => {
    const ta = BigInt(time(a));
    const tb = BigInt(time(b));
    if (ta !== tb) return ta < tb ? -1 : 1;
    return name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0;
  };
}

/** Normalized spans, ordered by start time, then end time, then name. */
export function normalizeSpans(spans: readonly DecodedSpan[], options: { ignoreResourceKeys?: readonly string[] } = {}) {
  const times = spans.flatMap((s) => [s.startTimeUnixNano, s.endTimeUnixNano, ...s.events.map((e) => e.timeUnixNano)]);
  const labels = new Labels(times);
  const ordered = [...spans].sort((a, b) => byTime<DecodedSpan>((s) => s.startTimeUnixNano, (s) => `${s.endTimeUnixNano.padStart(24, '0')} ${s.name}`)(a, b));
  // Label span ids in start order first, so labels do not depend on export order.
  for (const span of ordered) labels.id(span.spanId);
  const ignore = new Set(options.ignoreResourceKeys ?? []);
  return ordered.map((span) => ({
    name: span.name,
    kind: span.kind,
    traceId: labels.trace(span.traceId),
    spanId: labels.id(span.spanId),
    parentSpanId: labels.id(span.parentSpanId),
    start: labels.time(span.startTimeUnixNano),
    end: labels.time(span.endTimeUnixNano),
    status: span.status,
    flags: span.flags,
    attributes: labels.attributes(span.attributes),
    events: span.events.map((e) => ({ name: e.name, time: labels.time(e.timeUnixNano), attributes: labels.attributes(e.attributes) })),
    resource: Object.fromEntries(Object.entries(span.resource).filter(([key]) => !ignore.has(key)).sort()),
    scope: span.scope,
  }));
}

/** Normalized log records, ordered by time, then mark name. */
export function normalizeLogs(logs: readonly DecodedLog[], options: { ignoreResourceKeys?: readonly string[] } = {}) {
  const labels = new Labels(logs.map((l) => l.timeUnixNano));
  const ignore = new Set(options.ignoreResourceKeys ?? []);
  const ordered = [...logs].sort(byTime<DecodedLog>((l) => l.timeUnixNano, (l) => String(l.attributes['nemo_relay.mark.name'])));
  return ordered.map((log) => ({
    time: labels.time(log.timeUnixNano),
    severityNumber: log.severityNumber,
    severityText: log.severityText,
    body: labels.value(log.body),
    attributes: labels.attributes(log.attributes),
    traceId: labels.trace(log.traceId),
    spanId: labels.id(log.spanId),
    resource: Object.fromEntries(Object.entries(log.resource).filter(([key]) => !ignore.has(key)).sort()),
    scope: log.scope,
  }));
}

/** The resource keys that name the SDK that sent the data (native: Rust; ours: JavaScript). */
export const SDK_RESOURCE_KEYS = ['telemetry.sdk.language', 'telemetry.sdk.version'] as const;

const ERROR_STATUS_TEXT = /("otel\.status_code":\s?)"ERROR"/g;

/**
 * A memory span that ended in ERROR as native writes it for a manual LLM end
 * (native forces OK): the status, the status-code attributes and the status
 * code inside JSON-text attributes say OK (the documented difference in
 * docs/backends/memory-and-native.md).
 */
export function errorSpanAsOk(span: DecodedSpan): DecodedSpan {
  const attributes = Object.fromEntries(
    Object.entries(span.attributes).map(([key, value]) => {
      if (key.endsWith('otel.status_code') && value === 'ERROR') return [key, 'OK'];
      return [key, typeof value === 'string' ? value.replace(ERROR_STATUS_TEXT, '$1"OK"') : value];
    }),
  ) as DecodedSpan['attributes'];
  return { ...span, attributes, status: { ...span.status, code: 1 } };
}
