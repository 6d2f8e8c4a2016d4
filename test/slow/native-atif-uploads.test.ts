// ATIF uploads on the native backend (issue 23, item 5). nemo-relay-node
// 0.9.2 uploads trajectories on the worker that writes its ATOF files and
// trajectories, so an upload destination that hangs starves them (89 of
// 300 ATOF lines here before the fix). The native adapter therefore gives
// native no `atif.storage` and uploads the trajectories native writes itself
// (native/atif-uploads.ts). Checked here, against real loopback receivers:
// - what is uploaded is what native itself sends (bodies, file names,
//   session ids, S3 object keys and signatures), native's own upload being
//   the oracle;
// - with a destination that never answers, every ATOF line and trajectory
//   is written locally on native as on memory, each upload is counted in
//   status(), the queue holds at most its bound, and the host exits.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadNativeRelay } from '../../native/index.ts';
import type { OutputHealth, ScopeHandle } from '../../src/relay/contract.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';
import { runNativePlugin, type Driver } from '../support/native-driver.ts';
import { observabilityDocument, writeObservabilityToml } from '../support/plugins-toml.ts';
import { startReceiver, type Receiver, type ReceivedRequest } from '../support/receivers.ts';
import { normalize, UuidLabels } from '../differential/normalize.ts';
import { dist, spawnChild } from '../support/child.ts';
import { spawnSync } from 'node:child_process';

// Native reads the real process environment (Bun does not update it when process.env is assigned): a variable set from the start.
const SECRET_VAR = 'PATH';
const S3 = { accessKeyId: 'AKIDUPLOADS', secretAccessKey: process.env.PATH ?? '', region: 'us-east-1' };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

let clock = 1_800_000_000_000_000;
const ts = () => (clock += 10);

function conversation(d: Driver, parent: ScopeHandle, text: string) {
  const llm = d.llmStart({ name: 'anthropic', parent, request: { headers: {}, content: { model: 'm', messages: [{ role: 'user', content: text }] } }, modelName: 'm', timestampUs: ts() });
  d.llmEnd(llm, { response: { id: 'msg', type: 'message', role: 'assistant', content: [{ type: 'text', text: `re: ${text}` }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2 } }, timestampUs: ts() });
  const tool = d.toolStart({ name: 'Bash', parent, args: { command: 'pwd' }, toolCallId: `tu-${text}`, timestampUs: ts() });
  d.toolEnd(tool, { result: '/w', timestampUs: ts() });
}

/** Two sessions (one with a subagent), each a trajectory; the file name puts the user id in a subfolder. */
function scenario(d: Driver) {
  for (const tag of ['one', 'two']) {
    const session = d.pushScope({ name: `${tag}-session`, category: 'agent', metadata: { nemo_relay_scope_role: 'session', session_id: `${tag}-sid`, user_id: `u-${tag}` }, timestampUs: ts() });
    conversation(d, session, tag);
    if (tag === 'one') {
      const sub = d.pushScope({ name: 'subagent:s1', category: 'agent', parent: session, metadata: { nemo_relay_scope_role: 'subagent' }, timestampUs: ts() });
      conversation(d, sub, 'sub');
      d.popScope(sub, { output: { result: 'sub done' }, timestampUs: ts() });
    }
    d.popScope(session, { output: { status: 'ended' }, timestampUs: ts() });
  }
}

function uploadDocument(origin: string) {
  return (dir: string) =>
    observabilityDocument({
      atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'events.jsonl', mode: 'overwrite' }] },
      atif: {
        enabled: true,
        agent_name: 'probe-agent',
        agent_version: '0.0.1',
        model_name: 'm',
        output_directory: dir,
        filename_template: '{metadata.user_id:-anon}/trajectory-{session_id}.json',
        storage: [
          { type: 'http', endpoint: `${origin}/atif/upload`, headers: { 'x-probe': 'atif' }, timeout_millis: 3000 },
          {
            type: 's3',
            bucket: 'probe-bucket',
            key_prefix: 'trajectories/',
            access_key_id: S3.accessKeyId,
            secret_access_key_var: SECRET_VAR,
            region: S3.region,
            endpoint_url: origin,
            allow_http: true,
          },
        ],
      },
    });
}

