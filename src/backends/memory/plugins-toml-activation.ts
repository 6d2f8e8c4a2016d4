/**
 * The in-memory relay's plugin host: activates the observability component
 * of a `plugins.toml` document (ATOF file sinks and plugin-managed ATIF).
 *
 * Plugin-managed ATIF follows native:
 * - one trajectory per top-level Agent scope, or per top-level Custom scope
 *   whose metadata has `nemo_relay_scope_role: "turn"`;
 * - `session_id` is the root's propagation root (the Agent's own uuid; for a
 *   turn root, its implicit root), `trajectory_id` and the file name's
 *   `{session_id}` are the root scope's uuid;
 * - `extra.nemo_relay` carries the logical `session_id`/`user_id` from the
 *   root's start metadata and `extra.observed_events` every event of the tree;
 * - the file is written when the root ends, or at `close()` as a partial
 *   trajectory for roots still open. Going further than native, a process
 *   exit with roots still open writes their partial trajectories too.
 *
 * Remote outputs (ATOF stream sinks, ATIF storage) send from queues and
 * never hold up the relay (see `remote-outputs.ts` and `src/export/`). With
 * storage configured, as in native, a trajectory is written locally only as
 * the recovery copy of an upload that did not succeed.
 *
 * Files are written by the one trajectory-file writer (`../trajectory-files.ts`:
 * atomic, retried, listed in `outputs()`, written at exit), and never outside
 * the output folder (the template rule in
 * `formats/plugins-toml/atif-template.ts`; the resolved path is checked again
 * before writing). Failures are counted, logged and reported through
 * `outputs()`; they never reach the caller.
 *
 * @module
 */

import path from 'node:path';
import type {
  ConfigDiagnostic,
  JsonObject,
  OutputHealth,
  PluginConfigActivation,
  PluginConfigOptions,
  PluginConfigReport,
} from '../../relay/contract.ts';
import type { AtofEvent, AtofScopeEvent } from '../../formats/atof/types.ts';
import { EventTrajectory } from '../session-trajectories.ts';
import { safeLog } from '../../shared/logger.ts';
import { AtofFileWriter, defaultAtofFilename } from './atof-batcher.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { TrajectoryFiles } from '../trajectory-files.ts';
import { isConfinedRelativePath, resolveContained, UnsafePathError } from '../../shared/safe-path.ts';
import { renderFilename } from '../../formats/plugins-toml/atif-template.ts';
import { InvalidPluginConfigError } from '../../relay/errors.ts';
import { activationError, unregisteredComponent, unregisteredComponentError, validatePluginConfig, type AtifSettings } from '../../formats/plugins-toml/validate.ts';
import type { PiiRedactionSettings } from '../../formats/plugins-toml/pii-redaction.ts';
import { skippedDestination, type AtifStorageSettings } from '../../formats/plugins-toml/sinks.ts';
import type { ScopeRecord } from './records.ts';
import type { RelayCore } from './listeners.ts';
import { existingOtlpHub, otlpHubOf } from '../../export/otlp/index.ts';
import { attachStreamSinks, remoteOutputsOf } from './remote-outputs.ts';
import { createRedactor, RedactionPolicyError } from '../../components/redaction/engine.ts';
import { LOCAL_MODEL_UNAVAILABLE } from '../../formats/plugins-toml/pii-redaction.ts';
import { PriceBook } from '../../components/pricing/price-book.ts';
import { ResponseCache } from '../../components/cache/response-cache.ts';
import type { CostOf } from '../../export/otlp/mappings/types.ts';
import type { LlmCallPricer } from '../../formats/atif/types.ts';
import { createAtifStorage, type AtifStorage, type AtifUpload } from '../../export/storage/storage.ts';
import { installCommand, missingPackages, packagesNeeded } from '../../export/packages.ts';
import { detectRuntime } from '../../shared/js-runtime.ts';
import type { ObservabilitySettings } from '../../formats/plugins-toml/observability-settings.ts';
import type { RetryPolicy } from '../../shared/retry.ts';
import { SliceRunner } from '../../shared/slices.ts';

