// A host that runs agents in worker threads, as docs/hosts/emitting-hooks.md
// says: a registry and a plugin are per thread (a worker has its own module
// instance), each thread's plugin on the memory backend, both writing the
// same folder. Every session is written once, under its own name, and the
// shared ATOF file holds each thread's events once, each line whole.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/doc-snippets.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';

const TURNS = 200;

/** The agent loop both threads run, as an ES module importing the built package. */
function program(dir: string): string {
  const entry = pathToFileURL(path.join(repoRoot, 'dist/src/index.js')).href;
  return `
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createNemoRelayPlugin, HookRegistry } from '${entry}';
import { silentLogger, TurnIds } from '${pathToFileURL(path.join(repoRoot, 'dist/src/hooks/index.js')).href}';
export async function run(sessionId) {
  const hooks = new HookRegistry();
  const plugin = createNemoRelayPlugin({ backend: 'memory', env: {}, logger: silentLogger, settings: { atofEnabled: true, atifEnabled: true, atofOutputDirectory: ${JSON.stringify(dir)}, atifOutputDirectory: ${JSON.stringify(dir)} } });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: sessionId, model: 'gpt-4o' });
  for (let i = 0; i < ${TURNS}; i++) {
    const turn = new TurnIds({ sessionId });
    hooks.emit('pre_llm_call', { ...turn, user_message: sessionId + ' q' + i });
    const api = turn.nextApiCall();
    hooks.emit('pre_api_request', { ...turn, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: sessionId + ' q' + i }] } } });
    hooks.emit('post_api_request', { ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: 'a' + i } }] }, usage: { prompt_tokens: 2, completion_tokens: 1 } });
    hooks.emit('post_llm_call', { ...turn, assistant_response: 'a' + i });
    hooks.emit('on_session_end', { ...turn, completed: true });
    if (i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  hooks.emit('on_session_finalize', { session_id: sessionId });
  await plugin.shutdown({ timeoutMs: 60000 });
  return plugin.status().counters;
}
if (!isMainThread && workerData?.sessionId) parentPort.postMessage(await run(workerData.sessionId));
`;
}

describe('hooks emitted from a worker thread', () => {
  it('write each thread\'s sessions once, into the same folder, every ATOF line whole', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-worker-'));
    const home = mkdtempSync(path.join(repoRoot, '.tmp', 'worker-'));
    try {
      const file = path.join(home, 'agent.mjs');
      writeFileSync(file, program(dir));
      const worker = new Worker(pathToFileURL(file), { workerData: { sessionId: 'in-worker' } });
      const fromWorker = new Promise<Record<string, number>>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const { run } = (await import(pathToFileURL(file).href)) as { run(sessionId: string): Promise<Record<string, number>> };
      const [main, other] = await Promise.all([run('in-main'), fromWorker]);
      await worker.terminate();
      for (const counters of [main, other]) expect(counters).toMatchObject({ hooks: 2 + TURNS * 5, errors: 0, dropped: 0 });

      const trajectories = readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
      expect(trajectories.map((name) => name.replace(/^.*-atif-/, 'atif-'))).toEqual(['atif-in-main.json', 'atif-in-worker.json']);
      for (const session of ['in-main', 'in-worker']) {
        const doc = JSON.parse(readFileSync(path.join(dir, trajectories.find((name) => name.endsWith(`-atif-${session}.json`))!), 'utf8'));
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.steps).toHaveLength(TURNS * 2);
        expect(doc.steps.filter((step: { source: string }) => step.source === 'user').every((step: { message: string }) => step.message.startsWith(`${session} q`))).toBe(true);
      }
      const [atofFile] = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
      const events = readFileSync(path.join(dir, atofFile!), 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { metadata?: { session_id?: string } });
      const perSession = (session: string) => events.filter((event) => event.metadata?.session_id === session).length;
      // Per turn: two marks, the LLM span's start and end, the session-end mark; and the session scope's start and end.
      expect([perSession('in-main'), perSession('in-worker')]).toEqual([2 + TURNS * 5, 2 + TURNS * 5]);
      expect(events).toHaveLength(2 * (2 + TURNS * 5));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });
});
