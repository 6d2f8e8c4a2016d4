/**
 * Which logical model call the current provider attempt belongs to, so
 * `aiSdkMiddleware` can tell an attempt the integration already reports from
 * one only the middleware sees.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiCall } from '../core/run.ts';

const attempts = new AsyncLocalStorage<ApiCall>();

export function currentAttempt(): ApiCall | undefined {
  return attempts.getStore();
}

export function runAttempt<T>(call: ApiCall, execute: () => PromiseLike<T>): Promise<T> {
  return attempts.run(call, () => Promise.resolve(execute()));
}
