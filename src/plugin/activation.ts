/**
 * Activating `plugins.toml` on the backend, once per process (until
 * `shutdown()`): one activation means one warning for a rejected document,
 * one window in which calls cross the execution middleware unmanaged, and
 * no close between sessions that a failing native close could turn into
 * "every later session records nothing".
 *
 * The outcome is one value: no document, rejected (the environment's
 * exporters apply), or active (static or with dynamic plugins).
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import type { ConfigDiagnostic, JsonObject, PluginConfigActivation, RelayBackend } from '../relay/contract.ts';
import { ensureOutputDirectories } from './config/plugins-toml.ts';
import { observabilityExporterEnabled, staticPluginDocument } from '../formats/plugins-toml/document.ts';
import { validatePluginConfig } from '../formats/plugins-toml/validate.ts';
import { skippedDestination, withoutDestinations } from '../formats/plugins-toml/sinks.ts';
import type { NemoRelaySettings } from './config/settings.ts';
import { InvalidPluginConfigError } from '../relay/errors.ts';
import { errorMessage } from '../shared/error-text.ts';

export type PluginsTomlOutcome =
  | { kind: 'none' }
  | { kind: 'rejected'; diagnostics: ConfigDiagnostic[] }
  /** Closed by shutdown(): nothing is active, but status() still reports what the activation said. */
  | { kind: 'closed'; diagnostics: ConfigDiagnostic[] }
  | { kind: 'active'; activation: PluginConfigActivation; dynamic: boolean; diagnostics: ConfigDiagnostic[] };

/** Whether the settings name a document this backend can activate (else nothing waits for it). */
export function hasPluginsToml(settings: NemoRelaySettings, backend: RelayBackend): boolean {
  return settings.pluginsConfig !== null && typeof backend.initializePluginConfig === 'function';
}

/** Whether the active document writes `exporter` files itself (so the plugin does not). */
export function ownsExporter(outcome: PluginsTomlOutcome, settings: NemoRelaySettings, exporter: 'atof' | 'atif'): boolean {
  return outcome.kind === 'active' && observabilityExporterEnabled(settings.pluginsConfig, exporter);
}

/** Activates the document (with its dynamic plugins when the backend can). Never rejects. */
export async function activatePluginsToml(backend: RelayBackend, settings: NemoRelaySettings, logger: Logger): Promise<PluginsTomlOutcome> {
  const config = settings.pluginsConfig;
  if (!config || typeof backend.initializePluginConfig !== 'function') return { kind: 'none' };
  const { document, skipped } = activatableDocument(config);
  const tomlPath = settings.pluginsTomlPath || undefined;
  const options = tomlPath ? { tomlPath } : {};
  if (settings.dynamicPlugins.length > 0) {
    if (typeof backend.activateDynamicPlugins === 'function') {
      try {
        ensureOutputDirectories(document);
        const activation = await backend.activateDynamicPlugins(document, settings.dynamicPlugins, options);
        return active(activation, true, logger, skipped, sourceOf(settings));
      } catch (error) {
        safeLog(logger, 'warn', `NeMo Relay dynamic plugin activation failed; continuing with static observability only: ${errorMessage(error)}`);
      }
    } else {
      safeLog(
        logger,
        'warn',
        `NeMo Relay dynamic plugins need a backend with dynamic-plugin activation (the native backend); the ${String(backend.kind)} backend has none. Continuing with static observability only.`,
      );
    }
  }
  try {
    ensureOutputDirectories(document);
    return active(await backend.initializePluginConfig(document, options), false, logger, skipped, sourceOf(settings));
  } catch (error) {
    return rejected(error, tomlPath, logger);
  }
}

function rejected(error: unknown, tomlPath: string | undefined, logger: Logger): PluginsTomlOutcome {
  safeLog(
    logger,
    'warn',
    `NeMo Relay rejected plugins.toml${tomlPath ? ` (${tomlPath})` : ''}; falling back to the environment's exporters: ${errorMessage(error)}`,
  );
  return { kind: 'rejected', diagnostics: diagnosticsOf(error) };
}

