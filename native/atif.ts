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
 *   is live, and deregistered when the last one goes (a JS subscriber costs
 *   2–3× per event, so nobody pays for it without ATIF);
 * - each delivered event is routed to every live builder whose subtree
 *   filter (rooted at the session scope's uuid) accepts it;
 * - `exportJson()` drains native delivery (`flushSubscribers`) first, so the
 *   document holds everything emitted before the call.
 *
 * The subscriber callback never throws: a throwing subscriber makes native
 * print to stderr, and one session's builder failing must not starve others.
 *
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../src/relay/contract.ts';
import type { AtofEvent } from '../src/relay/formats/atof.ts';
import { AtifBuilder, createSubtreeFilter } from '../src/relay/formats/atif-builder.ts';
import type { NativeBinding } from './binding.ts';
import { uniqueName } from './names.ts';

interface SessionTrajectory {
  accepts: (event: AtofEvent) => boolean;
  builder: AtifBuilder;
}

export class AtifRouter {
  readonly #binding: NativeBinding;
  readonly #onError: (operation: string, error: unknown) => void;
  readonly #live = new Set<SessionTrajectory>();
  #subscriber: string | null = null;

  constructor(binding: NativeBinding, onError: (operation: string, error: unknown) => void) {
    this.#binding = binding;
    this.#onError = onError;
  }

  /** Number of live per-session exporters. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Starts a trajectory for the subtree rooted at `rootUuid`. With no uuid
   * (native refused the session scope) the trajectory stays empty.
   */
  register(options: AtifExporterOptions, rootUuid: string | undefined): AtifExporter {
    const builderOptions: ConstructorParameters<typeof AtifBuilder>[0] = {
      sessionId: String(options.sessionId),
      agentName: String(options.agentName),
      agentVersion: String(options.agentVersion),
      style: 'exporter',
    };
    if (typeof options.modelName === 'string') builderOptions.modelName = options.modelName;
    const session: SessionTrajectory = {
      accepts: rootUuid === undefined ? () => false : createSubtreeFilter(rootUuid),
      builder: new AtifBuilder(builderOptions),
    };
    this.#live.add(session);
    this.#ensureSubscriber();
    let registered = true;
    const binding = this.#binding;
    const onError = this.#onError;
    return {
      exportJson: async (): Promise<string> => {
        try {
          await binding.flushSubscribers();
        } catch (error) {
          onError('atif flush', error);
        }
        return session.builder.toJson();
      },
      deregister: (): void => {
        if (!registered) return;
        registered = false;
        this.#live.delete(session);
        if (this.#live.size === 0) this.#dropSubscriber();
      },
    };
  }

  /** Deregisters every exporter and the raw subscriber. */
  close(): void {
    this.#live.clear();
    this.#dropSubscriber();
  }

  #ensureSubscriber(): void {
    if (this.#subscriber !== null) return;
    const name = uniqueName('atif');
    try {
      this.#binding.registerSubscriber(name, (event) => this.#route(event as AtofEvent));
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
    for (const session of this.#live) {
      try {
        if (session.accepts(event)) session.builder.add(event);
      } catch (error) {
        this.#onError('atif route', error);
      }
    }
  }
}
