/**
 * Vercel AI SDK (`ai` 7) adapter: `instrumentAiSdk(hooks)` makes every
 * `generateText`, `streamText`, `generateObject`, `streamObject`,
 * `experimental_decide`, `experimental_extract` and `ToolLoopAgent` run
 * emit the observer hooks, retries, approvals and
 * sub-agents included; `aiSdkMiddleware(hooks)` reports the provider
 * attempts of one wrapped model.
 *
 * @module
 */

import { registerTelemetry, type Telemetry } from 'ai';
import type { HookRegistry } from '../../hooks/registry.ts';
import { AdapterCore } from '../core/run.ts';
import type { AdapterOptions } from '../core/options.ts';
import { trackAgentIds } from './agent-id.ts';
import { trackSteps } from './step-context.ts';
import { AiSdkTelemetry } from './telemetry.ts';

export { aiSdkMiddleware, type AiSdkMiddleware } from './middleware.ts';
export type { AdapterOptions, RunInfo, SessionScope } from '../core/options.ts';

/** Options of `instrumentAiSdk`: the session id and scope, the platform name and the logger shared by every adapter. */
export type AiSdkAdapterOptions = AdapterOptions;

interface TelemetryGlobal {
  AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[];
}

/**
 * Registers a telemetry integration with the AI SDK (the same global list
 * `registerTelemetry()` fills) and returns the function that removes it.
 * Runs already under way finish recording; new runs are not seen; the
 * sessions the adapter kept open between runs are closed.
 */
export function instrumentAiSdk(hooks: HookRegistry, options: AiSdkAdapterOptions = {}): () => void {
  const integration = new AiSdkTelemetry(new AdapterCore(hooks, options, 'ai-sdk'));
  registerTelemetry(integration as unknown as Telemetry);
  const untrackAgentIds = trackAgentIds();
  const untrackSteps = trackSteps();
  let installed = true;
  return () => {
    if (!installed) return;
    installed = false;
    untrackAgentIds();
    untrackSteps();
    integration.dispose();
    // The SDK has no unregister: `registerTelemetry` appends to this global list.
    const list = (globalThis as TelemetryGlobal).AI_SDK_TELEMETRY_INTEGRATIONS;
    const index = Array.isArray(list) ? list.indexOf(integration) : -1;
    if (index >= 0) list!.splice(index, 1);
  };
}
