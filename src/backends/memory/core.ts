/**
 * The in-memory relay's core: the operations behind the facade's guarded
 * entry points (scopes, marks, LLM and tool spans), the handles, the
 * timestamps, and the choice of encoder. What the relay's plug-ins see of
 * it is `RelayCore` (`listeners.ts`).
 *
 * Each operation has its event made by an encoder (`encode/`), then
 * delivers it: the event object from the object encoder, or, while ATOF
 * sinks are the only receivers, the line the byte encoder wrote straight
 * into a sink's buffer (a line it cannot write goes to the object encoder
 * instead). The choice is made when receivers come or go.
 *
 * @module
 */

import type { JsonObject, LlmRequest, ManagedLlmOptions, ManagedToolOptions, PropagationContext, PushScopeOptions, ToolStartOptions } from '../../relay/contract.ts';
import { propagationContextFromJson, propagationContextToJson } from '../../formats/propagation.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { isScopeCategory } from '../../relay/contract.ts';
import { endAfterStart, scopeAttributeFlags } from '../../relay/rules.ts';
import type { AtofCategory, AtofEvent, AtofSubscriber } from '../../formats/atof/types.ts';
import { scopeEvent } from '../../formats/atof/build.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { uuidv7 } from '../../shared/uuid.ts';
import { stringOf } from '../../shared/text.ts';
import { withoutSensitiveHeaders } from '../../shared/credential-headers.ts';
import { HeldSwitch } from '../../shared/held-switch.ts';
import type { AtofFileWriter } from './atof-batcher.ts';
import { RelayCounters } from './counters.ts';
import { Delivery, isTurnMark } from './delivery.ts';
import { ScopeRecord, SpanRecord } from './records.ts';
import { SessionTrajectories } from '../session-trajectories.ts';
import { placeScope } from './tree.ts';
import { ByteEncoder } from './encode/bytes.ts';
import type { InternalListener, RelayCore } from './listeners.ts';
import { ObjectEncoder } from './encode/objects.ts';
import { llmProfile, recordedHeaders, toolProfile } from './encode/event-parts.ts';
import type { EndRule } from './encode/metadata.ts';
import type { ResponseCache } from '../../components/cache/response-cache.ts';

const NO_ATTRIBUTES: string[] = [];

export class MemoryRelayCore implements RelayCore {
  readonly logger: Logger;
  readonly counters: RelayCounters;
  readonly delivery: Delivery;
  private readonly clock: () => number;
  /** Parent of marks and spans that have no explicit parent. */
  private readonly processRoot = uuidv7();
  private readonly bytes = new ByteEncoder();
  private readonly objects = new ObjectEncoder(
    (event) => this.delivery.outgoing(event),
    () => this.delivery.transform === null,
  );
  /** ATOF sinks are the only receivers: events are written as lines, with no event object. */
  private linesOnly = true;
  /** No receiver reads marks as objects (`Delivery.marksAsLines`): marks are written as lines. */
  private marksAsLines = true;
  /** The same for a turn's start and end (`Delivery.turnMarksAsLines`), which the ATIF router reads. */
  private turnMarksAsLines = true;
  private trajectoryRouter: SessionTrajectories | null = null;
  /** On while a `dropCredentialHeaders` holder has not removed it. */
  private readonly credentialDrops = new HeldSwitch((drop) => {
    this.bytes.drop = drop;
    this.objects.drop = drop;
  });

  constructor(logger: Logger, clock: () => number) {
    this.logger = logger;
    this.clock = clock;
    this.counters = new RelayCounters(logger);
    this.delivery = new Delivery(this.counters);
    this.delivery.receiversChanged = () => this.chooseEncoder();
  }

  // ---- scopes and marks ---------------------------------------------------

  push(options: PushScopeOptions): ScopeRecord {
    const o = options ?? ({} as PushScopeOptions);
    const parent = o.parent == null ? null : this.ownScope(o.parent, 'pushScope parent');
    let category = o.category as AtofCategory;
    if (!isScopeCategory(category)) {
      this.counters.misuse(`pushScope: unknown category ${String(category)}; recorded as "unknown"`);
      category = 'unknown';
    }
    const received = parent === null ? this.receivedContext(o.propagation) : undefined;
    const place = placeScope(parent, category, received);
    const startUs = this.stamp(o.timestampUs);
    const attributes = o.attributes === undefined ? NO_ATTRIBUTES : scopeAttributeFlags(o.attributes);
    const record = new ScopeRecord(this, place.uuid, stringOf(o.name), category, parent, place.parentUuid, place.root, place.agentRooted, attributes, startUs);
    if (received !== undefined) record.remoteParent = true;
    const metadata = o.metadata;
    const input = o.input;
    if (this.linesOnly) {
      const out = this.delivery.openLine();
      if (this.bytes.scopeStart(out, record, input, metadata)) {
        this.delivery.closeLine(out);
        return record;
      }
      this.delivery.abandonLine(out);
    }
    this.delivery.emit(this.objects.scopeStart(record, input, metadata), record.top);
    return record;
  }

