/**
 * Tool calls whose result said they failed where the framework running them
 * saw an ordinary output: an MCP result with `isError`, which the OpenAI
 * Agents SDK hands the model as text. What learns it (the Agents SDK MCP
 * options, from the result, before the SDK ends the call) reports it here,
 * and the adapter that records the call's end takes it: one table per
 * registry, by session and tool call id, so neither adapter imports the
 * other. A report nobody takes goes with the call's `post_tool_call`.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';

const reported = new WeakMap<HookRegistry, Map<string, string>>();

function keyOf(sessionId: string, toolCallId: string): string {
  return `${sessionId}\0${toolCallId}`;
}

/** The open tool call `toolCallId` of `sessionId` answered with an error whose text is `text`. */
export function reportToolFailure(hooks: HookRegistry, sessionId: string, toolCallId: string, text: string): void {
  let calls = reported.get(hooks);
  if (calls === undefined) {
    const table = new Map<string, string>();
    hooks.on('post_tool_call', (payload) => {
      if (table.size > 0 && typeof payload.session_id === 'string' && typeof payload.tool_call_id === 'string') table.delete(keyOf(payload.session_id, payload.tool_call_id));
    });
    reported.set(hooks, table);
    calls = table;
  }
  calls.set(keyOf(sessionId, toolCallId), text);
}

/** The error text reported for the call, once: undefined when none was. */
export function takeToolFailure(hooks: HookRegistry, sessionId: string, toolCallId: string): string | undefined {
  const calls = reported.get(hooks);
  if (calls === undefined || calls.size === 0) return undefined;
  const key = keyOf(sessionId, toolCallId);
  const text = calls.get(key);
  calls.delete(key);
  return text;
}
