/**
 * Hooks the host emitted that the plugin could not record as emitted,
 * because the payload never reached any subscriber: the host's payload
 * function threw (the event is lost), or the payload was not an object (an
 * empty one was delivered). The registry counts them, since it alone sees
 * them; this reads those counts from the hosts the plugin is registered on,
 * counting only what failed while it was registered, for `status()`.
 *
 * @module
 */

import type { HookName } from '../hooks/names.ts';
import type { PayloadFailures } from '../hooks/registry.ts';

/** A host that counts its payload failures (`HookRegistry` does). */
export interface CountingHost {
  payloadFailures?(): PayloadFailures;
}

type Counts = Partial<Record<HookName, number>>;

export function emptyPayloadFailures(): PayloadFailures {
  return { thunkThrew: {}, notAnObject: {} };
}

/** The failures of every host the plugin is or was registered on, since it registered. */
export class HostPayloadFailures {
  /** Each registered host's counts when the plugin registered on it. */
  readonly #baselines = new Map<CountingHost, PayloadFailures>();
  /** Failures on hosts the plugin has since been unregistered from. */
  readonly #retired: PayloadFailures = emptyPayloadFailures();

  /** Starts counting `host`'s failures; a host without `payloadFailures()` counts none. */
  track(host: CountingHost): void {
    const now = read(host);
    if (now !== undefined) this.#baselines.set(host, now);
  }

  /** Stops counting `host`, keeping what it counted while registered. */
  untrack(host: CountingHost): void {
    const baseline = this.#baselines.get(host);
    if (baseline === undefined) return;
    this.#baselines.delete(host);
    const now = read(host);
    if (now !== undefined) addSince(this.#retired, now, baseline);
  }

  /** Every failure counted while registered, per reason and hook. */
  counts(): PayloadFailures {
    const total: PayloadFailures = { thunkThrew: { ...this.#retired.thunkThrew }, notAnObject: { ...this.#retired.notAnObject } };
    for (const [host, baseline] of this.#baselines) {
      const now = read(host);
      if (now !== undefined) addSince(total, now, baseline);
    }
    return total;
  }
}

export function sum(counts: Counts): number {
  let total = 0;
  for (const value of Object.values(counts)) total += value ?? 0;
  return total;
}

/** A host's counts, or nothing when it has none or its answer is unusable: status() never throws. */
function read(host: CountingHost): PayloadFailures | undefined {
  if (typeof host.payloadFailures !== 'function') return undefined;
  try {
    const answer = host.payloadFailures();
    if (typeof answer !== 'object' || answer === null) return undefined;
    return { thunkThrew: countsOf(answer.thunkThrew), notAnObject: countsOf(answer.notAnObject) };
  } catch {
    return undefined;
  }
}

function countsOf(value: unknown): Counts {
  const counts: Counts = {};
  if (typeof value !== 'object' || value === null) return counts;
  for (const [hook, count] of Object.entries(value)) {
    if (Number.isInteger(count) && count > 0) counts[hook as HookName] = count;
  }
  return counts;
}

function addSince(total: PayloadFailures, now: PayloadFailures, baseline: PayloadFailures): void {
  for (const reason of ['thunkThrew', 'notAnObject'] as const) {
    for (const [hook, count] of Object.entries(now[reason]) as [HookName, number][]) {
      const since = count - (baseline[reason][hook] ?? 0);
      if (since > 0) total[reason][hook] = (total[reason][hook] ?? 0) + since;
    }
  }
}
