import { defineConfig } from 'vitest/config';

// `npm run test:slow`: the end-to-end cases too slow for `npm test`
// (a million-line replay, a gigabyte single-line file, the HTML timeline in
// headless Chromium with 2,000 steps and 5,000 sessions, the Claude Agent SDK
// adapter on the SDK's own CLI, the adapters' bounds over 20,000 runs,
// hostile payloads into native, validate streaming a 30,000-event file,
// remote outputs and delivery against receivers that hang, dribble and
// drop: those wait out real timeouts by design).
// .ci/run runs both, these on Node, Bun and Deno.
export default defineConfig({
  test: {
    include: ['test/slow/**/*.test.ts'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/temp-root.ts', 'test/support/default-outputs.ts'],
    setupFiles: ['test/support/atif-builder-loaded.ts'],
    pool: 'forks',
    // One at a time: each of these alone loads the 2-core machine.
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
});
