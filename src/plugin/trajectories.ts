/**
 * The per-session ATIF trajectory files the plugin writes itself (the
 * `NEMO_RELAY_HOOKS_ATIF_*` settings; a plugins.toml that owns ATIF is
 * written by the backend instead).
 *
 * `atifTarget()` is the one answer to "does the plugin write ATIF?": no
 * exporter is registered, no write queued and no exit task installed
 * unless it names a folder.
 *
 * Partial writes (`on_session_end`, after every turn) are coalesced per
 * session; the final write at close replaces a pending partial one; a
 * session owes at most one write that has not started (a write requested
 * while one is queued is absorbed by it: the queued one builds the latest
 * state when it starts); writes of one session run in order so the final
 * one always wins; and at a process exit without `shutdown()` every
 * unwritten trajectory is written synchronously. The files themselves are
 * written by the one trajectory-file writer (`backends/trajectory-files.ts`:
 * atomic, retried, listed, exit write).
 *
 * @module
 */

import path from 'node:path';
import type { LlmCallPricer } from '../formats/atif/types.ts';
import type { AtifExporter, OutputHealth, RelayBackend } from '../relay/contract.ts';
import { TrajectoryFiles } from '../backends/trajectory-files.ts';
import { type AtifFileClaim, atifFileClaim, atifFilePath } from './atif-file.ts';
import { hasNoSteps } from '../formats/atif/no-steps.ts';
import type { NemoRelaySettings, SettingsProfile } from './config/settings.ts';
import type { LoosePayload } from './payload.ts';
import { truthy } from './payload.ts';
import type { SessionState } from './sessions.ts';
import { sessionScopeName } from './session-scope.ts';
import { trajectoryIdOf } from './trajectory-name.ts';
import type { BackgroundWork } from './background-work.ts';
import { stringOf } from '../shared/text.ts';
import type { RetryPolicy } from '../shared/retry.ts';
import { after } from '../shared/timers.ts';

/** ATIF files listed in `outputs()`: the first ones written are dropped beyond this. */
const MAX_LISTED_ATIF_OUTPUTS = 1_000;

/** A failed trajectory write is tried again after 200 ms, doubling to 5 s, 8 times at most. */
const ATIF_RETRY: RetryPolicy = { maxRetries: 8, initialDelayMs: 200, maxDelayMs: 5000 };

export interface AtifTarget {
  outputDirectory: string;
  filenameTemplate: string;
}

export interface TrajectoryWriterOptions {
  backend: RelayBackend;
  settings: NemoRelaySettings;
  /** Settings the host gave explicitly: those win over the names a session reports. */
  explicit: ReadonlySet<keyof NemoRelaySettings>;
  /** `hermes`: a session that reports no model gets the setting, as the Hermes plugin writes it. */
  profile: SettingsProfile;
  work: BackgroundWork;
  /** Delay that coalesces partial writes per session (ms). `0` writes at once. */
  writeDelayMs: number;
  /** The sessions still open, written at exit. */
  openSessions(): Iterable<SessionState>;
}

export class TrajectoryWriter {
  private ownedByPluginsToml = false;
  /** Prices the agent steps (set from the activated document's `pricing`, or the options'). */
  private price: LlmCallPricer | undefined;
  /** The backend records nothing (`off`): no file would hold anything. */
  readonly recordsNothing: boolean;
  private readonly exportChains = new Map<string, Promise<void>>();
  private readonly pendingPartialWrites = new Map<SessionState, ReturnType<typeof setTimeout>>();
  /** Sessions whose latest trajectory is requested but not yet on disk (a write queued or in flight). */
  private readonly unwritten = new Set<SessionState>();
  /** Sessions with a write queued in their chain that has not started: it will write their latest state. */
  private readonly owed = new Set<SessionState>();
  private readonly files: TrajectoryFiles<SessionState>;
  private exitTaskInstalled = false;

  constructor(private readonly options: TrajectoryWriterOptions) {
    this.recordsNothing = kindOf(options.backend) === 'off';
    this.files = new TrajectoryFiles({
      onError: (message) => options.work.fail('NeMo Relay', message),
      retry: ATIF_RETRY,
      maxListedFiles: MAX_LISTED_ATIF_OUTPUTS,
    });
    this.installExitTask();
  }

