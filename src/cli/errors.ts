/**
 * The CLI's failure kinds. Each maps to an exit code and is printed as one
 * line, `nemo-relay-hooks: <message>`, never as a stack trace.
 *
 * | error        | exit | when                                                   |
 * | ------------ | ---- | ------------------------------------------------------ |
 * | `UsageError` | 2    | unknown command or flag, missing or malformed argument |
 * | `InputError` | 1    | a file or folder cannot be read, created or written    |
 *
 * @module
 */

/** Base class of every error the CLI reports by message alone. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The command line itself is wrong. Exit code 2. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  /** The command whose `--help` the message points to, when known. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message, 2);
    this.command = command;
  }
}

/** A file or folder cannot be used. Exit code 1. */
export class InputError extends CliError {
  override readonly name = 'InputError';

  constructor(message: string) {
    super(message, 1);
  }
}

/** A readable message for an fs error: its code and path without the stack. */
export function describeFsError(error: unknown, action: string, target: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return `${action} ${target}: no such file or directory`;
    case 'EACCES':
    case 'EPERM':
      return `${action} ${target}: permission denied`;
    case 'EISDIR':
      return `${action} ${target}: is a directory`;
    case 'ENOTDIR':
      return `${action} ${target}: a parent is not a directory`;
    case 'EEXIST':
      return `${action} ${target}: already exists and is not a directory`;
    case 'ENOSPC':
      return `${action} ${target}: no space left on device`;
    default: {
      const message = error instanceof Error ? error.message : String(error);
      return `${action} ${target}: ${message}`;
    }
  }
}
