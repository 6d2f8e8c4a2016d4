/**
 * ATIF validation after Harbor's trajectory models (the reference; NVIDIA's
 * NAT port agrees):
 * - every object forbids fields its model does not define;
 * - `schema_version` is a known version, `ATIF-v1.7` when absent (Harbor's
 *   default), on the root and on each embedded subagent; `session_id` is
 *   optional (the v1.7 model has no requirement for any version);
 * - `steps` has at least one step; `step_id`s run 1..n (an integer string
 *   such as `"1"` is coerced, as Pydantic's lax mode does);
 * - agent-only fields (`model_name`, `reasoning_effort`,
 *   `reasoning_content`, `tool_calls`, `metrics`) never sit on user or
 *   system steps (an `observation` may sit on any step);
 * - timestamps are what Python's `datetime.fromisoformat` reads once `Z`
 *   is replaced (so a lowercase `z` is not);
 * - token counts are integers (no lower bound; only `total_steps >= 0`),
 *   costs finite numbers; tool `arguments` are objects;
 * - `source_call_id` names a `tool_call_id` of the same step;
 * - embedded subagent trajectories have unique `trajectory_id`s, and every
 *   subagent ref has a `trajectory_id` or `trajectory_path`;
 * - a step with `llm_call_count == 0` has no `metrics` or `reasoning_content`;
 * - content parts are well formed; a missing image file (checked only with
 *   `baseDir`) is a warning, since Harbor never opens the files.
 *
 * ATIF-v1.8 adds, for documents that declare it: audio content parts, no
 * repeated `tool_call_id` within a step, no blank ids or paths, and a
 * subagent ref without `trajectory_path` must name an embedded trajectory.
 * v1.0-v1.7 share Harbor's v1.7 model (Harbor validates them all with it).
 *
 * @module
 */

import { ATIF_SCHEMA_VERSIONS, ATIF_STEP_FIELDS } from './types.ts';
import { checkContent } from './rules/content.ts';
import { isObject, Report, type Obj } from './rules/common.ts';
import { isPythonIsoDatetime } from './rules/iso-datetime.ts';
import { childPath, validationResult, type ValidationResult } from '../validation-result.ts';

/** Options of `validateAtif`. */
export interface ValidateAtifOptions {
  /** Directory image and audio paths are relative to; their existence is checked (a warning) only when given. */
  baseDir?: string;
}

/** Harbor's default when a trajectory has no `schema_version`. */
const DEFAULT_VERSION = 'ATIF-v1.7';

const TRAJECTORY_FIELDS = new Set([
  'schema_version',
  'session_id',
  'trajectory_id',
  'agent',
  'steps',
  'notes',
  'final_metrics',
  'continued_trajectory_ref',
  'subagent_trajectories',
  'extra',
]);
const AGENT_FIELDS = new Set(['name', 'version', 'model_name', 'tool_definitions', 'extra']);
const STEP_FIELDS: ReadonlySet<string> = new Set(ATIF_STEP_FIELDS);
const AGENT_ONLY_FIELDS = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;
const TOOL_CALL_FIELDS = new Set(['tool_call_id', 'function_name', 'arguments', 'extra']);
const OBSERVATION_FIELDS = new Set(['results']);
const RESULT_FIELDS = new Set(['source_call_id', 'content', 'subagent_trajectory_ref', 'extra']);
const REF_FIELDS = new Set(['trajectory_id', 'session_id', 'trajectory_path', 'extra']);
const METRICS_FIELDS = new Set([
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_usd',
  'prompt_token_ids',
  'completion_token_ids',
  'logprobs',
  'extra',
]);
const FINAL_METRICS_FIELDS = new Set([
  'total_prompt_tokens',
  'total_completion_tokens',
  'total_cached_tokens',
  'total_cost_usd',
  'total_steps',
  'extra',
]);
const present = (object: Obj, key: string): boolean => object[key] !== undefined && object[key] !== null;
const blank = (value: unknown): boolean => typeof value === 'string' && value.trim() === '';

