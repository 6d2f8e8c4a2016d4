import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { detectRuntime } from './src/shared/js-runtime.ts';

// `npm test`: everything but test/slow/, which `npm run test:slow` runs
// (vitest.slow.config.ts): the million-line replay, the gigabyte line and
// the browser tests take minutes, so they stay out of the everyday suite.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/slow/**', '**/node_modules/**'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/temp-root.ts', 'test/support/default-outputs.ts'],
    setupFiles: ['test/support/atif-builder-loaded.ts'],
    pool: 'forks',
    // Vitest's default is one worker per CPU minus one: a single worker on a
    // 2-core machine. Most files here wait on child processes (the CLI, the
    // runtimes), so more workers than cores overlap that waiting: on 2 cores
    // a third worker keeps both busy and keeps `npm test` under the README's
    // three minutes (bench/RESULTS.md, "npm test's workers"). Node only: the
    // Deno suite with three workers lost a worker and timed a served viewer
    // out in CI, so Bun and Deno keep one worker per core.
    maxWorkers: Math.max(detectRuntime() === 'node' ? 3 : 2, os.availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