  pop(handle: unknown, options: { output?: unknown; metadata?: unknown; timestampUs?: number } | undefined): void {
    const record = this.ownScope(handle, 'popScope');
    if (record === null) return;
    if (record.ended) {
      this.counters.misuse(`popScope: scope "${record.name}" (${record.uuid}) was already popped; ignored`);
      return;
    }
    record.ended = true;
    const endUs = this.endStamp(options?.timestampUs, record.startUs);
    const output = options?.output;
    const metadata = options?.metadata;
    if (this.linesOnly) {
      const out = this.delivery.openLine();
      if (this.bytes.scopeEnd(out, record, output, metadata, endUs)) return this.delivery.closeLine(out);
      this.delivery.abandonLine(out);
    }
    this.delivery.emit(this.objects.scopeEnd(record, output, metadata, endUs), record.top);
  }

  mark(options: { name?: unknown; parent?: unknown; data?: unknown; metadata?: unknown; timestampUs?: number } | undefined): void {
    const o = options ?? {};
    const parent = o.parent == null ? null : this.ownScope(o.parent, 'mark parent');
    const uuid = uuidv7();
    const parentUuid = parent === null ? this.processRoot : parent.uuid;
    const root = parent === null ? this.processRoot : parent.propagationRootUuid;
    const name = stringOf(o.name);
    const timestampUs = this.stamp(o.timestampUs);
    const top = parent === null ? null : parent.top;
    // A listener that reads every mark reads a turn's too, so turn marks as lines implies all marks as lines: the name
    // is compared only while the ATIF router alone reads turn marks.
    if (this.turnMarksAsLines || (this.marksAsLines && !isTurnMark(name))) {
      const out = this.delivery.openLine();
      if (this.bytes.mark(out, uuid, parentUuid, root, name, o.data, o.metadata, timestampUs)) return this.delivery.closeLine(out);
      this.delivery.abandonLine(out);
    }
    this.delivery.emit(this.objects.mark(uuid, parentUuid, root, name, o.data, o.metadata, timestampUs), top);
  }

  // ---- spans ------------------------------------------------------------------

  /**
   * Starts an LLM span; `session` holds the session headers a managed call injects. `managed`: its content and
   * result are copied with their media whole (`SpanRecord.wholeMedia`), as the response cache keys and keeps them.
   */
  startLlm(o: ManagedLlmOptions, parent: ScopeRecord | null, request: LlmRequest, session: JsonObject | undefined, managed = false): SpanRecord {
    const headers = recordedHeaders(request.headers, session);
    const record = this.newSpan('llm', o.name, parent, llmProfile(o.modelName), (o as { timestampUs?: number }).timestampUs);
    record.wholeMedia = managed;
    this.spanStart(record, request.content, headers, o.metadata);
    return record;
  }

  startTool(o: ManagedToolOptions, what: string, managed = false): SpanRecord {
    const parent = o.parent == null ? null : this.ownScope(o.parent, `${what} parent`);
    const record = this.newSpan('tool', o.name, parent, toolProfile(o.toolCallId), (o as ToolStartOptions).timestampUs);
    record.wholeMedia = managed;
    this.spanStart(record, o.args, undefined, o.metadata);
    return record;
  }

  /**
   * Ends a span: `rule` says how its end metadata combines with the start's
   * (`metadata` is the end's raw metadata, or the thrown value), `annotation`
   * is a tool result annotation (undefined for none).
   */
  endSpan(record: SpanRecord, data: unknown, rule: EndRule, metadata: unknown, annotation: unknown, timestampUs: unknown): void {
    record.ended = true;
    const endUs = this.endStamp(timestampUs, record.startUs);
    if (this.linesOnly) {
      const out = this.delivery.openLine();
      if (this.bytes.spanEnd(out, record, data, rule, metadata, annotation, endUs)) return this.delivery.closeLine(out);
      this.delivery.abandonLine(out);
    }
    this.delivery.emit(this.objects.spanEnd(record, data, rule, metadata, annotation, endUs), record.top);
  }

