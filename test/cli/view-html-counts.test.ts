// The HTML timeline counts as the terminal does: a user trial's page said
// "3 LLM calls, 1 tool calls" in a session's facts, and a turn whose tool
// failed gave no sign of it once folded ("Collapse to turns"), where the
// terminal's turn line says `Σ 1 error`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInProcess, EXAMPLES, tempDir } from './support.ts';

async function timelineOf(example: string): Promise<{ text: string; page: string }> {
  const out = tempDir();
  expect((await cliInProcess(['replay', path.join(EXAMPLES, `${example}.hooks.jsonl`), '--out', out, '--quiet'])).code).toBe(0);
  const atof = path.join(out, 'atof', `${example}-atof.jsonl`);
  const html = path.join(out, 'timeline.html');
  const result = await cliInProcess(['view', atof, '--html', html]);
  expect(result.code).toBe(0);
  return { text: result.stdout, page: readFileSync(html, 'utf8') };
}

/** The visible text of the page's row titled `title` (tags dropped). */
function rowText(page: string, title: string): string {
  const rows = page.match(/<div class="row [^"]*"[^>]*>.*?<\/div><div class="track">/g) ?? [];
  const found = rows.find((row) => row.includes(`<span class="title">${title}</span>`));
  if (found === undefined) throw new Error(`no row titled ${title}`);
  return found.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
}

describe('view --html counts as the terminal does', () => {
  it('says "1 tool call", not "1 tool calls", in a session\'s facts', async () => {
    const { text, page } = await timelineOf('anthropic-session');
    expect(text).toMatch(/2 LLM calls, 1 tool call {2}/);
    const facts = page.match(/<p class="facts">(.*?)<\/p>/)?.[1] ?? '';
    expect(facts).toContain('2 LLM calls, 1 tool call ·');
  });

  it('marks a turn and a subagent with the errors under them, as their terminal lines do', async () => {
    const { text, page } = await timelineOf('agent-session');
    expect(text).toMatch(/└─ turn 1 .*Σ 2 errors/);
    expect(text).toMatch(/subagent demo-subagent-91b2 .*Σ 1 error /);
    expect(rowText(page, 'turn 1')).toContain('Σ 2 errors');
    expect(rowText(page, 'subagent demo-subagent-91b2')).toContain('Σ 1 error');
    // A call's own row says ERROR, not a rollup.
    expect(rowText(page, 'tool read_file')).not.toContain('Σ');
  });
});
