/**
 * The memory relay's own cost, by hook kind, in the two configurations
 * users run: ATOF only, and ATOF + ATIF (one trajectory per session, what
 * the README, `demo` and `replay` use), both against the serialisation
 * floor (`JSON.stringify` of exactly the ATOF events it writes).
 *
 * A second floor adds the UTF-8 write of those lines into a buffer (what
 * any backend that writes the lines pays beyond the JS string); neither
 * floor includes the uuids, timestamps or file writes the relay also does.
 *
 * Only memory subjects are timed, so this case is cheap enough to run for
 * every change to the relay's encoders; `per-event` compares the backends.
 * Timed: the hook calls and the drain (ATOF lines on disk). The ATIF
 * trajectory of the batch's session is built and written at shutdown,
 * outside the timing (the `throughput` case times it); the `session` kind
 * opens and finalizes a session per pair, so there every pair writes one
 * trajectory file inside the timing.
 *
 * @module
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CaseReport, figure, interleave, ratio, rowOf, type Timing } from '../harness.ts';
import { calibrate, capturedEvents, encodedFloorSubject, floorSubject, KINDS, subjectFor } from '../support/kinds.ts';
import { memoryAtifPluginSetup, memoryObjectsPluginSetup, memoryPluginSetup } from '../support/setups.ts';

const report = new CaseReport('memory-paths', 'Memory relay per event: ATOF only vs ATOF + ATIF vs the JSON.stringify floor');
const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-paths-'));
const atofOnly = memoryPluginSetup(dir);
const withAtif = memoryAtifPluginSetup(dir);
// What the byte path buys: the same ATOF-only recording on the object encoder (ATIF always takes it).
const objectsOnly = memoryObjectsPluginSetup(dir);

const byName = (timings: Timing[], name: string) => timings.find((t) => t.name === name)!;

for (const kind of KINDS) {
  process.stderr.write(`# ${kind.label}\n`);
  const subjects = [];
  for (const setup of [atofOnly, withAtif, objectsOnly]) subjects.push(subjectFor(setup, kind, await calibrate(setup, kind)));
  const events = await capturedEvents(dir, kind);
  subjects.push(floorSubject(events, kind), encodedFloorSubject(events, kind));
  const timings = await interleave(subjects, { reps: 11, warmup: 1 });
  const atof = byName(timings, atofOnly.name);
  const atif = byName(timings, withAtif.name);
  const floor = byName(timings, 'JSON.stringify of its ATOF lines');
  const encodedFloor = byName(timings, 'JSON.stringify + UTF-8 write of its ATOF lines');
  const lineBytes = Math.round(events.reduce((sum, e) => sum + JSON.stringify(e).length + 1, 0) / events.length);
  // Recording only (the trajectories are built at shutdown, untimed): the object path against the byte path, plus the
  // routing. The goal for ATIF, with its trajectories built and written, is memory-steady's.
  report.figure(figure(`${kind.id}.atif_over_atof`, `${kind.id}: plugin+memory ATOF + ATIF / ATOF only (recording only)`, ratio(atif, atof, true), 'x'));
  report.figure(figure(`${kind.id}.objects_over_bytes`, `${kind.id}: object encoder / byte encoder, ATOF only`, ratio(byName(timings, objectsOnly.name), atof, true), 'x'));
  report.figure(figure(`${kind.id}.memory_over_floor`, `${kind.id}: plugin+memory (ATOF only) / JSON.stringify of its ATOF lines`, ratio(atof, floor, true), 'x', { op: '<=', target: 1.2 }));
  // What the bytes themselves add to the floor: the part of the 1.2x goal no backend writing a file can spend elsewhere.
  report.figure(figure(`${kind.id}.encoded_floor_over_floor`, `${kind.id}: JSON.stringify + UTF-8 write / JSON.stringify alone (what encoding the lines costs)`, ratio(encodedFloor, floor, true), 'x'));
  report.figure(figure(`${kind.id}.memory_over_encoded_floor`, `${kind.id}: plugin+memory (ATOF only) / JSON.stringify + UTF-8 write of its ATOF lines`, ratio(atof, encodedFloor, true), 'x'));
  report.figure(figure(`${kind.id}.atif_over_floor`, `${kind.id}: plugin+memory (ATOF + ATIF) / JSON.stringify of its ATOF lines`, ratio(atif, floor, true), 'x'));
  for (const timing of timings) report.row(rowOf(`${kind.id}.${timing.name}`, `${kind.id}: ${timing.name} (per event)`, timing));
  report.fact(`line_bytes.${kind.id}`, lineBytes);
}
report.fact('warnings.atof_only', atofOnly.warnings);
report.fact('warnings.atof_atif', withAtif.warnings);
report.note('Per event = per hook call = per ATOF line. Timed: hook calls + drain; the batch session\'s trajectory is written at shutdown, untimed (the session kind writes one per pair, timed).');
report.write();
rmSync(dir, { recursive: true, force: true });
