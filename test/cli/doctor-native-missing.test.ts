// A user on Node 20 runs `npm install nemo-relay-hooks nemo-relay-node`: npm
// installs nemo-relay-node but skips its platform package (engines node >=24).
// This builds that install for real (the built package and the real
// nemo-relay-node loader, without the platform package) and checks that
// doctor names the cause and the fix instead of saying all is fine.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { platformPackageName } from '../../native/binding.ts';
import { expectNoStack, ROOT, runtime, tempDir } from './support.ts';

function installWithoutPlatformPackage(): string {
  const dir = tempDir('nrh-skipped-platform-');
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, 'nemo-relay-hooks'), { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(modules, 'nemo-relay-hooks', 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(modules, 'nemo-relay-hooks', 'package.json'));
  symlinkSync(realpathSync(path.join(ROOT, 'node_modules', 'smol-toml')), path.join(modules, 'smol-toml'), 'dir');
  cpSync(realpathSync(path.join(ROOT, 'node_modules', 'nemo-relay-node')), path.join(modules, 'nemo-relay-node'), { recursive: true });
  return dir;
}

function doctor(dir: string, args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('HERMES_NEMO_RELAY_') || key === 'NEMO_RELAY_HOOKS_BACKEND') delete env[key];
  const main = path.join(dir, 'node_modules', 'nemo-relay-hooks', 'dist', 'src', 'cli', 'main.js');
  return spawnSync(process.execPath, [main, 'doctor', ...args], { cwd: dir, env: env as NodeJS.ProcessEnv, encoding: 'utf8' });
}

const platformPackage = platformPackageName();
const skip = runtime !== 'node' || platformPackage === undefined;
if (skip) console.log(`skipping the skipped-platform-package doctor test: ${runtime !== 'node' ? `auto picks memory on ${runtime} anyway` : 'no napi platform package for this OS'}`);

describe.skipIf(skip)('doctor when npm skipped the native platform package', () => {
  it('warns with the cause and the install command, in one line, never "everything looks fine"', () => {
    const dir = installWithoutPlatformPackage();
    const text = doctor(dir, []);
    expect(text.status, text.stderr).toBe(0);
    expectNoStack(text.stdout);
    expect(text.stdout).not.toContain('Require stack');
    expect(text.stdout).not.toContain('everything looks fine');
    expect(text.stdout).toMatch(/^  backend +memory: auto on node: native relay unavailable \(nemo-relay-node has no prebuilt binary/m);
    expect(text.stdout).toContain(`npm install ${platformPackage}@0.9.2`);
    expect(text.stdout).toMatch(/warning backend\.native_unavailable: nemo-relay-node 0\.9\.2 is installed but did not load/);

    const json = doctor(dir, ['--json']);
    const report = JSON.parse(json.stdout) as { ok: boolean; backend: { kind: string; reason: string }; native: { installed: string; loaded: boolean }; problems: { code: string; message: string }[]; warnings: number };
    expect(report.ok).toBe(true);
    expect(report.backend.kind).toBe('memory');
    expect(report.backend.reason).not.toContain('\n');
    expect(report.native).toEqual({ installed: '0.9.2', loaded: false });
    const warning = report.problems.find((problem) => problem.code === 'backend.native_unavailable');
    expect(warning?.message).toContain(`"npm install ${platformPackage}@0.9.2"`);
    if (Number(process.versions.node.split('.')[0]) < 24) expect(warning?.message).toContain('declares engines node >=24.0.0');
  });
});
