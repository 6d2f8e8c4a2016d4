
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
import { checkAdapterArguments } from '../core/arguments.ts';
import { AdapterCore } from '../core/run.ts';
import { consoleLogger, safeLog } from '../../shared/logger.ts';
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
 * The hooks an integration of ours records into, marked on it: a second install with the same hooks (a setup that
 * runs twice: a test's beforeEach without its teardown, a registry kept on globalThis across reloads) would record every run twice, its calls and
 * tokens doubled. `Symbol.for`, so that a second copy of this package in the program sees the mark too.
 */
const INSTALLED_WITH = Symbol.for('nemo-relay-hooks.ai-sdk.hooks');

/** True when the SDK's integrations list holds one of ours recording into `hooks`. */
function installedWith(hooks: HookRegistry): boolean {
  const list = (globalThis as TelemetryGlobal).AI_SDK_TELEMETRY_INTEGRATIONS;
  return Array.isArray(list) && list.some((entry) => typeof entry === 'object' && entry !== null && (entry as { [INSTALLED_WITH]?: unknown })[INSTALLED_WITH] === hooks);
}

/**
 * Registers a telemetry integration with the AI SDK (the same global list
 * `registerTelemetry()` fills) and returns the function that removes it.
 * Runs already under way finish recording; new runs are not seen; the
 * sessions the adapter kept open between runs are closed. Called again with
 * the same hooks while installed, it warns and does nothing (its own
 * uninstall does nothing either): each run is recorded once.
 */
export function instrumentAiSdk(hooks: HookRegistry, options: AiSdkAdapterOptions = {}): () => void {
  checkAdapterArguments('instrumentAiSdk', 'the first argument', hooks, options);
  if (installedWith(hooks)) {
    safeLog(options.logger ?? consoleLogger, 'warn', 'ai-sdk adapter: instrumentAiSdk was called again with the same hooks while the first is installed; this call does nothing, as every run would be recorded twice (call the function the first returned to uninstall it first)');
    return () => {};
  }
  const integration = new AiSdkTelemetry(new AdapterCore(hooks, options, 'ai-sdk'));
  Object.defineProperty(integration, INSTALLED_WITH, { value: hooks });
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
