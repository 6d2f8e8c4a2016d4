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
import { ensureOutputDirectories, REDACTION_NOT_RUN, WITHHELD } from './config/plugins-toml.ts';
import { removeEmptyCreated } from '../shared/directory.ts';
import { namesRedaction, namesRedactionWhereNoneRuns, observabilityExporterEnabled } from '../formats/plugins-toml/document.ts';
import type { NemoRelaySettings } from './config/settings.ts';
import { InvalidPluginConfigError } from '../relay/errors.ts';
import { errorMessage } from '../shared/error-text.ts';

type DocumentChecks = typeof import('./document-checks.ts');

/** Set once `document-checks.ts` is loaded (by the first plugin that has a document); the same for every plugin after. */
let documentChecks: DocumentChecks | undefined;
let documentChecksLoading: Promise<DocumentChecks> | undefined;

/** The document checks, if loaded: then a document can be activated (and priced) synchronously. */
export function documentChecksNow(): DocumentChecks | undefined {
  return documentChecks;
}

/** Loads the document checks (once per process; a failed load is tried again next time). */
export function loadDocumentChecks(): Promise<DocumentChecks> {
  documentChecksLoading ??= import('./document-checks.ts').then(
    (module) => (documentChecks = module),
    (error: unknown) => {
      documentChecksLoading = undefined;
      throw error;
    },
  );
  return documentChecksLoading;
}

