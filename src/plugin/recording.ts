/**
 * `LiveRecording`: the plugin's collaborators over one live backend, put
 * together once the backend is chosen: the session table, the recorder, the
 * trajectory writer, managed execution, and the outputs the configuration
 * opens (the plugins.toml activation, or the env-configured ATOF file).
 *
 * @module
 */

import path from 'node:path';
import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import { settleWithin } from '../shared/deadline.ts';
import type { AtofExporter, JsonObject, OutputHealth, PluginConfigActivation, RelayBackend } from '../relay/contract.ts';
import type { AtofEvent } from '../formats/atof/types.ts';
import type { ResolvedBackend } from '../backends/select.ts';
import type { PluginsTomlOutcome } from './activation.ts';
import { closePluginsToml, documentChecksNow, ownsExporter } from './activation.ts';
import { namesItsFiles, type LoadedSettings, type NemoRelaySettings } from './config/settings.ts';
import { ManagedExecution } from './managed.ts';
import { Recorder } from './span-recorder.ts';
import { SessionTable } from './sessions.ts';
import type { PluginCounters } from './status.ts';
import { TrajectoryWriter } from './trajectories.ts';
import { egressBackend, hookTransform, type RedactHook } from './egress.ts';
import type { BackgroundWork } from './background-work.ts';
import { errorMessage } from '../shared/error-text.ts';
import type { TraceContext } from '../hooks/index.ts';
import { propagationContextToJson, propagationContextToTraceparent } from '../formats/propagation.ts';
import type { LoosePayload } from './payload.ts';
import { sessionIdOf, toolKeyOf, truthy } from './payload.ts';
import { effectiveAtifTemplate } from './atif-file.ts';
import { hookAnswerStep, type SessionIdStep, type SessionStart, type TrajectoryNamer, trajectoryNamer } from './trajectory-name.ts';
import { isPlainFileName } from '../shared/safe-path.ts';

/** Kept from a shutdown's budget for the work after the backend's shutdown (retiring outputs, settling). */
const SHUTDOWN_MARGIN_MS = 50;
/** The most of a shutdown's budget kept for the backend's own shutdown (a tenth of the budget up to this). */
const BACKEND_RESERVE_MAX_MS = 250;

export interface LiveOptions {
  resolved: ResolvedBackend;
  settings: NemoRelaySettings;
  /** Which settings were given explicitly, and whether the outputs are the defaults (announced once). */
  origin: Pick<LoadedSettings, 'explicit' | 'recordingByDefault' | 'outputsByDefault' | 'profile'>;
  logger: Logger;
  counters: PluginCounters;
  work: BackgroundWork;
  sessionIdleTtlMs: number;
  maxSessions: number;
  trajectoryWriteDelayMs: number;
  /** The host's redaction hook, if any. */
  redact?: RedactHook;
  /** The host's clock, if it gave one (`createNemoRelayPlugin`'s `clock`). */
  clock?: () => number;
}

export class LiveRecording {
  readonly resolved: ResolvedBackend;
  readonly backend: RelayBackend;
  readonly sessions: SessionTable;
  readonly recorder: Recorder;
  readonly trajectories: TrajectoryWriter;
  readonly managed: ManagedExecution;
  /** The plugins.toml outcome; `none` until the activation settles (hooks queue meanwhile). */
  config: PluginsTomlOutcome = { kind: 'none' };
  /** Set once shutdown() closed the activation; its outcome and diagnostics stay for status(). */
  private configClosed = false;
  private atofExporter: AtofExporter | null = null;
  private readonly retiredOutputs = new Map<string, OutputHealth>();
  private outputsFailureReported = false;
  private announced = false;
  private contextWarned = false;

