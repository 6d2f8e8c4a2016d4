// The plugins.toml document model: one meaning of a component's `enabled`,
// shared by the plugin's readers, the memory relay's validator and doctor,
// and the same as native's.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/shared/json.ts';
import {
  componentEnabled,
  enabledComponents,
  observabilityExporterEnabled,
  outputDirectories,
  staticPluginDocument,
} from '../../src/formats/plugins-toml/document.ts';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { nativePlugin, nativeUnavailable } from '../support/native-driver.ts';

const ABSENT = Symbol('absent');
const VALUES: readonly (JsonObject[string] | typeof ABSENT)[] = [ABSENT, true, false, 0, 1, '', 'yes'];

function documentWith(enabled: JsonObject[string] | typeof ABSENT): JsonObject {
  const component: JsonObject = {
    kind: 'observability',
    config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', output_directory: '/tmp/nrh-enabled', filename: 'e.jsonl', mode: 'overwrite' }] } },
  };
  if (enabled !== ABSENT) component.enabled = enabled;
  return { version: 1, components: [component] };
}

const label = (value: unknown) => (value === ABSENT ? 'absent' : JSON.stringify(value));

/** What our validator makes of the document: rejected, or the component on or off. */
function ours(document: JsonObject): 'rejected' | 'on' | 'off' {
  const validation = validatePluginConfig(document);
  if (validation.shapeError !== undefined) return 'rejected';
  return validation.observability !== null ? 'on' : 'off';
}

describe('a component\'s enabled', () => {
  it('is on when absent or true, and off for false and for anything that is not a boolean', () => {
    expect(VALUES.map((value) => [label(value), componentEnabled((documentWith(value).components as JsonObject[])[0]!)])).toEqual([
      ['absent', true],
      ['true', true],
      ['false', false],
      ['0', false],
      ['1', false],
      ['""', false],
      ['"yes"', false],
    ]);
  });

  it('means the same to the plugin\'s readers and to the validator: a value that is not a boolean is rejected, and creates no folder', () => {
    for (const value of VALUES) {
      const document = documentWith(value);
      const verdict = ours(document);
      expect(verdict, label(value)).toBe(value === ABSENT || value === true ? 'on' : value === false ? 'off' : 'rejected');
      const readAsOn = enabledComponents(document, 'observability').length === 1;
      expect(readAsOn, label(value)).toBe(verdict === 'on');
      expect(observabilityExporterEnabled(document, 'atof'), label(value)).toBe(verdict === 'on');
      expect(outputDirectories(document), label(value)).toEqual(verdict === 'on' ? ['/tmp/nrh-enabled'] : []);
    }
  });

  it.skipIf(nativePlugin === null)(`is read as native reads it${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
    for (const value of VALUES) {
      const document = documentWith(value);
      let native: 'rejected' | 'on' | 'off';
      try {
        const validated = nativePlugin!.validate(document) as { resolved_config?: { components?: { enabled?: boolean }[] } };
        native = validated.resolved_config?.components?.[0]?.enabled === false ? 'off' : 'on';
      } catch (error) {
        native = 'rejected';
        expect(validatePluginConfig(document).shapeError, label(value)).toBe((error as Error).message);
      }
      expect(ours(document), label(value)).toBe(native);
    }
  });
});

describe('the document a relay is given', () => {
  it('leaves out Hermes\' [[dynamic_plugins]] and the gateway-only [plugins] table, and keeps the rest', () => {
    const document: JsonObject = { version: 1, components: [], policy: { unknown_field: 'warn' }, dynamic_plugins: [], plugins: {} };
    expect(staticPluginDocument(document)).toEqual({ version: 1, components: [], policy: { unknown_field: 'warn' } });
  });
});
