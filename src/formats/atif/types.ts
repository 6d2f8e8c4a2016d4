/**
 * ATIF v1.7 (Agent Trajectory Interchange Format) document types.
 *
 * Field order in every interface is the order the native NeMo Relay
 * exporter serializes its structs in; the builder creates objects in that
 * order so `JSON.stringify` of a built trajectory matches native text.
 * Fields typed `Json` are opaque payloads: native writes their object keys
 * sorted.
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';

export const ATIF_SCHEMA_VERSION = 'ATIF-v1.7';

/** Every schema version a reader should accept (the builder writes `ATIF_SCHEMA_VERSION`, native's). */
export const ATIF_SCHEMA_VERSIONS = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
  'ATIF-v1.7',
  'ATIF-v1.8',
] as const;

export type AtifStepSource = 'system' | 'user' | 'agent';

export interface AtifAgent {
  name: string;
  version: string;
  model_name?: string;
  tool_definitions?: Json[];
  extra?: Json;
}

/** A text or image content part (ATIF v1.6+). */
export type AtifContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { media_type: string; path: string } };

/** A step message or observation content: a string or content parts. */
export type AtifMessage = string | AtifContentPart[] | Json;

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  /** A JSON object (may be empty). */
  arguments: Json;
  extra?: Json;
}

export interface AtifSubagentTrajectoryRef {
  trajectory_id?: string;
  session_id?: string;
  /** Only in documents from other writers; native never writes it. */
  trajectory_path?: string;
  extra?: Json;
}

export interface AtifObservationResult {
  source_call_id?: string;
  content?: AtifMessage;
  subagent_trajectory_ref?: AtifSubagentTrajectoryRef[];
  extra?: Json;
}

export interface AtifObservation {
  results: AtifObservationResult[];
}

export interface AtifMetrics {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  cost_usd?: number;
  prompt_token_ids?: number[];
  completion_token_ids?: number[];
  logprobs?: number[];
  extra?: Json;
}

export interface AtifFinalMetrics {
  total_prompt_tokens?: number;
  total_completion_tokens?: number;
  total_cached_tokens?: number;
  total_cost_usd?: number;
  total_steps?: number;
  extra?: Json;
}

/** Every field an ATIF v1.7 step may have, in the order native writes them. */
export const ATIF_STEP_FIELDS = [
  'step_id',
  'source',
  'message',
  'timestamp',
  'model_name',
  'reasoning_effort',
  'reasoning_content',
  'tool_calls',
  'observation',
  'metrics',
  'llm_call_count',
  'is_copied_context',
  'extra',
] as const;

export interface AtifStep {
  step_id: number;
  source: AtifStepSource;
  message: AtifMessage;
  timestamp?: string;
  model_name?: string;
  reasoning_effort?: Json;
  reasoning_content?: string;
  tool_calls?: AtifToolCall[];
  observation?: AtifObservation;
  metrics?: AtifMetrics;
  llm_call_count?: number;
  is_copied_context?: boolean;
  extra?: Json;
}

export interface AtifTrajectory {
  schema_version: string;
  session_id?: string;
  trajectory_id?: string;
  agent: AtifAgent;
  steps: AtifStep[];
  notes?: string;
  final_metrics?: AtifFinalMetrics;
  continued_trajectory_ref?: string;
  subagent_trajectories?: AtifTrajectory[];
  extra?: JsonObject;
}

/** Lineage of a step or tool call inside `step.extra` (Relay convention). */
export interface AtifAncestry {
  function_id: string;
  function_name: string;
  parent_id?: string;
  parent_name?: string;
}

/** Timing of one invocation inside `step.extra` (Relay convention); epoch seconds. */
export interface AtifInvocation {
  end_timestamp?: number;
  framework?: string;
  invocation_id?: string;
  start_timestamp?: number;
  status?: string;
}
