/**
 * Content a call keeps from telemetry: `telemetry: { recordInputs: false }` or `{ recordOutputs: false }`. The SDK
 * blanks that content in every event it hands integrations (an empty `messages`, no `prompt`, an empty `text`, a tool
 * output of `undefined`) and marks each event with the flag. Written as the blanks, they read as facts: an empty
 * request became a user step holding its JSON for every model call, a tool's missing output the `"null"` of a tool
 * that returned nothing, a withheld answer an empty one. So each blank is written as a marker saying what was left
 * out and why, in the style of the media the library leaves out (`[left out: N bytes]`, shared/blobs.ts), and the
 * trajectory keeps the structure the same run has with its content recorded.
 *
 * @module
 */

import type { ResponseParts } from '../core/run.ts';
import type { ChatMessage } from '../core/shapes.ts';

/** What stands for a prompt, a conversation or a request the call kept from telemetry. */
export const INPUTS_LEFT_OUT = '[left out: recordInputs is false]';
/** What stands for an answer, a tool's outcome or a run's final text the call kept from telemetry. */
export const OUTPUTS_LEFT_OUT = '[left out: recordOutputs is false]';

/** The event's call keeps its inputs from telemetry (the SDK adds the flag to every event). */
export const hidesInputs = (event: Record<string, unknown>): boolean => event.recordInputs === false;
/** The event's call keeps its outputs from telemetry. */
export const hidesOutputs = (event: Record<string, unknown>): boolean => event.recordOutputs === false;

const FIRST: readonly ChatMessage[] = Object.freeze([Object.freeze({ role: 'user', content: INPUTS_LEFT_OUT })]);
const LATER: readonly ChatMessage[] = Object.freeze([...FIRST, Object.freeze({ role: 'assistant', content: INPUTS_LEFT_OUT })]);

/**
 * The messages of a request whose inputs were left out. The first model call of a run sent the run's input, so it is
 * one user message, the marker: the run's one user step says the prompt was not recorded. A later call sent that
 * input again and, after it, what the run added since, which begins with the model's earlier answer (then the tool
 * results): a user and an assistant message, both the marker, so the request reads as the continuation it was (its
 * last message not the user's, the rule the trajectory converter shares with native) and makes no user step of its
 * own. No ids, roles or content beyond these are claimed: the adapter was told none of them.
 */
export function leftOutMessages(laterCall: boolean): ChatMessage[] {
  return (laterCall ? LATER : FIRST).map((message) => ({ ...message }));
}

/** A response whose content was left out: its text the marker, its reasoning none; usage, model and finish stay. */
export function withOutputsLeftOut(response: ResponseParts): ResponseParts {
  const { reasoning: _reasoning, media: _media, ...rest } = response;
  return { ...rest, text: OUTPUTS_LEFT_OUT };
}
