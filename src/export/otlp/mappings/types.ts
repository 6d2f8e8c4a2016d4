/**
 * What a projection type (`full`, `gen_ai`, `openinference`) decides about
 * one scope's span: its name, kind and attributes, and how a mark appears.
 * Ids, times, parents and status are the same for every type and are set by
 * the assembler.
 *
 * @module
 */

import type { AtofMarkEvent, AtofScopeEvent } from '../../../formats/atof/types.ts';
import type { Attributes } from '../model.ts';

/** A finished scope: its start and end events, and whether it is its trace's root span. */
export interface FinishedScope {
  start: AtofScopeEvent;
  end: AtofScopeEvent;
  isRoot: boolean;
  /** An LLM call's cost: reported by its response, or priced by the `pricing` component. */
  cost?: SpanCost;
}

/** A cost as the span attributes carry it. */
export interface SpanCost {
  total: number;
  currency: string;
}

/** The cost of a finished LLM scope, or undefined. */
export type CostOf = (start: AtofScopeEvent, end: AtofScopeEvent) => SpanCost | undefined;

export interface SpanShape {
  name: string;
  kind: number;
  attributes: Attributes;
}

export interface Projection {
  span(scope: FinishedScope): SpanShape;
  /** A mark's span-event attributes, or null when this type drops marks. */
  markEvent(mark: AtofMarkEvent): Attributes | null;
  /** The zero-length `mark:<name>` span for `mark_projection = "tool"`, or null when this type drops marks (native sends none). */
  markSpan: ((mark: AtofMarkEvent) => SpanShape) | null;
  /** Whether an endpoint's `attribute_mappings` apply to this type's spans (native ignores them on `gen_ai`). */
  mapsAttributes: boolean;
}
