/**
 * Reading LLM and tool payloads the way native's ATIF exporter does.
 *
 * Provider payloads arrive raw (OpenAI chat, OpenAI responses, Anthropic
 * messages, the Hermes plugin's own shape, or anything else). These readers
 * pull out the user message, the assistant message, the tool calls, the
 * token usage and the model, following native's precedence rules exactly,
 * including its quirks (each quirk is marked "native:").
 *
 * @module
 */

export { asObject } from './access.ts';
export {
  ATIF_IMAGE_MEDIA_TYPES,
  extractReasoningContent,
  extractReasoningEffort,
  extractResponseMessage,
  extractUserMessage,
  isAtifContentParts,
  unwrapLlmRequest,
} from './messages.ts';
export { requestTurnState, type TurnState } from './turn-state.ts';
export { extractToolCalls, normalizeToolArguments } from './tool-calls.ts';
export { requestModel, responseModel } from './surface.ts';
export { extractMetrics, mergeMetricsInto, orderMetrics } from './usage.ts';
export { collectCorrelationKeys, delegationToolCallId } from './correlation.ts';
