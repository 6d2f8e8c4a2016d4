/**
 * How `aiSdkMiddleware` finds the logical model call a provider attempt
 * belongs to when `instrumentAiSdk` records the run: text runs' attempts run
 * inside `executeLanguageModelCall` (an async-context frame), and
 * `generateObject`/`streamObject`, which the SDK retries without telling
 * telemetry, pass the prompt array their step-start event showed.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiCall } from '../core/run.ts';

const attempts = new AsyncLocalStorage<ApiCall>();
const objectCalls = new WeakMap<object, ApiCall>();

/** The call the integration is running an attempt of, if any. */
export function currentAttempt(): ApiCall | undefined {
  return attempts.getStore();
}

export function runAttempt<T>(call: ApiCall, execute: () => PromiseLike<T>): Promise<T> {
  return attempts.run(call, () => Promise.resolve(execute()));
}

/** An object run's model call, keyed by the prompt array its attempts are given. */
export function registerObjectCall(prompt: unknown, call: ApiCall): void {
  if (typeof prompt === 'object' && prompt !== null) objectCalls.set(prompt, call);
}

export function objectCallOf(prompt: unknown): ApiCall | undefined {
  return typeof prompt === 'object' && prompt !== null ? objectCalls.get(prompt) : undefined;
}