/** A trajectory whose write failed is tried again, 200 ms doubling to 5 s, until it lands or the activation closes. */
const ATIF_FILE_RETRY: RetryPolicy = { maxRetries: Number.POSITIVE_INFINITY, initialDelayMs: 200, maxDelayMs: 5000 };

/** A live activation as the relay holds it. */
export interface PluginHost {
  readonly activation: MemoryPluginActivation;
  outputs(): OutputHealth[];
  /** Settles when every trajectory whose root has ended is written (or handed to its storage). */
  flush(): Promise<void>;
}

/** The activation handle: the contract's, its `isActive` always there. */
export interface MemoryPluginActivation extends PluginConfigActivation {
  /** Whether the activation still runs (false once closed). */
  readonly isActive: boolean;
}

/**
 * The relay's remote outputs (OTLP destinations, stream sinks, ATIF
 * storage), which outlive each activation: the relay reaches them through
 * these, and only once this module is loaded (by the first activation), so
 * a relay that never reads a plugins.toml never loads the senders.
 */
export const remoteOutputs = {
  async flush(core: RelayCore): Promise<void> {
    await Promise.all([remoteOutputsOf(core).flush(), existingOtlpHub(core)?.flush()]);
  },
  /** Sends what is left within `budgetMs`; what is still pending then is counted (uploads kept locally) before this returns. */
  async shutdown(core: RelayCore, budgetMs = Number.POSITIVE_INFINITY): Promise<void> {
    await Promise.all([existingOtlpHub(core)?.shutdown(budgetMs), remoteOutputsOf(core).settle(budgetMs)]);
  },
  outputs(core: RelayCore): OutputHealth[] {
    return [...(existingOtlpHub(core)?.outputs() ?? []), ...remoteOutputsOf(core).outputs()];
  },
};

/**
 * Validates `document` and starts its observability component. Throws
 * `InvalidPluginConfigError` (native's message) when it has errors.
 */
