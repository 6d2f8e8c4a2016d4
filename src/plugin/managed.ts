/**
 * Running a host call through the relay's managed execution without letting
 * the relay change what the host sees.
 *
 * Managed execution lets relay plugins (adaptive components, dynamic
 * plugins) observe and intercept the real LLM or tool call. The native relay
 * re-creates errors thrown by the wrapped call as `internal error: ...`,
 * which would defeat the host's retry classification, and it converts
 * results to JSON. So the original error and the original result are kept
 * here and handed back whenever the relay's answer is just a copy of them.
 *
 * @module
 */

import { jsonEqual } from './llm-response.ts';

export interface ManagedRun {
  /** Starts managed execution with the wrapped call; may throw synchronously. */
  start(wrapped: (input: unknown) => Promise<unknown>): Promise<unknown>;
  /** The real host call (the next middleware or the terminal). */
  callDownstream(input: unknown): unknown;
  /** Maps the relay's view of the input to what the host call takes. */
  normalizeInput(input: unknown): unknown;
  /** Shapes the host's raw result into what the relay records. */
  shapeResult(raw: unknown): unknown;
  /** The input to use when the relay cannot be used at all. */
  fallbackInput: unknown;
}

/**
 * Runs `run` and returns what the host should see:
 * - the host call's own error object when it failed, never the relay's rewrite;
 * - the host call's raw result when the relay's result is the same JSON;
 * - the host call's raw result when the relay failed after the call succeeded;
 * - a direct host call when the backend throws before it could start (fail open);
 * - the relay's error when it rejected the call without running it (a policy decision).
 */
export async function runManaged(run: ManagedRun): Promise<unknown> {
  let succeeded = false;
  let failed = false;
  let raw: unknown;
  let shaped: unknown;
  let downstreamError: unknown;

  const wrapped = async (input: unknown): Promise<unknown> => {
    try {
      raw = await run.callDownstream(run.normalizeInput(input));
    } catch (error) {
      failed = true;
      downstreamError = error;
      throw error;
    }
    succeeded = true;
    shaped = run.shapeResult(raw);
    return shaped;
  };

  let pending: Promise<unknown>;
  try {
    pending = run.start(wrapped);
  } catch {
    // The backend is broken, not deciding: the host call must still happen.
    return run.callDownstream(run.fallbackInput);
  }

  let managed: unknown;
  try {
    managed = await pending;
  } catch (relayError) {
    if (failed) throw downstreamError;
    if (succeeded) return raw;
    throw relayError;
  }
  if (succeeded && jsonEqual(managed, shaped)) return raw;
  return managed;
}
