// The package as another project sees it: `nemo-relay-hooks` and its
// subpaths resolve through package.json "exports" to the built dist/ (which
// `npm install` builds through `prepare`), at runtime and for TypeScript.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function consumerProject(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-consumer-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(root, path.join(dir, 'node_modules', 'nemo-relay-hooks'), 'dir');
  // TypeScript resolves the package's own type dependencies from the consumer.
  symlinkSync(path.join(root, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'), 'dir');
  return dir;
}

describe('the package seen from another project', () => {
  it('declares types first in every export', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
    };
    for (const subpath of ['.', './hooks', './formats', './backend', './memory', './native', './testing', './ai-sdk', './openai-agents', './langchain', './claude-agent-sdk', './mcp']) {
      const entry = manifest.exports[subpath];
      expect(typeof entry, subpath).toBe('object');
      expect(Object.keys(entry as object)[0], subpath).toBe('types');
    }
  });

  it('imports every entry point with Node from dist/', () => {
    const dir = consumerProject();
    writeFileSync(
      path.join(dir, 'app.mjs'),
      `import { HookRegistry, createNemoRelayPlugin } from 'nemo-relay-hooks';
import { HOOK_NAMES } from 'nemo-relay-hooks/hooks';
import { validateAtif } from 'nemo-relay-hooks/formats';
import { InvalidPluginConfigError } from 'nemo-relay-hooks/backend';
import { createMemoryRelay } from 'nemo-relay-hooks/memory';
import { loadNativeRelay } from 'nemo-relay-hooks/native';
import { createFakeRelay } from 'nemo-relay-hooks/testing';
import { HookRegistry as LightRegistry } from 'nemo-relay-hooks/hooks';
const fake = createFakeRelay();
const hooks = new HookRegistry();
createNemoRelayPlugin({ backend: fake, env: {} }).register(hooks);
hooks.emit('on_session_start', { session_id: 'x' });
console.log(JSON.stringify({
  hooks: HOOK_NAMES.length,
  ops: fake.ops(),
  memory: createMemoryRelay().kind,
  native: typeof loadNativeRelay,
  validate: typeof validateAtif,
  errors: typeof InvalidPluginConfigError,
  light: new LightRegistry().hook('pre_tool_call').active,
}));
`,
    );
    const result = spawnSync('node', ['app.mjs'], { cwd: dir, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ hooks: 15, ops: ['pushScope'], memory: 'memory', native: 'function', validate: 'function', errors: 'function', light: false });
  });

  it('imports the framework adapters from dist/, their frameworks resolving as peers', () => {
    const dir = consumerProject();
    writeFileSync(
      path.join(dir, 'adapters.mjs'),
      `import { instrumentAiSdk, aiSdkMiddleware } from 'nemo-relay-hooks/ai-sdk';
import { instrumentOpenAIAgents } from 'nemo-relay-hooks/openai-agents';
import { NemoRelayCallbackHandler } from 'nemo-relay-hooks/langchain';
import { wrapClaudeAgentSdk } from 'nemo-relay-hooks/claude-agent-sdk';
import { HookRegistry } from 'nemo-relay-hooks';
const hooks = new HookRegistry();
const off = instrumentAiSdk(hooks);
off();
// The adapter takes the SDK module the host imported; any object with query() stands in for it here.
const claude = { query: () => (async function* () {})(), tool: () => 'tool' };
const wrapped = wrapClaudeAgentSdk(claude, hooks);
console.log(JSON.stringify([typeof aiSdkMiddleware(hooks).wrapGenerate, typeof instrumentOpenAIAgents, new NemoRelayCallbackHandler(hooks).name, typeof wrapped.query, wrapped.tool === claude.tool]));
`,
    );
    const result = spawnSync('node', ['adapters.mjs'], { cwd: dir, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(['function', 'function', 'nemo_relay_hooks', 'function', true]);
  });

  it('writes a consumer\'s ATIF trajectory from dist/, with the steps of the session, and ends by itself', () => {
    const dir = consumerProject();
    writeFileSync(
      path.join(dir, 'atif.mjs'),
      `import { HookRegistry, createNemoRelayPlugin } from 'nemo-relay-hooks';
import { createMemoryRelay } from 'nemo-relay-hooks/memory';
import { readFileSync } from 'node:fs';
const warnings = [];
const relay = createMemoryRelay({ logger: { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) } });
const plugin = createNemoRelayPlugin({ backend: relay, env: {}, settings: { atifEnabled: true, atifOutputDirectory: 'atif' } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 'c1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { session_id: 'c1', turn_id: 't1', user_message: 'hello?' });
hooks.emit('pre_api_request', { session_id: 'c1', turn_id: 't1', api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hello?' }] } } });
hooks.emit('post_api_request', { session_id: 'c1', turn_id: 't1', api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
hooks.emit('on_session_end', { session_id: 'c1', turn_id: 't1', completed: true });
hooks.emit('on_session_finalize', { session_id: 'c1' });
await plugin.shutdown();
const trajectory = JSON.parse(readFileSync('atif/consumer-atif-c1.json', 'utf8'));
console.log(JSON.stringify({ warnings, steps: trajectory.steps.map((step) => [step.source, step.message]) }));
`,
    );
    const result = spawnSync('node', ['atif.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    expect(result.signal, result.stderr).toBeNull();
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ warnings: [], steps: [['user', 'hello?'], ['agent', 'hi.']] });
  });

  it('type-checks a TypeScript consumer against the emitted .d.ts files', () => {
    const dir = consumerProject();
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, types: ['node'] }, files: ['app.ts'] }),
    );
    writeFileSync(
      path.join(dir, 'app.ts'),
      `import { HookRegistry, createNemoRelayPlugin, type PluginStatus } from 'nemo-relay-hooks';
import { createMemoryRelay } from 'nemo-relay-hooks/memory';
import { createFakeRelay, type FakeRelay } from 'nemo-relay-hooks/testing';
import { type BoundHook, type PreToolCallPayload } from 'nemo-relay-hooks/hooks';
import type { AtifTrajectory } from 'nemo-relay-hooks/formats';
import type { RelayBackend } from 'nemo-relay-hooks/backend';
const hooks = new HookRegistry();
const preTool: BoundHook<'pre_tool_call'> = hooks.hook('pre_tool_call');
if (preTool.active) preTool.emit({ tool_name: 'ls', tool_call_id: 'c0', args: {} });
const plugin = createNemoRelayPlugin({ backend: createMemoryRelay(), settings: { atofEnabled: true } });
plugin.register(hooks);
const payload: PreToolCallPayload = { tool_name: 'ls', tool_call_id: 'c1', args: {} };
hooks.emit('pre_tool_call', () => payload);
const status: PluginStatus = plugin.status();
const fake: FakeRelay = createFakeRelay();
const backend: RelayBackend = fake;
const trajectory: AtifTrajectory | null = null;
export { status, fake, backend, trajectory };
`,
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync('node', [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  });

  it("type-checks a consumer whose lib has no Symbol.dispose of its own (ES2022, no @types/node)", () => {
    // The plugin and the recorder are disposable; their declarations name Symbol.dispose and
    // Symbol.asyncDispose, which a consumer without @types/node (or with @types/node 20 on
    // TypeScript 7) did not have: three errors in our .d.ts files unless skipLibCheck.
    const dir = consumerProject();
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022'], strict: true, noEmit: true, types: [] }, files: ['app.ts'] }),
    );
    writeFileSync(
      path.join(dir, 'app.ts'),
      `import { HookRegistry, createNemoRelayPlugin, createHookRecorder } from 'nemo-relay-hooks';
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { outputs: false } });
plugin.register(hooks);
export { plugin, createHookRecorder };
`,
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync('node', [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  });
});