  /**
   * Where the plugin writes trajectories, or null when it writes none: ATIF
   * off, no output folder, a plugins.toml that owns ATIF, or a backend that
   * records nothing (an empty file per session would claim otherwise).
   */
  atifTarget(): AtifTarget | null {
    const { settings } = this.options;
    if (!settings.atifEnabled || !settings.atifOutputDirectory || this.ownedByPluginsToml || this.recordsNothing) return null;
    return { outputDirectory: settings.atifOutputDirectory, filenameTemplate: settings.atifFilenameTemplate };
  }

  /** The step pricer for sessions opened from now on (the plugins.toml `pricing` component's). */
  setPricer(price: LlmCallPricer | undefined): void {
    this.price = price;
  }

  /** An active plugins.toml that writes ATIF takes the output over (before any session opens). */
  setOwnedByPluginsToml(owned: boolean): void {
    this.ownedByPluginsToml = owned;
    if (this.atifTarget() === null) this.removeExit();
    else this.installExitTask();
  }

  /** Registers the session's ATIF exporter when the plugin writes its file. */
  attach(state: SessionState, payload: LoosePayload): void {
    if (!this.writesFileOf(state) || !state.handle) return;
    state.atifExporter = this.options.backend.registerAtifExporter({
      scope: state.handle,
      sessionId: state.trajectoryName,
      ...this.redactedIdOf(state),
      agentName: this.named('atifAgentName', payload.agent_name),
      agentVersion: this.named('atifAgentVersion', payload.agent_version),
      ...this.modelOf(payload.model),
      subagentAgents: 'own',
      turnEnds: true,
      ...(this.price !== undefined ? { priceLlmCall: this.price } : {}),
    });
  }

  /**
   * Where the session's trajectory is written, for the process that called
   * it: the file this writer writes (its path relative to the trajectory
   * folder), or for a plugins.toml that owns ATIF, the trajectory id native
   * gives it (the session scope's uuid, `scopeUuid`). Undefined when no
   * trajectory of its own is written (ATIF off, an embedded sub-agent).
   */
  refOf(state: SessionState, scopeUuid: string | undefined): { session_id?: string; trajectory_id: string; trajectory_path?: string } | undefined {
    if (this.ownedByPluginsToml) return scopeUuid === undefined ? undefined : { trajectory_id: scopeUuid };
    const target = this.atifTarget();
    if (target === null || !this.writesFileOf(state)) return undefined;
    const ref: { session_id: string; trajectory_id: string; trajectory_path?: string } = { session_id: state.trajectoryName, trajectory_id: trajectoryIdFor(state) };
    try {
      // Named before the first write too: the claim settles on the name that write will take (`atifFileClaim`).
      claimOf(state, target);
      const file = atifFilePath(target.outputDirectory, target.filenameTemplate, state.trajectoryName, state.instance);
      ref.trajectory_path = path.relative(path.resolve(target.outputDirectory), file).split(path.sep).join('/');
    } catch {
      // An unusable template: the write reports it; the id still names the trajectory.
    }
    return ref;
  }

  /**
   * A session whose id redaction changed: its `trajectory_id` is claimed now,
   * with its file's name (`~n` when the name is taken), so two sessions
   * whose ids redact alike are never joined on one id.
   */
  private redactedIdOf(state: SessionState): { trajectoryId: string } | Record<string, never> {
    if (state.trajectoryName === state.sessionId) return {};
    const target = this.atifTarget();
    try {
      if (target !== null) claimOf(state, target);
    } catch {
      // An unusable template: the write reports it.
    }
    return { trajectoryId: trajectoryIdFor(state) };
  }

  /**
   * What a session's agent scope is called. The Hermes profile keeps the
   * Hermes plugin's `hermes-session-<id>`; otherwise the scope says which
   * agent it is, `<agent name>-session-<id>`, with the same agent name as
   * the session's trajectory (`convert` reads it back from there).
   */
  scopeName(sessionId: string, payload: LoosePayload): string {
    return sessionScopeName(this.options.profile, this.named('atifAgentName', payload.agent_name), sessionId);
  }

  /**
   * A trajectory's agent name, version or model: the host's explicit
   * setting, else what the session reports (a framework adapter's agent
   * name, the provider's model), else the default.
   */
  private named(setting: 'atifAgentName' | 'atifAgentVersion' | 'atifModelName', reported: unknown): string {
    const { settings, explicit } = this.options;
    if (explicit.has(setting) || !truthy(reported)) return settings[setting];
    return stringOf(reported);
  }

