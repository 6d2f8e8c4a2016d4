// What npm and JSR would publish: the library, its license, declaration maps
// back to the shipped sources, the examples the README's commands use, and
// nothing of the tests, benchmarks or CI.
// In the slow suite (Node): seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;

describe('the published package', () => {
  it('carries its license, repository, homepage and bugs fields, and node10 type paths', () => {
    expect(manifest.license).toBe('Apache-2.0');
    expect(readFileSync(path.join(root, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(manifest.repository).toMatchObject({ type: 'git' });
    expect(typeof manifest.homepage).toBe('string');
    expect(manifest.bugs).toHaveProperty('url');
    expect(manifest.types).toBe('./dist/src/index.d.ts');
    const versions = (manifest.typesVersions as Record<string, Record<string, string[]>>)['*']!;
    for (const [subpath, [target]] of Object.entries(versions)) {
      const exported = (manifest.exports as Record<string, { types: string }>)[`./${subpath}`]!;
      expect(target, subpath).toBe(exported.types);
    }
  });

  it('packs the library, declaration maps, LICENSE and the README\'s examples, and no tests, bench or CI', () => {
    const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/src/index.js');
    expect(files).toContain('dist/src/index.d.ts.map');
    expect(files).toContain('src/index.ts');
    // The native adapter is loaded by URL, not imported: nothing else would pull it in.
    expect(files).toContain('dist/native/index.js');
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const [, example] of readme.matchAll(/\b(examples\/[\w./-]+\.(?:jsonl|ts))\b/g)) expect(files, example).toContain(example);
    expect(files.filter((file) => /^(test|bench|\.ci|\.tmp)\//.test(file) || file === 'package-lock.json')).toEqual([]);
  });

  it('gives JSR the library only', () => {
    const deno = JSON.parse(readFileSync(path.join(root, 'deno.json'), 'utf8')) as { publish: { include: string[]; exclude: string[] } };
    expect(deno.publish.include).toEqual(expect.arrayContaining(['src/**/*.ts', 'native/**/*.ts', 'LICENSE', 'README.md']));
    expect(deno.publish.exclude).toEqual(expect.arrayContaining(['test/', 'bench/', '.ci/', 'package-lock.json']));
    expect(existsSync(path.join(root, 'dist', 'src', 'index.d.ts.map'))).toBe(true);
  });
});
