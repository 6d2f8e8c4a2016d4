// An AI SDK agent on an edge runtime (Vercel's Edge Runtime, Cloudflare's
// workerd), as a user there writes it with the README's plugin and the AI SDK
// adapter: the built dist/, imported in a child whose globals are the edge
// runtime's, runs the agent against a loopback OpenAI (Chat Completions) and
// prints what it answered and what the plugin said.
//
// What a trial of the packed package found there: on the Edge Runtime (no
// `Buffer`, no `process.getBuiltinModule`, `node:module` unusable) importing
// the main entry threw, so the worker never started (and `/native`, which
// made its HTTP agents at import, threw on `node:http`); on workerd with
// `nodejs_compat` (it looks like Node) the agent ran, but the plugin said it
// recorded to `nemo-relay-output/`, failed every write with `operation not
// permitted` and named a native load error as the backend's reason. Now the
// entries import, the agent answers, and one warning (and `status()`) says
// telemetry is off there and why.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { dist, runtime, spawnChild } from '../support/child.ts';
import { loopbackApi } from '../support/doc-snippets.ts';

const require = createRequire(import.meta.url);
const moduleUrl = (name: string) => JSON.stringify(pathToFileURL(require.resolve(name)).href);

/** The Node modules Vercel's Edge Runtime has (`node:async_hooks`, `buffer`, `events`, `util`, `assert`) stay; these do not. */
const NOT_ON_THE_EDGE = ['module', 'http', 'https', 'net', 'tls', 'crypto', 'os', 'diagnostics_channel', 'fs', 'path', 'url', 'child_process', 'worker_threads', 'zlib', 'stream'];

/** A module standing in for `name` whose every export throws when used, as Next.js's edge bundles stand in for a Node module the runtime lacks. */
async function unsupported(name: string): Promise<string> {
  const names = Object.keys(await import(`node:${name}`)).filter((key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key));
  const source = `const fail = () => { throw new Error("The edge runtime does not support Node.js '${name}' module"); };
const stub = new Proxy(function () {}, { get: fail, apply: fail, construct: fail });
${names.map((key) => `export const ${key} = stub;`).join('\n')}
export default stub;`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/**
 * Vercel's Edge Runtime as its `EdgeRuntime` VM presents itself: the `EdgeRuntime` global, no `Buffer`, no `process`
 * builtin loader, and the Node modules it lacks unusable (Node only: they are stood in for by a Node module hook).
 */
async function vercel(): Promise<string> {
  const stubs = Object.fromEntries(await Promise.all(NOT_ON_THE_EDGE.map(async (name) => [`node:${name}`, await unsupported(name)] as const)));
  const hook = `const stubs = ${JSON.stringify(stubs)}; export async function resolve(specifier, context, next) { const url = stubs[specifier] ?? stubs['node:' + specifier]; return url === undefined ? next(specifier, context) : { url, shortCircuit: true }; }`;
  return `
import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});
globalThis.EdgeRuntime = 'edge-runtime';
const { Buffer } = globalThis;
delete globalThis.Buffer;
delete process.getBuiltinModule;
`;
}

/** After the entries are imported (where the trial's import threw): Node's fetch, which the program uses, reads the global `Buffer` (an edge runtime's own fetch does not). */
const VERCEL_AFTER_IMPORT = `globalThis.Buffer = Buffer;`;

/** Cloudflare's workerd with `nodejs_compat`: Node's globals, and its user agent. */
const workerd = async () => `
Object.defineProperty(globalThis, 'navigator', { value: { userAgent: 'Cloudflare-Workers' }, configurable: true });
`;

/** Every entry but the framework adapters whose frameworks the edge does not run. */
const ENTRIES = ['src/hooks/index.js', 'src/formats/index.js', 'src/relay/index.js', 'src/backends/memory/index.js', 'native/index.js', 'src/testing/index.js'];

function agent(edge: string, afterImport: string, baseUrl: string): string {
  return `${edge}
const warnings = [];
const logger = { debug() {}, info: (m) => warnings.push('info: ' + m), warn: (m) => warnings.push(m), error: (m) => warnings.push('error: ' + m) };
const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const { instrumentAiSdk } = await import(${dist('src/adapters/ai-sdk/index.js')});
${ENTRIES.map((entry) => `await import(${dist(entry)});`).join('\n')}
${afterImport}
const { generateText, stepCountIs, tool, jsonSchema } = await import(${moduleUrl('ai')});
const { createOpenAI } = await import(${moduleUrl('@ai-sdk/openai')});
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ logger });
plugin.register(hooks);
const uninstall = instrumentAiSdk(hooks, { sessionId: 'edge-user', logger });
const openai = createOpenAI({ baseURL: ${JSON.stringify(baseUrl)}, apiKey: 'sk-test-not-a-key' });
const weather = tool({ description: 'Get the weather for a city', inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }) });
const { text } = await generateText({ model: openai.chat('gpt-4o'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
uninstall();
await plugin.shutdown();
const { backend, counters } = plugin.status();
console.log(JSON.stringify({ text, backend, events: counters.events, warnings }));
`;
}

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

const EDGES = [
  { name: "Vercel's Edge Runtime", globals: vercel, afterImport: VERCEL_AFTER_IMPORT, runtimes: ['node'] },
  { name: 'Cloudflare Workers (workerd)', globals: workerd, afterImport: '', runtimes: ['node', 'bun', 'deno'] },
];

describe('an AI SDK agent on an edge runtime', () => {
  for (const edge of EDGES) {
    const runs = edge.runtimes.includes(runtime);
    if (!runs) console.log(`skipped on ${runtime}: ${edge.name} is stood in for with a Node module hook`);
    it.skipIf(!runs)(`on ${edge.name}: every entry imports, the agent answers, and one warning says telemetry is off`, async () => {
      api = new FakeProvider();
      api.reply('chat', { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 50, output: 10 } });
      api.reply('chat', { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris, 21°C.', usage: { input: 80, output: 9 } });
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-edge-'));
      const child = await spawnChild(agent(await edge.globals(), edge.afterImport, `${server.url}/v1`), { cwd, env: { NEMO_RELAY_HOOKS_BACKEND: undefined, NEMO_RELAY_HOOKS_OUTPUTS: undefined } });
      expect(child.status, `${child.stdout}\n${child.stderr}`).toBe(0);
      const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!);
      expect(out.text).toBe('It is sunny in Paris, 21°C.');
      expect(api.requests).toHaveLength(2);
      expect(out.backend.kind).toBe('off');
      expect(out.backend.reason).toContain(`telemetry is OFF on ${edge.name}`);
      expect(out.backend.reason).toContain('run it on Node, Bun or Deno');
      expect(out.events).toBe(0);
      // One message, the reason itself: no notice of a default folder, no failed writes.
      expect(out.warnings).toEqual([out.backend.reason]);
      expect(fs.readdirSync(cwd)).toEqual([]);
      fs.rmSync(cwd, { recursive: true, force: true });
    });
  }
});
