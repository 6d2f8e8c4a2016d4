// What the built entries load when they are imported (.ci/bundle.ts): the
// main entry and `./hooks` reach their code through static imports only, and
// none of those files loads `node:fs`, `node:path` or `node:url` at import
// (the bundle's stand-ins load them at their first use; on Bun and Deno
// loading them was most of the entry's import). The consumer and example
// tests run the same files and write through those stand-ins.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every file `entry` loads through static imports (itself included), and the bare specifiers they import. */
function staticGraph(entry: string): { files: string[]; bare: Set<string> } {
  const files: string[] = [];
  const bare = new Set<string>();
  const queue = [path.join(root, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.includes(file)) continue;
    files.push(file);
    const text = readFileSync(file, 'utf8');
    // Static forms only: `import ... from "x"`, `export ... from "x"`, `import "x"` (a dynamic `import("x")` has a parenthesis).
    for (const match of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"([^"]+)"|^import\s*"([^"]+)"/gm)) {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
      else bare.add(specifier);
    }
  }
  return { files, bare };
}

describe('the bundled entries', () => {
  for (const entry of ['dist/src/index.js', 'dist/src/hooks/index.js']) {
    it(`${entry} loads no node:fs, node:path or node:url at import`, () => {
      const { files, bare } = staticGraph(entry);
      expect(files.length).toBeGreaterThan(0);
      expect([...bare].filter((specifier) => /^(node:)?(fs|path|url)$/.test(specifier))).toEqual([]);
    });
  }

  it('the stand-ins answer as the builtins do once the entry is imported', async () => {
    const { createHookRecorder, HookRegistry } = (await import(pathToFileURL(path.join(root, 'dist/src/index.js')).href)) as typeof import('../../src/index.ts');
    // The recorder resolves its path (node:path), creates its folder and opens its file without following links (node:fs, fs.constants).
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nrh-bundle-')), 'nested', 'hooks.jsonl');
    const hooks = new HookRegistry();
    const recorder = createHookRecorder(hooks, file);
    hooks.emit('on_session_start', { session_id: 's1' });
    recorder.close();
    expect(recorder.path).toBe(file);
    expect(readFileSync(file, 'utf8')).toContain('"s1"');
  });

  it('ask for no builtin while the entries are imported (a top-level read would load it again)', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'nrh-bundle-asked-'));
    const script = path.join(folder, 'asked.mjs');
    const entry = (file: string) => JSON.stringify(pathToFileURL(path.join(root, file)).href);
    writeFileSync(
      script,
      [
        'const asked = [];',
        'const original = process.getBuiltinModule;',
        'process.getBuiltinModule = (name) => { asked.push(name); return original.call(process, name); };',
        `await import(${entry('dist/src/hooks/index.js')});`,
        `await import(${entry('dist/src/index.js')});`,
        'console.log(JSON.stringify(asked));',
      ].join('\n'),
    );
    const args = process.versions.deno ? ['run', '-A', script] : [script];
    const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.trim().split('\n').pop()!)).toEqual([]);
  });

  it('load the builtins with createRequire where the runtime has no process.getBuiltinModule (Node before 20.16)', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'nrh-bundle-fallback-'));
    const file = path.join(folder, 'nested', 'hooks.jsonl');
    const script = path.join(folder, 'fallback.mjs');
    writeFileSync(
      script,
      [
        'process.getBuiltinModule = undefined;',
        `const { createHookRecorder, HookRegistry } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist/src/index.js')).href)});`,
        'const hooks = new HookRegistry();',
        `const recorder = createHookRecorder(hooks, ${JSON.stringify(file)});`,
        "hooks.emit('on_session_start', { session_id: 's2' });",
        'recorder.close();',
      ].join('\n'),
    );
    const args = process.versions.deno ? ['run', '-A', script] : [script];
    const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('"s2"');
  });
});
