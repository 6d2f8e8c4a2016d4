// A runtime that refuses environment reads (Deno without --allow-env throws
// NotCapable on each one) must not make plugins.toml validation throw: the
// OpenTelemetry section reads header_env and OTEL_* variables from the
// process environment, and a refused read is an unset variable.
import { describe, expect, it } from 'vitest';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { refusingEnv } from '../support/refusing-env.ts';
import { observabilityDocument } from '../support/plugins-toml.ts';

function withRefusedEnv<T>(run: () => T): T {
  const saved = process.env;
  process.env = refusingEnv() as NodeJS.ProcessEnv;
  try {
    return run();
  } finally {
    process.env = saved;
  }
}

const document = observabilityDocument({
  opentelemetry: {
    enabled: true,
    endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9/v1/traces', transport: 'http_binary', header_env: { authorization: 'NRH_TEST_TOKEN' } }],
  },
});

describe('plugins.toml validation when the runtime refuses environment reads', () => {
  it('does not throw; a header_env variable it may not read counts as unset and skips that endpoint', () => {
    const validation = withRefusedEnv(() => validatePluginConfig(document));
    expect(validation.diagnostics.map((d) => [d.code, d.field])).toContainEqual(['observability.otel_endpoint_skipped', 'endpoints[0].header_env.authorization']);
    expect(validation.observability?.opentelemetry.traces).toEqual([]);
  });
});
