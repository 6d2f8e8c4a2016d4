// A 100 MB ATOF file (tens of thousands of sessions, four open at a time)
// in the viewer: `view --serve` in Chromium lists it a page at a time (the
// server filters and pages), follows a session appended to the file, opens
// a session; `view` prints every session and `compare` picks two. Memory is
// asserted against the file's size (the viewer keeps an index of the file,
// not its events); times are printed, and the figures are in bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneSessionAtof, writeBigAtof, type BigAtof } from '../support/big-atof.ts';
import { findChromium, launchChromium } from '../support/browser.ts';
import { cli, command, ROOT, tempDir } from '../cli/support.ts';
import { serve, type Served } from '../cli/serve-support.ts';

const BYTES = 100 * 1024 * 1024;
/**
 * Peak resident memory allowed, as a multiple of the file's size. Holding the
 * file's events (what the viewer did before) took over 5×; the index of
 * its lines and one row a session stay near 2× with the runtime's own ~60 MB.
 */
const MAX_RSS_PER_FILE_BYTE = 3;

const chromium = findChromium();
if (chromium === undefined) console.log('skipping the 100 MB ATOF viewer test: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

function peakBytes(stderr: string): number {
  const peak = Number(/report-memory: maxRSS=(\d+)KiB/.exec(stderr)?.[1]);
  expect(peak, stderr).toBeGreaterThan(0);
  return peak * 1024;
}

describe.skipIf(chromium === undefined)('a 100 MB ATOF file in the viewer', () => {
  let folder: string;
  let file: string;
  let big: BigAtof;
  let context: BrowserContext;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    folder = tempDir('nrh-big-atof-');
    file = path.join(folder, 'agents.atof.jsonl');
    big = writeBigAtof(file, BYTES);
    context = await launchChromium(chromium!);
    context.on('page', (page) => page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text())));
  }, 300_000);

  afterAll(async () => {
    await context?.close();
  });

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    await page.goto(url);
    await page.waitForSelector('html[data-ready="1"]', { timeout: 120_000 });
    return page;
  }

  it('serves it: the index a page at a time, filters on the server, a new session appended live, a session opened', async () => {
    const started = Date.now();
    const server: Served = await serve([folder, '--port', '0', '--report-memory']);
    console.log(`view --serve of ${big.sessions} sessions (${Math.round(big.bytes / 1024 / 1024)} MB): serving after ${Date.now() - started} ms`);
    let stopped = false;
    try {
      const index = await open(server.url);
      expect(await index.locator('tbody tr').count()).toBe(200);
      expect(await index.locator('#count').textContent()).toBe(`${big.sessions} of ${big.sessions} sessions`);
      // Newest first: the last session written heads the list.
      expect(await index.locator('tbody tr a').first().textContent()).toBe(`session s${big.sessions - 1}`);
      await index.locator('#more').click();
      await expect.poll(() => index.locator('tbody tr').count()).toBe(400);
      await index.check('#errors');
      await expect.poll(() => index.locator('#count').textContent()).toBe(`${big.failed} of ${big.sessions} sessions`);
      await index.uncheck('#errors');
      await index.fill('#q', 'session s4321');
      await expect.poll(() => index.locator('#count').textContent()).toBe(`1 of ${big.sessions} sessions`);
      // Two LLM calls of 100 + 4321 % 1000 prompt and 20 + 4321 % 7 completion tokens each.
      expect(await index.locator('tbody tr').textContent()).toContain('2 LLM, 1 tool842 in / 44 out');
      await index.fill('#q', '');
      await expect.poll(() => index.locator('tbody tr').count()).toBe(200);

      // One more session lands at the end of the file while the index is open.
      await index.evaluate('window.marker = "no reload"');
      appendFileSync(file, oneSessionAtof(big.sessions, 's-new'));
      await expect.poll(() => index.locator('#count').textContent(), { timeout: 60_000 }).toBe(`${big.sessions + 1} of ${big.sessions + 1} sessions`);
      expect(await index.evaluate('window.marker')).toBe('no reload');
      expect(await index.locator('tbody tr.new a').textContent()).toBe('session s-new');

      // A session opens as its own timeline (its lines read back from the file).
      await index.fill('#q', 'session s4321');
      await expect.poll(() => index.locator('tbody tr').count()).toBe(1);
      await Promise.all([index.waitForURL(/\/session\?/), index.locator('tbody tr a').click()]);
      await index.waitForSelector('html[data-ready="1"]');
      expect(await index.locator('h2').first().textContent()).toContain('session s4321');
      expect(await index.locator('.row.k-llm').count()).toBe(2);
      expect(await index.locator('.row.k-tool').count()).toBe(1);
      await index.locator('.row.k-tool').click();
      expect(await index.locator('#detail').textContent()).toContain('results for 4321');
      await index.close();

      const how = await server.stop();
      stopped = true;
      expect(how.code).toBe(0);
      const peak = peakBytes(how.stderr);
      console.log(`view --serve peak RSS ${Math.round(peak / 1024 / 1024)} MB for a ${Math.round(big.bytes / 1024 / 1024)} MB file (${(peak / big.bytes).toFixed(2)}×)`);
      expect(peak / big.bytes).toBeLessThan(MAX_RSS_PER_FILE_BYTE);
    } finally {
      if (!stopped) await server.stop();
    }
  }, 600_000);

  it('view prints every session and compare picks two, streaming the file', () => {
    const output = path.join(folder, 'view.txt');
    const descriptor = openSync(output, 'w');
    const { file: runtime, args } = command();
    const started = Date.now();
    const result = spawnSync(runtime, [...args, 'view', file, '--report-memory'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', descriptor, 'pipe'], encoding: 'utf8', timeout: 600_000 });
    closeSync(descriptor);
    console.log(`view of ${big.sessions + 1} sessions printed in ${Date.now() - started} ms (${Math.round(statSync(output).size / 1024 / 1024)} MB of text)`);
    expect(result.status, result.stderr).toBe(0);
    const text = readFileSync(output, 'utf8');
    expect(text.match(/^ +session s\d+ /gm)).toHaveLength(big.sessions);
    expect(text).toContain('session s-new');
    const peak = peakBytes(result.stderr);
    console.log(`view peak RSS ${Math.round(peak / 1024 / 1024)} MB (${(peak / big.bytes).toFixed(2)}× the file)`);
    expect(peak / big.bytes).toBeLessThan(MAX_RSS_PER_FILE_BYTE);

    const compared = cli(['compare', `${file}#s4321`, `${file}#s4322`, '--json'], { timeoutMs: 600_000 });
    expect(compared.code, compared.stderr).toBe(1);
    const report = JSON.parse(compared.stdout) as { totals: { a: { promptTokens: number }; b: { promptTokens: number } } };
    expect([report.totals.a.promptTokens, report.totals.b.promptTokens]).toEqual([842, 844]);
  }, 600_000);

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
