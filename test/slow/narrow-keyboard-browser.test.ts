// The HTML timeline and the compare page in headless Chromium at a phone's
// width (400 px) and with the keyboard alone: the rows stay readable with a
// row's details open, the details are not cut at the side, each compare
// pair shows its step's title, Tab reaches the rows, and moving with ↓ keeps
// the selected row on screen; the index pages (view --serve's, and the one
// view --html writes above 20 sessions) fit the window, a session a card.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, launchChromium } from '../support/browser.ts';
import { cli, EXAMPLES, tempDir } from '../cli/support.ts';
import { serve } from '../cli/serve-support.ts';

const chromium = findChromium();
if (chromium === undefined) console.log('skipping the narrow-window and keyboard browser tests: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

describe.skipIf(chromium === undefined)('the timeline and compare pages at 400 px and from the keyboard', () => {
  let context: BrowserContext;
  let timeline: string;
  let comparePage: string;
  let out: string;

  beforeAll(async () => {
    out = tempDir();
    expect(cli(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet']).code).toBe(0);
    const atof = path.join(out, 'atof', 'agent-session-atof.jsonl');
    const atif = path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json');
    timeline = path.join(out, 'timeline.html');
    expect(cli(['view', atof, atif, '--html', timeline]).code).toBe(0);
    comparePage = path.join(out, 'compare.html');
    // ATOF step ids are uuids: the longest a pair shows before its title.
    expect(cli(['compare', atof, atof, '--html', comparePage]).code).toBe(0);
    context = await launchChromium(chromium!);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
  });

  async function open(file: string, width: number, height: number): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize({ width, height });
    await page.goto(file.startsWith('http') ? file : pathToFileURL(file).href);
    await page.waitForSelector('html[data-ready="1"]');
    return page;
  }

  it('timeline: with a row\'s details open at 400 px, the rows keep their width, the row stays in sight and nothing is cut', async () => {
    const page = await open(timeline, 400, 800);
    const row = page.locator('section').first().locator('.row.k-llm').last();
    await row.click();
    await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
    const layout = (await page.evaluate(`(() => {
      const pane = document.getElementById('detail');
      const selected = document.querySelector('.row.selected');
      return {
        label: selected.querySelector('.label').getBoundingClientRect().width,
        pane: pane.getBoundingClientRect().width,
        rowBottom: selected.getBoundingClientRect().bottom,
        paneTop: pane.getBoundingClientRect().top,
        paneOverflow: pane.scrollWidth - pane.clientWidth,
        pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
      };
    })()`)) as { label: number; pane: number; rowBottom: number; paneTop: number; paneOverflow: number; pageOverflow: number };
    // Side by side the rows had 45% of the window and their labels a quarter of it.
    expect(layout.label, JSON.stringify(layout)).toBeGreaterThan(200);
    expect(layout.pane, JSON.stringify(layout)).toBeGreaterThan(380);
    expect(layout.rowBottom, JSON.stringify(layout)).toBeLessThanOrEqual(layout.paneTop);
    expect(layout.paneOverflow, JSON.stringify(layout)).toBeLessThanOrEqual(0);
    expect(layout.pageOverflow, JSON.stringify(layout)).toBeLessThanOrEqual(0);
    // The error of the failed call wraps inside the pane.
    await page.locator('section').first().locator('.row.failed.k-llm').click();
    const error = (await page.evaluate(`(() => ({
      line: document.querySelector('#detail .err').getBoundingClientRect().right,
      pane: document.getElementById('detail').getBoundingClientRect().right,
    }))()`)) as { line: number; pane: number };
    expect(error.line).toBeLessThanOrEqual(error.pane);
    await page.close();
  });

  it('compare: at 400 px every pair shows its step\'s title, and a pair\'s details do not squeeze the pairs', async () => {
    const page = await open(comparePage, 400, 800);
    const clipped = await page.evaluate(`[...document.querySelectorAll('.pair[data-i] .side')]
      .filter((side) => side.querySelector('.title') !== null)
      .filter((side) => side.querySelector('.title').getBoundingClientRect().right > side.getBoundingClientRect().right + 1)
      .map((side) => side.querySelector('.title').textContent)`);
    expect(clipped).toEqual([]);
    await page.locator('.pair[data-i]').nth(3).click();
    await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
    const widths = (await page.evaluate(`({
      side: document.querySelector('.pair[data-i] .side').getBoundingClientRect().width,
      pane: document.getElementById('detail').getBoundingClientRect().width,
      paneOverflow: document.getElementById('detail').scrollWidth - document.getElementById('detail').clientWidth,
    })`)) as { side: number; pane: number; paneOverflow: number };
    expect(widths.side, JSON.stringify(widths)).toBeGreaterThan(120);
    expect(widths.pane, JSON.stringify(widths)).toBeGreaterThan(380);
    expect(widths.paneOverflow, JSON.stringify(widths)).toBeLessThanOrEqual(0);
    await page.close();
  });

  /** Cells of the index table that end past the window's right edge, and how far the page scrolls sideways. */
  const overflow = (page: Page) =>
    page.evaluate(`({
      cells: [...document.querySelectorAll('table.index td')].filter((td) => td.getBoundingClientRect().right > window.innerWidth + 1).map((td) => td.textContent),
      page: document.documentElement.scrollWidth - window.innerWidth,
    })`) as Promise<{ cells: string[]; page: number }>;

  /** The names the first row's cells show before their figures (CSS, at a narrow width). */
  const names = (page: Page) =>
    page.evaluate(`[...document.querySelector('tbody tr').children].map((td) => getComputedStyle(td, '::before').content).filter((text) => text !== 'none' && text !== 'normal')`) as Promise<string[]>;

  it('the served index at 400 px: every session\'s figures in the window, nothing to scroll sideways', async () => {
    const server = await serve([out, '--port', '0']);
    try {
      const page = await open(server.url, 400, 800);
      await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThan(1);
      expect(await overflow(page)).toEqual({ cells: [], page: 0 });
      // The figures keep their names when the header row is gone.
      expect(await names(page)).toEqual(['"started "', '"duration "', '"calls "', '"tokens (Σ) "', '"cost (Σ) "', '"errors "']);
      await page.close();
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  });

  it('the index page view --html writes above 20 sessions, at 400 px: every figure in the window', async () => {
    const lines: string[] = [];
    const source = readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').trimEnd().split('\n');
    for (let copy = 1; copy <= 21; copy++) lines.push(...source.map((line) => line.replaceAll('demo-session-7f3a', `demo-session-${copy}`).replaceAll('demo-subagent-91b2', `demo-subagent-${copy}`)));
    const many = path.join(out, 'many.hooks.jsonl');
    writeFileSync(many, `${lines.join('\n')}\n`);
    const replayed = path.join(out, 'many');
    expect(cli(['replay', many, '--out', replayed, '--quiet']).code).toBe(0);
    const index = path.join(out, 'many.html');
    expect(cli(['view', path.join(replayed, 'atof', 'many-atof.jsonl'), '--html', index]).code).toBe(0);
    const page = await open(index, 400, 800);
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(20);
    expect(await overflow(page)).toEqual({ cells: [], page: 0 });
    expect(await names(page)).toEqual(['"started "', '"duration "', '"tokens "', '"errors "']);
    await page.close();
  });

  it('timeline at 400 px: a session id as long as the OpenAI Agents SDK\'s trace ids wraps in its heading, nothing to scroll sideways', async () => {
    const trace = 'trace_84b7539189f247f588708a6832fe8fca';
    const log = path.join(out, 'trace.hooks.jsonl');
    writeFileSync(log, readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').replaceAll('demo-session-7f3a', trace));
    const replayed = path.join(out, 'trace');
    expect(cli(['replay', log, '--out', replayed, '--quiet']).code).toBe(0);
    const html = path.join(out, 'trace.html');
    expect(cli(['view', path.join(replayed, 'atif', `trace-atif-${trace}.json`), '--html', html]).code).toBe(0);
    const page = await open(html, 400, 800);
    expect(await page.locator('h2').first().textContent()).toContain(trace);
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await page.close();
  });

  for (const [name, selector] of [['timeline', '.row'], ['compare', '.pair[data-i]']] as const) {
    it(`${name}: Tab reaches the rows, Enter opens one, and ↓ keeps the selected row on screen`, async () => {
      const page = await open(name === 'timeline' ? timeline : comparePage, 1200, 400);
      let reached = false;
      for (let press = 0; press < 20 && !reached; press++) {
        await page.keyboard.press('Tab');
        reached = (await page.evaluate(`document.activeElement !== null && document.activeElement.matches(${JSON.stringify(selector)})`)) === true;
      }
      expect(reached, 'Tab never reached a row').toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#detail').isVisible()).toBe(true);
      for (let press = 0; press < 30; press++) await page.keyboard.press('ArrowDown');
      const box = (await page.evaluate(`(() => {
        const selected = document.querySelector('.selected').getBoundingClientRect();
        return { top: selected.top, bottom: selected.bottom, height: window.innerHeight };
      })()`)) as { top: number; bottom: number; height: number };
      expect(box.top, JSON.stringify(box)).toBeGreaterThanOrEqual(-1);
      expect(box.bottom, JSON.stringify(box)).toBeLessThanOrEqual(box.height + 1);
      await page.close();
    });
  }
});
