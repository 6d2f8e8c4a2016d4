/**
 * A trajectory in native's text form: numbers typed per field the way serde
 * writes them, compact for the exporter style, pretty with sorted keys for
 * the plugin-host style.
 *
 * @module
 */

import type { AtifTrajectory } from './types.ts';
import { toRustJson, type FieldTypes, type NumberFieldType } from '../native-text.ts';

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

/** Serializes a trajectory in native's text form for the given style. */
export function serializeTrajectory(trajectory: AtifTrajectory, style: AtifBuilderStyle = 'exporter'): string {
  return toRustJson(trajectory, { pretty: style === 'plugin-host', fieldTypes: TRAJECTORY_FIELD_TYPES });
}
