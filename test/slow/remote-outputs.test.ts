// ATOF stream sinks and ATIF storage through the plugin, on the memory
// relay and on native 0.9.2, driven by the same recorded hook streams and
// the same plugins.toml against real loopback receivers (HTTP POST,
// chunked ndjson, WebSocket, an S3-style PUT endpoint that verifies SigV4).
// What each backend sends must be the same once uuids and clocks are
// normalized; a dead destination must cost no local telemetry on memory.
// (On native, the ATIF uploads are the adapter's, of the files native
// writes: native-atif-uploads.test.ts compares them with native's own
// uploader.)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type PluginStatus } from '../../src/index.ts';
import type { OutputHealth, RelayBackend } from '../../src/relay/contract.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { nativeAvailable, nativeLoadError, recordingLogger, tempDir } from '../contract/backends.ts';
import { streamFileName } from '../fixtures/streams/streams.ts';
import type { HookLine } from '../fixtures/streams/script.ts';
import { startReceiver, type Receiver, type ReceivedRequest } from '../support/receivers.ts';
import { attemptsAsMemory, failedLlmEndsAsNative, normalize, UuidLabels, type NormalizeOptions } from '../differential/normalize.ts';
import { hasFailedCall, observedEventsAsNative } from '../differential/random-diff.ts';
import { randomStream } from '../differential/random-stream.ts';
import { readStream } from '../differential/replay.ts';

const STREAMS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/streams');
// Variables the test process has had from its start: native reads the real
// process environment, which Bun does not update when process.env is assigned.
const TOKEN_VAR = 'PATH';
const SECRET_VAR = 'PATH';
const S3 = { accessKeyId: 'AKIDPARITY', secretAccessKey: process.env.PATH ?? '', region: 'us-east-1' };
// The memory-only tests below set and unset their own variables.
const MEMORY_TOKEN_VAR = 'NRH_REMOTE_TEST_TOKEN';
const MEMORY_SECRET_VAR = 'NRH_REMOTE_TEST_S3_SECRET';
/** Set nowhere: the "post" sink's header_env then makes that sink invalid. */
const UNSET_VAR = 'NRH_REMOTE_TEST_NEVER_SET';

function pluginsToml(dir: string, origin: string, wsOrigin: string, vars = { token: TOKEN_VAR, secret: SECRET_VAR }): string {
  return `version = 1

[[components]]
kind = "observability"
enabled = true

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"
output_directory = ${JSON.stringify(path.join(dir, 'atof'))}
filename = "events.jsonl"
mode = "overwrite"

[[components.config.atof.sinks]]
type = "stream"
name = "post"
url = "${origin}/atof/post"
transport = "http_post"
headers = { "x-probe" = "post" }
header_env = { "authorization" = "${vars.token}" }
timeout_millis = 2000

[[components.config.atof.sinks]]
type = "stream"
name = "ndjson"
url = "${origin}/atof/ndjson"
transport = "ndjson"
headers = { "x-probe" = "ndjson" }
field_name_policy = "replace_dots"

[[components.config.atof.sinks]]
type = "stream"
name = "ws"
url = "${wsOrigin}/atof/ws"
transport = "websocket"
headers = { "x-probe" = "ws" }
[components.config.atif]
enabled = true
agent_name = "Hermes Agent"
agent_version = "0.0.0-probe"
model_name = "gpt-4o-mini"
output_directory = ${JSON.stringify(path.join(dir, 'atif'))}
filename_template = "trajectory-{session_id}.json"

[[components.config.atif.storage]]
type = "http"
endpoint = "${origin}/atif/upload"
headers = { "x-probe" = "atif" }
timeout_millis = 3000

[[components.config.atif.storage]]
type = "s3"
bucket = "probe-bucket"
key_prefix = "trajectories/"
access_key_id = "${S3.accessKeyId}"
secret_access_key_var = "${vars.secret}"
region = "${S3.region}"
endpoint_url = "${origin}"
allow_http = true
`;
}

interface Run {
  dir: string;
  atofLines: string[];
  atifFiles: string[];
  status: PluginStatus;
  problems: string[];
  posts: ReceivedRequest[];
  ndjson: ReceivedRequest[];
  wsMessages: string[];
  wsHeaders: Record<string, unknown>;
  uploads: ReceivedRequest[];
  puts: ReceivedRequest[];
}

