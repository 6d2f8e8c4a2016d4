// The docs hold together: every relative link of README.md and docs/ points
// at a file that exists (and at a heading it has, for `page.md#anchor`), and
// every page under docs/ is reachable from docs/README.md, so a page a
// branch adds is never an orphan nobody finds.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, ROOT } from '../../.ci/docs.ts';

const pages = docPages();
const LINK = /\[[^\]]*\]\(([^)\s]+)\)/g;

/** The relative links of a page (outside code fences), resolved to files, with their anchors. */
function links(page: string): { target: string; anchor: string | undefined; text: string }[] {
  const out: { target: string; anchor: string | undefined; text: string }[] = [];
  let fenced = false;
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(LINK)) {
      const href = match[1]!;
      if (/^[a-z]+:/i.test(href) || href.startsWith('#')) continue;
      const [file, anchor] = href.split('#') as [string, string | undefined];
      out.push({ target: path.resolve(path.dirname(page), decodeURIComponent(file)), anchor, text: href });
    }
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function anchors(page: string): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync(page, 'utf8').split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    out.add(heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return out;
}

describe('links of README.md and docs/', () => {
  for (const page of pages) {
    it(`${path.relative(ROOT, page)}: every relative link resolves`, () => {
      const broken = links(page)
        .filter(({ target, anchor }) => !existsSync(target) || (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)))
        .map(({ text }) => text);
      expect(broken).toEqual([]);
    });
  }

  it('the installed package holds every file README.md and docs/ link to (a user reads them in node_modules)', () => {
    const shipped = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
    const inPackage = (file: string) => shipped.some((entry) => file === entry || file.startsWith(`${entry}/`));
    const missing: string[] = [];
    for (const page of pages) {
      const from = path.relative(ROOT, page);
      // The contributors' pages describe the repository (its bench/, its tests), which they work in.
      if (from.startsWith('docs/contributing/')) continue;
      for (const { target, text } of links(page)) {
        const file = path.relative(ROOT, target).split(path.sep).join('/');
        // bench/ holds the repository's measurements, not shipped: a link to them is read on the repository's site.
        if (!inPackage(file) && !file.startsWith('bench/')) missing.push(`${from}: ${text}`);
      }
    }
    expect(inPackage('README.md') && inPackage('docs/README.md')).toBe(true);
    expect(missing).toEqual([]);
  });

  it('every page under docs/ is reachable from docs/README.md', () => {
    const seen = new Set<string>();
    const queue = [path.join(ROOT, 'docs', 'README.md')];
    while (queue.length > 0) {
      const page = queue.pop()!;
      if (seen.has(page)) continue;
      seen.add(page);
      for (const { target } of links(page)) if (target.endsWith('.md') && target.startsWith(path.join(ROOT, 'docs')) && existsSync(target)) queue.push(target);
    }
    const orphans = pages.filter((page) => page.startsWith(path.join(ROOT, 'docs')) && !seen.has(page)).map((page) => path.relative(ROOT, page));
    expect(orphans).toEqual([]);
  });
});
