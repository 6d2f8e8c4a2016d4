// A host that bundles its agent (esbuild or webpack for a Lambda, `bun build --compile`, Rollup) and runs the
// bundle from another folder, with no node_modules next to it: the built dist/ is bundled here with rolldown (in
// the dev dependencies) or `bun build`, the bundle runs in a child process, and its OTLP spans reach a loopback
// receiver in this process.
// In the slow suite (Node): bundling takes seconds of CPU that npm test, run on every change, needs more.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { rolldown } from 'rolldown';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bun = path.join(root, 'node_modules', '.bin', 'bun');
// The bundles are Node programs (a Lambda's, a container's): Node runs them whichever runtime runs the suite.
const node = process.versions.bun !== undefined || process.versions.deno !== undefined ? 'node' : process.execPath;
/** Whether `node` is Node: under `bun --bun` (npm run test:bun) the `node` on PATH is Bun itself. */
const nodeIsNode = (() => {
  const probe = spawnSync(node, ['-e', "process.stdout.write(String(process.versions.bun === undefined && process.versions.deno === undefined))"], { encoding: 'utf8' });
  return probe.status === 0 && probe.stdout === 'true';
})();
if (!nodeIsNode) console.info('skipping the bundled-host tests: the "node" on PATH here is not Node (bun --bun puts Bun there); the slow suite on Node runs them');

/** The host: one session with a model call, OTLP traces to `url`, files in ./out (in an async function for CommonJS, which has no top-level await). */
function hostSource(from: string, options: { topLevelAwait?: boolean } = {}): string {
  const body = `const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atofEnabled: true, atifEnabled: true, atofOutputDirectory: 'out', atifOutputDirectory: 'out', otlpEnabled: true, otlpEndpoint: process.env.RECEIVER_URL } });
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
hooks.emit('pre_api_request', { session_id: 's1', api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'Hi' }] } } });
hooks.emit('post_api_request', { session_id: 's1', api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'Hello!' } }] } });
hooks.emit('on_session_finalize', { session_id: 's1' });
await plugin.shutdown();
console.log(JSON.stringify(plugin.status().outputs.map((output) => [output.kind, output.sent ?? null, output.failed ?? null])));
`;
  const imports = `import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(from)};\n`;
  return options.topLevelAwait === false ? `${imports}(async () => {\n${body}})();\n` : `${imports}${body}`;
}

const distIndex = pathToFileURL(path.join(root, 'dist/src/index.js')).href;

/** Runs `file` with Node in a fresh folder (as a Lambda or a container runs a bundle), without waiting synchronously. */
function runBundle(file: string, receiver: Receiver, env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string; cwd: string }> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'nrh-bundle-run-'));
  const child = spawn(node, [file], { cwd, env: { ...process.env, RECEIVER_URL: receiver.url, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr, cwd })));
}

/** A folder for a bundle, away from the repository (no node_modules above it). */
function deployFolder(): string {
  return mkdtempSync(path.join(tmpdir(), 'nrh-bundle-'));
}

/**
 * `source` bundled as esbuild's `--format=cjs` bundles it (one CommonJS file, `import.meta` emptied: rolldown would
 * translate it, so it is emptied the same way here); the bundle's path.
 */
async function cjsBundle(source: string): Promise<string> {
  const entry = path.join(deployFolder(), 'agent.mjs');
  writeFileSync(entry, source);
  const out = deployFolder();
  const bundle = await rolldown({ input: entry, platform: 'node', logLevel: 'silent', transform: { define: { 'import.meta.url': 'undefined' } } });
  await bundle.write({ dir: out, format: 'cjs', entryFileNames: 'agent.cjs', codeSplitting: false });
  await bundle.close();
  return path.join(out, 'agent.cjs');
}

/** The host bundled as one ES module with rolldown (built once: two tests run it). */
let esmBundleFolder: Promise<string> | undefined;
function esmBundle(): Promise<string> {
  esmBundleFolder ??= (async () => {
    const entry = path.join(deployFolder(), 'agent.mjs');
    writeFileSync(entry, hostSource(distIndex));
    const out = deployFolder();
    const bundle = await rolldown({ input: entry, platform: 'node', logLevel: 'silent' });
    await bundle.write({ dir: out, format: 'esm', entryFileNames: 'agent.mjs' });
    await bundle.close();
    return out;
  })();
  return esmBundleFolder;
}

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

