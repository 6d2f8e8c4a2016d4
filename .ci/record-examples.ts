/**
 * Re-creates the recorded hook streams in examples/ from the bundled
 * scripted sessions (`src/demo/scenarios.ts`), with `createHookRecorder`
 * and a virtual clock, so the files are the same on every run:
 *
 *   bun .ci/record-examples.ts
 *   deno run -A .ci/record-examples.ts
 *
 * Each `<scenario>.hooks.jsonl` is what a host would have recorded; turn
 * one into ATOF/ATIF with `nemo-relay-hooks replay <file> --out <dir>`.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCENARIOS, virtualClock } from '../src/demo/index.ts';
import { createHookRecorder, HookRegistry } from '../src/index.ts';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples');

for (const [name, scenario] of Object.entries(SCENARIOS)) {
  const registry = new HookRegistry();
  const clock = virtualClock();
  // Each line carries the scenario's virtual time, so a replay shows the durations the scenario plays out.
  const recorder = createHookRecorder(registry, path.join(here, `${name}.hooks.jsonl`), { clock: () => Math.round(clock.now() * 1e6) });
  await scenario({ hooks: registry, clock });
  recorder.close();
  console.log(`${path.relative(process.cwd(), recorder.path)}: ${recorder.lines} hooks`);
}
