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
