// Harbor's context summarization writes each summarization run to its own trajectory file, referenced from a system
// step's observation (`subagent_trajectory_ref` with a `trajectory_path`), and counts them in the main file's
// final_metrics. `view` followed references from tool calls only: its totals (6,502 in / 690 out) disagreed with the
// file's (7,802 / 1,030). Harbor's own golden files, from ../shared/peers.
import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { peerPath, peersUnavailable } from '../support/peers.ts';
import { cli, tempDir } from './support.ts';

const skip = peersUnavailable !== undefined;
const reason = skip ? ` (skipped: ${peersUnavailable})` : '';
const MAIN = 'harbor-goldens/terminus_2__hello-world-context-summarization.trajectory.json';
const RUNS = ['summary', 'questions', 'answers'].map((step) => `trajectory.summarization-1-${step}.json`);
const PREFIX = 'harbor-goldens/terminus_2__hello-world-context-summarization.';

describe.skipIf(skip)(`view of a trajectory that references others by file${reason}`, () => {
  it('follows them from beside the file: the totals are the file\'s final_metrics, each run a subagent under the system step', () => {
    const metrics = (JSON.parse(readFileSync(peerPath(MAIN), 'utf8')) as { final_metrics: { total_prompt_tokens: number; total_completion_tokens: number } }).final_metrics;
    expect([metrics.total_prompt_tokens, metrics.total_completion_tokens]).toEqual([7802, 1030]);
    const result = cli(['view', peerPath(MAIN)]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/session NORMALIZED_SESSION_ID .* 7,802 in \/ 1,030 out {2}\$0\.0298 /);
    const system = lines.findIndex((line) => /└─ system {2}Performed context summarization/.test(line));
    expect(system).toBeGreaterThan(0);
    const under = lines.slice(system + 1).filter((line) => /─ subagent test-session-context-summarization-summarization-1-/.test(line));
    expect(under.map((line) => /summarization-1-(\w+)/.exec(line)![1])).toEqual(['summary', 'questions', 'answers']);
    expect(under[0]).toMatch(/500 in \/ 200 out/);
  });

  it('finds them by the names Harbor writes (trajectory.json beside trajectory.summarization-1-*.json)', () => {
    const folder = tempDir();
    copyFileSync(peerPath(MAIN), path.join(folder, 'trajectory.json'));
    for (const run of RUNS) copyFileSync(peerPath(`${PREFIX}${run}`), path.join(folder, run));
    const result = cli(['view', path.join(folder, 'trajectory.json')]);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toMatch(/7,802 in \/ 1,030 out/);
  });

  it('says which references were not found and that the totals leave them out', () => {
    const folder = tempDir();
    copyFileSync(peerPath(MAIN), path.join(folder, 'trajectory.json'));
    copyFileSync(peerPath(`${PREFIX}${RUNS[0]}`), path.join(folder, RUNS[0]!));
    const file = path.join(folder, 'trajectory.json');
    const result = cli(['view', file]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`nemo-relay-hooks: ${file}: session NORMALIZED_SESSION_ID's totals leave out 2 trajectories it references, not found beside it: ${RUNS[1]}, ${RUNS[2]}\n`);
    expect(result.stdout.split('\n')[0]).toMatch(/7,002 in \/ 890 out/);
  });

  it('never reads a file of another session under a referenced name', () => {
    const folder = tempDir();
    copyFileSync(peerPath(MAIN), path.join(folder, 'trajectory.json'));
    for (const run of RUNS) copyFileSync(peerPath(`${PREFIX}${RUNS[0]}`), path.join(folder, run));
    const result = cli(['view', path.join(folder, 'trajectory.json')]);
    expect(result.stderr).toContain(`leave out 2 trajectories it references, not found beside it: ${RUNS[1]}, ${RUNS[2]}`);
  });
});
