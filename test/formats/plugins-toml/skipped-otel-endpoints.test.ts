// The OpenTelemetry endpoints the memory relay's reading skips are taken
// out of the document before a backend sees it (native would reject the
// whole document for most of them), leaving a document both backends
// accept: the other endpoints stay, and a logs table or an OpenTelemetry
// section left with no endpoint is turned off rather than refused. A trace
// endpoint native sends no trace to (plain http:// off this machine) stays
// when logs derive from it: native sends those.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/shared/json.ts';
import { validatePluginConfig } from '../../../src/formats/plugins-toml/validate.ts';
import { OTEL_ENDPOINT_SKIPPED, withoutOtelEndpoints } from '../../../src/formats/plugins-toml/skipped-otel-endpoints.ts';
import { activatableDocument } from '../../../src/plugin/document-checks.ts';
import { isPlaintextRemote } from '../../../src/shared/destination-rules.ts';

// A variable no environment of the suite sets.
const UNSET = 'NRH_OTEL_PRUNE_TEST_NEVER_SET';

function documentWith(opentelemetry: JsonObject): JsonObject {
  return {
    version: 1,
    components: [
      { kind: 'observability', config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', output_directory: '/tmp/nrh-otel-prune', filename: 'e.jsonl' }] }, opentelemetry } },
    ],
  };
}

const otelOf = (document: JsonObject) => ((document.components as JsonObject[])[0]!.config as JsonObject).opentelemetry as JsonObject;
const errors = (document: JsonObject) => validatePluginConfig(document).diagnostics.filter((d) => d.level === 'error');
const skippedOf = (document: JsonObject) => validatePluginConfig(document).diagnostics.filter((d) => d.code === OTEL_ENDPOINT_SKIPPED);

describe('OpenTelemetry endpoints skipped before activation', () => {
  it('takes out only the endpoint whose header_env variable is unset; the other one stays and is sent to', () => {
    const document = documentWith({
      enabled: true,
      endpoints: [
        { type: 'gen_ai', endpoint: 'http://127.0.0.1:9/a', header_env: { authorization: UNSET } },
        { type: 'full', endpoint: 'http://127.0.0.1:9/b' },
      ],
    });
    const { document: activated, skipped } = activatableDocument(document);
    expect(skipped.map((d) => [d.level, d.field])).toEqual([['warning', 'endpoints[0].header_env.authorization']]);
    expect(skipped[0]!.message).toContain(`fix: set ${UNSET}`);
    expect(otelOf(activated)).toEqual({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:9/b' }] });
    expect(errors(activated)).toEqual([]);
    expect(validatePluginConfig(activated).observability?.opentelemetry.traces.map((t) => t.url)).toEqual(['http://127.0.0.1:9/b']);
  });

  it('turns the section off, and the logs derived from it, when its only endpoint is skipped: the ATOF file still activates', () => {
    const document = documentWith({ enabled: true, endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9', header_env: { authorization: UNSET } }], logs: { enabled: true } });
    const activated = withoutOtelEndpoints(document, skippedOf(document));
    expect(otelOf(activated)).toEqual({ enabled: false, endpoints: [], logs: { enabled: false } });
    expect(errors(activated)).toEqual([]);
    expect(validatePluginConfig(activated).observability?.fileSinks).toHaveLength(1);
  });

  it('takes out a log endpoint of its own, and turns logs off when none is left, keeping the trace endpoint', () => {
    const document = documentWith({
      enabled: true,
      endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9' }],
      logs: { enabled: true, endpoints: [{ endpoint: 'http://127.0.0.1:9/logs', header_env: { authorization: UNSET } }] },
    });
    expect(skippedOf(document).map((d) => d.field)).toEqual(['logs.endpoints[0].header_env.authorization']);
    const activated = withoutOtelEndpoints(document, skippedOf(document));
    expect(otelOf(activated)).toEqual({ enabled: true, endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9' }], logs: { enabled: false, endpoints: [] } });
    expect(errors(activated)).toEqual([]);
  });

  it('keeps the section on for a metrics table with endpoints of its own, and turns off one that derives from the traces', () => {
    const own = documentWith({ enabled: true, endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9', header_env: { authorization: UNSET } }], metrics: { enabled: true, endpoints: [{ endpoint: 'http://127.0.0.1:9/m' }] } });
    expect(otelOf(withoutOtelEndpoints(own, skippedOf(own)))).toMatchObject({ enabled: true, endpoints: [], metrics: { enabled: true } });
    const derived = documentWith({ enabled: true, endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9', header_env: { authorization: UNSET } }], metrics: { enabled: true } });
    const activated = withoutOtelEndpoints(derived, skippedOf(derived));
    expect(otelOf(activated)).toEqual({ enabled: false, endpoints: [], metrics: { enabled: false } });
    expect(errors(activated)).toEqual([]);
  });

  // Measured on native 0.9.2 (initialize() of a document with an ATOF sink and that one trace endpoint).
  it("refuses plain http:// trace endpoints off this machine by native's rule, host as the URL parser gives it", () => {
    const refused = ['http://otlp.example.test:4318/v1/traces', 'http://10.0.0.5:4318', 'http://otelcol', 'HTTP://otelcol:4318', 'http://user:pw@otelcol:4318', 'http://localhost.:4318',
      'http://foo.localhost:4318', 'http://0.0.0.0:4318', 'http://[::]:4318', 'http://[::ffff:127.0.0.1]:4318', 'http://127.0.0.1.nip.io'];
    const taken = ['http://127.0.0.1:4318', 'http://127.9.8.7:4318', 'http://localhost:4318', 'http://LOCALHOST:4318', 'http://[::1]:4318', 'http://[0:0:0:0:0:0:0:1]:4318',
      'http://127.1:4318', 'http://2130706433:4318', 'http://0x7f000001', 'HTTP://127.0.0.1:4318', 'https://otelcol:4318'];
    expect(refused.filter((url) => !isPlaintextRemote(url))).toEqual([]);
    expect(taken.filter(isPlaintextRemote)).toEqual([]);
  });

  it('takes out a plain-http:// remote trace endpoint, gRPC too, and turns the section off when it was the only one', () => {
    for (const transport of ['http_binary', 'grpc']) {
      const document = documentWith({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://otel-collector:4318', transport }] });
      const { document: activated, skipped } = activatableDocument(document);
      expect(skipped.map((d) => [d.level, d.field])).toEqual([['warning', 'endpoints[0].endpoint']]);
      expect(skipped[0]!.message).toContain('fix: use https://, or a collector on this host (http://localhost:4318/)');
      expect(otelOf(activated)).toEqual({ enabled: false, endpoints: [] });
      expect(errors(activated)).toEqual([]);
    }
  });

  it('keeps a plain-http:// remote trace endpoint its logs derive from (native sends them), and takes it out when logs have endpoints of their own', () => {
    const derived = documentWith({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://otel-collector:4318/v1/traces' }], logs: { enabled: true } });
    const kept = activatableDocument(derived);
    expect(kept.skipped.map((d) => d.field)).toEqual(['endpoints[0].endpoint']);
    expect(kept.document).toEqual(derived);
    const settings = validatePluginConfig(kept.document).observability?.opentelemetry;
    expect(settings?.traces).toEqual([]);
    expect(settings?.logs.map((l) => l.url)).toEqual(['http://otel-collector:4318/v1/logs']);
    // A path logs cannot derive from: nothing of it is sent, so it goes.
    const underived = documentWith({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://otel-collector:4318/otlp' }], logs: { enabled: true } });
    expect(otelOf(activatableDocument(underived).document)).toEqual({ enabled: false, endpoints: [], logs: { enabled: false } });
    const own = documentWith({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://otel-collector:4318' }], logs: { enabled: true, endpoints: [{ endpoint: 'http://logs.example.test:4318' }] } });
    expect(otelOf(activatableDocument(own).document)).toEqual({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ endpoint: 'http://logs.example.test:4318' }] } });
    // Another reason to skip it first (native refuses the whole document for a path with a space): it goes.
    const spaced = documentWith({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://otel-collector:4318/a b/v1/traces' }], logs: { enabled: true } });
    expect(otelOf(activatableDocument(spaced).document)).toMatchObject({ enabled: false, endpoints: [] });
  });

  it('gives back the document itself when nothing is skipped', () => {
    const document = documentWith({ enabled: true, endpoints: [{ type: 'gen_ai', endpoint: 'http://127.0.0.1:9' }] });
    expect(skippedOf(document)).toEqual([]);
    expect(withoutOtelEndpoints(document, [])).toBe(document);
  });
});
