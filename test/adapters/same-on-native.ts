// The hooks an adapter test recorded, replayed through the memory relay and
// through native: both must write the same files.
import { expect } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { toJson } from '../../src/shared/json.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { compareRuns, failedLlmAsNative } from '../differential/random-diff.ts';
import { replay } from '../differential/replay.ts';
import { backends, type Recorded } from './support.ts';

const onNative = backends().includes('native');

/**
 * The same files on both backends, where native loads. `concurrentSubagents`: sub-agents were open at once, where
 * the backends differ only in their ATOF events' `propagation_root_uuid` (docs/backends/memory-and-native.md, "Concurrent sibling scopes").
 */
export async function sameOnNative(recorded: Recorded, concurrentSubagents = false): Promise<void> {
  if (!onNative) return;
  const lines = recorded.log.map((entry) => ({ hook: entry.hook as HookName, payload: toJson(entry.payload) as Record<string, unknown> }));
  const memory = failedLlmAsNative(await replay(createMemoryRelay({ logger: silentLogger }), lines));
  const native = await replay(loadNativeRelay({ logger: silentLogger }), lines);
  expect(compareRuns(memory, native, concurrentSubagents ? { drop: ['propagation_root_uuid'] } : {}), 'memory against native').toEqual([]);
}
