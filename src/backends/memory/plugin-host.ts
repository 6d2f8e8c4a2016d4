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
 * Files are written atomically (a temporary file in the same folder, then a
 * rename), so a reader never sees half a trajectory, and never outside the
 * output folder (see `atif-filename.ts`; the resolved path is checked again
 * before writing). Write failures are counted, logged and reported through
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
import type { AtofEvent } from '../../formats/atof/types.ts';
import { AtifBuilder } from '../../formats/atif/builder.ts';
import { safeLog } from '../../shared/logger.ts';
import { writeFileAtomic } from '../../shared/atomic-file.ts';
import { AtofFileWriter, defaultAtofFilename } from './atof-writer.ts';
import { atExit } from '../../shared/exit-hook.ts';
import { isConfinedRelativePath, resolveContained, UnsafePathError } from '../../shared/safe-path.ts';
import { renderFilename } from '../../formats/plugins-toml/atif-template.ts';
import { InvalidPluginConfigError } from './errors.ts';
import { activationError, validatePluginConfig, type AtifSettings } from '../../formats/plugins-toml/validate.ts';
import type { ScopeRecord } from './records.ts';
import type { RelayCore } from './core.ts';

const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 5000;

/** A live activation as the relay holds it. */
export interface PluginHost {
  readonly activation: MemoryPluginActivation;
  outputs(): OutputHealth[];
}

/** The activation handle: the contract's plus native's `isActive`. */
export interface MemoryPluginActivation extends PluginConfigActivation {
  readonly isActive: boolean;
}

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
  const error = activationError(validation);
  if (error !== null) throw new InvalidPluginConfigError(error, validation.diagnostics);
  const diagnostics: ConfigDiagnostic[] = [...validation.diagnostics];
  const settings = validation.observability;
  const writers: AtofFileWriter[] = [];
  const detach: (() => void)[] = [];
  let atif: PluginAtif | null = null;
  if (settings !== null) {
    // Checked before any file is opened: a rejected document leaves nothing behind, as in native.
    const sinkPaths = settings.fileSinks.map((sink) => sinkPath(sink.outputDirectory, sink.filename, validation.diagnostics));
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
    if (settings.atif !== null) {
      const plugin = new PluginAtif(core, settings.atif);
      atif = plugin;
      detach.push(core.addListener((event, top) => plugin.accept(event, top)));
      // Unlike native, which then writes nothing, an exit with roots still open writes their partial trajectories.
      detach.push(atExit(() => plugin.closeAll()));
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
    },
  };
  return {
    activation,
    outputs: () => {
      const out = writers.map((writer) => writer.health());
      if (atif !== null) out.push(atif.health());
      return out;
    },
  };
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
  builder: AtifBuilder;
}

/** Builds and writes one ATIF file per trajectory root. */
class PluginAtif {
  private readonly open = new Map<ScopeRecord, OpenTrajectory>();
  /** Trajectories whose write failed (a full disk), written again with backoff: the newest text per root. */
  private readonly unwritten = new Map<ScopeRecord, OpenTrajectory>();
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private retryDelay = FIRST_RETRY_MS;
  private readonly directory: string;
  private bytes = 0;
  private errors = 0;
  private lastWrite: string | null = null;
  private lastError: string | undefined;

  constructor(
    private readonly core: RelayCore,
    private readonly settings: AtifSettings,
  ) {
    this.directory = path.resolve(settings.outputDirectory ?? '.');
  }

  accept(event: AtofEvent, top: ScopeRecord | null): void {
    if (top === null) return;
    let trajectory = this.open.get(top);
    if (trajectory === undefined) {
      // A tree is followed from its root's start on; trees opened before the activation are not.
      if (event.uuid !== top.uuid || event.kind !== 'scope' || event.scope_category !== 'start' || !isTrajectoryRoot(top)) return;
      trajectory = { root: top, builder: this.builderFor(top) };
      this.open.set(top, trajectory);
    }
    trajectory.builder.add(event);
    if (event.uuid === top.uuid && event.kind === 'scope' && event.scope_category === 'end') {
      this.open.delete(top);
      this.write(trajectory);
    }
  }

