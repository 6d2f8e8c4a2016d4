import { describe, expect, it } from 'vitest';
import {
  EXECUTION_MIDDLEWARE_KINDS,
  HOOK_NAMES,
  isHookName,
  isMiddlewareKind,
  MIDDLEWARE_KINDS,
  MIDDLEWARE_SCHEMA_VERSION,
  REQUEST_MIDDLEWARE_KINDS,
  TELEMETRY_SCHEMA_VERSION,
} from '../../src/hooks/names.ts';

describe('hook vocabulary', () => {
  it('lists exactly the 15 lifecycle hooks of the Hermes observer contract', () => {
    expect(HOOK_NAMES).toEqual([
      'on_session_start',
      'on_session_end',
      'on_session_finalize',
      'on_session_reset',
      'pre_llm_call',
      'post_llm_call',
      'pre_api_request',
      'post_api_request',
      'api_request_error',
      'pre_tool_call',
      'post_tool_call',
      'pre_approval_request',
      'post_approval_response',
      'subagent_start',
      'subagent_stop',
    ]);
  });

  it('recognises hook names and rejects anything else', () => {
    for (const name of HOOK_NAMES) expect(isHookName(name)).toBe(true);
    for (const value of ['on_run_start', 'transform_tool_result', 'PRE_TOOL_CALL', '', 'toString', 42, null, undefined]) {
      expect(isHookName(value)).toBe(false);
    }
  });

  it('uses the Hermes schema markers', () => {
    expect(TELEMETRY_SCHEMA_VERSION).toBe('hermes.observer.v1');
    expect(MIDDLEWARE_SCHEMA_VERSION).toBe('hermes.middleware.v1');
  });

  it('splits the four middleware kinds into request and execution kinds', () => {
    expect(REQUEST_MIDDLEWARE_KINDS).toEqual(['llm_request', 'tool_request']);
    expect(EXECUTION_MIDDLEWARE_KINDS).toEqual(['llm_execution', 'tool_execution']);
    expect([...MIDDLEWARE_KINDS].sort()).toEqual(['llm_execution', 'llm_request', 'tool_execution', 'tool_request']);
    expect(isMiddlewareKind('tool_execution')).toBe(true);
    expect(isMiddlewareKind('api_request')).toBe(false);
  });
});
