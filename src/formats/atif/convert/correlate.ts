/**
 * Tool executions matched to the tool calls an LLM requested, by explicit
 * `tool_call_id` first, else by name and arguments when that is unambiguous.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { canonicalJson } from '../../native-text.ts';
import { extractToolCalls, normalizeToolArguments } from '../payload/index.ts';
import { type ConvEvent, toolCallIdOf } from './events.ts';

export function buildToolCallCorrelations(events: readonly ConvEvent[]): Map<string, string> {
  const correlations = new Map<string, string>();
  const toolStarts: ConvEvent[] = [];
  const llmEnds: ConvEvent[] = [];
  // Indexed: a once-a-build pass, where a for-of allocates an iterator result per event until it is optimized.
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as ConvEvent;
    if (event.kind !== 'scope') continue;
    if (event.phase === 'start' && event.category === 'tool') {
      const id = toolCallIdOf(event);
      if (id !== undefined) correlations.set(event.uuid, id);
      toolStarts.push(event);
    } else if (event.phase === 'end' && event.category === 'tool') {
      const id = toolCallIdOf(event);
      if (id !== undefined) correlations.set(event.uuid, id);
    } else if (event.phase === 'end' && event.category === 'llm' && event.data !== undefined) {
      llmEnds.push(event);
    }
  }
  // Only executions that end up without an id are matched by name and
  // arguments; usually there are none, and the requested calls need not be read.
  const executionsByKey = new Map<string, string[]>();
  for (let i = 0; i < toolStarts.length; i++) {
    const event = toolStarts[i] as ConvEvent;
    if (correlations.has(event.uuid) || event.data === undefined) continue;
    const key = toolMatchKey(event.name, normalizeToolArguments(event.data));
    if (key === undefined) continue;
    let group = executionsByKey.get(key);
    if (group === undefined) executionsByKey.set(key, (group = []));
    group.push(event.uuid);
  }
  if (executionsByKey.size === 0) return correlations;
  const consumed = new Set(correlations.values());
  const requestedByKey = new Map<string, string[]>();
  for (const event of llmEnds) {
    for (const call of extractToolCalls(event.data as Json) ?? []) {
      if (consumed.has(call.tool_call_id)) continue;
      const key = toolMatchKey(call.function_name, call.arguments);
      if (key === undefined) continue;
      let group = requestedByKey.get(key);
      if (group === undefined) requestedByKey.set(key, (group = []));
      group.push(call.tool_call_id);
    }
  }
  for (const [key, uuids] of executionsByKey) {
    const ids = requestedByKey.get(key);
    if (ids === undefined || ids.length !== uuids.length) continue;
    uuids.forEach((uuid, i) => correlations.set(uuid, ids[i] as string));
  }
  return correlations;
}

function toolMatchKey(name: string, args: Json): string | undefined {
  return name === '' ? undefined : `${name}\u0000${canonicalJson(args)}`;
}
