// The reference in README.md and docs/ is generated from the code (.ci/docs.ts,
// `npm run docs`): the environment variables from the settings table, the
// plugins.toml keys from the schema, each command's flags and --help from its
// spec, the API from JSDoc, and the shell transcripts from running them. This
// fails when a page no longer says what the code does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages, generatePage, masked, pluginsTomlKeyRows, ROOT } from '../../.ci/docs.ts';
import { environmentVariables } from '../../src/plugin/config/settings.ts';

// Transcripts print the runtime's own lines (doctor's "runtime node 20.…", the
// engine's JSON error texts); they are compared on the Node major they were
// generated on, which doctor's transcript names, so regenerating them on a
// newer Node moves the check with them.
const generatedOn = /runtime {2,}node (\d+)\./.exec(readFileSync(path.join(ROOT, 'docs/cli/doctor.md'), 'utf8'))?.[1];
const here = !process.versions.bun && !process.versions.deno ? process.versions.node.split('.')[0] : undefined;
const transcriptsHere = generatedOn !== undefined && here === generatedOn;
if (!transcriptsHere) {
  const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : process.versions.deno ? `Deno ${process.versions.deno}` : `Node ${process.versions.node}`;
  console.info(`[docs reference] transcripts were generated on Node ${generatedOn ?? '(unknown)'} and print the runtime they ran on; on ${runtime} only the tables are compared`);
}

describe('the generated reference', () => {
  for (const page of docPages()) {
    const relative = path.relative(ROOT, page);
    it(`${relative} says what the code does (npm run docs regenerates it)`, async () => {
      const text = readFileSync(page, 'utf8');
      let fresh = await generatePage(text);
      let current = text;
      if (!transcriptsHere) {
        const noTranscripts = (t: string) => t.replace(/<!-- transcript -->\n```text\n[\s\S]*?```/g, '<!-- transcript -->');
        fresh = noTranscripts(fresh);
        current = noTranscripts(current);
      }
      expect(masked(current)).toBe(masked(fresh));
    });
  }

  it('covers every variable, key and command somewhere in the docs', () => {
    const all = docPages().map((page) => readFileSync(page, 'utf8')).join('\n');
    for (const variable of environmentVariables()) expect(all, variable.name).toContain(`\`${variable.name}\``);
    for (const row of pluginsTomlKeyRows()) expect(all, row.path).toContain(`\`${row.path}\``);
    for (const kind of ['env-vars', 'plugins-toml-keys']) expect(all, kind).toContain(`<!-- generated: ${kind} -->`);
    for (const command of ['replay', 'convert', 'validate', 'view', 'compare', 'doctor', 'demo']) expect(all, command).toContain(`<!-- generated: cli-flags ${command} -->`);
    for (const entry of ['nemo-relay-hooks', 'nemo-relay-hooks/hooks', 'nemo-relay-hooks/formats', 'nemo-relay-hooks/backend', 'nemo-relay-hooks/memory', 'nemo-relay-hooks/native', 'nemo-relay-hooks/testing']) {
      expect(all, entry).toContain(`<!-- generated: api ${entry} -->`);
    }
  });
});
