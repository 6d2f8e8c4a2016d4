// A trajectory can reference others by file (Harbor's context summarization: a system step's observation names each
// summarization run's `trajectory_path`, and the main file's final_metrics count them). `view` reads them from beside
// the file; `compare` of two such runs did not: its totals left the summarization runs out (6,502 in / 690 out for
// Harbor's golden trial, whose final_metrics say 7,802 / 1,030), their steps were compared nowhere (two trials whose
// summarization runs differ were "equivalent"), and a reference not found was not said. Small trials of our own in a
// temp folder (always run), then Harbor's golden files from ../shared/peers where present.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { peerPath, peersUnavailable } from '../support/peers.ts';
import { get, serve } from './serve-support.ts';
import { cli, cliInProcess, tempDir } from './support.ts';

const SESSION = 'trial-main';
const RUNS = { summary: 'trajectory.summarization-1-summary.json', answers: 'trajectory.summarization-1-answers.json' } as const;

interface Report {
  equivalent: boolean;
  pairs: { a: string | null; b: string | null; title: string; status: string }[];
  totals: { a: { promptTokens: number; completionTokens: number; llmCalls: number }; b: { promptTokens: number; completionTokens: number; llmCalls: number } };
}

const agentStep = (id: number, message: string, tokens: [number, number]) => ({ step_id: id, source: 'agent', model_name: 'openai/gpt-4o', message, metrics: { prompt_tokens: tokens[0], completion_tokens: tokens[1] } });
const userStep = (id: number, message: string) => ({ step_id: id, source: 'user', message });

/**
 * A trial folder as Harbor writes one: trajectory.json, whose system step references two summarization runs by file
 * (the answers run's model call counting `answers` tokens), and the runs named in `write` beside it.
 */
function trial(folder: string, answers: [number, number], write: readonly (keyof typeof RUNS)[] = ['summary', 'answers']): string {
  mkdirSync(folder, { recursive: true });
  const runs = {
    summary: { session: `${SESSION}-summary`, steps: [userStep(1, 'Summarize your work so far.'), agentStep(2, 'Created test_dir.', [50, 5])] },
    answers: { session: `${SESSION}-answers`, steps: [userStep(1, 'Answer the next agent.'), agentStep(2, 'test_dir holds two files.', answers)] },
  };
  for (const name of write) {
    const run = runs[name];
    writeFileSync(path.join(folder, RUNS[name]), JSON.stringify({ schema_version: 'ATIF-v1.5', session_id: run.session, agent: { name: `terminus-2-summarization-${name}`, version: '2.0.0', model_name: 'openai/gpt-4o' }, steps: run.steps }));
  }
  const main = {
    schema_version: 'ATIF-v1.5',
    session_id: SESSION,
    agent: { name: 'terminus-2', version: '2.0.0', model_name: 'openai/gpt-4o' },
    steps: [
      userStep(1, 'Create hello.txt.'),
      agentStep(2, 'Let me look around first.', [100, 10]),
      {
        step_id: 3,
        source: 'system',
        message: 'Performed context summarization and handoff to continue task.',
        observation: { results: [{ subagent_trajectory_ref: (['summary', 'answers'] as const).map((name) => ({ session_id: runs[name].session, trajectory_path: RUNS[name] })) }] },
      },
      userStep(4, 'Here are the answers the other agent provided.'),
      agentStep(5, 'Created hello.txt.', [200, 20]),
    ],
    final_metrics: { total_prompt_tokens: 100 + 50 + answers[0] + 200, total_completion_tokens: 10 + 5 + answers[1] + 20 },
  };
  const file = path.join(folder, 'trajectory.json');
  writeFileSync(file, JSON.stringify(main));
  return file;
}

const finalMetrics = (file: string) => {
  const metrics = (JSON.parse(readFileSync(file, 'utf8')) as { final_metrics: { total_prompt_tokens: number; total_completion_tokens: number } }).final_metrics;
  return { promptTokens: metrics.total_prompt_tokens, completionTokens: metrics.total_completion_tokens };
};

