/**
 * Why an AI SDK run's tool loop ended, as the turn's `turn_exit_reason`.
 * ai 7 says it in the run's `onEnd` event (`stoppedBy`): a run that stopped
 * for an approval, at a `stopWhen` condition or at a tool the program answers
 * itself ends normally (no error, no abort) but gave no final answer, and a
 * reader of the turn's end must not take it for one.
 *
 * @module
 */

/** The SDK's `StoppedBy` values (ai/src/generate-text/stopped-by.ts) in the payload's snake_case. */
const EXIT_REASONS: Readonly<Record<string, string>> = {
  model: 'final_response',
  'stop-condition': 'stop_condition',
  'tool-without-execute': 'tool_without_execute',
  approval: 'approval_required',
};

/**
 * The `turn_exit_reason` of a completed run, or `undefined` when the SDK
 * did not say (an `ai` 7 release before `stoppedBy`, `generateObject`):
 * the turn keeps the default, `final_response`.
 */
export function exitReasonOf(stoppedBy: unknown): string | undefined {
  return typeof stoppedBy === 'string' ? EXIT_REASONS[stoppedBy] : undefined;
}