/**
 * The activation done synchronously, when the backend can (no dynamic
 * plugins, `initializePluginConfigSync`), or undefined: then only
 * `activatePluginsToml` can tell. Never throws.
 */
export function activatePluginsTomlNow(backend: RelayBackend, settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome | undefined {
  const config = settings.pluginsConfig;
  if (!config || settings.dynamicPlugins.length > 0 || typeof backend.initializePluginConfigSync !== 'function') return undefined;
  const { document, skipped } = activatableDocument(config);
  const tomlPath = settings.pluginsTomlPath || undefined;
  try {
    ensureOutputDirectories(document);
    return active(backend.initializePluginConfigSync(document, tomlPath ? { tomlPath } : {}), false, logger, skipped, sourceOf(settings));
  } catch (error) {
    return rejected(error, tomlPath, logger);
  }
}

/**
 * Closes an active document (shutdown): flushes its subscribers, lets the
 * caller read the outputs' final health (`flushed`), then releases it.
 */
export async function closePluginsToml(outcome: PluginsTomlOutcome, backend: RelayBackend, flushed: () => void): Promise<void> {
  if (outcome.kind !== 'active') return;
  const failures: string[] = [];
  try {
    await backend.flush();
  } catch (error) {
    failures.push(`subscriber flush failed: ${errorMessage(error)}`);
  }
  flushed();
  try {
    await outcome.activation.close();
  } catch (error) {
    failures.push(`plugin configuration close failed: ${errorMessage(error)}`);
  }
  if (failures.length > 0) throw new Error(failures.join('; '));
}

/**
 * The document a backend is given: the static part, less the remote
 * destinations whose configuration is wrong (an unset `header_env`
 * variable, an empty bucket, a URL of the wrong scheme). Native would reject
 * the whole document for one of them and record nothing; here a wrong
 * stream sink or storage entry costs only itself, on every backend, and is
 * reported as a warning. The validation is the memory relay's, which reports
 * the same diagnostics as native's.
 */
function activatableDocument(config: JsonObject): { document: JsonObject; skipped: ConfigDiagnostic[] } {
  const document = staticPluginDocument(config);
  let skipped: ConfigDiagnostic[];
  try {
    skipped = validatePluginConfig(document).observability?.skipped ?? [];
  } catch {
    return { document, skipped: [] };
  }
  if (skipped.length === 0) return { document, skipped };
  return { document: withoutDestinations(document, skipped), skipped: skipped.map((d) => skippedDestination(d, document)) };
}

/** What the warnings name as the configuration's source: the file, or the OTLP variables the plugin built a document from. */
function sourceOf(settings: NemoRelaySettings): string {
  return settings.pluginsTomlPath ? 'plugins.toml' : 'OTLP from the environment';
}

function active(activation: PluginConfigActivation, dynamic: boolean, logger: Logger, skipped: readonly ConfigDiagnostic[], source: string): PluginsTomlOutcome {
  let diagnostics: ConfigDiagnostic[] = [...skipped];
  try {
    const reported = activation.report?.diagnostics;
    if (Array.isArray(reported)) diagnostics = [...skipped, ...reported];
  } catch {
    // A report that cannot be read has nothing to say.
  }
  // Loud: a destination or output skipped because of its configuration sends or writes nothing.
  for (const diagnostic of diagnostics) safeLog(logger, 'warn', `${source}: ${diagnostic.code}: ${diagnostic.message}`);
  return { kind: 'active', activation, dynamic, diagnostics };
}

// Backends report a rejected document with `diagnostics` on their error
// (memory's InvalidPluginConfigError, native's PluginConfigError).
function diagnosticsOf(error: unknown): ConfigDiagnostic[] {
  return error instanceof InvalidPluginConfigError ? [...error.diagnostics] : [];
}
