// An agent whose session id is a user's email, with the `redact` hook of
// docs/operators/redaction.md, calls its MCP server (a child process over
// stdio) whose own plugin writes into the same trajectory folder and
// redacts nothing. The request's `_meta` names the caller as the agent's
// redaction leaves it, so the server never receives the email: nothing
// either process writes names it. The links still join the two files: the
// server's trajectory names the agent's file, and the agent's tool result
// names the server's.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedactableEvent } from '../../../src/plugin/egress.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { backends } from '../support.ts';
import { runWeatherCall, weatherServer } from './weather-call.ts';

type Loose = Record<string, any>;

const EMAIL = 'ana@example.com';

/** The `redact` hook of docs/operators/redaction.md. */
function pageHook(event: RedactableEvent): void {
  const scrub = (text: string) => text.replace(/[\w.+-]+@[\w-]+\.[\w.]+/g, '<email>');
  event.name = scrub(event.name);
  event.data = JSON.parse(scrub(JSON.stringify(event.data)));
  event.metadata = JSON.parse(scrub(JSON.stringify(event.metadata)));
}

const script = weatherServer('mcp-redacted');
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('an agent whose session id is an email calls its MCP server, with the redaction page\'s hook', () => {
  for (const backend of backends()) {
    it(`the server never receives the email; the two trajectories name each other's files (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-redacted-'));
      folders.push(dir);
      const atifDir = path.join(dir, 'atif');
      const settings = { atifEnabled: true, atifOutputDirectory: atifDir, atofEnabled: true, atofOutputDirectory: path.join(dir, 'atof') };
      const doneFile = path.join(dir, 'server-done.json');
      const { plugin, serverCounters, stderr } = await runWeatherCall({ backend, script, atifDir, doneFile, sessionId: EMAIL, city: 'Oslo', serverTemplate: '', serverNamesBy: 'session_id', plugin: { settings, redact: pageHook } });
      if (!process.versions.deno) expect(serverCounters, `the server's shutdown (its stderr: ${stderr})`).toBeDefined();
      expect(plugin.status().counters.errors).toBe(0);

      // Nothing either process wrote names the email: the server, which redacts nothing, was never sent it.
      const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => /\.jsonl?$/.test(name) && name !== 'server-done.json');
      expect(files.length).toBe(3);
      for (const file of files) {
        expect(file).not.toContain('ana');
        expect(readFileSync(path.join(dir, file), 'utf8').includes(EMAIL), file).toBe(false);
      }
      const names = readdirSync(atifDir).sort();
      const agentFile = names.find((name) => name.includes('-atif-_email_-'))!;
      const serverFile = names.find((name) => name.startsWith('server-for-') || name.includes('-server-for-'))!;
      expect([agentFile, serverFile].every((name) => name !== undefined), names.join(', ')).toBe(true);
      const read = (file: string) => {
        const doc = JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as Loose;
        expect(validateAtif(doc), file).toEqual([]);
        return doc;
      };
      const agent = read(agentFile);
      const server = read(serverFile);
      expect([agent.session_id, agent.trajectory_id]).toEqual(['<email>', '<email>']);
      expect(server.session_id).toBe('server-for-<email>');
      // The server's trajectory names the agent's file as written, and the agent's tool result names the server's.
      expect(server.extra.caller).toEqual({ session_id: '<email>', tool_call_id: 'call_a', trajectory_id: '<email>', trajectory_path: agentFile });
      const refs = agent.steps.flatMap((step: Loose) => step.observation?.results ?? []).flatMap((entry: Loose) => entry.subagent_trajectory_ref ?? []);
      expect(refs).toEqual([{ session_id: 'server-for-<email>', trajectory_id: 'server-for-<email>', trajectory_path: serverFile }]);
    }, 90_000);
  }
});