/** A step_id as Pydantic's lax int reads it: an integer, or a string or float that is exactly one. */
function laxInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value);
  return undefined;
}

class AtifValidator {
  readonly report = new Report();
  /** Trajectory ids of every embedded subagent in the document (v1.8 refs must resolve to one). */
  readonly embeddedIds = new Set<string>();
  readonly refsToResolve: { path: string; id: string }[] = [];
  #v18 = false;

  constructor(private readonly options: ValidateAtifOptions) {}

  error(path: string, rule: string, message: string): void {
    this.report.error(path, rule, message);
  }

  fields(object: Obj, allowed: ReadonlySet<string>, path: string, model: string): void {
    for (const key of Object.keys(object)) {
      if (!allowed.has(key)) this.error(childPath(path, key), 'atif.extra_field', `${model} does not allow the field "${key}"`);
    }
  }

  object(value: unknown, path: string, model: string): value is Obj {
    if (isObject(value)) return true;
    this.error(path, 'atif.type', `${model} must be an object`);
    return false;
  }

  string(object: Obj, key: string, path: string, required: boolean, id = false): void {
    const value = object[key];
    if (value === undefined || value === null) {
      if (required) this.error(childPath(path, key), 'atif.required', `${key} is required`);
      return;
    }
    if (typeof value !== 'string') this.error(childPath(path, key), 'atif.type', `${key} must be a string`);
    else if (id && this.#v18 && blank(value)) this.error(childPath(path, key), 'atif.blank', `${key} must not be blank (ATIF-v1.8)`);
  }

  extra(object: Obj, path: string): void {
    if (present(object, 'extra') && !isObject(object.extra)) this.error(childPath(path, 'extra'), 'atif.type', 'extra must be an object');
  }

  count(object: Obj, key: string, path: string, nonNegative = false): void {
    if (!present(object, key)) return;
    const value = object[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || (nonNegative && value < 0)) {
      this.error(childPath(path, key), 'atif.token_count', `${key} must be an integer${nonNegative ? ' >= 0' : ''}`);
    }
  }

  cost(object: Obj, key: string, path: string): void {
    if (!present(object, key)) return;
    if (typeof object[key] !== 'number' || !Number.isFinite(object[key])) {
      this.error(childPath(path, key), 'atif.cost', `${key} must be a finite number`);
    }
  }

  /** Validates one trajectory; returns the version it declares (or undefined). */
  trajectory(doc: unknown, path: string, embedded: boolean): string | undefined {
    if (!this.object(doc, path, 'Trajectory')) return undefined;
    const outer = this.#v18;
    this.fields(doc, TRAJECTORY_FIELDS, path, 'Trajectory');
    const declared = doc.schema_version;
    let version = DEFAULT_VERSION;
    if (declared !== undefined && declared !== null) {
      if (typeof declared !== 'string' || !(ATIF_SCHEMA_VERSIONS as readonly string[]).includes(declared)) {
        this.error(childPath(path, 'schema_version'), 'atif.schema_version', `unknown schema_version ${JSON.stringify(declared)}`);
      } else version = declared;
    }
    this.#v18 = version === 'ATIF-v1.8';
    this.string(doc, 'session_id', path, false, true);
    this.string(doc, 'trajectory_id', path, embedded, true);
    this.string(doc, 'notes', path, false);
    this.string(doc, 'continued_trajectory_ref', path, false);
    this.extra(doc, path);

    if (doc.agent === undefined || doc.agent === null) this.error(childPath(path, 'agent'), 'atif.required', 'agent is required');
    else this.agent(doc.agent, childPath(path, 'agent'));

    const stepsPath = childPath(path, 'steps');
    if (doc.steps === undefined || doc.steps === null) this.error(stepsPath, 'atif.required', 'steps is required');
    else if (!Array.isArray(doc.steps)) this.error(stepsPath, 'atif.type', 'steps must be an array');
    else if (doc.steps.length === 0) this.error(stepsPath, 'atif.steps_empty', 'steps needs at least one step');
    else doc.steps.forEach((step, i) => this.step(step, childPath(stepsPath, i), i + 1));

    if (present(doc, 'final_metrics')) this.finalMetrics(doc.final_metrics, childPath(path, 'final_metrics'));
    if (present(doc, 'subagent_trajectories')) this.subagents(doc.subagent_trajectories, childPath(path, 'subagent_trajectories'));
    this.#v18 = outer;
    return typeof declared === 'string' ? declared : undefined;
  }

  subagents(subs: unknown, path: string): void {
    if (!Array.isArray(subs)) {
      this.error(path, 'atif.type', 'subagent_trajectories must be an array');
      return;
    }
    const seen = new Map<string, number>();
    subs.forEach((sub, i) => {
      const itemPath = childPath(path, i);
      this.trajectory(sub, itemPath, true);
      const id = isObject(sub) ? sub.trajectory_id : undefined;
      if (typeof id !== 'string') return;
      this.embeddedIds.add(id);
      const first = seen.get(id);
      if (first !== undefined) {
        this.error(childPath(itemPath, 'trajectory_id'), 'atif.subagent_trajectory_id', `trajectory_id "${id}" repeats subagent_trajectories[${first}]`);
      } else seen.set(id, i);
    });
  }

  agent(agent: unknown, path: string): void {
    if (!this.object(agent, path, 'Agent')) return;
    this.fields(agent, AGENT_FIELDS, path, 'Agent');
    this.string(agent, 'name', path, true);
    this.string(agent, 'version', path, true);
    this.string(agent, 'model_name', path, false);
    this.extra(agent, path);
    if (present(agent, 'tool_definitions')) {
      const defs = agent.tool_definitions;
      if (!Array.isArray(defs)) this.error(childPath(path, 'tool_definitions'), 'atif.type', 'tool_definitions must be an array');
      else defs.forEach((def, i) => {
        if (!isObject(def)) this.error(childPath(childPath(path, 'tool_definitions'), i), 'atif.type', 'a tool definition must be an object');
      });
    }
  }

  step(step: unknown, path: string, expectedId: number): void {
    if (!this.object(step, path, 'Step')) return;
    this.fields(step, STEP_FIELDS, path, 'Step');
    const id = step.step_id;
    if (id === undefined || id === null) this.error(childPath(path, 'step_id'), 'atif.required', 'step_id is required');
    else if (laxInteger(id) !== expectedId) {
      this.error(childPath(path, 'step_id'), 'atif.step_id_sequence', `step_id must be ${expectedId} (ids run 1..n without gaps), got ${JSON.stringify(id)}`);
    }
    const source = step.source;
    if (source === undefined || source === null) this.error(childPath(path, 'source'), 'atif.required', 'source is required');
    else if (source !== 'user' && source !== 'agent' && source !== 'system') {
      this.error(childPath(path, 'source'), 'atif.source', `source must be "user", "agent" or "system", got ${JSON.stringify(source)}`);
    }
    if (step.message === undefined || step.message === null) this.error(childPath(path, 'message'), 'atif.required', 'message is required');
    else this.content(step.message, childPath(path, 'message'), 'message');

    if (present(step, 'timestamp')) {
      const timestamp = step.timestamp;
      if (typeof timestamp !== 'string' || !isPythonIsoDatetime(timestamp)) {
        this.error(childPath(path, 'timestamp'), 'atif.timestamp', `timestamp must be ISO 8601 as Python's datetime.fromisoformat reads it, got ${JSON.stringify(timestamp)}`);
      }
    }
    if (source === 'user' || source === 'system') {
      for (const field of AGENT_ONLY_FIELDS) {
        if (present(step, field)) this.error(childPath(path, field), 'atif.agent_only_field', `${field} is only allowed on agent steps`);
      }
    }
    this.string(step, 'model_name', path, false);
    this.string(step, 'reasoning_content', path, false);
    if (present(step, 'reasoning_effort') && typeof step.reasoning_effort !== 'string' && typeof step.reasoning_effort !== 'number') {
      this.error(childPath(path, 'reasoning_effort'), 'atif.type', 'reasoning_effort must be a string or a number');
    }
    if (present(step, 'is_copied_context') && typeof step.is_copied_context !== 'boolean') {
      this.error(childPath(path, 'is_copied_context'), 'atif.type', 'is_copied_context must be a boolean');
    }
    this.extra(step, path);

    const callIds = new Set<string>();
    if (present(step, 'tool_calls')) {
      const callsPath = childPath(path, 'tool_calls');
      if (!Array.isArray(step.tool_calls)) this.error(callsPath, 'atif.type', 'tool_calls must be an array');
      else step.tool_calls.forEach((call, i) => {
        const callPath = childPath(callsPath, i);
        const callId = this.toolCall(call, callPath);
        if (callId === undefined) return;
        if (this.#v18 && callIds.has(callId)) {
          this.error(childPath(callPath, 'tool_call_id'), 'atif.duplicate_tool_call_id', `tool_call_id "${callId}" repeats within this step (ATIF-v1.8)`);
        }
        callIds.add(callId);
      });
    }
    if (present(step, 'observation')) this.observation(step.observation, childPath(path, 'observation'), callIds);
    if (present(step, 'metrics')) this.metrics(step.metrics, childPath(path, 'metrics'));
    if (present(step, 'llm_call_count')) {
      const count = step.llm_call_count;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        this.error(childPath(path, 'llm_call_count'), 'atif.type', 'llm_call_count must be a non-negative integer');
      } else if (count === 0) {
        for (const field of ['metrics', 'reasoning_content'] as const) {
          if (present(step, field)) {
            this.error(childPath(path, field), 'atif.llm_call_count_zero', `a step with llm_call_count 0 (no LLM call) has no ${field}`);
          }
        }
      }
    }
  }

