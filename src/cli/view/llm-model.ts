/**
 * The model an LLM row names, one rule for an ATOF call and an ATIF step: the model that answered (as the ATIF
 * converter writes `step.model_name`: the response's model, else the one the call's events name), and the model the
 * request asked for where that differs (`gpt-4o-2024-08-06 (asked gpt-4o)`). The asked model is read from the request
 * itself, which both files keep (the ATOF start's data, the trajectory's `extra.llm_request`), so the same call says
 * the same from either file.
 *
 * @module
 */

import { requestModel, responseModel, unwrapLlmRequest } from '../../formats/atif/payload/index.ts';
import type { Json } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

/**
 * An LLM row's model: the one that answered, with the one the request asked for after it when they differ. `request`
 * is the call's request as the ATOF start holds it or the trajectory keeps it (the body, out of its HTTP envelope).
 */
export function llmModelLabel(answered: string | undefined, request: unknown): string | undefined {
  const asked = request === undefined || request === null ? undefined : nonEmptyString(requestModel(unwrapLlmRequest(request as Json)));
  if (answered === undefined) return asked;
  return asked === undefined || asked === answered ? answered : `${answered} (asked ${asked})`;
}

const profileModel = (event: Record<string, unknown>): string | undefined => (isRecord(event.category_profile) ? nonEmptyString(event.category_profile.model_name) : undefined);

/**
 * The model that answered an ATOF LLM call, as its trajectory step names it: the response's, else the one its end's or
 * start's profile names, else its request's.
 */
export function answeringModel(start: Record<string, unknown>, end: Record<string, unknown>): string | undefined {
  return nonEmptyString(responseModel(end.data as Json | undefined)) ?? profileModel(end) ?? profileModel(start) ?? nonEmptyString(requestModel(start.data as Json | undefined));
}

/**
 * An LLM row's title, the same from either file: `LLM <model>`; the call's own name (an ATOF LLM scope's, which a
 * trajectory keeps as `extra.ancestry.function_name`: `openai.responses`, `ChatOpenAI`) only where no model is
 * known. The name is the adapter's label of the API, the same on every row of a run and different across adapters
 * for one provider: beside the model it says nothing a reader compares calls by. The detail pane keeps it.
 */
export function llmTitle(model: string | undefined, callName: unknown): string {
  return `LLM ${model ?? nonEmptyString(callName) ?? ''}`.trim();
}

/** The ATOF LLM row's model once the call ended: what answered, and what was asked where different. */
export function atofLlmModel(start: Record<string, unknown>, end: Record<string, unknown>): string | undefined {
  return llmModelLabel(answeringModel(start, end), start.data);
}