export function activatePluginConfig(
  core: RelayCore,
  document: JsonObject,
  options: PluginConfigOptions | undefined,
  onClosed: () => void,
): PluginHost {
  const validation = validatePluginConfig(document);
  // Errors about one stream sink or storage entry only skip that destination (native rejects the document).
  const skipped = new Set(validation.observability?.skipped ?? []);
  const error = activationError({ ...validation, diagnostics: validation.diagnostics.filter((d) => !skipped.has(d)) });
  if (error !== null) throw new InvalidPluginConfigError(error, validation.diagnostics);
  // A kind no relay registers is refused at activation, as native refuses it (its validation only warns).
  const unregistered = unregisteredComponent(document);
  if (unregistered !== null) throw new InvalidPluginConfigError(unregisteredComponentError(unregistered), validation.diagnostics);
  const diagnostics: ConfigDiagnostic[] = validation.diagnostics.map((d) => (skipped.has(d) ? skippedDestination(d, document) : d));
  // Redaction first: a component that cannot run rejects the document before any file is opened (fail closed).
  const redactor = redactorFor(core, validation.piiRedaction ?? null, validation.diagnostics);
  const settings = validation.observability;
  if (settings !== null) diagnostics.push(...missingPackageDiagnostics(settings));
  // Costs: a response's own reported cost always; the catalogs' estimates with a pricing component.
  const prices = PriceBook.of(validation.pricing ?? { catalogs: [] });
  const writers: AtofFileWriter[] = [];
  const detach: (() => void)[] = [];
  if (redactor !== null) detach.push(core.addEventTransform(redactor, 'component'));
  const responseCache = validation.adaptive?.responseCache;
  if (responseCache != null) {
    // A fresh cache per activation (native's in-memory store lives as long as its activation).
    core.responseCache = new ResponseCache(responseCache, validation.pricing ? { prices } : {});
    detach.push(() => {
      core.responseCache = null;
    });
  }
  let atif: PluginAtif | null = null;
  // Checked before any file is opened or stream attached: a rejected document leaves nothing behind, as in native.
  const sinkPaths = settings === null ? [] : settings.fileSinks.map((sink) => sinkPath(sink.outputDirectory, sink.filename, validation.diagnostics));
  const streams = settings === null ? null : attachStreamSinks(core, settings.streamSinks);
  if (settings !== null) {
    for (const [i, sink] of settings.fileSinks.entries()) {
      const writer = new AtofFileWriter({
        path: sinkPaths[i]!,
        mode: sink.mode,
        logger: core.logger,
      });
      writers.push(writer);
      detach.push(core.addLineSink(writer));
      const health = writer.health();
      if (health.errors > 0) {
        diagnostics.push({
          level: 'warning',
          code: 'observability.output_unavailable',
          component: 'atof',
          field: `sinks[${sink.index}]`,
          message: `ATOF file ${health.path} cannot be opened (${health.lastError ?? 'unknown error'}); events are buffered and the open is retried`,
        });
      }
    }
    // OTLP destinations live on the relay (their queues outlive this activation); this feeds them.
    const otlp = otlpHubOf(core, core.logger).activate(settings.opentelemetry, { costOf: spanCostOf(prices) });
    if (otlp !== null) {
      detach.push(core.addListener((event, top) => otlp.accept(event, top)));
      detach.push(() => otlp.close());
    }
    if (settings.atif !== null) {
      const plugin = new PluginAtif(core, settings.atif, settings.storage, validation.pricing ? prices : null);
      atif = plugin;
      detach.push(core.addListener((event, top) => plugin.accept(event, top)));
      detach.push(plugin.installExitTask());
    }
  }
  const report: PluginConfigReport = {
    diagnostics,
    configPaths: typeof options?.tomlPath === 'string' ? [options.tomlPath] : [],
  };
  let active = true;
  const activation: MemoryPluginActivation = {
    report,
    get isActive() {
      return active;
    },
    close: async () => {
      if (!active) return;
      active = false;
      atif?.closeAll();
      for (const writer of writers) writer.close();
      for (const remove of detach) remove();
      onClosed();
      // The trajectory files still being written (closeAll started them) land before the activation is closed.
      await atif?.idle();
      // Local files are done; the network gets at most each destination's timeout_millis.
      await Promise.all([streams?.close(), atif?.closeStorage()]);
    },
  };
  return {
    activation,
    flush: async () => {
      await atif?.idle();
    },
    outputs: () => {
      const out = writers.map((writer) => writer.health());
      // Stream and storage health is listed by the relay (remoteOutputsOf), across activations.
      if (atif !== null) out.push(atif.health());
      return out;
    },
  };
}

/** An LLM span's cost for the OTLP attributes: reported, or priced (a total only; none when native writes none). */
function spanCostOf(prices: PriceBook): CostOf {
  return (start, end) => {
    const cost = prices.costOf({ name: start.name, requestModel: profileModel(start) ?? profileModel(end), response: end.data });
    return cost === undefined || cost.total === undefined ? undefined : { total: cost.total, currency: cost.currency };
  };
}

/** The step pricer of plugin-managed trajectories. */
function priceLlmCall(prices: PriceBook): LlmCallPricer {
  return (call) => prices.costUsd(call, 'trajectory');
}

function profileModel(event: AtofScopeEvent): string | undefined {
  const model = event.category_profile?.model_name;
  return nonEmptyString(model);
}

/**
 * The `pii_redaction` component as an event transform, or null without one.
 * Throws `InvalidPluginConfigError` with native's registration message when
 * it cannot run (a `local_model` policy: no local backend exists here).
 */
