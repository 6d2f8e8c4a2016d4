// Every TypeScript/JavaScript block in README.md and docs/ is run by a test
// or marked as a fragment (docs/contributing/docs.md has the convention):
// - `<!-- snippet: fragment -->` before the fence: a piece of a program, not run;
// - `<!-- snippet: tested by test/<file>.test.ts -->`: that test runs it (it
//   must exist and read this page);
// - `<!-- snippet: examples/<file> -->`: the block is that file, word for
//   word, and test/package/examples.test.ts runs the file;
// - no marker: run here as written, importing the package by name, from an
//   empty folder, on the runtime running the suite (Node as .mjs, so it must
//   be valid JavaScript; Bun and Deno as .ts): `npm run test:bun` and
//   `npm run test:deno` run it on those.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, ROOT } from '../../.ci/docs.ts';
import { runSnippet, userEnv, type SnippetRuntime } from '../support/doc-snippets.ts';

interface Block {
  page: string;
  line: number;
  code: string;
  marker: string | null;
}

const FENCE = /^```(ts|js|typescript|javascript|mjs|tsx)\s*$/;

/** The TS/JS blocks of a page, with the marker on the line before each fence. */
export function codeBlocks(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: Block[] = [];
  let previous = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      const open = FENCE.test(line);
      let end = i + 1;
      while (end < lines.length && !lines[end]!.startsWith('```')) end++;
      if (open) {
        const marker = /^<!-- snippet: (.+?) -->$/.exec(previous.trim())?.[1] ?? null;
        out.push({ page: path.relative(ROOT, file), line: i + 1, code: lines.slice(i + 1, end).join('\n') + '\n', marker });
      }
      i = end;
      previous = '';
      continue;
    }
    if (line.trim() !== '') previous = line;
  }
  return out;
}

const runtime: SnippetRuntime = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';
const blocks = docPages().flatMap(codeBlocks);
const title = (block: Block) => `${block.page}:${block.line}`;

describe('documentation snippets', () => {
  it('finds the blocks of README.md and docs/', () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const block of blocks) {
      if (block.marker === null) continue;
      expect(block.marker, title(block)).toMatch(/^(fragment(: .+)?|tested by test\/\S+\.test\.ts|examples\/\S+)$/);
    }
  });

  for (const block of blocks.filter((b) => b.marker?.startsWith('tested by '))) {
    it(`${title(block)} is run by ${block.marker!.slice('tested by '.length)}`, () => {
      const test = path.join(ROOT, block.marker!.slice('tested by '.length));
      expect(existsSync(test), `${test} exists`).toBe(true);
      expect(readFileSync(test, 'utf8'), `${test} reads ${block.page}`).toContain(block.page);
    });
  }

  for (const block of blocks.filter((b) => b.marker?.startsWith('examples/'))) {
    it(`${title(block)} is ${block.marker} word for word`, () => {
      expect(block.code.trim()).toBe(readFileSync(path.join(ROOT, block.marker!), 'utf8').trim());
    });
  }

  for (const block of blocks.filter((b) => b.marker === null)) {
    it(`${title(block)} runs as written on ${runtime}`, async () => {
      const run = await runSnippet(block.code, runtime, path.basename(block.page, '.md'), userEnv());
      try {
        expect(run.status, `${title(block)}\n${run.stderr}`).toBe(0);
        expect(run.stderr, title(block)).not.toMatch(/^\w*Error\b/m);
      } finally {
        rmSync(run.cwd, { recursive: true, force: true });
      }
    });
  }
});