async function run(backend: RelayBackend, lines: readonly HookLine[], receiver: Receiver, vars = { token: TOKEN_VAR, secret: SECRET_VAR }): Promise<Run> {
  const dir = tempDir(`remote-${backend.kind}`);
  const toml = path.join(dir, 'plugins.toml');
  fs.writeFileSync(toml, pluginsToml(dir, receiver.origin, `ws://127.0.0.1:${receiver.port}`, vars));
  const postSinkValid = vars.token !== UNSET_VAR;
  const logger = recordingLogger();
  const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger });
  const hooks = new HookRegistry({ logger: silentLogger });
  const unregister = plugin.register(hooks);
  for (const line of lines) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  await plugin.shutdown({ timeoutMs: 20_000 });
  unregister();
  const atofLines = fs.readFileSync(path.join(dir, 'atof', 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
  // Everything the backend sent has arrived once the stream requests and the socket are complete.
  if (postSinkValid) await receiver.waitFor('/atof/post', atofLines.length);
  await receiver.waitFor('/atof/ndjson', 1);
  await receiver.waitFor('/atof/ws', 1);
  const atifDir = path.join(dir, 'atif');
  const by = (p: string) => receiver.requests.filter((r) => r.path === p);
  const socket = receiver.sockets.find((s) => s.path === '/atof/ws');
  return {
    dir,
    atofLines,
    atifFiles: fs.existsSync(atifDir) ? fs.readdirSync(atifDir).filter((name) => !name.startsWith('.')) : [],
    status: plugin.status(),
    problems: logger.lines.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => line.message),
    posts: by('/atof/post'),
    ndjson: by('/atof/ndjson'),
    wsMessages: socket?.messages ?? [],
    wsHeaders: socket?.headers ?? {},
    uploads: by('/atif/upload'),
    puts: receiver.requests.filter((r) => r.method === 'PUT'),
  };
}

const n = (value: unknown, options?: NormalizeOptions) => normalize(value, new UuidLabels(), options);
const linesOf = (body: string) => body.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
const dotted = (value: unknown): boolean =>
  Array.isArray(value) ? value.some(dotted) : typeof value === 'object' && value !== null && Object.entries(value).some(([k, v]) => k.includes('.') || dotted(v));

/** `items` in the order of their normalized text: the same multiset sorts the same on both backends. */
function byContent<T>(items: T[]): T[] {
  const keyed = items.map((item) => [JSON.stringify(item), item] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, item]) => item);
}

/** What a run sent, normalized: the same shape on both backends. */
function sent(r: Run, trajectory: (doc: unknown) => unknown = (doc) => doc, options?: NormalizeOptions) {
  const pick = (headers: Record<string, unknown>, names: string[]) => Object.fromEntries(names.map((name) => [name, headers[name]]));
  return {
    post: {
      bodies: n(r.posts.map((p) => JSON.parse(p.body) as unknown), options),
      oneLineEach: r.posts.every((p) => p.body.endsWith('\n') && p.body.indexOf('\n') === p.body.length - 1),
      headers: [...new Set(r.posts.map((p) => JSON.stringify(pick(p.headers, ['content-type', 'x-probe', 'authorization']))))],
    },
    ndjson: {
      requests: r.ndjson.length,
      events: n(r.ndjson.flatMap((req) => linesOf(req.body)), options),
      headers: r.ndjson.map((req) => pick(req.headers, ['content-type', 'x-probe', 'transfer-encoding'])),
    },
    ws: { messages: n(r.wsMessages.map((m) => JSON.parse(m) as unknown), options), header: r.wsHeaders['x-probe'] },
    // Sessions' trajectories upload concurrently, so the order they reach the receiver is not a promise of either backend: compared as sets.
    upload: byContent(
      r.uploads.map((u) => ({
        body: n(trajectory(JSON.parse(u.body)), options),
        headers: n(pick(u.headers, ['content-type', 'x-probe', 'x-nemo-relay-atif-filename', 'x-nemo-relay-atif-session-id'])),
      })),
    ),
    puts: byContent(
      r.puts.map((p) => ({ path: n(p.path), signatureValid: p.signatureValid, body: n(trajectory(JSON.parse(p.body)), options), signed: /SignedHeaders=([^,]+)/.exec(String(p.headers.authorization))?.[1] })),
    ),
  };
}

const CASES = ['subagent', 'tool-loop', 'interleaved-sessions', 'anthropic', 'approvals-unmatched'];

interface Outcome {
  atofEvents: number;
  diagnostics: [string, string | undefined, string][];
  ndjsonEvents: number;
  posts: number;
  uploads: number;
  signedPuts: number;
}

function outcome(r: Run): Outcome {
  return {
    atofEvents: r.atofLines.length,
    diagnostics: r.status.pluginConfig.diagnostics.map((d) => [d.level, d.field, d.message]),
    ndjsonEvents: r.ndjson.flatMap((req) => linesOf(req.body)).length,
    posts: r.posts.length,
    uploads: r.uploads.length,
    signedPuts: r.puts.filter((p) => p.signatureValid).length,
  };
}