/** What a receiver got, uuids labelled in order of appearance (names before bodies). */
function received(receiver: Receiver) {
  const labels = new UuidLabels();
  const sorted = (list: ReceivedRequest[]) => [...list].sort((a, b) => String(a.headers['x-nemo-relay-atif-filename'] ?? a.path).localeCompare(String(b.headers['x-nemo-relay-atif-filename'] ?? b.path)));
  const uploads = sorted(receiver.requests.filter((r) => r.path === '/atif/upload'));
  const puts = sorted(receiver.requests.filter((r) => r.method === 'PUT'));
  return {
    uploads: uploads.map((u) => ({
      filename: normalize(u.headers['x-nemo-relay-atif-filename'], labels),
      sessionId: normalize(u.headers['x-nemo-relay-atif-session-id'], labels),
      headers: { 'content-type': u.headers['content-type'], 'x-probe': u.headers['x-probe'] },
      body: normalize(JSON.parse(u.body) as unknown, labels),
    })),
    puts: puts.map((p) => ({
      path: normalize(p.path, labels),
      signatureValid: p.signatureValid,
      signed: /SignedHeaders=([^,]+)/.exec(String(p.headers.authorization))?.[1],
      body: normalize(JSON.parse(p.body) as unknown, labels),
    })),
  };
}

/** Every file under `dir`, relative, with hidden ones. */
function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) => fs.statSync(path.join(dir, name)).isFile()).sort();
}

