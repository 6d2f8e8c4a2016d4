// `npm run test:slow` runs some of npm test's files again: vitest.slow.config.ts
// lists them and sets NRH_TEST_SUITE=slow. There they check what npm test
// leaves to CI to keep inside its time: the native backend of the files whose
// agent and servers, or host, are processes of their own (`processBackend`:
// the MCP files through processBackends in test/adapters/support.ts, the exit
// test), and the generated-input equivalence checks at their full counts.
// npm test is CPU-bound on 2 cores; these were its largest shares that repeat
// a check rather than add one.

/** True in `npm run test:slow`. */
export const inSlowSuite = process.env.NRH_TEST_SUITE === 'slow';

/** The backend the files whose programs are processes of their own check in this suite: memory in npm test, native in the slow one. */
export const processBackend: 'memory' | 'native' = inSlowSuite ? 'native' : 'memory';

/** How many generated inputs a check draws: `count` in the slow suite, a quarter of it in npm test. */
export function generatedCount(count: number): number {
  return inSlowSuite ? count : Math.ceil(count / 4);
}
