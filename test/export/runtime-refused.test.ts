// Deno run without --allow-net (the README's flags less one): every remote
// output's connection is refused by the runtime itself. That answer does not
// change on a retry, so each event, trajectory and span is counted as failed
// at once, with Deno's message, and shutdown does not spend its budget on
// retries. (A user trial saw every stream event retried until shutdown, which
// took 7.7 of its 8 s and counted 30 of 33 events as dropped.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dist, runChild, runtime } from '../support/child.ts';

interface Output {
  kind: string;
  path: string;
  sent?: number;
  failed?: number;
  dropped?: number;
  lastError?: string;
}

if (runtime !== 'deno') console.info('[runtime-refused] the Deno child without --allow-net runs only when the suite runs on Deno');

describe.runIf(runtime === 'deno')('remote outputs on Deno without --allow-net', () => {
  it('fail at once, with the runtime\'s reason, and shutdown returns without waiting for retries', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-refused-'));
    fs.writeFileSync(
      path.join(dir, 'plugins.toml'),
      `version = 1
[[components]]
kind = "observability"
[components.config]
version = 4
[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "file"
output_directory = "out"
filename = "events.jsonl"
[[components.config.atof.sinks]]
type = "stream"
url = "http://127.0.0.1:9/post"
timeout_millis = 5000
[[components.config.atof.sinks]]
type = "stream"
url = "http://127.0.0.1:9/ndjson"
transport = "ndjson"
timeout_millis = 5000
[[components.config.atof.sinks]]
type = "stream"
url = "ws://127.0.0.1:9/ws"
transport = "websocket"
timeout_millis = 5000
[components.config.atif]
enabled = true
output_directory = "out"
[[components.config.atif.storage]]
type = "http"
endpoint = "http://127.0.0.1:9/upload"
timeout_millis = 5000
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "http://127.0.0.1:9"
timeout_millis = 5000
`,
    );
    const child = runChild(
      `import { createNemoRelayPlugin } from ${dist('src/index.js')};
const plugin = createNemoRelayPlugin({ backend: 'memory', settings: { pluginsTomlPath: 'plugins.toml' }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const s = { session_id: 's1', turn_id: 't1' };
plugin.handlers.on_session_start({ session_id: 's1' });
plugin.handlers.pre_api_request({ ...s, api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi' }] } } });
plugin.handlers.post_api_request({ ...s, api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hello' } }] } });
plugin.handlers.on_session_finalize({ session_id: 's1' });
const started = Date.now();
await plugin.shutdown({ timeoutMs: 20000 });
console.log(JSON.stringify({ ms: Date.now() - started, outputs: plugin.status().outputs }));`,
      { cwd: dir, denoPermissions: ['--allow-read', '--allow-write', '--allow-env'] },
    );
    expect(child.stderr).toBe('');
    const { ms, outputs } = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { ms: number; outputs: Output[] };
    const lines = fs.readFileSync(path.join(dir, 'out', 'events.jsonl'), 'utf8').trim().split('\n').length;
    const remote = outputs.filter((o) => o.kind !== 'atof' && o.kind !== 'atif');
    expect(remote.map((o) => o.kind).sort()).toEqual(['atif-storage', 'atof-stream', 'atof-stream', 'atof-stream', 'otlp-traces']);
    for (const output of remote) {
      const given = output.kind === 'atof-stream' ? lines : output.kind === 'atif-storage' ? 1 : 2; // spans: the session and its LLM call
      expect(output, output.path).toMatchObject({ sent: 0, failed: given, dropped: 0 });
      expect(output.lastError, output.path).toMatch(/Requires net access to "127\.0\.0\.1:9"/);
    }
    // Retried, the streams alone took their 5 s budget each; refused once, nothing waits.
    expect(ms).toBeLessThan(3000);
  });
});
