/**
 * The span and log-record shapes handed to the OpenTelemetry exporters:
 * exactly what `@opentelemetry/otlp-transformer` reads from a `ReadableSpan`
 * and a `ReadableLogRecord`, built directly from relay events with explicit
 * ids and times, so no tracer or SDK runs beside the relay.
 *
 * @module
 */

/** `[seconds, nanoseconds]`, the OpenTelemetry `HrTime`. */
export type HrTime = [number, number];

export type AttributeValue = string | number | boolean | string[] | number[] | boolean[];
export type Attributes = Record<string, AttributeValue>;

/** OpenTelemetry API span kinds (the wire value is one more). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;
/** OpenTelemetry status codes (same numbers on the wire). */
export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

/** The resource an endpoint's spans carry; one object per destination (the transformer groups by identity). */
export interface OtlpResource {
  attributes: Attributes;
}

export interface OtlpScope {
  name: string;
}

export interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}

export interface OtlpSpanEvent {
  name: string;
  time: HrTime;
  attributes: Attributes;
  droppedAttributesCount: number;
}

/** A finished span in `ReadableSpan` form. */
export interface OtlpSpan {
  name: string;
  kind: number;
  spanContext(): SpanContext;
  parentSpanContext: SpanContext | undefined;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  status: { code: number; message?: string };
  attributes: Attributes;
  links: never[];
  events: OtlpSpanEvent[];
  ended: true;
  resource: OtlpResource;
  instrumentationScope: OtlpScope;
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

/** A log record in `ReadableLogRecord` form. */
export interface OtlpLogRecord {
  hrTime: HrTime;
  hrTimeObserved: HrTime;
  severityNumber: number;
  severityText: string;
  body: unknown;
  attributes: Record<string, unknown>;
  droppedAttributesCount: number;
  spanContext: SpanContext | undefined;
  resource: OtlpResource;
  instrumentationScope: OtlpScope;
}