  private spanStart(record: SpanRecord, data: unknown, headers: JsonObject | undefined, metadata: unknown): void {
    if (this.linesOnly) {
      const out = this.delivery.openLine();
      if (this.bytes.spanStart(out, record, data, headers, metadata)) return this.delivery.closeLine(out);
      this.delivery.abandonLine(out);
    }
    this.delivery.emit(this.objects.spanStart(record, data, headers, metadata), record.top);
  }

  /** The record (the handle) of a span about to start; its start metadata is set when its start is written. */
  private newSpan(kind: 'llm' | 'tool', name: unknown, parent: ScopeRecord | null, profile: SpanRecord['profile'], timestampUs: number | undefined): SpanRecord {
    const uuid = uuidv7();
    const startUs = this.stamp(timestampUs);
    const parentUuid = parent === null ? this.processRoot : parent.uuid;
    const root = parent === null ? this.processRoot : parent.propagationRootUuid;
    return new SpanRecord(this, kind, uuid, stringOf(name), parentUuid, root, parent === null ? null : parent.top, profile, startUs);
  }

  /** A received context, checked as native checks it; a bad one is counted and the scope opens as an ordinary top-level one. */
  private receivedContext(context: PropagationContext | undefined): PropagationContext | undefined {
    if (context === undefined || context === null) return undefined;
    try {
      return propagationContextFromJson(propagationContextToJson(context));
    } catch (error) {
      this.counters.misuse(`pushScope: ${errorMessage(error)}; the scope opens without it`);
      return undefined;
    }
  }

  /** The context of work continuing `handle` elsewhere: the handle as parent, its tree's propagation root as root. */
  propagationContext(handle: unknown): PropagationContext | null {
    if ((handle instanceof ScopeRecord || handle instanceof SpanRecord) && handle.owner === this) {
      return { version: 1, rootUuid: handle.propagationRootUuid, parentUuid: handle.uuid };
    }
    this.counters.misuse('propagationContext: not a handle of this relay; ignored');
    return null;
  }

  // ---- handles ------------------------------------------------------------------

  ownScope(handle: unknown, what = 'scope handle'): ScopeRecord | null {
    if (handle instanceof ScopeRecord && handle.owner === this) return handle;
    this.counters.misuse(`${what}: not a scope handle of this relay; ignored`);
    return null;
  }

  ownSpan(handle: unknown, kind: 'llm' | 'tool', what: string): SpanRecord | null {
    if (!(handle instanceof SpanRecord) || handle.owner !== this || handle.kind !== kind) {
      this.counters.misuse(`${what}: not a ${kind} handle of this relay; ignored`);
      return null;
    }
    if (handle.ended) {
      this.counters.misuse(`${what}: ${kind} span "${handle.name}" (${handle.uuid}) already ended; ignored`);
      return null;
    }
    return handle;
  }

  /** A scope handle that emits nothing, returned when a push failed internally; ending it is a counted no-op. */
  detachedScope(): ScopeRecord {
    const record = new ScopeRecord(this, uuidv7(), '', 'unknown', null, this.processRoot, this.processRoot, false, NO_ATTRIBUTES, 0);
    record.keepStart(scopeEvent('start', record.uuid, this.processRoot, this.processRoot, '', 'unknown', NO_ATTRIBUTES, null, null, null, ''));
    record.ended = true;
    return record;
  }

  /** The span counterpart of `detachedScope`. */
  detachedSpan(kind: 'llm' | 'tool'): SpanRecord {
    const record = new SpanRecord(this, kind, uuidv7(), '', this.processRoot, this.processRoot, null, {}, 0);
    record.ended = true;
    return record;
  }

  // ---- credential headers ---------------------------------------------------

  /**
   * Drops credential headers from every payload from now on (the contract's
   * rule, `shared/credential-headers.ts`), inside the encoders' own walks:
   * the object encoder's copy and the byte encoder's writer. Until removed.
   */
  dropCredentialHeaders(): () => void {
    return this.credentialDrops.hold();
  }

  /** True while credential headers are dropped (what the response cache's keys and stored values get too). */
  get dropsCredentialHeaders(): boolean {
    return this.credentialDrops.on;
  }

