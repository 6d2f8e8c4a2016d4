// The streamed ATOF index gives every session the tree the whole file gives
// it (the demo recording with its subagent, turns and approvals; sessions
// interleaved; an event arriving after its session ended; a byte order
// mark, CRLF line ends, a malformed line, a last line without a newline),
// whether the file is read at once, in pieces cut mid-line as it grows, or
// with its held events let go and read back from the file. The served
// catalog does not judge a half-written first line.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseAtofJsonl } from '../../../src/formats/atof/validate.ts';
import { Catalog } from '../../../src/cli/serve/catalog.ts';
import { AtofIndex, RESUMMARIZE_ABOVE_EVENTS, RESUMMARIZE_MS, summaryOf } from '../../../src/cli/view/atof-index.ts';
import { treesFromAtof } from '../../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../../src/cli/view/model.ts';
import { oneSessionAtof } from '../../support/big-atof.ts';
import { cli, EXAMPLES, tempDir } from '../support.ts';

function demoAtof(): string {
  const dir = tempDir('nrh-index-demo-');
  expect(cli(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', dir, '--quiet']).code).toBe(0);
  return readFileSync(path.join(dir, 'atof', 'agent-session-atof.jsonl'), 'utf8');
}

/** Two generated sessions interleaved line by line, a mark for the first after it ended, then the demo. */
function mixedFile(demo: string): string {
  const a = oneSessionAtof(7, 'alpha').trimEnd().split('\n');
  const b = oneSessionAtof(8, 'beta').trimEnd().split('\n');
  const lines: string[] = [];
  for (let i = 0; i < a.length; i++) lines.push(a[i]!, b[i]!);
  lines.push(JSON.stringify({ atof_version: '0.1', kind: 'mark', uuid: 'late-1', parent_uuid: 'agent-alpha', name: 'late.note', timestamp: '2026-01-01T10:00:09Z', data: { after: 'the end' }, metadata: {} }));
  lines.push('{not json');
  return `\ufeff${lines.join('\r\n')}\r\n${demo.trimEnd()}`; // no newline after the last line
}

/** A tree without the records behind it, for comparison. */
function shape(node: ViewNode): unknown {
  const { source: _source, children, ...rest } = node;
  return { ...rest, children: children.map(shape) };
}

function wholeFileTrees(text: string): ViewNode[] {
  return treesFromAtof(parseAtofJsonl(text.replace(/^\ufeff/, '')).events);
}

describe('the streamed ATOF index', () => {
  const demo = demoAtof();

  it('builds each session as the whole file does, read at once, in pieces, or with its events let go', () => {
    const text = mixedFile(demo);
    const whole = wholeFileTrees(text);
    expect(whole.map((root) => root.title)).toEqual(['session alpha', 'session beta', 'session demo-session-7f3a']);
    const file = path.join(tempDir('nrh-index-'), 'mixed.jsonl');
    writeFileSync(file, text);

    const atOnce = new AtofIndex(file);
    atOnce.readOn(statSync(file).size, true);
    expect(atOnce.sessions.map((session) => session.session)).toEqual(['alpha', 'beta', 'demo-session-7f3a']);
    expect(atOnce.lineErrors.map((error) => error.message)).toEqual([expect.stringMatching(/^line 18 is not valid JSON/)]);

    // Grown in 5 pieces cut anywhere (mid-line included), read after each; and an index that may hold 3 events at most.
    const grown = path.join(path.dirname(file), 'grown.jsonl');
    writeFileSync(grown, '');
    const pieces = new AtofIndex(grown);
    const bytes = Buffer.from(text);
    for (let cut = 1; cut <= 5; cut++) {
      appendFileSync(grown, bytes.subarray(Math.floor((bytes.length * (cut - 1)) / 5), Math.floor((bytes.length * cut) / 5)));
      pieces.readOn(statSync(grown).size, cut === 5);
    }
    const letGo = new AtofIndex(file, { maxHeldEvents: 3 });
    letGo.readOn(statSync(file).size, true);

    for (const index of [atOnce, pieces, letGo]) {
      expect(index.sessions).toHaveLength(3);
      index.sessions.forEach((session, position) => {
        const tree = index.tree(session);
        expect(shape(tree)).toEqual(shape(whole[position]!));
        expect(index.summary(session)).toEqual(summaryOf(whole[position]!));
      });
    }
    // The mark that came after its session ended is in that session's tree and figures.
    expect(atOnce.tree(atOnce.sessions[0]!).children.map((child) => child.title)).toContain('late.note');
    expect(atOnce.summary(atOnce.sessions[0]!)).toMatchObject({ llmCalls: 2, toolCalls: 1, promptTokens: 214, completionTokens: 40 });
  });

  it('serves a file whose first line is still being written once the line ends, and flags a hook stream', () => {
    const dir = tempDir('nrh-index-served-');
    const file = path.join(dir, 'live.jsonl');
    const first = demo.slice(0, demo.indexOf('\n') + 1);
    writeFileSync(file, first.slice(0, 40));
    const catalog = new Catalog([dir]);
    catalog.refresh();
    expect(catalog.problems()).toEqual([]);
    appendFileSync(file, demo.slice(40));
    catalog.refresh();
    expect(catalog.problems()).toEqual([]);
    expect(catalog.sessions().map((entry) => entry.title)).toEqual(['session demo-session-7f3a']);
    expect(catalog.page({ text: 'DEMO-SESSION' }).matched).toBe(1);

    writeFileSync(path.join(dir, 'hooks.jsonl'), `${JSON.stringify({ hook: 'on_session_start', payload: { session_id: 's' } })}\n`);
    catalog.refresh();
    expect(catalog.problems()).toEqual([{ file: path.join(dir, 'hooks.jsonl'), problem: 'a recorded hook stream; run "nemo-relay-hooks replay" on it first' }]);
  });

  it('lists a file with an event whose name is no string by its sessions, where its problem was the raw TypeError', () => {
    const dir = tempDir('nrh-index-odd-name-');
    expect(cli(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', dir, '--quiet']).code).toBe(0);
    const lines = readFileSync(path.join(dir, 'atof', 'plain-chat-atof.jsonl'), 'utf8').trimEnd().split('\n');
    // The second LLM call's end: its usage has cache reads, read by provider, which the name was taken for.
    const index = lines.findLastIndex((line) => {
      const event = JSON.parse(line) as { category?: string; scope_category?: string };
      return event.category === 'llm' && event.scope_category === 'end';
    });
    lines[index] = JSON.stringify({ ...(JSON.parse(lines[index]!) as object), name: null });
    const served = path.join(dir, 'served');
    mkdirSync(served);
    writeFileSync(path.join(served, 'odd.jsonl'), `${lines.join('\n')}\n`);
    const catalog = new Catalog([served]);
    catalog.refresh();
    expect(catalog.problems()).toEqual([]);
    expect(catalog.sessions().map((entry) => entry.title)).toEqual(['session chat-session-2c88']);
  });

  afterEach(() => vi.restoreAllMocks());

  /** The served row of the one session in `file`, and the row a fresh index of the file as it is now gives. */
  const rows = (catalog: Catalog, file: string) => {
    const served = catalog.sessions().find((entry) => entry.file === file)!;
    const fresh = new AtofIndex(file);
    fresh.readOn(statSync(file).size);
    return { served: { llmCalls: served.llmCalls, toolCalls: served.toolCalls, errors: served.errors, durationUs: served.durationUs }, now: summaryOf(fresh.tree(fresh.sessions[0]!)) };
  };

  it('follows the lines of a session still being written in its served row, where it kept its first look\'s figures while the file stayed quiet', () => {
    // A user trial served a folder while a run was written: the row said 3 LLM calls, 1.14s, long after the file held more.
    const dir = tempDir('nrh-index-open-');
    const file = path.join(dir, 'live.jsonl');
    const lines = demo.trimEnd().split('\n').map((line) => `${line}\n`);
    writeFileSync(file, lines.slice(0, 11).join(''));
    const catalog = new Catalog([dir]);
    catalog.refresh();
    expect(rows(catalog, file).served.llmCalls).toBe(3);
    appendFileSync(file, lines.slice(11, 27).join(''));
    expect(catalog.refresh()).toEqual([file]);
    const { served, now } = rows(catalog, file);
    expect(served).toEqual({ llmCalls: now.llmCalls, toolCalls: now.toolCalls, errors: now.errors, durationUs: now.durationUs });
    expect(served.llmCalls).toBe(6);
  });

  it('works out a huge open session\'s deferred figures once their wait is over, without another line written', () => {
    const dir = tempDir('nrh-index-huge-open-');
    const file = path.join(dir, 'huge.jsonl');
    const lines = demo.trimEnd().split('\n').map((line) => `${line}\n`);
    const root = JSON.parse(lines[0]!) as { uuid: string; timestamp: string };
    const pad = Array.from({ length: RESUMMARIZE_ABOVE_EVENTS + 1 }, (_, i) =>
      `${JSON.stringify({ atof_version: '0.1', kind: 'mark', uuid: `pad-${i}`, parent_uuid: root.uuid, name: 'pad', timestamp: root.timestamp, data: null, metadata: {} })}\n`,
    );
    writeFileSync(file, [lines[0]!, ...pad, ...lines.slice(1, 11)].join(''));
    const catalog = new Catalog([dir]);
    catalog.refresh();
    const first = Date.now();
    appendFileSync(file, lines.slice(11, 27).join(''));
    catalog.refresh();
    // Within the wait, the row keeps the figures of the last look (known-limits.md says so).
    expect(rows(catalog, file).served.llmCalls).toBe(3);
    expect(catalog.refresh()).toEqual([]);
    vi.spyOn(Date, 'now').mockReturnValue(first + RESUMMARIZE_MS + 1);
    expect(catalog.refresh()).toEqual([file]);
    const { served, now } = rows(catalog, file);
    expect(served.llmCalls).toBe(6);
    expect(served.durationUs).toBe(now.durationUs);
  });

  it('serves nothing from a file that became a FIFO or a link out of the folder after the last look', async () => {
    const dir = tempDir('nrh-index-swapped-');
    const outside = path.join(tempDir('nrh-index-outside-'), 'other.jsonl');
    writeFileSync(outside, demo);
    const catalog = new Catalog([dir]);
    for (const swap of ['fifo', 'link'] as const) {
      const file = path.join(dir, `${swap}.jsonl`);
      writeFileSync(file, demo);
      catalog.refresh();
      const key = catalog.sessions().find((entry) => entry.file === file)!.key;
      expect(catalog.find(key)).toBeDefined();
      // Swapped before the next look (the server looks once a second; a request may come first).
      rmSync(file);
      if (swap === 'link') symlinkSync(outside, file);
      else expect(spawnSync('mkfifo', [file]).status).toBe(0);
      // Without O_NONBLOCK the open of a FIFO blocks this process until a writer comes: this one comes after 3 s, so a blocked read fails on time.
      const writer = swap === 'fifo' ? spawn('sh', ['-c', 'sleep 3; exec 3>"$0"; sleep 1', file], { stdio: 'ignore' }) : undefined;
      try {
        const started = Date.now();
        expect(catalog.find(key), swap).toBeUndefined();
        expect(Date.now() - started, swap).toBeLessThan(2000);
        catalog.refresh();
        expect(catalog.sessions().map((entry) => entry.file)).not.toContain(file);
      } finally {
        writer?.kill();
      }
      rmSync(file);
    }
  });

  it('tells apart two runs recorded under the same session id in one file (id, then id~2): served, and compared', () => {
    const dir = tempDir('nrh-index-twice-');
    const file = path.join(dir, 'agent-atof.jsonl');
    writeFileSync(file, `${demo}${demoAtof()}`); // the same hooks replayed again: new scope uuids, the same session id
    const catalog = new Catalog([dir]);
    catalog.refresh();
    const keys = catalog.sessions().map((entry) => entry.key);
    expect(keys.sort()).toEqual([`${file}#demo-session-7f3a`, `${file}#demo-session-7f3a~2`]);
    const [first, again] = [catalog.find(keys[0]!)!, catalog.find(keys[1]!)!];
    expect(first.root).not.toBe(again.root);
    // Told apart by their scopes, not their times: a replay keeps the recording's times, so both runs start together.
    expect(first.root.startUs).toBe(again.root.startUs);
    const compared = cli(['compare', `${file}#demo-session-7f3a`, `${file}#demo-session-7f3a~2`, '--json']);
    expect(compared.code, compared.stderr).toBe(0);
    expect(JSON.parse(compared.stdout)).toMatchObject({ equivalent: true, a: { session: 'demo-session-7f3a' }, b: { session: 'demo-session-7f3a~2' } });
    const neither = cli(['compare', file, `${file}#demo-session-7f3a`]);
    expect(neither.stderr).toContain('has 2 sessions (demo-session-7f3a, demo-session-7f3a~2)');
  });
});
