// Remote outputs under faulty receivers (issue 23): every item a host
// emits ends sent, failed or dropped, counted in status() by the time
// shutdown() returns, and the host's process then exits on its own. The
// receivers are real loopback servers in this process; the host is a child
// process (spawned asynchronously, so the servers keep answering), killed
// by the runner if it does not exit: a host that hangs fails here.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { dist, runtime, spawnChild } from '../support/child.ts';
import { tempDir } from '../contract/backends.ts';

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()));
});

/** A loopback HTTP server; `handle` decides how each request is answered. */
async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): Promise<{ origin: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin: `127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A plugins.toml with an ATOF file (the count of what was emitted), an ATIF folder and `extra` sections. */
function pluginsToml(dir: string, extra: { sinks?: string; storage?: string; otel?: string }): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    file,
    `version = 1
[[components]]
kind = "observability"
enabled = true
[components.config]
version = 4
[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "file"
output_directory = ${JSON.stringify(dir)}
filename = "events.jsonl"
mode = "overwrite"
${extra.sinks ?? ''}
[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(dir)}
filename_template = "trajectory-{session_id}.json"
${extra.storage ?? ''}
${extra.otel ?? ''}`,
  );
  return file;
}

/**
 * A host: `sessions` sessions of `calls` model calls each, then
 * `shutdown({ timeoutMs })` (or `process.exit()` with `exit`), then
 * status().outputs on the @@RESULT@@ line and @@DONE@@.
 */
function host(toml: string, sessions: number, calls: number, timeoutMs: number, options: { exit?: boolean; waitMs?: number; pad?: number } = {}): string {
  return `
import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
const plugin = createNemoRelayPlugin({ backend: 'memory', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: ${JSON.stringify(toml)} } });
const hooks = new HookRegistry();
plugin.register(hooks);
await plugin.ready;
for (let s = 0; s < ${sessions}; s++) {
  const session_id = 's' + s;
  hooks.emit('on_session_start', { session_id, model: 'gpt-4o' });
  for (let i = 0; i < ${calls}; i++) {
    const ids = { session_id, turn_id: 't' + i, api_request_id: 'r' + i };
    hooks.emit('pre_llm_call', { ...ids, user_message: 'hi'.padEnd(${options.pad ?? 2}, '.') });
    hooks.emit('pre_api_request', { ...ids, model: 'gpt-4o', retry_count: 0 });
    hooks.emit('post_api_request', { ...ids, model: 'gpt-4o', response: { usage: { input_tokens: 1, output_tokens: 1 } } });
    hooks.emit('post_llm_call', { ...ids, assistant_response: 'ok' });
  }
  hooks.emit('on_session_end', { session_id, completed: true });
  hooks.emit('on_session_finalize', { session_id });
}
${options.waitMs !== undefined ? `await new Promise((resolve) => setTimeout(resolve, ${options.waitMs}));` : ''}
${options.exit === true ? 'process.exit(0);' : ''}
await plugin.shutdown({ timeoutMs: ${timeoutMs} });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs));
console.log('@@DONE@@');
`;
}

interface Output {
  kind: string;
  path: string;
  sent?: number;
  failed?: number;
  dropped?: number;
  queued?: number;
  errors: number;
  lastError?: string;
  recoveryPath?: string;
}

function output(result: unknown, kind: string): Output {
  const found = (result as Output[]).find((o) => o.kind === kind);
  expect(found, `${kind} in status().outputs`).toBeDefined();
  return found!;
}

function atofLines(dir: string): string[] {
  return fs
    .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

const counted = (o: Output) => (o.sent ?? 0) + (o.failed ?? 0) + (o.dropped ?? 0) + (o.queued ?? 0);

describe('OTLP under a faulty collector', () => {
  it('a collector that dribbles its answer is timed out per timeout_millis; every span is counted and the host exits', async () => {
    let requests = 0;
    const { origin } = await serve((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '1000' });
      // Faster than the timeout: a socket that is never idle that long is never timed out by an idle timer.
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('x')), 100);
    });
    const dir = tempDir('dribble');
    const toml = pluginsToml(dir, {
      otel: `[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${origin}/v1/traces"
timeout_millis = 400
scheduled_delay_millis = 10
`,
    });
    // Five seconds before shutdown: time for the exporter to load (slow on a busy machine), a request to time out and a retry to go.
    const child = await spawnChild(host(toml, 4, 2, 4000, { waitMs: 5000 }), { killAfterMs: 40_000 });
    expect(child.killed, `the host did not exit: ${child.stderr}`).toBe(false);
    expect(child.status).toBe(0);
    const otlp = output(child.result, 'otlp-traces');
    const spans = atofLines(dir).filter((line) => line.includes('"scope_category":"end"')).length;
    expect(spans).toBeGreaterThan(0);
    expect(otlp.sent).toBe(0);
    expect(counted(otlp)).toBe(spans);
    // Timed out after 400 ms and tried again: without a bound on the whole answer the one request dripped on.
    expect(requests).toBeGreaterThan(1);
  });

});

describe('OTLP batches in flight at shutdown', () => {
  it('a collector that never answers: the batches in flight are counted as dropped before shutdown() returns', async () => {
    let requests = 0;
    const { origin } = await serve(() => {
      requests++;
    });
    const dir = tempDir('in-flight');
    const toml = pluginsToml(dir, {
      otel: `[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${origin}/v1/traces"
timeout_millis = 1500
scheduled_delay_millis = 10
max_export_batch_size = 5
`,
    });
    // A budget far longer than the destination's timeout: the destination, not the budget, ends the wait.
    const child = await spawnChild(host(toml, 4, 1, 60_000), { killAfterMs: 40_000 });
    expect(child.killed).toBe(false);
    const ends = atofLines(dir).filter((line) => line.includes('"scope_category":"end"')).length;
    expect(requests).toBeGreaterThan(0);
    expect(output(child.result, 'otlp-traces')).toMatchObject({ sent: 0, failed: 0, dropped: ends, queued: 0 });
  });
});

describe('OTLP through an outage', () => {
  it('a collector down for 2 s loses nothing: each failed batch has its own retries', async () => {
    let outageEnds = 0;
    let refused = 0;
    const { origin } = await serve((req, res) => {
      if (outageEnds === 0) outageEnds = Date.now() + 2000;
      if (Date.now() < outageEnds) {
        refused++;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
    const dir = tempDir('outage');
    const toml = pluginsToml(dir, {
      otel: `[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${origin}/v1/traces"
timeout_millis = 20000
scheduled_delay_millis = 10
max_export_batch_size = 10
`,
    });
    const child = await spawnChild(host(toml, 40, 3, 25_000), { killAfterMs: 45_000 });
    expect(child.killed).toBe(false);
    const ends = atofLines(dir).filter((line) => line.includes('"scope_category":"end"')).length;
    expect(ends).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(4);
    expect(output(child.result, 'otlp-traces')).toMatchObject({ sent: ends, failed: 0, dropped: 0, queued: 0 });
  });
});

describe('timeouts of 2^31 ms or more', () => {
  it('shutdown({ timeoutMs: 2 ** 31 }) and a destination timeout_millis past 2^31 mean a long time, not none: everything is delivered', async () => {
    const received = { events: 0, uploads: 0, spans: 0 };
    const { origin } = await serve((req, res, body) => {
      if (req.url === '/events') received.events += 1;
      else if (req.url === '/atif') received.uploads += 1;
      else received.spans += body.length > 0 ? 1 : 0;
      // A receiver that takes its time: a shutdown that returned at once would leave these unsent.
      setTimeout(() => {
        res.writeHead(200);
        res.end();
      }, 20);
    });
    const dir = tempDir('huge-timeout');
    const huge = 2 ** 31 + 5;
    const toml = pluginsToml(dir, {
      sinks: `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "http://${origin}/events"\ntransport = "http_post"\ntimeout_millis = ${huge}\n`,
      storage: `[[components.config.atif.storage]]\ntype = "http"\nendpoint = "http://${origin}/atif"\ntimeout_millis = ${huge}\n`,
      otel: `[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${origin}/v1/traces"
timeout_millis = ${huge}
scheduled_delay_millis = 10
`,
    });
    const child = await spawnChild(host(toml, 3, 2, 2 ** 31), { killAfterMs: 45_000 });
    expect(child.killed).toBe(false);
    expect(child.stderr).not.toMatch(/did not finish/);
    const events = atofLines(dir).length;
    const ends = atofLines(dir).filter((line) => line.includes('"scope_category":"end"')).length;
    expect(output(child.result, 'atof-stream')).toMatchObject({ sent: events, failed: 0, dropped: 0 });
    expect(output(child.result, 'atif-storage')).toMatchObject({ sent: 3, failed: 0, dropped: 0 });
    expect(output(child.result, 'otlp-traces')).toMatchObject({ sent: ends, failed: 0, dropped: 0 });
    expect(received.events).toBe(events);
    expect(received.uploads).toBe(3);
  });
});

describe('ATOF streams under faulty receivers', () => {
  it.skipIf(runtime === 'bun')('a WebSocket receiver that stops reading: every event counted, and the host exits', async () => {
    const { origin, server } = await serve((_req, res) => res.end());
    const wss = new WebSocketServer({ noServer: true });
    const stalled: import('node:net').Socket[] = [];
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket as import('node:net').Socket, head, () => {
        // Accepts the connection, then never reads a byte again.
        (socket as import('node:net').Socket).pause();
        stalled.push(socket as import('node:net').Socket);
      }),
    );
    servers.push(async () => {
      for (const socket of stalled) socket.destroy();
      wss.close();
    });
    const dir = tempDir('ws-stall');
    const toml = pluginsToml(dir, {
      sinks: `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "ws://${origin}/ws"\ntransport = "websocket"\ntimeout_millis = 1000\n`,
    });
    // Enough events to fill the socket's buffers many times over.
    const child = await spawnChild(host(toml, 60, 20, 4000, { pad: 10_000 }), { killAfterMs: 25_000 });
    expect(child.killed, `the host did not exit: ${child.stderr}`).toBe(false);
    expect(child.status).toBe(0);
    const stream = output(child.result, 'atof-stream');
    const events = atofLines(dir).length;
    expect(counted(stream)).toBe(events);
    expect((stream.failed ?? 0) + (stream.dropped ?? 0)).toBeGreaterThan(0);
  });
  if (runtime === 'bun') console.info("delivery-faults: the stalled WebSocket case is left out on Bun (its WebSocket cannot be unref'd or torn down; see the README)");

  it('an HTTP receiver that closes each connection after answering: no event fails on a stale kept-alive connection', async () => {
    let received = 0;
    const { origin } = await serve((req, res, body) => {
      received += body.toString('utf8').split('\n').filter((line) => line !== '').length;
      res.writeHead(200);
      // No "Connection: close": the client finds out when it reuses the connection.
      res.end(() => req.socket.destroy());
    });
    const dir = tempDir('close-each');
    const toml = pluginsToml(dir, {
      sinks: `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "http://${origin}/events"\ntransport = "http_post"\ntimeout_millis = 20000\n`,
    });
    const child = await spawnChild(host(toml, 10, 2, 30_000), { killAfterMs: 45_000 });
    expect(child.killed).toBe(false);
    const stream = output(child.result, 'atof-stream');
    const events = atofLines(dir).length;
    expect(stream).toMatchObject({ sent: events, failed: 0, dropped: 0, errors: 0 });
    expect(received).toBe(events);
  });
});

describe('ATIF uploads that cannot finish', () => {
  const storage = (origin: string) => `[[components.config.atif.storage]]\ntype = "http"\nendpoint = "http://${origin}/atif"\ntimeout_millis = 600000\n`;

  it('a destination that hangs: shutdown() counts every trajectory and keeps each locally, and the host exits', async () => {
    const { origin } = await serve(() => {});
    const dir = tempDir('upload-hang');
    const child = await spawnChild(host(pluginsToml(dir, { storage: storage(origin) }), 5, 1, 1500), { killAfterMs: 30_000 });
    expect(child.killed).toBe(false);
    expect(child.status).toBe(0);
    const upload = output(child.result, 'atif-storage');
    expect(upload).toMatchObject({ sent: 0 });
    expect(counted(upload)).toBe(5);
    const copies = fs.readdirSync(dir).filter((name) => name.startsWith('trajectory-'));
    expect(copies).toHaveLength(5);
    expect(upload.recoveryPath).toBeDefined();
  });

  it('process.exit() with uploads pending keeps every trajectory locally', async () => {
    const { origin } = await serve(() => {});
    const dir = tempDir('upload-exit');
    const child = await spawnChild(host(pluginsToml(dir, { storage: storage(origin) }), 5, 1, 1500, { exit: true }), { killAfterMs: 30_000 });
    expect(child.killed).toBe(false);
    const copies = fs.readdirSync(dir).filter((name) => name.startsWith('trajectory-'));
    expect(copies).toHaveLength(5);
    for (const copy of copies) expect(JSON.parse(fs.readFileSync(path.join(dir, copy), 'utf8')).steps.length).toBeGreaterThan(0);
  });
});
