import { defineConfig } from 'vitest/config';
import { detectRuntime } from './src/shared/js-runtime.ts';

// `npm run test:slow`: the end-to-end cases too slow for `npm test`
// (a million-line replay, a gigabyte single-line file, the HTML timeline in
// headless Chromium with 2,000 steps and 5,000 sessions, the Claude Agent SDK
// adapter on the SDK's own CLI, the adapters' bounds over 20,000 runs,
// hostile payloads into native, validate streaming a 30,000-event file,
// remote outputs and delivery against receivers that hang, dribble and
// drop: those wait out real timeouts by design; hosts bundled with rolldown
// and bun build).
// .ci/run runs both; the slow suite on Node, Bun and Deno.
//
// Some of npm test's files run here again (test/support/slow-suite.ts): the
// generated-input checks at their full counts, and the MCP files whose agent
// and servers are processes of their own on native. Native runs in the
// suite's own process on Node only (backends()), and in the children of every
// runtime in the files that name their backends (mcp/docs, mcp-sampling,
// the exit test).
const NATIVE_IN_CHILDREN = ['test/adapters/mcp/docs.test.ts', 'test/differential/exit.test.ts'];
const GENERATED_IN_FULL = ['test/backends/memory/credential-headers.test.ts', 'test/formats/atif/trajectory-bytes.test.ts'];

// What Bun and Deno run: the slow files that ran on every runtime before they
// left npm test's suite, the Claude adapter on its CLI, and the files above
// that every runtime runs again. The rest (the browser, the million-line and
// gigabyte files, the native MCP halves) run on Node alone, as CI has always
// run them; name a file on the command line to narrow either list.
const EVERY_RUNTIME = [
  'test/slow/claude-agent-sdk*.test.ts',
  'test/slow/ai-sdk-bounds.test.ts',
  'test/slow/langchain-bounded.test.ts',
  'test/slow/native-hostile.test.ts',
  'test/slow/validate-streaming.test.ts',
  'test/slow/remote-outputs.test.ts',
  'test/slow/delivery-faults.test.ts',
  'test/slow/native-atif-uploads.test.ts',
  'test/slow/proxy-native.test.ts',
  'test/slow/random-wire-*.test.ts',
  // The MCP files whose agent and servers are processes of their own, out of npm test for its time: on memory
  // (and native where it loads) here.
  'test/slow/mcp-frameworks.test.ts',
  'test/slow/mcp-asks-back.test.ts',
  'test/slow/mcp-agents-is-error.test.ts',
  'test/slow/mcp-sampling.test.ts',
  'test/slow/mcp-ai-sdk-http.test.ts',
  ...NATIVE_IN_CHILDREN,
  ...GENERATED_IN_FULL,
];
const NODE_ONLY_AGAIN = [
  'test/adapters/mcp/asks-back-langchain.test.ts',
  'test/adapters/mcp/random-cross-process.test.ts',
  'test/adapters/mcp/rerun-same-folder.test.ts',
  'test/adapters/mcp/timing.test.ts',
];

export default defineConfig({
  test: {
    include: detectRuntime() === 'node' ? ['test/slow/**/*.test.ts', ...NATIVE_IN_CHILDREN, ...GENERATED_IN_FULL, ...NODE_ONLY_AGAIN] : EVERY_RUNTIME,
    env: { NRH_TEST_SUITE: 'slow' },
    globalSetup: ['test/support/build-dist.ts', 'test/support/temp-root.ts', 'test/support/default-outputs.ts'],
    setupFiles: ['test/support/atif-builder-loaded.ts'],
    pool: 'forks',
    // One at a time: each of these alone loads the 2-core machine.
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
});
