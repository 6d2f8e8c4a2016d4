// A user configures OTLP (or a websocket stream, or an S3 upload) but never
// installed the optional package that sends it. This builds that install
// for real (the built package and smol-toml, no OpenTelemetry exporters, no
// ws, no aws4) and checks that doctor fails naming the install command, and
// that the plugin itself says so once, at activation, on the console, while
// the local files are still written.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectNoStack, ROOT, runtime, tempDir } from './support.ts';

function installWithoutOptionalPackages(): string {
  const dir = tempDir('nrh-no-optional-');
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, 'nemo-relay-hooks'), { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(modules, 'nemo-relay-hooks', 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(modules, 'nemo-relay-hooks', 'package.json'));
  symlinkSync(realpathSync(path.join(ROOT, 'node_modules', 'smol-toml')), path.join(modules, 'smol-toml'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'otlp-host', type: 'module', private: true }));
  return dir;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...extra };
  for (const key of Object.keys(env)) {
    if (key.startsWith('HERMES_NEMO_RELAY_') || key.startsWith('OTEL_') || key === 'NEMO_RELAY_HOOKS_BACKEND' || key === 'NEMO_RELAY_HOOKS_OUTPUTS') {
      if (!(key in extra)) delete env[key];
    }
  }
  // memory: native would send OTLP with its own code and need none of these packages.
  env.NEMO_RELAY_HOOKS_BACKEND = 'memory';
  return env as NodeJS.ProcessEnv;
}

const OTLP = { NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };

// Deno resolves bare imports only through a config of its own, which this scratch install has not.
const skip = runtime === 'deno';
if (skip) console.log('skipping the missing-package tests on Deno: the scratch install has no deno.json to resolve its imports (Node and Bun run them)');

