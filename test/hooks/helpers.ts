import type { Logger } from '../../src/shared/logger.ts';

export interface LogRecord {
  level: keyof Logger;
  message: string;
  details: unknown[];
}

/** A logger that remembers every call, for asserting what was reported. */
export function recordingLogger(): Logger & { records: LogRecord[]; at(level: keyof Logger): LogRecord[] } {
  const records: LogRecord[] = [];
  const record =
    (level: keyof Logger) =>
    (message: string, ...details: unknown[]): void => {
      records.push({ level, message, details });
    };
  return {
    records,
    at: (level) => records.filter((entry) => entry.level === level),
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  };
}

/** Lets pending promise reactions (rejection handlers) run. */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/** What `call` throws (it must throw): for assertions on the error's class, name and message. */
export function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, and it returned');
}
