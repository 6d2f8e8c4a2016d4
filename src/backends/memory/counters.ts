/**
 * What the in-memory relay counts and how it reports it: events, misuse,
 * receivers that failed, lines dropped, ends moved after their starts.
 * Every failure is counted before it is logged, so nothing is lost uncounted.
 *
 * @module
 */

import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { errorWithName } from '../../shared/error-text.ts';

export class RelayCounters {
  events = 0;
  errors = 0;
  dropped = 0;
  receiverErrors = 0;
  adjustedTimestamps = 0;
  /** Event parts a redaction failed on (written as null instead). */
  redactionFailures = 0;

  constructor(readonly logger: Logger) {}

  /** A caller's mistake (a foreign handle, a bad timestamp): ignored or repaired, counted, logged at debug. */
  misuse(message: string): void {
    this.errors++;
    safeLog(this.logger, 'debug', `memory relay: ${message}`);
  }

  /** A subscriber or internal receiver threw or rejected. */
  receiverFailed(what: string, error: unknown): void {
    this.errors++;
    this.receiverErrors++;
    safeLog(this.logger, 'debug', `memory relay: ${what} failed: ${errorWithName(error)}`);
  }

  /** Something inside the relay failed; the caller never sees it. */
  internalError(what: string, error: unknown): void {
    this.errors++;
    safeLog(this.logger, 'warn', `memory relay: ${what} failed: ${errorWithName(error)}`);
  }

  /** An end stamped at or before its start, moved after it. */
  adjusted(endUs: number, startUs: number): void {
    this.adjustedTimestamps++;
    safeLog(this.logger, 'debug', `end timestamp ${endUs} is not after start ${startUs}; recorded as start + 1 µs`);
  }
}

