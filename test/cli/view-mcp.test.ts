// `view` of an MCP server's call as docs/adapters/mcp.md's programs record it (agent.mjs and weather-server.mjs as
// written, two processes over stdio, the model served on loopback), the server's own model call refused (HTTP 400),
// so generateText throws inside the tool and the server answers `isError`. The server's trajectory alone, the two
// trajectories together and the two processes' ATOF lines in one file must tell one story: the server's failed tool
// call and its failed turn, under the agent's tool call. Two processes that share one ATOF file (the same host name)
// append to it in the order they flush, the server's session (which ends first) often before the agent's session
// start; here each names its own file, and `cat` of the two in either order is that file: one tree either way, read
// at once, as a stream, or as it grows (`view --serve`).
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaveOutRemoteSessions } from '../../src/cli/compare/remote-sessions.ts';
import { AtofIndex } from '../../src/cli/view/atof-index.ts';
import { detailOf } from '../../src/cli/view/detail.ts';
import { sessionsOf } from '../../src/cli/view/load.ts';
import type { ViewNode } from '../../src/cli/view/model.ts';
import { rollupOf } from '../../src/cli/view/rollup.ts';
import { rowWithoutDuration } from '../adapters/support.ts';
import { recordMcpRun } from './mcp-run.ts';
import { cli, cliInProcess, tempDir } from './support.ts';
import { all, viewed, type JsonNode } from './view-json.ts';

let cwd: string;
let serverAtif: string;
let agentAtif: string;
let serverId: string;
/** Each process's ATOF file. */
let atof: { server: string; agent: string };

beforeAll(async () => {
  ({ cwd, serverAtif, agentAtif, serverId, atof } = await recordMcpRun());
}, 130_000);

afterAll(() => {
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
});

/** The two processes' lines in one file, as they append to a shared one when `first` flushed first. */
function flushedFirst(first: 'server' | 'agent'): string {
  const file = path.join(tempDir('nrh-view-mcp-'), `${first}-first.jsonl`);
  writeFileSync(file, first === 'server' ? atof.server + atof.agent : atof.agent + atof.server);
  return file;
}

/** Each process's lines in its own file, as each writes them by default: the agent's and the server's, in `order`. */
function ownFiles(order: 'agent, server' | 'server, agent'): string[] {
  const dir = tempDir('nrh-view-mcp-files-');
  const files = { agent: path.join(dir, 'agent.atof.jsonl'), server: path.join(dir, 'server.atof.jsonl') };
  writeFileSync(files.agent, atof.agent);
  writeFileSync(files.server, atof.server);
  return order === 'agent, server' ? [files.agent, files.server] : [files.server, files.agent];
}

/** A tree as `view --json` prints it, or as the viewer builds it (its rollups worked out on demand). */
type Tree = (JsonNode | ViewNode) & { children: Tree[] };
const everyNode = (root: Tree): Tree[] => all(root as JsonNode) as Tree[];
const totalsOf = (root: Tree) => ('totals' in root && root.totals !== undefined ? root.totals : rollupOf(root as ViewNode).totals);

/** The server's session under the agent's tool call `tool`, the only row there. */
function remoteUnder(session: Tree, tool: string): Tree {
  const call = everyNode(session).find((node) => node.kind === 'tool' && node.title === `tool ${tool}` && node.children.some((child) => child.kind === 'subagent'))!;
  expect(call, 'the agent’s tool call holds the server’s session').toBeDefined();
  const [remote, ...others] = call.children;
  expect(others).toEqual([]);
  expect([remote!.kind, remote!.title]).toEqual(['subagent', `remote session ${serverId}`]);
  return remote!;
}

/** What the server's session says, from whichever file: its counts, its failed tool call and how its turn ended. */
function serverStory(session: Tree): unknown {
  const nodes = everyNode(session);
  const { llmCalls, toolCalls, errors } = totalsOf(session);
  return {
    totals: { llmCalls, toolCalls, errors },
    failedTool: nodes.filter((node) => node.kind === 'tool').map((node) => [node.title, node.error]),
    failedLlm: nodes.filter((node) => node.kind === 'llm').map((node) => node.error),
    turnEnd: nodes.filter((node) => node.kind === 'turn').map((node) => node.note?.replace(/^.* · /, '')),
  };
}

const SERVER_STORY = {
  totals: { llmCalls: 1, toolCalls: 1, errors: 2 },
  failedTool: [['tool forecast', 'ToolError: Invalid model for this key']],
  failedLlm: ['AI_APICallError: Invalid model for this key'],
  turnEnd: ['failed: AI_APICallError'],
};