  /**
   * The request of an LLM call as the contract shapes it; anything else is recorded as the content.
   * While credential headers are dropped, the headers object is cleaned as the plugin's walk would have
   * cleaned it: what a managed call forwards and what the start event records both come from it.
   */
  request(value: unknown, what: string): LlmRequest {
    if (typeof value === 'object' && value !== null) {
      const request = value as Partial<LlmRequest>;
      const headers = request.headers ?? {};
      return { headers: this.credentialDrops.on ? withoutSensitiveHeaders(headers) : headers, content: request.content };
    }
    this.counters.misuse(`${what}: request is not an object {headers, content}; recorded as content`);
    return { headers: {}, content: value };
  }

  // ---- receivers --------------------------------------------------------------

  subscribe(callback: AtofSubscriber): () => void {
    return this.delivery.subscribe(callback, () => this.chooseEncoder());
  }

  /** Lines straight from the payloads while ATOF sinks are the only receivers and nothing redacts; event objects otherwise. */
  private chooseEncoder(): void {
    this.linesOnly = this.delivery.linesOnly();
    this.marksAsLines = this.delivery.marksAsLines();
    this.turnMarksAsLines = this.delivery.turnMarksAsLines();
  }

  reportRedactionFailure(what: string, error: unknown, quiet: boolean): void {
    this.counters.redactionFailures++;
    this.counters.errors++;
    if (!quiet) safeLog(this.logger, 'warn', `redaction failed on ${what}; the part was written as null instead (fail closed): ${errorMessage(error)} (further failures are counted in stats().redactionFailures)`);
  }

  /** The plugins.toml `adaptive` response and tool cache, while an activation has one. */
  responseCache: ResponseCache | null = null;

  /** The installed event transforms, components' before the host's. */
  private transforms: { stage: 'component' | 'host'; run: (event: AtofEvent) => AtofEvent }[] = [];

  /**
   * Installs a transform every event passes through before any receiver
   * (redaction): a plugins.toml component's (`component`) runs before the
   * host's own (`host`). Returns its removal.
   */
  addEventTransform(run: (event: AtofEvent) => AtofEvent, stage: 'component' | 'host'): () => void {
    const entry = { stage, run };
    this.transforms = [...this.transforms.filter((t) => t.stage === 'component'), ...(stage === 'component' ? [entry] : []), ...this.transforms.filter((t) => t.stage === 'host'), ...(stage === 'host' ? [entry] : [])];
    this.composeTransforms();
    return () => {
      this.transforms = this.transforms.filter((t) => t !== entry);
      this.composeTransforms();
    };
  }

  private composeTransforms(): void {
    const runs = this.transforms.map((t) => t.run);
    this.delivery.transform =
      runs.length === 0
        ? null
        : runs.length === 1
          ? runs[0]!
          : (event) => {
              let out = event;
              for (const run of runs) out = run(out);
              return out;
            };
    this.chooseEncoder();
  }

  addListener(listener: InternalListener, readsMarks: boolean | 'turn' = true): () => void {
    return this.delivery.addListener(listener, readsMarks);
  }

  addLineSink(writer: AtofFileWriter): () => void {
    return this.delivery.addLineSink(writer);
  }

  sessionTrajectories(): SessionTrajectories {
    let router = this.trajectoryRouter;
    if (router === null) {
      const live = (router = this.trajectoryRouter = new SessionTrajectories());
      // Marks are never steps: the router is given scope events and a turn's start and end only (a trajectory says
      // how a turn that did not complete ended), and other marks stay on the byte path.
      this.addListener((event) => live.route(event), 'turn');
    }
    return router;
  }

  // ---- timestamps ---------------------------------------------------------------

  private stamp(timestampUs: unknown): number {
    if (timestampUs == null) return this.clock();
    if (typeof timestampUs === 'number' && Number.isFinite(timestampUs) && Math.abs(timestampUs) <= Number.MAX_SAFE_INTEGER) {
      return Math.floor(timestampUs);
    }
    this.counters.misuse(`timestampUs must be integer Unix microseconds, got ${String(timestampUs)}; using the clock`);
    return this.clock();
  }

  /** Strictly `end > start` (the contract's rule): an earlier end is moved and counted. */
  endStamp(timestampUs: unknown, startUs: number): number {
    const endUs = this.stamp(timestampUs);
    const after = endAfterStart(startUs, endUs);
    if (after !== endUs) this.counters.adjusted(endUs, startUs);
    return after;
  }
}