describe.skipIf(!nativeAvailable)(`native: ATIF uploads sent by the adapter${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('sends what native itself sends: the same bodies, file names, session ids, S3 object keys and signed headers', async () => {
    const theirs = await startReceiver({ s3: S3 });
    const ours = await startReceiver({ s3: S3 });
    closers.push(() => theirs.close(), () => ours.close());

    // The oracle: native's own uploader (the document given to native as it is).
    const start = clock;
    const nativeTree = await runNativePlugin(uploadDocument(theirs.origin), scenario);
    await theirs.waitFor('/atif/upload', 2);

    // The native backend: native writes, the adapter uploads.
    clock = start;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-native-uploads-'));
    closers.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const relay = await loadNativeRelay({ logger: silentLogger });
    const activation = await relay.initializePluginConfig(uploadDocument(ours.origin)(dir) as never);
    scenario(relay as unknown as Driver);
    await activation.close();
    await relay.shutdown();

    expect(received(ours)).toEqual(received(theirs));
    const sent = received(ours);
    expect(sent.uploads.map((u) => u.filename)).toEqual([expect.stringMatching(/^u-one\/trajectory-<uuid-\d+>\.json$/), expect.stringMatching(/^u-two\/trajectory-<uuid-\d+>\.json$/)]);
    expect(sent.puts.map((p) => p.path)).toEqual([expect.stringMatching(/^\/probe-bucket\/trajectories\/u-one\/trajectory-<uuid-\d+>\.json$/), expect.stringMatching(/^\/probe-bucket\/trajectories\/u-two\//)]);
    expect(sent.puts.every((p) => p.signatureValid)).toBe(true);
    // Delivered: no trajectory kept locally on either side, and the staging folder is gone.
    expect(Object.keys(nativeTree)).toEqual(['events.jsonl']);
    expect(filesUnder(dir)).toEqual(['events.jsonl']);
    expect(fs.readdirSync(dir)).toEqual(['events.jsonl']);
    const storage = relay.outputs().filter((o: OutputHealth) => o.kind === 'atif-storage');
    expect(storage.map((o) => [o.path, o.sent, o.failed, o.dropped, o.queued])).toEqual([
      [`${ours.origin}/atif/upload`, 2, 0, 0, 0],
      ['s3://probe-bucket/trajectories/', 2, 0, 0, 0],
    ]);
  });
});

/** A loopback server that reads every request and never answers. */
async function hangingServer(): Promise<{ origin: string; requests: () => number }> {
  let requests = 0;
  const server = http.createServer((req) => {
    requests++;
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

function hangingToml(dir: string, origin: string): string {
  const storage = `[[components.config.atif.storage]]\ntype = "http"\nendpoint = "${origin}/upload"\ntimeout_millis = 1000\n`;
  return writeObservabilityToml(dir, { atofDir: dir, atifDir: dir, extraToml: storage });
}

/**
 * A host on `backend`: `sessions` sessions of three model calls, a pause,
 * status().outputs read while the destination still hangs (@@MID@@), then
 * shutdown() and status().outputs again (@@RESULT@@).
 */
function host(backend: 'native' | 'memory', toml: string, sessions: number, options: HostOptions = {}): string {
  return `
import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
const plugin = createNemoRelayPlugin({ backend: '${backend}', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: ${JSON.stringify(toml)} } });
const hooks = new HookRegistry();
plugin.register(hooks);
await plugin.ready;
for (let s = 0; s < ${sessions}; s++) {
  const session_id = 's' + s;
  hooks.emit('on_session_start', { session_id, model: 'gpt-4o' });
  for (let i = 0; i < 3; i++) {
    const ids = { session_id, turn_id: 't' + i, api_request_id: 'r' + i };
    hooks.emit('pre_llm_call', { ...ids, user_message: 'hi' });
    hooks.emit('pre_api_request', { ...ids, model: 'gpt-4o', retry_count: 0 });
    hooks.emit('post_api_request', { ...ids, model: 'gpt-4o', response: { usage: { input_tokens: 1, output_tokens: 1 } } });
    hooks.emit('post_llm_call', { ...ids, assistant_response: 'ok' });
  }
  hooks.emit('on_session_end', { session_id, completed: true });
  hooks.emit('on_session_finalize', { session_id });
  if (s % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 10));
}
${options.exit === 'at once' ? 'process.exit(0);' : ''}
await plugin.flush({ timeoutMs: 100 });
// Until every trajectory reached the uploader (or 20 s): then what it holds is read.
const storage = () => plugin.status().outputs.find((o) => o.kind === 'atif-storage');
const handed = (o) => (o?.sent ?? 0) + (o?.failed ?? 0) + (o?.dropped ?? 0) + (o?.queued ?? 0);
for (let i = 0; i < 200 && handed(storage()) < ${sessions}; i++) await new Promise((resolve) => setTimeout(resolve, 100));
console.log('@@MID@@' + JSON.stringify(plugin.status().outputs));
${options.exit === true ? 'process.exit(0);' : ''}
await plugin.shutdown({ timeoutMs: 5000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs));
console.log('@@DONE@@');
`;
}

interface HostOptions {
  /** `true`: process.exit() once every trajectory reached the uploader; `'at once'`: right after the last hook. */
  exit?: boolean | 'at once';
  /** Prepares the output folder before the host starts. */
  prepare?: (dir: string) => void;
}

interface HostRun {
  lines: string[];
  trajectories: string[];
  modes: number[];
  leftovers: string[];
  mid: OutputHealth;
  end: OutputHealth;
  killed: boolean;
  stderr: string;
}

async function runHost(backend: 'native' | 'memory', origin: string, sessions: number, options: HostOptions = {}): Promise<HostRun> {
  const dir = tempDir(`hanging-upload-${backend}`);
  const toml = hangingToml(dir, origin);
  options.prepare?.(dir);
  const child = await spawnChild(host(backend, toml, sessions, options), { killAfterMs: 90_000 });
  const storage = (outputs: unknown) => (outputs as OutputHealth[]).find((o) => o.kind === 'atif-storage')!;
  const mid = child.stdout.split('@@MID@@')[1]?.split('\n')[0];
  const names = fs.readdirSync(dir);
  const trajectories = names.filter((name) => name.startsWith('trajectory-'));
  return {
    lines: fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== ''),
    trajectories,
    modes: [...new Set(trajectories.map((name) => fs.statSync(path.join(dir, name)).mode & 0o777))],
    leftovers: names.filter((name) => name.startsWith('.')),
    mid: mid === undefined ? (undefined as never) : storage(JSON.parse(mid)),
    end: child.result === undefined ? (undefined as never) : storage(child.result),
    killed: child.killed,
    stderr: child.stderr,
  };
}

const counted = (o: OutputHealth) => (o.sent ?? 0) + (o.failed ?? 0) + (o.dropped ?? 0) + (o.queued ?? 0);

describe.skipIf(!nativeAvailable)(`an ATIF upload destination that hangs${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('starves no local output on either backend: every ATOF line and trajectory is written, every upload counted, the queue bounded, and the host exits', async () => {
    const receiver = await hangingServer();
    // More trajectories than a destination's queue holds (256): the rest are dropped at once, kept locally.
    const sessions = 300;
    const memory = await runHost('memory', receiver.origin, sessions);
    const native = await runHost('native', receiver.origin, sessions);
    for (const [name, run] of Object.entries({ memory, native })) {
      expect(run.killed, `${name}: the host did not exit: ${run.stderr}`).toBe(false);
      // Every event in the ATOF file and every session's trajectory written (as its owner-only recovery copy).
      expect(run.lines.length, name).toBe(memory.lines.length);
      expect(run.trajectories, name).toHaveLength(sessions);
      expect(run.modes, name).toEqual([0o600]);
      expect(run.leftovers, `${name}: no staging folder or temporary file left`).toEqual([]);
      // While the destination hangs, at most a queue's worth is held; the rest is already counted and kept.
      expect(run.mid.queued, name).toBeLessThanOrEqual(256);
      expect(run.mid.sent, name).toBe(0);
      expect((run.mid.failed ?? 0) + (run.mid.dropped ?? 0), name).toBeGreaterThanOrEqual(sessions - 256);
      expect(counted(run.mid), name).toBe(sessions);
      // After shutdown(): every trajectory counted, none delivered, nothing pending.
      expect(run.end, name).toMatchObject({ sent: 0, queued: 0 });
      expect(counted(run.end), name).toBe(sessions);
      expect(run.end.lastError, name).toMatch(/no answer within 1000 ms|output closed/);
    }
    expect(memory.lines.length).toBe(sessions * 15);
    expect(receiver.requests()).toBeGreaterThan(0);
  });
});

