/**
 * ATOF 0.1 event records, as the native NeMo Relay runtime writes them.
 *
 * One JSON object per JSONL line. The native runtime serializes every object
 * with its keys sorted, including the opaque `data` and `metadata` payloads,
 * and the in-memory relay does the same so the two files are
 * indistinguishable.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';

/** The ATOF scope categories a scope can be pushed with, in the spec's order. */
export const SCOPE_CATEGORIES = [
  'agent',
  'function',
  'tool',
  'llm',
  'retriever',
  'embedder',
  'reranker',
  'guardrail',
  'evaluator',
  'custom',
  'unknown',
] as const;

/** An ATOF scope category: `agent`, `function`, `llm`, `tool`, `retriever`, `embedder`, `reranker`, `guardrail`, `evaluator`, `custom` or `unknown`. */
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];

const SCOPE_CATEGORY_SET: ReadonlySet<unknown> = new Set(SCOPE_CATEGORIES);

/** Whether a value (from a payload, a file) is one of the closed set of ATOF categories. */
export function isScopeCategory(value: unknown): value is ScopeCategory {
  return SCOPE_CATEGORY_SET.has(value);
}

/** How an ATOF file sink opens its file. */
export type AtofMode = 'append' | 'overwrite';


/** The ATOF version this library writes and validates. */
export const ATOF_VERSION = '0.1';

/** What an ATOF line is: a `scope` event (start or end) or a `mark`. */
export type AtofKind = 'scope' | 'mark';
/** Whether a scope event starts or ends its scope. */
export type AtofScopeCategory = 'start' | 'end';

/** The closed set of ATOF categories; the contract's `ScopeCategory`. */
export type AtofCategory = ScopeCategory;

/** `category_profile`: `model_name` (llm), `tool_call_id`/`tool_result_annotation` (tool), `subtype` (custom). */
export type AtofCategoryProfile = { [key: string]: Json };

/** The envelope fields every ATOF line has. */
export interface AtofEventBase {
  /** The ATOF spec version the line follows (`ATOF_VERSION` for what this library writes). */
  atof_version: string;
  /** Whether the line is a scope event or a mark. */
  kind: AtofKind;
  /** The event's id; the start and end of one scope share it. */
  uuid: string;
  /** Never null in practice: a top-level scope's parent is its stack's implicit root. */
  parent_uuid: string | null;
  /**
   * Not in the ATOF 0.1 text, but always written by native: the uuid of the
   * top-level Agent scope of this event's tree (equal to `uuid` on that
   * scope's own events), or the implicit root's uuid when there is none.
   */
  propagation_root_uuid?: string;
  /** RFC 3339 (`+00:00` offset) or integer epoch microseconds. */
  timestamp: string | number;
  /** The scope, provider or tool name. */
  name: string;
  /** The caller's payload (a scope's input on start, its output on end), opaque to ATOF. */
  data: Json;
  /** The schema `data` follows, when the emitter named one. */
  data_schema: { name: string; version: string } | null;
  /** The caller's metadata; a scope's end carries its start metadata merged with the end's. */
  metadata: Json;
  /** What kind of work the event is about (`llm`, `tool`, `agent`, ...); `null` when unset, as on most marks. */
  category: AtofCategory | null;
  /** Category-specific details (model name, tool call id, custom subtype); `null` when there are none. */
  category_profile: AtofCategoryProfile | null;
}

/** The start or end of a scope. */
export interface AtofScopeEvent extends AtofEventBase {
  /** Always `scope`. */
  kind: 'scope';
  /** `start` or `end`. */
  scope_category: AtofScopeCategory;
  /** Sorted, de-duplicated lowercase flags; `[]` when none. */
  attributes: string[];
  /** The scope's category. */
  category: AtofCategory;
}

/** A point event under a scope. */
export interface AtofMarkEvent extends AtofEventBase {
  /** Always `mark`. */
  kind: 'mark';
}

/** One ATOF line: a scope event or a mark. */
export type AtofEvent = AtofScopeEvent | AtofMarkEvent;

/** A subscriber receiving every event a backend produces, in emission order. */
export type AtofSubscriber = (event: AtofEvent) => void;