describe.skipIf(!nativeAvailable)(`remote outputs: memory and native send the same${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('a stream sink with an unset header_env variable is skipped on both backends; ATOF, ATIF and the other destinations still work', async () => {
    const lines = readStream(path.join(STREAMS_DIR, streamFileName('tool-loop')));
    const receivers = [await startReceiver({ s3: S3 }), await startReceiver({ s3: S3 })];
    try {
      const vars = { token: UNSET_VAR, secret: SECRET_VAR };
      const memory = outcome(await run(createMemoryRelay({ logger: silentLogger }), lines, receivers[0]!, vars));
      const native = outcome(await run(await loadNativeRelay({ logger: silentLogger }), lines, receivers[1]!, vars));
      expect(memory).toEqual(native);
      expect(memory.atofEvents).toBeGreaterThan(0);
      expect(memory).toMatchObject({ ndjsonEvents: memory.atofEvents, posts: 0, uploads: 1, signedPuts: 1 });
      expect(memory.diagnostics).toEqual([
        [
          'warning',
          'sinks[1].header_env.authorization',
          `ATOF sinks[1].header_env.authorization references an environment variable that is not set: environment variable not found; this destination is skipped and the rest of the document activates; fix: set ${UNSET_VAR} in the host's environment before it starts`,
        ],
      ]);
    } finally {
      for (const receiver of receivers) await receiver.close();
    }
  });

  for (const name of CASES) {
    it(`sends the same stream bodies and uploads for ${name}`, async () => {
      const lines = readStream(path.join(STREAMS_DIR, streamFileName(name)));
      const receivers = [await startReceiver({ s3: S3 }), await startReceiver({ s3: S3 })];
      try {
        const memory = await run(createMemoryRelay({ logger: silentLogger }), lines, receivers[0]!);
        const native = await run(await loadNativeRelay({ logger: silentLogger }), lines, receivers[1]!);
        expect(memory.problems, 'memory warnings').toEqual([]);
        expect(native.problems, 'native warnings').toEqual([]);

        // Each stream carries every ATOF event, as the file has it.
        expect(memory.posts.length).toBe(memory.atofLines.length);
        expect(memory.posts.map((p) => p.body)).toEqual(memory.atofLines.map((line) => `${line}\n`));
        expect(memory.wsMessages).toEqual(memory.atofLines);
        // replace_dots is exercised: the file has dotted keys, the ndjson stream none.
        expect(memory.atofLines.some((line) => dotted(JSON.parse(line)))).toBe(true);
        expect(memory.ndjson.flatMap((req) => linesOf(req.body)).some(dotted)).toBe(false);

        const ours = sent(memory);
        // approvals-unmatched has failed LLM attempts: native's trajectories as memory writes them (normalize.ts).
        const theirs = sent(native, name === 'approvals-unmatched' ? attemptsAsMemory : undefined);
        expect(ours.post).toEqual(theirs.post);
        expect(ours.ndjson).toEqual(theirs.ndjson);
        expect(ours.ws).toEqual(theirs.ws);
        expect(ours.upload).toEqual(theirs.upload);
        expect(ours.puts).toEqual(theirs.puts);
        expect(ours.puts.every((p) => p.signatureValid)).toBe(true);
        expect(ours.upload.length).toBeGreaterThan(0);

        // With storage that succeeds, neither backend writes the trajectory locally.
        expect(memory.atifFiles).toEqual([]);
        expect(native.atifFiles).toEqual([]);

        const remote = (status: PluginStatus) => status.outputs.filter((o: OutputHealth) => o.kind === 'atof-stream' || o.kind === 'atif-storage');
        expect(remote(memory.status).map((o) => [o.kind, o.sent, o.failed, o.dropped])).toEqual([
          ['atof-stream', memory.atofLines.length, 0, 0],
          ['atof-stream', memory.atofLines.length, 0, 0],
          ['atof-stream', memory.atofLines.length, 0, 0],
          ['atif-storage', ours.upload.length, 0, 0],
          ['atif-storage', ours.upload.length, 0, 0],
        ]);
      } finally {
        for (const receiver of receivers) await receiver.close();
      }
    });
  }

  // Random streams (test/differential/random-stream.ts: interleaved sessions, retries and errors, three provider
  // shapes, subagents, awkward text, keys and numbers) through every destination. A failure names its seed.
  for (const [seed, large] of RANDOM_SEEDS) {
    it(`sends the same stream bodies and uploads for random stream seed ${seed}${large ? ' (large)' : ''}`, async () => {
      const stream = randomStream(seed, { large });
      const receivers = [await startReceiver({ s3: S3 }), await startReceiver({ s3: S3 })];
      try {
        const memory = failedLlmAsNative(await run(createMemoryRelay({ logger: silentLogger }), stream.lines, receivers[0]!));
        const native = await run(await loadNativeRelay({ logger: silentLogger }), stream.lines, receivers[1]!);
        const context = `seed ${seed}${large ? ' (large)' : ''}:\n  ${stream.outline.join('\n  ')}`;
        expect(memory.problems, `memory warnings, ${context}`).toEqual([]);
        expect(native.problems, `native warnings, ${context}`).toEqual([]);
        expect(memory.wsMessages.length, context).toBe(memory.atofLines.length);
        // The documented differences random-diff.ts also allows: the root uuid of concurrent subagents, and native's failed attempts.
        const options = stream.concurrentSubagents ? { drop: ['propagation_root_uuid'] } : undefined;
        const ours = sent(memory, undefined, options);
        const theirs = sent(native, (doc) => (hasFailedCall(doc) ? attemptsAsMemory(doc) : doc), options);
        for (const key of ['post', 'ndjson', 'ws', 'upload', 'puts'] as const) expect(ours[key], `${key}, ${context}`).toEqual(theirs[key]);
        expect(ours.puts.every((p) => p.signatureValid)).toBe(true);
      } finally {
        for (const receiver of receivers) await receiver.close();
      }
    });
  }
});