/** `compare --json` and `compare` of the two files: the report, the text, and stderr (the same from both). */
async function compared(a: string, b: string): Promise<{ code: number; report: Report; text: string; stderr: string }> {
  const json = await cliInProcess(['compare', a, b, '--json']);
  const text = await cliInProcess(['compare', a, b]);
  expect(text.code).toBe(json.code);
  expect(text.stderr).toBe(json.stderr);
  return { code: json.code, report: JSON.parse(json.stdout) as Report, text: text.stdout, stderr: json.stderr };
}

/** The pairs from the system step's to the next turn's: the rows the system step's references are compared in. */
function underSystemStep(report: Report): [string, string | null, string | null, string][] {
  const at = report.pairs.findIndex((pair) => pair.title === 'system');
  expect(at).toBeGreaterThan(0);
  const next = report.pairs.findIndex((pair, index) => index > at && pair.a === '4');
  return report.pairs.slice(at, next).map((pair) => [pair.title, pair.a, pair.b, pair.status]);
}

/** A compare page's rows and totals, to set the served page beside the one `compare --html` writes. */
const pageRows = (html: string) => ({ pairs: html.match(/<div class="pair s-[^"]*"[^]*?<\/div>/g) ?? [], totals: /<table class="totals"[^]*?<\/table>/.exec(html)?.[0] ?? null });

describe('compare of trajectories that reference others by file', () => {
  it("reads them from beside each file as view does: the totals are each file's final_metrics, the runs compared under the system step", async () => {
    const root = tempDir('nrh-compare-refs-');
    try {
      const a = trial(path.join(root, 'a'), [70, 7]);
      const b = trial(path.join(root, 'b'), [80, 8]);
      const { code, report, text, stderr } = await compared(a, b);
      expect(stderr).toBe('');
      // The trials differ only inside the answers run.
      expect(code, text).toBe(1);
      expect(report.totals.a).toMatchObject({ ...finalMetrics(a), llmCalls: 4 });
      expect(report.totals.b).toMatchObject({ ...finalMetrics(b), llmCalls: 4 });
      expect(underSystemStep(report)).toEqual([
        ['system', '3', '3', 'same'],
        [`subagent ${SESSION}-summary`, `${SESSION}-summary`, `${SESSION}-summary`, 'same'],
        ['turn 1', `${SESSION}-summary/1`, `${SESSION}-summary/1`, 'same'],
        ['LLM openai/gpt-4o', `${SESSION}-summary/2`, `${SESSION}-summary/2`, 'same'],
        [`subagent ${SESSION}-answers`, `${SESSION}-answers`, `${SESSION}-answers`, 'same'],
        ['turn 1', `${SESSION}-answers/1`, `${SESSION}-answers/1`, 'same'],
        ['LLM openai/gpt-4o', `${SESSION}-answers/2`, `${SESSION}-answers/2`, 'changed'],
      ]);
      expect(text).toMatch(/prompt tokens +420 +430 +\+10\n/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("says once, in view's words, a reference not found beside a file (its totals leave it out), and compares that run on one side only", async () => {
    const root = tempDir('nrh-compare-refs-missing-');
    try {
      const a = trial(path.join(root, 'a'), [70, 7]);
      const b = trial(path.join(root, 'b'), [70, 7], ['summary']);
      const view = await cliInProcess(['view', b]);
      expect(view.stderr).toBe(`nemo-relay-hooks: ${b}: session ${SESSION}'s totals leave out a trajectory it references, not found beside it: ${RUNS.answers}\n`);
      const { code, report, stderr } = await compared(a, b);
      expect(stderr).toBe(view.stderr);
      expect(code).toBe(1);
      expect(report.totals.a).toMatchObject(finalMetrics(a));
      expect(report.totals.b).toMatchObject({ promptTokens: finalMetrics(b).promptTokens - 70, completionTokens: finalMetrics(b).completionTokens - 7 });
      expect(underSystemStep(report).slice(4).map(([title, , , status]) => [title, status])).toEqual([
        [`subagent ${SESSION}-answers`, 'only-a'],
        ['turn 1', 'only-a'],
        ['LLM openai/gpt-4o', 'only-a'],
      ]);
      // A file compared with itself: said once.
      expect((await cliInProcess(['compare', b, b, '--json'])).stderr).toBe(view.stderr);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('says a file on standard input has no folder to read its references from', () => {
    const root = tempDir('nrh-compare-refs-stdin-');
    try {
      const a = trial(path.join(root, 'a'), [70, 7]);
      const result = cli(['compare', '-', a, '--json'], { input: readFileSync(a) });
      expect(result.stderr).toBe(cli(['view', '-'], { input: readFileSync(a) }).stderr);
      expect(result.stderr).toBe(`nemo-relay-hooks: (stdin): session ${SESSION}'s totals leave out 2 trajectories it references, (standard input has no folder to look in): ${RUNS.summary}, ${RUNS.answers}\n`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the served compare page (view --serve) shows the rows and totals compare --html writes, and the same note', async () => {
    const root = tempDir('nrh-compare-refs-serve-');
    const pages = tempDir('nrh-compare-refs-pages-');
    try {
      const a = trial(path.join(root, 'a'), [70, 7]);
      const b = trial(path.join(root, 'b'), [80, 8], ['summary']);
      const written = path.join(pages, 'a-vs-b.html');
      const command = await cliInProcess(['compare', a, b, '--html', written]);
      const note = `session ${SESSION}'s totals leave out a trajectory it references, not found beside it: ${RUNS.answers}`;
      expect(command.stderr).toBe(`nemo-relay-hooks: ${b}: ${note}\nwrote ${written}\n`);
      const expected = pageRows(readFileSync(written, 'utf8'));
      expect(expected.pairs.join('\n')).toContain(`subagent ${SESSION}-summary`);
      expect(expected.totals).toContain('<tr data-figure="prompt tokens"><td>prompt tokens</td><td>420</td><td>350</td>');
      const server = await serve([root, '--port', '0']);
      try {
        const html = (await get(`${server.url}compare?a=${encodeURIComponent(`${a}#${SESSION}`)}&b=${encodeURIComponent(`${b}#${SESSION}`)}`)).body;
        expect(pageRows(html)).toEqual(expected);
        expect(html.split(`<p class="facts note">${b}: ${note.replaceAll("'", '&#39;')}</p>`)).toHaveLength(2);
      } finally {
        expect((await server.stop()).code).toBe(0);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(pages, { recursive: true, force: true });
    }
  });
});

const MAIN = 'harbor-goldens/terminus_2__hello-world-context-summarization.trajectory.json';
if (peersUnavailable !== undefined) console.info(`[compare-referenced-files] Harbor's golden trial skipped: ${peersUnavailable}`);

describe.skipIf(peersUnavailable !== undefined)("compare of Harbor's golden context-summarization trial", () => {
  it("totals 7,802 in / 1,030 out, the file's final_metrics, each summarization run compared under the system step", async () => {
    const { code, report, stderr } = await compared(peerPath(MAIN), peerPath(MAIN));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const totals of [report.totals.a, report.totals.b]) expect(totals).toMatchObject({ promptTokens: 7802, completionTokens: 1030, llmCalls: 15 });
    const at = report.pairs.findIndex((pair) => pair.title === 'system');
    const runs = report.pairs.slice(at + 1).filter((pair) => pair.title.startsWith('subagent '));
    expect(runs.map((pair) => pair.title)).toEqual(['summary', 'questions', 'answers'].map((run) => `subagent test-session-context-summarization-summarization-1-${run}`));
  });

  it('finds them by the names Harbor writes, beside a trajectory.json', async () => {
    const folder = tempDir('nrh-compare-refs-harbor-');
    try {
      copyFileSync(peerPath(MAIN), path.join(folder, 'trajectory.json'));
      for (const run of ['summary', 'questions', 'answers']) copyFileSync(peerPath(MAIN.replace('trajectory.json', `trajectory.summarization-1-${run}.json`)), path.join(folder, `trajectory.summarization-1-${run}.json`));
      const { report, stderr } = await compared(path.join(folder, 'trajectory.json'), peerPath(MAIN));
      expect(stderr).toBe('');
      expect(report.equivalent).toBe(true);
      expect(report.totals.a).toMatchObject({ promptTokens: 7802, completionTokens: 1030 });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
