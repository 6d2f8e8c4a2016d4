// The served viewer and the compare page in a real browser (headless
// Chromium): the index of a folder's sessions, a new session and new ATOF
// lines arriving while the pages are open (no reload: a value set on the
// window survives), ticking two sessions to compare them, the compare page's
// keyboard and detail pane, rollups in the timeline, no console errors and
// no request outside the server.
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, launchChromium } from '../support/browser.ts';
import { cli, EXAMPLES, tempDir } from '../cli/support.ts';
import { serve, type Served } from '../cli/serve-support.ts';

const chromium = findChromium();
if (chromium === undefined) console.log('skipping the served viewer browser tests: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

type Line = { hook: string; payload: Record<string, unknown> };

function record(edit: (stream: Line[]) => Line[]): string {
  const dir = tempDir('nrh-serve-run-');
  const lines = readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Line);
  writeFileSync(path.join(dir, 'run.hooks.jsonl'), `${edit(lines).map((line) => JSON.stringify(line)).join('\n')}\n`);
  expect(cli(['replay', path.join(dir, 'run.hooks.jsonl'), '--out', dir, '--quiet']).code).toBe(0);
  return dir;
}

/** The compare page's pairs the browser draws (displayed, with a height), by `data-i`. */
function drawnPairs(page: Page): Promise<(string | null)[]> {
  return page.evaluate(`[...document.querySelectorAll('.pair[data-i]')]
    .filter((pair) => getComputedStyle(pair).display !== 'none' && pair.getBoundingClientRect().height > 0)
    .map((pair) => pair.getAttribute('data-i'))`);
}

