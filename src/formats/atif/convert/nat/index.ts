/**
 * The `nat` profile: ATOF events to ATIF the way NVIDIA NeMo Agent
 * Toolkit's reference converter maps them (the mapping NeMo Relay's ATOF
 * spec names as normative), where the default profile follows what native's
 * exporter writes. The README lists every difference with its reason.
 *
 * Outline (after sorting by timestamp, stably):
 * - agent scopes give no step; the trajectory is named after the root;
 * - an LLM start gives a `user` or `system` step per input message of that
 *   role not yet seen under the same parent; an LLM end gives one `agent`
 *   step with its text and tool calls, read per `data_schema`;
 * - a tool end's result becomes an observation on the agent step that
 *   issued its call (at the next LLM event or the end), else a `system` step;
 * - a mark gives a `system` step with its data; a scope of any other
 *   category gives a `system` step at its end, except a root, whose start
 *   and end are the user's question and the agent's answer.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../../shared/json.ts';
import { asObject } from '../../../../shared/json.ts';
import type { AtofEvent } from '../../../atof/types.ts';
import { isScopeCategory } from '../../../atof/types.ts';
import { compareInstants, parseInstant, rfc3339Of, type Instant } from '../../../instant.ts';
import { canonicalJson, toRustJson, type FieldTypes } from '../../../native-text.ts';
import { ATIF_SCHEMA_VERSION, type AtifStep, type AtifTrajectory } from '../../types.ts';
import { llmExtractor } from './extractors.ts';

interface NatEvent {
  raw: AtofEvent;
  instant: Instant;
  category: string | undefined;
  profile: JsonObject | undefined;
  data: Json | undefined;
}

/** Step keys in the order the reference converter's (Harbor's) Step model writes them. */
const STEP_ORDER = ['step_id', 'timestamp', 'source', 'model_name', 'message', 'tool_calls', 'observation', 'extra', 'llm_call_count'] as const;

/** Python's `json.dumps(value, separators=(",", ":"))`: compact, non-ASCII escaped. */
function compactJson(value: Json): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A tool result as text: `data.result` when present (text as is), else the whole data. */
function toolResultText(data: Json | undefined): string | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string') return data;
  const object = asObject(data);
  const result = object !== undefined && 'result' in object ? object.result : data;
  return typeof result === 'string' ? result : compactJson(result as Json);
}

/** An opaque payload as message text: a lone string field is the text, anything else its JSON. */
function opaqueText(data: Json | undefined): string {
  if (typeof data === 'string') return data;
  const object = asObject(data);
  const values = object === undefined ? [] : Object.values(object);
  if (values.length === 1 && typeof values[0] === 'string') return values[0];
  return data === undefined || data === null ? '' : compactJson(data);
}

function toNatEvents(events: readonly AtofEvent[]): NatEvent[] {
  let previous: Instant = { seconds: 0, nanos: 0 };
  const out = events.map((raw, index) => {
    const instant = parseInstant(raw.timestamp) ?? previous;
    previous = instant;
    const profile = asObject(raw.category_profile);
    let category = typeof raw.category === 'string' ? raw.category : undefined;
    // A category this reader does not know, with a tool_call_id, is a tool by every other sign.
    if (category !== undefined && !isScopeCategory(category) && typeof profile?.tool_call_id === 'string') category = 'tool';
    return { event: { raw, instant, category, profile, data: raw.data === null ? undefined : (raw.data as Json) }, index };
  });
  // Consumers MUST sort by timestamp before processing (stable for ties).
  out.sort((a, b) => compareInstants(a.event.instant, b.event.instant) || a.index - b.index);
  return out.map((entry) => entry.event);
}

function epochSeconds(instant: Instant): number {
  return Math.round((instant.seconds + instant.nanos / 1e9) * 1000) / 1000;
}

function timestampText(event: NatEvent): string {
  const value = event.raw.timestamp;
  return typeof value === 'string' ? value : rfc3339Of(value, event.instant);
}

class NatConverter {
  readonly steps: AtifStep[] = [];
  readonly #names = new Map<string, string>();
  readonly #starts = new Map<string, NatEvent>();
  readonly #seenInputs = new Set<string>();
  /** The agent step (and the call) that issued each tool_call_id, latest first. */
  readonly #issuedBy = new Map<string, AtifStep>();
  #pending: { id: string | undefined; content: string | undefined; event: NatEvent }[] = [];

