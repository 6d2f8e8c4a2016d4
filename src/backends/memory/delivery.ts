/**
 * Where the memory relay's events go, in emission order: ATOF file sinks,
 * internal listeners (ATIF trajectories, the plugins.toml host), then
 * `subscribe()` callbacks. Every receiver is isolated: a throw or a
 * rejected promise is counted and logged, never seen by the emitter.
 *
 * An event arrives as an event object (its line written once for every
 * sink, shared by reference with every listener and subscriber), or, when the
 * ATOF sinks are its only receivers, as a line the byte encoder wrote
 * straight into a sink's staging buffer (or into a pooled buffer when there
 * is not exactly one sink).
 *
 * @module
 */

import type { AtofEvent, AtofSubscriber } from '../../formats/atof/types.ts';
import type { InternalListener } from './listeners.ts';
import type { AtofFileWriter } from './atof-batcher.ts';
import type { RelayCounters } from './counters.ts';
import type { ScopeRecord } from './records.ts';
import { serializeEvent, writeEventLine } from './encode/event-text.ts';
import { giveBack, takeBuilder, type LineBuilder } from '../../shared/utf8-builder.ts';

export class Delivery {
  // Copy-on-write arrays: subscribing or unsubscribing during delivery is safe.
  subscribers: AtofSubscriber[] = [];
  listeners: InternalListener[] = [];
  /** The listeners that read marks too (the per-session ATIF router reads none: marks are never steps). */
  markListeners: InternalListener[] = [];
  /**
   * The listeners that read every mark, and those that read only a turn's start and end (`isTurnMark`): the ATIF
   * router, for a trajectory that says how a turn that did not complete ended (`convert/turn-ends.ts`).
   */
  turnMarkListeners: InternalListener[] = [];
  lineSinks: AtofFileWriter[] = [];
  /** Every sink ever added and not yet closed (their drop counts are read from here). */
  readonly writers = new Set<AtofFileWriter>();

  /** Runs after a listener or line sink comes or goes (the core picks its encoder then). */
  receiversChanged: () => void = () => {};

  /**
   * The one place events are changed before anyone receives them: the
   * plugins.toml `pii_redaction` component and the host's `redact` hook.
   * While set, every event is built as an object and passes through it
   * (see `outgoing`).
   */
  transform: ((event: AtofEvent) => AtofEvent) | null = null;

  constructor(private readonly counters: RelayCounters) {}

  /**
   * True when the ATOF sinks are the only receivers (nobody reads the event
   * as an object) and no transform is set (a redaction works on the objects).
   */
  linesOnly(): boolean {
    return this.transform === null && this.listeners.length === 0 && this.subscribers.length === 0;
  }

  /**
   * `linesOnly` for marks: true as well when the only listeners read no
   * marks (an ATIF trajectory makes nothing of one), so a mark costs no
   * payload copy and no event object.
   */
  marksAsLines(): boolean {
    return this.transform === null && this.markListeners.length === 0 && this.subscribers.length === 0;
  }

  /** `marksAsLines` for a turn's start and end (`isTurnMark`), which the ATIF router reads. */
  turnMarksAsLines(): boolean {
    return this.transform === null && this.turnMarkListeners.length === 0 && this.subscribers.length === 0;
  }

  /**
   * Where a line is written: straight into the staging buffer of the only
   * ATOF sink (no copy), else into a pooled buffer. Hand it to `closeLine`
   * when the line is complete, or to `abandonLine`.
   */
  openLine(): LineBuilder {
    const sinks = this.lineSinks;
    if (sinks.length === 1) {
      const out = sinks[0]!.beginLine();
      if (out !== null) return out;
    }
    return takeBuilder();
  }

  /**
   * Delivers an event written as a line to the sinks. A receiver of event
   * objects that registered while the line was written (from a payload
   * getter) takes events from the next one on.
   */
  closeLine(out: LineBuilder): void {
    this.counters.events++;
    this.deliverLine(out);
  }

  /** `closeLine` without counting the event (`emit` counts its own). */
  private deliverLine(out: LineBuilder): void {
    const sinks = this.lineSinks;
    const owner = out.owner;
    if (owner === null) {
      for (let i = 0; i < sinks.length; i++) sinks[i]!.appendBytes(out.bytes, out.length);
      giveBack(out);
      return;
    }
    if (sinks.length === 1 && sinks[0] === owner) {
      owner.endLine(true);
      return;
    }
    // The sinks changed while the line was written (a payload getter that registered or closed one).
    const line = out.bytes.slice(out.start, out.length);
    owner.endLine(false);
    for (let i = 0; i < sinks.length; i++) sinks[i]!.appendBytes(line, line.length);
  }

