// LangChain's retries (`withRetry()`, a chat model's `maxRetries`) wait between attempts as its bundled p-retry
// computes: one to four seconds each, whatever the program or the test. What the tests check is which attempts were
// made and how they are recorded, not how long LangChain waited, so a file that runs many retries can have those
// waits, and only those, cut short (bench/RESULTS.md, "npm test's time: LangChain's retry waits").
import { afterAll, beforeAll } from 'vitest';

const P_RETRY = /[\\/]@langchain[\\/]core[\\/]dist[\\/]utils[\\/]p-retry[\\/]/;

/** For the calling file's tests: a timer LangChain's p-retry sets to wait before the next attempt fires at once. */
export function shortLangChainRetryWaits(): void {
  const real = globalThis.setTimeout;
  beforeAll(() => {
    const quick = ((handler: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) =>
      real(handler, (delay ?? 0) > 0 && P_RETRY.test(new Error().stack ?? '') ? 0 : delay, ...args)) as typeof setTimeout;
    globalThis.setTimeout = Object.assign(quick, real);
  });
  afterAll(() => {
    globalThis.setTimeout = real;
  });
}
