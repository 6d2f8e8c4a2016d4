/**
 * Background work the plugin started and `flush()`/`shutdown()` wait for
 * (trajectory writes, activation, exports), and the failure reporting every
 * collaborator shares: count it, say it, never throw it at the host.
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import type { PluginCounters } from './status.ts';
import { errorMessage } from '../shared/error-text.ts';

export class BackgroundWork {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly counters: PluginCounters,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** Registers work; its failure is counted and logged, never rethrown. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      (error: unknown) => this.fail('NeMo Relay background work failed', error),
    );
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
  }

  /** Settles once nothing tracked is pending, including work started meanwhile. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Counts a swallowed failure and warns about it. */
  fail(context: string, error: unknown): void {
    this.counters.errors += 1;
    safeLog(this.logger, 'warn', `${context}: ${errorMessage(error)}`);
  }
}
