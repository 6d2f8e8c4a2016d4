/**
 * ATIF v1.7 validation, following Harbor's trajectory models and validator
 * (and NVIDIA's NAT port):
 * - every object forbids fields its model does not define;
 * - `step_id`s run 1..n; `schema_version` is a known version;
 * - agent-only fields (`model_name`, `reasoning_effort`,
 *   `reasoning_content`, `tool_calls`, `metrics`) never sit on user or
 *   system steps, and user steps carry no `observation`;
 * - timestamps parse as ISO 8601; tool `arguments` are objects;
 * - token counts are non-negative integers and costs finite numbers;
 * - `source_call_id` names a `tool_call_id` of the same step;
 * - embedded subagent trajectories have unique `trajectory_id`s, and every
 *   subagent ref has a `trajectory_id` or `trajectory_path`;
 * - a step with `llm_call_count == 0` has no `metrics` or `reasoning_content`;
 * - content parts are well formed (and image paths exist, when `baseDir` is
 *   given).
 *
 * Like NAT (and unlike Harbor) an empty `steps` list is accepted: native
 * writes one for a session without LLM calls. Optional fields may be `null`,
 * as the Pydantic models allow.
 *
 * @module
 */

import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { ATIF_SCHEMA_VERSIONS, ATIF_STEP_FIELDS } from './types.ts';
import { ATIF_IMAGE_MEDIA_TYPES } from './payload.ts';
import type { ValidationError } from '../validation.ts';
import { childPath } from '../validation.ts';

/** Options of `validateAtif`. */
export interface ValidateAtifOptions {
  /** Directory image paths are relative to; image existence is checked only when given. */
  baseDir?: string;
}

type Obj = Record<string, unknown>;

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
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const present = (object: Obj, key: string): boolean => object[key] !== undefined && object[key] !== null;

class AtifValidator {
  readonly errors: ValidationError[] = [];

  constructor(private readonly options: ValidateAtifOptions) {}

  report(path: string, rule: string, message: string): void {
    this.errors.push({ path, rule, message });
  }

  fields(object: Obj, allowed: ReadonlySet<string>, path: string, model: string): void {
    for (const key of Object.keys(object)) {
      if (!allowed.has(key)) this.report(childPath(path, key), 'atif.extra_field', `${model} does not allow the field "${key}"`);
    }
  }

  object(value: unknown, path: string, model: string): value is Obj {
    if (isObject(value)) return true;
    this.report(path, 'atif.type', `${model} must be an object`);
    return false;
  }

  string(object: Obj, key: string, path: string, required: boolean): void {
    const value = object[key];
    if (value === undefined || value === null) {
      if (required) this.report(childPath(path, key), 'atif.required', `${key} is required`);
      return;
    }
    if (typeof value !== 'string') this.report(childPath(path, key), 'atif.type', `${key} must be a string`);
  }

  extra(object: Obj, path: string): void {
    if (present(object, 'extra') && !isObject(object.extra)) this.report(childPath(path, 'extra'), 'atif.type', 'extra must be an object');
  }

  count(object: Obj, key: string, path: string): void {
    if (!present(object, key)) return;
    const value = object[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      this.report(childPath(path, key), 'atif.token_count', `${key} must be a non-negative integer`);
    }
  }

  cost(object: Obj, key: string, path: string): void {
    if (!present(object, key)) return;
    if (typeof object[key] !== 'number' || !Number.isFinite(object[key])) {
      this.report(childPath(path, key), 'atif.cost', `${key} must be a finite number`);
    }
  }