function redactorFor(core: RelayCore, settings: PiiRedactionSettings | null, diagnostics: ConfigDiagnostic[]): ((event: AtofEvent) => AtofEvent) | null {
  if (settings === null) return null;
  if (settings.localModel) throw new InvalidPluginConfigError(LOCAL_MODEL_UNAVAILABLE, diagnostics);
  if (settings.policies.length === 0) return null;
  let reported = false;
  try {
    return createRedactor(settings, {
      onFailure: (what, error) => {
        // The part was cleared (fail closed); counted, and said once.
        core.reportRedactionFailure(what, error, reported);
        reported = true;
      },
    });
  } catch (error) {
    if (error instanceof RedactionPolicyError) throw new InvalidPluginConfigError(`registration failed: ${error.message}`, diagnostics);
    throw error;
  }
}

/**
 * One warning per optional package a destination needs and cannot import:
 * the destination still activates (its failures are counted), the files do
 * not depend on it, and the message names the command that fixes it.
 */
function missingPackageDiagnostics(settings: ObservabilitySettings): ConfigDiagnostic[] {
  return missingPackages(packagesNeeded(settings, detectRuntime())).map((pkg) => ({
    level: 'warning',
    code: 'observability.package_missing',
    field: pkg.name,
    message: `${pkg.neededBy} sends nothing: ${pkg.name} is not installed (an optional peer dependency; ATOF and ATIF files do not need it); fix: ${installCommand([pkg])}`,
  }));
}

/**
 * Where a plugins.toml file sink writes: native's rule (a confined relative
 * file path, with no link on its folder part leading out of the folder), or
 * `InvalidPluginConfigError` with native's activation message.
 */
function sinkPath(outputDirectory: string | undefined, filename: string | undefined, diagnostics: ConfigDiagnostic[]): string {
  const folder = path.resolve(outputDirectory ?? '.');
  const name = filename ?? defaultAtofFilename();
  const absolute = path.isAbsolute(name);
  const refuse = (reason?: string): never => {
    // Native's words: the path as given, then why.
    const shown = absolute ? name : `${folder}${path.sep}${name}`;
    const why = reason ?? (absolute ? `observability output '${name}' is outside configured directory '${folder}'` : 'observability output must be a confined relative file path');
    throw new InvalidPluginConfigError(`registration failed: failed to open ATOF output file ${JSON.stringify(shown)}: ${why}`, diagnostics);
  };
  if (absolute ? !isConfinedRelativePath(path.relative(folder, name)) : !isConfinedRelativePath(name)) refuse();
  try {
    return resolveContained(folder, name);
  } catch (error) {
    if (error instanceof UnsafePathError) refuse(error.message);
    // Other file-system errors are the writer's: it reports them and retries.
    return path.resolve(folder, name);
  }
}

interface OpenTrajectory {
  root: ScopeRecord;
  builder: EventTrajectory;
  /** The document's `session_id`: the root start's propagation root. */
  sessionId: string;
}

/**
 * Builds one ATIF trajectory per root and writes it (through the one
 * trajectory-file writer). A root's end does not build its trajectory
 * there and then: a long session's build (its steps, and every event it
 * observed, as text) would stop the host for as long. It is built in
 * slices on the host's thread between the host's own work (`SliceRunner`),
 * and written when done; `flush()` waits for it, closing the activation
 * and a process exit finish it at once.
 */
class PluginAtif {
  private readonly open = new Map<ScopeRecord, OpenTrajectory>();
  /** Trajectories of ended roots being built, a slice per turn of the event loop. */
  readonly builds = new SliceRunner();
  /** The process is exiting: a build finished now is kept locally, with no time for an upload. */
  private exiting = false;
  private readonly files: TrajectoryFiles<ScopeRecord>;
  private readonly directory: string;
  private readonly storage: AtifStorage | null;
  private readonly finishStorage: (() => void)[];

