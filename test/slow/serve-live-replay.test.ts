// The served viewer follows a session as an agent writes it: each example
// session's ATOF file is written into the served folder line by line, each
// line in two pieces a little apart (a line half written when the server
// looks), with the session's timeline open in headless Chromium from the
// moment the index lists it. When the last line is in, the live timeline
// must show what `view --html` shows for the finished file (same rows, same
// text, same nesting) and the index row the figures `view --json` gives,
// without the page being reloaded.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, launchChromium } from '../support/browser.ts';
import { cli, EXAMPLES, tempDir } from '../cli/support.ts';
import { serve, type Served } from '../cli/serve-support.ts';

const chromium = findChromium();
if (chromium === undefined) console.log('skipping the live served viewer test: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

const EXAMPLE_LOGS = ['agent-session', 'anthropic-session', 'tool-loop', 'plain-chat'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every row of a timeline page as kind, depth and the text it shows. */
function rowsOf(page: Page): Promise<string[]> {
  return page.locator('.row').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-kind')} ${row.getAttribute('data-depth')} ${(row.querySelector('.label')?.textContent ?? '').replace(/\s+/g, ' ').trim()}`));
}

describe.skipIf(chromium === undefined)('view --serve while an ATOF file is written line by line', () => {
  let context: BrowserContext;
  let server: Served;
  let folder: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    folder = tempDir('nrh-served-live-');
    server = await serve([folder, '--port', '0']);
    context = await launchChromium(chromium!);
    context.on('page', (page) => page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text())));
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    if (server) expect((await server.stop()).code).toBe(0);
  });

  it.each(EXAMPLE_LOGS)('%s: the live timeline ends as view --html of the finished file shows it', async (name) => {
    const replayed = tempDir('nrh-live-replay-');
    expect(cli(['replay', path.join(EXAMPLES, `${name}.hooks.jsonl`), '--out', replayed, '--quiet']).code).toBe(0);
    const finished = path.join(replayed, 'atof', `${name}-atof.jsonl`);
    const lines = readFileSync(finished, 'utf8').trimEnd().split('\n');
    const live = path.join(folder, `${name}.jsonl`);
    writeFileSync(live, '');

    const index = await context.newPage();
    await index.goto(server.url);
    await index.waitForSelector('html[data-ready="1"]');
    const write = async (line: string) => {
      const half = Math.floor(line.length / 2);
      appendFileSync(live, line.slice(0, half));
      await sleep(60);
      appendFileSync(live, `${line.slice(half)}\n`);
      await sleep(60);
    };
    // The session's first lines; the index lists it once the server has looked.
    const opening = 3;
    for (const line of lines.slice(0, opening)) await write(line);
    const link = index.locator('tbody tr', { hasText: `${name}.jsonl` }).locator('a');
    await expect.poll(() => link.count(), { timeout: 15_000 }).toBe(1);
    // Its timeline is open while the rest is written, a half line at a time.
    const timeline = await context.newPage();
    await timeline.goto(new URL((await link.getAttribute('href'))!, server.url).href);
    await timeline.waitForSelector('html[data-ready="1"]');
    await timeline.evaluate('window.marker = "no reload"');
    for (const line of lines.slice(opening)) await write(line);

    const html = path.join(replayed, 'finished.html');
    expect(cli(['view', finished, '--html', html]).code).toBe(0);
    const expected = await context.newPage();
    await expected.goto(pathToFileURL(html).href);
    await expected.waitForSelector('html[data-ready="1"]');
    const want = await rowsOf(expected);
    expect(want.length).toBeGreaterThan(2);
    await expect.poll(() => rowsOf(timeline), { timeout: 20_000 }).toEqual(want);
    expect(await timeline.locator('section .facts').textContent()).toBe((await expected.locator('section .facts').textContent())!.replace(finished, live));
    expect(await timeline.evaluate('window.marker')).toBe('no reload');
    expect(await timeline.evaluate('window.nrhUpdates')).toBeGreaterThanOrEqual(1);

    // The index row: the figures view --json gives for the finished file.
    const session = JSON.parse(cli(['view', finished, '--json']).stdout).files[0].sessions[0];
    const row = index.locator('tbody tr', { hasText: `${name}.jsonl` });
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
    const { totals } = session;
    const tokens = totals.promptTokens + totals.completionTokens > 0 ? `${totals.promptTokens.toLocaleString('en-US')} in` : '';
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain(tokens);
    expect(await row.locator('a').textContent()).toBe(session.title);
    for (const page of [index, timeline, expected]) await page.close();
  });

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
