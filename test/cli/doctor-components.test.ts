// doctor on plugins.toml components beyond observability, on the in-memory
// relay: a component it does not run (nemo_guardrails) is a visible warning,
// never an info line; a document that asks for pii_redaction and cannot be
// used is an error that says nothing will be written (fail closed).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, expectNoStack, tempDir } from './support.ts';

function doctor(components: string) {
  const dir = tempDir('nrh-doctor-components-');
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(file, ['version = 1', '', '[[components]]', 'kind = "observability"', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true', '[[components.config.atof.sinks]]', 'type = "file"', 'output_directory = "out"', 'filename = "events.jsonl"', '', components].join('\n'));
  return cli(['doctor'], { cwd: dir, env: { NEMO_RELAY_HOOKS_BACKEND: 'memory', NEMO_RELAY_HOOKS_PLUGINS_TOML: file } });
}

describe('doctor and plugins.toml components on the in-memory relay', () => {
  it('warns that nemo_guardrails is not run here', () => {
    const result = doctor(
      ['[[components]]', 'kind = "nemo_guardrails"', '[components.config]', 'codec = "openai_chat"', '[components.config.remote]', 'endpoint = "http://127.0.0.1:9"', 'config_id = "probe"'].join('\n'),
    );
    expectNoStack(result.stdout + result.stderr);
    expect(result.stdout).toMatch(/warning plugin\.backend_unsupported_component[^\n]*nemo_guardrails[^\n]*not run by the in-memory relay/);
  });

  it('fails on an unusable pii_redaction, saying nothing will be written', () => {
    const result = doctor(['[[components]]', 'kind = "pii_redaction"', '[components.config.builtin]', 'action = "redact"', 'pattern = "("'].join('\n'));
    expectNoStack(result.stdout + result.stderr);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(/error pii_redaction\.unsupported_value[^\n]*invalid builtin matcher regex/);
    expect(result.stdout).toMatch(/error plugins_toml\.outputs_withheld[^\n]*nothing is written/);
  });

  it('fails on a pii_redaction whose enabled is not a boolean: the document is refused, and the fallback would not redact', () => {
    const result = doctor(['[[components]]', 'kind = "pii_redaction"', 'enabled = "yes"', '[components.config.builtin]', 'action = "hash"'].join('\n'));
    expectNoStack(result.stdout + result.stderr);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(/error plugins_toml\.outputs_withheld[^\n]*nothing is written/);
  });

  it('fails on a document that is not TOML and names pii_redaction, saying nothing will be written', () => {
    const result = doctor(['[[components]]', 'kind = "pii_redaction"', '[components.config.builtin]', 'action = = "hash"'].join('\n'));
    expectNoStack(result.stdout + result.stderr);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(/error plugins_toml\.invalid_toml[^\n]*names pii_redaction, so nothing is written/);
    expect(result.stdout).toMatch(/error plugins_toml\.outputs_withheld[^\n]*nothing is written/);
  });

  // Documents the relay refuses although they plainly ask for redaction: the plugin withholds every output, so doctor
  // lists none of the environment's exporters it would otherwise fall back to.
  for (const [name, text, refusal] of [
    ['[components] written for [[components]]', '[components]\nkind = "pii_redaction"\n[components.config.builtin]\naction = "hash"', /error plugin\.invalid_config[^\n]*invalid type: map, expected a sequence/],
    ['components = "pii_redaction"', 'components = "pii_redaction"', /error plugin\.invalid_config[^\n]*invalid type: string/],
    ['a misspelt kind (pii-redaction)', '[[components]]\nkind = "pii-redaction"', /error plugin\.unregistered_component \(pii-redaction\)[^\n]*both backends reject the document/],
    ['[[component]] for [[components]]', '[[component]]\nkind = "pii_redaction"', /error plugins_toml\.redaction_not_run \(pii_redaction\)[^\n]*no redaction would run/],
  ] as const) {
    it(`fails on ${name}, says nothing will be written, and lists no fallback exporter`, async () => {
      const file = path.join(tempDir('nrh-doctor-components-'), 'plugins.toml');
      fs.writeFileSync(file, `version = 1\n\n${text}\n`);
      const result = await cliInProcess(['doctor', '--offline'], { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory', NEMO_RELAY_HOOKS_PLUGINS_TOML: file, NEMO_RELAY_HOOKS_ATOF_ENABLED: 'true' } });
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toMatch(refusal);
      expect(result.stdout).toMatch(/error plugins_toml\.outputs_withheld[^\n]*nothing is written/);
      expect(result.stdout).not.toMatch(/ATOF →/);
    });
  }

  it('fails on a kind no relay registers, and lists the exporters the plugin falls back to (no redaction was asked for)', async () => {
    const file = path.join(tempDir('nrh-doctor-components-'), 'plugins.toml');
    fs.writeFileSync(file, 'version = 1\n[[components]]\nkind = "frob"\n');
    const result = await cliInProcess(['doctor', '--offline'], { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory', NEMO_RELAY_HOOKS_PLUGINS_TOML: file, NEMO_RELAY_HOOKS_ATOF_ENABLED: 'true' } });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout).toMatch(/error plugin\.unregistered_component \(frob\)/);
    expect(result.stdout).not.toContain('outputs_withheld');
    expect(result.stdout).toMatch(/ATOF →/);
  });

  it('is quiet about components it runs (redaction, pricing, the response cache)', () => {
    const result = doctor(
      [
        '[[components]]',
        'kind = "pii_redaction"',
        '[components.config.builtin]',
        'action = "redact"',
        'detector = "email"',
        '[[components]]',
        'kind = "adaptive"',
        '[components.config.response_cache]',
        'namespace = "team"',
      ].join('\n'),
    );
    expect(result.stdout).not.toContain('backend_unsupported_component');
    expect(result.stdout).not.toMatch(/^\s*error /m);
  });
});
