// A replay of 5,000 sessions as an HTML timeline: `view --html` writes an
// index page and one page per session, and Chromium opens the index (drawn
// 200 rows at a time, every session filterable) and a session page from its link.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findChromium, launchChromium } from '../support/browser.ts';
import { cli, tempDir } from '../cli/support.ts';

const SESSIONS = 5_000;
const chromium = findChromium();
if (chromium === undefined) console.log('skipping the 5,000-session timeline test: no Chromium found (install Debian\'s "chromium" or set CHROMIUM_PATH)');

function atofOfSessions(count: number): string {
  const lines: string[] = [];
  const t0 = Date.parse('2026-01-01T10:00:00Z') * 1000;
  const event = (fields: Record<string, unknown>) => lines.push(JSON.stringify({ atof_version: '0.1', attributes: [], data: null, metadata: {}, ...fields }));
  for (let i = 0; i < count; i++) {
    const at = (offset: number) => t0 + i * 10_000_000 + offset;
    const agent = `a-${i}`;
    event({ kind: 'scope', scope_category: 'start', uuid: agent, parent_uuid: null, name: `hermes-session-s${i}`, category: 'agent', timestamp: at(0), metadata: { session_id: `s${i}` } });
    event({ kind: 'scope', scope_category: 'start', uuid: `l-${i}`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: at(1000), data: { content: { messages: [{ role: 'user', content: `question ${i}` }] } } });
    event({ kind: 'scope', scope_category: 'end', uuid: `l-${i}`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: at(2500), data: { choices: [{ message: { role: 'assistant', content: `answer ${i}` } }] } });
    event({ kind: 'scope', scope_category: 'start', uuid: `t-${i}`, parent_uuid: agent, name: 'ls', category: 'tool', timestamp: at(3000), data: { path: '.' } });
    event({ kind: 'scope', scope_category: 'end', uuid: `t-${i}`, parent_uuid: agent, name: 'ls', category: 'tool', timestamp: at(3400), data: 'a b c', metadata: i % 50 === 0 ? { 'otel.status_code': 'ERROR', 'error.type': 'boom' } : {} });
    event({ kind: 'scope', scope_category: 'end', uuid: agent, parent_uuid: null, name: `hermes-session-s${i}`, category: 'agent', timestamp: at(4000) });
  }
  return `${lines.join('\n')}\n`;
}

describe.skipIf(chromium === undefined)('the HTML timeline of 5,000 sessions', () => {
  it('is an index page listing every session, each linking to a page of its own', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'many.atof.jsonl');
    writeFileSync(file, atofOfSessions(SESSIONS));
    const target = path.join(dir, 'timeline.html');
    const result = cli(['view', file, '--html', target, '--json'], { timeoutMs: 600_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { html: { sessions: number; files: { path: string; bytes: number }[] } };
    expect(report.html.sessions).toBe(SESSIONS);
    expect(report.html.files).toHaveLength(SESSIONS + 1);
    const context = await launchChromium(chromium!);
    try {
      const page = await context.newPage();
      const started = Date.now();
      await page.goto(pathToFileURL(target).href);
      await page.waitForSelector('html[data-ready="1"]');
      console.log(`index of ${SESSIONS} sessions (${Math.round(report.html.files[0]!.bytes / 1024)} KiB) ready in ${Date.now() - started} ms`);
      expect(await page.locator('tbody tr').count()).toBe(200);
      expect(await page.locator('#count').textContent()).toBe(`${SESSIONS} of ${SESSIONS} sessions`);
      await page.locator('#more').click();
      expect(await page.locator('tbody tr').count()).toBe(400);
      await page.check('#errors');
      expect(await page.locator('#count').textContent()).toBe(`${SESSIONS / 50} of ${SESSIONS} sessions`);
      expect(await page.locator('tbody tr.failed').count()).toBe(SESSIONS / 50);
      await page.uncheck('#errors');
      await page.fill('#q', 'session s4321');
      await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
      await page.locator('tbody tr a').click();
      await page.waitForSelector('html[data-ready="1"]');
      expect(await page.locator('h2').first().textContent()).toContain('session s4321');
      await page.locator('.row.k-llm').click();
      expect(await page.locator('[data-section="Output"] .text').textContent()).toBe('answer 4321');
    } finally {
      await context.close();
    }
  });
});
