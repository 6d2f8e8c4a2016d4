/**
 * The adapters' promise to the framework: telemetry never throws into it.
 *
 * @module
 */

import { safeLog, type Logger } from '../../shared/logger.ts';

/**
 * Runs `fn`; a throw is logged (once per label, so a broken mapping cannot
 * flood the log) and swallowed. Returns `fn`'s result, or `undefined`.
 */
export class Guard {
  readonly #logger: Logger;
  readonly #reported = new Set<string>();
  failures = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  run<T>(label: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      this.failures += 1;
      if (!this.#reported.has(label)) {
        this.#reported.add(label);
        safeLog(this.#logger, 'warn', `the adapter's ${label} failed (reported once; the agent was not affected)`, error);
      }
      return undefined;
    }
  }
}