  /** Removes the host's redaction hook from a backend that runs it inside. */
  private readonly removeRedaction: (() => void) | null;
  /** The `redact` hook as a step of the trajectory-name rule, and whether the backend runs it after its own `pii_redaction`. */
  private readonly hookNameStep: SessionIdStep | null;
  private readonly hookAfterComponent: boolean;
  /** Names sessions' trajectories and, with `pii_redaction`, their scopes; null without redaction (the id names them). */
  private namer: TrajectoryNamer | null = null;
  private scopeIdNamer: TrajectoryNamer | null = null;

  constructor(private readonly options: LiveOptions) {
    const { settings, counters, logger, work } = options;
    this.resolved = options.resolved;
    const raw = options.resolved.backend;
    let reported = false;
    const onRedactFailure = (error: unknown) => {
      counters.redactionFailures += 1;
      counters.errors += 1;
      if (!reported) safeLog(logger, 'warn', `NeMo Relay redact hook failed; the event's name and payloads were recorded cleared instead (fail closed; further failures are counted in status().counters.redactionFailures): ${errorMessage(error)}`);
      reported = true;
    };
    // The hook's answer on the start of the session scope just pushed, taken once by the rule that names its trajectory.
    let answer: SessionStart | null = null;
    const agentStarted = (start: SessionStart) => void (answer = start);
    // The hook runs inside a backend that can (after its own pii_redaction), else on each call's payloads.
    const inside = options.redact !== undefined && typeof raw.addEventTransform === 'function';
    this.removeRedaction = inside ? raw.addEventTransform!(keepingAgentStarts(hookTransform(options.redact!, onRedactFailure), agentStarted)) : null;
    this.backend = egressBackend(raw, inside || options.redact === undefined ? {} : { redact: options.redact, onRedactFailure, agentStarted });
    this.hookAfterComponent = inside;
    this.hookNameStep =
      options.redact === undefined
        ? null
        : hookAnswerStep(() => {
            const taken = answer;
            answer = null;
            return taken;
          });
    this.namer = trajectoryNamer([this.hookNameStep]);
    this.trajectories = new TrajectoryWriter({
      backend: this.backend,
      settings,
      explicit: options.origin.explicit,
      profile: options.origin.profile,
      work,
      writeDelayMs: options.trajectoryWriteDelayMs,
      openSessions: () => this.sessions.live.values(),
    });
    this.sessions = new SessionTable({
      backend: this.backend,
      idleTtlMs: options.sessionIdleTtlMs,
      maxSessions: options.maxSessions,
      now: () => Date.now(),
      // With pii_redaction, the session's scope is named with the id as the component leaves it: no output gets the id from the name.
      scopeName: (sessionId, payload) => this.trajectories.scopeName(this.scopeIdNamer === null ? sessionId : this.scopeIdNamer(sessionId, ''), payload),
      trajectoryName: (sessionId, scopeName) => (this.namer === null ? sessionId : this.namer(sessionId, scopeName)),
      opened: (state, payload) => this.trajectories.attach(state, payload),
      evict: (state, reason) => this.recorder.evicted(state, reason),
      unreadableContext: (sessionName, reason) => {
        // Bad input from another process, not a failure here: said once, and the session is recorded all the same.
        if (this.contextWarned) return;
        this.contextWarned = true;
        safeLog(logger, 'warn', `NeMo Relay session ${sessionName}: its propagation_context cannot be read (${reason}); it is recorded as a session of its own, outside the caller's trace (reported once)`);
      },
    });
    this.recorder = new Recorder({
      backend: this.backend,
      sessions: this.sessions,
      trajectories: this.trajectories,
      counters,
      logger,
      // A server's session for another process's call: its spans leave now, not with the next batch (the server may be stopped first).
      exportNow: () => work.track(this.backend.flush()),
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
    });
    this.managed = new ManagedExecution({
      backend: this.backend,
      sessions: this.sessions,
      settings,
      dynamic: () => this.configActive() && this.config.kind === 'active' && this.config.dynamic,
      started: (kind, payload) => this.recorder.managedStarted(kind === 'llm_execution' ? 'llm' : 'tool', payload),
    });
  }