  trajectory(doc: unknown, path: string, embedded: boolean): void {
    if (!this.object(doc, path, 'Trajectory')) return;
    this.fields(doc, TRAJECTORY_FIELDS, path, 'Trajectory');
    const version = doc.schema_version;
    if (version === undefined || version === null) this.report(childPath(path, 'schema_version'), 'atif.required', 'schema_version is required');
    else if (typeof version !== 'string' || !(ATIF_SCHEMA_VERSIONS as readonly string[]).includes(version)) {
      this.report(childPath(path, 'schema_version'), 'atif.schema_version', `unknown schema_version ${JSON.stringify(version)}`);
    }
    const before17 = typeof version === 'string' && version !== 'ATIF-v1.7' && (ATIF_SCHEMA_VERSIONS as readonly string[]).includes(version);
    this.string(doc, 'session_id', path, before17);
    this.string(doc, 'trajectory_id', path, embedded);
    this.string(doc, 'notes', path, false);
    this.string(doc, 'continued_trajectory_ref', path, false);
    this.extra(doc, path);

    if (doc.agent === undefined || doc.agent === null) this.report(childPath(path, 'agent'), 'atif.required', 'agent is required');
    else this.agent(doc.agent, childPath(path, 'agent'));

    const stepsPath = childPath(path, 'steps');
    if (doc.steps === undefined || doc.steps === null) this.report(stepsPath, 'atif.required', 'steps is required');
    else if (!Array.isArray(doc.steps)) this.report(stepsPath, 'atif.type', 'steps must be an array');
    else doc.steps.forEach((step, i) => this.step(step, childPath(stepsPath, i), i + 1));

    if (present(doc, 'final_metrics')) this.finalMetrics(doc.final_metrics, childPath(path, 'final_metrics'));

    if (present(doc, 'subagent_trajectories')) {
      const subPath = childPath(path, 'subagent_trajectories');
      const subs = doc.subagent_trajectories;
      if (!Array.isArray(subs)) this.report(subPath, 'atif.type', 'subagent_trajectories must be an array');
      else {
        const seen = new Map<string, number>();
        subs.forEach((sub, i) => {
          const itemPath = childPath(subPath, i);
          this.trajectory(sub, itemPath, true);
          const id = isObject(sub) ? sub.trajectory_id : undefined;
          if (typeof id !== 'string') return;
          const first = seen.get(id);
          if (first !== undefined) {
            this.report(childPath(itemPath, 'trajectory_id'), 'atif.subagent_trajectory_id', `trajectory_id "${id}" repeats subagent_trajectories[${first}]`);
          } else seen.set(id, i);
        });
      }
    }
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
      if (!Array.isArray(defs)) this.report(childPath(path, 'tool_definitions'), 'atif.type', 'tool_definitions must be an array');
      else defs.forEach((def, i) => {
        if (!isObject(def)) this.report(childPath(childPath(path, 'tool_definitions'), i), 'atif.type', 'a tool definition must be an object');
      });
    }
  }

  step(step: unknown, path: string, expectedId: number): void {
    if (!this.object(step, path, 'Step')) return;
    this.fields(step, STEP_FIELDS, path, 'Step');
    const id = step.step_id;
    if (id === undefined || id === null) this.report(childPath(path, 'step_id'), 'atif.required', 'step_id is required');
    else if (id !== expectedId) {
      this.report(childPath(path, 'step_id'), 'atif.step_id_sequence', `step_id must be ${expectedId} (ids run 1..n without gaps), got ${JSON.stringify(id)}`);
    }
    const source = step.source;
    if (source === undefined || source === null) this.report(childPath(path, 'source'), 'atif.required', 'source is required');
    else if (source !== 'user' && source !== 'agent' && source !== 'system') {
      this.report(childPath(path, 'source'), 'atif.source', `source must be "user", "agent" or "system", got ${JSON.stringify(source)}`);
    }
    if (step.message === undefined || step.message === null) this.report(childPath(path, 'message'), 'atif.required', 'message is required');
    else this.content(step.message, childPath(path, 'message'), 'message');

    if (present(step, 'timestamp')) {
      const timestamp = step.timestamp;
      if (typeof timestamp !== 'string' || !ISO_8601.test(timestamp) || Number.isNaN(Date.parse(timestamp.replace(' ', 'T')))) {
        this.report(childPath(path, 'timestamp'), 'atif.timestamp', `timestamp must be an ISO 8601 string, got ${JSON.stringify(timestamp)}`);
      }
    }
    if (source === 'user' || source === 'system') {
      for (const field of AGENT_ONLY_FIELDS) {
        if (present(step, field)) this.report(childPath(path, field), 'atif.agent_only_field', `${field} is only allowed on agent steps`);
      }
      if (source === 'user' && present(step, 'observation')) {
        this.report(childPath(path, 'observation'), 'atif.agent_only_field', 'observation is only allowed on agent and system steps');
      }
    }
    this.string(step, 'model_name', path, false);
    this.string(step, 'reasoning_content', path, false);
    if (present(step, 'reasoning_effort') && typeof step.reasoning_effort !== 'string' && typeof step.reasoning_effort !== 'number') {
      this.report(childPath(path, 'reasoning_effort'), 'atif.type', 'reasoning_effort must be a string or a number');
    }
    if (present(step, 'is_copied_context') && typeof step.is_copied_context !== 'boolean') {
      this.report(childPath(path, 'is_copied_context'), 'atif.type', 'is_copied_context must be a boolean');
    }
    this.extra(step, path);

    const callIds = new Set<string>();
    if (present(step, 'tool_calls')) {
      const callsPath = childPath(path, 'tool_calls');
      if (!Array.isArray(step.tool_calls)) this.report(callsPath, 'atif.type', 'tool_calls must be an array');
      else step.tool_calls.forEach((call, i) => {
        const id = this.toolCall(call, childPath(callsPath, i));
        if (id !== undefined) callIds.add(id);
      });
    }
    if (present(step, 'observation')) this.observation(step.observation, childPath(path, 'observation'), callIds);
    if (present(step, 'metrics')) this.metrics(step.metrics, childPath(path, 'metrics'));
    if (present(step, 'llm_call_count')) {
      const count = step.llm_call_count;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        this.report(childPath(path, 'llm_call_count'), 'atif.type', 'llm_call_count must be a non-negative integer');
      } else if (count === 0) {
        for (const field of ['metrics', 'reasoning_content'] as const) {
          if (present(step, field)) {
            this.report(childPath(path, field), 'atif.llm_call_count_zero', `a step with llm_call_count 0 (no LLM call) has no ${field}`);
          }
        }
      }
    }
  }

  toolCall(call: unknown, path: string): string | undefined {
    if (!this.object(call, path, 'ToolCall')) return undefined;
    this.fields(call, TOOL_CALL_FIELDS, path, 'ToolCall');
    this.string(call, 'tool_call_id', path, true);
    this.string(call, 'function_name', path, true);
    if (call.arguments === undefined || call.arguments === null) this.report(childPath(path, 'arguments'), 'atif.required', 'arguments is required (use {} for none)');
    else if (!isObject(call.arguments)) this.report(childPath(path, 'arguments'), 'atif.arguments', 'arguments must be a JSON object');
    this.extra(call, path);
    return typeof call.tool_call_id === 'string' ? call.tool_call_id : undefined;
  }

  observation(observation: unknown, path: string, callIds: ReadonlySet<string>): void {
    if (!this.object(observation, path, 'Observation')) return;
    this.fields(observation, OBSERVATION_FIELDS, path, 'Observation');
    const resultsPath = childPath(path, 'results');
    if (observation.results === undefined || observation.results === null) {
      this.report(resultsPath, 'atif.required', 'results is required');
      return;
    }
    if (!Array.isArray(observation.results)) {
      this.report(resultsPath, 'atif.type', 'results must be an array');
      return;
    }
    observation.results.forEach((result, i) => {
      const itemPath = childPath(resultsPath, i);
      if (!this.object(result, itemPath, 'ObservationResult')) return;
      this.fields(result, RESULT_FIELDS, itemPath, 'ObservationResult');
      this.string(result, 'source_call_id', itemPath, false);
      if (typeof result.source_call_id === 'string' && !callIds.has(result.source_call_id)) {
        this.report(
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
        if (!Array.isArray(refs)) this.report(refsPath, 'atif.type', 'subagent_trajectory_ref must be an array');
        else refs.forEach((ref, j) => this.subagentRef(ref, childPath(refsPath, j)));
      }
    });
  }

  subagentRef(ref: unknown, path: string): void {
    if (!this.object(ref, path, 'SubagentTrajectoryRef')) return;
    this.fields(ref, REF_FIELDS, path, 'SubagentTrajectoryRef');
    this.string(ref, 'trajectory_id', path, false);
    this.string(ref, 'trajectory_path', path, false);
    this.string(ref, 'session_id', path, false);
    this.extra(ref, path);
    if (!present(ref, 'trajectory_id') && !present(ref, 'trajectory_path')) {
      this.report(path, 'atif.subagent_ref', 'a subagent ref needs trajectory_id or trajectory_path (session_id alone is not enough in v1.7)');
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
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'number' || !Number.isInteger(id) || id < 0)) {
        this.report(childPath(path, key), 'atif.token_count', `${key} must be an array of non-negative integers`);
      }
    }
    if (present(metrics, 'logprobs')) {
      const logprobs = metrics.logprobs;
      if (!Array.isArray(logprobs) || logprobs.some((p) => typeof p !== 'number' || !Number.isFinite(p))) {
        this.report(childPath(path, 'logprobs'), 'atif.type', 'logprobs must be an array of finite numbers');
      }
    }
    this.extra(metrics, path);
  }

  finalMetrics(metrics: unknown, path: string): void {
    if (!this.object(metrics, path, 'FinalMetrics')) return;
    this.fields(metrics, FINAL_METRICS_FIELDS, path, 'FinalMetrics');
    for (const key of ['total_prompt_tokens', 'total_completion_tokens', 'total_cached_tokens', 'total_steps']) this.count(metrics, key, path);
    this.cost(metrics, 'total_cost_usd', path);
    this.extra(metrics, path);
  }

  content(value: unknown, path: string, name: string): void {
    if (typeof value === 'string') return;
    if (!Array.isArray(value)) {
      this.report(path, 'atif.type', `${name} must be a string or an array of content parts`);
      return;
    }
    value.forEach((part, i) => this.contentPart(part, childPath(path, i)));
  }

  contentPart(part: unknown, path: string): void {
    if (!this.object(part, path, 'ContentPart')) return;
    if (part.type === 'text') {
      for (const key of Object.keys(part)) {
        if (key !== 'type' && key !== 'text') this.report(childPath(path, key), 'atif.content_part', `a text part has no "${key}"`);
      }
      if (typeof part.text !== 'string') this.report(childPath(path, 'text'), 'atif.content_part', 'a text part needs a string text');
      return;
    }
    if (part.type === 'image') {
      for (const key of Object.keys(part)) {
        if (key !== 'type' && key !== 'source') this.report(childPath(path, key), 'atif.content_part', `an image part has no "${key}"`);
      }
      const sourcePath = childPath(path, 'source');
      const source = part.source;
      if (!isObject(source)) {
        this.report(sourcePath, 'atif.content_part', 'an image part needs a source {media_type, path}');
        return;
      }
      for (const key of Object.keys(source)) {
        if (key !== 'media_type' && key !== 'path') this.report(childPath(sourcePath, key), 'atif.content_part', `an image source has no "${key}"`);
      }
      if (typeof source.media_type !== 'string' || !(ATIF_IMAGE_MEDIA_TYPES as readonly string[]).includes(source.media_type)) {
        this.report(childPath(sourcePath, 'media_type'), 'atif.content_part', `media_type must be one of ${ATIF_IMAGE_MEDIA_TYPES.join(', ')}`);
      }
      if (typeof source.path !== 'string' || source.path === '') {
        this.report(childPath(sourcePath, 'path'), 'atif.content_part', 'an image source needs a path');
      } else if (this.options.baseDir !== undefined) {
        const resolved = resolvePath(this.options.baseDir, source.path);
        if (!existsSync(resolved)) this.report(childPath(sourcePath, 'path'), 'atif.image_missing', `image ${source.path} does not exist`);
      }
      return;
    }
    this.report(childPath(path, 'type'), 'atif.content_part', `content part type must be "text" or "image", got ${JSON.stringify(part.type)}`);
  }
}

/** Validates an ATIF document (parsed JSON). Returns every problem found; `[]` means valid. */
export function validateAtif(doc: unknown, options: ValidateAtifOptions = {}): ValidationError[] {
  const validator = new AtifValidator(options);
  validator.trajectory(doc, '$', false);
  return validator.errors;
}