describe.skipIf(!nativeAvailable)(`process.exit() with native uploads pending${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('keeps every trajectory native wrote as its recovery copy, and leaves no staging folder', async () => {
    const receiver = await hangingServer();
    const run = await runHost('native', receiver.origin, 20, { exit: true });
    expect(run.killed, run.stderr).toBe(false);
    expect(run.mid.queued).toBeGreaterThan(0);
    expect(run.trajectories).toHaveLength(20);
    expect(run.modes).toEqual([0o600]);
    expect(run.leftovers).toEqual([]);
  });
});


// A user trial: a host that called process.exit() right after its last hook
// lost ATOF lines on native (9 of 11), and native's trajectory stayed behind
// in the hidden staging folder, whole or half-written (`.tmp`), never
// uploaded nor said. Native's queue is now delivered at exit, before the
// uploads give up what they hold.
describe.skipIf(!nativeAvailable)(`process.exit() right after the last hook on native${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('writes every ATOF line, keeps every trajectory as its recovery copy (said), and leaves no staging folder or half-written file', async () => {
    const receiver = await hangingServer();
    // Enough events that native still holds some when the host exits (it lost about one in ten).
    const sessions = 60;
    const run = await runHost('native', receiver.origin, sessions, { exit: 'at once' });
    expect(run.killed, run.stderr).toBe(false);
    expect(run.lines).toHaveLength(sessions * 15);
    expect(run.trajectories).toHaveLength(sessions);
    expect(run.modes).toEqual([0o600]);
    expect(run.leftovers).toEqual([]);
    expect(run.stderr).toContain("was dropped (the process exited); the trajectory was kept at");
  });

  it("empties what a process that died left in its staging folder: whole trajectories moved where they belong (said), half-written ones removed", async () => {
    const receiver = await hangingServer();
    // A process id that is surely gone: a child that ran and exited.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const run = await runHost('native', receiver.origin, 1, {
      prepare: (dir) => {
        const staging = path.join(dir, `.nemo-relay-uploads-${dead}-AbC123`);
        fs.mkdirSync(staging);
        fs.writeFileSync(path.join(staging, 'trajectory-left.json'), JSON.stringify({ schema_version: 'ATIF-v1.6', session_id: 'left', steps: [] }));
        fs.writeFileSync(path.join(staging, '.trajectory-cut.json.0123.tmp'), '{"schema_version":"ATIF-v1.6","ses');
      },
    });
    expect(run.killed, run.stderr).toBe(false);
    expect(run.trajectories.sort()).toEqual(['trajectory-left.json', expect.stringMatching(/^trajectory-.+\.json$/)].sort());
    expect(run.leftovers).toEqual([]);
    expect(run.stderr).toContain(`left by process ${dead}, which ended before uploading it`);
  });
});
