/**
 * `plugins.toml` price sources the plugin resolves before a backend sees
 * the document: `type = "genai_prices"` (optional `providers = [...]`)
 * becomes an inline catalog built from `@pydantic/genai-prices`, so native
 * and the memory relay price with the same table. When the package is not
 * installed the source is left out, with a warning saying how to add it
 * (the rest of the document, outputs included, still applies).
 *
 * @module
 */

import type { ConfigDiagnostic, JsonObject } from '../relay/contract.ts';
import { isJsonObject } from '../shared/json.ts';
import { GENAI_PRICES_PACKAGE, genaiPricesCatalog } from '../components/pricing/genai-prices.ts';
import { errorMessage } from '../shared/error-text.ts';

const SOURCE = 'genai_prices';

/** Whether the document has a source only the plugin can resolve (then activation waits for it). */
export function hasResolvableSources(document: JsonObject | null): boolean {
  return pricingSources(document).some((source) => source.type === SOURCE);
}

function pricingSources(document: JsonObject | null): JsonObject[] {
  const components = document?.components;
  if (!Array.isArray(components)) return [];
  return components.flatMap((component) => {
    if (!isJsonObject(component) || component.kind !== 'pricing' || !isJsonObject(component.config)) return [];
    const sources = component.config.sources;
    return Array.isArray(sources) ? sources.filter(isJsonObject) : [];
  });
}

/** The document with every `genai_prices` source replaced by its inline catalog (or left out, with a warning). */
export async function resolvePriceSources(document: JsonObject): Promise<{ document: JsonObject; diagnostics: ConfigDiagnostic[] }> {
  if (!hasResolvableSources(document)) return { document, diagnostics: [] };
  const diagnostics: ConfigDiagnostic[] = [];
  const components = await Promise.all(
    (document.components as unknown[]).map(async (component) => {
      if (!isJsonObject(component) || component.kind !== 'pricing' || !isJsonObject(component.config) || !Array.isArray(component.config.sources)) return component;
      const sources = await Promise.all(
        component.config.sources.map(async (source, index) => {
          if (!isJsonObject(source) || source.type !== SOURCE) return [source];
          try {
            const providers = Array.isArray(source.providers) ? source.providers.filter((p): p is string => typeof p === 'string') : undefined;
            return [{ type: 'inline', catalog: await genaiPricesCatalog(providers === undefined ? {} : { providers }) }];
          } catch (error) {
            diagnostics.push({
              level: 'warning',
              code: 'pricing.source_unavailable',
              component: 'pricing',
              field: `sources[${index}]`,
              message: `the genai_prices price source is left out (no prices from it): ${errorMessage(error)}`,
            });
            return [];
          }
        }),
      );
      return { ...component, config: { ...component.config, sources: sources.flat() } };
    }),
  );
  return { document: { ...document, components: components as JsonObject[] }, diagnostics };
}

export { GENAI_PRICES_PACKAGE };

/**
 * The document as a validator should see it, without loading anything:
 * each `genai_prices` source stands as an empty inline catalog (what it
 * becomes is valid by construction).
 */
export function withSourcesForValidation(document: JsonObject): JsonObject {
  if (!hasResolvableSources(document)) return document;
  const components = (document.components as unknown[]).map((component) => {
    if (!isJsonObject(component) || component.kind !== 'pricing' || !isJsonObject(component.config) || !Array.isArray(component.config.sources)) return component;
    const sources = component.config.sources.map((source) => (isJsonObject(source) && source.type === SOURCE ? { type: 'inline', catalog: { version: 1, entries: [] } } : source));
    return { ...component, config: { ...component.config, sources } };
  });
  return { ...document, components: components as JsonObject[] };
}
