// `view --serve` of a folder holding a real two-process MCP run (docs/adapters/mcp.md's agent.mjs and
// weather-server.mjs, each process writing its own ATOF file and trajectory): the served index and session page show
// the tree `view` of the two ATOF files given together shows (the server's session under the agent's tool call, not
// listed on its own), and the served compare page applies `compare`'s rule for another process's sessions (a
// referenced trajectory read from the run's folder, never outside it; one the other run does not hold left out of
// both and said), its rows the command line's.
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMcpRun, type McpRun } from './mcp-run.ts';
import { get, serve } from './serve-support.ts';
import { cliInProcess, tempDir } from './support.ts';

let run: McpRun;
/** The served folder: the two trajectories in `atif/`, each process's ATOF file in `atof/`. */
let folder: string;
let files: { agentAtif: string; serverAtif: string; agentAtof: string; serverAtof: string };

beforeAll(async () => {
  run = await recordMcpRun();
  folder = tempDir('nrh-serve-mcp-');
  mkdirSync(path.join(folder, 'atif'));
  mkdirSync(path.join(folder, 'atof'));
  files = {
    agentAtif: path.join(folder, 'atif', path.basename(run.agentAtif)),
    serverAtif: path.join(folder, 'atif', path.basename(run.serverAtif)),
    agentAtof: path.join(folder, 'atof', 'agent.atof.jsonl'),
    serverAtof: path.join(folder, 'atof', 'server.atof.jsonl'),
  };
  copyFileSync(run.agentAtif, files.agentAtif);
  copyFileSync(run.serverAtif, files.serverAtif);
  writeFileSync(files.agentAtof, run.atof.agent);
  writeFileSync(files.serverAtof, run.atof.server);
}, 130_000);

afterAll(() => {
  if (run !== undefined) rmSync(run.cwd, { recursive: true, force: true });
});

interface Row {
  key: string;
  kind: string;
  session: string;
  llmCalls: number;
  toolCalls: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
}

