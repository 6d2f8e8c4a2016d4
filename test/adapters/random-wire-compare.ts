// `compare` on a random-wire run's own files: the run's ATIF trajectory and
// its ATOF file are one run written two ways, so the command (run in this
// process, loading the files as it does) must find them equivalent; facts
// only one format holds are its `onlyRecorded`, never a difference. The same
// for native's two files, and for memory's trajectory against native's.
// A failure prints what the command printed, under the run's label (its
// seed and outline), with the command line that shows it again.
import { expect } from 'vitest';
import { cliInProcess } from '../cli/support.ts';
import { filesOf } from '../cli/view-json.ts';

/** `compare a b` finds the runs equivalent (exit 0); `what` names the pair for the failure message. */
async function expectEquivalent(label: string, what: string, a: string, b: string): Promise<void> {
  const result = await cliInProcess(['compare', a, b]);
  expect(result.code, `${label}\ncompare, ${what}: nemo-relay-hooks compare '${a}' '${b}'\n${result.stdout}${result.stderr}`).toBe(0);
}

/** The run's ATIF file against its own session of its ATOF file (where the plugin wrote into `dir`); the trajectory's path. */
export async function expectFilesEquivalent(label: string, backend: 'memory' | 'native', dir: string, session: string): Promise<string> {
  const { atif, atof } = filesOf(dir);
  await expectEquivalent(label, `${backend}'s ATIF against its ATOF`, atif, `${atof}#${session}`);
  return atif;
}

/** Memory's trajectory against native's, for the same hooks. */
export async function expectBackendsEquivalent(label: string, memoryAtif: string, nativeAtif: string): Promise<void> {
  await expectEquivalent(label, "memory's ATIF against native's", memoryAtif, nativeAtif);
}
