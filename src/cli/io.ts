/**
 * Terminal output for the CLI: stdout/stderr writers, whether each is a
 * terminal, and ANSI styling that is on only when stdout is a TTY and
 * `NO_COLOR` is unset (https://no-color.org), and `FORCE_COLOR` is not `0`.
 *
 * Commands receive a `CliIo` instead of touching `process` so the same code
 * runs under Node, Bun and Deno, and tests can capture it.
 *
 * @module
 */

export interface Style {
  readonly enabled: boolean;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** stderr is a terminal: progress lines are drawn there. */
  readonly stderrIsTty: boolean;
  /** Styling for stdout. */
  readonly style: Style;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

const ANSI: Style = {
  enabled: true,
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
  dim: wrap(2, 22),
  bold: wrap(1, 22),
};

const identity = (text: string) => text;

export const PLAIN: Style = { enabled: false, red: identity, green: identity, yellow: identity, cyan: identity, dim: identity, bold: identity };

/** ANSI when `isTty` and the environment allows it, plain otherwise. */
function styleFor(isTty: boolean, env: Readonly<Record<string, string | undefined>>): Style {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return PLAIN;
  if (env.FORCE_COLOR === '0') return PLAIN;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return ANSI;
  return isTty ? ANSI : PLAIN;
}

/** The process's own terminal. */
export function processIo(): CliIo {
  const stdoutTty = process.stdout.isTTY === true;
  return {
    out: (text) => {
      process.stdout.write(text);
    },
    err: (text) => {
      process.stderr.write(text);
    },
    stderrIsTty: process.stderr.isTTY === true,
    style: styleFor(stdoutTty, process.env),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** `1234567` → `1,234,567`. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A duration in microseconds as `850µs`, `12.3ms`, `1.24s` or `2m 05s`. */
export function formatDuration(micros: number): string {
  if (!Number.isFinite(micros) || micros < 0) return '?';
  if (micros < 1000) return `${Math.round(micros)}µs`;
  const ms = micros / 1000;
  if (ms < 100) return `${ms.toFixed(1)}ms`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(2)}s`;
  const minutes = Math.floor(s / 60);
  if (minutes >= 60) return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${minutes}m ${String(Math.round(s - minutes * 60)).padStart(2, '0')}s`;
}