  toolCall(call: unknown, path: string): string | undefined {
    if (!this.object(call, path, 'ToolCall')) return undefined;
    this.fields(call, TOOL_CALL_FIELDS, path, 'ToolCall');
    this.string(call, 'tool_call_id', path, true, true);
    this.string(call, 'function_name', path, true);
    if (call.arguments === undefined || call.arguments === null) this.error(childPath(path, 'arguments'), 'atif.required', 'arguments is required (use {} for none)');
    else if (!isObject(call.arguments)) this.error(childPath(path, 'arguments'), 'atif.arguments', 'arguments must be a JSON object');
    this.extra(call, path);
    return typeof call.tool_call_id === 'string' ? call.tool_call_id : undefined;
  }

  observation(observation: unknown, path: string, callIds: ReadonlySet<string>): void {
    if (!this.object(observation, path, 'Observation')) return;
    this.fields(observation, OBSERVATION_FIELDS, path, 'Observation');
    const resultsPath = childPath(path, 'results');
    if (observation.results === undefined || observation.results === null) {
      this.error(resultsPath, 'atif.required', 'results is required');
      return;
    }
    if (!Array.isArray(observation.results)) {
      this.error(resultsPath, 'atif.type', 'results must be an array');
      return;
    }
    observation.results.forEach((result, i) => {
      const itemPath = childPath(resultsPath, i);
      if (!this.object(result, itemPath, 'ObservationResult')) return;
      this.fields(result, RESULT_FIELDS, itemPath, 'ObservationResult');
      this.string(result, 'source_call_id', itemPath, false, true);
      if (typeof result.source_call_id === 'string' && !blank(result.source_call_id) && !callIds.has(result.source_call_id)) {
        this.error(
          childPath(itemPath, 'source_call_id'),
          'atif.source_call_id',
          `source_call_id "${result.source_call_id}" names no tool_call_id of this step`,
        );
      }
      if (present(result, 'content')) this.content(result.content, childPath(itemPath, 'content'), 'content');
      this.extra(result, itemPath);
      if (present(result, 'subagent_trajectory_ref')) {
        const refsPath = childPath(itemPath, 'subagent_trajectory_ref');
        const refs = result.subagent_trajectory_ref;
        if (!Array.isArray(refs)) this.error(refsPath, 'atif.type', 'subagent_trajectory_ref must be an array');
        else refs.forEach((ref, j) => this.subagentRef(ref, childPath(refsPath, j)));
      }
    });
  }

