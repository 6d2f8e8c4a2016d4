/**
 * Process environment variables set for one test: OTLP `header_env`, the S3
 * `*_var` settings and the `OTEL_*` variables are read from the process
 * environment by both backends, not from the env a plugin is given.
 */
import { onTestFinished } from 'vitest';

/** Sets `values` in `process.env` until the running test finishes, then puts back what was there (or nothing). */
export function withProcessEnv(values: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]));
  Object.assign(process.env, values);
  onTestFinished(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
}
