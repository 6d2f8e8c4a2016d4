/**
 * A pure-JS ATIF v1.7 trajectory builder that produces exactly what the
 * native NeMo Relay runtime produces for the same ATOF events.
 *
 * Both relay backends feed it: the in-memory relay with its own events, the
 * native adapter with native subscriber events (one builder per session,
 * since native's own exporter mixes interleaved sessions). `add()` only
 * stores the event; all conversion happens in `build()`.
 *
 * Two output styles:
 * - `exporter`: what native's manual `AtifExporter.exportJson()` returns
 *   (struct field order, compact JSON, no root `extra`).
 * - `plugin-host`: the file native's observability plugin writes per root
 *   scope (every key sorted, pretty JSON, `extra.nemo_relay` and
 *   `extra.observed_events`, agent `tool_definitions`/`extra` from config).
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { AtifAgent, AtifTrajectory } from './types.ts';
import { convertEvents, toConvEvents } from './convert/index.ts';
import type { AtofEvent } from '../atof/types.ts';
import { sortJson, toRustJson, type FieldTypes, type NumberFieldType } from '../native-text.ts';

/** Which writer to match: `exporter` (the ATIF exporter the plugin uses) or `plugin-host` (native's plugins.toml file). */
export type AtifBuilderStyle = 'exporter' | 'plugin-host';

/** Options of `AtifBuilder`. */
export interface AtifBuilderOptions {
  /**
   * `exporter` style: the document's `session_id` (native's `AtifExporter`
   * argument). `plugin-host` style: the root scope when `rootUuid` is not
   * given (older callers).
   */
  sessionId?: string;
  /**
   * `plugin-host` style: the uuid of the root scope the file is for. The
   * document's `trajectory_id` is this uuid; its `session_id` and
   * `extra.nemo_relay.session_instance_id` become the root start event's
   * `propagation_root_uuid` (the root's own uuid for an Agent root, the
   * scope stack's implicit root for a root-level turn scope), and
   * `extra.nemo_relay` takes the logical ids from its metadata, exactly as
   * native writes them. Default: `trajectoryId`, then `sessionId`.
   */
  rootUuid?: string;
  /** The document's `trajectory_id`. Default: `rootUuid`, then `sessionId`. */
  trajectoryId?: string;
  /** Written as `agent.name`. */
  agentName: string;
  /** Written as `agent.version`. */
  agentVersion: string;
  /** `agent.model_name`; omitted when undefined. */
  modelName?: string;
  /**
   * `exporter` = native manual `AtifExporter` (struct field order, no root extra);
   * `plugin-host` = native plugin-managed file (keys sorted, `extra.nemo_relay` and
   * `extra.observed_events`, `agent.tool_definitions`/`agent.extra` from config).
   * Default `exporter`.
   */
  style?: AtifBuilderStyle;
  /** `agent.tool_definitions` (plugin-host config passthrough). */
  toolDefinitions?: Json[];
  /** `agent.extra` (plugin-host config passthrough). */
  extra?: JsonObject;
}

/** Collects ATOF events and turns them into an ATIF trajectory on demand. */
export class AtifBuilder {
  readonly #options: AtifBuilderOptions;
  #events: AtofEvent[] = [];

  /** Starts an empty trajectory. */
  constructor(options: AtifBuilderOptions) {
    this.#options = options;
  }

  /** Records one event. O(1): the event is kept by reference and must not be mutated afterwards. */
  add(event: AtofEvent): void {
    this.#events.push(event);
  }

  /** Events recorded so far. */
  get size(): number {
    return this.#events.length;
  }

  /** Forgets every recorded event (native's `AtifExporter.clear()`). */
  clear(): void {
    this.#events = [];
  }

  /**
   * The trajectory for everything recorded so far; callable repeatedly and
   * while scopes are still open. Payload objects are shared with the
   * recorded events: treat the result as read-only.
   */
  build(): AtifTrajectory {
    const options = this.#options;
    const pluginHost = options.style === 'plugin-host';
    const agent: AtifAgent = { name: options.agentName, version: options.agentVersion };
    if (options.modelName !== undefined) agent.model_name = options.modelName;
    if (pluginHost && options.toolDefinitions !== undefined) agent.tool_definitions = options.toolDefinitions;
    if (pluginHost && options.extra !== undefined) agent.extra = options.extra;
    const rootUuid = options.rootUuid ?? options.trajectoryId ?? options.sessionId ?? '';
    const root = pluginHost ? this.#startOf(rootUuid) : undefined;
    const propagationRoot = root?.propagation_root_uuid;
    const sessionId = typeof propagationRoot === 'string' ? propagationRoot : (options.sessionId ?? rootUuid);
    const trajectory = convertEvents(sessionId, agent, toConvEvents(this.#events));
    trajectory.trajectory_id = options.trajectoryId ?? (pluginHost ? rootUuid : (options.sessionId ?? ''));
    if (!pluginHost) return trajectory;
    trajectory.extra = { nemo_relay: relayCorrelation(root, sessionId), observed_events: this.#events as unknown as Json[] };
    return sortJson(trajectory as unknown as Json) as unknown as AtifTrajectory;
  }

  /** The start event of the scope `uuid`. */
  #startOf(uuid: string): AtofEvent | undefined {
    return this.#events.find((event) => event.kind === 'scope' && event.uuid === uuid && event.scope_category === 'start');
  }

  /** The trajectory as native writes it: compact for `exporter`, pretty with sorted keys for `plugin-host`. */
  toJson(): string {
    return serializeTrajectory(this.build(), this.#options.style ?? 'exporter');
  }
}

/** `extra.nemo_relay`: the logical session and user ids from the root scope's metadata, and the session instance. */
function relayCorrelation(root: AtofEvent | undefined, sessionInstanceId: string): JsonObject {
  const metadata = root?.metadata;
  const read = (key: string): Json | undefined =>
    typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? metadata[key] : undefined;
  const correlation: JsonObject = {};
  const sessionId = read('session_id');
  if (typeof sessionId === 'string') correlation.session_id = sessionId;
  correlation.session_instance_id = sessionInstanceId;
  const userId = read('user_id');
  if (typeof userId === 'string') correlation.user_id = userId;
  return correlation;
}

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

/** Serializes a trajectory in native's text form for the given style. */
export function serializeTrajectory(trajectory: AtifTrajectory, style: AtifBuilderStyle = 'exporter'): string {
  return toRustJson(trajectory, { pretty: style === 'plugin-host', fieldTypes: TRAJECTORY_FIELD_TYPES });
}

/**
 * A filter accepting only events in the scope subtree rooted at `rootUuid`:
 * the root's own events and any event whose parent chain reaches it.
 * Events must arrive in emission order (a scope's start before its children).
 */
export function createSubtreeFilter(rootUuid: string): (event: AtofEvent) => boolean {
  const members = new Set<string>([rootUuid]);
  return (event) => {
    if (event.uuid === rootUuid) return true;
    const parent = event.parent_uuid;
    if (parent === null || parent === undefined || !members.has(parent)) return false;
    if (event.kind === 'scope') members.add(event.uuid);
    return true;
  };
}
