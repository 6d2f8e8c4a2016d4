/**
 * Reads the relative imports of every source file (as text, the way the
 * compiler sees specifiers), split into static runtime, type-only and
 * dynamic imports, for the layering rules in `layers.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ImportEdge {
  from: string;
  to: string;
  kind: 'runtime' | 'type' | 'dynamic';
}

const STATIC = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path.relative(root, full));
    }
  };
  for (const dir of dirs) if (fs.existsSync(path.join(root, dir))) walk(path.join(root, dir));
  return out.sort();
}

/** Strips comments so that an example inside a docblock is not an import. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

export function importEdges(root: string, files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = code(fs.readFileSync(path.join(root, file), 'utf8'));
    const to = (spec: string) => path.normalize(path.join(path.dirname(file), spec));
    for (const m of text.matchAll(STATIC)) {
      const typeOnly = Boolean(m[2]) || /^\s*import\s+type\b/.test(m[0]) || /^\s*export\s+type\b/.test(m[0]);
      edges.push({ from: file, to: to(m[3]!), kind: typeOnly ? 'type' : 'runtime' });
    }
    for (const m of text.matchAll(DYNAMIC)) edges.push({ from: file, to: to(m[1]!), kind: 'dynamic' });
  }
  return edges;
}

/** Strongly connected components of more than one file (or a self-import), over the given edges. */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const e of edges) {
    if (!graph.has(e.from)) graph.set(e.from, []);
    graph.get(e.from)!.push(e.to);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}
