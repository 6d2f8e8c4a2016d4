/**
 * What an AI SDK provider package says of the request it sent, from a model call's result: the body it built and the
 * settings its warnings say it dropped. The `Telemetry` integration reads it from each attempt's result, the Agents
 * SDK adapter from an `aisdk()` model's result (its `providerData`); `core/sent-settings.ts` compares it with the
 * recorded request.
 *
 * @module
 */

import type { SentRequest } from '../core/sent-settings.ts';

/** The SDK's call settings a request records, by the names it records them under (Chat Completions' spelling). */
export const SETTING_NAMES: ReadonlyMap<string, string> = new Map([
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
  ['maxOutputTokens', 'max_tokens'],
  ['seed', 'seed'],
]);

/**
 * The recorded settings a provider package's warnings say it did not send: `{ type: 'unsupported', feature }` (the
 * provider spec's v3 and v4), `{ type: 'unsupported-setting', setting }` (v2). Other warnings name no setting.
 */
export function unsupportedSettings(warnings: unknown): string[] {
  if (!Array.isArray(warnings)) return [];
  const names: string[] = [];
  for (const warning of warnings) {
    if (typeof warning !== 'object' || warning === null) continue;
    const { type, feature, setting } = warning as { type?: unknown; feature?: unknown; setting?: unknown };
    const sdk = type === 'unsupported' ? feature : type === 'unsupported-setting' ? setting : undefined;
    const name = typeof sdk === 'string' ? SETTING_NAMES.get(sdk) : undefined;
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

/** A model call's result (`doGenerate`'s, or `doStream`'s before its stream is read) as what it says was sent. */
export function sentRequestOf(result: { request?: { body?: unknown }; warnings?: unknown }): SentRequest & { unsupported: string[] } {
  return { body: result.request?.body, unsupported: unsupportedSettings(result.warnings) };
}
