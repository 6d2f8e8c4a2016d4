// A project that installed nemo-relay-hooks alone (no nemo-relay-node), as on
// Bun or Deno, where the in-memory relay is the default: doctor's native row
// says what runs instead, as its backend row does. With
// NEMO_RELAY_HOOKS_BACKEND=native the backend is off (native was asked for and
// is missing), so the row may not say the in-memory relay is used.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runtime, tempDir } from './support.ts';

function installWithoutNative(): string {
  const dir = tempDir('nrh-no-native-');
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, 'nemo-relay-hooks'), { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(modules, 'nemo-relay-hooks', 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(modules, 'nemo-relay-hooks', 'package.json'));
  symlinkSync(realpathSync(path.join(ROOT, 'node_modules', 'smol-toml')), path.join(modules, 'smol-toml'), 'dir');
  // The project's own manifest, as npm writes it (Deno resolves a node_modules project's packages through it).
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module', dependencies: { 'nemo-relay-hooks': '0.1.0' } }));
  return dir;
}

/** The installed command's doctor, on the runtime running the suite, from the project's folder. */
function doctor(dir: string, backend: string | undefined): { status: number | null; stdout: string; stderr: string } {
  const main = path.join(dir, 'node_modules', 'nemo-relay-hooks', 'dist', 'src', 'cli', 'main.js');
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', NEMO_RELAY_HOOKS_BACKEND: backend };
  for (const key of Object.keys(env)) if (key.startsWith('HERMES_NEMO_RELAY_') || env[key] === undefined) delete env[key];
  const args = runtime === 'deno' ? ['run', '-A', main, 'doctor'] : [main, 'doctor'];
  // Deno's spawn hands the parent's environment on whatever `env` leaves out: a shell unsets the backend first.
  const result =
    backend === undefined && runtime === 'deno'
      ? spawnSync('/bin/sh', ['-c', 'unset NEMO_RELAY_HOOKS_BACKEND; exec "$0" "$@"', process.execPath, ...args], { cwd: dir, env: env as NodeJS.ProcessEnv, encoding: 'utf8' })
      : spawnSync(process.execPath, args, { cwd: dir, env: env as NodeJS.ProcessEnv, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const row = (text: string, name: string) => new RegExp(`^  ${name} +(.*)$`, 'm').exec(text)?.[1];

describe(`doctor where nemo-relay-node is not installed (${runtime})`, () => {
  const dir = installWithoutNative();

  it('under auto: the backend is memory, and the native row says the in-memory relay is used', () => {
    const result = doctor(dir, undefined);
    expect(result.status, result.stderr).toBe(0);
    expect(row(result.stdout, 'backend')).toMatch(/^memory: auto on /);
    expect(row(result.stdout, 'native')).toBe('nemo-relay-node not installed (optional peer dependency; the in-memory relay is used)');
  });

  it('with NEMO_RELAY_HOOKS_BACKEND=native: the backend is off, and the native row does not say memory is used', () => {
    const result = doctor(dir, 'native');
    expect(result.status).toBe(1);
    expect(row(result.stdout, 'backend')).toMatch(/^off: NEMO_RELAY_HOOKS_BACKEND=native: native relay requested but unavailable on .*telemetry is OFF/);
    expect(row(result.stdout, 'native')).toBe('nemo-relay-node not installed (optional peer dependency)');
    expect(result.stdout).toMatch(/error backend\.off \(NEMO_RELAY_HOOKS_BACKEND\): telemetry would be off/);
  });
});
