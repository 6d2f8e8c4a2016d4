/**
 * A trajectory in native's text form: numbers typed per field the way serde
 * writes them, compact for the exporter style, pretty with sorted keys for
 * the plugin-host style.
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { AtifStep, AtifTrajectory } from './types.ts';
import { sameJson } from '../native-text/same.ts';
import { sortJson } from '../native-text/keys.ts';
import { ArrayTextAhead, stringifiedIfExact, toRustJson, writeRustJsonBytes, type FieldTypes, type NumberFieldType } from '../native-text/write.ts';
import { encoded, giveBack, takeBuilder, type LineBuilder } from '../../shared/utf8-builder.ts';
import { SliceClock, type Slices } from '../../shared/slices.ts';

/**
 * `exporter`: what native's manual `AtifExporter.exportJson()` returns;
 * `plugin-host`: the file native's observability plugin writes per root scope.
 */
export type AtifBuilderStyle = 'exporter' | 'plugin-host';

/**
 * How native types the numbers of a trajectory: `f64` (written `1.0`,
 * never `1`) for costs, log probabilities and invocation timestamps;
 * `integer` (plain at any size) for step ids and token counts; anything
 * else is a payload number. Embedded `subagent_trajectories` are typed
 * like the document itself.
 */
const TRAJECTORY_FIELD_TYPES: FieldTypes = (() => {
  const invocation: FieldTypes = { fields: { start_timestamp: 'f64', end_timestamp: 'f64' } };
  const step: FieldTypes = {
    fields: {
      step_id: 'integer',
      llm_call_count: 'integer',
      metrics: {
        fields: {
          prompt_tokens: 'integer',
          completion_tokens: 'integer',
          cached_tokens: 'integer',
          cost_usd: 'f64',
          prompt_token_ids: { items: 'integer' },
          completion_token_ids: { items: 'integer' },
          logprobs: { items: 'f64' },
        },
      },
      extra: { fields: { invocation, tool_invocations: { items: invocation } } },
    },
  };
  const fields: { [key: string]: FieldTypes | NumberFieldType } = {
    steps: { items: step },
    final_metrics: {
      fields: {
        total_prompt_tokens: 'integer',
        total_completion_tokens: 'integer',
        total_cached_tokens: 'integer',
        total_cost_usd: 'f64',
        total_steps: 'integer',
      },
    },
  };
  const trajectory: FieldTypes = { fields };
  fields.subagent_trajectories = { items: trajectory };
  return trajectory;
})();

/**
 * Serializes a trajectory in native's text form for the given style.
 * `plain`: the payloads its converter found written exactly by
 * `JSON.stringify` (`sortPayload`), which the writer's check skips.
 */
export function serializeTrajectory(trajectory: AtifTrajectory, style: AtifBuilderStyle = 'exporter', plain?: ReadonlySet<object>): string {
  return toRustJson(trajectory, { pretty: style === 'plugin-host', fieldTypes: TRAJECTORY_FIELD_TYPES, plain });
}

const TOP_LEVEL_TYPES = TRAJECTORY_FIELD_TYPES.fields ?? {};
const STEP_TYPES = (TOP_LEVEL_TYPES.steps as FieldTypes).items as FieldTypes;

/**
 * The `plugin-host` text of `trajectory` with `extra` (keys sorted) plus
 * `extra.observed_events` = `events`, as `serializeTrajectory` writes the
 * sorted document, in slices: the top-level steps and the observed events
 * (the bulk of a long session's text) are written a few at a time
 * (`SLICE_UNITS` per slice), ahead of the rest, which is written last.
 */
export function* pluginHostTextInSlices(trajectory: AtifTrajectory, extra: JsonObject, events: readonly Json[], plain?: ReadonlySet<object>): Slices<string> {
  // Where the two arrays stand in the pretty document: `steps` at the root, `observed_events` in the root's `extra`.
  const observed = new ArrayTextAhead('\n    ');
  trajectory.extra = { ...extra, observed_events: observed.placeholder };
  const document = sortJson(trajectory as unknown as Json) as unknown as AtifTrajectory;
  yield;
  const clock = new SliceClock();
  const steps = new ArrayTextAhead('\n  ', { fieldTypes: STEP_TYPES, plain });
  for (const step of document.steps) {
    steps.add(step as unknown as Json);
    if (clock.tick()) yield;
  }
  document.steps = steps.placeholder as unknown as AtifStep[];
  for (const event of events) {
    observed.add(sortJson(event));
    if (clock.tick()) yield;
  }
  yield;
  return serializeTrajectory(document, 'plugin-host', plain);
}

