// More seeds of test/adapters/mcp/random-cross-process.test.ts (MCP servers
// as child processes, over stdio and Streamable HTTP, on random plans).
import { describe, it } from 'vitest';
import { backends } from '../adapters/support.ts';
import { checkSeed } from '../adapters/mcp/random-cross-process.ts';

// MCP_RANDOM_FIRST_SEED and MCP_RANDOM_SEEDS choose others (a failure names its seed).
const first = Number(process.env.MCP_RANDOM_FIRST_SEED ?? 2);
const count = Number(process.env.MCP_RANDOM_SEEDS ?? 30);
const inNpmTest = new Set([1, 6]);

describe('MCP across processes on random plans (more seeds)', () => {
  for (const backend of backends()) {
    for (let seed = first; seed < first + count; seed++) {
      if (inNpmTest.has(seed) && process.env.MCP_RANDOM_FIRST_SEED === undefined) continue;
      it(`seed ${seed} (${backend})`, () => checkSeed(seed, backend), 60_000);
    }
  }
});
