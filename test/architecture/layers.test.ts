/**
 * The house's directions, checked on every run: each layer imports only the
 * layers beneath it, `native/` is reached only through `backends/select.ts`
 * (dynamically, so the binding loads only when chosen) and reaches `src/`
 * only through `backends/native-surface.ts`, and no two files import each other at run
 * time or through types.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, importEdges, sourceFiles, type ImportEdge } from './imports.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = sourceFiles(ROOT, ['src', 'native']);
const EDGES = importEdges(ROOT, FILES);

function layerOf(file: string): string {
  if (file.startsWith('native/')) return 'native';
  const [, top] = file.split('/');
  return top!.replace(/\.ts$/, '');
}

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  shared: [],
  hooks: ['shared'],
  formats: ['shared'],
  components: ['shared', 'formats'],
  relay: ['shared', 'formats'],
  export: ['shared', 'formats', 'relay', 'components'],
  backends: ['shared', 'formats', 'relay', 'export', 'components'],
  plugin: ['shared', 'hooks', 'formats', 'relay', 'export', 'backends', 'components'],
  'hook-log': ['shared', 'hooks'],
  testing: ['shared', 'formats', 'relay'],
  demo: ['shared', 'hooks'],
  adapters: ['shared', 'hooks', 'formats'],
};

function violations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (from === to) continue;
    if (to === 'native') continue; // checked on its own below
    if (from === 'native') continue;
    const allowed = ALLOWED[from];
    if (allowed && !allowed.includes(to)) out.push(`${e.from} -> ${e.to} (${from} may import ${allowed.join(', ') || 'nothing of ours'})`);
  }
  return out;
}

describe('layers', () => {
  it('finds the source files it checks', () => {
    expect(FILES.length).toBeGreaterThan(50);
    expect(EDGES.length).toBeGreaterThan(100);
  });

  it('each layer imports only the layers beneath it', () => {
    expect(violations(EDGES)).toEqual([]);
  });

  it('the checker sees a layer imported against the direction', () => {
    const planted: ImportEdge = { from: 'src/formats/atof/types.ts', to: 'src/relay/contract.ts', kind: 'type' };
    expect(violations([planted])).toHaveLength(1);
  });

  it('only backends/select.ts imports native/, and only dynamically', () => {
    const intoNative = EDGES.filter((e) => layerOf(e.to) === 'native' && layerOf(e.from) !== 'native');
    expect(intoNative.map((e) => `${e.from} (${e.kind})`)).toEqual(['src/backends/select.ts (dynamic)']);
  });

  it('code outside src/hooks reaches the hooks at run time only through src/hooks/index.ts', () => {
    // The build bundles src/hooks/index.ts into one module (a light ./hooks entry); a runtime import of another
    // hooks file would load a second copy of the registry and its error classes.
    const deep = EDGES.filter((e) => e.kind !== 'type' && e.to.startsWith('src/hooks/') && !e.from.startsWith('src/hooks/') && e.to !== 'src/hooks/index.ts');
    expect(deep.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('no file imports the nemo-relay-node packages: native/ loads the binding through createRequire, when chosen', () => {
    // A static or dynamic import would load the binding (or fail) whether or not native was chosen.
    const importing = FILES.filter((file) => /(?:\bfrom\s+|\bimport\s*\(\s*)['"]nemo-relay-node/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
    expect(importing).toEqual([]);
    expect(FILES.filter((file) => file.startsWith('native/') && fs.readFileSync(path.join(ROOT, file), 'utf8').includes('createRequire'))).not.toEqual([]);
  });

  it('native/ reaches src/ only through backends/native-surface.ts', () => {
    const out = EDGES.filter((e) => e.from.startsWith('native/') && !e.to.startsWith('native/'));
    expect(out.length).toBeGreaterThan(0);
    expect([...new Set(out.map((e) => e.to))]).toEqual(['src/backends/native-surface.ts']);
  });

  it('no import cycles, at run time or through types', () => {
    expect(cycles(EDGES.filter((e) => e.kind !== 'dynamic'))).toEqual([]);
    expect(cycles([
      { from: 'a.ts', to: 'b.ts', kind: 'runtime' },
      { from: 'b.ts', to: 'a.ts', kind: 'type' },
    ])).toHaveLength(1);
  });
});
