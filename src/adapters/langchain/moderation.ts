/**
 * `openAIModerationMiddleware`'s verdicts, read from what LangChain tells
 * callbacks of it. The middleware calls OpenAI's moderation endpoint through
 * the model's client itself, outside any LangChain run, so neither the
 * request nor its result reaches a handler; what does is the graph node
 * each of its hooks runs as (`OpenAIModerationMiddleware.before_model`,
 * `.after_model`) and what that node returned or threw:
 *
 * - `exitBehavior: "end"`: the node returns `jumpTo: "end"` with its
 *   violation message as a new AI message, the answer the program gets.
 * - `"replace"`: the node returns the state's messages with the flagged one
 *   (same id) rewritten to the violation message.
 * - `"error"`: the node throws `OpenAIModerationError`, which carries the
 *   stage (`input`, `output`, `tool`) and the moderation result.
 *
 * A check that passed changes nothing, and a node that returned nothing may
 * have sent no request (no text to check): no verdict is read for either.
 *
 * @module
 */

import type { GuardrailKind, GuardrailRecord } from '../core/guardrails.ts';
import { toJson } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { contentText } from './messages.ts';

/** The middleware's name, which names its graph nodes (`<name>.before_model`); createAgent allows it once. */
const MIDDLEWARE = 'OpenAIModerationMiddleware';
const HOOKS = { before_model: 'input', after_model: 'output' } as const;

/** Which of the middleware's hooks a graph node named `name` runs. */
export type ModerationHook = keyof typeof HOOKS;

/** The middleware hook the chain run `name` is, if it is one. */
export function moderationHook(name: string | undefined): ModerationHook | undefined {
  if (name === undefined || !name.startsWith(`${MIDDLEWARE}.`)) return undefined;
  const hook = name.slice(MIDDLEWARE.length + 1);
  return hook === 'before_model' || hook === 'after_model' ? hook : undefined;
}

/** A verdict, and whether it ended the turn (its message the program's answer). */
export interface ModerationVerdict {
  readonly record: GuardrailRecord;
  readonly endedTurn: boolean;
}

const tripped = (kind: GuardrailKind, outputInfo: unknown): GuardrailRecord => ({ kind, name: MIDDLEWARE, tripwire_triggered: true, output_info: toJson(outputInfo) });

const messagesOf = (value: unknown): unknown[] => (isRecord(value) && Array.isArray(value.messages) ? value.messages : []);

function typeOf(message: Record<string, unknown>): string | undefined {
  try {
    if (typeof message.getType === 'function') return String((message.getType as () => unknown).call(message));
  } catch {
    // a message that cannot say its type is read by its fields
  }
  return typeof message.type === 'string' ? message.type : undefined;
}

const KIND_OF_TYPE: Readonly<Record<string, GuardrailKind>> = { human: 'input', tool: 'tool', ai: 'output' };

/**
 * The verdict of a moderation node that ended with `outputs`, having started with the state `inputs`; undefined when
 * it let the messages pass. A turn it ended (`jumpTo: "end"`) names no stage: after the model it is the model's
 * output; before it, what the middleware checked there (`endedBefore`).
 */
export function moderationVerdictOfEnd(hook: ModerationHook, inputs: unknown, outputs: unknown): ModerationVerdict | undefined {
  if (!isRecord(outputs)) return undefined;
  const messages = messagesOf(outputs).filter(isRecord);
  if (outputs.jumpTo === 'end') {
    const said = messages.at(-1);
    const kind = hook === 'before_model' ? endedBefore(messagesOf(inputs)) : HOOKS[hook];
    return said === undefined ? undefined : { record: tripped(kind, { message: contentText(said.content) }), endedTurn: true };
  }
  // "replace": a message of the state came back with the same id and the middleware's text in place of its own.
  const before = new Map<string, string>();
  for (const message of messagesOf(inputs)) if (isRecord(message) && typeof message.id === 'string') before.set(message.id, contentText(message.content));
  for (const message of messages) {
    const id = typeof message.id === 'string' ? message.id : undefined;
    const was = id === undefined ? undefined : before.get(id);
    const now = contentText(message.content);
    if (was === undefined || was === now) continue;
    return { record: tripped(KIND_OF_TYPE[typeOf(message) ?? ''] ?? HOOKS[hook], { message: now }), endedTurn: false };
  }
  return undefined;
}

/**
 * What a `before_model` check that ended the turn had flagged. The middleware checks the tool results since the
 * model's last answer first (`checkToolResults`), then your last message (`checkInput`). With tool results there, the
 * flagged text is one of them: your message was checked, and passed, before the model's first call of the turn (else
 * no tool would have run), and the same text gets the same verdict. Without any, it is your message.
 */
function endedBefore(messages: readonly unknown[]): GuardrailKind {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!isRecord(message)) continue;
    const type = typeOf(message);
    if (type === 'tool') return 'tool';
    if (type === 'ai') return 'input';
  }
  return 'input';
}

/** The verdict of a moderation node that threw `error` (`exitBehavior: "error"`); undefined for any other error. */
export function moderationVerdictOfError(hook: ModerationHook, error: unknown): ModerationVerdict | undefined {
  if (!isRecord(error) || error.name !== 'OpenAIModerationError') return undefined;
  const stage = error.stage === 'input' || error.stage === 'output' || error.stage === 'tool' ? error.stage : HOOKS[hook];
  return { record: tripped(stage, { message: String(error.message), result: error.result ?? null }), endedTurn: false };
}
