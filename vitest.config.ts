import { defineConfig } from 'vitest/config';

// `npm test`: everything but test/slow/, which `npm run test:slow` runs
// (vitest.slow.config.ts): the million-line replay, the gigabyte line and
// the browser tests take minutes, so they stay out of the everyday suite.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/slow/**', '**/node_modules/**'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/temp-root.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
