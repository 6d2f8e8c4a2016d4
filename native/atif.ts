/**
 * Per-session ATIF trajectories on top of native event delivery.
 *
 * Native's `AtifExporter` sees every event of the process: two interleaved
 * sessions each got all four steps in the probe, and two top-level scopes
 * merge into one trajectory. The contract wants one trajectory per session
 * holding only that session's scope subtree (and its embedded subagents), so
 * the adapter builds trajectories itself with the shared `AtifBuilder`:
 *
 * - one raw native subscriber is registered while at least one ATIF exporter
 *   is live, and deregistered when the last one goes (a JS subscriber
 *   multiplies native's cost per event, so nobody pays for it without ATIF;
 *   bench/RESULTS.md, "Figures behind the code");
 * - each delivered event goes to the live sessions whose scope subtree
 *   holds it (one map lookup per event, however many sessions are live);
 * - `exportJson()` drains native delivery (`flushSubscribers`) first, so the
 *   document holds everything emitted before the call.
 *
 * At process exit there is no time to drain (`exportJsonNow`), and native
 * may not have delivered the last events yet: after `shutdown({timeoutMs})`
 * most trajectories were written with no steps, passing validation. So the
 * router counts events delivered against events the relay sent since its
 * subscriber started; an export made while some are still in flight says so
 * in the document's `notes`, and is counted (an error of the relay, logged).
 * The count is process-wide (native does not say which session an event in
 * flight belongs to), so a trajectory may be marked partial although its own
 * events all arrived. Such a trajectory is not rewritten: the process is
 * exiting. The ATOF file has the events either way.
 *
 * The subscriber callback never throws: a throwing subscriber makes native
 * print to stderr, and one session's builder failing must not starve others.
 *
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../src/backends/native-surface.ts';
import { formatTimestamp } from '../src/backends/native-surface.ts';
import { toJson } from '../src/backends/native-surface.ts';
import { scopeEvent, serializeTrajectory, type AtofCategory, type AtofEvent } from '../src/backends/native-surface.ts';
import { SessionTrajectories, type AtifBuilder, type SessionTrajectory } from '../src/backends/native-surface.ts';
import type { NativeBinding } from './binding.ts';
import { uniqueName } from './names.ts';
import type { ScopeState } from './scopes.ts';

export class AtifRouter {
  readonly #binding: NativeBinding;
  readonly #onError: (operation: string, error: unknown) => void;
  readonly #sessions = new SessionTrajectories();
  #subscriber: string | null = null;
  #drain: Promise<void> | null = null;
  #queuedDrain: Promise<void> | null = null;
  /** Events the relay has sent so far, and how many the subscriber received since it started. */
  readonly #sent: () => number;
  #sentAtSubscribe = 0;
  #delivered = 0;
  #partial = 0;

  constructor(binding: NativeBinding, onError: (operation: string, error: unknown) => void, sent: () => number = () => 0) {
    this.#binding = binding;
    this.#onError = onError;
    this.#sent = sent;
  }

  /** Trajectories exported at exit while native still had events of the process in flight. */
  get partialExports(): number {
    return this.#partial;
  }

  /** Events sent since the subscriber started that it has not received (a lower bound). */
  #inFlight(): number {
    if (this.#subscriber === null) return 0;
    return Math.max(0, this.#sent() - this.#sentAtSubscribe - this.#delivered);
  }

  /** The document now; marked partial (in `notes`) and counted when events are still in flight. */
  #exportNow(session: SessionTrajectory): string {
    // At process exit (the session will not close): calls still open are said as never ended.
    session.cutOpenCalls();
    const missing = this.#inFlight();
    if (missing === 0) return session.toJson();
    const trajectory = session.build();
    trajectory.notes = `partial: ${missing} event(s) emitted before this export had not been delivered by native yet (written at process exit without draining); the ATOF file has them`;
    this.#partial++;
    this.#onError('atif export at exit', new Error(`a trajectory was exported while ${missing} event(s) were still in flight: written marked partial in its notes, or not at all when none of its steps had arrived (the ATOF file has every event)`));
    return serializeTrajectory(trajectory, 'exporter');
  }

  /** Number of live per-session exporters. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Starts a trajectory for the subtree of `root`. With no root (an unknown
   * handle, or native refused the session scope) the trajectory stays empty.
   *
   * The root's start event was emitted before this call, and native delivers
   * asynchronously, so it may or may not reach the new subscriber. The
   * builder needs it (it names the root agent and the steps' parent), so it
   * is replayed from what the adapter sent, and native's copy is skipped.
   */
  register(options: AtifExporterOptions, root: ScopeState | null): AtifExporter {
    const rootUuid = root?.uuid;
    const builderOptions: ConstructorParameters<typeof AtifBuilder>[0] = {
      sessionId: textOf(() => options.sessionId),
      agentName: textOf(() => options.agentName),
      agentVersion: textOf(() => options.agentVersion),
      style: 'exporter',
    };
    const trajectoryId = textOf(() => options.trajectoryId ?? '');
    if (trajectoryId !== '') builderOptions.trajectoryId = trajectoryId;
    const modelName = textOf(() => options.modelName ?? '');
    if (modelName !== '') builderOptions.modelName = modelName;
    const fallbackModelName = textOf(() => options.fallbackModelName ?? '');
    if (fallbackModelName !== '') builderOptions.fallbackModelName = fallbackModelName;
    if (textOf(() => options.subagentAgents ?? '') === 'own') builderOptions.subagentAgents = 'own';
    if (textOf(() => options.turnEnds) === 'true') builderOptions.turnEnds = true;
    const price = pricerOf(options);
    if (price !== undefined) builderOptions.priceLlmCall = price;
    const start = root === null ? undefined : startEvent(root);
    const session = this.#sessions.open(rootUuid, builderOptions, start);
    this.#ensureSubscriber();
    let registered = true;
    return {
      exportJson: async (): Promise<string> => {
        await this.#drainDelivery();
        return session.toJson();
      },
      exportBytes: async (): Promise<Uint8Array> => {
        await this.#drainDelivery();
        return session.toBytes();
      },
      // At process exit: what native has delivered by then.
      exportJsonNow: (): string => this.#exportNow(session),
      deregister: (): void => {
        if (!registered) return;
        registered = false;
        this.#sessions.close(session);
        if (this.#sessions.size === 0) this.#dropSubscriber();
      },
    };
  }

  /**
   * Waits until native has delivered every event emitted before the call.
   * Exports that ask while a drain is in flight share the next one: a burst
   * of thousands of session closes made thousands of concurrent
   * flushSubscribers() calls, and shutdown ran out of time.
   */
  #drainDelivery(): Promise<void> {
    if (this.#queuedDrain) return this.#queuedDrain;
    const inFlight = this.#drain;
    if (inFlight === null) return this.#startDrain();
    const queued = inFlight.then(() => {
      this.#queuedDrain = null;
      return this.#startDrain();
    });
    this.#queuedDrain = queued;
    return queued;
  }

  #startDrain(): Promise<void> {
    const drain: Promise<void> = Promise.resolve()
      .then(() => this.#binding.flushSubscribers())
      .then(
        () => undefined,
        (error: unknown) => this.#onError('atif flush', error),
      )
      .finally(() => {
        if (this.#drain === drain) this.#drain = null;
      });
    this.#drain = drain;
    return drain;
  }

  /** Deregisters every exporter and the raw subscriber. */
  close(): void {
    this.#sessions.closeAll();
    this.#dropSubscriber();
  }

  #ensureSubscriber(): void {
    if (this.#subscriber !== null) return;
    const name = uniqueName('atif');
    try {
      this.#sentAtSubscribe = this.#sent();
      this.#delivered = 0;
      this.#binding.registerSubscriber(name, (event) => {
        this.#delivered++;
        this.#route(event as AtofEvent);
      });
      this.#subscriber = name;
    } catch (error) {
      this.#onError('atif subscribe', error);
    }
  }

  #dropSubscriber(): void {
    if (this.#subscriber === null) return;
    const name = this.#subscriber;
    this.#subscriber = null;
    try {
      this.#binding.deregisterSubscriber(name);
    } catch (error) {
      this.#onError('atif unsubscribe', error);
    }
  }

  #route(event: AtofEvent): void {
    try {
      this.#sessions.route(event);
    } catch (error) {
      this.#onError('atif route', error);
    }
  }
}

