/**
 * Turns the relay's ATOF event stream into finished spans for one trace
 * destination: a scope's span is built when its end event arrives (native
 * also exports in end order), with the ids and times native uses, and the
 * marks seen meanwhile as its span events (or as `mark:<name>` spans under
 * `mark_projection = "tool"`).
 *
 * `accept` is synchronous and cheap: one map lookup per event, the span
 * object built once at the end. Open scopes are bounded; a scope that never
 * ends beyond the bound is dropped and counted.
 *
 * @module
 */

import type { AtofEvent, AtofMarkEvent, AtofScopeEvent } from '../../formats/atof/types.ts';
import type { OtlpEndpointSettings } from '../../formats/plugins-toml/opentelemetry.ts';
import { objectOf, put } from './attributes.ts';
import { hrDuration, hrTimeOf, spanIdOf, traceIdOf } from './ids.ts';
import { StatusCode, type Attributes, type HrTime, type OtlpResource, type OtlpScope, type OtlpSpan, type OtlpSpanEvent, type SpanContext } from './model.ts';
import type { CostOf, Projection, SpanCost, SpanShape } from './mappings/types.ts';
import { projectionFor } from './mappings/index.ts';

/** The top-level scope of the event's tree, as the relay reports it. */
export interface TreeRoot {
  readonly uuid: string;
  /** The tree continues another process's context: its top span's parent is the caller's span (as native sends it). */
  readonly remoteParent?: boolean;
}

interface OpenScope {
  start: AtofScopeEvent;
  startTime: HrTime;
  /** The span's own context; also its children's parent context. */
  context: SpanContext;
  parentContext: SpanContext | undefined;
  isRoot: boolean;
  /** Marks seen while open, as span events; null until the first. */
  events: OtlpSpanEvent[] | null;
}

/** Sampled; the exporter adds "has is-remote" (native sends 257). */
const TRACE_FLAGS = 1;
const MAX_OPEN_SCOPES = 10_000;

// Shared by every span that has no events or links, and the three statuses: the exporter only reads them.
const NO_EVENTS: OtlpSpanEvent[] = Object.freeze([]) as unknown as OtlpSpanEvent[];
const NO_LINKS: never[] = Object.freeze([]) as unknown as never[];
const STATUS_UNSET = Object.freeze({ code: StatusCode.UNSET });
const STATUS_OK = Object.freeze({ code: StatusCode.OK });
const STATUS_ERROR = Object.freeze({ code: StatusCode.ERROR });

/**
 * A finished span in `ReadableSpan` form: a class, so `spanContext()` is one
 * prototype method rather than a closure per span, and `duration` (which the
 * protobuf serializer does not read) is computed only when asked for.
 */
class ExportSpan implements OtlpSpan {
  readonly ended = true;
  readonly links = NO_LINKS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;

  constructor(
    readonly name: string,
    readonly kind: number,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly startTime: HrTime,
    readonly endTime: HrTime,
    readonly status: { code: number },
    readonly attributes: Attributes,
    readonly events: OtlpSpanEvent[],
    readonly resource: OtlpResource,
    readonly instrumentationScope: OtlpScope,
  ) {}

  spanContext(): SpanContext {
    return this.context;
  }

  get duration(): HrTime {
    return hrDuration(this.startTime, this.endTime);
  }
}

export class SpanAssembler {
  private readonly open = new Map<string, OpenScope>();
  private readonly projection: Projection;
  private readonly excluded: ReadonlySet<string>;
  /** No promotion and no aliases: the projection's span is used as it is. */
  private readonly plain: boolean;
  /** The endpoint's `attribute_mappings` this type applies (none on gen_ai, as native). */
  private readonly mappings: readonly { key: string; alias: string }[];
  // The last tree's root uuid and its trace id: consecutive events mostly share a tree.
  private lastRootUuid = '';
  private lastTraceId = '';
  /** Events that could not become (part of) a span: unreadable time, a scope evicted. */
  dropped = 0;

