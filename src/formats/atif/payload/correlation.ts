/**
 * Ids found in payloads: the tool call a delegated agent answers, and the
 * request/generation ids that tie two instrumentations of one LLM call.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { asObject, asString, get } from './access.ts';

const DELEGATION_PATHS: readonly (readonly string[])[] = [
  ['tool_call_id'],
  ['toolCallId'],
  ['source_call_id'],
  ['sourceCallId'],
  ['delegation_tool_call_id'],
  ['delegationToolCallId'],
  ['parent_tool_call_id'],
  ['parentToolCallId'],
  ['extra', 'tool_call_id'],
  ['extra', 'toolCallId'],
  ['extra', 'source_call_id'],
  ['extra', 'sourceCallId'],
  ['extra', 'delegation_tool_call_id'],
  ['extra', 'delegationToolCallId'],
  ['extra', 'parent_tool_call_id'],
  ['extra', 'parentToolCallId'],
];

/** The string at a path of object keys, if any. */
function stringAt(value: Json | undefined, path: readonly string[]): string | undefined {
  let current: Json | undefined = value;
  for (const key of path) {
    current = get(asObject(current), key);
    if (current === undefined) return undefined;
  }
  return asString(current);
}

/** The tool call a subagent scope was dispatched for, named in its metadata or input. */
export function delegationToolCallId(value: Json | undefined): string | undefined {
  for (const path of DELEGATION_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined) return id;
  }
  return undefined;
}

const REQUEST_ID_PATHS: readonly (readonly string[])[] = [
  ['api_call_id'],
  ['apiCallId'],
  ['request_id'],
  ['requestId'],
  ['request', 'id'],
  ['metadata', 'request_id'],
  ['metadata', 'requestId'],
  ['extra', 'api_call_id'],
  ['extra', 'apiCallId'],
  ['extra', 'request_id'],
  ['extra', 'requestId'],
  ['llm_correlation_request_id'],
];

const GENERATION_ID_PATHS: readonly (readonly string[])[] = [
  ['generation_id'],
  ['generationId'],
  ['generation', 'id'],
  ['metadata', 'generation_id'],
  ['metadata', 'generationId'],
  ['extra', 'generation_id'],
  ['extra', 'generationId'],
  ['llm_correlation_generation_id'],
];

/** Request/generation ids that identify one physical LLM request across instrumentations. */
export function collectCorrelationKeys(value: Json | undefined, keys: Set<string>): void {
  if (value === undefined) return;
  for (const path of REQUEST_ID_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined && id !== '') keys.add(`request:${id}`);
  }
  for (const path of GENERATION_ID_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined && id !== '') keys.add(`generation:${id}`);
  }
}
