/**
 * Why a model stopped, in one vocabulary whichever framework and provider
 * answered: the spelling of OpenAI Chat Completions' `finish_reason`, the
 * shape every adapter's response is written in (`assistant_message`, OpenAI
 * `usage`, see shapes.ts). A provider's reason becomes one of `stop`,
 * `length`, `tool_calls` or `content_filter` when Chat Completions' own
 * definition of that value covers it; any other reason (`error`, Anthropic's
 * `pause_turn`, Gemini's `MALFORMED_FUNCTION_CALL`) is kept as the framework
 * gave it, so nothing is dropped. Native's codecs read the providers the
 * same way (its Gemini codec is `geminiFinishReason`), and the OTLP
 * projections then write the conventions' terms (`tool_call`) from it, for
 * the memory relay and native alike. docs/adapters/README.md says why.
 *
 * @module
 */

import { geminiFinishReason } from '../../formats/gemini.ts';

/** Reasons spelled otherwise that mean one of Chat Completions' values. */
const CHAT_SPELLING: ReadonlyMap<string, string> = new Map([
  // Anthropic Messages `stop_reason` (the Claude Agent SDK, LangChain's ChatAnthropic).
  ['end_turn', 'stop'],
  // Chat's `stop` is "a natural stop point or a provided stop sequence".
  ['stop_sequence', 'stop'],
  ['max_tokens', 'length'],
  ['model_context_window_exceeded', 'length'],
  // Mistral's: the model's context window, not max_tokens, cut the answer.
  ['model_length', 'length'],
  ['tool_use', 'tool_calls'],
  ['refusal', 'content_filter'],
  // Amazon Bedrock Converse `stopReason`: a guardrail, or the model's own content filter, withheld the answer.
  ['guardrail_intervened', 'content_filter'],
  ['content_filtered', 'content_filter'],
  // The AI SDK's unified reasons.
  ['tool-calls', 'tool_calls'],
  ['content-filter', 'content_filter'],
  // Chat Completions' own deprecated spelling of a tool call.
  ['function_call', 'tool_calls'],
  // Cohere's `finish_reason` (v1 and v2 chat; LangChain's ChatCohere keeps v1's as `finishReason`): a natural end or a
  // stop sequence, v2's answer of tool calls, and an answer its safety filter withheld.
  ['COMPLETE', 'stop'],
  ['STOP_SEQUENCE', 'stop'],
  ['TOOL_CALL', 'tool_calls'],
  ['ERROR_TOXIC', 'content_filter'],
]);

/**
 * `reason` in Chat Completions' spelling. `calledTools`: the answer has
 * tool calls (Gemini says `STOP` for an answer of function calls, and Cohere's v1 chat `COMPLETE`; the other
 * providers say so themselves, and a forced call's `stop` stays theirs).
 */
export function chatFinishReason(reason: string | undefined, calledTools: boolean): string | undefined {
  if (reason === undefined || reason === '') return undefined;
  if ((reason === 'STOP' || reason === 'COMPLETE') && calledTools) return 'tool_calls';
  const spelled = CHAT_SPELLING.get(reason);
  if (spelled !== undefined) return spelled;
  return geminiFinishReason(reason) ?? reason;
}

/**
 * Ollama's `done_reason` (`/api/chat`) in the spelling `chatFinishReason` reads: Ollama says `stop` after an answer
 * of tool calls as after a text, where its own OpenAI-compatible endpoint says `tool_calls`, and so does this. Its
 * other reasons (`length`; `load` and `unload`, which end no generation) are kept.
 */
export function ollamaDoneReason(reason: string | undefined, calledTools: boolean): string | undefined {
  return reason === 'stop' && calledTools ? 'tool_calls' : reason;
}