  /**
   * `agent.model_name`: the host's explicit setting, else the session's
   * model, else (outside the Hermes profile) the model the first response
   * reports, falling back to the setting: frameworks often learn the model
   * only from the provider's answer.
   */
  private modelOf(reported: unknown): { modelName: string } | { fallbackModelName: string } {
    const { settings, explicit, profile } = this.options;
    if (explicit.has('atifModelName') || truthy(reported) || profile === 'hermes') return { modelName: this.named('atifModelName', reported) };
    return { fallbackModelName: settings.atifModelName };
  }

  /** An embedded child's own file is never written in embedded mode: its steps are in the parent's. */
  private writesFileOf(state: SessionState): boolean {
    if (this.atifTarget() === null) return false;
    return !state.isEmbeddedSubagent || this.options.settings.atifSubagentExportMode === 'all';
  }

  /**
   * Writes the session's trajectory file (in the background). A partial
   * write waits `writeDelayMs` and absorbs the partial writes requested
   * meanwhile: each write rebuilds the whole trajectory, so writing after
   * every turn costs the square of the session's length. The final write
   * happens at once; `flush()` and `shutdown()` run pending partial writes
   * immediately. Whatever the delay, a write requested while an earlier
   * one of the session is still queued (not started) is absorbed by it.
   */
  write(state: SessionState, kind: 'partial' | 'final'): void {
    const exporter = state.atifExporter;
    const target = this.atifTarget();
    if (!exporter || !target || !this.writesFileOf(state)) return;
    const pending = this.pendingPartialWrites.get(state);
    this.unwritten.add(state);
    if (kind === 'partial') {
      if (pending !== undefined) return;
      const delay = this.options.writeDelayMs;
      if (delay > 0) {
        // Unref'd: a pending partial write must not keep a finished host alive; ATOF has the events.
        const timer = after(delay, () => this.runPartialWrite(state));
        this.pendingPartialWrites.set(state, timer);
        return;
      }
    } else if (pending !== undefined) {
      clearTimeout(pending);
      this.pendingPartialWrites.delete(state);
    }
    this.writeNow(state, exporter, target);
  }

  /** The session closed: its final write, then its exporter is released. */
  finish(state: SessionState): void {
    const exporter = state.atifExporter;
    this.write(state, 'final');
    if (!exporter && state.atifClaim === undefined) return;
    this.chain(state, async () => {
      // Its last write has settled: a name handed out and never written is free for the rest of the process again.
      state.atifClaim?.release();
      if (exporter) await exporter.deregister();
    });
  }

  private runPartialWrite(state: SessionState): void {
    if (!this.pendingPartialWrites.delete(state)) return;
    const target = this.atifTarget();
    if (state.atifExporter && target) this.writeNow(state, state.atifExporter, target);
  }

  /** Starts every delayed partial write now, and tries the failed ones again (for `flush()`). */
  writePending(): void {
    for (const [state, timer] of [...this.pendingPartialWrites]) {
      clearTimeout(timer);
      this.runPartialWrite(state);
    }
    this.files.retryNow();
    // The retries run in the thread pool: flush() waits for them with the rest of the work.
    this.options.work.track(this.files.idle());
  }

  /** Settles when every write started so far has finished. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.exportChains.values()]);
    await this.files.idle();
  }

  /** Everything is written (or reported): no retry and no exit task is left. */
  dispose(): void {
    this.removeExit();
    this.files.close();
    this.unwritten.clear();
    this.owed.clear();
  }

  outputs(): OutputHealth[] {
    return this.files.files();
  }

  private writeNow(state: SessionState, exporter: AtifExporter, target: AtifTarget): void {
    // A queued write not started yet builds whatever the session holds when it starts: one is owed, not each version.
    if (this.owed.has(state)) return;
    this.owed.add(state);
    this.chain(state, async () => {
      this.owed.delete(state);
      try {
        const claim = claimOf(state, target);
        const file = atifFilePath(target.outputDirectory, target.filenameTemplate, state.trajectoryName, state.instance);
        // Bytes where the backend writes them directly: no string to flatten and encode again for the file.
        const text = exporter.exportBytes !== undefined ? await exporter.exportBytes() : await exporter.exportJson();
        if (this.unwritable(state, file, text)) return;
        // Awaited: the session's trajectory counts as unwritten, and flush() and drain() wait, until it is on disk.
        await this.files.write(state, { path: file, text, claim });
      } finally {
        // Written, kept for a retry, or reported; a newer write, delayed or queued, keeps it listed.
        if (!this.pendingPartialWrites.has(state) && !this.owed.has(state)) this.unwritten.delete(state);
      }
    });
  }