  constructor(
    private readonly settings: OtlpEndpointSettings,
    private readonly resource: OtlpResource,
    private readonly scope: OtlpScope,
    private readonly emit: (span: OtlpSpan) => void,
    /** Prices finished LLM scopes (cost attributes); none without. */
    private readonly costOf?: CostOf,
  ) {
    this.projection = projectionFor(settings.type);
    this.excluded = new Set(settings.markExcludeNames);
    this.mappings = this.projection.mapsAttributes ? settings.attributeMappings : [];
    this.plain = settings.promoteMetadataPrefixes.length === 0 && this.mappings.length === 0;
  }

  accept(event: AtofEvent, top: TreeRoot | null): void {
    if (event.kind === 'mark') {
      this.mark(event, top);
      return;
    }
    if (event.scope_category === 'start') {
      const startTime = hrTimeOf(event.timestamp);
      if (startTime === null) {
        this.dropped++;
        return;
      }
      if (this.open.size >= MAX_OPEN_SCOPES) {
        const oldest = this.open.keys().next().value as string;
        this.open.delete(oldest);
        this.dropped++;
      }
      const traceId = this.traceIdOf(event.propagation_root_uuid ?? top?.uuid ?? event.uuid);
      const top_ = top !== null && top.uuid === event.uuid;
      // A root's parent is its stack's hidden root, never sent. A tree continuing a received context has
      // no root in native's sense: its top span's parent is the caller's span, in another process (remote).
      const remote = top_ && top.remoteParent === true && event.parent_uuid !== null;
      const isRoot = top_ && !remote;
      this.open.set(event.uuid, {
        start: event,
        startTime,
        context: contextOf(traceId, spanIdOf(event.uuid)),
        parentContext: remote
          ? { ...contextOf(traceId, spanIdOf(event.parent_uuid as string)), isRemote: true }
          : isRoot || event.parent_uuid === null
            ? undefined
            : this.parentContextOf(traceId, event.parent_uuid),
        isRoot,
        events: null,
      });
      return;
    }
    const open = this.open.get(event.uuid);
    if (open === undefined) return; // started before this destination was activated
    this.open.delete(event.uuid);
    const endTime = hrTimeOf(event.timestamp) ?? open.startTime;
    const cost = open.start.category === 'llm' && this.costOf !== undefined ? costSafely(this.costOf, open.start, event) : undefined;
    const extra = cost === undefined ? {} : { cost };
    const shape = this.plain
      ? this.projection.span({ start: open.start, end: event, isRoot: open.isRoot, ...extra })
      : this.shaped(
          (strip) => this.projection.span({ start: strip(open.start), end: strip(event), isRoot: open.isRoot, ...extra }),
          this.settings.promoteMetadataPrefixes.length === 0 ? NO_METADATA : mergedMetadata(open.start, event),
        );
    this.emit(
      new ExportSpan(shape.name, shape.kind, open.context, open.parentContext, open.startTime, endTime, statusOf(event), shape.attributes, open.events ?? NO_EVENTS, this.resource, this.scope),
    );
  }

  private traceIdOf(rootUuid: string): string {
    if (rootUuid !== this.lastRootUuid) {
      this.lastTraceId = traceIdOf(rootUuid);
      this.lastRootUuid = rootUuid;
    }
    return this.lastTraceId;
  }

  /** The parent's own context while it is open (the usual case), else one built from its uuid. */
  private parentContextOf(traceId: string, parentUuid: string): SpanContext {
    const parent = this.open.get(parentUuid);
    return parent !== undefined && parent.context.traceId === traceId ? parent.context : contextOf(traceId, spanIdOf(parentUuid));
  }

