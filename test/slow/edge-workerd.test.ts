// An AI SDK agent with the plugin, bundled from the built dist/ and run in
// Cloudflare's workerd itself (test/package/edge-runtimes.test.ts stands in for
// it in Node): with `nodejs_compat` it answers and the plugin says once that
// telemetry is off there (a trial saw it announce files it could not write and
// fail every write); without the flag, the `hooks` entry alone still runs.
//
// workerd is not a dependency of this package: set WORKERD_BIN to its binary
// (the `workerd` npm package's bin/workerd, which wrangler installs) or put it
// on PATH; the test is skipped, saying so, without it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { rolldown } from 'rolldown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { loopbackApi, repoRoot } from '../support/doc-snippets.ts';

const require = createRequire(import.meta.url);

function findWorkerd(): string | undefined {
  const fromEnv = process.env.WORKERD_BIN;
  if (fromEnv !== undefined && fs.existsSync(fromEnv)) return fromEnv;
  const onPath = spawnSync('workerd', ['--version'], { encoding: 'utf8' });
  return onPath.status === 0 ? 'workerd' : undefined;
}

const workerd = findWorkerd();
if (workerd === undefined) console.log('skipped: workerd not found (set WORKERD_BIN to the workerd npm package\'s bin/workerd, or put workerd on PATH)');

const dist = (module: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, 'dist', module)).href);
const moduleUrl = (name: string) => JSON.stringify(pathToFileURL(require.resolve(name)).href);

const AGENT = `
import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
import { instrumentAiSdk } from ${dist('src/adapters/ai-sdk/index.js')};
import { generateText, stepCountIs, tool, jsonSchema } from ${moduleUrl('ai')};
import { createOpenAI } from ${moduleUrl('@ai-sdk/openai')};
export default {
  async fetch(request) {
    const warnings = [];
    const logger = { debug() {}, info: (m) => warnings.push('info: ' + m), warn: (m) => warnings.push(m), error: (m) => warnings.push('error: ' + m) };
    const hooks = new HookRegistry();
    const plugin = createNemoRelayPlugin({ logger });
    plugin.register(hooks);
    const uninstall = instrumentAiSdk(hooks, { sessionId: 'edge-user', logger });
    const openai = createOpenAI({ baseURL: new URL(request.url).searchParams.get('base'), apiKey: 'sk-test-not-a-key' });
    const weather = tool({ description: 'Get the weather for a city', inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }) });
    const { text } = await generateText({ model: openai.chat('gpt-4o'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
    uninstall();
    await plugin.shutdown();
    const { backend, counters } = plugin.status();
    return Response.json({ text, backend, events: counters.events, warnings });
  },
};
`;

const HOOKS_ONLY = `
import { HookRegistry } from ${dist('src/hooks/index.js')};
export default {
  async fetch() {
    const hooks = new HookRegistry();
    const seen = [];
    hooks.on('pre_tool_call', (payload) => seen.push(payload.tool_name));
    hooks.emit('pre_tool_call', { session_id: 's1', tool_name: 'weather' });
    return Response.json({ seen });
  },
};
`;

/** Bundles `source` as workerd loads a Worker: ES modules, Node's builtins left to `nodejs_compat`. */
async function bundle(source: string, dir: string): Promise<string[]> {
  const entry = path.join(dir, 'entry.mjs');
  fs.writeFileSync(entry, source);
  const build = await rolldown({
    input: { worker: entry },
    platform: 'node',
    resolve: { conditionNames: ['workerd', 'worker', 'import', 'default'] },
    external: [/^node:/, /^@opentelemetry\//, '@grpc/grpc-js', 'aws4', 'ws', 'nemo-relay-node'],
    onLog() {},
  });
  const { output } = await build.write({ dir: path.join(dir, 'out'), format: 'esm' });
  await build.close();
  const chunks = output.filter((file) => file.type === 'chunk').map((file) => file.fileName);
  // workerd gives a module no import.meta.url: the bundler's require for the AI SDK's CommonJS dependencies needs one.
  for (const chunk of chunks) {
    const file = path.join(dir, 'out', chunk);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split('createRequire(import.meta.url)').join('createRequire("file:///bundle/worker.js")'));
  }
  return chunks;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const running: ChildProcess[] = [];

/** Serves the bundle in workerd and returns its URL once it answers. */
async function serve(dir: string, chunks: string[], flags: string[]): Promise<{ url: string; log: () => string }> {
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'out', 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker), (name = "internet", network = (allow = ["public", "private", "local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ ${chunks.map((chunk) => `(name = "${chunk}", esModule = embed "${chunk}")`).join(', ')} ],
  compatibilityDate = "2026-04-20",
  compatibilityFlags = [ ${flags.map((flag) => `"${flag}"`).join(', ')} ],
  globalOutbound = "internet",
);
`,
  );
  const child = spawn(workerd!, ['serve', path.join(dir, 'out', 'config.capnp'), '--experimental'], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; waited < 30_000; waited += 200) {
    if (child.exitCode !== null) throw new Error(`workerd exited: ${log}`);
    try {
      await fetch(`${url}/ready`, { method: 'HEAD' });
      return { url, log: () => log };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`workerd did not answer: ${log}`);
}

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(async () => {
  for (const child of running) child.kill();
  await server.close();
});

describe.skipIf(workerd === undefined)('Cloudflare workerd', () => {
  it('with nodejs_compat: the AI SDK agent answers, and one warning says telemetry is off', async () => {
    api = new FakeProvider();
    api.reply('chat', { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 50, output: 10 } });
    api.reply('chat', { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris, 21°C.', usage: { input: 80, output: 9 } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-workerd-'));
    const worker = await serve(dir, await bundle(AGENT, dir), ['nodejs_compat']);
    const response = await fetch(`${worker.url}/agent?base=${encodeURIComponent(`${server.url}/v1`)}`);
    const body = await response.text();
    expect(response.status, `${body}\n${worker.log()}`).toBe(200);
    const out = JSON.parse(body);
    expect(out.text).toBe('It is sunny in Paris, 21°C.');
    expect(api.requests).toHaveLength(2);
    expect(out.backend.kind).toBe('off');
    expect(out.backend.reason).toContain('telemetry is OFF on Cloudflare Workers (workerd)');
    expect(out.events).toBe(0);
    expect(out.warnings).toEqual([out.backend.reason]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('without nodejs_compat: the hooks entry runs (it imports no Node module)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-workerd-'));
    const worker = await serve(dir, await bundle(HOOKS_ONLY, dir), []);
    const response = await fetch(`${worker.url}/hooks`);
    const body = await response.text();
    expect(response.status, `${body}\n${worker.log()}`).toBe(200);
    expect(JSON.parse(body)).toEqual({ seen: ['weather'] });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
