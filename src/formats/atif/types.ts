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

/** The ATIF version the builder writes (native's version). */
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

/** Who produced a step: the system prompt, the user, or the agent. */
export type AtifStepSource = 'system' | 'user' | 'agent';

/** The agent that produced a trajectory. */
export interface AtifAgent {
  /** The agent's name. */
  name: string;
  /** The agent's version. */
  version: string;
  /** The model the agent runs, when one applies to the whole trajectory. */
  model_name?: string;
  /** The tools offered to the model, in the provider's format. */
  tool_definitions?: Json[];
  /** Producer-specific data. */
  extra?: Json;
}

/** A text or image content part (ATIF v1.6+). */
export type AtifContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { media_type: string; path: string } };

/** A step message or observation content: a string or content parts. */
export type AtifMessage = string | AtifContentPart[] | Json;

/** A tool call the agent asked for in a step. */
export interface AtifToolCall {
  /** The call's id; observation results refer to it. */
  tool_call_id: string;
  /** The tool's name. */
  function_name: string;
  /** A JSON object (may be empty). */
  arguments: Json;
  /** Producer-specific data. */
  extra?: Json;
}

/** A reference from an observation result to a subagent's trajectory. */
export interface AtifSubagentTrajectoryRef {
  /** The subagent trajectory's `trajectory_id`. */
  trajectory_id?: string;
  /** The subagent trajectory's `session_id`. */
  session_id?: string;
  /** Only in documents from other writers; native never writes it. */
  trajectory_path?: string;
  /** Producer-specific data. */
  extra?: Json;
}

/** The result of one tool call (or a subagent's outcome). */
export interface AtifObservationResult {
  /** The `tool_call_id` this result answers. */
  source_call_id?: string;
  /** The result's content. */
  content?: AtifMessage;
  /** The subagent trajectories that produced this result. */
  subagent_trajectory_ref?: AtifSubagentTrajectoryRef[];
  /** Producer-specific data. */
  extra?: Json;
}

/** What the environment returned for a step's tool calls. */
export interface AtifObservation {
  /** One result per tool call. */
  results: AtifObservationResult[];
}

/** Token and cost figures of one step. */
export interface AtifMetrics {
  /** Input tokens, cached ones included. */
  prompt_tokens?: number;
  /** Output tokens. */
  completion_tokens?: number;
  /** Input tokens served from the provider's cache. */
  cached_tokens?: number;
  /** Cost of the step in US dollars. */
  cost_usd?: number;
  /** The input token ids, when recorded (training data). */
  prompt_token_ids?: number[];
  /** The output token ids, when recorded. */
  completion_token_ids?: number[];
  /** Log probabilities of the output tokens, when recorded. */
  logprobs?: number[];
  /** Producer-specific figures. */
  extra?: Json;
}

/** Totals over a trajectory. */
export interface AtifFinalMetrics {
  /** Sum of the steps' prompt tokens. */
  total_prompt_tokens?: number;
  /** Sum of the steps' completion tokens. */
  total_completion_tokens?: number;
  /** Sum of the steps' cached tokens. */
  total_cached_tokens?: number;
  /** Sum of the steps' cost in US dollars. */
  total_cost_usd?: number;
  /** Number of steps. */
  total_steps?: number;
  /** Producer-specific totals. */
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

/** One step of a trajectory: a system prompt, a user message, or an agent turn with its tool calls. */
export interface AtifStep {
  /** 1-based position in `steps`. */
  step_id: number;
  /** Who produced the step. */
  source: AtifStepSource;
  /** The step's message: text, or content parts. */
  message: AtifMessage;
  /** When the step happened (ISO 8601). */
  timestamp?: string;
  /** The model of an agent step. */
  model_name?: string;
  /** The reasoning effort the model was asked for. */
  reasoning_effort?: Json;
  /** The model's reasoning text, when the provider returns it. */
  reasoning_content?: string;
  /** The tool calls the agent asked for. */
  tool_calls?: AtifToolCall[];
  /** The results of those tool calls. */
  observation?: AtifObservation;
  /** Tokens and cost of the step. */
  metrics?: AtifMetrics;
  /** LLM calls the step took (0 for a deterministic agent step). */
  llm_call_count?: number;
  /** The step was copied from an earlier trajectory (context, not new work). */
  is_copied_context?: boolean;
  /** Producer-specific data (NeMo Relay: `ancestry`, `invocation`, `llm_request`, ...). */
  extra?: Json;
}

/** An ATIF trajectory document. */
export interface AtifTrajectory {
  /** The ATIF version, e.g. `ATIF-v1.7`. */
  schema_version: string;
  /** The session the trajectory records. */
  session_id?: string;
  /** The trajectory's own id. */
  trajectory_id?: string;
  /** The agent. */
  agent: AtifAgent;
  /** The steps, in order. */
  steps: AtifStep[];
  /** Free-form notes. */
  notes?: string;
  /** Totals over the steps. */
  final_metrics?: AtifFinalMetrics;
  /** The trajectory this one continues, when split. */
  continued_trajectory_ref?: string;
  /** Subagent trajectories embedded in this one. */
  subagent_trajectories?: AtifTrajectory[];
  /** Producer-specific data. */
  extra?: JsonObject;
}

/** Lineage of a step or tool call inside `step.extra` (Relay convention). */
export interface AtifAncestry {
  /** The uuid of the scope or span the step came from. */
  function_id: string;
  /** Its name. */
  function_name: string;
  /** The parent scope's uuid. */
  parent_id?: string;
  /** The parent scope's name. */
  parent_name?: string;
}

/** Timing of one invocation inside `step.extra` (Relay convention); epoch seconds. */
export interface AtifInvocation {
  /** When the call ended (epoch seconds). */
  end_timestamp?: number;
  /** The framework that recorded it (`nemo_relay`). */
  framework?: string;
  /** The span's uuid. */
  invocation_id?: string;
  /** When the call started (epoch seconds). */
  start_timestamp?: number;
  /** How the call ended, e.g. `completed`. */
  status?: string;
}

/** What an LLM call cost in USD (undefined: no cost), from its span name, requested model and response. */
export type LlmCallPricer = (call: { name: string; requestModel: string | undefined; response: Json | undefined }) => number | undefined;