  subagentRef(ref: unknown, path: string): void {
    if (!this.object(ref, path, 'SubagentTrajectoryRef')) return;
    this.fields(ref, REF_FIELDS, path, 'SubagentTrajectoryRef');
    this.string(ref, 'trajectory_id', path, false, true);
    this.string(ref, 'trajectory_path', path, false, true);
    this.string(ref, 'session_id', path, false, true);
    this.extra(ref, path);
    if (!present(ref, 'trajectory_id') && !present(ref, 'trajectory_path')) {
      this.error(path, 'atif.subagent_ref', 'a subagent ref needs trajectory_id or trajectory_path (session_id alone is not enough in v1.7)');
    } else if (this.#v18 && !present(ref, 'trajectory_path') && typeof ref.trajectory_id === 'string') {
      this.refsToResolve.push({ path: childPath(path, 'trajectory_id'), id: ref.trajectory_id });
    }
  }

  /** ATIF-v1.8: a ref without a path names a trajectory embedded somewhere in this document. */
  resolveRefs(): void {
    for (const { path, id } of this.refsToResolve) {
      if (!this.embeddedIds.has(id)) {
        this.error(path, 'atif.subagent_ref_unresolved', `trajectory_id "${id}" names no embedded subagent trajectory, and the ref has no trajectory_path (ATIF-v1.8)`);
      }
    }
  }

