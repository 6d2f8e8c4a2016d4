// The served viewer in this process (its catalog and server, the JSON API
// only): an ATOF file rewritten in place with more bytes than before (a
// replay of a longer recording under the same name, `cp` of another run
// over it) is read again from its start, never read on from the old offset;
// a session page never answers a 500; the ATOF lines `view` of a file says
// it leaves out are the notes of its sessions' rows and pages, in the same
// words; and the Host guard against DNS rebinding holds on every loopback
// address (127.0.0.0/8, not only 127.0.0.1).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/cli/serve/server.ts';
import { escape } from '../../src/cli/view/html.ts';
import { cliInProcess, EXAMPLES, tempDir } from './support.ts';
import { get } from './serve-support.ts';

/** The ATOF file a replay of the first `lines` lines (all when undefined) of an example recording writes. */
async function replayed(example: string, lines?: number): Promise<string> {
  const dir = tempDir('nrh-serve-catalog-run-');
  const recording = readFileSync(path.join(EXAMPLES, example), 'utf8').trimEnd().split('\n');
  writeFileSync(path.join(dir, 'run.hooks.jsonl'), `${recording.slice(0, lines).join('\n')}\n`);
  expect((await cliInProcess(['replay', path.join(dir, 'run.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
  return path.join(dir, 'atof', 'run-atof.jsonl');
}

interface Row {
  key: string;
  session: string;
  llmCalls: number;
  toolCalls: number;
  promptTokens: number;
  notes?: string[];
}

/** The served index's rows (figures only). */
async function served(server: RunningServer): Promise<Pick<Row, 'session' | 'llmCalls' | 'toolCalls' | 'promptTokens'>[]> {
  return (await rows(server)).map(({ session, llmCalls, toolCalls, promptTokens }) => ({ session, llmCalls, toolCalls, promptTokens }));
}

async function rows(server: RunningServer): Promise<Row[]> {
  const answer = await get(`${server.url}api/sessions`);
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.body) as { sessions: Row[] }).sessions;
}

describe('the served viewer (in process)', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  /** A server that looks at its folder only when the test says (`catalog.refresh()`). */
  async function start(folder: string, host = '127.0.0.1'): Promise<RunningServer> {
    const server = await startServer({ folders: [folder], host, port: 0, generator: 'test', pollMs: 3_600_000 });
    servers.push(server);
    return server;
  }

  it('reads an ATOF file rewritten in place with more bytes from its start: the figures are the new file\'s, and its page opens', async () => {
    const short = await replayed('agent-session.hooks.jsonl', 12);
    const full = await replayed('agent-session.hooks.jsonl');
    const folder = tempDir('nrh-serve-catalog-');
    const file = path.join(folder, 'run.jsonl');
    copyFileSync(short, file);
    const server = await start(folder);
    expect(await served(server)).toEqual([{ session: 'demo-session-7f3a', llmCalls: 3, toolCalls: 3, promptTokens: 2660 }]);

    // The full recording replayed under the same name: more bytes, same file.
    copyFileSync(full, file);
    server.catalog.refresh();
    // As a server started now lists it: one session, the subagent under it (not a session of its own).
    const fresh = await start(folder);
    expect(await served(fresh)).toEqual([{ session: 'demo-session-7f3a', llmCalls: 7, toolCalls: 5, promptTokens: 6654 }]);
    expect(await served(server)).toEqual(await served(fresh));
    const page = await get(`${server.url}session?key=${encodeURIComponent(`${file}#demo-session-7f3a`)}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('6,654 in');
  });

  it('reads a file another run was copied over from its start, and never answers a 500 for a session of the old run', async () => {
    const chat = await replayed('plain-chat.hooks.jsonl');
    const demo = await replayed('agent-session.hooks.jsonl');
    expect(readFileSync(demo).length).toBeGreaterThan(readFileSync(chat).length);
    const folder = tempDir('nrh-serve-catalog-cp-');
    const file = path.join(folder, 'grow.jsonl');
    copyFileSync(chat, file);
    const server = await start(folder);
    const [old] = await rows(server);
    expect(old!.session).toBe('chat-session-2c88');

    // Asked for before the server looked again (it looks once a second): a 409 that says so, where a TypeError was a 500.
    copyFileSync(demo, file);
    const early = await get(`${server.url}session?key=${encodeURIComponent(old!.key)}`);
    expect({ status: early.status, body: early.body }).toEqual({ status: 409, body: `${file} was rewritten since the server last looked at it; reload in a moment\n` });
    const compared = await get(`${server.url}compare?a=${encodeURIComponent(old!.key)}&b=${encodeURIComponent(old!.key)}`);
    expect(compared.status).toBe(409);

    server.catalog.refresh();
    expect((await served(server)).map((row) => row.session)).toEqual(['demo-session-7f3a']);
    expect((await get(`${server.url}session?key=${encodeURIComponent(old!.key)}`)).status).toBe(404);
    expect((await get(`${server.url}session?key=${encodeURIComponent(`${file}#demo-session-7f3a`)}`)).status).toBe(200);
  });

  it('reads on from the last look when the file only grew, and again from its start when it was rewritten with the same size', async () => {
    const full = readFileSync(await replayed('agent-session.hooks.jsonl'), 'utf8');
    const folder = tempDir('nrh-serve-catalog-grow-');
    const file = path.join(folder, 'run.jsonl');
    const lines = full.trimEnd().split('\n').map((line) => `${line}\n`);
    writeFileSync(file, lines.slice(0, 20).join(''));
    const server = await start(folder);
    const index = server.catalog.find(`${file}#demo-session-7f3a`);
    expect(index).toBeDefined();
    writeFileSync(file, full);
    server.catalog.refresh();
    expect(await served(server)).toEqual([{ session: 'demo-session-7f3a', llmCalls: 7, toolCalls: 5, promptTokens: 6654 }]);
    // Same bytes but one session id: same size, another run.
    writeFileSync(file, full.replaceAll('demo-session-7f3a', 'demo-session-8f3a'));
    server.catalog.refresh();
    expect((await served(server)).map((row) => row.session)).toEqual(['demo-session-8f3a']);
  });

  it('says under a session\'s row and above its timeline which ATOF lines it left out, in the words view of the file says them on stderr', async () => {
    const lines = readFileSync(await replayed('agent-session.hooks.jsonl'), 'utf8').trimEnd().split('\n');
    const root = JSON.parse(lines[0]!) as { uuid: string; timestamp: string };
    const folder = tempDir('nrh-serve-catalog-notes-');
    const file = path.join(folder, 'mal.jsonl');
    const bad = [
      'garbage{',
      JSON.stringify({ atof_version: '0.1', kind: 'weird', uuid: 'w-1', name: 'x', timestamp: root.timestamp }),
      JSON.stringify({ atof_version: '0.1', kind: 'scope', scope_category: 'start', category: 'tool', uuid: 'n-1', parent_uuid: root.uuid, name: null, timestamp: root.timestamp }),
    ];
    writeFileSync(file, `${[...lines.slice(0, 5), ...bad, ...lines.slice(5)].join('\n')}\n`);
    const viewed = await cliInProcess(['view', file]);
    expect(viewed.code).toBe(0);
    const said = viewed.stderr.trimEnd().split('\n').map((line) => line.slice(`nemo-relay-hooks: ${file}: `.length));
    expect(said).toEqual([expect.stringMatching(/^line 6 is not valid JSON/), 'line 7: not an ATOF event (kind "weird")', 'line 8: ATOF event whose name is null, not a string']);

    const server = await start(folder);
    const [row] = await rows(server);
    expect(row!.notes).toEqual(said);
    const page = await get(`${server.url}session?key=${encodeURIComponent(row!.key)}`);
    expect(page.status).toBe(200);
    for (const note of said) expect(page.body).toContain(`<p class="facts note">${escape(note)}</p>`);

    // Many lines left out: the first 20 said, the rest counted.
    writeFileSync(file, `${[...lines, ...Array.from({ length: 25 }, () => '{')].join('\n')}\n`);
    server.catalog.refresh();
    const [many] = await rows(server);
    expect(many!.notes).toHaveLength(21);
    expect(many!.notes![0]).toMatch(new RegExp(`^line ${lines.length + 1} is not valid JSON`));
    expect(many!.notes![20]).toBe('5 more lines left out ("nemo-relay-hooks view" of the file lists them)');
  });

  it('refuses a request for another host name on any loopback address it is bound to, where only 127.0.0.1, localhost and ::1 were guarded', async () => {
    const folder = tempDir('nrh-serve-catalog-host-');
    for (const host of ['127.0.0.2', '127.0.0.1']) {
      const server = await start(folder, host);
      const port = new URL(server.url).port;
      const status = async (header: string) => (await get(`${server.url}api/sessions`, { host: header })).status;
      expect(server.url).toBe(`http://${host}:${port}/`);
      expect({ host, answers: await Promise.all(['evil.com', `evil.com:${port}`, `${host}.evil.com`, `evil.com@${host}`].map(status)) }).toEqual({ host, answers: [403, 403, 403, 403] });
      expect({ host, answers: await Promise.all([`${host}:${port}`, `localhost:${port}`, `127.0.0.9:${port}`, `[::1]:${port}`].map(status)) }).toEqual({ host, answers: [200, 200, 200, 200] });
    }
  });

  it('keeps serving when a look at its folders throws, says so once per message, and takes up the changes once looks work again', async () => {
    const folder = tempDir('nrh-serve-catalog-look-');
    copyFileSync(await replayed('agent-session.hooks.jsonl', 12), path.join(folder, 'run.jsonl'));
    const said: string[] = [];
    const server = await startServer({ folders: [folder], host: '127.0.0.1', port: 0, generator: 'test', pollMs: 20, onError: (message) => said.push(message) });
    servers.push(server);
    const refresh = server.catalog.refresh.bind(server.catalog);
    let failures = 0;
    server.catalog.refresh = () => {
      failures += 1;
      throw new TypeError('the reader met something it did not foresee');
    };
    while (failures < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(said).toEqual(['could not look at the folders again (serving what was read before): the reader met something it did not foresee']);
    expect(await served(server)).toEqual([{ session: 'demo-session-7f3a', llmCalls: 3, toolCalls: 3, promptTokens: 2660 }]);
    copyFileSync(await replayed('agent-session.hooks.jsonl'), path.join(folder, 'run.jsonl'));
    server.catalog.refresh = refresh;
    const before = server.catalog.version;
    while (server.catalog.version === before) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await served(server)).toEqual([{ session: 'demo-session-7f3a', llmCalls: 7, toolCalls: 5, promptTokens: 6654 }]);
  });
});
