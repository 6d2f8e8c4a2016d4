// The HTML timeline in a real browser: headless Chromium opens the page
// `view --html` writes, and the test uses it as a reader would (a row's
// details, search, errors only, kind filter, keyboard, zoom), then keeps a
// screenshot in .tmp/artifacts/.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, findChromium, launchChromium } from '../support/browser.ts';
import { cli, EXAMPLES, tempDir } from '../cli/support.ts';

const chromium = findChromium();
if (chromium === undefined) console.log('skipping the HTML timeline browser tests: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

describe.skipIf(chromium === undefined)('the HTML timeline in Chromium', () => {
  let context: BrowserContext;
  let out: string;
  let html: string;
  const requests: string[] = [];

  beforeAll(async () => {
    out = tempDir();
    expect(cli(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet']).code).toBe(0);
    html = path.join(out, 'timeline.html');
    const result = cli(['view', path.join(out, 'atof', 'agent-session-atof.jsonl'), path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'), '--html', html]);
    expect(result.code, result.stderr).toBe(0);
    context = await launchChromium(chromium!);
    context.on('request', (request) => requests.push(request.url()));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
  });

  async function open(file: string): Promise<Page> {
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('html[data-ready="1"]');
    return page;
  }

  const finalAnswer = (): string => {
    const trajectory = JSON.parse(readFileSync(path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'), 'utf8')) as { steps: { message?: unknown }[] };
    return String(trajectory.steps.at(-1)!.message);
  };

  it('opens a row\'s details with the full messages by role, tool calls with arguments as JSON, usage and timings', async () => {
    const page = await open(html);
    const atof = page.locator('section').first();
    // The LLM call that asked for read_file and search_code.
    const llm = atof.locator('.row.k-llm', { hasText: '→ read_file, search_code' });
    await llm.click();
    const pane = page.locator('#detail');
    await expect.poll(() => pane.isVisible()).toBe(true);
    const input = pane.locator('[data-section="Input"]');
    expect(await input.locator('.msg.r-system .text').textContent()).toBe('You are a careful coding agent. Use tools to inspect the repository before you answer.');
    expect(await input.locator('.msg.r-user .text').textContent()).toBe('The date parser test is flaky. Find out why and tell me how to fix it.');
    const output = pane.locator('[data-section="Output"]');
    expect(await output.locator('.call b').allTextContents()).toEqual(['→ read_file', '→ search_code']);
    expect(JSON.parse((await output.locator('.call pre').first().textContent())!)).toEqual({ path: 'src/date.ts' });
    expect(await pane.locator('[data-section="Usage"]').textContent()).toContain('prompt tokens1240');
    // The duration shown is end − start, in the unit that keeps it readable (the demo's calls take
    // about a millisecond, so either side of it is possible on a loaded machine).
    const timing = (await pane.locator('[data-section="Timing"]').textContent())!;
    const [, start, end, shown, unit] = /start(\S+?Z)end(\S+?Z)duration([\d.]+)(µs|ms)$/.exec(timing) ?? [];
    expect(unit, timing).toBeDefined();
    const micros = (stamp: string): number => Date.parse(stamp) * 1000 + Number((/\.\d{3}(\d*)Z$/.exec(stamp)?.[1] ?? '').padEnd(3, '0'));
    expect(Number(shown) * (unit === 'ms' ? 1000 : 1)).toBeCloseTo(micros(end!) - micros(start!), 0);

    // The last answer, cut to a preview in the row, is whole in the pane (from the ATIF step).
    const atif = page.locator('section').nth(1);
    const last = atif.locator('.row.k-llm').last();
    expect(await last.locator('.note').textContent()).toContain('…');
    await last.click();
    expect(await pane.locator('[data-section="Output"] .msg.r-assistant .text').textContent()).toBe(finalAnswer());

    // A tool call: arguments and result as formatted JSON / text.
    await atof.locator('.row.k-tool', { hasText: 'tool read_file' }).first().click();
    expect(await pane.locator('[data-section="Arguments"] pre').textContent()).toBe('{\n  "path": "src/date.ts"\n}');
    expect(await pane.locator('[data-section="Result"]').textContent()).toContain('export function parseDate');
    await page.close();
  });

  it('searches all text including details, filters errors and span kinds, and moves with the keyboard', async () => {
    const page = await open(html);
    const visibleTitles = () => page.locator('.row:not(.hidden) .title').allTextContents();

    // "DST jump" appears only in the final answer's full text, past the row's preview.
    await page.fill('#q', 'time zone with a dst jump');
    await expect.poll(async () => (await page.locator('.row.hit').count())).toBeGreaterThan(0);
    const hits = await page.locator('.row.hit .title').allTextContents();
    expect(hits.every((title) => title.startsWith('LLM'))).toBe(true);
    expect(await page.locator('#count').textContent()).toMatch(/^\d+ of \d+ rows$/);
    await page.fill('#q', '');
    await page.waitForTimeout(200);

    await page.check('#errors');
    const failed = await page.locator('.row.failed:not(.hidden) .title').allTextContents();
    expect(failed.sort()).toEqual(['LLM gpt-4o-2024-08-06', 'LLM gpt-4o-2024-08-06', 'tool read_file', 'tool read_file']);
    // Only failures and the rows leading to them.
    expect(await visibleTitles()).not.toContain('tool search_code');
    await page.uncheck('#errors');

    await page.selectOption('#kind', 'mark');
    const marks = await visibleTitles();
    expect(marks).toContain('approval requested');
    expect(marks).toContain('approval: once');
    expect(marks).not.toContain('tool search_code');
    await page.selectOption('#kind', '');
    await page.locator('h1').click();

    // Keyboard: / focuses search, Enter opens the first row, arrows move, Esc closes.
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('q');
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.row.selected .title').textContent()).toMatch(/^LLM /);
    expect(await page.locator('#detail h3').textContent()).toMatch(/^LLM /);
    await page.keyboard.press('Escape');
    expect(await page.locator('#detail').isVisible()).toBe(false);
    await page.close();
  });

  it('zooms and pans the time axis, shows approvals, and loads nothing from the network', async () => {
    const page = await open(html);
    const timeline = page.locator('.timeline').first();
    await timeline.locator('[data-zoom=in]').click();
    expect(await timeline.getAttribute('data-window')).toBe('0.2500-0.7500');
    await timeline.locator('[data-zoom=in]').click();
    const box = (await timeline.locator('.track').first().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 200, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    const [a] = (await timeline.getAttribute('data-window'))!.split('-').map(Number);
    expect(a).toBeLessThan(0.375);
    await timeline.locator('[data-zoom=reset]').click();
    expect(await timeline.getAttribute('data-window')).toBe('0.0000-1.0000');
    expect(await page.locator('.row.approval .flag').count()).toBe(2);

    await page.locator('.row.k-llm', { hasText: '→ read_file, search_code' }).first().click();
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, 'timeline.png');
    await page.screenshot({ path: shot, fullPage: false });
    console.log(`screenshot of the timeline kept at ${path.relative(process.cwd(), shot)}`);
    expect(requests.every((url) => url.startsWith('file://'))).toBe(true);
    await page.close();
  });

  it('opens a trajectory of 2,000 steps, with every row and its details', async () => {
    const steps: unknown[] = [];
    const t0 = Date.parse('2026-01-01T10:00:00Z') / 1000;
    for (let i = 0; i < 1000; i++) {
      steps.push({ step_id: steps.length + 1, source: 'user', message: `question ${i}`, timestamp: new Date((t0 + i) * 1000).toISOString() });
      steps.push({
        step_id: steps.length + 1,
        source: 'agent',
        message: `answer ${i} ${'x'.repeat(300)}`,
        model_name: 'm',
        timestamp: new Date((t0 + i + 0.5) * 1000).toISOString(),
        metrics: { prompt_tokens: 10, completion_tokens: 5 },
        extra: { invocation: { start_timestamp: t0 + i + 0.1, end_timestamp: t0 + i + 0.1004 } },
      });
    }
    const file = path.join(out, 'big.json');
    writeFileSync(file, JSON.stringify({ schema_version: 'ATIF-v1.7', session_id: 'big', agent: { name: 'a', version: '1' }, steps }));
    const target = path.join(out, 'big.html');
    expect(cli(['view', file, '--html', target]).code).toBe(0);
    const started = Date.now();
    const page = await open(target);
    console.log(`a trajectory of 2,000 steps opened in ${Date.now() - started} ms`);
    expect(await page.locator('.row').count()).toBe(2001);
    await page.locator('.row.k-llm').nth(999).click();
    expect(await page.locator('[data-section="Output"] .text').textContent()).toBe(`answer 999 ${'x'.repeat(300)}`);
    // 400µs between millisecond-rounded stamps is shown as such, not 0µs.
    expect(await page.locator('.row.k-llm .dur').first().textContent()).not.toBe('0µs');
    await page.close();
  });
});
