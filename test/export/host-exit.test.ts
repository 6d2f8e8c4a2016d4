// A destination that accepts connections and never answers must not keep
// the host's process alive: once shutdown() has returned (here after its
// 300 ms budget), the process ends on its own, with its ATOF file whole,
// even though every remote output (streams, uploads, OTLP over HTTP and
// gRPC) has a ten-minute timeout: held, the child would outlive the runner's
// two-minute limit and be killed. Runs in a
// child process (the parent's receiver is never serviced while the child
// runs, so every request to it hangs).
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../native/support.ts';
import { tempDir } from '../contract/backends.ts';
import { detectRuntime } from '../../src/shared/js-runtime.ts';

// Bun's WebSocket (global, and the \`ws\` shim over it) cannot be unref'd: a
// handshake that never completes holds the process until timeout_millis.
const BUN = detectRuntime() === 'bun';
if (BUN) console.info("host-exit: websocket sink left out on Bun (its WebSocket cannot be unref'd; see docs/backends/memory-and-native.md)");

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;

let server: http.Server;
let origin: string;
// A gRPC collector that accepts the connection and never says a word.
let silent: net.Server;
let silentOrigin: string;
const sockets = new Set<net.Socket>();
beforeAll(async () => {
  server = http.createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  silent = net.createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentOrigin = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

function toml(dir: string): string {
  const sink = (name: string, scheme: string, transport: string) =>
    `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "${scheme}://${origin}/${name}"\ntransport = "${transport}"\ntimeout_millis = 600000\n`;
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
output_directory = ${JSON.stringify(dir)}
filename = "events.jsonl"
mode = "overwrite"
${sink('post', 'http', 'http_post')}${sink('nd', 'http', 'ndjson')}${BUN ? '' : sink('ws', 'ws', 'websocket')}
[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(dir)}
filename_template = "trajectory-{session_id}.json"
[[components.config.atif.storage]]
type = "http"
endpoint = "http://${origin}/atif"
timeout_millis = 600000
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://${origin}/v1/traces"
timeout_millis = 600000
scheduled_delay_millis = 10
[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "http://${silentOrigin}"
transport = "grpc"
timeout_millis = 600000
scheduled_delay_millis = 10
`;
}

describe('remote outputs and the host process', () => {
  it('a hanging destination does not keep the process alive after shutdown() returned', () => {
    const dir = tempDir('host-exit');
    const file = path.join(dir, 'plugins.toml');
    fs.writeFileSync(file, toml(dir));
    const result = runScript(`
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(file)} } });
const hooks = new HookRegistry();
plugin.register(hooks);
// Activated before the session: this is about shutdown, not about hooks queued while a busy machine loads the senders.
await plugin.ready;
const ids = { session_id: 'exit-1', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 'exit-1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'hello?' });
hooks.emit('on_session_end', { ...ids, completed: true });
hooks.emit('on_session_finalize', { session_id: 'exit-1' });
await plugin.shutdown({ timeoutMs: 300 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs.map((o) => [o.kind, o.sent ?? null, o.dropped ?? null, o.queued ?? null])));
`);
    expect(result.signal).toBeNull();
    expect(result.status).toBe(0);
    const lines = fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThanOrEqual(4);
    const outputs = result.result as [string, number | null, number | null, number | null][];
    const kinds = outputs.map(([kind]) => kind);
    expect(kinds.filter((kind) => kind === 'atof-stream')).toHaveLength(BUN ? 2 : 3);
    // Both OTLP endpoints got their spans and could send none: each is counted, dropped or (when the
    // exporter's first import took the whole budget) still queued, by the time shutdown() returned.
    const otlp = outputs.filter(([kind]) => kind === 'otlp-traces');
    expect(otlp).toHaveLength(2);
    for (const [, sent, dropped, queued] of otlp) {
      expect(sent).toBe(0);
      expect(dropped! + queued!).toBeGreaterThan(0);
    }
  });
});
