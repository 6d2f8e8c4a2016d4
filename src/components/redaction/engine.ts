/**
 * The `pii_redaction` component over the event stream: each ATOF event goes
 * through the configured policies, in priority order, before any receiver
 * sees it, so the ATOF file, trajectories, OTLP, streams and uploads all get
 * the same sanitized values (the relay's callers, and the host's own calls,
 * keep theirs).
 *
 * Which parts of an event a policy sanitizes, by surface (as native):
 * - `mark`: a mark's `data` and `metadata`;
 * - `input` / `output`: an LLM span's request (`data.content`,
 *   `data.headers`) / response and its metadata, and the `data` and
 *   `metadata` of every other scope's start / end (also sanitized when
 *   `tool_input` / `tool_output` is on);
 * - `tool_input` / `tool_output`: a tool span's arguments / result and
 *   result annotation, and its metadata.
 * Names and the typed profile fields (`model_name`, `tool_call_id`) are not
 * sanitized, except by the `trajectory_context` preset.
 *
 * Where native is defective this does what the configuration says:
 * selectors apply to LLM payloads as to any other (native replaces every
 * LLM request and response with `null` as soon as any selector is set,
 * even one meant for a tool's arguments).
 *
 * Fail closed: a policy that throws on a part (a pattern past its search
 * budget, say) leaves that part `null`, and the failure is reported.
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import { compareKeys, isJsonObject } from '../../shared/json.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import type { PiiRedactionSettings, RedactionPolicy } from '../../formats/plugins-toml/pii-redaction.ts';
import { CompiledBuiltin, RedactionPolicyError } from './builtin.ts';

export { RedactionPolicyError } from './builtin.ts';

/** Turns one event into what every receiver sees. Never throws. */
export type EventTransform = (event: AtofEvent) => AtofEvent;

export interface RedactorOptions {
  /** Told about each part a policy failed on (the part was cleared). */
  onFailure?: (what: string, error: unknown) => void;
  /** Search budget of a configured pattern, per text (default: `shared/rust-regex`'s). */
  stepBudget?: number;
}

interface CompiledPolicy {
  surfaces: RedactionPolicy['surfaces'];
  builtin: CompiledBuiltin;
  preset: boolean;
  replacement: string;
}

/**
 * Compiles the component's policies into one event transform. Throws
 * `RedactionPolicyError` for a policy native refuses at registration.
 */
export function createRedactor(settings: PiiRedactionSettings, options: RedactorOptions = {}): EventTransform {
  const policies: CompiledPolicy[] = settings.policies.map((policy) => {
    try {
      return {
        surfaces: policy.surfaces,
        builtin: new CompiledBuiltin(policy.builtin, options.stepBudget),
        preset: policy.builtin.preset !== null,
        replacement: policy.builtin.replacement ?? '[REDACTED]',
      };
    } catch (error) {
      if (error instanceof RedactionPolicyError) throw error;
      throw new RedactionPolicyError(error instanceof Error ? error.message : String(error));
    }
  });
  const onFailure = options.onFailure ?? (() => {});
  return (event) => {
    let out = event;
    for (const policy of policies) out = applyPolicy(policy, out, onFailure);
    return out;
  };
}

type Part = 'data' | 'metadata' | 'annotation';