  /**
   * What work continuing a session, or one of its open tool calls, in
   * another process needs: its W3C `traceparent` and NeMo Relay propagation
   * context, and where the session's trajectory is written. Undefined for a
   * session (or tool call) this plugin does not have open.
   */
  traceContext(request: LoosePayload): TraceContext | undefined {
    const state = this.sessions.live.get(sessionIdOf(request));
    if (state === undefined || state.handle === null) return undefined;
    const handle = truthy(request.tool_call_id) || truthy(request.tool_name) ? state.toolSpans.get(toolKeyOf(request)) : state.handle;
    if (handle === undefined) return undefined;
    const context = typeof this.backend.propagationContext === 'function' ? this.backend.propagationContext(handle) : null;
    const answer: TraceContext = { session_id: state.trajectoryName };
    if (context !== null && context !== undefined) {
      answer.propagation = propagationContextToJson(context);
      if (context.rootUuid !== undefined) answer.traceparent = propagationContextToTraceparent(context);
    }
    const scopeUuid = handle === state.handle ? context?.parentUuid : this.backend.propagationContext?.(state.handle)?.parentUuid;
    const trajectory = this.trajectories.refOf(state, scopeUuid);
    if (trajectory !== undefined) answer.trajectory = trajectory;
    return answer;
  }

  /** Whether a plugins.toml activation is live now. */
  configActive(): boolean {
    return this.config.kind === 'active' && !this.configClosed && stillActive(this.config.activation);
  }

  /**
   * Applies the plugins.toml outcome: an active document owns the outputs
   * it enables, and the env exporters write the others; a withheld one
   * (redaction asked for and unavailable) leaves every output off.
   */
  applyConfig(outcome: PluginsTomlOutcome): void {
    this.config = outcome;
    const withheld = outcome.kind === 'withheld';
    this.trajectories.setOwnedByPluginsToml(withheld || ownsExporter(outcome, this.options.settings, 'atif'));
    const document = outcome.kind === 'active' && outcome.document !== undefined ? outcome.document : this.options.settings.pluginsConfig;
    // The checks are loaded before any outcome of a document, except at an exit that came first: then unpriced (the document never applied).
    this.trajectories.setPricer(document === null ? undefined : documentChecksNow()?.stepPricer(document));
    this.setRedactedNames(outcome.kind === 'active' ? document : null);
    // As for ATIF: the environment's ATOF file is written unless the document writes ATOF itself (a pricing-only
    // document beside NEMO_RELAY_HOOKS_ATOF_ENABLED records with the environment's file, as the settings say it will).
    if (!withheld && !ownsExporter(outcome, this.options.settings, 'atof')) this.registerAtof();
    this.announceDefaultOutputs();
  }

  /**
   * The trajectory-name rule for the redaction now configured: the active
   * document's `pii_redaction` and the host's hook, in the order the backend
   * runs them (`trajectory-name.ts`). Inside the memory relay the hook's
   * answer has the component's work in it already.
   */
  private setRedactedNames(document: JsonObject | null): void {
    const pii = document === null ? null : (documentChecksNow()?.sessionIdRedaction(document) ?? null);
    this.scopeIdNamer = trajectoryNamer([pii]);
    const hook = this.hookNameStep;
    this.namer = trajectoryNamer(hook === null ? [pii] : this.hookAfterComponent ? [hook] : [hook, pii]);
  }

