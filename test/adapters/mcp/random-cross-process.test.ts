// MCP servers as child processes, over stdio and Streamable HTTP, on seeded
// random plans (random-cross-process.ts); test/slow/mcp-random-cross-process.test.ts runs more seeds.
import { describe, it } from 'vitest';
import { processBackends } from '../support.ts';
import { checkSeed } from './random-cross-process.ts';

describe('MCP across processes on random plans', () => {
  for (const backend of processBackends()) {
    // Seeds chosen for their mix: 1 (HTTP, nested stdio, a cancel, progress, the nested server killed),
    // 6 (stdio both, a cancel, progress, the first server killed).
    for (const seed of [1, 6]) {
      it(`seed ${seed} (${backend})`, () => checkSeed(seed, backend), 60_000);
    }
  }
});