  private mark(mark: AtofMarkEvent, top: TreeRoot | null): void {
    const time = hrTimeOf(mark.timestamp);
    if (time === null) {
      this.dropped++;
      return;
    }
    const parent = mark.parent_uuid === null ? undefined : this.open.get(mark.parent_uuid);
    const markSpan = this.projection.markSpan;
    if (this.settings.markProjection === 'tool' && !this.excluded.has(mark.name)) {
      if (markSpan === null) return;
      const shape = this.shaped((strip) => markSpan(strip(mark)), objectOf(mark.metadata) ?? {});
      const traceId = parent?.context.traceId ?? this.traceIdOf(mark.propagation_root_uuid ?? top?.uuid ?? mark.uuid);
      const parentContext = mark.parent_uuid === null ? undefined : this.parentContextOf(traceId, mark.parent_uuid);
      this.emit(new ExportSpan(shape.name, shape.kind, contextOf(traceId, spanIdOf(mark.uuid)), parentContext, time, time, STATUS_UNSET, shape.attributes, [], this.resource, this.scope));
      return;
    }
    if (parent === undefined) return; // a mark outside any open span has no span to attach to
    if (this.projection.markEvent(mark) === null) return;
    const { attributes } = this.shaped((strip) => ({ name: mark.name, kind: 0, attributes: this.projection.markEvent(strip(mark)) ?? {} }), objectOf(mark.metadata) ?? {});
    (parent.events ??= []).push({ name: mark.name, time, attributes, droppedAttributesCount: 0 });
  }

  /**
   * The type's span, with `promote_metadata_prefixes` (matching metadata keys
   * move to top-level attributes, out of the metadata) and
   * `attribute_mappings` (an alias for an attribute as it was before
   * promotion), as native applies them.
   */
  private shaped(build: (strip: <E extends AtofEvent>(event: E) => E) => SpanShape, metadata: { [key: string]: unknown }): SpanShape {
    const prefixes = this.settings.promoteMetadataPrefixes;
    const promotedKeys = prefixes.length === 0 ? [] : Object.keys(metadata).filter((key) => prefixes.some((p) => key.startsWith(p)));
    const unchanged = <E extends AtofEvent>(event: E): E => event;
    const shape = build(promotedKeys.length === 0 ? unchanged : (event) => withoutMetadataKeys(event, promotedKeys));
    const attributes = shape.attributes;
    const mappings = this.mappings;
    const before = mappings.length > 0 && promotedKeys.length > 0 ? build(unchanged).attributes : attributes;
    for (const key of promotedKeys) put(attributes, key, metadata[key] as never);
    for (const { key, alias } of mappings) {
      const value = before[key] ?? attributes[key];
      if (value !== undefined) attributes[alias] = value;
    }
    return shape;
  }
}

/** `otel.status_code` of the end event: OK, ERROR (with no message, as native), or unset. */
function statusOf(end: AtofScopeEvent): { code: number } {
  const code = objectOf(end.metadata)?.['otel.status_code'];
  if (code === 'OK') return STATUS_OK;
  if (code === 'ERROR') return STATUS_ERROR;
  return STATUS_UNSET;
}

function contextOf(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: TRACE_FLAGS, isRemote: false };
}

const NO_METADATA: { [key: string]: unknown } = Object.freeze({});

function withoutMetadataKeys<E extends AtofEvent>(event: E, keys: readonly string[]): E {
  const metadata = objectOf(event.metadata);
  if (metadata === null) return event;
  const copy = { ...metadata };
  for (const key of keys) delete copy[key];
  return { ...event, metadata: copy };
}

function mergedMetadata(start: AtofScopeEvent, end: AtofScopeEvent): { [key: string]: unknown } {
  return { ...(objectOf(start.metadata) ?? {}), ...(objectOf(end.metadata) ?? {}) };
}

/** A span is never lost to a pricing failure: it is sent without cost attributes. */
function costSafely(costOf: CostOf, start: AtofScopeEvent, end: AtofScopeEvent): SpanCost | undefined {
  try {
    return costOf(start, end);
  } catch {
    return undefined;
  }
}
