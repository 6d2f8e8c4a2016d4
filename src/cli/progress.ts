/**
 * The progress line of long commands (`replay`, `convert`, streamed
 * `validate`): drawn on stderr only when stderr is a terminal, redrawn at
 * most every 200 ms after the first half second, and showing the rate and,
 * when the input size is known, the percentage and the time left.
 *
 * @module
 */

import { formatCount, formatDuration, type CliIo } from './io.ts';

const INTERVAL_MS = 200;
const AFTER_MS = 500;

export interface ProgressOptions {
  /** e.g. `replaying hooks.jsonl`. */
  label: string;
  /** What is counted, plural: `lines`, `events`. */
  unit: string;
  /** Input size in bytes; 0 when unknown (standard input). */
  totalBytes: number;
  /** The clock, in milliseconds (tests pass their own). */
  now?: () => number;
}

/** Draws nothing unless `io.stderrIsTty`; `clear()` removes the line before other output. */
export class Progress {
  readonly #io: CliIo;
  readonly #options: ProgressOptions;
  readonly #now: () => number;
  readonly #started: number;
  readonly #enabled: boolean;
  #last: number;
  #drawn = false;

  constructor(io: CliIo, options: ProgressOptions, enabled = true) {
    this.#io = io;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#started = this.#now();
    this.#last = this.#started;
    this.#enabled = enabled && io.stderrIsTty;
  }

  /** Redraws when due. `extra` is appended, e.g. `12 open sessions`. */
  update(count: number, bytesRead: number, extra?: string): void {
    if (!this.#enabled) return;
    const now = this.#now();
    if (now - this.#started < AFTER_MS || now - this.#last < INTERVAL_MS) return;
    this.#last = now;
    this.#io.err(`\r\u001b[K${this.line(count, bytesRead, now, extra)}`);
    this.#drawn = true;
  }

  /** The text of the line at `now` (exposed for tests). */
  line(count: number, bytesRead: number, now: number, extra?: string): string {
    const { label, unit, totalBytes } = this.#options;
    const elapsedMs = Math.max(1, now - this.#started);
    const parts = [`${label}: ${formatCount(count)} ${unit}`];
    if (totalBytes > 0) parts[0] += ` (${Math.min(100, Math.floor((bytesRead / totalBytes) * 100))}%)`;
    parts.push(`${formatCount((count * 1000) / elapsedMs)} ${unit}/s`);
    if (totalBytes > 0 && bytesRead > 0 && bytesRead < totalBytes) {
      const leftMs = ((totalBytes - bytesRead) * elapsedMs) / bytesRead;
      parts.push(`${formatDuration(leftMs * 1000)} left`);
    }
    if (extra) parts.push(extra);
    return parts.join(', ');
  }

  /** Erases the line (before a message, and at the end). */
  clear(): void {
    if (this.#drawn) this.#io.err('\r\u001b[K');
    this.#drawn = false;
  }
}
