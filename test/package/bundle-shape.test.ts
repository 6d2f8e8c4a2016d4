// What the built entries load when they are imported (.ci/bundle.ts): the
// main entry and `./hooks` reach their code through static imports only, and
// none of those files loads `node:fs`, `node:path` or `node:url` at import
// (the bundle's stand-ins load them at their first use; on Bun and Deno
// loading them was most of the entry's import). The consumer and example
// tests run the same files and write through those stand-ins.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

  it('share one copy of the hooks code between the main entry and ./hooks (one class, one logger)', async () => {
    const main = (await import(pathToFileURL(path.join(root, 'dist/src/index.js')).href)) as typeof import('../../src/index.ts');
    const light = (await import(pathToFileURL(path.join(root, 'dist/src/hooks/index.js')).href)) as typeof import('../../src/hooks/index.ts');
    expect(main.HookRegistry).toBe(light.HookRegistry);
    const registry = new main.HookRegistry();
    expect(registry).toBeInstanceOf(light.HookRegistry);
    let thrown: unknown;
    try {
      registry.on('no_such_hook' as never, () => {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(light.UnknownHookError);
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).name).toBe('UnknownHookError');
    // The logger set through the main entry is the one a registry made from ./hooks reports to.
    const warnings: string[] = [];
    main.setLogger({ warn: (message: string) => warnings.push(message) });
    try {
      const hooks = new light.HookRegistry();
      hooks.on('on_session_start', function failing() {
        throw new Error('boom');
      });
      hooks.emit('on_session_start', { session_id: 's3' });
    } finally {
      main.setLogger(undefined);
    }
    expect(warnings).toEqual(['hook "on_session_start" callback "failing" failed: boom']);
  });

  /** Every `.js` file under dist/. */
  function builtModules(): string[] {
    const files: string[] = [];
    const walk = (folder: string): void => {
      for (const name of readdirSync(folder)) {
        const file = path.join(folder, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (file.endsWith('.js')) files.push(file);
      }
    };
    walk(path.join(root, 'dist'));
    return files;
  }

  it('mark every ES module file as needing no transpiling on Bun (a comment elsewhere)', () => {
    const files = builtModules();
    expect(files.length).toBeGreaterThan(10);
    // After a shebang where there is one (the CLI), as `bun build --target=bun` writes it.
    const unmarked = files.filter((file) => !/^(#![^\n]*\n)?\/\/ @bun\n/.test(readFileSync(file, 'utf8')));
    expect(unmarked).toEqual([]);
  });

  it('pass import.meta.url to createRequire only where webpack rewrites it (a call or a declaration, never an assignment)', () => {
    // webpack 5 rewrites `createRequire(import.meta.url)` called at once (`(...)('smol-toml')`) or kept in a `let`, and left one assigned to a
    // variable (`require ??= createRequire(import.meta.url)`, the builtins' loader) as it was: `Cannot use
    // 'import.meta' outside a module`, a SyntaxError that stopped a host bundled with webpack (target node) at load.
    const assigned = builtModules().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?<!\b(?:let|const|var)\s+[\w$]+\s*)(?:\?\?|\|\||&&)?=\s*[\w$]+\(import\.meta\.url\)(?!\s*\()/g)].map((match) => `${path.relative(root, file)}: ${match[0]}`),
    );
    expect(assigned).toEqual([]);
  });

  it('write every ES module file in ASCII (Bun reads a file marked @bun byte by byte, as Latin-1)', () => {
    // A UTF-8 character in a marked file reaches Bun as one character per byte: the CLI's
    // `✓` printed as mojibake, and the U+FFFD that replaces a NUL in a payload key was
    // written as three characters, not the one native writes.
    const files = builtModules();
    const marked = files.filter((file) => /^(#![^\n]*\n)?\/\/ @bun\n/.test(readFileSync(file, 'utf8')));
    expect(marked.length).toBeGreaterThan(10);
    const withNonAscii = marked.filter((file) => readFileSync(file).some((byte) => byte > 0x7f)).map((file) => path.relative(root, file));
    expect(withNonAscii).toEqual([]);
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
