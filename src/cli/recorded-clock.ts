/**
 * The clock `replay` gives the plugin: each event is stamped when the
 * recorded line says the host emitted its hook, so a replayed trajectory
 * keeps the recording's times and durations, not the replay's.
 *
 * Like the library's own clock it never answers the same value twice and
 * never goes back: a second reading for the same line (the plugin closing
 * a call the hook abandoned, then the hook's own event) is 1 µs later, a
 * line whose time is earlier than the one before (recordings appended out
 * of order, a clock set back while recording) is stamped 1 µs after it,
 * and a line without a time (a recorder older than the times) follows the
 * line before it, or the replay's own clock when no line before had a time.
 *
 * @module
 */

import { nowMicros } from '../shared/clock.ts';

export class RecordedClock {
  /** The current line's recorded time (Unix µs), if it has one. */
  #line: number | undefined;
  #last = 0;

  /** The next line's recorded time, or `undefined` when it has none. */
  at(recordedUs: number | undefined): void {
    this.#line = recordedUs;
  }

  /** The plugin's reading: integer Unix µs. */
  readonly read = (): number => {
    const wanted = this.#line ?? (this.#last === 0 ? nowMicros() : this.#last + 1);
    this.#last = Math.max(wanted, this.#last + 1);
    return this.#last;
  };
}
