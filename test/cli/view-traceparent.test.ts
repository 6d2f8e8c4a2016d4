// `view` (and `view --serve`) of an MCP server's session whose caller came only as a W3C `traceparent`: the real
// two-process run over HTTP of test/adapters/mcp/http-traceparent-run.ts, a plain MCP client behind a fetch that sets
// the header, each process writing its own ATOF file. A traceparent carries the caller's span id (the low 64 bits of
// its tool call scope's uuid), so the server's session names its parent as `00000000-0000-0000-<span id>`; the viewer
// matches that to the one scope of the same trace whose uuid ends so, as OTLP lines the two up, and to none when the
// trace differs or two of its scopes share those 64 bits.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { plainClientRun, type Doc } from '../adapters/mcp/http-traceparent-run.ts';
import { get, serve } from './serve-support.ts';
import { cliInProcess, tempDir } from './support.ts';
import { all, type JsonNode } from './view-json.ts';

let agent: Doc[];
let server: Doc[];
/** The server's session id, and the agent's tool call scope its session continues. */
let serverId: string;
let toolScope: string;
/** A folder holding each process's ATOF file. */
let folder: string;
let files: { agent: string; server: string };

const jsonl = (events: readonly Doc[]) => events.map((event) => `${JSON.stringify(event)}\n`).join('');

beforeAll(async () => {
  const run = await plainClientRun('http', 'view-traceparent');
  agent = run.agentAtof;
  server = run.served.atof;
  const sessionStart = server.find((event) => event.category === 'agent' && event.scope_category === 'start' && event.metadata?.nemo_relay_scope_role === 'session')!;
  serverId = sessionStart.metadata.session_id as string;
  toolScope = agent.find((event) => event.category === 'tool' && event.scope_category === 'start' && event.metadata?.tool_call_id === 'call_oslo')!.uuid as string;
  // What the run is about: the server's session names the tool call by its span id only.
  expect(sessionStart.parent_uuid).toBe(`00000000-0000-0000-${toolScope.slice(19)}`);
  folder = tempDir('nrh-view-traceparent-');
  files = { agent: path.join(folder, 'agent.atof.jsonl'), server: path.join(folder, 'server.atof.jsonl') };
  writeFileSync(files.agent, jsonl(agent));
  writeFileSync(files.server, jsonl(server));
}, 130_000);

/** `view --json` of `paths`: each file's sessions, by file name. */
async function viewJson(paths: readonly string[]): Promise<{ sessions(file: string): JsonNode[]; stderr: string }> {
  const result = await cliInProcess(['view', '--json', ...paths]);
  expect(result.code, result.stderr).toBe(0);
  const reported = JSON.parse(result.stdout).files as { file: string; sessions: JsonNode[] }[];
  return { sessions: (file) => reported.find((entry) => entry.file === file)!.sessions, stderr: result.stderr };
}

/** The rows under the agent's tool call `forecast` (the host's call of the MCP tool). */
const underToolCall = (session: JsonNode) => all(session).find((node) => node.kind === 'tool' && node.title === 'tool forecast')!.children.map((child) => child.title);

/** A copy of the server's lines in `dir`, changed by `change`. */
function serverFileWith(dir: string, change: (event: Doc) => Doc): string {
  const file = path.join(dir, 'server.atof.jsonl');
  writeFileSync(file, jsonl(server.map((event) => change({ ...event }))));
  return file;
}

