// A trajectory whose schema_version is newer than any this package knows (`ATIF-v2.0`) was shown without a word: a
// user could not tell that fields the new version added were left out. `view` (and `compare`) now say so, once.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInProcess, EXAMPLES, tempDir } from './support.ts';

async function demoWithVersion(version: string | undefined): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet'])).code).toBe(0);
  const file = path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json');
  const document = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (version === undefined) delete document.schema_version;
  else document.schema_version = version;
  const edited = path.join(out, 'run.json');
  writeFileSync(edited, JSON.stringify(document));
  return edited;
}

const NOTE = 'schema_version "ATIF-v2.0" is not one this version of nemo-relay-hooks knows (ATIF-v1.0 to ATIF-v1.8): what it shows may be incomplete';

const newer = await demoWithVersion('ATIF-v2.0');

describe('a trajectory of a schema version this package does not know', () => {
  it('view shows it and says once that the version is unknown', async () => {
    const result = await cliInProcess(['view', newer]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ *session demo-session-7f3a /);
    expect(result.stderr).toBe(`nemo-relay-hooks: ${newer}: ${NOTE}\n`);
    // --json keeps standard output to the report.
    const json = await cliInProcess(['view', newer, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ command: 'view' });
    expect(json.stderr).toBe(`nemo-relay-hooks: ${newer}: ${NOTE}\n`);
  });

  it('says nothing for a known version or none (Harbor\'s default, ATIF-v1.7)', async () => {
    for (const version of ['ATIF-v1.8', undefined]) expect((await cliInProcess(['view', await demoWithVersion(version)])).stderr).toBe('');
  });

  it('compare says it too; validate reports the version as an error, as docs/cli/validate.md says', async () => {
    const compared = await cliInProcess(['compare', newer, newer]);
    expect(compared.code).toBe(0);
    expect(compared.stderr).toBe(`nemo-relay-hooks: ${newer}: ${NOTE}\n`.repeat(2));
    const validated = await cliInProcess(['validate', newer]);
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain('$.schema_version: atif.schema_version: unknown schema_version "ATIF-v2.0"');
  });
});
