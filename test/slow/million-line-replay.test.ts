import { createReadStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { validateAtif, validateAtofEvents } from '../../src/formats/index.ts';
import { writeSyntheticStream } from '../cli/stream.ts';
import { cli, tempDir } from '../cli/support.ts';

const SESSIONS = 10_000;
const LINES_PER_SESSION = 100;
// The input alone is ~300 MB; reading it whole (or holding its sessions) needs far more than this.
const RSS_BOUND_KIB = 400 * 1024;

/** Validates a large ATOF file one self-contained stretch at a time (no open scope between stretches). */
async function atofErrors(file: string): Promise<{ events: number; errors: string[] }> {
  const errors: string[] = [];
  let batch: unknown[] = [];
  let open = 0;
  let events = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    const event = JSON.parse(line);
    events += 1;
    batch.push(event);
    if (event.kind === 'scope') open += event.scope_category === 'start' ? 1 : -1;
    if (open === 0) {
      for (const error of validateAtofEvents(batch)) errors.push(`${error.path}: ${error.rule}: ${error.message}`);
      batch = [];
    }
  }
  for (const error of validateAtofEvents(batch)) errors.push(`${error.path}: ${error.rule}: ${error.message}`);
  return { events, errors };
}

describe('replay of a very large stream', () => {
  it(
    'replays 1,000,000 lines (10,000 sessions) with flat memory and writes valid files',
    async () => {
      const dir = tempDir('nrh-big-');
      // 1.5 GB of input and output: gone as soon as the test is, pass or fail.
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const input = path.join(dir, 'big.hooks.jsonl');
      expect(writeSyntheticStream(input, SESSIONS, LINES_PER_SESSION)).toBe(1_000_000);
      const out = path.join(dir, 'out');
      const result = cli(['replay', input, '--out', out, '--report-memory'], { timeoutMs: 600_000 });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('replayed 1,000,000 lines');
      expect(result.stdout).toContain('  sessions   10,000\n');
      const peak = Number(/report-memory: maxRSS=(\d+)KiB/.exec(result.stderr)?.[1]);
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThan(RSS_BOUND_KIB);

      const atifDir = path.join(out, 'atif');
      const files = readdirSync(atifDir);
      expect(files).toHaveLength(SESSIONS);
      for (const file of files) {
        const errors = validateAtif(JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')));
        if (errors.length > 0) throw new Error(`${file}: ${errors.map((e) => `${e.path}: ${e.rule}: ${e.message}`).join('; ')}`);
      }
      const atof = await atofErrors(path.join(out, 'atof', 'big-atof.jsonl'));
      expect(atof.errors.slice(0, 5)).toEqual([]);
      expect(atof.events).toBeGreaterThan(900_000);
    },
    900_000,
  );
});
