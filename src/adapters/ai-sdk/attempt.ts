/**
 * How `aiSdkMiddleware` finds the logical model call a provider attempt
 * belongs to when `instrumentAiSdk` records the run: text runs' attempts run
 * inside `executeLanguageModelCall` (the adapters' model-call frame,
 * core/context.ts, which another framework's adapter sets too), and
 * `generateObject`/`streamObject`, which the SDK retries without telling
 * telemetry, pass the prompt array their step-start event showed.
 *
 * @module
 */

import { recordedApiCall, runInApiCall } from '../core/context.ts';
import type { ApiCall } from '../core/run.ts';

const objectCalls = new WeakMap<object, ApiCall>();

/** The call an adapter is running an attempt of (the integration's, or another framework's around this model), if any. */
export function currentAttempt(): ApiCall | undefined {
  return recordedApiCall();
}

export function runAttempt<T>(call: ApiCall, execute: () => PromiseLike<T>): Promise<T> {
  return runInApiCall(call, () => Promise.resolve(execute()));
}

/** An object run's model call, keyed by the prompt array its attempts are given. */
export function registerObjectCall(prompt: unknown, call: ApiCall): void {
  if (typeof prompt === 'object' && prompt !== null) objectCalls.set(prompt, call);
}

export function objectCallOf(prompt: unknown): ApiCall | undefined {
  return typeof prompt === 'object' && prompt !== null ? objectCalls.get(prompt) : undefined;
}
