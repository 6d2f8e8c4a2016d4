/**
 * The viewer on a 100 MB ATOF file (tens of thousands of sessions, four
 * open at a time; `test/support/big-atof.ts`): what `view --serve` does
 * before it answers (the catalog streams the file and works out every
 * session's index row), one page of the index, and opening one session
 * (its lines read back by their offsets), against two baselines measured in
 * the same process: the floor (read the file in chunks and `JSON.parse`
 * every line, keep nothing) and the whole-file way the viewer had before
 * (parse every event, keep them, build every tree).
 *
 * Figures: the catalog's time over the floor's; the heap each keeps per
 * byte of the file (settled, after a forced collection), the catalog's and
 * the whole-file way's.
 *
 * @module
 */

import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAtofJsonl } from '../../src/formats/atof/validate.ts';
import { Catalog } from '../../src/cli/serve/catalog.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import { writeBigAtof } from '../../test/support/big-atof.ts';
import { CaseReport, consume, figure, iterations, median, nowNs, settledHeap } from '../harness.ts';

const report = new CaseReport('viewer-large-atof', 'The viewer on a 100 MB ATOF file: view --serve\'s index, a page, a session opened, vs parsing the file');
const BYTES = iterations(100 * 1024 * 1024, 1024 * 1024);
const ROUNDS = iterations(3, 1);

const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-viewer-'));
try {
  const file = path.join(dir, 'agents.atof.jsonl');
  const big = writeBigAtof(file, BYTES);
  const size = statSync(file).size;
  report.fact('file_bytes', size);
  report.fact('sessions', big.sessions);
  report.fact('events', big.events);

  const floorSeconds: number[] = [];
  const catalogSeconds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let t0 = nowNs();
    consume(parseEveryLine(file, size));
    floorSeconds.push(Number(nowNs() - t0) / 1e9);
    t0 = nowNs();
    const catalog = new Catalog([dir]);
    catalog.refresh();
    catalogSeconds.push(Number(nowNs() - t0) / 1e9);
    consume(catalog.sessions().length);
  }

  // What the catalog keeps (the index of the file's lines, a row per session), settled.
  const before = await settledHeap();
  const catalog = new Catalog([dir]);
  catalog.refresh();
  const kept = (await settledHeap()) - before;
  const pageUs: number[] = [];
  const openUs: number[] = [];
  for (let i = 0; i < iterations(50, 3); i++) {
    let t0 = nowNs();
    const page = catalog.page({ text: `session s${(i * 7919) % big.sessions}`, limit: 200 });
    pageUs.push(Number(nowNs() - t0) / 1000);
    t0 = nowNs();
    const found = catalog.find(page.sessions[0]!.key);
    openUs.push(Number(nowNs() - t0) / 1000);
    consume(found?.root.children.length);
  }
  consume(catalog.sessions().length);

  // The whole-file way, for comparison: every event kept, every tree built.
  const beforeWhole = await settledHeap();
  let t0 = nowNs();
  const whole = treesFromAtof(parseAtofJsonl(readFileSync(file, 'utf8')).events);
  const wholeSeconds = Number(nowNs() - t0) / 1e9;
  const keptWhole = (await settledHeap()) - beforeWhole;
  consume(whole.length);

  const floor = median(floorSeconds);
  const indexed = median(catalogSeconds);
  report.figure(figure('catalog_over_parse_floor', 'view --serve\'s index of the file (stream, group by session, a row each) / reading and parsing every line', Math.round((indexed / floor) * 100) / 100, 'x', { op: '<=', target: 3 }));
  report.figure(figure('whole_over_parse_floor', 'the whole-file way (every event kept, every tree built) / reading and parsing every line', Math.round((wholeSeconds / floor) * 100) / 100, 'x'));
  report.figure(figure('catalog_heap_per_file_byte', 'heap the index keeps per byte of the file (settled)', Math.round((kept / size) * 1000) / 1000, 'x', { op: '<=', target: 0.5 }));
  report.figure(figure('whole_heap_per_file_byte', 'heap the whole-file way keeps per byte of the file (settled)', Math.round((keptWhole / size) * 1000) / 1000, 'x'));
  report.figure(figure('catalog_bytes_per_event', 'heap the index keeps per event', Math.round(kept / big.events), 'B'));
  report.figure(figure('page_us', 'one page of the index (200 rows, filtered by a session name), median', Math.round(median(pageUs)), 'µs'));
  report.figure(figure('open_session_us', 'one session opened (its lines read back and its tree built), median', Math.round(median(openUs)), 'µs'));
  report.fact('parse_floor_seconds', Math.round(floor * 100) / 100);
  report.fact('catalog_seconds', Math.round(indexed * 100) / 100);
  report.fact('whole_seconds', Math.round(wholeSeconds * 100) / 100);
  report.note('Absolute seconds drift with the machine\'s load; the ratios are measured in the same process, rounds interleaved.');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
report.write();

/** The floor: the file read in 4 MiB chunks, every line parsed, nothing kept. */
function parseEveryLine(file: string, size: number): number {
  const descriptor = openSync(file, 'r');
  const buffer = Buffer.alloc(4 * 1024 * 1024);
  let carry = '';
  let lines = 0;
  try {
    for (let offset = 0; offset < size; ) {
      const read = readSync(descriptor, buffer, 0, buffer.length, offset);
      if (read === 0) break;
      offset += read;
      const text = carry + buffer.toString('utf8', 0, read);
      const parts = text.split('\n');
      carry = parts.pop()!;
      for (const line of parts) if (line !== '') lines += JSON.parse(line) === null ? 0 : 1;
    }
  } finally {
    closeSync(descriptor);
  }
  return lines;
}