export type PluginsTomlOutcome =
  | { kind: 'none' }
  | { kind: 'rejected'; diagnostics: ConfigDiagnostic[] }
  /**
   * Rejected (or never activated) while it asks for `pii_redaction`: the
   * environment's exporters (NEMO_RELAY_HOOKS_*) would write what redaction governs, so
   * nothing is written at all (fail closed).
   */
  | { kind: 'withheld'; diagnostics: ConfigDiagnostic[] }
  /** Closed by shutdown(): nothing is active, but status() still reports what the activation said. */
  | { kind: 'closed'; diagnostics: ConfigDiagnostic[] }
  | {
      kind: 'active';
      activation: PluginConfigActivation;
      dynamic: boolean;
      diagnostics: ConfigDiagnostic[];
      /** The document the backend activated (price sources resolved). */
      document?: JsonObject;
    };

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
  if (!config) return { kind: 'none' };
  if (typeof backend.initializePluginConfig !== 'function') return cannotActivate(backend, settings, logger);
  if (namesRedactionWhereNoneRuns(config)) return redactionNotRun(settings, logger);
  // (Each await only when there is something to wait for: the activation otherwise starts synchronously, as hosts rely on.)
  const checks = documentChecks ?? (await loadDocumentChecks());
  // Price sources only the plugin can resolve become inline catalogs first (both backends price alike).
  const resolved = checks.hasResolvableSources(config) ? await checks.resolvePriceSources(config) : { document: config, diagnostics: [] };
  const { document, skipped: skippedDestinations } = checks.activatableDocument(resolved.document);
  const skipped = [...resolved.diagnostics, ...skippedDestinations];
  const tomlPath = settings.pluginsTomlPath || undefined;
  const options = tomlPath ? { tomlPath } : {};
  // Folders made for a document that is then rejected go again (when still empty): a rejected document writes nothing.
  const created: string[] = [];
  if (settings.dynamicPlugins.length > 0) {
    if (typeof backend.activateDynamicPlugins === 'function') {
      try {
        ensureOutputDirectories(document, created);
        const activation = await backend.activateDynamicPlugins(document, settings.dynamicPlugins, options);
        return { ...active(activation, true, logger, skipped, sourceOf(settings)), document } as PluginsTomlOutcome;
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
    ensureOutputDirectories(document, created);
    return { ...active(await backend.initializePluginConfig(document, options), false, logger, skipped, sourceOf(settings)), document } as PluginsTomlOutcome;
  } catch (error) {
    removeEmptyCreated(created);
    // An active document logs what it skipped (active() above); a rejected one still says which price source it left out.
    for (const diagnostic of resolved.diagnostics) safeLog(logger, 'warn', `${sourceOf(settings)}: ${diagnostic.code}: ${diagnostic.message}`);
    return rejected(error, settings, logger);
  }
}

/**
 * Whether a document that cannot be used asks for redaction: then no output
 * may be written without it. The one rule (`namesRedaction`, also applied to
 * a file that is not TOML): any component of the `pii_redaction` kind not
 * switched off with `enabled = false` asks (an `enabled` that is not a
 * boolean, `"yes"`, makes the relay reject the document, and that operator
 * meant it on), and so does a document that names the kind where the relay
 * cannot read it: `[components]` for `[[components]]`,
 * `components = "pii_redaction"`, a misspelt kind (`pii-redaction`,
 * `PII_Redaction`, which no relay registers).
 */
export function redactionRequested(settings: NemoRelaySettings): boolean {
  return settings.pluginsConfig !== null && namesRedaction(settings.pluginsConfig);
}

/**
 * What the plugin records into when the document cannot be used: the
 * environment's exporters, unless the document asks for redaction
 * (then nothing is written: fail closed).
 */
export function fallbackOutcome(settings: NemoRelaySettings, diagnostics: ConfigDiagnostic[] = []): PluginsTomlOutcome {
  if (redactionRequested(settings)) return { kind: 'withheld', diagnostics: [...diagnostics, WITHHELD] };
  return { kind: 'rejected', diagnostics };
}

function rejected(error: unknown, settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome {
  const tomlPath = settings.pluginsTomlPath || undefined;
  const where = tomlPath ? ` (${tomlPath})` : '';
  const outcome = fallbackOutcome(settings, diagnosticsOf(error));
  if (outcome.kind === 'withheld') {
    safeLog(logger, 'error', `NeMo Relay rejected plugins.toml${where}, which asks for pii_redaction: nothing is written rather than unredacted output (fail closed): ${errorMessage(error)}`);
  } else {
    // A configured plugins.toml turns the default outputs off: say when the fallback records nothing.
    const off = !settings.atofEnabled && !settings.atifEnabled ? ', which are off: nothing is recorded' : '';
    safeLog(logger, 'warn', `NeMo Relay rejected plugins.toml${where}; falling back to the environment's exporters${off}: ${errorMessage(error)}`);
  }
  return outcome;
}

/**
 * A document the relays would accept and run no redaction for, although it
 * names pii_redaction (`namesRedactionWhereNoneRuns`): not activated, and
 * nothing is written (fail closed), where native alone would activate it.
 */
function redactionNotRun(settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome {
  const where = settings.pluginsTomlPath ? ` (${settings.pluginsTomlPath})` : '';
  safeLog(logger, 'error', `NeMo Relay: plugins.toml${where} ${REDACTION_NOT_RUN.message.replace(/^plugins\.toml /, '')}; nothing is written rather than unredacted output (fail closed)`);
  return { kind: 'withheld', diagnostics: [REDACTION_NOT_RUN, WITHHELD] };
}

/**
 * The outcome when the backend cannot activate documents (no document:
 * `none`): fine, unless the document asks for redaction (then nothing is
 * written). Never throws.
 */
export function withoutActivation(backend: RelayBackend, settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome {
  return settings.pluginsConfig ? cannotActivate(backend, settings, logger) : { kind: 'none' };
}

function cannotActivate(backend: RelayBackend, settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome {
  if (!redactionRequested(settings)) return { kind: 'none' };
  safeLog(logger, 'error', `NeMo Relay: the ${String(backend.kind)} backend cannot activate plugins.toml, which asks for pii_redaction: nothing is written rather than unredacted output (fail closed)`);
  return fallbackOutcome(settings);
}

/**
 * The activation done synchronously, when the backend can (no dynamic
 * plugins, `initializePluginConfigSync`) and the document checks are
 * loaded, or undefined: then only `activatePluginsToml` can tell. Never
 * throws.
 */
export function activatePluginsTomlNow(backend: RelayBackend, settings: NemoRelaySettings, logger: Logger): PluginsTomlOutcome | undefined {
  const config = settings.pluginsConfig;
  const checks = documentChecks;
  if (!config || checks === undefined || settings.dynamicPlugins.length > 0 || typeof backend.initializePluginConfigSync !== 'function') return undefined;
  if (namesRedactionWhereNoneRuns(config)) return redactionNotRun(settings, logger);
  // A price source to resolve means waiting: the asynchronous path does it.
  if (checks.hasResolvableSources(config)) return undefined;
  const { document, skipped } = checks.activatableDocument(config);
  const tomlPath = settings.pluginsTomlPath || undefined;
  const created: string[] = [];
  try {
    ensureOutputDirectories(document, created);
    return { ...active(backend.initializePluginConfigSync(document, tomlPath ? { tomlPath } : {}), false, logger, skipped, sourceOf(settings)), document } as PluginsTomlOutcome;
  } catch (error) {
    removeEmptyCreated(created);
    return rejected(error, settings, logger);
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

/** What the warnings name as the configuration's source: the file, or the OTLP variables the plugin built a document from. */
function sourceOf(settings: NemoRelaySettings): string {
  return settings.pluginsTomlPath ? 'plugins.toml' : 'OTLP from the environment';
}

function active(activation: PluginConfigActivation, dynamic: boolean, logger: Logger, skipped: readonly ConfigDiagnostic[], source: string): PluginsTomlOutcome {
  let diagnostics: ConfigDiagnostic[] = [...skipped];
  try {
    const reported = activation.report?.diagnostics;
    // A trace endpoint kept for its logs (`sendsOnlyLogs`) is in the document the memory relay read: it says the same again.
    const said = new Set(skipped.map(diagnosticKey));
    if (Array.isArray(reported)) diagnostics = [...skipped, ...reported.filter((d) => !said.has(diagnosticKey(d)))];
  } catch {
    // A report that cannot be read has nothing to say.
  }
  // Loud: a destination or output skipped because of its configuration sends or writes nothing, and what the backend does not run.
  for (const diagnostic of diagnostics) safeLog(logger, 'warn', `${source}: ${diagnostic.code}: ${diagnostic.message}`);
  return { kind: 'active', activation, dynamic, diagnostics };
}

function diagnosticKey(d: ConfigDiagnostic): string {
  return `${d.code}\u0000${d.field ?? ''}\u0000${d.message}`;
}

// Backends report a rejected document with `diagnostics` on their error
// (memory's InvalidPluginConfigError, native's PluginConfigError).
function diagnosticsOf(error: unknown): ConfigDiagnostic[] {
  return error instanceof InvalidPluginConfigError ? [...error.diagnostics] : [];
}