  constructor(
    private readonly core: RelayCore,
    private readonly settings: AtifSettings,
    storage: readonly AtifStorageSettings[] = [],
    /** Prices the agent steps (the `pricing` component), when configured. */
    private readonly prices: PriceBook | null = null,
  ) {
    this.directory = path.resolve(settings.outputDirectory ?? '.');
    // A failed write is retried until it lands or the activation closes (the exit write tries once more).
    this.files = new TrajectoryFiles({
      onError: (message) => safeLog(core.logger, 'warn', message),
      retry: ATIF_FILE_RETRY,
      maxListedFiles: 0,
    });
    this.storage =
      storage.length === 0 ? null : createAtifStorage(storage, { logger: core.logger, keepRecoveryCopy: (upload) => this.keepRecoveryCopy(upload) });
    const storageHealth = this.storage?.health.bind(this.storage);
    const ledger = remoteOutputsOf(core);
    const timeout = Math.max(0, ...storage.map((entry) => entry.timeoutMillis));
    // One flusher for all stores (the first entry's), so a flush waits for the storage once.
    // One flusher and one abandoner for all stores (the first entry's), so each runs once.
    this.finishStorage = storage.map((_, i) =>
      ledger.track(
        () => storageHealth!()[i]!,
        i === 0 ? () => this.storage!.flush(timeout) : undefined,
        i === 0 ? (reason) => this.storage!.abandon(reason) : undefined,
      ),
    );
  }

  accept(event: AtofEvent, top: ScopeRecord | null): void {
    const phase = event.kind === 'scope' ? event.scope_category : null;
    const trajectory = this.trajectoryOf(event.uuid, phase, top);
    if (trajectory === undefined) return;
    trajectory.builder.addEvent(event);
    this.afterEvent(trajectory, event.uuid, phase);
  }

  private trajectoryOf(uuid: string, phase: 'start' | 'end' | null, top: ScopeRecord | null): OpenTrajectory | undefined {
    if (top === null) return undefined;
    let trajectory = this.open.get(top);
    if (trajectory === undefined) {
      // A tree is followed from its root's start on; trees opened before the activation are not.
      if (uuid !== top.uuid || phase !== 'start' || !isTrajectoryRoot(top)) return undefined;
      trajectory = { root: top, builder: this.builderFor(top), sessionId: top.propagationRootUuid };
      this.open.set(top, trajectory);
    }
    return trajectory;
  }

  /** The root's end completes the trajectory: built in slices from now on, then written. */
  private afterEvent(trajectory: OpenTrajectory, uuid: string, phase: 'start' | 'end' | null): void {
    if (uuid === trajectory.root.uuid && phase === 'end') {
      this.open.delete(trajectory.root);
      const target = this.targetPath(trajectory.root);
      this.builds.run(
        trajectory.builder.toJsonInSlices(),
        (text) => this.deliver(trajectory, target, text, this.exiting),
        (error) => this.buildFailed(trajectory, error),
      );
    }
  }

  /** Settles when every ended root's trajectory is written (or failed, kept for a retry). */
  async idle(): Promise<void> {
    await this.builds.idle();
    await this.files.idle();
  }

  /**
   * Writes the trajectories still being built and the partial trajectories
   * of roots still open at a process exit, then the writer tries what it kept.
   */
  installExitTask(): () => void {
    // Unlike native, which then writes nothing, an exit with roots still open writes their partial trajectories.
    this.files.installExitTask(() => {
      this.exiting = true;
      this.builds.finishAll();
      this.writeOpen(true);
    });
    return () => this.files.removeExitTask();
  }

  /**
   * Finishes the trajectories being built, writes partial trajectories for
   * roots still open, and tries the trajectories whose local write failed a
   * last time.
   */
  closeAll(): void {
    this.builds.finishAll();
    this.writeOpen(false);
    this.files.retryNow();
    this.files.close();
  }