/**
 * One builder's `exporter`-style text as UTF-8 bytes, written build after
 * build: a step that came out the same as the step at its position in the
 * previous build (`sameJson`, which stops at the payload objects both
 * share) takes the bytes written for it then. A session's partial writes
 * (one per turn) and its final one thus write each step about once, not
 * once per write.
 *
 * The bytes are the UTF-8 of `serializeTrajectory(trajectory, 'exporter',
 * plain)`: compact JSON is the concatenation of its members' texts, and
 * each member is written by the same rules with the same field types
 * (`writeRustJsonBytes`).
 *
 * A build is written into the process's reusable byte buffer (the one ATOF
 * lines are written into; a build is synchronous) and copied out at its
 * exact size: the caller may keep the copy (a file write kept for a retry),
 * and the next build reads its steps' bytes from it, never writing into it.
 * A first build that `JSON.stringify` writes whole is encoded from its text
 * at its exact size instead, without the buffer.
 */
export class ExporterBytesCache {
  #steps: readonly AtifStep[] | undefined;
  /** The previous build's bytes, and where each of its steps starts and ends in them. */
  #bytes: Uint8Array | undefined;
  #starts: number[] = [];
  #ends: number[] = [];

  /** The UTF-8 of `serializeTrajectory(trajectory, 'exporter', plain)`, reusing the bytes of unchanged steps. */
  write(trajectory: AtifTrajectory, plain?: ReadonlySet<object>): Uint8Array {
    if (this.#steps === undefined) {
      // Nothing to reuse yet: when nothing in the document needs the exact writer (the usual case) its text is
      // one engine call, encoded once at its exact size. Through the byte buffer it was encoded there and then
      // copied out, one more pass over the whole text and one more allocation of its size. Its steps are kept;
      // their bytes are placed when a later build repeats them.
      const text = stringifiedIfExact(trajectory as unknown as Json, TRAJECTORY_FIELD_TYPES, plain);
      if (text !== undefined) {
        const bytes = encoded(text);
        this.#steps = trajectory.steps;
        this.#bytes = bytes;
        this.#starts = [];
        this.#ends = [];
        return bytes;
      }
    }
    const out = takeBuilder();
    try {
      this.#write(out, trajectory, plain);
      const bytes = out.bytes.slice(0, out.length);
      this.#bytes = bytes;
      return bytes;
    } catch (error) {
      // Steps' places refer to a buffer that is not kept: the next build writes every step.
      this.clear();
      throw error;
    } finally {
      giveBack(out);
    }
  }

  /** Forgets the previous build (the builder was cleared). */
  clear(): void {
    this.#steps = undefined;
    this.#bytes = undefined;
    this.#starts = [];
    this.#ends = [];
  }

  #write(out: LineBuilder, trajectory: AtifTrajectory, plain: ReadonlySet<object> | undefined): void {
    if (this.#steps === undefined) {
      // Nothing to reuse yet, and a number or key somewhere needs the exact writer: the whole document at once,
      // the parts the engine writes exactly handed to it.
      writeRustJsonBytes(out, trajectory, { fieldTypes: TRAJECTORY_FIELD_TYPES, plain });
      this.#steps = trajectory.steps;
      this.#starts = [];
      this.#ends = [];
      return;
    }
    out.byte(0x7b); // {
    let first = true;
    for (const key in trajectory) {
      const value = (trajectory as unknown as Record<string, Json | undefined>)[key];
      if (value === undefined) continue;
      if (!first) out.byte(0x2c); // ,
      first = false;
      out.jsonStringAsGiven(key);
      out.byte(0x3a); // :
      if (key === 'steps' && Array.isArray(value)) this.#writeSteps(out, value as unknown as AtifStep[], plain);
      else writeRustJsonBytes(out, value, { fieldTypes: Object.prototype.hasOwnProperty.call(TOP_LEVEL_TYPES, key) ? (TOP_LEVEL_TYPES[key] as FieldTypes) : undefined, plain });
    }
    out.byte(0x7d); // }
  }

  #writeSteps(out: LineBuilder, steps: readonly AtifStep[], plain: ReadonlySet<object> | undefined): void {
    const previous = this.#steps ?? [];
    const previousBytes = this.#bytes;
    const previousStarts = this.#starts;
    const previousEnds = this.#ends;
    const starts: number[] = new Array(steps.length);
    const ends: number[] = new Array(steps.length);
    out.byte(0x5b); // [
    for (let i = 0; i < steps.length; i++) {
      if (i > 0) out.byte(0x2c); // ,
      const step = steps[i] as AtifStep;
      const before = previous[i];
      starts[i] = out.length;
      if (previousBytes !== undefined && before !== undefined && i < previousStarts.length && sameJson(before as unknown as Json, step as unknown as Json)) {
        out.raw(previousBytes.subarray(previousStarts[i], previousEnds[i]));
      } else {
        writeRustJsonBytes(out, step, { fieldTypes: STEP_TYPES, plain });
      }
      ends[i] = out.length;
    }
    out.byte(0x5d); // ]
    this.#steps = steps;
    this.#starts = starts;
    this.#ends = ends;
  }
}