/** The rows' titles of a timeline page, in order. */
const titles = (html: string) => [...html.matchAll(/<span class="title">([^<]*)<\/span>/g)].map((match) => match[1]!);
/** The pair rows of a compare page and what it says only one run records. */
const compareRows = (html: string) => ({ pairs: html.match(/<div class="pair s-[^"]*"[^]*?<\/div>/g) ?? [], onlyRecorded: /<p class="muted" id="only-recorded">([^]*?)<\/p>/.exec(html)?.[1] ?? null });

/** The served folder's index, a page of it and a compare page, while the server runs. */
async function served<T>(root: string, use: (url: string) => Promise<T>): Promise<T> {
  const server = await serve([root, '--port', '0']);
  try {
    return await use(server.url);
  } finally {
    expect((await server.stop()).code).toBe(0);
  }
}

const sessions = async (url: string) => (JSON.parse((await get(`${url}api/sessions`)).body) as { sessions: Row[] }).sessions;
const keyOf = (file: string, session: string) => `${file}#${session}`;

describe("view --serve: an MCP server's session in its own ATOF file", () => {
  it("is shown under the agent's tool call, as view of the two files together shows it, and not listed on its own", async () => {
    const page = path.join(tempDir('nrh-serve-mcp-html-'), 'both.html');
    const both = await cliInProcess(['view', '--json', files.agentAtof, files.serverAtof, '--html', page]);
    expect(both.code, both.stderr).toBe(0);
    const viewed = JSON.parse(both.stdout).files[0].sessions[0] as { totals: { llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number } };
    await served(folder, async (url) => {
      const atof = (await sessions(url)).filter((row) => row.kind === 'atof');
      expect(atof.map((row) => row.key)).toEqual([keyOf(files.agentAtof, 'user-42')]);
      // The row's figures are the joined session's, the server's model call and tool call counted in it.
      const { llmCalls, toolCalls, errors, promptTokens, completionTokens } = viewed.totals;
      expect(atof[0]).toMatchObject({ llmCalls, toolCalls, errors, promptTokens, completionTokens });
      expect(atof[0]).toMatchObject({ llmCalls: 3, toolCalls: 2, errors: 2 });
      const session = await get(`${url}session?key=${encodeURIComponent(atof[0]!.key)}`);
      expect(session.status).toBe(200);
      expect(titles(session.body)).toEqual(titles(readFileSync(page, 'utf8')));
      const shown = titles(session.body);
      expect(shown.slice(shown.indexOf('tool forecast'), shown.indexOf('tool forecast') + 2)).toEqual(['tool forecast', `remote session ${run.serverId}`]);
      // The page follows the server's file too: its session grows there.
      expect(session.body).toContain(`var files=${JSON.stringify([files.agentAtof, files.serverAtof])}`);
      expect((await get(`${url}session?key=${encodeURIComponent(keyOf(files.serverAtof, run.serverId))}`)).status).toBe(404);
    });
  });

  it("in its own trajectory beside the agent's is shown under the agent's tool call, as view of the two trajectories together shows it", async () => {
    const page = path.join(tempDir('nrh-serve-mcp-atif-'), 'both.html');
    expect((await cliInProcess(['view', files.agentAtif, files.serverAtif, '--html', page])).code).toBe(0);
    await served(folder, async (url) => {
      const rows = await sessions(url);
      const atif = rows.filter((row) => row.kind === 'atif');
      expect(atif.map((row) => row.key)).toEqual([keyOf(files.agentAtif, 'user-42')]);
      // The same figures as the ATOF session of the same run.
      const atof = rows.find((row) => row.kind === 'atof')!;
      const figures = (row: Row) => [row.llmCalls, row.toolCalls, row.errors, row.promptTokens, row.completionTokens];
      expect(figures(atif[0]!)).toEqual(figures(atof));
      const session = await get(`${url}session?key=${encodeURIComponent(atif[0]!.key)}`);
      expect(titles(session.body)).toEqual(titles(readFileSync(page, 'utf8')));
      expect(titles(session.body)).toContain(`remote session ${run.serverId}`);
      expect(session.body).toContain(`var files=${JSON.stringify([files.agentAtif, files.serverAtif])}`);
      expect((await get(`${url}session?key=${encodeURIComponent(keyOf(files.serverAtif, run.serverId))}`)).status).toBe(404);
    });
  });

  it("is listed on its own until the agent's file comes into the folder, then joins the agent's tool call", async () => {
    const live = tempDir('nrh-serve-mcp-live-');
    const server = path.join(live, 'server.atof.jsonl');
    const agent = path.join(live, 'agent.atof.jsonl');
    writeFileSync(server, run.atof.server);
    await served(live, async (url) => {
      expect((await sessions(url)).map((row) => row.key)).toEqual([keyOf(server, run.serverId)]);
      writeFileSync(agent, run.atof.agent);
      let rows: Row[] = [];
      for (let tries = 0; tries < 100; tries++) {
        rows = await sessions(url);
        if (rows.length === 1 && rows[0]!.key === keyOf(agent, 'user-42')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(rows.map((row) => row.key)).toEqual([keyOf(agent, 'user-42')]);
      expect(rows[0]).toMatchObject({ llmCalls: 3, toolCalls: 2, errors: 2 });
      expect((await get(`${url}session?key=${encodeURIComponent(keyOf(server, run.serverId))}`)).status).toBe(404);
    });
  });

  it("compares the agent's trajectory with its ATOF session as compare does: the server's trajectory read beside it, the rows the command line's", async () => {
    // The served ATOF session holds the server's lines from its own file: on the command line, one file holding both.
    const shared = path.join(tempDir('nrh-serve-mcp-shared-'), 'both.atof.jsonl');
    writeFileSync(shared, run.atof.agent + run.atof.server);
    const page = path.join(tempDir('nrh-serve-mcp-compare-'), 'compare.html');
    const cli = await cliInProcess(['compare', files.agentAtif, shared, '--html', page]);
    expect(cli.code, cli.stdout).toBe(0);
    const expected = compareRows(readFileSync(page, 'utf8'));
    expect(expected.pairs.join('\n')).toContain(`remote session ${run.serverId}`);
    expect(expected.onlyRecorded).toBeNull();
    await served(folder, async (url) => {
      const html = (await get(`${url}compare?a=${encodeURIComponent(keyOf(files.agentAtif, 'user-42'))}&b=${encodeURIComponent(keyOf(files.agentAtof, 'user-42'))}`)).body;
      expect(compareRows(html)).toEqual(expected);
      expect(html).toContain('equivalent');
      // The page follows each file it shows lines of.
      expect(html).toContain(`var files=${JSON.stringify([files.agentAtif, files.serverAtif, files.agentAtof, files.serverAtof])}`);
    });
  });

  it("never reads a referenced trajectory outside the served folder (up and out, or through a link): left out of both runs, and said, as compare does", async () => {
    const root = tempDir('nrh-serve-mcp-outside-');
    const outside = path.join(root, 'outside');
    const inFolder = path.join(root, 'served');
    mkdirSync(outside);
    mkdirSync(path.join(inFolder, 'atif'), { recursive: true });
    copyFileSync(run.serverAtif, path.join(outside, path.basename(run.serverAtif)));
    symlinkSync(outside, path.join(inFolder, 'atif', 'link'));
    const reference = `"trajectory_path":"${path.basename(run.serverAtif)}"`;
    const text = readFileSync(run.agentAtif, 'utf8');
    expect(text).toContain(reference);
    const runs = {
      up: path.join(inFolder, 'atif', 'up.json'),
      linked: path.join(inFolder, 'atif', 'linked.json'),
      atof: path.join(inFolder, 'agent.atof.jsonl'),
    };
    writeFileSync(runs.up, text.replace(reference, `"trajectory_path":"../../outside/${path.basename(run.serverAtif)}"`));
    writeFileSync(runs.linked, text.replace(reference, `"trajectory_path":"link/${path.basename(run.serverAtif)}"`));
    writeFileSync(runs.atof, run.atof.agent + run.atof.server);
    await served(inFolder, async (url) => {
      for (const trajectory of [runs.up, runs.linked]) {
        const page = path.join(tempDir('nrh-serve-mcp-outside-page-'), 'compare.html');
        const cli = await cliInProcess(['compare', trajectory, runs.atof, '--html', page]);
        const expected = compareRows(readFileSync(page, 'utf8'));
        expect(cli.stdout, trajectory).toContain(`only b's file records another process's sessions, which the other file references and does not hold (not compared): ${run.serverId}`);
        const html = (await get(`${url}compare?a=${encodeURIComponent(keyOf(trajectory, 'user-42'))}&b=${encodeURIComponent(keyOf(runs.atof, 'user-42'))}`)).body;
        expect(compareRows(html), trajectory).toEqual(expected);
        expect(html).not.toContain(`remote session ${run.serverId}`);
      }
    });
  });
});
