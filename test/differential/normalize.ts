/**
 * Making two runs comparable: uuids and clocks differ on every run, nothing
 * else may. Every uuid becomes `<uuid-N>`, numbered by first appearance in
 * the document (so parent links, pairing and roots are still compared), and
 * every clock reading becomes a placeholder.
 *
 * Two forms: structural (for readable deep-equal diffs) and textual (for
 * byte-level equality: key order and number formatting).
 */

import type { Json } from '../../src/relay/contract.ts';
import { defineKey, jsonEqual, MEDIA_LEFT_OUT, toJson } from '../../src/shared/json.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Keys whose values are clock readings: RFC 3339 strings, or epoch seconds in ATIF invocations. */
const CLOCK_KEYS = new Set(['timestamp', 'start_timestamp', 'end_timestamp']);

/** Numbers uuids by first appearance; one instance per document. */
export class UuidLabels {
  readonly #labels = new Map<string, string>();

  label(uuid: string): string {
    const key = uuid.toLowerCase();
    let label = this.#labels.get(key);
    if (label === undefined) {
      label = `<uuid-${this.#labels.size}>`;
      this.#labels.set(key, label);
    }
    return label;
  }

  /** Replaces every uuid inside `text`. */
  text(text: string): string {
    // Most strings (keys, names, short values) are shorter than a uuid: no scan for them.
    return text.length < 36 ? text : text.replace(UUID, (uuid) => this.label(uuid));
  }

  get size(): number {
    return this.#labels.size;
  }
}

export interface NormalizeOptions {
  /** Keys dropped wherever they appear (a documented, known difference). */
  drop?: readonly string[];
}

/**
 * A copy of `value` with uuids labelled and clock readings replaced, walking
 * keys in document order so labels follow first appearance.
 */
export function normalize(value: unknown, labels = new UuidLabels(), options: NormalizeOptions = {}): Json {
  const drop = new Set(options.drop ?? []);
  const walk = (node: unknown, key: string | null): Json => {
    if (key !== null && CLOCK_KEYS.has(key) && (typeof node === 'string' || typeof node === 'number')) return `<${key}>`;
    if (typeof node === 'string') return labels.text(node);
    if (Array.isArray(node)) return node.map((item) => walk(item, null));
    if (node !== null && typeof node === 'object') {
      const out: { [key: string]: Json } = {};
      for (const [childKey, child] of Object.entries(node)) {
        if (drop.has(childKey)) continue;
        // defineKey: a `__proto__` key is data in a payload, and an assignment would drop it.
        defineKey(out, labels.text(childKey), walk(child, childKey));
      }
      return out;
    }
    return node as Json;
  };
  return walk(value, null);
}

/** The events of one ATOF file, normalized with one label table for the whole file. */
export function normalizeEvents(events: readonly unknown[], options: NormalizeOptions = {}): Json[] {
  const labels = new UuidLabels();
  return events.map((event) => normalize(event, labels, options));
}

const CLOCK_TEXT = /"(timestamp|start_timestamp|end_timestamp)":(\s*)(?:"[^"]*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)/g;

/**
 * A JSON text with uuids labelled and clock readings replaced, character for
 * character otherwise: what two writers of "the same file" must agree on.
 * Lines of one JSONL file share one label table.
 */
export function normalizeText(text: string, labels = new UuidLabels()): string {
  return labels.text(text.replace(CLOCK_TEXT, (_match, key: string, space: string) => `"${key}":${space}"<${key}>"`));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a document read back from JSON
type Doc = Omit<AtifTrajectory, 'steps'> & { steps: Array<Omit<AtifTrajectory['steps'][number], 'extra'> & { extra?: any }> };

/**
 * Whether two user steps say the same: equal, or equal with their media left out. An observed attempt's request
 * is recorded with its media left out and a managed retry's whole (docs/contributing/payload-journey.md, "Where
 * media are left out"), so the message native repeats before such a retry holds the image the first one left out.
 */
function sameMessage(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const observed = (message: unknown): unknown => {
    if (typeof message !== 'string') return toJson(message, MEDIA_LEFT_OUT);
    try {
      return toJson(JSON.parse(message), MEDIA_LEFT_OUT);
    } catch {
      return toJson(message, MEDIA_LEFT_OUT);
    }
  };
  return jsonEqual(observed(a), observed(b));
}

/**
 * A trajectory of native's own ATIF exporter as memory writes it (README,
 * differences between the backends): a failed LLM attempt's step says
 * `invocation.status: "failed"` (native: "completed"), and the user step
 * native repeats before the retry of a failed attempt is not there (its
 * request is the retry step's `llm_request`).
 */
export function attemptsAsMemory<T>(input: T): T {
  const doc = input as unknown as Doc;
  if (!Array.isArray(doc?.steps)) return input;
  const steps: Doc['steps'] = [];
  const all = doc.steps;
  for (let i = 0; i < all.length; i++) {
    const step = all[i]!;
    if (step.source === 'agent' && step.extra?.llm_response?.error !== undefined) step.extra.invocation.status = 'failed';
    const previous = steps.at(-1);
    const next = all[i + 1];
    // A retry that failed managed (no agent step: its response is null) has its repeated user step too.
    const lastUser = [...steps].reverse().find((s) => s.source === 'user');
    const repeatsUser = step.source === 'user' && previous?.extra?.invocation?.status === 'failed' && lastUser !== undefined && sameMessage(lastUser.message, step.message);
    if (repeatsUser) {
      if (next?.source === 'agent') next.extra = { ...next.extra, llm_request: step.extra?.llm_request };
      continue;
    }
    steps.push(step);
  }
  steps.forEach((step, index) => (step.step_id = index + 1));
  const out: Doc = { ...doc, steps, final_metrics: { ...doc.final_metrics!, total_steps: steps.length } };
  if (doc.subagent_trajectories !== undefined) out.subagent_trajectories = doc.subagent_trajectories.map((child) => attemptsAsMemory(child as Doc));
  return out as unknown as T;
}


// `otel_status_code` and `error_type`: the same event from a stream sink whose `field_name_policy` is `replace_dots`.
const ERROR_STATUS = /"otel([._])status_code":( ?)"ERROR"/;

/**
 * The ATOF lines of memory as native writes them for an LLM call closed by
 * `api_request_error` (docs/backends/memory-and-native.md, "An LLM call
 * closed by api_request_error"): memory ends it with `otel.status_code:
 * "ERROR"`, native forces `"OK"`. Only such ends change: a failed tool's end
 * and a managed call's (`exception.type`) say ERROR on both.
 */
export function failedLlmEndsAsNative(lines: readonly string[]): string[] {
  return lines.map((line) => {
    if (!ERROR_STATUS.test(line)) return line;
    const event = JSON.parse(line) as { category?: string; scope_category?: string; metadata?: Record<string, unknown> | null };
    if (event.category !== 'llm' || event.scope_category !== 'end' || (event.metadata?.['error.type'] ?? event.metadata?.['error_type']) === undefined) return line;
    // A managed call whose host call threw (its end names the exception) ends as an error on both.
    if (event.metadata?.['exception.type'] !== undefined) return line;
    return line.replace(ERROR_STATUS, '"otel$1status_code":$2"OK"');
  });
}
