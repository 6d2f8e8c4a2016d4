/**
 * What the in-memory relay remembers about an open (or closed) scope or span.
 *
 * The record object *is* the handle the caller gets back: no lookup table,
 * nothing to leak when a caller forgets a handle, and a handle from another
 * relay instance is recognised by its `owner`.
 *
 * @module
 */

import type { Json } from '../../relay/contract.ts';
import type { AtofCategory, AtofCategoryProfile, AtofScopeEvent } from '../../formats/atof/types.ts';
import { scopeEvent } from '../../formats/atof/build.ts';
import { formatTimestamp } from '../../shared/clock.ts';
import { EncodedMetadata } from './encode/metadata.ts';

/** A scope pushed with `pushScope`. */
export class ScopeRecord {
  ended = false;
  /** The top-level scope of this tree (itself when it has no parent). */
  readonly top: ScopeRecord;
  /** A top-level scope whose parent is another process's span (it continues a received propagation context). */
  remoteParent = false;
  /** The converted start metadata (merged into the end's), set by the encoder that writes the start. */
  startMetadata: EncodedMetadata = EncodedMetadata.NULL;
  /** The start event, or its converted input as JSON text when the start was written as a line only. */
  #start: AtofScopeEvent | string = 'null';
  /** A top-level scope: the content of the last LLM request copied in its tree (the object encoder's, `shareRepeats`). */
  lastRequest: Json | undefined = undefined;

  constructor(
    readonly owner: object,
    readonly uuid: string,
    readonly name: string,
    readonly category: AtofCategory,
    readonly parent: ScopeRecord | null,
    readonly parentUuid: string,
    readonly propagationRootUuid: string,
    /** True when the propagation root is an Agent scope (descendants inherit it instead of claiming it). */
    readonly agentRooted: boolean,
    readonly attributes: string[],
    readonly startUs: number,
  ) {
    this.top = parent === null ? this : parent.top;
  }

  /** Keeps the start as the encoder wrote it: the event object, or the input's JSON text. */
  keepStart(start: AtofScopeEvent | string): void {
    this.#start = start;
  }

  /**
   * The start event, kept so an ATIF exporter registered right after
   * `pushScope` returned still sees the scope's own start. A start written
   * as a line only is built the first time it is asked for, from the
   * record and the input's text (parsing native's text of a converted value
   * gives that value back; only the input is kept, not the whole line).
   */
  get start(): AtofScopeEvent {
    if (typeof this.#start === 'string') {
      const input = JSON.parse(this.#start) as Json;
      this.#start = scopeEvent('start', this.uuid, this.parentUuid, this.propagationRootUuid, this.name, this.category, this.attributes, null, input, this.startMetadata.json, formatTimestamp(this.startUs));
    }
    return this.#start;
  }
}

/** An LLM or tool span started with `llmStart`/`toolStart` (or a managed call). */
export class SpanRecord {
  ended = false;
  /** A managed call's span (`copyPayload`'s `whole`): set before its start is written. */
  wholeMedia = false;
  /** The converted start metadata, set by the encoder that writes the start. */
  startMetadata: EncodedMetadata = EncodedMetadata.NULL;

  constructor(
    readonly owner: object,
    readonly kind: 'llm' | 'tool',
    readonly uuid: string,
    readonly name: string,
    readonly parentUuid: string,
    readonly propagationRootUuid: string,
    readonly top: ScopeRecord | null,
    readonly profile: AtofCategoryProfile,
    readonly startUs: number,
  ) {}
}
