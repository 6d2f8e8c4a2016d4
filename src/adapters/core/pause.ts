/**
 * A run that stops to wait for a person's approval of tool calls, in one
 * encoding whichever framework paused it (the OpenAI Agents SDK's
 * `interruptions`, LangChain's `humanInTheLoopMiddleware` or a tool's
 * `interrupt()`, the AI SDK's `needsApproval`). The program's call returns
 * normally, but the calls were not run and no final answer was given: a
 * later run carries the decisions. The turn therefore ends `interrupted`
 * (ATIF writes interrupted and failed turn ends, so a reader sees the
 * pause), says why, and names the calls waiting, by the ids the trajectory
 * gives those calls.
 *
 * @module
 */

/** The `turn_exit_reason` of a turn that stopped for approvals. */
export const APPROVAL_REQUIRED = 'approval_required';

/** How a paused turn ends: its status and the fields its `on_session_end` adds. */
export interface ApprovalPause {
  readonly status: 'interrupted';
  readonly turnEnd: { readonly turn_exit_reason: typeof APPROVAL_REQUIRED; readonly pending_approvals: string[] };
}

/** The end of a turn that stopped for the approval of the calls `pendingIds` (each once, in the order asked). */
export function approvalPause(pendingIds: Iterable<string>): ApprovalPause {
  return { status: 'interrupted', turnEnd: { turn_exit_reason: APPROVAL_REQUIRED, pending_approvals: [...new Set(pendingIds)] } };
}