describe("view: an MCP server's session whose caller came only as a traceparent header", () => {
  it.each(['agent, server', 'server, agent'] as const)("each process's ATOF file given together (%s): the server's session under the agent's tool call, not on its own", async (order) => {
    const paths = order === 'agent, server' ? [files.agent, files.server] : [files.server, files.agent];
    const viewed = await viewJson(paths);
    expect(viewed.stderr).toBe('');
    expect(viewed.sessions(files.server)).toEqual([]);
    const [session, ...others] = viewed.sessions(files.agent);
    expect(others).toEqual([]);
    expect(underToolCall(session!)).toEqual([`remote session ${serverId}`]);
    const text = await cliInProcess(['view', ...paths]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`(session ${serverId} is shown under tool call call_oslo of ${files.agent})`);
    expect(text.stdout).toMatch(new RegExp(`tool forecast.*\\n.*remote session ${serverId}`));
  });

  it.each(['agent', 'server'] as const)("one file holding both processes' lines (the %s's first, as `cat` of the two): the same tree", async (first) => {
    const both = path.join(tempDir('nrh-view-traceparent-cat-'), 'both.atof.jsonl');
    writeFileSync(both, first === 'agent' ? jsonl(agent) + jsonl(server) : jsonl(server) + jsonl(agent));
    const viewed = await viewJson([both]);
    expect(viewed.sessions(both)).toEqual((await viewJson([files.agent, files.server])).sessions(files.agent));
  });

  it("compare: one file holding both processes' lines compares equal to the same lines with the parent named by its full uuid", async () => {
    const dir = tempDir('nrh-view-traceparent-compare-');
    const named = { spanId: path.join(dir, 'span-id.atof.jsonl'), uuid: path.join(dir, 'uuid.atof.jsonl') };
    writeFileSync(named.spanId, jsonl(agent) + jsonl(server));
    writeFileSync(named.uuid, jsonl(agent) + jsonl(server.map((event) => (event.parent_uuid === `00000000-0000-0000-${toolScope.slice(19)}` ? { ...event, parent_uuid: toolScope } : event))));
    const result = await cliInProcess(['compare', '--json', named.uuid, named.spanId]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ equivalent: true });
  });

  it('view --serve of the folder: the same tree, the server\'s session not listed on its own', async () => {
    const served = await serve([folder, '--port', '0']);
    try {
      const rows = (JSON.parse((await get(`${served.url}api/sessions`)).body) as { sessions: { key: string }[] }).sessions;
      expect(rows.map((row) => row.key)).toEqual([`${files.agent}#agent-1`]);
      const page = await get(`${served.url}session?key=${encodeURIComponent(rows[0]!.key)}`);
      expect(page.status).toBe(200);
      const titles = [...page.body.matchAll(/<span class="title">([^<]*)<\/span>/g)].map((match) => match[1]!);
      expect(titles.slice(titles.indexOf('tool forecast'), titles.indexOf('tool forecast') + 2)).toEqual(['tool forecast', `remote session ${serverId}`]);
      expect((await get(`${served.url}session?key=${encodeURIComponent(`${files.server}#${serverId}`)}`)).status).toBe(404);
    } finally {
      expect((await served.stop()).code).toBe(0);
    }
  });

  it('never across traces: a server session of another trace naming the same span id stays on its own', async () => {
    const dir = tempDir('nrh-view-traceparent-other-');
    const otherTrace = '0190a000-0000-7000-8000-000000000001';
    const serverFile = serverFileWith(dir, (event) => (event.propagation_root_uuid === undefined ? event : { ...event, propagation_root_uuid: otherTrace }));
    const viewed = await viewJson([files.agent, serverFile]);
    expect(viewed.sessions(serverFile).map((session) => session.title)).toEqual([`session ${serverId}`]);
    expect(underToolCall(viewed.sessions(files.agent)[0]!)).toEqual([]);
  });

  it('never when two scopes of the trace share the span id: left on its own, and said', async () => {
    const dir = tempDir('nrh-view-traceparent-twice-');
    mkdirSync(path.join(dir, 'again'));
    // The agent's lines again in a second file, its tool call scope under another uuid with the same low 64 bits.
    const twin = `0190a000-0000-7000-${toolScope.slice(19)}`;
    const again = path.join(dir, 'again', 'agent.atof.jsonl');
    writeFileSync(again, jsonl(agent.map((event) => (event.uuid === toolScope ? { ...event, uuid: twin } : event.parent_uuid === toolScope ? { ...event, parent_uuid: twin } : event))));
    const viewed = await viewJson([files.agent, again, files.server]);
    expect(viewed.sessions(files.server).map((session) => session.title)).toEqual([`session ${serverId}`]);
    expect(underToolCall(viewed.sessions(files.agent)[0]!)).toEqual([]);
    expect(viewed.stderr).toContain(`${files.server}: session ${serverId} continues span ${toolScope.slice(19).replace('-', '')} of trace`);
    expect(viewed.stderr).toContain('2 scopes of the trace have that span id');
  });
});
