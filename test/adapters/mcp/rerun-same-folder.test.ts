// An agent and its MCP server (a child process over stdio), each with the
// NeMo Relay plugin writing into one trajectory folder, run twice into that
// folder with the same session ids, as a host that reuses its ids does on
// every run. Each run's links must name that run's files: the server's
// trajectory names its caller's file (the `_meta` the client sends, handed
// out in the caller's first turn, before its file is written), and the
// caller's trajectory names the server's file (the `_meta` the server
// answers with, handed out as its session closes, before its file is
// written). An earlier run's files are already at the plain names.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { processBackends } from '../support.ts';
import { runWeatherCall, weatherServer } from './weather-call.ts';

type Loose = Record<string, any>;

const script = weatherServer('mcp-rerun');
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** One run of the agent: a session `agent-1` whose model asks for `forecast` (call `call_a`), answered by the server. */
async function run(backend: 'memory' | 'native', atifDir: string, tag: string): Promise<{ agentFiles: string[]; serverCounters: Loose | undefined; agentErrors: number }> {
  const doneFile = path.join(path.dirname(atifDir), `server-done-${tag}.json`);
  const template = '{session_id}.json';
  const settings = { atifEnabled: true, atifOutputDirectory: atifDir, atifFilenameTemplate: template };
  const { plugin, serverCounters, stderr } = await runWeatherCall({ backend, script, atifDir, doneFile, sessionId: 'agent-1', city: `Oslo (${tag})`, serverTemplate: template, serverNamesBy: 'tool_call_id', plugin: { settings } });
  if (!process.versions.deno) expect(serverCounters, `the server's shutdown (its stderr: ${stderr})`).toBeDefined();
  const agentFiles = plugin.status().outputs.filter((output) => output.kind === 'atif').map((output) => path.basename(output.path));
  return { agentFiles, serverCounters, agentErrors: plugin.status().counters.errors };
}

describe('an agent and its MCP server run twice into one folder with the same session ids', () => {
  for (const backend of processBackends()) {
    it(`the second run's links name the second run's files, which hold its calls (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-rerun-'));
      folders.push(dir);
      const atifDir = path.join(dir, 'atif');
      const first = await run(backend, atifDir, 'run 1');
      const second = await run(backend, atifDir, 'run 2');
      expect([first.agentFiles, second.agentFiles]).toEqual([['agent-1.json'], ['agent-1~2.json']]);
      for (const outcome of [first, second]) {
        expect(outcome.agentErrors).toBe(0);
        if (outcome.serverCounters !== undefined) expect(outcome.serverCounters.errors).toBe(0);
      }
      expect(readdirSync(atifDir).sort()).toEqual(['agent-1.json', 'agent-1~2.json', 'server-for-call_a.json', 'server-for-call_a~2.json']);
      const read = (file: string) => {
        const doc = JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as Loose;
        expect(validateAtif(doc), file).toEqual([]);
        return doc;
      };
      const refOf = (doc: Loose) => doc.steps.flatMap((step: Loose) => step.observation?.results ?? []).flatMap((entry: Loose) => entry.subagent_trajectory_ref ?? []);
      const toolResults = (doc: Loose) => doc.steps.map((step: Loose) => step.observation?.results?.[0]?.content);
      for (const [tag, agentFile, serverFile] of [
        ['run 1', 'agent-1.json', 'server-for-call_a.json'],
        ['run 2', 'agent-1~2.json', 'server-for-call_a~2.json'],
      ] as const) {
        const agent = read(agentFile);
        const server = read(serverFile);
        // The caller's link names the server file this run wrote, and that file holds this run's call.
        expect(refOf(agent), agentFile).toEqual([{ session_id: 'server-for-call_a', trajectory_id: 'server-for-call_a', trajectory_path: serverFile }]);
        expect(toolResults(server), serverFile).toEqual([`Oslo (${tag}): rain`]);
        // And the server's trajectory names this run's caller file, whose steps are this run's.
        expect(server.extra.caller, serverFile).toEqual({ session_id: 'agent-1', tool_call_id: 'call_a', trajectory_id: 'agent-1', trajectory_path: agentFile });
        expect(agent.steps.at(-1).message, agentFile).toBe(`Oslo (${tag}): rain`);
      }
    }, 90_000);
  }
});