/** Seeds of the random streams above (and whether the stream is large): fixed, so a failure replays. */
const RANDOM_SEEDS: readonly [number, boolean][] = [...[1, 2, 3, 4, 5, 6, 7, 8].map((seed) => [seed, false] as [number, boolean]), [9, true], [10, true], [11, true]];

/**
 * Memory's run with its failed LLM ends as native sends them (a documented difference; `failedLlmEndsAsNative`),
 * in every stream and in the observed events of every upload.
 */
function failedLlmAsNative(r: Run): Run {
  const lines = (body: string) => failedLlmEndsAsNative(body.split('\n')).join('\n');
  const observed = (body: string) => JSON.stringify(observedEventsAsNative(JSON.parse(body) as unknown));
  return {
    ...r,
    posts: r.posts.map((p) => ({ ...p, body: lines(p.body) })),
    ndjson: r.ndjson.map((p) => ({ ...p, body: lines(p.body) })),
    wsMessages: failedLlmEndsAsNative(r.wsMessages),
    uploads: r.uploads.map((u) => ({ ...u, body: observed(u.body) })),
    puts: r.puts.map((p) => ({ ...p, body: observed(p.body) })),
  };
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Emits each stream in turn through one plugin (one session after the other), then shuts it down. */
async function runSessions(toml: string, streams: readonly string[]) {
  const logger = recordingLogger();
  const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  let hookCount = 0;
  for (const name of streams) {
    for (const line of readStream(path.join(STREAMS_DIR, streamFileName(name)))) {
      hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
      hookCount++;
    }
    // The session's activation closes (and its senders flush) before the next session re-activates.
    await plugin.flush({ timeoutMs: 20_000 });
  }
  await plugin.shutdown({ timeoutMs: 20_000 });
  return { status: plugin.status(), logger, hookCount };
}

describe('remote outputs on the memory relay when destinations are down or wrong', () => {
  const memoryVars = { token: MEMORY_TOKEN_VAR, secret: MEMORY_SECRET_VAR };
  beforeAll(() => {
    process.env[MEMORY_SECRET_VAR] = S3.secretAccessKey;
  });
  afterAll(() => {
    delete process.env[MEMORY_SECRET_VAR];
    delete process.env[MEMORY_TOKEN_VAR];
  });

  it('a dead destination costs no local telemetry: every session keeps its ATOF, its ATIF as an owner-only recovery copy, and every event is counted', async () => {
    process.env[MEMORY_TOKEN_VAR] = 'Bearer tok';
    const port = await closedPort();
    const dir = tempDir('remote-down');
    const toml = path.join(dir, 'plugins.toml');
    fs.writeFileSync(toml, pluginsToml(dir, `http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}`, memoryVars).replaceAll('timeout_millis = 3000', 'timeout_millis = 500'));
    const { status, logger } = await runSessions(toml, ['plain-chat', 'tool-loop']);

    const atof = fs.readFileSync(path.join(dir, 'atof', 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    const sessions = new Set(atof.map((line) => (JSON.parse(line) as { metadata?: { session_id?: string } }).metadata?.session_id).filter(Boolean));
    expect([...sessions].sort()).toEqual(['chat-1', 'loop-1']);
    const atifDir = path.join(dir, 'atif');
    const copies = fs.readdirSync(atifDir).filter((name) => !name.startsWith('.'));
    expect(copies).toHaveLength(2);
    for (const name of copies) {
      if (process.platform !== 'win32') expect(fs.statSync(path.join(atifDir, name)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(fs.readFileSync(path.join(atifDir, name), 'utf8'))).toMatchObject({ schema_version: 'ATIF-v1.7' });
    }

    const streams = status.outputs.filter((o) => o.kind === 'atof-stream');
    expect(streams.map((o) => o.path)).toEqual([`http://127.0.0.1:${port}/atof/post`, `http://127.0.0.1:${port}/atof/ndjson`, `ws://127.0.0.1:${port}/atof/ws`]);
    for (const output of streams) {
      expect(output.sent).toBe(0);
      expect((output.failed ?? 0) + (output.dropped ?? 0)).toBe(atof.length);
      expect(output.lastError).toBeDefined();
    }
    const storage = status.outputs.filter((o) => o.kind === 'atif-storage');
    expect(storage).toHaveLength(2);
    for (const output of storage) {
      expect(output.sent).toBe(0);
      expect((output.failed ?? 0) + (output.dropped ?? 0)).toBe(2);
      expect(copies.map((name) => path.join(atifDir, name))).toContain(output.recoveryPath);
    }
    // The host hears about it, once per destination and session, not once per event.
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.length).toBeLessThanOrEqual(2 * 5);
    expect(status.pluginConfig.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
  });

  it('flush() sends what the stream sinks hold while the session is still open', async () => {
    process.env[MEMORY_TOKEN_VAR] = 'Bearer tok';
    const receiver = await startReceiver({ s3: S3 });
    try {
      const dir = tempDir('remote-flush');
      const toml = path.join(dir, 'plugins.toml');
      fs.writeFileSync(toml, pluginsToml(dir, receiver.origin, `ws://127.0.0.1:${receiver.port}`, memoryVars));
      const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
      const hooks = new HookRegistry({ logger: silentLogger });
      plugin.register(hooks);
      hooks.emit('on_session_start', { session_id: 'flush-1', model: 'gpt-4o' } as never);
      hooks.emit('pre_llm_call', { session_id: 'flush-1', turn_id: 't1', user_message: 'hello?' } as never);
      await plugin.flush({ timeoutMs: 20_000 });
      const atof = fs.readFileSync(path.join(dir, 'atof', 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
      expect(atof.length).toBeGreaterThan(0);
      expect(receiver.requests.filter((r) => r.path === '/atof/post').map((r) => r.body)).toEqual(atof.map((line) => `${line}\n`));
      await plugin.shutdown({ timeoutMs: 20_000 });
    } finally {
      await receiver.close();
    }
  });

  it('one bad destination does not reject the document: it is skipped with a diagnostic and everything else activates', async () => {
    delete process.env[MEMORY_TOKEN_VAR];
    const receiver = await startReceiver({ s3: S3 });
    try {
      const dir = tempDir('remote-bad');
      const toml = path.join(dir, 'plugins.toml');
      fs.writeFileSync(toml, pluginsToml(dir, receiver.origin, `ws://127.0.0.1:${receiver.port}`, memoryVars));
      const { status } = await runSessions(toml, ['plain-chat']);
      await receiver.waitFor('/atof/ndjson', 1);
      expect(status.pluginConfig.diagnostics).toEqual([
        expect.objectContaining({
          level: 'warning',
          code: 'observability.unsupported_value',
          component: 'atof',
          field: 'sinks[1].header_env.authorization',
          message: expect.stringContaining('this destination is skipped'),
        }),
      ]);
      const atof = fs.readFileSync(path.join(dir, 'atof', 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
      expect(atof.length).toBeGreaterThan(0);
      // The bad sink sent nothing; the others carried every event; ATIF went to both stores.
      expect(receiver.requests.filter((r) => r.path === '/atof/post')).toEqual([]);
      expect(receiver.requests.filter((r) => r.path === '/atof/ndjson').flatMap((r) => linesOf(r.body))).toHaveLength(atof.length);
      expect(receiver.requests.filter((r) => r.path === '/atif/upload')).toHaveLength(1);
      expect(receiver.requests.filter((r) => r.method === 'PUT' && r.signatureValid)).toHaveLength(1);
      expect(status.outputs.map((o) => o.kind).sort()).toEqual(['atif-storage', 'atif-storage', 'atof', 'atof-stream', 'atof-stream']);
    } finally {
      await receiver.close();
    }
  });
});
