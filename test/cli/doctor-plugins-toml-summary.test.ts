// What `doctor` says a plugins.toml holds, followed as docs/operators/otlp.md
// writes the Collector example: the summary once named the ATOF sinks and
// ATIF but not the OpenTelemetry endpoints the document sends to, and a
// document whose every `enabled` was misspelt (only unknown-field warnings)
// ended "no errors" without saying the host would record nothing.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInProcess, expectNoStack, tempDir } from './support.ts';

/** The Collector example of docs/operators/otlp.md, against an endpoint nobody needs to answer. */
const COLLECTOR = [
  'version = 1',
  '',
  '[[components]]',
  'kind = "observability"',
  'enabled = true',
  '',
  '[components.config]',
  'version = 4',
  '',
  '[components.config.atof]',
  'enabled = true',
  '',
  '[[components.config.atof.sinks]]',
  'type = "file"',
  'output_directory = "./observability"',
  'filename = "events.jsonl"',
  '',
  '[components.config.opentelemetry]',
  'enabled = true',
  '',
  '[[components.config.opentelemetry.endpoints]]',
  'type = "gen_ai"',
  'endpoint = "http://127.0.0.1:9"',
  'service_name = "my-agent"',
  '',
  '[[components.config.opentelemetry.endpoints]]',
  'type = "openinference"',
  'endpoint = "http://127.0.0.1:6006/v1/traces"',
  '',
  '[components.config.opentelemetry.logs]',
  'enabled = true',
].join('\n');

async function doctor(toml: string) {
  const file = path.join(tempDir('nrh-doctor-summary-'), 'plugins.toml');
  fs.writeFileSync(file, toml);
  const text = await cliInProcess(['doctor', '--plugins-toml', file], { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory' } });
  const json = await cliInProcess(['doctor', '--plugins-toml', file, '--json'], { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory' } });
  expectNoStack(text.stdout + text.stderr + json.stderr);
  const report = JSON.parse(json.stdout) as { pluginsToml: { summary: string }; problems: { level: string; code: string; message: string }[] };
  return { file, text, report };
}

describe('doctor on what a plugins.toml sends and records', () => {
  it('names the OpenTelemetry endpoints, their conventions and the log destinations (one per endpoint)', async () => {
    const { file, text, report } = await doctor(COLLECTOR);
    const summary = 'observability: 1 ATOF file sink, ATIF off, 2 OTLP trace endpoints (gen_ai, openinference), 2 OTLP log destinations';
    expect(report.pluginsToml.summary).toBe(summary);
    expect(text.stdout).toContain(`plugins.toml  ${file}: valid (${summary})`);
    expect(report.problems.map((problem) => problem.code)).not.toContain('plugins_toml.records_nothing');
  });

  it('still names the OpenTelemetry endpoints when an ATIF store is skipped (its secret variable unset)', async () => {
    // A trial's doctor left out both gRPC endpoints, summary and reachability, while the host sent to them.
    const store = ['[components.config.atif]', 'enabled = true', '[[components.config.atif.storage]]', 'type = "s3"', 'bucket = "b"', 'secret_access_key_var = "NRH_DOCTOR_UNSET_SECRET"'];
    const at = COLLECTOR.indexOf('[components.config.opentelemetry]');
    const { report } = await doctor(`${COLLECTOR.slice(0, at)}${store.join('\n')}\n\n${COLLECTOR.slice(at)}`);
    expect(report.problems.map((problem) => [problem.level, problem.code])).toContainEqual(['warning', 'observability.unsupported_value']);
    expect(report.pluginsToml.summary).toBe('observability: 1 ATOF file sink, ATIF on, 2 OTLP trace endpoints (gen_ai, openinference), 2 OTLP log destinations');
  });

  it('names the other components the document runs (redaction, pricing), once each, and not a disabled one', async () => {
    const components = [
      '[[components]]',
      'kind = "pii_redaction"',
      '[components.config.builtin]',
      'action = "redact"',
      'detector = "email"',
      '',
      '[[components]]',
      'kind = "pricing"',
      '[[components.config.sources]]',
      'type = "inline"',
      '[components.config.sources.catalog]',
      'version = 1',
      '[[components.config.sources.catalog.entries]]',
      'provider = "openai"',
      'model_id = "gpt-4o-mini"',
      'pricing_as_of = "2026-06-01"',
      'pricing_source = "https://openai.com/api/pricing/"',
      'rates = { input_per_million = 0.15, output_per_million = 0.6 }',
      'prompt_cache = { read_accounting = "included_in_prompt_tokens" }',
      '',
      '[[components]]',
      'kind = "adaptive"',
      'enabled = false',
    ].join('\n');
    const { report } = await doctor(`${COLLECTOR}\n\n${components}`);
    expect(report.pluginsToml.summary).toBe('observability: 1 ATOF file sink, ATIF off, 2 OTLP trace endpoints (gen_ai, openinference), 2 OTLP log destinations; pii_redaction, pricing');
  });

  it('says a trace endpoint on plain http:// to another machine is skipped, why, and the fix; its derived logs are still counted', async () => {
    const file = path.join(tempDir('nrh-doctor-plaintext-'), 'plugins.toml');
    fs.writeFileSync(file, COLLECTOR.replace('endpoint = "http://127.0.0.1:9"', 'endpoint = "http://otel-collector:4318"'));
    const args = ['doctor', '--plugins-toml', file, '--offline'];
    const text = await cliInProcess(args, { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory' } });
    const json = await cliInProcess([...args, '--json'], { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory' } });
    const report = JSON.parse(json.stdout) as { ok: boolean; pluginsToml: { summary: string }; problems: { level: string; code: string; field?: string; message: string }[] };
    expect(report.pluginsToml.summary).toBe('observability: 1 ATOF file sink, ATIF off, 1 OTLP trace endpoint (openinference), 2 OTLP log destinations');
    expect(report.problems.map((p) => [p.level, p.code, p.field])).toEqual([['warning', 'observability.otel_endpoint_skipped', 'endpoints[0].endpoint']]);
    expect(report.problems[0]!.message).toContain('plain http:// to "otel-collector", another machine, which native refuses');
    expect(report.problems[0]!.message).toContain('its log records still go to http://otel-collector:4318/v1/logs');
    expect(report.ok).toBe(true);
    expect(text.stdout).toMatch(/warning observability\.otel_endpoint_skipped \(opentelemetry endpoints\[0\]\.endpoint\): [^\n]*fix: use https:\/\/, or a collector on this host \(http:\/\/localhost:4318\/\)/);
  });

  it('says a document whose sections are all off records nothing', async () => {
    const misspelt = COLLECTOR.replace(/^enabled = true$/gm, (line, offset: number) => (offset === COLLECTOR.indexOf('enabled = true') ? line : 'enabeld = true'));
    const { text, report } = await doctor(misspelt);
    expect(report.pluginsToml.summary).toBe('observability: 0 ATOF file sinks, ATIF off');
    const nothing = report.problems.find((problem) => problem.code === 'plugins_toml.records_nothing');
    expect(nothing?.level).toBe('warning');
    expect(nothing?.message).toContain('its observability component enables no output');
    expect(nothing?.message).toContain('nothing is recorded');
    expect(report.problems.filter((problem) => problem.code === 'observability.unknown_field')).toHaveLength(3);
    expect(text.stdout).toMatch(/warning plugins_toml\.records_nothing \(NEMO_RELAY_HOOKS_PLUGINS_TOML\): [^\n]*nothing is recorded/);
    expect(text.stdout).not.toContain('everything looks fine');
  });
});
