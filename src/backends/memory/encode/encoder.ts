/**
 * What the memory relay's two encoders read of a scope or span, and how
 * they hand their work back. An encoder is a leaf: it turns one call's
 * values into one event and returns it; the relay's core delivers it.
 * - `objects.ts` returns the event object (payloads copied once, keys
 *   sorted): every receiver that reads events takes it by reference, and
 *   the ATOF sinks serialize it once;
 * - `bytes.ts` writes the event's ATOF line straight from the caller's
 *   payloads into the line it is given, for the one configuration where
 *   nothing reads event objects (ATOF sinks alone), and says whether it
 *   could; on `false` the core hands the same call to the object encoder,
 *   which always succeeds.
 *
 * The records (`../records.ts`) implement these shapes; the encoders set a
 * record's start metadata (merged into its end's) and keep its start.
 *
 * @module
 */

import type { AtofCategory, AtofCategoryProfile, AtofScopeEvent } from '../../../formats/atof/types.ts';
import type { EncodedMetadata } from './metadata.ts';
import type { Json } from '../../../relay/contract.ts';

/** The envelope of a scope, LLM or tool event, and its start's converted metadata. */
export interface EncodedScope {
  readonly uuid: string;
  readonly parentUuid: string;
  readonly propagationRootUuid: string;
  readonly name: string;
  readonly startUs: number;
  /** The converted start metadata (merged into the end's), set by the encoder that writes the start. */
  startMetadata: EncodedMetadata;
}

/** A scope pushed with `pushScope`. */
export interface EncodedPushedScope extends EncodedScope {
  readonly category: AtofCategory;
  readonly attributes: string[];
  /** Keeps the start as the encoder wrote it: the event object, or the input's JSON text. */
  keepStart(start: AtofScopeEvent | string): void;
}

/** An LLM or tool span. */
export interface EncodedSpan extends EncodedScope {
  readonly kind: 'llm' | 'tool';
  readonly profile: AtofCategoryProfile;
  /** The top-level scope of its tree (its session's), where the object encoder keeps the last LLM request copied; null outside any scope. */
  readonly top: { lastRequest: Json | undefined } | null;
  /** A managed call's span: its request content, arguments and result are copied with their media whole (`copyPayload`'s `whole`). */
  readonly wholeMedia: boolean;
}
