/**
 * Merges `--json` outputs of `bench/run.ts` (one per runtime) into the
 * Markdown tables of `bench/RESULTS.md` (`tables.ts`). `npm run bench:all`
 * runs the three runtimes and writes the same tables in one command.
 *
 *   node .tmp/bench/bench/report.js node.json bun.json deno.json > tables.md
 *   bun bench/report.ts node.json bun.json deno.json
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import process from 'node:process';
import type { BenchRun } from './run.ts';
import { resultTables } from './tables.ts';

function load(file: string): BenchRun {
  return JSON.parse(readFileSync(file, 'utf8')) as BenchRun;
}

try {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: report <run.json> [<run.json> ...]');
  process.stdout.write(resultTables(files.map(load)));
} catch (error) {
  process.stderr.write(`report: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
}
