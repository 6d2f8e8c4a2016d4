/**
 * Remote destinations the plugin leaves out of a `plugins.toml` before the
 * backend activates it: a stream sink or storage entry whose configuration
 * is wrong (an unset `header_env` variable, an empty bucket, a URL of the
 * wrong scheme). Native would reject the whole document for one of them and
 * record nothing; the plugin instead activates the rest and reports each
 * skipped destination as a warning. The validation is the memory relay's,
 * which reports the same diagnostics as native's.
 *
 * @module
 */

import type { ConfigDiagnostic, JsonObject } from '../relay/contract.ts';
import { validatePluginConfig } from '../formats/plugins-toml/validate.ts';
import { skippedDestination, withoutDestinations } from '../formats/plugins-toml/sinks.ts';

export function skipBadDestinations(document: JsonObject): { document: JsonObject; skipped: ConfigDiagnostic[] } {
  let skipped: ConfigDiagnostic[];
  try {
    skipped = validatePluginConfig(document).observability?.skipped ?? [];
  } catch {
    return { document, skipped: [] };
  }
  if (skipped.length === 0) return { document, skipped };
  return { document: withoutDestinations(document, skipped), skipped: skipped.map((d) => skippedDestination(d, document)) };
}