/** A copy of `event` with `policy` applied to the parts its surfaces cover. */
function applyPolicy(policy: CompiledPolicy, event: AtofEvent, onFailure: (what: string, error: unknown) => void): AtofEvent {
  const s = policy.surfaces;
  const category = event.category;
  let parts: readonly Part[];
  if (event.kind === 'mark') {
    parts = s.mark ? ['data', 'metadata'] : [];
  } else {
    const start = event.scope_category === 'start';
    if (category === 'llm') parts = (start ? s.input : s.output) ? ['data', 'metadata'] : [];
    else if (category === 'tool') parts = (start ? s.tool_input : s.tool_output) ? (start ? ['data', 'metadata'] : ['data', 'annotation', 'metadata']) : [];
    else parts = (start ? s.input || s.tool_input : s.output || s.tool_output) ? ['data', 'metadata'] : [];
  }
  if (parts.length === 0) return event;
  const out = { ...event } as AtofEvent & { data: Json; metadata: Json; category_profile: JsonObject | null };
  for (const part of parts) {
    try {
      if (policy.preset) presetPart(policy, out, part);
      else sanitizePart(policy.builtin, out, part);
    } catch (error) {
      // Fail closed: the part is cleared rather than written as it was.
      clearPart(out, part);
      onFailure(`${event.kind === 'mark' ? 'mark' : `${category ?? 'scope'} ${event.scope_category}`} ${part}`, error);
    }
  }
  if (policy.preset && event.kind === 'scope') out.category_profile = presetProfile(policy, event, out.category_profile);
  return out;
}

type MutableEvent = AtofEvent & { data: Json; metadata: Json; category_profile: JsonObject | null };

function sanitizePart(builtin: CompiledBuiltin, event: MutableEvent, part: Part): void {
  if (part === 'metadata') {
    event.metadata = builtin.sanitize(event.metadata);
    return;
  }
  if (part === 'annotation') {
    const profile = event.category_profile;
    if (!isJsonObject(profile) || profile.tool_result_annotation === undefined) return;
    const annotation = builtin.sanitize(profile.tool_result_annotation);
    const copy: JsonObject = { ...profile };
    // A removed annotation leaves the profile without it, as native.
    if (annotation === null) delete copy.tool_result_annotation;
    else copy.tool_result_annotation = annotation;
    event.category_profile = copy;
    return;
  }
  if (event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'start' && isJsonObject(event.data) && 'content' in event.data) {
    // The request: its content from the content's root (`/messages/0/content`), its headers under `/headers`.
    const request = event.data;
    const headers = builtin.sanitize({ headers: (request.headers ?? {}) as Json });
    const out: JsonObject = { content: builtin.sanitize((request.content ?? null) as Json) };
    out.headers = isJsonObject(headers) && isJsonObject(headers.headers) ? headers.headers : {};
    event.data = out;
    return;
  }
  event.data = builtin.sanitize(event.data);
}

function clearPart(event: MutableEvent, part: Part): void {
  if (part === 'data') event.data = null;
  else if (part === 'metadata') event.metadata = null;
  else if (isJsonObject(event.category_profile)) {
    const copy: JsonObject = { ...event.category_profile };
    delete copy.tool_result_annotation;
    event.category_profile = copy;
  }
}

/**
 * The `trajectory_context` preset, as native 0.9.2 applies it to these
 * events: every `data` becomes `{}`, every `metadata` `{}` (a mark keeps
 * only its `nemo_relay.log.severity`).
 */
function presetPart(policy: CompiledPolicy, event: MutableEvent, part: Part): void {
  if (part === 'data') {
    event.data = {};
  } else if (part === 'metadata') {
    const severity = event.kind === 'mark' && isJsonObject(event.metadata) ? event.metadata['nemo_relay.log.severity'] : undefined;
    event.metadata = severity === undefined ? {} : { 'nemo_relay.log.severity': severity };
  } else if (isJsonObject(event.category_profile)) {
    const copy: JsonObject = { ...event.category_profile };
    delete copy.tool_result_annotation;
    event.category_profile = copy;
  }
  void policy;
}

/** Under the preset an LLM profile names its provider, and a tool call id is replaced. */
function presetProfile(policy: CompiledPolicy, event: AtofEvent, profile: JsonObject | null): JsonObject | null {
  if (event.kind !== 'scope' || !isJsonObject(profile)) return profile;
  if (event.category === 'llm') return sortedKeys({ ...profile, 'gen_ai.provider.name': event.name });
  if (event.category === 'tool' && typeof profile.tool_call_id === 'string') return sortedKeys({ ...profile, tool_call_id: policy.replacement });
  return profile;
}

/** Native writes every object with its keys sorted. */
function sortedKeys(object: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(object).sort(compareKeys)) out[key] = object[key]!;
  return out;
}