describe.skipIf(skip)('a destination whose package is not installed', () => {
  it('doctor fails (exit 1) and names the command that installs it', () => {
    const dir = installWithoutOptionalPackages();
    const main = path.join(dir, 'node_modules', 'nemo-relay-hooks', 'dist', 'src', 'cli', 'main.js');
    const result = spawnSync(process.execPath, [main, 'doctor'], { cwd: dir, env: cleanEnv(OTLP), encoding: 'utf8' });
    expectNoStack(result.stdout);
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(
      /error package\.missing \(@opentelemetry\/exporter-trace-otlp-proto\): OTLP traces to http:\/\/127\.0\.0\.1:9\/v1\/traces needs @opentelemetry\/exporter-trace-otlp-proto, which cannot be imported here; fix: npm install @opentelemetry\/exporter-trace-otlp-proto@\^0\.223\.1/,
    );
    expect(result.stdout).not.toContain('everything looks fine');
  });

  it('the plugin warns once at activation, naming the fix, and still writes its files', () => {
    const dir = installWithoutOptionalPackages();
    writeFileSync(
      path.join(dir, 'host.mjs'),
      `import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
hooks.emit('pre_api_request', { session_id: 's1', api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi' }] } } });
hooks.emit('post_api_request', { session_id: 's1', api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hello' } }] } });
hooks.emit('on_session_finalize', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 2000 });
console.log(JSON.stringify(plugin.status().outputs.find((o) => o.kind === 'otlp-traces')));
`,
    );
    const result = spawnSync(process.execPath, ['host.mjs'], { cwd: dir, env: cleanEnv(OTLP), encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.includes('package_missing'));
    expect(warnings).toEqual([
      '[nemo-relay-hooks] OTLP from the environment: observability.package_missing: OTLP traces to http://127.0.0.1:9/v1/traces sends nothing: @opentelemetry/exporter-trace-otlp-proto is not installed (an optional peer dependency; ATOF and ATIF files do not need it); fix: npm install @opentelemetry/exporter-trace-otlp-proto@^0.223.1',
    ]);
    // The span was not lost silently: it is counted as failed, with the reason.
    const otlp = JSON.parse(result.stdout) as { sent: number; failed: number; lastError: string };
    expect(otlp.sent).toBe(0);
    expect(otlp.failed).toBeGreaterThan(0);
    expect(otlp.lastError).toContain('@opentelemetry/exporter-trace-otlp-proto could not be loaded');
    // The default recording still ran alongside OTLP, and says so for both files (the OTLP document writes the ATOF one).
    expect(result.stderr).toContain(`recording to ${path.join(realpathSync(dir), 'nemo-relay-output')}: ATOF events in otlp-host-atof.jsonl, one ATIF trajectory per session in otlp-host-atif-<session id>.json`);
    expect(existsSync(path.join(dir, 'nemo-relay-output'))).toBe(true);
    expect(readdirSync(path.join(dir, 'nemo-relay-output')).sort()).toEqual(['otlp-host-atif-s1.json', 'otlp-host-atof.jsonl']);
  });
});

// A destination address can carry a password or a token; the package.missing message names the
// destination, so it must show the address as the destinations rows do, wherever it is printed.
const SECRET_TOML = `version = 1

[[components]]
kind = "observability"

[components.config]
version = 4

[components.config.opentelemetry]
enabled = true

[[components.config.opentelemetry.endpoints]]
type = "gen_ai"
endpoint = "https://alice:S3CRETPASS@127.0.0.1:9/v1/traces?api_key=QSECRETKEY&x=1"
headers = { authorization = "Bearer HDRSECRET" }

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "stream"
transport = "websocket"
url = "wss://bob:WSPASS@127.0.0.1:9/stream?token=WSTOKEN"
headers = { authorization = "Bearer WSHDR" }
`;
const SECRETS = ['alice', 'S3CRETPASS', 'QSECRETKEY', 'bob', 'WSPASS', 'WSTOKEN', 'HDRSECRET', 'WSHDR'];
const OTLP_MISSING = 'OTLP traces to https://127.0.0.1:9/v1/traces?api_key=***&x=1 needs @opentelemetry/exporter-trace-otlp-proto';
// Bun has its own WebSocket and needs no ws.
const WS_MISSING = 'the ATOF websocket stream to wss://***@127.0.0.1:9/stream?token=*** needs ws';

function expectNoSecret(text: string, secrets: readonly string[] = SECRETS): void {
  for (const secret of secrets) expect(text, `${secret} printed`).not.toContain(secret);
}

describe.skipIf(skip)('a missing package whose destination address carries credentials', () => {
  function withSecretToml(): { dir: string; main: string; toml: string } {
    const dir = installWithoutOptionalPackages();
    const toml = path.join(dir, 'secret.plugins.toml');
    writeFileSync(toml, SECRET_TOML);
    return { dir, main: path.join(dir, 'node_modules', 'nemo-relay-hooks', 'dist', 'src', 'cli', 'main.js'), toml };
  }

  it('doctor names the destination without its user, password or secret query values', () => {
    const { dir, main, toml } = withSecretToml();
    const result = spawnSync(process.execPath, [main, 'doctor', '--plugins-toml', toml, '--offline'], { cwd: dir, env: cleanEnv({}), encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain(`error package.missing (@opentelemetry/exporter-trace-otlp-proto): ${OTLP_MISSING}`);
    if (runtime !== 'bun') expect(result.stdout).toContain(`error package.missing (ws): ${WS_MISSING}`);
    expectNoSecret(result.stdout + result.stderr);
  });

  it('doctor --json: problems[].message is redacted the same way', () => {
    const { dir, main, toml } = withSecretToml();
    const result = spawnSync(process.execPath, [main, 'doctor', '--json', '--plugins-toml', toml, '--offline'], { cwd: dir, env: cleanEnv({}), encoding: 'utf8' });
    const report = JSON.parse(result.stdout) as { problems: { code: string; message: string }[] };
    const missing = report.problems.filter((p) => p.code === 'package.missing').map((p) => p.message);
    expect(missing.some((m) => m.startsWith(OTLP_MISSING)), missing.join('\n')).toBe(true);
    if (runtime !== 'bun') expect(missing.some((m) => m.startsWith(WS_MISSING)), missing.join('\n')).toBe(true);
    expectNoSecret(result.stdout + result.stderr);
  });

  it('doctor with the endpoint only in the environment redacts it too', () => {
    const { dir, main } = withSecretToml();
    const env = cleanEnv({ NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://example.invalid:4318/v1/traces?sig=QSIGSECRET' });
    const result = spawnSync(process.execPath, [main, 'doctor', '--offline'], { cwd: dir, env, encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toContain('OTLP traces to https://example.invalid:4318/v1/traces?sig=*** needs @opentelemetry/exporter-trace-otlp-proto');
    expectNoSecret(result.stdout + result.stderr, ['QSIGSECRET']);
  });

  it("the plugin's activation warning and status() show the redacted address", () => {
    const { dir, toml } = withSecretToml();
    writeFileSync(
      path.join(dir, 'host.mjs'),
      `import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
hooks.emit('on_session_finalize', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 2000 });
console.log(JSON.stringify(plugin.status()));
`,
    );
    const result = spawnSync(process.execPath, ['host.mjs'], { cwd: dir, env: cleanEnv({ NEMO_RELAY_HOOKS_PLUGINS_TOML: toml }), encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const otlpWarning = 'OTLP traces to https://127.0.0.1:9/v1/traces?api_key=***&x=1 sends nothing: @opentelemetry/exporter-trace-otlp-proto is not installed';
    const wsWarning = 'the ATOF websocket stream to wss://***@127.0.0.1:9/stream?token=*** sends nothing: ws is not installed';
    expect(result.stderr).toContain(`observability.package_missing: ${otlpWarning}`);
    if (runtime !== 'bun') expect(result.stderr).toContain(`observability.package_missing: ${wsWarning}`);
    const status = JSON.parse(result.stdout) as { pluginConfig: { diagnostics: { code: string; message: string }[] } };
    const missing = status.pluginConfig.diagnostics.filter((d) => d.code === 'observability.package_missing').map((d) => d.message);
    expect(missing.some((m) => m.startsWith(otlpWarning)), missing.join('\n')).toBe(true);
    if (runtime !== 'bun') expect(missing.some((m) => m.startsWith(wsWarning)), missing.join('\n')).toBe(true);
    expectNoSecret(result.stdout + result.stderr);
  });
});

describe('with the packages installed (this repository)', () => {
  it('doctor finds the OTLP exporter and reports no missing package', () => {
    const main = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
    const result = spawnSync(process.execPath, [...(runtime === 'deno' ? ['run', '-A'] : []), main, 'doctor', '--json'], {
      cwd: ROOT,
      env: cleanEnv({ ...OTLP, NEMO_RELAY_HOOKS_OUTPUTS: 'off' }),
      encoding: 'utf8',
    });
    const report = JSON.parse(result.stdout) as { problems: { code: string }[]; exporters: { format: string }[] };
    expect(report.exporters.map((e) => e.format)).toEqual(['otlp']);
    expect(report.problems.filter((p) => p.code === 'package.missing')).toEqual([]);
  });
});