describe('view: an MCP server call whose tool failed, recorded by the two processes of docs/adapters/mcp.md', () => {
  it("the server's trajectory alone shows its failed tool call and failed turn, as its ATOF lines do", async () => {
    expect(serverStory(await viewed(serverAtif))).toEqual(SERVER_STORY);
    expect(serverStory(remoteUnder(await viewed(flushedFirst('agent')), 'forecast'))).toEqual(SERVER_STORY);
    const text = (await cliInProcess(['view', serverAtif])).stdout;
    expect(text).toMatch(/1 LLM call, 1 tool call {2}2 errors\n/);
    expect(text).toMatch(/✗ tool forecast {2}ERROR ToolError: Invalid model for this key\n/);
    expect(text).toMatch(/turn 1 .*· failed: AI_APICallError\n/);
    expect(text).not.toMatch(/system|observation/);
  });

  it("given both trajectories, the server's session under the agent's tool call carries its errors", async () => {
    const result = await cliInProcess(['view', '--json', serverAtif, agentAtif]);
    expect(result.code, result.stderr).toBe(0);
    const [moved, agent] = JSON.parse(result.stdout).files as { sessions: JsonNode[] }[];
    expect(moved!.sessions).toEqual([]);
    const session = agent!.sessions[0]!;
    expect(serverStory(remoteUnder(session, 'forecast'))).toEqual(SERVER_STORY);
    expect(session.totals).toMatchObject({ llmCalls: 3, toolCalls: 2, errors: 2 });
  });

  it.each(['agent, server', 'server, agent'] as const)("each process's own ATOF file, given together (%s): the server's session under the agent's tool call, as one file holding both shows it", async (order) => {
    const files = ownFiles(order);
    const result = await cliInProcess(['view', '--json', ...files]);
    expect(result.code, result.stderr).toBe(0);
    const reported = JSON.parse(result.stdout).files as { file: string; sessions: JsonNode[] }[];
    const byName = (name: string) => reported.find((entry) => entry.file.endsWith(name))!;
    expect(byName('server.atof.jsonl').sessions).toEqual([]);
    const oneFile = JSON.parse((await cliInProcess(['view', '--json', flushedFirst('agent')])).stdout).files[0].sessions;
    expect(byName('agent.atof.jsonl').sessions).toEqual(oneFile);
    expect(serverStory(remoteUnder(byName('agent.atof.jsonl').sessions[0]!, 'forecast'))).toEqual(SERVER_STORY);
    const text = (await cliInProcess(['view', ...files])).stdout;
    expect(text.match(/^ {10}session /gm)).toHaveLength(1);
    expect(text).toContain(`(session ${serverId} is shown under tool call call_oslo of ${files.find((file) => file.endsWith('agent.atof.jsonl'))}`);
  });

  it.each(['server', 'agent'] as const)("one process's ATOF lines on standard input with the other's file (the %s's on stdin): joined as two files are", (piped) => {
    const [agentFile, serverFile] = ownFiles('agent, server');
    const file = piped === 'server' ? agentFile! : serverFile!;
    const result = cli(['view', '--json', '-', file], { input: piped === 'server' ? atof.server : atof.agent });
    expect(result.code, result.stderr).toBe(0);
    const reported = JSON.parse(result.stdout).files as { file: string; sessions: JsonNode[] }[];
    expect(reported.map((entry) => entry.sessions.length)).toEqual(piped === 'server' ? [0, 1] : [1, 0]);
    const session = reported.flatMap((entry) => entry.sessions)[0]!;
    expect(session.title).toBe('session user-42');
    expect(serverStory(remoteUnder(session, 'forecast'))).toEqual(SERVER_STORY);
    expect(cli(['view', '-', file], { input: piped === 'server' ? atof.server : atof.agent }).stdout).toContain(`(session ${serverId} is shown under tool call call_oslo of `);
  });

  it("the server's row names its session id in fields of its own, from either file (compare matches on them; the title is for reading)", async () => {
    for (const files of [[serverAtif, agentAtif], ownFiles('agent, server'), [flushedFirst('server')]]) {
      const reported = JSON.parse((await cliInProcess(['view', '--json', ...files])).stdout).files as { sessions: JsonNode[] }[];
      const session = reported.flatMap((entry) => entry.sessions)[0]!;
      expect(session, files.join(' ')).toMatchObject({ kind: 'session', sessionId: 'user-42' });
      expect(session).not.toHaveProperty('remote');
      expect(remoteUnder(session, 'forecast'), files.join(' ')).toMatchObject({ sessionId: serverId, remote: true });
    }
    const root = sessionsOf('stdin', readFileSync(flushedFirst('agent'), 'utf8'), 'stdin.jsonl').roots[0]!;
    const remote = everyNode(root as Tree).find((row) => 'remote' in row && row.remote === true)!;
    // Another wording of the row's title leaves what compare matches on as it is.
    remote.title = `MCP server call ${serverId}`;
    expect(leaveOutRemoteSessions(root, [serverId])).toEqual([serverId]);
    expect(everyNode(root as Tree).some((row) => row.kind === 'subagent')).toBe(false);
  });

  it.each(['server', 'agent'] as const)("the one ATOF file, the %s's lines first: one session, the server's under the agent's tool call", async (first) => {
    const file = flushedFirst(first);
    // Streamed (a file on disk) and read whole (standard input) alike.
    const streamed = await viewed(file);
    const whole = sessionsOf('stdin', readFileSync(file, 'utf8'), 'stdin.jsonl').roots;
    expect(whole.map((root) => root.title)).toEqual(['session user-42']);
    for (const session of [streamed, whole[0]!] as Tree[]) {
      expect(session.title).toBe('session user-42');
      expect(serverStory(remoteUnder(session, 'forecast'))).toEqual(SERVER_STORY);
    }
    const text = (await cliInProcess(['view', file])).stdout;
    expect(text.match(/^ {10}session /gm)).toHaveLength(1);
    expect(text).toMatch(/tool forecast [^\n]*\n[^\n]*└─ remote session mcp-weather-server-[^\n]*Σ 2 errors/);
  });

  /** `view`'s text and `--html` page of the run, from the shared ATOF file in either flush order and from the two trajectories. */
  async function eachReading(check: (kind: string, text: string, html: string) => void): Promise<void> {
    const dir = tempDir('nrh-view-mcp-html-');
    const inputs = {
      'atof, server first': [flushedFirst('server')],
      'atof, agent first': [flushedFirst('agent')],
      'two atof files, agent first': ownFiles('agent, server'),
      'two atof files, server first': ownFiles('server, agent'),
      atif: [serverAtif, agentAtif],
    };
    for (const [kind, files] of Object.entries(inputs)) {
      const page = path.join(dir, `${kind}.html`);
      expect((await cliInProcess(['view', ...files, '--html', page])).code).toBe(0);
      check(kind, (await cliInProcess(['view', ...files])).stdout, readFileSync(page, 'utf8'));
    }
  }

  it('from its ATOF lines or its trajectories, each LLM row names the model that answered and the one the request asked for', async () => {
    await eachReading((kind, text, html) => {
      const models = text.split('\n').flatMap((line) => /─ (?:✗ )?LLM (.+?) {2}/.exec(line)?.[1] ?? []);
      // The response named gpt-4o-2024-08-06 for the request's gpt-4o; the server's refused call has no answer.
      expect(models, kind).toEqual(['gpt-4o-2024-08-06 (asked gpt-4o)', 'gpt-4o-mini', 'gpt-4o-2024-08-06 (asked gpt-4o)']);
      expect(html.match(/gpt-4o-2024-08-06 \(asked gpt-4o\)/g)?.length, kind).toBeGreaterThanOrEqual(2);
    });
  });

  it('from its ATOF lines (in either order) or its trajectories, view shows the same rows: turns by their number, agents by name and model, LLM calls by model', async () => {
    const readings = new Map<string, { rows: string[]; titles: string[] }>();
    await eachReading((kind, text, html) => {
      // Each row without its time, duration and tree branch, in order: the server's tool call, whose start its
      // trajectory does not keep, is listed where it ended (after the server's turn) from either file.
      const rows = text
        .split('\n')
        .filter((line) => /^ {10}session |[├└]─ /.test(line))
        .map((line) => rowWithoutDuration(line.trim()));
      readings.set(kind, { rows, titles: [...html.matchAll(/<span class="title">([^<]*)<\/span>/g)].map((match) => match[1]!) });
    });
    const atif = readings.get('atif')!;
    for (const [kind, reading] of readings) {
      expect(reading.rows, kind).toEqual(atif.rows);
      expect(reading.titles, kind).toEqual(atif.titles);
    }
    const line = (start: string) => atif.rows.find((row) => row.startsWith(start));
    expect(line('session user-42')).toMatch(/^session user-42 {2}\(agent, gpt-4o\) /);
    expect(atif.rows.filter((row) => row.startsWith('turn '))).toEqual([
      'turn 1  220 in / 27 out  Σ 2 errors  (own: 220 in / 27 out, 1 tool call, 0 errors)  “What is the weather in Oslo?”',
      'turn 1  Σ 1 error  “Write a one-line forecast for Oslo.” · failed: AI_APICallError',
    ]);
    expect(line(`remote session ${serverId}`)).toBe(`remote session ${serverId}  Σ 2 errors  weather-server, gpt-4o-mini · failed`);
    expect(atif.rows.filter((row) => /^(✗ )?LLM /.test(row))).toEqual([
      'LLM gpt-4o-2024-08-06 (asked gpt-4o)  90 in / 15 out  → forecast',
      '✗ LLM gpt-4o-mini  ERROR AI_APICallError: Invalid model for this key',
      'LLM gpt-4o-2024-08-06 (asked gpt-4o)  130 in / 12 out  No forecast for Oslo today.',
    ]);
    // The server's session: its turn, then its own tool call, which ended after it.
    const remote = atif.rows.findIndex((row) => row.startsWith('remote session '));
    expect(atif.rows.slice(remote + 1, remote + 4).map((row) => row.replace(/ {2}.*/, ''))).toEqual(['turn 1', '✗ LLM gpt-4o-mini', '✗ tool forecast']);
    // `--json` keeps an ATOF turn's id, which its title no longer shows; the trajectory has none.
    const turnsOf = async (files: string[]) => all(JSON.parse((await cliInProcess(['view', '--json', ...files])).stdout).files.at(-1).sessions[0]).filter((row) => row.kind === 'turn');
    const ids = (text: string) => [...new Set([...text.matchAll(/"turn_id":"([^"]+)"/g)].map((match) => match[1]))];
    expect((await turnsOf([flushedFirst('agent')])).map((row) => [row.title, row.id])).toEqual([...ids(atof.agent), ...ids(atof.server)].map((id) => ['turn 1', id]));
    expect((await turnsOf([serverAtif, agentAtif])).map((row) => [row.title, row.id])).toEqual([
      ['turn 1', undefined],
      ['turn 1', undefined],
    ]);
  });

  it("from its ATOF lines (in either order) or its trajectories, the server's session that answered isError says it failed", async () => {
    await eachReading((kind, text, html) => {
      // The caller's stop mark of the session says so in ATOF; the server's own record of the call in its trajectory.
      expect(text, kind).toMatch(new RegExp(`└─ remote session ${serverId} .*Σ 2 errors {2}weather-server.* · failed\n`));
      expect(html, kind).toMatch(/weather-server[^"<]* · failed/);
    });
  });

  it("compare: the agent's trajectory (the server's beside it) and its ATOF lines are one run, with the server's session in one file or on its own", async () => {
    const compared = async (a: string, b: string) => {
      const result = await cliInProcess(['compare', a, b, '--json']);
      return { code: result.code, report: JSON.parse(result.stdout) as { pairs: { title: string; status: string }[]; onlyRecorded: { fact: string; run: string; values: string[] }[] } };
    };
    // One file holding both processes' lines nests the server's session; the agent's trajectory references the
    // server's, read from beside it: the server's failed call and turn are compared on both sides.
    const shared = await compared(agentAtif, flushedFirst('server'));
    expect(shared.code, JSON.stringify(shared.report.pairs)).toBe(0);
    expect(shared.report.pairs.map((pair) => pair.title)).toContain(`remote session ${serverId}`);
    expect(shared.report.onlyRecorded).toEqual([]);
    // The agent's own ATOF file references the server's session and does not hold it: left out of both runs, and said.
    const own = ownFiles('agent, server')[0]!;
    for (const [a, b, run] of [[agentAtif, own, 'a'], [own, agentAtif, 'b']] as const) {
      const { code, report } = await compared(a, b);
      expect(code, JSON.stringify(report.pairs)).toBe(0);
      expect(report.pairs.map((pair) => pair.title)).not.toContain(`remote session ${serverId}`);
      expect(report.onlyRecorded).toEqual([{ fact: 'remote', run, values: [serverId] }]);
    }
  });

  it("as the file grows (view --serve), the server's session is listed until the agent's tool call that started it comes, then joins it", () => {
    const file = flushedFirst('server');
    const index = new AtofIndex(file);
    index.readOn(Buffer.byteLength(atof.server));
    expect(index.sessions.map((session) => session.session)).toEqual([serverId]);
    index.readOn(statSync(file).size);
    expect(index.sessions.map((session) => session.session)).toEqual(['user-42']);
    expect(index.summary(index.sessions[0]!)).toMatchObject({ llmCalls: 3, toolCalls: 2, errors: 2 });
    expect(serverStory(remoteUnder(index.tree(index.sessions[0]!) as Tree, 'forecast'))).toEqual(SERVER_STORY);
    expect(remoteUnder(index.tree(index.sessions[0]!) as Tree, 'forecast').note).toBe('weather-server, gpt-4o-mini · failed');
    // The live index row says what `view` of either file says of the session; a turn's details pane, its id.
    expect(index.summary(index.sessions[0]!)).toMatchObject({ title: 'session user-42', note: 'agent, gpt-4o' });
    const turn = everyNode(index.tree(index.sessions[0]!) as Tree).find((row) => row.kind === 'turn') as ViewNode;
    expect(turn.title).toBe('turn 1');
    expect(detailOf(turn).sections[0]).toEqual({ title: 'Id', type: 'facts', facts: [['turn id', /"turn_id":"([^"]+)"/.exec(atof.agent)![1]]] });
  });
});
