/**
 * Which upstream a router says served a call: one reading for every adapter that sees a router's own answer.
 *
 * A router (OpenRouter, the Vercel AI Gateway) is the provider the program called; the upstream it picked, and may
 * have fallen back from, is only in what the router sent back. The trajectory keeps it as the response's `served_by`
 * and leaves `provider` the one the program called (prices are looked up by it).
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