describe.skipIf(chromium === undefined)('the served viewer and the compare page in Chromium', () => {
  let context: BrowserContext;
  let server: Served;
  let folder: string;
  let original: string;
  let changed: string;
  const consoleErrors: string[] = [];
  const foreign: string[] = [];
  /** The servers this test started: the only origins a page may ask. */
  const origins: string[] = [];

  beforeAll(async () => {
    original = record((stream) => stream);
    changed = record((stream) => stream.map((line) => (line.hook === 'post_tool_call' && line.payload.tool_call_id === 'call_read_1' ? { ...line, payload: { ...line.payload, result: 'export const parseDate = (s: string) => new Date(`${s}Z`);\n' } } : line)));
    folder = tempDir('nrh-served-');
    copyFileSync(path.join(original, 'atif', 'run-atif-demo-session-7f3a.json'), path.join(folder, 'before.json'));
    server = await serve([folder, '--port', '0']);
    origins.push(server.url);
    context = await launchChromium(chromium!);
    context.on('request', (request) => {
      if (!origins.some((origin) => request.url().startsWith(origin)) && !request.url().startsWith('file://')) foreign.push(request.url());
    });
    context.on('page', (page) => page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text())));
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    if (server) expect((await server.stop()).code).toBe(0);
  });

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    await page.goto(url);
    await page.waitForSelector('html[data-ready="1"]');
    return page;
  }

  it('lists the sessions, shows new ones and new lines live, and compares two ticked sessions', async () => {
    const index = await open(server.url);
    await index.evaluate('window.marker = "no reload"');
    await expect.poll(() => index.locator('tbody tr').count()).toBe(1);
    const row = index.locator('tbody tr').first();
    expect(await row.locator('a').textContent()).toBe('session demo-session-7f3a');
    expect(await row.textContent()).toContain('6,654 in (4,352 cached) / 290 out');
    await expect.poll(() => index.locator('#live').textContent()).toBe('live');

    // A second run lands in the folder while the index is open.
    copyFileSync(path.join(changed, 'atif', 'run-atif-demo-session-7f3a.json'), path.join(folder, 'after.json'));
    await expect.poll(() => index.locator('tbody tr').count(), { timeout: 15_000 }).toBe(2);
    expect(await index.locator('tbody tr.new').count()).toBe(1);
    expect(await index.evaluate('window.marker')).toBe('no reload');

    // An ATOF file written line by line: its session appears, then grows in its open timeline.
    const atof = readFileSync(path.join(original, 'atof', 'run-atof.jsonl'), 'utf8').trimEnd().split('\n');
    const cut = atof.findIndex((line) => line.includes('"call_term_3"'));
    writeFileSync(path.join(folder, 'live.jsonl'), `${atof.slice(0, cut).join('\n')}\n`);
    await expect.poll(() => index.locator('tbody tr').count(), { timeout: 15_000 }).toBe(3);
    const liveRow = index.locator('tbody tr', { hasText: 'ATOF' });
    const timelineUrl = await liveRow.locator('a').getAttribute('href');
    const timeline = await open(new URL(timelineUrl!, server.url).href);
    await timeline.evaluate('window.marker = "no reload"');
    await timeline.waitForSelector('html[data-live="1"]');
    expect(await timeline.locator('.row.k-tool', { hasText: 'tool terminal' }).count()).toBe(0);
    await timeline.locator('.row.k-llm').first().click();
    appendFileSync(path.join(folder, 'live.jsonl'), `${atof.slice(cut).join('\n')}\n`);
    await expect.poll(() => timeline.locator('.row.k-tool', { hasText: 'tool terminal' }).count(), { timeout: 15_000 }).toBe(1);
    await timeline.waitForSelector('html[data-ready="1"]');
    expect(await timeline.evaluate('window.marker')).toBe('no reload');
    expect(await timeline.evaluate('window.nrhUpdates')).toBeGreaterThanOrEqual(1);
    // The selection survived the update; the session row now rolls up the whole run.
    expect(await timeline.locator('.row.selected .title').textContent()).toMatch(/^LLM /);
    expect(await timeline.locator('.row.k-session .tok').textContent()).toBe('Σ 6,654 in (4,352 cached) / 290 out');
    await timeline.locator('.row.k-session').click();
    expect(await timeline.locator('[data-section="Rollup"]').textContent()).toContain('prompt tokens5,972 own · 6,654 total');
    await timeline.close();

    // Tick the two ATIF runs with the keyboard and compare them.
    await index.locator('h1').click();
    const keys = await index.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
    const before = keys.findIndex((key) => key!.includes('before.json'));
    const after = keys.findIndex((key) => key!.includes('after.json'));
    for (let i = 0; i < before; i++) await index.keyboard.press('j');
    await index.keyboard.press('x');
    for (let i = 0; i < Math.abs(after - before); i++) await index.keyboard.press(after > before ? 'j' : 'k');
    await index.keyboard.press('x');
    expect(await index.locator('#compare').textContent()).toBe('Compare selected (2)');
    await Promise.all([index.waitForURL(/\/compare\?/), index.keyboard.press('c')]);
    await index.waitForSelector('html[data-ready="1"]');
    expect(await index.locator('#verdict').textContent()).toBe('different: 1 changed, 0 only in a, 0 only in b, 9 the same');
    expect(await index.locator('.pair.s-changed .diffs').textContent()).toContain('read_file result:');
    // The served compare page is the same page: "Differences only" leaves the one changed pair drawn.
    await index.check('#diff');
    expect(await drawnPairs(index)).toEqual([await index.locator('.pair.s-changed').getAttribute('data-i')]);
    await index.close();
  });

  it('the compare page from compare --html: pairs, differences side by side, keyboard, search, totals, offline', async () => {
    const target = path.join(folder, '..', 'compare.html');
    const result = cli(['compare', path.join(original, 'atif', 'run-atif-demo-session-7f3a.json'), path.join(changed, 'atof', 'run-atof.jsonl'), '--html', target]);
    expect(result.code).toBe(1);
    const page = await open(pathToFileURL(target).href);
    expect(await page.locator('.pair[data-i]').count()).toBe(10);
    // n jumps to the next difference and opens it: both sides and the difference.
    await page.locator('h1').click();
    await page.keyboard.press('n');
    expect(await page.locator('.pair.selected').getAttribute('data-status')).toBe('changed');
    const diff = page.locator('#detail [data-section="Differences"]');
    expect(await diff.locator('b').textContent()).toBe('read_file result');
    expect(await diff.locator('pre').allTextContents()).toEqual([
      JSON.stringify('export function parseDate(text: string): Date {\n  return new Date(text);\n}\n', null, 2),
      JSON.stringify('export const parseDate = (s: string) => new Date(`${s}Z`);\n', null, 2),
    ]);
    expect(await page.locator('#detail [data-run="a"] h3').textContent()).toBe('a: LLM gpt-4o-2024-08-06');
    expect(await page.locator('#detail [data-run="b"] h3').textContent()).toMatch(/^b: LLM/);
    await page.keyboard.press('Escape');
    expect(await page.locator('#detail').isVisible()).toBe(false);
    // Differences only; then search; j/k move.
    await page.check('#diff');
    expect(await page.locator('.pair[data-i]:not(.hidden)').count()).toBe(1);
    // Drawn, not only counted: the pairs the filter leaves out take no room on the page.
    expect(await drawnPairs(page)).toEqual(await page.locator('.pair[data-i]:not(.hidden)').evaluateAll((pairs) => pairs.map((pair) => pair.getAttribute('data-i'))));
    await page.uncheck('#diff');
    expect((await drawnPairs(page)).length).toBe(10);
    await page.keyboard.press('/');
    await page.keyboard.type('delegate_task');
    // The step that called it (its title on both sides) and the steps whose input carries it: details are searched too.
    await expect.poll(() => page.locator('.pair[data-i]:not(.hidden)').count()).toBeLessThan(10);
    expect(await drawnPairs(page)).toEqual(await page.locator('.pair[data-i]:not(.hidden)').evaluateAll((pairs) => pairs.map((pair) => pair.getAttribute('data-i'))));
    expect(await page.locator('.pair.hit .title', { hasText: '→ delegate_task' }).count()).toBe(2);
    await page.keyboard.press('Enter');
    expect(await page.locator('.pair.selected').getAttribute('data-i')).toBe(await page.locator('.pair[data-i]:not(.hidden)').first().getAttribute('data-i'));
    await page.keyboard.press('j');
    expect(await page.locator('.pair.selected').getAttribute('data-i')).toBe(await page.locator('.pair[data-i]:not(.hidden)').nth(1).getAttribute('data-i'));
    expect(await page.locator('#totals tr[data-figure="prompt tokens"]').textContent()).toBe('prompt tokens6,6546,654±0');
    await page.close();
  });

  it('serves a folder of 5,000 trajectory files: the server pages the index 200 rows at a time and filters all of them; the index follows a new one', async () => {
    const many = tempDir('nrh-served-many-');
    const t0 = Date.parse('2026-01-01T10:00:00Z');
    const trajectory = (i: number) => ({
      schema_version: 'ATIF-v1.6',
      session_id: `s${i}`,
      agent: { name: 'bulk', version: '1' },
      steps: [
        { step_id: 1, source: 'user', message: `question ${i}`, timestamp: new Date(t0 + i * 1000).toISOString() },
        { step_id: 2, source: 'agent', model_name: 'm', message: `answer ${i}`, timestamp: new Date(t0 + i * 1000 + 500).toISOString(), metrics: { prompt_tokens: 10, completion_tokens: i % 7, cost_usd: 0.001 } },
      ],
    });
    for (let i = 0; i < 5000; i++) writeFileSync(path.join(many, `run-${String(i).padStart(4, '0')}.json`), JSON.stringify(trajectory(i)));
    const bulk = await serve([many, '--port', '0']);
    origins.push(bulk.url);
    try {
      const page = await context.newPage();
      page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
      const started = Date.now();
      await page.goto(bulk.url);
      await page.waitForSelector('html[data-ready="1"]');
      console.log(`served index of 5,000 sessions ready in ${Date.now() - started} ms`);
      expect(await page.locator('tbody tr').count()).toBe(200);
      expect(await page.locator('#count').textContent()).toBe('5000 of 5000 sessions');
      await page.locator('#more').click();
      await expect.poll(() => page.locator('tbody tr').count()).toBe(400);
      await page.fill('#q', 'session s4321');
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('tbody tr').textContent()).toContain('10 in / 2 out');
      expect(await page.locator('tbody tr td').nth(6).textContent()).toBe('$0.001');
      await page.fill('#q', '');
      await page.evaluate('window.marker = 1');
      writeFileSync(path.join(many, 'run-5000.json'), JSON.stringify(trajectory(5000)));
      await expect.poll(() => page.locator('#count').textContent(), { timeout: 20_000 }).toBe('5001 of 5001 sessions');
      expect(await page.evaluate('window.marker')).toBe(1);
      await Promise.all([page.waitForURL(/\/session\?/), page.locator('tbody tr.new a').click()]);
      await page.waitForSelector('html[data-ready="1"]');
      expect(await page.locator('h2').first().textContent()).toContain('session s5000');
      await page.close();
    } finally {
      expect((await bulk.stop()).code).toBe(0);
    }
  });

  it('logged no console error and asked nothing of any other origin', () => {
    expect(consoleErrors).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