describe.skipIf(!nodeIsNode)('an agent bundled with this package, run from another folder', () => {
  it('sends its spans through the exporter bundled in, without claiming the exporter is not installed', async () => {
    receiver = await startHttpReceiver();
    const out = await esmBundle();

    const run = await runBundle(path.join(out, 'agent.mjs'), receiver);
    expect(run.status, run.stderr).toBe(0);
    expect(receiver.spans().length).toBeGreaterThan(0);
    // Before: `observability.package_missing: ... @opentelemetry/exporter-trace-otlp-proto is not installed`, resolved
    // from the bundle's folder while the bundle held the exporter and sent with it.
    expect(run.stderr).not.toContain('package_missing');
    expect(run.stderr).not.toContain('not installed');
    expect(readdirSync(path.join(run.cwd, 'out')).sort()).toEqual(['agent-atif-s1.json', 'agent-atof.jsonl']);
  });

  it("sends its spans from CommonJS output that has no import.meta.url (esbuild's --format=cjs)", async () => {
    receiver = await startHttpReceiver();
    const run = await runBundle(await cjsBundle(hostSource(distIndex, { topLevelAwait: false })), receiver);
    expect(run.status, run.stderr).toBe(0);
    // Before: `NeMo Relay rejected plugins.toml; falling back to the environment's exporters: The argument 'filename'
    // must be ...`, and no OTLP output at all (createRequire(undefined) threw while the environment's OTLP activated).
    expect(run.stderr).not.toContain('rejected');
    expect(receiver.spans().length).toBeGreaterThan(0);
  });

  it('says why native cannot load from CommonJS output without import.meta.url, and records with memory', async () => {
    receiver = await startHttpReceiver();
    const bundled = await cjsBundle(`import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(distIndex)};
(async () => {
  const plugin = createNemoRelayPlugin({ backend: 'auto', settings: { outputs: false } });
  await plugin.ready;
  console.log(plugin.status().backend.reason);
  await plugin.shutdown();
})();
`);
    const run = await runBundle(bundled, receiver);
    expect(run.status, run.stderr).toBe(0);
    // Before: `native relay unavailable (The argument 'filename' must be a file URL object, ... Received undefined)`.
    expect(run.stdout).toContain('nemo-relay-node cannot be located from a CommonJS bundle without import.meta.url');
    expect(run.stdout).toContain('using the in-memory relay');
  });

  it('says that a plugins.toml cannot be read because the bundle left its TOML parser out, not that the TOML is invalid', async () => {
    receiver = await startHttpReceiver();
    const out = await esmBundle();
    const toml = path.join(deployFolder(), 'plugins.toml');
    writeFileSync(toml, 'version = 1\n\n[[components]]\nkind = "observability"\nenabled = true\n\n[components.config]\nversion = 1\n\n[components.config.atof]\nenabled = true\n');

    const run = await runBundle(path.join(out, 'agent.mjs'), receiver, { NEMO_RELAY_HOOKS_PLUGINS_TOML: toml });
    expect(run.status, run.stderr).toBe(0);
    // Before: `plugins_toml.invalid_toml: invalid TOML in .../plugins.toml: Cannot find module 'smol-toml'`.
    expect(run.stderr).toContain('plugins_toml.parser_unavailable');
    expect(run.stderr).toContain('smol-toml (a dependency of nemo-relay-hooks), cannot be loaded');
    expect(run.stderr).not.toContain('invalid TOML');
  });

  it.skipIf(!existsSync(bun))('builds with `bun build` where the optional OTLP packages are not installed, and says which one a send needs', async () => {
    receiver = await startHttpReceiver();
    // The host's project: this package as npm installs it (a copy: a link would resolve the peers from the checkout).
    const project = deployFolder();
    const installed = path.join(project, 'node_modules', 'nemo-relay-hooks');
    mkdirSync(installed, { recursive: true });
    cpSync(path.join(root, 'package.json'), path.join(installed, 'package.json'));
    cpSync(path.join(root, 'dist'), path.join(installed, 'dist'), { recursive: true });
    // Its one dependency, as npm installs it.
    cpSync(path.join(root, 'node_modules', 'smol-toml'), path.join(project, 'node_modules', 'smol-toml'), { recursive: true });
    writeFileSync(path.join(project, 'agent.mjs'), hostSource('nemo-relay-hooks'));
    const out = path.join(deployFolder(), 'agent.mjs');

    const build = await new Promise<{ status: number | null; output: string }>((resolve) => {
      const child = spawn(bun, ['build', 'agent.mjs', '--target=node', `--outfile=${out}`], { cwd: project });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('close', (status) => resolve({ status, output }));
    });
    // Before: `error: Could not resolve: "@grpc/grpc-js"` (and each OTLP exporter), the build stopped.
    expect(build.status, build.output).toBe(0);

    const run = await runBundle(out, receiver);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('@opentelemetry/exporter-trace-otlp-proto');
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toContainEqual(['otlp-traces', 0, 2]);
    expect(readdirSync(path.join(run.cwd, 'out')).sort()).toEqual(['agent-atif-s1.json', 'agent-atof.jsonl']);
  });
});
