import { describe, expect, it } from 'vitest';
import { metadataOf } from '../../src/plugin/payload.ts';

/** The fields copied into relay metadata, in order: the Hermes plugin's allowlist plus the attempt/auxiliary fields later Hermes versions add. */
const METADATA_KEYS: readonly string[] = [
  'telemetry_schema_version',
  'session_id',
  'platform',
  'task_id',
  'turn_id',
  'api_request_id',
  'tool_call_id',
  'parent_session_id',
  'parent_turn_id',
  'parent_subagent_id',
  'child_session_id',
  'child_subagent_id',
  'child_role',
  'child_status',
  'provider',
  'model',
  'api_mode',
  'request_kind',
  'auxiliary_task',
  'auxiliary_call_id',
  'attempt_index',
  'attempt_reason',
  'failed_attempts',
  'status',
  'reason',
];

describe('metadataOf', () => {
  it('copies every allowlisted field, in METADATA_KEYS order, then the promoted trajectory ids', () => {
    const payload: Record<string, unknown> = { content: 'not metadata' };
    for (const key of [...METADATA_KEYS].reverse()) payload[key] = `v-${key}`;
    const metadata = metadataOf(payload);
    expect(Object.keys(metadata)).toEqual([...METADATA_KEYS, 'trajectory_id', 'parent_trajectory_id', 'child_trajectory_id']);
    for (const key of METADATA_KEYS) expect(metadata[key]).toBe(`v-${key}`);
    expect(metadata.trajectory_id).toBe('v-session_id');
    expect(metadata.parent_trajectory_id).toBe('v-parent_session_id');
    expect(metadata.child_trajectory_id).toBe('v-child_session_id');
  });

  it('skips null and undefined values but keeps falsy ones', () => {
    const metadata = metadataOf({ session_id: null, turn_id: undefined, attempt_index: 0, status: '', reason: false });
    expect(metadata).toStrictEqual({ attempt_index: 0, status: '', reason: false });
  });
});