  constructor(
    events: readonly NatEvent[],
    private readonly rootUuid: string | undefined,
  ) {
    for (const event of events) {
      if (typeof event.raw.name === 'string') this.#names.set(event.raw.uuid, event.raw.name);
      if (event.raw.kind === 'scope' && event.raw.scope_category === 'start') this.#starts.set(event.raw.uuid, event);
    }
  }

  handle(event: NatEvent): void {
    const raw = event.raw;
    if (raw.kind === 'mark') {
      if (event.data === undefined) return;
      this.flush();
      this.steps.push(step({ timestamp: timestampText(event), source: 'system', message: typeof event.data === 'string' ? event.data : compactJson(event.data) }));
      return;
    }
    if (raw.kind !== 'scope') return;
    const phase = raw.scope_category;
    switch (event.category) {
      case 'agent':
        return;
      case 'llm':
        if (phase === 'start') this.llmStart(event);
        else this.llmEnd(event);
        return;
      case 'tool':
      case 'function':
        if (phase === 'end') this.#pending.push({ id: stringOf(event.profile?.tool_call_id), content: toolResultText(event.data), event });
        return;
      default:
        this.opaque(event);
    }
  }

  private llmStart(event: NatEvent): void {
    this.flush();
    for (const message of llmExtractor(event.raw.data_schema).inputMessages(event.data)) {
      if (message.role !== 'user' && message.role !== 'system') continue;
      const key = `${event.raw.parent_uuid ?? ''}\u0000${message.role}\u0000${canonicalJson(message.content)}`;
      if (this.#seenInputs.has(key)) continue;
      this.#seenInputs.add(key);
      this.steps.push(step({ timestamp: timestampText(event), source: message.role, message: message.content }));
    }
  }

  private llmEnd(event: NatEvent): void {
    this.flush();
    const { text, toolCalls } = llmExtractor(event.raw.data_schema).output(event.data);
    const extra: JsonObject = { ancestry: this.ancestry(event), invocation: this.invocation(event, event.raw.uuid) };
    if (asObject(event.raw.data_schema) !== undefined) extra.data_schema = event.raw.data_schema as Json;
    const agent = step({
      timestamp: timestampText(event),
      source: 'agent',
      model_name: stringOf(event.profile?.model_name) ?? event.raw.name,
      message: text,
      extra,
      llm_call_count: 1,
    });
    if (toolCalls.length > 0) agent.tool_calls = toolCalls.map((call) => ({ ...call }));
    for (const call of toolCalls) this.#issuedBy.set(call.tool_call_id, agent);
    this.steps.push(agent);
  }

  private opaque(event: NatEvent): void {
    const raw = event.raw;
    const isRoot = raw.uuid === this.rootUuid;
    if ((raw as { scope_category?: unknown }).scope_category === 'start') {
      if (!isRoot) return;
      this.flush();
      const extra = { ancestry: this.ancestry(event), invocation: this.invocation(event, raw.uuid, event) };
      this.steps.push(step({ timestamp: timestampText(event), source: 'user', message: opaqueText(event.data), extra }));
      return;
    }
    this.flush();
    const extra = { ancestry: this.ancestry(event), invocation: this.invocation(event, raw.uuid) };
    const message = isRoot ? opaqueText(event.data) : event.data === undefined ? '' : compactJson(event.data);
    this.steps.push(step({ timestamp: timestampText(event), source: isRoot ? 'agent' : 'system', message, extra }));
  }

  /** Attaches buffered tool results to the agent steps that issued their calls; the rest become a system step. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const orphans: JsonObject[] = [];
    let orphanTimestamp: string | undefined;
    for (const { id, content, event } of this.#pending) {
      const result: JsonObject = {};
      if (id !== undefined) result.source_call_id = id;
      if (content !== undefined) result.content = content;
      const owner = id === undefined ? undefined : this.#issuedBy.get(id);
      if (owner === undefined) {
        orphanTimestamp ??= timestampText(event);
        orphans.push(result);
        continue;
      }
      owner.observation ??= { results: [] };
      owner.observation.results.push(result);
      const call = owner.tool_calls?.find((candidate) => candidate.tool_call_id === id);
      if (call !== undefined) call.extra = { ancestry: this.ancestry(event), invocation: this.invocation(event, id as string) } as unknown as Json;
    }
    this.#pending = [];
    if (orphans.length > 0) {
      this.steps.push(step({ timestamp: orphanTimestamp, source: 'system', message: '', observation: { results: orphans } }));
    }
  }

  private ancestry(event: NatEvent): JsonObject {
    const parent = event.raw.parent_uuid ?? null;
    return {
      function_id: event.raw.uuid,
      function_name: event.raw.name,
      parent_id: parent,
      parent_name: parent === null ? null : (this.#names.get(parent) ?? null),
    };
  }

  /** `invocation` of a scope: its start and end in epoch seconds (ms precision); a start alone ends where it starts. */
  private invocation(event: NatEvent, invocationId: string, endAt?: NatEvent): JsonObject {
    const start = this.#starts.get(event.raw.uuid);
    const invocation: JsonObject = { invocation_id: invocationId, framework: 'nat', status: 'completed' };
    if (start !== undefined) invocation.start_timestamp = epochSeconds(start.instant);
    invocation.end_timestamp = epochSeconds((endAt ?? event).instant);
    return invocation;
  }
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function step(fields: Omit<Partial<AtifStep>, 'source'> & { source: string; message: Json }): AtifStep {
  return { step_id: 0, ...fields } as AtifStep;
}

function ordered(value: AtifStep): AtifStep {
  const out: Record<string, unknown> = {};
  for (const key of STEP_ORDER) if (value[key] !== undefined) out[key] = value[key];
  return out as unknown as AtifStep;
}

/** The root the trajectory is named after: the first agent scope without a parent in the stream, else the first root scope. */
function rootOf(events: readonly NatEvent[]): NatEvent | undefined {
  const uuids = new Set(events.map((event) => event.raw.uuid));
  const roots = events.filter(
    (event) =>
      event.raw.kind === 'scope' &&
      event.raw.scope_category === 'start' &&
      (event.raw.parent_uuid === null || !uuids.has(event.raw.parent_uuid)),
  );
  return roots.find((event) => event.category === 'agent') ?? roots[0];
}

/** Converts one session's ATOF events (any order) with the reference converter's mapping. */
export function convertNatEvents(events: readonly AtofEvent[]): AtifTrajectory {
  const sorted = toNatEvents(events);
  const root = rootOf(sorted);
  const converter = new NatConverter(sorted, root?.raw.uuid);
  for (const event of sorted) converter.handle(event);
  converter.flush();
  const steps = converter.steps.map((value, index) => ordered({ ...value, step_id: index + 1 }));
  const firstLlm = sorted.find((event) => event.category === 'llm' && event.raw.kind === 'scope');
  const model = firstLlm === undefined ? undefined : (stringOf(firstLlm.profile?.model_name) ?? firstLlm.raw.name);
  const agent: AtifTrajectory['agent'] = { name: root?.raw.name ?? 'unknown', version: '1.0.0' };
  if (model !== undefined) agent.model_name = model;
  return { schema_version: ATIF_SCHEMA_VERSION, session_id: root?.raw.uuid ?? 'atof-session', agent, steps } as AtifTrajectory;
}

const INVOCATION: FieldTypes = { fields: { start_timestamp: 'f64', end_timestamp: 'f64' } };
const WITH_INVOCATION: FieldTypes = { fields: { extra: { fields: { invocation: INVOCATION } } } };
const NAT_FIELD_TYPES: FieldTypes = {
  fields: { steps: { items: { fields: { extra: { fields: { invocation: INVOCATION } }, tool_calls: { items: WITH_INVOCATION } } } } },
};

/** The trajectory as the reference converter writes it: two-space indent, invocation stamps as floats (`1767225600.0`). */
export function serializeNatTrajectory(trajectory: AtifTrajectory): string {
  return `${toRustJson(trajectory, { pretty: true, fieldTypes: NAT_FIELD_TYPES })}\n`;
}
