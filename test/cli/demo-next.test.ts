// `demo` ends with the commands to run next. A user who installed the package
// and ran the demo on Bun (`bunx --bun nemo-relay-hooks demo`) or Deno
// (`deno run -A npm:nemo-relay-hooks demo`) was told to run `npx ...`, which a
// Bun or Deno machine may not have. The lines name the runner of the runtime
// that ran, as docs/cli/README.md writes it, and each runs as printed, through
// a shell, from the folder the demo ran in (an installed project).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInvocation } from '../../src/cli/invocation.ts';
import { outputFiles, ROOT, runtime, tempDir } from './support.ts';

/** A project where `npm install nemo-relay-hooks` put the package: its bin linked, a package.json that names it. */
function installedProject(): string {
  const dir = tempDir('nrh-demo-next-');
  const modules = path.join(dir, 'node_modules');
  const pkg = path.join(modules, 'nemo-relay-hooks');
  mkdirSync(pkg, { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(pkg, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  symlinkSync(realpathSync(path.join(ROOT, 'node_modules', 'smol-toml')), path.join(modules, 'smol-toml'), 'dir');
  mkdirSync(path.join(modules, '.bin'));
  symlinkSync('../nemo-relay-hooks/dist/src/cli/main.js', path.join(modules, '.bin', 'nemo-relay-hooks'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module', dependencies: { 'nemo-relay-hooks': '0.1.0' } }));
  return dir;
}

/** `line` through a shell from `cwd`, with the checkout's bun, deno and npx on PATH as a user's install would have them. */
function sh(line: string, cwd: string) {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', PATH: `${path.join(ROOT, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}` };
  for (const key of Object.keys(env)) if (key.startsWith('NEMO_RELAY_HOOKS_') || key.startsWith('HERMES_NEMO_RELAY_') || env[key] === undefined) delete env[key];
  return spawnSync('/bin/sh', ['-c', line], { cwd, env: env as NodeJS.ProcessEnv, encoding: 'utf8', timeout: 120_000 });
}

describe('cliInvocation: the command line that runs the CLI again', () => {
  it('is the runner docs/cli/README.md names for an installed package on each runtime', () => {
    const bin = '/home/me/agent/node_modules/.bin/nemo-relay-hooks';
    expect(cliInvocation('node', bin, '/home/me/agent', '/usr/bin/node')).toBe('npx nemo-relay-hooks');
    expect(cliInvocation('bun', bin, '/home/me/agent', '/usr/bin/bun')).toBe('bunx --bun nemo-relay-hooks');
    expect(cliInvocation('deno', '/home/me/agent/node_modules/nemo-relay-hooks/dist/src/cli/main.js', '/home/me/agent', '/usr/bin/deno')).toBe('deno run -A npm:nemo-relay-hooks');
  });

  it("in a checkout, the checkout's own runtime through npx, else the executable that ran", () => {
    const entry = '/src/nrh/src/cli/main.ts';
    expect(cliInvocation('bun', entry, '/src/nrh', '/usr/bin/bun')).toBe('npx bun src/cli/main.ts');
    expect(cliInvocation('deno', entry, '/src/nrh', '/usr/bin/deno')).toBe('npx deno run -A src/cli/main.ts');
    expect(cliInvocation('bun', entry, '/tmp/elsewhere', '/usr/bin/bun')).toBe('/usr/bin/bun /src/nrh/src/cli/main.ts');
    expect(cliInvocation('deno', entry, '/tmp/elsewhere', '/usr/bin/deno')).toBe('/usr/bin/deno run -A /src/nrh/src/cli/main.ts');
  });
});

describe(`demo in an installed project on ${runtime}`, () => {
  const runner = { node: 'npx nemo-relay-hooks', bun: 'bunx --bun nemo-relay-hooks', deno: 'deno run -A npm:nemo-relay-hooks' }[runtime];

  it(`started as docs/cli/README.md starts it (${runner}), prints next steps in the same form that run as printed`, () => {
    const cwd = installedProject();
    const demo = sh(`${runner} demo --fast --backend memory --out out`, cwd);
    expect(demo.status, demo.stderr).toBe(0);
    const next = demo.stdout.slice(demo.stdout.indexOf('Next:')).split('\n').slice(1).filter((line) => line.trim() !== '');
    expect(next).toHaveLength(3);
    for (const line of next) {
      expect(line).toMatch(new RegExp(`^ {2}${runner.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (view|replay|validate) out/`));
      const run = sh(line.trim(), cwd);
      expect(run.status, `${line}\n${run.stdout}\n${run.stderr}`).toBe(0);
    }
    expect(outputFiles(path.join(cwd, 'out', 'replayed')).length).toBeGreaterThan(0);
  }, 180_000);
});