  metrics(metrics: unknown, path: string): void {
    if (!this.object(metrics, path, 'Metrics')) return;
    this.fields(metrics, METRICS_FIELDS, path, 'Metrics');
    for (const key of ['prompt_tokens', 'completion_tokens', 'cached_tokens']) this.count(metrics, key, path);
    this.cost(metrics, 'cost_usd', path);
    for (const key of ['prompt_token_ids', 'completion_token_ids'] as const) {
      if (!present(metrics, key)) continue;
      const ids = metrics[key];
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'number' || !Number.isInteger(id))) {
        this.error(childPath(path, key), 'atif.token_count', `${key} must be an array of integers`);
      }
    }
    if (present(metrics, 'logprobs')) {
      const logprobs = metrics.logprobs;
      if (!Array.isArray(logprobs) || logprobs.some((p) => typeof p !== 'number' || !Number.isFinite(p))) {
        this.error(childPath(path, 'logprobs'), 'atif.type', 'logprobs must be an array of finite numbers');
      }
    }
    this.extra(metrics, path);
  }

  finalMetrics(metrics: unknown, path: string): void {
    if (!this.object(metrics, path, 'FinalMetrics')) return;
    this.fields(metrics, FINAL_METRICS_FIELDS, path, 'FinalMetrics');
    for (const key of ['total_prompt_tokens', 'total_completion_tokens', 'total_cached_tokens']) this.count(metrics, key, path);
    this.count(metrics, 'total_steps', path, true);
    this.cost(metrics, 'total_cost_usd', path);
    this.extra(metrics, path);
  }

  content(value: unknown, path: string, name: string): void {
    checkContent(value, path, name, { v18: this.#v18, baseDir: this.options.baseDir }, this.report);
  }
}

/**
 * Validates an ATIF document (parsed JSON). The result is the array of errors
 * (`[]` means valid) with `warnings` and the root's declared `version`.
 */
export function validateAtif(doc: unknown, options: ValidateAtifOptions = {}): ValidationResult {
  const validator = new AtifValidator(options);
  const version = validator.trajectory(doc, '$', false);
  validator.resolveRefs();
  return validationResult(validator.report.errors, validator.report.warnings, version);
}