  /**
   * Nobody configured an output, so the plugin records to its default
   * folder: it says where, once, so the files are never a surprise (and
   * how to turn them off). A host that configured one file output (ATIF to
   * its own folder) and not the other is told of the other alone.
   */
  private announceDefaultOutputs(): void {
    const { settings, origin, logger } = this.options;
    const byDefault = origin.outputsByDefault;
    if (!(byDefault.atof || byDefault.atif) || this.announced || this.trajectories.recordsNothing) return;
    this.announced = true;
    // With OTLP from the environment, the document built from it writes the ATOF file (see loadSettings).
    const atofWritten = byDefault.atof && (this.atofExporter !== null || (settings.atofEnabled && ownsExporter(this.config, settings, 'atof')));
    // A file that already failed to open (a folder this process may not write, Deno without --allow-write) was
    // reported: a notice that it records there would say the opposite.
    const atofPath = this.atofExporter?.path;
    if (atofWritten && atofPath !== undefined && this.outputs().some((output) => output.kind === 'atof' && output.path === atofPath && output.errors > 0)) return;
    const atof = atofWritten ? `ATOF events in ${settings.atofFilename}` : null;
    const atif = byDefault.atif && this.trajectories.atifTarget() !== null ? `one ATIF trajectory per session in ${effectiveAtifTemplate(settings.atifFilenameTemplate).split('{session_id}').join('<session id>')}` : null;
    const what = [atof, atif].filter((part) => part !== null);
    if (what.length === 0) return;
    const folder = absolute(atof !== null ? settings.atofOutputDirectory || settings.atifOutputDirectory : settings.atifOutputDirectory);
    const why = !origin.recordingByDefault
      ? `only ${byDefault.atof ? 'ATIF' : 'ATOF'} was configured, so ${byDefault.atof ? 'ATOF' : 'ATIF'} records here by default; NEMO_RELAY_HOOKS_OUTPUTS=off turns it off`
      : namesItsFiles(origin.explicit)
        ? 'no output folder was configured, so this is the default one; NEMO_RELAY_HOOKS_OUTPUTS=off turns these outputs off'
        : 'no file output was configured, so these are the defaults; NEMO_RELAY_HOOKS_OUTPUTS=off turns them off';
    safeLog(logger, 'info', `recording to ${folder}: ${what.join(', ')} (${why})`);
  }

  private registerAtof(): void {
    const { settings } = this.options;
    if (!settings.atofEnabled || this.atofExporter) return;
    // Both relays refuse it; the settings' error diagnostic has said so once already.
    if (!isPlainFileName(settings.atofFilename)) return;
    try {
      this.atofExporter = this.backend.registerAtofExporter({
        ...(settings.atofOutputDirectory ? { outputDirectory: settings.atofOutputDirectory } : {}),
        filename: settings.atofFilename,
        mode: settings.atofMode,
      });
    } catch (error) {
      // Without its ATOF file the plugin still records scopes and writes ATIF.
      this.options.work.fail(`NeMo Relay ATOF exporter could not be registered (${settings.atofFilename}); no ATOF file will be written`, error);
    }
  }

  /** Flushes the backend and the ATOF exporter; for `flush()`. */
  async flushBackend(): Promise<void> {
    await this.backend.flush();
    if (this.atofExporter) await this.atofExporter.flush();
  }

  /** Closes sessions, the plugins.toml activation, the exporters and the backend, within `deadline` (epoch ms) where it can. */
  async shutdown(deadline = Number.POSITIVE_INFINITY): Promise<void> {
    const failures: string[] = [];
    this.recorder.closeAll('runtime_shutdown');
    this.sessions.stopIdleTimer();
    await this.trajectories.drain();
    // A flush that waits on a remote destination stops at the deadline: the backend's shutdown then has the rest of the budget to count what is left.
    const budget = () => Math.max(0, deadline - Date.now() - SHUTDOWN_MARGIN_MS);
    // The waits before the backend's shutdown leave it a share of the budget: out of time, it still gives up
    // what its remote outputs hold (counting it, keeping uploads as local copies) before shutdown() returns.
    const total = deadline - Date.now();
    const reserve = Number.isFinite(total) ? Math.min(BACKEND_RESERVE_MAX_MS, Math.max(0, total / 10)) : 0;
    const waitBudget = () => Math.max(0, budget() - reserve);
    if (this.config.kind === 'active' && !this.configClosed) {
      this.configClosed = true;
      const config = this.config;
      try {
        const closing = closePluginsToml(config, this.backend, () => this.retireOutputs());
        if ((await settleWithin(closing, waitBudget())) === 'done') await closing;
      } catch (error) {
        failures.push(`plugin runtime close failed: ${errorMessage(error)}`);
      }
      this.config = { kind: 'closed', diagnostics: config.diagnostics };
    }
    try {
      const flushing = this.backend.flush();
      if ((await settleWithin(flushing, waitBudget())) === 'done') await flushing;
    } catch (error) {
      failures.push(`backend flush failed: ${errorMessage(error)}`);
    }
    await this.closeAtof();
    try {
      // What is left of the budget, less a margin for status() to be read before shutdown() returns.
      await this.backend.shutdown?.({ timeoutMs: budget() });
    } catch (error) {
      failures.push(`backend shutdown failed: ${errorMessage(error)}`);
    }
    this.trajectories.dispose();
    this.removeRedaction?.();
    if (failures.length > 0) throw new Error(failures.join('; '));
  }

