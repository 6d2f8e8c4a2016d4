/**
 * What a streamed answer had delivered when it stopped short of its
 * response (the program's abort, a connection that broke, an error event
 * the provider sent): the text and reasoning the program was handed, which
 * its user saw. Every adapter gives it to `ApiCall.attemptError` as the
 * failed attempt's answer, so the trajectory's step shows it beside the
 * error. One rule for every path that records a streamed call.
 *
 * @module
 */

import type { ProviderUsage } from '../../formats/usage.ts';
import type { ResponseParts } from './run.ts';
import type { CallOfTool } from './shapes.ts';

/** What a stream has handed on so far, as the adapter read it from the stream's deltas. */
export interface StreamedDeltas {
  readonly text: string;
  readonly reasoning: string;
  /** The model and response id the stream named, when it did. */
  readonly model?: string | undefined;
  readonly id?: string | undefined;
  /** The tokens the provider said the stopped response spent (Responses' `response.failed`), which the framework counts. */
  readonly usage?: ProviderUsage | undefined;
  /**
   * The tool calls whose whole block the stream had delivered, as the framework hands a finished block on (the Claude
   * Agent SDK's assistant message per block, whose call its CLI runs at once): calls the program was given, kept.
   */
  readonly toolCalls?: readonly CallOfTool[];
}

/**
 * The answer a stream cut short had delivered: its text and reasoning, the tool calls whose whole block it had handed
 * on (none from deltas: a call not finished is not one the program ran), with the tokens the provider said it spent
 * when it said; `undefined` when none of these came, and the failed attempt is an error with no response.
 */
export function deliveredAnswer(streamed: StreamedDeltas): ResponseParts | undefined {
  const toolCalls = streamed.toolCalls ?? [];
  if (streamed.text === '' && streamed.reasoning === '' && streamed.usage === undefined && toolCalls.length === 0) return undefined;
  return {
    text: streamed.text,
    toolCalls,
    ...(streamed.reasoning === '' ? {} : { reasoning: streamed.reasoning }),
    model: streamed.model,
    id: streamed.id,
    ...(streamed.usage === undefined ? {} : { usage: streamed.usage }),
  };
}