  /**
   * At process exit without `shutdown()`, nothing can be awaited: every open
   * session's trajectory, and every one whose write was still queued or in
   * flight, is written synchronously from what the backend has delivered
   * (`exportJsonNow`); the writer then tries the failed ones a last time.
   * The ATOF file has the events either way.
   */
  private writeAtExit(): void {
    const target = this.atifTarget();
    if (!target) return;
    // A pending partial write is always listed as unwritten too.
    const states = new Set<SessionState>([...this.options.openSessions(), ...this.unwritten]);
    for (const timer of this.pendingPartialWrites.values()) clearTimeout(timer);
    this.pendingPartialWrites.clear();
    for (const state of states) {
      const exporter = state.atifExporter;
      if (!exporter || (typeof exporter.exportJsonNow !== 'function' && typeof exporter.exportBytesNow !== 'function') || !this.writesFileOf(state)) continue;
      try {
        const claim = claimOf(state, target);
        const file = atifFilePath(target.outputDirectory, target.filenameTemplate, state.trajectoryName, state.instance);
        const text = typeof exporter.exportBytesNow === 'function' ? exporter.exportBytesNow() : exporter.exportJsonNow!();
        if (this.unwritable(state, file, text)) continue;
        // Synchronous at exit: the writer is in its exit mode.
        void this.files.write(state, { path: file, text, claim });
      } catch {
        // Nothing can be reported this late; the other sessions still get theirs.
      }
    }
    this.unwritten.clear();
    this.owed.clear();
  }

  /**
   * A trajectory without a step (a session that made no model call) would
   * not be valid ATIF, which needs at least one: it is not written, and its
   * entry in `outputs()` says why. A later write with steps clears that.
   */
  private unwritable(state: SessionState, file: string, text: string | Uint8Array): boolean {
    if (!hasNoSteps(text)) return false;
    this.files.skip(state, file, `session ${state.trajectoryName} recorded no step (no model call), and ATIF needs at least one: no trajectory file was written`);
    return true;
  }

  // Exports of one session run in order, so the final trajectory always wins
  // over the partial one written at session end.
  private chain(state: SessionState, work: () => Promise<void>): void {
    const sessionId = state.sessionId;
    const previous = this.exportChains.get(sessionId) ?? Promise.resolve();
    // The report names the session as its trajectory is named: redaction governs what the log says too.
    const next = previous.then(work).catch((error: unknown) => this.options.work.fail(`NeMo Relay session ${state.trajectoryName} ATIF export failed`, error));
    this.exportChains.set(sessionId, next);
    const cleanup = next.finally(() => {
      if (this.exportChains.get(sessionId) === next) this.exportChains.delete(sessionId);
    });
    this.options.work.track(cleanup);
  }

  private installExitTask(): void {
    if (this.exitTaskInstalled || this.atifTarget() === null) return;
    this.files.installExitTask(() => this.writeAtExit());
    this.exitTaskInstalled = true;
  }

  private removeExit(): void {
    this.files.removeExitTask();
    this.exitTaskInstalled = false;
  }
}

/**
 * The session's claim on its file name: its first write must not replace a
 * file another process or an earlier run wrote (`atifFileClaim`); the
 * instance it starts at, and then the one it lands at, is the session's
 * from then on (its writes, `refOf`, and the next session of its id in
 * this process, which starts after it). Made at the first write, or before
 * it when the session's path is handed out.
 */
function claimOf(state: SessionState, target: AtifTarget): AtifFileClaim {
  if (state.atifClaim === undefined) {
    state.atifClaim = atifFileClaim(target.outputDirectory, target.filenameTemplate, state.trajectoryName, state.instance, (instance) => {
      state.instance = instance;
    });
    state.instance = state.atifClaim.instance;
  }
  return state.atifClaim;
}

/**
 * The session's `trajectory_id`: its id, and for a name redaction changed,
 * that name with the `~n` of its file (`trajectoryIdOf`).
 */
function trajectoryIdFor(state: SessionState): string {
  return state.trajectoryName === state.sessionId ? state.sessionId : trajectoryIdOf(state.trajectoryName, state.instance);
}

function kindOf(backend: RelayBackend): unknown {
  try {
    return backend.kind;
  } catch {
    return undefined;
  }
}
