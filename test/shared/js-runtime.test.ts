import { describe, expect, it } from 'vitest';
import { detectRuntime } from '../../src/shared/js-runtime.ts';

// CI runs this suite three times and says which runtime each run must be on,
// so a runner that silently falls back to Node (as `bun x vitest` does)
// fails instead of passing on the wrong runtime.
describe('test runtime', () => {
  const expected = process.env.EXPECT_RUNTIME;
  if (expected !== undefined) {
    it(`runs on ${expected}, as CI asked`, () => {
      expect(detectRuntime()).toBe(expected);
    });
  }

  it('detects a known runtime', () => {
    expect(['node', 'bun', 'deno']).toContain(detectRuntime());
  });
});
