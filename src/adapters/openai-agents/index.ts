/**
 * OpenAI Agents SDK (`@openai/agents`) adapter: `instrumentOpenAIAgents(hooks)`
 * records every agent run (the global `run()`, any `Runner`, agents used as
 * tools) as observer hooks, from the SDK's run lifecycle and the model calls
 * themselves, whatever the model (OpenAI's Responses or Chat Completions
 * models, or your own `Model`) and whether tracing is on or off.
 * See `patch.ts` for how it attaches and `run.ts` for the mapping.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import type { AdapterOptions } from '../core/options.ts';
import { Adapter } from './adapter.ts';
import { addRunSource } from './patch.ts';

export type { AdapterOptions, RunInfo, SessionScope } from '../core/options.ts';

/** Options of `instrumentOpenAIAgents`: how sessions are named and scoped, the platform label, the logger. */
export type OpenAIAgentsAdapterOptions = AdapterOptions;

/**
 * Starts recording Agents SDK runs into `hooks`. Call it once, before your
 * first run. Returns the uninstall function: runs started afterwards are not
 * recorded (runs in flight finish recording).
 */
export function instrumentOpenAIAgents(hooks: HookRegistry, options: OpenAIAgentsAdapterOptions = {}): () => void {
  checkAdapterArguments('instrumentOpenAIAgents', 'the first argument', hooks, options);
  const adapter = new Adapter(hooks, options);
  const remove = addRunSource(adapter);
  return () => {
    adapter.dispose();
    remove();
  };
}
