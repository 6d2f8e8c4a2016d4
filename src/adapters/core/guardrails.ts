/**
 * A guardrail's verdict on a turn, in one encoding whichever framework ran
 * the check (the OpenAI Agents SDK's input and output guardrails,
 * LangChain's `openAIModerationMiddleware`): each verdict goes on the turn's
 * end (`on_session_end.guardrails`, ATOF's `hermes.session.end` mark), and
 * a turn a guardrail ended early, with the guardrail's own message as the
 * answer the program got, says so in its `turn_exit_reason`: no model gave
 * that answer.
 *
 * @module
 */

/** What a guardrail checked: the model's input, its output, or a tool's result. */
export type GuardrailKind = 'input' | 'output' | 'tool';

/** A guardrail's verdict as recorded at the end of its turn. */
export interface GuardrailRecord {
  readonly kind: GuardrailKind;
  readonly name: string;
  readonly tripwire_triggered: boolean;
  readonly output_info: unknown;
}

/** The `turn_exit_reason` of a completed turn a guardrail ended, its answer the guardrail's message. */
export const GUARDRAIL_TRIPPED = 'guardrail_tripped';

/**
 * The fields a turn's `on_session_end` adds for its guardrails' verdicts (none: nothing); `endedTurn` when a
 * tripped guardrail ended a turn that completes.
 */
export function guardrailTurnEnd(guardrails: readonly GuardrailRecord[], endedTurn = false): Record<string, unknown> {
  if (guardrails.length === 0) return {};
  return { ...(endedTurn ? { turn_exit_reason: GUARDRAIL_TRIPPED } : {}), guardrails };
}