  /** At process exit there is no time for an upload: open trajectories are kept locally as recovery copies. */
  private writeOpen(atExit: boolean): void {
    const open = [...this.open.values()];
    this.open.clear();
    for (const trajectory of open) this.write(trajectory, atExit);
  }

  async closeStorage(): Promise<void> {
    try {
      await this.storage?.close();
    } finally {
      for (const finish of this.finishStorage) finish();
    }
  }

  health(): OutputHealth {
    // `dropped`: trajectories still waiting for a successful write, lost if the process ends first.
    return this.files.summary(this.directory);
  }

  private builderFor(root: ScopeRecord): EventTrajectory {
    const s = this.settings;
    return new EventTrajectory({
      rootUuid: root.uuid,
      agentName: s.agentName,
      agentVersion: s.agentVersion,
      modelName: s.modelName,
      style: 'plugin-host',
      ...(s.toolDefinitions !== undefined ? { toolDefinitions: s.toolDefinitions } : {}),
      ...(s.extra !== undefined ? { extra: s.extra } : {}),
      ...(this.prices !== null ? { priceLlmCall: priceLlmCall(this.prices) } : {}),
    });
  }

  /** Builds and writes a trajectory at once (a root still open when the activation closes or the process exits). */
  private write(trajectory: OpenTrajectory, localOnly = false): void {
    let text: string;
    try {
      text = trajectory.builder.toJson();
    } catch (error) {
      this.buildFailed(trajectory, error);
      return;
    }
    this.deliver(trajectory, this.targetPath(trajectory.root), text, localOnly);
  }

  private buildFailed(trajectory: OpenTrajectory, error: unknown): void {
    this.files.fail(`building ATIF trajectory ${trajectory.root.uuid}: ${errorMessage(error)}`, error);
  }

  /** Hands a built trajectory to its storage, or writes it. */
  private deliver(trajectory: OpenTrajectory, target: string, text: string, localOnly: boolean): void {
    const { root, sessionId } = trajectory;
    if (this.storage !== null) {
      const upload: AtifUpload = { filename: path.relative(this.directory, target).split(path.sep).join('/'), sessionId, text, localPath: target };
      // The storage keeps and retries its own uploads (and a recovery copy when they fail).
      if (localOnly) this.keepRecoveryCopy(upload);
      else this.storage.upload(upload);
      return;
    }
    // In the thread pool; idle() waits for it (flush, close), a process exit writes it at once.
    void this.files.write(root, { path: target, text });
  }

  /** Where a trajectory whose upload did not succeed is kept (owner-only, as native), or null. */
  private keepRecoveryCopy(upload: AtifUpload): string | null {
    const target = upload.localPath ?? path.join(this.directory, upload.filename);
    return this.files.writeOnce({ path: target, text: upload.text, mode: 0o600 }) ? target : null;
  }

  private targetPath(root: ScopeRecord): string {
    // The start as receivers got it: a redacted value never reaches a file name either.
    const rendered = renderFilename(this.settings.template, root.uuid, root.start.metadata);
    if (rendered.unresolved.length > 0) {
      this.files.fail(`ATIF file name: ${rendered.unresolved.join(', ')} did not resolve for root ${root.uuid}; used "unknown"`);
    }
    try {
      return resolveContained(this.directory, rendered.path);
    } catch (error) {
      // The text rule is enforced by validation; a link on the folder part is found only here.
      this.files.fail(`ATIF file name "${rendered.path}" leaves ${this.directory} (${errorMessage(error)}); using the default name`);
      return path.join(this.directory, `nemo-relay-atif-${root.uuid}.json`);
    }
  }
}

function isTrajectoryRoot(root: ScopeRecord): boolean {
  if (root.category === 'agent') return true;
  if (root.category !== 'custom') return false;
  const metadata = root.startMetadata.json;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && metadata.nemo_relay_scope_role === 'turn';
}
