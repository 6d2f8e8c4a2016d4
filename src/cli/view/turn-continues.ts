/**
 * Whether a turn of an ATOF file goes on with the conversation of the turn before it rather than starting with a user
 * message: the rule by which native's converter writes no user step for it, so that `view` of the ATOF file numbers
 * turns as the trajectory does (a run resumed after a pause is the turn it resumed) and `compare` reads it so.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import type { Json } from '../../shared/json.ts';
import { extractUserMessage, requestTurnState, unwrapLlmRequest } from '../../formats/atif/payload/index.ts';
import type { ViewNode } from './model.ts';

/**
 * Whether `turn` goes on with the conversation: its first LLM request continues it (ends with tool results, as the
 * trajectory reads it: no user step; an OpenAI Agents SDK run resumed from its state after an approval); or the turn
 * has no user message of its own and its first request starts afresh with the message of the turn before it
 * (`lastMessage`): LangGraph starts a node its retryPolicy ran again afresh when a `Command` resumes it, and the
 * trajectory shows that message as a user step again, which is the turn it repeats going on (as a retry that repeats
 * it); or, with no LLM call, the turn has no user message.
 */
export function continuesConversation(turn: ViewNode, lastMessage: string | undefined): boolean {
  const first = firstLlm(turn);
  const start = first === undefined ? undefined : first.source?.start;
  const own = userMessage(turn) ?? '';
  if (isRecord(start) && start.data !== undefined && start.data !== null) {
    const request = unwrapLlmRequest(start.data as Json);
    if (requestTurnState(request) === 'continuation') return true;
    return own === '' && lastMessage !== undefined && textOf(extractUserMessage(request)) === lastMessage;
  }
  return first === undefined && own === '';
}

/** A turn's user message: its trajectory step's, or its ATOF turn start's (`user_message`). */
export function userMessage(turn: ViewNode): string | undefined {
  const source = turn.source ?? {};
  if (isRecord(source.step)) return textOf(source.step.message);
  if (isRecord(source.event) && isRecord(source.event.data)) return textOf(source.event.data.user_message);
  return undefined;
}

/** Text content: a string as it is, content parts joined, anything else as JSON. */
export function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((part) => isRecord(part) && part.type === 'text' && typeof part.text === 'string')) {
    return value.map((part) => (part as { text: string }).text).join('');
  }
  return JSON.stringify(value);
}

/** The first LLM call of a row, not a sub-agent's. */
function firstLlm(current: ViewNode): ViewNode | undefined {
  for (const child of current.children) {
    if (child.kind === 'llm') return child;
    if (child.kind === 'subagent') continue;
    const inner = firstLlm(child);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
