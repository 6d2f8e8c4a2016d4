// A gen_ai endpoint's spans are the GenAI conventions' attributes only: neither
// backend applies its attribute_mappings or sends marks as spans there
// (test/export/otlp-native-parity.test.ts). A setting that does nothing is
// named in a warning, once per setting, and the endpoint still runs.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/shared/json.ts';
import { validatePluginConfig } from '../../../src/formats/plugins-toml/validate.ts';

function documentWith(endpoint: JsonObject): JsonObject {
  return { version: 1, components: [{ kind: 'observability', config: { version: 4, opentelemetry: { enabled: true, endpoints: [endpoint] } } }] };
}

const MAPPING = [{ key: 'openinference.metadata.provider', alias: 'llm.provider' }];
const ignoredOf = (endpoint: JsonObject) => {
  const validation = validatePluginConfig(documentWith(endpoint));
  return { ignored: validation.diagnostics.filter((d) => d.code === 'observability.ignored_on_gen_ai'), validation };
};

describe('settings a gen_ai endpoint does not apply', () => {
  it('names attribute_mappings and mark_projection = "tool" on a gen_ai endpoint, and the endpoint still runs', () => {
    const { ignored, validation } = ignoredOf({ type: 'gen_ai', endpoint: 'http://127.0.0.1:9', attribute_mappings: MAPPING, mark_projection: 'tool' });
    expect(ignored.map((d) => [d.level, d.field])).toEqual([
      ['warning', 'endpoints[0].attribute_mappings'],
      ['warning', 'endpoints[0].mark_projection'],
    ]);
    expect(ignored[0]!.message).toContain('does not apply its attribute_mappings on either backend');
    expect(ignored[1]!.message).toContain('sends no marks');
    expect(validation.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    expect(validation.observability?.opentelemetry.traces.map((t) => t.type)).toEqual(['gen_ai']);
  });

  it.each(['openinference', 'full'])('says nothing of the same settings on a %s endpoint, which applies them', (type) => {
    expect(ignoredOf({ type, endpoint: 'http://127.0.0.1:9', attribute_mappings: MAPPING, mark_projection: 'tool' }).ignored).toEqual([]);
  });

  it('says nothing of a gen_ai endpoint that sets neither (an empty mapping list, marks as events)', () => {
    expect(ignoredOf({ type: 'gen_ai', endpoint: 'http://127.0.0.1:9', attribute_mappings: [], mark_projection: 'event' }).ignored).toEqual([]);
  });
});