  /** Writes partial trajectories for roots still open, and tries the unwritten ones a last time (failures stay counted). */
  closeAll(): void {
    const open = [...this.open.values()];
    this.open.clear();
    for (const trajectory of open) this.write(trajectory);
    this.retryUnwritten();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  health(): OutputHealth {
    const health: OutputHealth = { kind: 'atif', path: this.directory, lastWrite: this.lastWrite, bytes: this.bytes, errors: this.errors };
    if (this.lastError !== undefined) health.lastError = this.lastError;
    // Trajectories still waiting for a successful write; lost if the process ends first.
    if (this.unwritten.size > 0) health.dropped = this.unwritten.size;
    return health;
  }

  private builderFor(root: ScopeRecord): AtifBuilder {
    const s = this.settings;
    return new AtifBuilder({
      rootUuid: root.uuid,
      agentName: s.agentName,
      agentVersion: s.agentVersion,
      modelName: s.modelName,
      style: 'plugin-host',
      ...(s.toolDefinitions !== undefined ? { toolDefinitions: s.toolDefinitions } : {}),
      ...(s.extra !== undefined ? { extra: s.extra } : {}),
    });
  }

  private write(trajectory: OpenTrajectory): boolean {
    const { root, builder } = trajectory;
    let target = '';
    try {
      const text = builder.toJson();
      target = this.targetPath(root);
      this.bytes += writeFileAtomic(target, text);
      this.lastWrite = new Date().toISOString();
      this.unwritten.delete(root);
      return true;
    } catch (error) {
      this.fail(`writing ATIF trajectory ${target || root.uuid}: ${error instanceof Error ? error.message : String(error)}`);
      // A full disk or EMFILE passes: keep it and write it again later instead of losing it.
      this.unwritten.set(root, trajectory);
      this.scheduleRetry();
      return false;
    }
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== null) return;
    const timer = setTimeout(() => {
      this.retryTimer = null;
      this.retryUnwritten();
      if (this.unwritten.size > 0) this.scheduleRetry();
    }, this.retryDelay);
    this.retryDelay = Math.min(MAX_RETRY_MS, this.retryDelay * 2);
    (timer as { unref?: () => void }).unref?.();
    this.retryTimer = timer;
  }

  private retryUnwritten(): void {
    const pending = [...this.unwritten.values()];
    for (const trajectory of pending) {
      if (!this.write(trajectory)) return;
    }
    if (this.unwritten.size === 0) this.retryDelay = FIRST_RETRY_MS;
  }

  private targetPath(root: ScopeRecord): string {
    const rendered = renderFilename(this.settings.template, root.uuid, root.metadata);
    if (rendered.unresolved.length > 0) {
      this.fail(`ATIF file name: ${rendered.unresolved.join(', ')} did not resolve for root ${root.uuid}; used "unknown"`);
    }
    try {
      return resolveContained(this.directory, rendered.path);
    } catch (error) {
      // The text rule is enforced by validation; a link on the folder part is found only here.
      this.fail(`ATIF file name "${rendered.path}" leaves ${this.directory} (${error instanceof Error ? error.message : String(error)}); using the default name`);
      return path.join(this.directory, `nemo-relay-atif-${root.uuid}.json`);
    }
  }

  private fail(message: string): void {
    this.errors++;
    this.lastError = message;
    safeLog(this.core.logger, 'warn', message);
  }
}

function isTrajectoryRoot(root: ScopeRecord): boolean {
  if (root.category === 'agent') return true;
  if (root.category !== 'custom') return false;
  const metadata = root.metadata;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && metadata.nemo_relay_scope_role === 'turn';
}
