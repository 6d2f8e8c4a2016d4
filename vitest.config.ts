import os from 'node:os';
import { defineConfig } from 'vitest/config';

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
    // runtimes), so two or more workers overlap that waiting.
    maxWorkers: Math.max(2, os.availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