  private async closeAtof(): Promise<void> {
    const exporter = this.atofExporter;
    this.atofExporter = null;
    if (!exporter) return;
    try {
      await exporter.flush();
      this.retireOutputs();
      await exporter.close();
    } catch (error) {
      safeLog(this.options.logger, 'debug', 'NeMo Relay ATOF exporter close failed', error);
    }
  }

  // A closed sink disappears from the backend's outputs(); its final health
  // stays in status(), which hosts typically log right after shutdown.
  private retireOutputs(): void {
    let outputs: OutputHealth[] = [];
    try {
      outputs = this.backend.outputs?.() ?? [];
    } catch {
      return;
    }
    if (!Array.isArray(outputs)) return;
    const kept = new Set(['atof', 'otlp-traces', 'otlp-logs']);
    for (const output of outputs) if (isOutputHealth(output) && kept.has(output.kind)) this.retiredOutputs.set(`${output.kind} ${output.path}`, { ...output });
  }

  outputs(): OutputHealth[] {
    let backendOutputs: OutputHealth[] = [];
    try {
      const reported: unknown = this.backend.outputs?.() ?? [];
      // A custom backend may return anything; status() must still answer.
      if (!Array.isArray(reported)) throw new TypeError(`expected an array, got ${typeof reported}`);
      backendOutputs = reported.filter(isOutputHealth);
      if (backendOutputs.length !== reported.length) throw new TypeError('entries without a path string were left out');
    } catch (error) {
      // status() may be polled: count every failure, say it once.
      this.options.counters.errors += 1;
      if (!this.outputsFailureReported) safeLog(this.options.logger, 'warn', `backend outputs() failed (reported once): ${errorMessage(error)}`);
      this.outputsFailureReported = true;
    }
    const live = new Set(backendOutputs.map((output) => `${output.kind} ${output.path}`));
    const retired = [...this.retiredOutputs.entries()].filter(([key]) => !live.has(key)).map(([, output]) => output);
    return [...backendOutputs, ...retired.map((health) => ({ ...health })), ...this.trajectories.outputs()];
  }
}

function absolute(folder: string): string {
  try {
    return path.resolve(folder);
  } catch {
    // No working directory to resolve against (it was deleted): the folder as configured.
    return folder;
  }
}

/** False once the backend closed the activation on its own (native, when the event loop ran dry); an unreadable answer reads as active. */
function stillActive(activation: PluginConfigActivation): boolean {
  try {
    return activation.isActive !== false;
  } catch {
    return true;
  }
}

function isOutputHealth(value: unknown): value is OutputHealth {
  return typeof value === 'object' && value !== null && typeof (value as { path?: unknown }).path === 'string';
}

/** `transform`, telling `started` what it made of each agent scope's start (the session's, which names its trajectory). */
function keepingAgentStarts(transform: (event: AtofEvent) => AtofEvent, started: (start: SessionStart) => void): (event: AtofEvent) => AtofEvent {
  return (event) => {
    const out = transform(event);
    if (out.kind === 'scope' && out.category === 'agent' && out.scope_category === 'start') started(out);
    return out;
  };
}
