import os from 'node:os';
import { defineConfig } from 'vitest/config';
import { detectRuntime } from './src/shared/js-runtime.ts';
import { NATIVE_SHARED, OWN_PROCESS } from './test/support/own-process.ts';
import { WaitingFirstSequencer } from './test/support/sequencer.ts';

// `npm test`: everything but test/slow/, which `npm run test:slow` runs
// (vitest.slow.config.ts): the million-line replay, the gigabyte line and
// the browser tests take minutes, so they stay out of the everyday suite.
export default defineConfig({
  test: {
    exclude: ['test/slow/**', '**/node_modules/**'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/temp-root.ts', 'test/support/default-outputs.ts'],
    setupFiles: ['test/support/atif-builder-loaded.ts'],
    pool: 'forks',
    // The files that mostly wait start first in their project (test/support/sequencer.ts).
    sequence: { sequencer: WaitingFirstSequencer },
    // Vitest's default is one worker per CPU minus one: a single worker on a
    // 2-core machine. Most files here wait on child processes (the CLI, the
    // runtimes), so more workers than cores overlap that waiting: on 2 cores
    // a third worker keeps both busy (bench/RESULTS.md, "npm test's workers"
    // and "npm test's time"). Node only: the Deno suite with three workers
    // lost a worker and timed a served viewer out in CI, so Bun and Deno keep
    // one worker per core.
    maxWorkers: Math.max(detectRuntime() === 'node' ? 3 : 2, os.availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        // Most of a file's cost was importing the sources and the SDKs again
        // in a new process: here the files of one worker share its process
        // and module graph (each file still runs its own code and hooks), so
        // a test must leave the process as it found it (restore what it
        // sets in process.env, close what it opens). bench/RESULTS.md,
        // "npm test's time: files that share a process".
        // The files in test/support/own-process.ts, which leave process-wide
        // state behind, go to the two projects below.
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...NATIVE_SHARED, ...OWN_PROCESS, 'test/slow/**', '**/node_modules/**'],
          setupFiles: ['test/support/native-stays-out.ts'],
          isolate: false,
        },
      },
      // The files that load native share processes with one another only
      // (bench/RESULTS.md, "npm test's time: native files that share a process").
      { extends: true, test: { name: 'native-shared', include: NATIVE_SHARED, isolate: false } },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
    ],
  },
});
