/**
 * Which upstream a router says served a call: one reading for every adapter that sees a router's own answer.
 *
 * A router (OpenRouter, the Vercel AI Gateway) is the provider the program called; the upstream it picked, and may
 * have fallen back from, is only in what the router sent back. The trajectory keeps it as the response's `served_by`
 * and leaves `provider` the one the program called (prices are looked up by it). The upstreams a router says it tried
 * and failed before that one, in order, are the response's `failed_upstreams`, where the router says (the AI Gateway).
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

/**
 * The upstream an OpenRouter Chat Completions completion or stream chunk names (`provider`, e.g. `Anthropic`). OpenAI
 * and other servers send no such field.
 */
export function completionServedBy(body: unknown): string | undefined {
  return isRecord(body) ? nonEmptyString(body.provider) : undefined;
}

/**
 * The provider the AI Gateway's routing says answered: `finalProvider`, the one whose attempt succeeded after any
 * fallbacks (`resolvedProvider` is the one it planned first, which a fallback leaves behind).
 */
export function gatewayServedBy(routing: unknown): string | undefined {
  return isRecord(routing) ? nonEmptyString(routing.finalProvider) : undefined;
}

/**
 * The providers the AI Gateway's routing says it tried and that failed before the one that answered, in the order it
 * tried them (`attempts` whose `success` is false; one provider twice when both of its credentials failed). Undefined
 * when none failed or the routing lists no attempts.
 */
export function gatewayFailedUpstreams(routing: unknown): string[] | undefined {
  const attempts = isRecord(routing) && Array.isArray(routing.attempts) ? routing.attempts : [];
  const failed = attempts.flatMap((attempt) => (isRecord(attempt) && attempt.success === false ? [nonEmptyString(attempt.provider) ?? '?'] : []));
  return failed.length > 0 ? failed : undefined;
}
