// validate streams a large ATOF file in stretches (20,000 events each) and
// must report exactly what the whole-file validation reports, with
// file-wide event indexes: a file past the first stretch, built by a replay
// of 300 synthetic sessions, so it takes a while (test/cli/validate.test.ts
// has the small streaming cases).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../cli/support.ts';

describe('nemo-relay-hooks validate, streaming large ATOF files', () => {
  it('reports exactly what the whole-file validation reports, with file-wide event indexes', async () => {
    const { writeSyntheticStream } = await import('../cli/stream.ts');
    const dir = tempDir();
    const hooks = path.join(dir, 'many.hooks.jsonl');
    writeSyntheticStream(hooks, 300, 100);
    expect(cli(['replay', hooks, '--out', path.join(dir, 'out'), '--quiet']).code).toBe(0);
    const events = readFileSync(path.join(dir, 'out', 'atof', 'many-atof.jsonl'), 'utf8').trim().split('\n');
    expect(events.length).toBeGreaterThan(25_000);
    // Break an end event past the first stretch (20,000 events): it now ends before it started.
    const index = events.findIndex((line, i) => i > 25_000 && line.includes('"scope_category":"end"'));
    const broken = JSON.parse(events[index]!);
    broken.timestamp = '2000-01-01T00:00:00+00:00';
    events[index] = JSON.stringify(broken);
    events.splice(100, 0, '{not json');
    const file = path.join(dir, 'broken.jsonl');
    writeFileSync(file, events.join('\n') + '\n');

    const whole = cli(['validate', file]);
    const streamed = cli(['validate', file, '--stream-above', '0']);
    expect(whole.code).toBe(1);
    expect(streamed.code).toBe(1);
    const problems = (out: string) => out.split('\n').filter((line) => line.startsWith(`${file}: `));
    expect(problems(streamed.stdout)).toEqual(problems(whole.stdout));
    // Sorted by timestamp before pairing, the end comes before its start: an end without a start, at its file-wide index.
    expect(problems(whole.stdout).some((line) => line.includes(`$[${index}].scope_category: atof.unpaired_end`))).toBe(true);
    expect(streamed.stdout).toMatch(/errors \(ATOF 0\.1, [\d,]+ events, streamed[,)]/);
  });
});