  /** Gives up a line begun with `openLine` (the object encoder records the event instead). */
  abandonLine(out: LineBuilder): void {
    if (out.owner === null) giveBack(out);
    else out.owner.endLine(false);
  }

  /**
   * The event as every receiver gets it (the transform applied). A
   * transform that throws is a bug of ours: the event's payloads are then
   * dropped rather than delivered as they were, and the failure counted.
   */
  outgoing<E extends AtofEvent>(event: E): E {
    const transform = this.transform;
    if (transform === null) return event;
    try {
      return transform(event) as E;
    } catch (error) {
      this.counters.internalError('redacting an event', error);
      return { ...event, data: null, metadata: null, ...(event.kind === 'scope' && event.category === 'tool' ? { category_profile: withoutAnnotation(event.category_profile) } : {}) };
    }
  }

  /**
   * Delivers an event object: sinks (one serialization for all), internal
   * listeners, subscribers. Without a transform the event is the object
   * encoder's, around the relay's copies, and its line is written as bytes
   * (`writeEventLine`), as the byte encoder writes lines; a transform's
   * result is serialized as a string, whatever it holds.
   */
  emit(event: AtofEvent, top: ScopeRecord | null): void {
    this.counters.events++;
    const sinks = this.lineSinks;
    if (sinks.length > 0 && !(this.transform === null && this.writeEventBytes(event))) {
      let line: string | undefined;
      try {
        line = serializeEvent(event) + '\n';
      } catch (error) {
        // Only a pathological payload (a string past the engine's limit) gets here.
        this.counters.dropped += sinks.length;
        this.counters.internalError('serializing an event', error);
      }
      if (line !== undefined) for (let i = 0; i < sinks.length; i++) sinks[i]!.append(line);
    }
    const listeners = event.kind !== 'mark' ? this.listeners : isTurnMark(event.name) ? this.turnMarkListeners : this.markListeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(event, top);
      } catch (error) {
        this.counters.receiverFailed('internal sink', error);
      }
    }
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) {
      try {
        const result: unknown = subscribers[i]!(event);
        if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<unknown>).then === 'function') {
          (result as PromiseLike<unknown>).then(undefined, (error: unknown) => this.counters.receiverFailed('subscriber', error));
        }
      } catch (error) {
        this.counters.receiverFailed('subscriber', error);
      }
    }
  }

  /** Writes the event's line into the sinks as bytes; false (nothing written) hands it to the string path. */
  private writeEventBytes(event: AtofEvent): boolean {
    const out = this.openLine();
    try {
      writeEventLine(out, event);
    } catch {
      this.abandonLine(out);
      return false;
    }
    this.deliverLine(out);
    return true;
  }

  /** Adds a subscriber; `changed` runs after it comes and after it goes. Returns the (idempotent) unsubscribe. */
  subscribe(callback: AtofSubscriber, changed: () => void): () => void {
    this.subscribers = [...this.subscribers, callback];
    changed();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const index = this.subscribers.indexOf(callback);
      if (index >= 0) this.subscribers = this.subscribers.filter((_, i) => i !== index);
      changed();
    };
  }

  /** Adds a listener; `readsMarks` false: it is given scope events only; `'turn'`: those and a turn's start and end. */
  addListener(listener: InternalListener, readsMarks: boolean | 'turn' = true): () => void {
    this.listeners = [...this.listeners, listener];
    if (readsMarks === true) this.markListeners = [...this.markListeners, listener];
    if (readsMarks !== false) this.turnMarkListeners = [...this.turnMarkListeners, listener];
    this.receiversChanged();
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
      this.markListeners = this.markListeners.filter((l) => l !== listener);
      this.turnMarkListeners = this.turnMarkListeners.filter((l) => l !== listener);
      this.receiversChanged();
    };
  }

  addLineSink(writer: AtofFileWriter): () => void {
    this.lineSinks = [...this.lineSinks, writer];
    this.writers.add(writer);
    this.receiversChanged();
    return () => {
      this.lineSinks = this.lineSinks.filter((w) => w !== writer);
      // Keep the writer's drop count in the totals once it leaves the set.
      if (this.writers.delete(writer)) this.counters.dropped += writer.droppedLines;
      this.receiversChanged();
    };
  }
}

function withoutAnnotation(profile: unknown): unknown {
  if (typeof profile !== 'object' || profile === null) return profile;
  const { tool_result_annotation: _dropped, ...rest } = profile as Record<string, unknown>;
  return rest;
}

/** A turn's start or end mark (the plugin's `pre_llm_call` and `on_session_end`), which the ATIF router reads. */
export function isTurnMark(name: unknown): boolean {
  return name === 'hermes.session.end' || name === 'hermes.turn.start';
}
