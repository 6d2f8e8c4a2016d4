/**
 * What the plugin does with a `plugins.toml` document around its
 * activation: the destinations whose configuration is wrong taken out
 * before a backend sees it, the price sources only the plugin can resolve,
 * and the `pricing` component's price book for the plugin's own
 * trajectories.
 *
 * Loaded with the first plugin that has a document (`loadDocumentChecks`
 * in `activation.ts`), not with the package: the validator, the regular
 * expression checker `pii_redaction`'s patterns need and the price book are
 * most of the bytes the main entry would otherwise parse at import, for a
 * document most hosts do not have (bench/RESULTS.md, "The main entry's
 * import").
 *
 * @module
 */

import type { ConfigDiagnostic, JsonObject } from '../relay/contract.ts';
import type { LlmCallPricer } from '../formats/atif/types.ts';
import { enabledComponentConfig, staticPluginDocument } from '../formats/plugins-toml/document.ts';
import { validatePluginConfig } from '../formats/plugins-toml/validate.ts';
import { validatePricing } from '../formats/plugins-toml/pricing.ts';
import { skippedDestination, withoutDestinations } from '../formats/plugins-toml/sinks.ts';
import { OTEL_ENDPOINT_SKIPPED, withoutOtelEndpoints } from '../formats/plugins-toml/skipped-otel-endpoints.ts';
import { PriceBook } from '../components/pricing/price-book.ts';
import { createRedactor } from '../components/redaction/engine.ts';
import { scopeEvent } from '../formats/atof/build.ts';
import type { Json } from '../shared/json.ts';
import type { SessionIdStep } from './trajectory-name.ts';

export { hasResolvableSources, resolvePriceSources } from './price-sources.ts';

/**
 * The document a backend is given: the static part, less the remote
 * destinations whose configuration is wrong (an unset `header_env`
 * variable, an empty bucket, a URL of the wrong scheme) and the
 * OpenTelemetry endpoints the memory relay would skip. Native would reject
 * the whole document for one of them and record nothing; here a wrong
 * stream sink, storage entry or OTLP endpoint costs only itself, on every
 * backend, and is reported as a warning. The validation is the memory
 * relay's, which reports the same diagnostics as native's.
 */
export function activatableDocument(config: JsonObject): { document: JsonObject; skipped: ConfigDiagnostic[] } {
  const document = staticPluginDocument(config);
  let skipped: ConfigDiagnostic[];
  let otlp: ConfigDiagnostic[];
  try {
    const validation = validatePluginConfig(document);
    skipped = validation.observability?.skipped ?? [];
    otlp = validation.diagnostics.filter((d) => d.code === OTEL_ENDPOINT_SKIPPED);
  } catch {
    return { document, skipped: [] };
  }
  if (skipped.length === 0 && otlp.length === 0) return { document, skipped };
  return {
    document: withoutOtelEndpoints(withoutDestinations(document, skipped), otlp),
    skipped: [...skipped.map((d) => skippedDestination(d, document)), ...otlp],
  };
}

/**
 * The plugin's own trajectories are priced by the plugins.toml `pricing`
 * component too, on either backend (native prices only the trajectories
 * its plugins.toml writes).
 */
export function stepPricer(document: JsonObject | null): LlmCallPricer | undefined {
  const config = enabledComponentConfig(document, 'pricing');
  if (config === null) return undefined;
  const validated = validatePricing(config).settings;
  if (validated === null || validated.catalogs.every((c) => c.entries.length === 0)) return undefined;
  const book = PriceBook.of(validated);
  return (call) => book.costUsd(call, 'trajectory');
}

/**
 * The document's `pii_redaction` as a step of the rule that names the
 * plugin's own trajectories (`trajectory-name.ts`): its policies on a
 * session scope's start, as every output gets that start. Null without the
 * component (or with one no backend would run: the document is then
 * rejected and nothing is written).
 */
export function sessionIdRedaction(document: JsonObject | null): SessionIdStep | null {
  if (document === null) return null;
  let redact: ReturnType<typeof createRedactor>;
  try {
    const settings = validatePluginConfig(document).piiRedaction;
    if (settings === undefined || settings === null) return null;
    redact = createRedactor(settings);
  } catch {
    return null;
  }
  return (start) => {
    const out = redact(scopeEvent('start', '', null, '', start.name, 'agent', [], null, start.data as Json, start.metadata as Json, ''));
    return { name: out.name, data: out.data, metadata: out.metadata };
  };
}