/** The start event native wrote for `state`, rebuilt with the builder both backends use (keys sorted, as native writes them). */
function startEvent(state: ScopeState): AtofEvent | undefined {
  const start = state.start;
  const native = state.native;
  if (start === null || native === null) return undefined;
  const event = scopeEvent(
    'start',
    native.uuid,
    native.parentUuid,
    state.rootUuid ?? '',
    start.name,
    start.category as AtofCategory,
    start.attributes,
    null,
    toJson(start.input, SORTED),
    toJson(start.metadata, SORTED),
    formatTimestamp(start.timestampUs),
  );
  // Native writes no propagation root for a scope it gave none.
  if (state.rootUuid == null) delete (event as { propagation_root_uuid?: string }).propagation_root_uuid;
  return event;
}

const SORTED = { sortKeys: true } as const;

/** A caller's option as a string; a throwing getter or an unprintable value reads as `""`. */
/** The options' pricer, if it is a function (a hostile options object may throw on read). */
function pricerOf(options: AtifExporterOptions): AtifExporterOptions['priceLlmCall'] {
  try {
    const price = options.priceLlmCall;
    return typeof price === 'function' ? price : undefined;
  } catch {
    return undefined;
  }
}

function textOf(get: () => unknown): string {
  try {
    const value = get();
    return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  } catch {
    return '';
  }
}
