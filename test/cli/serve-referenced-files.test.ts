// `view --serve` read trajectories through its own path: a Harbor trial folder served showed the main trajectory's
// totals without its context-summarization runs (6,502 in / 690 out where `view` of the file, and its final_metrics,
// say 7,802 / 1,030), and said nothing of a schema_version it does not know or of references not found, which `view`
// says on stderr. The served rows and pages now show what `view` shows for the same file. Harbor's golden files, from
// ../shared/peers.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { peerPath, peersUnavailable } from '../support/peers.ts';
import { get, serve } from './serve-support.ts';
import { cli, tempDir } from './support.ts';

interface Entry { key: string; file: string; session: string; promptTokens: number; completionTokens: number; llmCalls: number; text: { tokens: string }; notes?: string[] }

const skip = peersUnavailable !== undefined;
const reason = skip ? ` (skipped: ${peersUnavailable})` : '';
const MAIN = 'harbor-goldens/terminus_2__hello-world-context-summarization.trajectory.json';
const PREFIX = 'harbor-goldens/terminus_2__hello-world-context-summarization.';
const RUNS = ['summary', 'questions', 'answers'].map((step) => `trajectory.summarization-1-${step}.json`);
const MAIN_SESSION = 'NORMALIZED_SESSION_ID';
const UNKNOWN_VERSION = 'schema_version "ATIF-v2.0" is not one this version of nemo-relay-hooks knows (ATIF-v1.0 to ATIF-v1.8): what it shows may be incomplete';

/** A Harbor trial folder: trajectory.json and the summarization runs it references (all, or only the first). */
function trial(folder: string, runs: readonly string[]): string {
  mkdirSync(folder, { recursive: true });
  copyFileSync(peerPath(MAIN), path.join(folder, 'trajectory.json'));
  for (const run of runs) copyFileSync(peerPath(`${PREFIX}${run}`), path.join(folder, run));
  return path.join(folder, 'trajectory.json');
}

/** What `view` of the file prints on stderr, each line without its `nemo-relay-hooks: <file>: ` prefix. */
function viewNotes(file: string): string[] {
  const result = cli(['view', file]);
  expect(result.code).toBe(0);
  return result.stderr.split('\n').filter(Boolean).map((line) => line.slice(`nemo-relay-hooks: ${file}: `.length));
}

describe.skipIf(skip)(`view --serve of trajectories that reference others by file${reason}`, () => {
  it('shows each row and session page as view shows the file: the runs under their step, its totals, its notes', async () => {
    const root = tempDir('nrh-serve-refs-');
    const complete = trial(path.join(root, 'complete'), RUNS);
    const partial = trial(path.join(root, 'partial'), RUNS.slice(0, 1));
    // A schema_version newer than any this package knows, as `view` says of it.
    const newer = path.join(root, 'newer.json');
    writeFileSync(newer, JSON.stringify({ ...(JSON.parse(readFileSync(peerPath(`${PREFIX}${RUNS[0]}`), 'utf8')) as object), schema_version: 'ATIF-v2.0', session_id: 'newer-session' }));
    const server = await serve([root, '--port', '0']);
    try {
      const rows = (JSON.parse((await get(`${server.url}api/sessions`)).body) as { sessions: Entry[] }).sessions;
      const row = (file: string, session: string) => rows.find((entry) => entry.file === file && entry.session === session);

      // The totals are the file's final_metrics, and the row's text is the terminal's.
      const main = row(complete, MAIN_SESSION)!;
      expect(main).toMatchObject({ promptTokens: 7802, completionTokens: 1030 });
      expect(main.notes).toBeUndefined();
      expect(cli(['view', complete]).stdout.split('\n')[0]).toContain(main.text.tokens);
      const page = await get(`${server.url}session?key=${encodeURIComponent(main.key)}`);
      expect(page.status).toBe(200);
      for (const run of ['summary', 'questions', 'answers']) expect(page.body).toContain(`subagent test-session-context-summarization-summarization-1-${run}`);
      // Each run stays listed on its own too, as view shows a referenced file given with the file referencing it.
      for (const run of RUNS) expect(rows.filter((entry) => entry.file === path.join(root, 'complete', run))).toHaveLength(1);

      // References not found: the totals leave them out, and the row and the page say so in view's words.
      const cut = row(partial, MAIN_SESSION)!;
      expect(cut).toMatchObject({ promptTokens: 7002, completionTokens: 890 });
      expect(viewNotes(partial)).toEqual([`session ${MAIN_SESSION}'s totals leave out 2 trajectories it references, not found beside it: ${RUNS[1]}, ${RUNS[2]}`]);
      expect(cut.notes).toEqual(viewNotes(partial));
      const cutPage = await get(`${server.url}session?key=${encodeURIComponent(cut.key)}`);
      expect(cutPage.body).toContain(`totals leave out 2 trajectories it references, not found beside it: ${RUNS[1]}, ${RUNS[2]}`);

      // A schema_version view does not know: the row and the page say what view says.
      const unknown = row(newer, 'newer-session')!;
      expect(viewNotes(newer)).toEqual([UNKNOWN_VERSION]);
      expect(unknown.notes).toEqual([UNKNOWN_VERSION]);
      const newerPage = await get(`${server.url}session?key=${encodeURIComponent(unknown.key)}`);
      expect(newerPage.body).toContain('schema_version &quot;ATIF-v2.0&quot; is not one this version of nemo-relay-hooks knows');
    } finally {
      await server.stop();
    }
  });

  it('follows a run written after the main file: the row then totals it and stops saying it is missing', async () => {
    const folder = tempDir('nrh-serve-refs-late-');
    const file = trial(folder, RUNS.slice(0, 1));
    const server = await serve([folder, '--port', '0']);
    try {
      const main = async () => (JSON.parse((await get(`${server.url}api/sessions`)).body) as { sessions: Entry[] }).sessions.find((entry) => entry.file === file)!;
      expect((await main()).notes).toHaveLength(1);
      // Its open page follows the runs not written yet, to redraw when they come.
      const page = await get(`${server.url}session?key=${encodeURIComponent((await main()).key)}`);
      expect(/var files=(\[.*?\]),/.exec(page.body)?.[1]).toContain(JSON.stringify(path.join(folder, RUNS[2]!)));
      for (const run of RUNS.slice(1)) copyFileSync(peerPath(`${PREFIX}${run}`), path.join(folder, run));
      let now = await main();
      for (let tries = 0; tries < 100 && now.promptTokens !== 7802; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        now = await main();
      }
      expect(now).toMatchObject({ promptTokens: 7802, completionTokens: 1030 });
      expect(now.notes).toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
