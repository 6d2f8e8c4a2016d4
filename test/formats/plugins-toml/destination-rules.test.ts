// Destinations that could never send get a clear diagnostic when the
// configuration is read (issue 23 items 14, 15, 16): header values HTTP
// clients refuse (non-Latin-1 text, CR/LF through header_env), port 0
// (which node:http sends to port 80), OTLP endpoints that are not http(s)
// URLs. Each such destination is skipped with its reason, the rest runs, and
// no message quotes a header value.
import { describe, expect, it } from 'vitest';
import { validatePluginConfig } from '../../../src/formats/plugins-toml/validate.ts';
import { observabilityDocument } from '../../support/plugins-toml.ts';
import { destinationUrlProblem, headerValueProblem } from '../../../src/shared/destination-rules.ts';
import { withProcessEnv } from '../../support/process-env.ts';

const SECRET = 'SECRET-e7c1';


const origin = 'http://127.0.0.1:4318';

describe('destination rules', () => {
  it('headerValueProblem and destinationUrlProblem', () => {
    expect(headerValueProblem('Bearer abc é')).toBeNull();
    expect(headerValueProblem('Bearer €')).toMatch(/Latin-1/);
    expect(headerValueProblem('Bearer x\r\nInjected: 1')).toMatch(/control character/);
    expect(destinationUrlProblem('http://127.0.0.1:4318/v1/traces', ['http:', 'https:'])).toBeNull();
    expect(destinationUrlProblem('http://127.0.0.1:0/v1/traces', ['http:', 'https:'])).toMatch(/port 0/);
    expect(destinationUrlProblem('localhost:4318', ['http:', 'https:'])).toMatch(/must use http or https/);
    expect(destinationUrlProblem('http//nohost', ['http:', 'https:'])).toBe('is not a URL');
  });

  it('each unusable destination is skipped with its reason, and no message quotes the header value', () => {
    withProcessEnv({ NRH_CRLF_TOKEN: `Bearer ${SECRET}\r\nInjected: 1` });
    const document = observabilityDocument({
      atof: {
        enabled: true,
        sinks: [
          { type: 'stream', url: 'http://127.0.0.1:0/events', transport: 'http_post' },
          { type: 'stream', url: `${origin}/events`, transport: 'http_post', header_env: { authorization: 'NRH_CRLF_TOKEN' } },
          { type: 'stream', url: `${origin}/events`, transport: 'ndjson', headers: { 'x-team': `caf€-${SECRET}` } },
          { type: 'stream', url: `${origin}/good`, transport: 'http_post' },
        ],
      },
      atif: {
        enabled: true,
        storage: [
          { type: 'http', endpoint: 'http://127.0.0.1:0/atif' },
          { type: 'http', endpoint: `${origin}/atif`, header_env: { authorization: 'NRH_CRLF_TOKEN' } },
        ],
      },
    });
    // Separately: a document with destination errors runs no OTLP endpoint at all.
    const otlp = observabilityDocument({
      opentelemetry: {
        enabled: true,
        endpoints: [
          { type: 'full', endpoint: 'http://127.0.0.1:0/v1/traces' },
          { type: 'gen_ai', endpoint: 'collector:4318', transport: 'http_binary' },
          // Over gRPC only: over HTTP such a value goes out as its UTF-8 bytes, as native sends it.
          { type: 'openinference', endpoint: `${origin}/a/v1/traces`, transport: 'grpc', headers: { authorization: `Bearer ${SECRET}€` } },
          { type: 'full', endpoint: `${origin}/b/v1/traces`, header_env: { authorization: 'NRH_CRLF_TOKEN' } },
          { type: 'gen_ai', endpoint: `${origin}/good/v1/traces` },
        ],
      },
    });
    const validation = validatePluginConfig(document);
    const otlpValidation = validatePluginConfig(otlp);
    const diagnostics = [...validation.diagnostics, ...otlpValidation.diagnostics];
    const fields = diagnostics.map((d) => `${d.component} ${d.field}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        'atof sinks[0].url',
        'atof sinks[1].header_env.authorization',
        'atof sinks[2].headers.x-team',
        'atif storage[0].endpoint',
        'atif storage[1].header_env.authorization',
        'opentelemetry endpoints[0].endpoint',
        'opentelemetry endpoints[1].endpoint',
        'opentelemetry endpoints[2].headers.authorization',
        'opentelemetry endpoints[3].header_env.authorization',
      ]),
    );
    expect(otlpValidation.diagnostics.every((d) => d.level === 'warning' && d.code === 'observability.otel_endpoint_skipped')).toBe(true);
    const text = JSON.stringify(diagnostics);
    expect(text).not.toContain(SECRET);
    expect(text).toMatch(/port 0/);
    expect(text).toMatch(/Latin-1/);
    expect(text).toMatch(/control character/);
    // What is left runs: the good sink and the good OTLP endpoint.
    const observability = validation.observability!;
    expect(observability.streamSinks.map((s) => s.url)).toEqual([`${origin}/good`]);
    expect(observability.storage).toEqual([]);
    expect(otlpValidation.observability!.opentelemetry.traces.map((t) => t.url)).toEqual([`${origin}/good/v1/traces`]);
  });
});
