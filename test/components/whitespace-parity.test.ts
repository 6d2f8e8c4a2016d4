// Text at the edges of "blank" and "whitespace", against native 0.9.2: Rust's
// trim and `char::is_whitespace` count U+0085 (NEXT LINE) and not U+FEFF
// (the byte-order mark), where JavaScript's trim and `\s` do the opposite.
// Each case below is one place where the memory relay asked JavaScript and
// so decided otherwise than native: redaction (the bearer_token mask, the
// Rust pattern reader's verbose mode and counts), price catalog lookups and
// plugins.toml validation. Every expectation is native's own answer.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { validatePluginConfig } from '../../src/formats/index.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { runComponents, type ComponentRunResult, type Script } from '../support/component-run.ts';
import { nativeSanitize, oursSanitize } from '../support/random-redaction.ts';
import { nativePlugin } from '../support/native-driver.ts';
import { Draw } from '../support/seeded-random.ts';

/** The whitespace classes where the two rules part, and a few where they agree. */
const EDGES: Record<string, string> = { space: ' ', vt: '\v', nel: '\u0085', nbsp: '\u00a0', ideographic: '\u3000', bom: '\ufeff', mvs: '\u180e' };

if (!nativeAvailable) console.warn(`whitespace parity skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

describe.skipIf(!nativeAvailable)('whitespace as native reads it: redaction', () => {
  const same = async (config: Record<string, unknown>, values: Json[]) => {
    const native = await nativeSanitize(config, values);
    const ours = oursSanitize(config, values);
    if ('refused' in native) expect('refused' in ours, `native refused: ${native.refused}`).toBe(true);
    else expect(ours).toEqual(native);
  };

  it('bearer_token masks the token after any whitespace native splits at (U+0085 included)', async () => {
    const values = Object.values(EDGES).flatMap((w) => [`x Bearer${w}abcdefghijklmnop123 y`, `Bearer ${w}abcdefghijklmnop123`]);
    await same({ builtin: { detector: 'bearer_token', action: 'mask' } }, values);
  });

  it('reads random verbose patterns of every whitespace class as native does (40 seeds)', async () => {
    const SPACES = Object.values(EDGES).concat(['\t', '\n', '\u2028', '\u3000', '\u200b']);
    for (let seed = 1; seed <= 40; seed++) {
      const d = new Draw(seed);
      const piece = (): string => {
        const roll = d.int(0, 5);
        if (roll === 0) return `[a${d.pick(SPACES)}b]`;
        if (roll === 1) return `{${d.pick(SPACES)}${d.int(1, 2)}${d.pick(SPACES)}}`;
        return roll === 2 ? d.pick(SPACES) : d.pick(['a', 'b', 'ab']);
      };
      const pattern = `${d.pick(['(?x)', '(?x)', ''])}a${Array.from({ length: d.int(1, 5) }, piece).join('')}`;
      const values = Array.from({ length: 6 }, () => Array.from({ length: d.int(1, 6) }, () => d.pick(['a', 'b', ...SPACES])).join(''));
      const config = { builtin: { pattern, action: 'redact', replacement: '<R>' } };
      const native = await nativeSanitize(config, values);
      const ours = oursSanitize(config, values);
      if ('refused' in native) expect('refused' in ours, `seed ${seed} ${JSON.stringify(pattern)}: native refused (${native.refused})`).toBe(true);
      else expect(ours, `seed ${seed} ${JSON.stringify(pattern)}`).toEqual(native);
    }
  });

  for (const [name, w] of Object.entries(EDGES)) {
    it(`a Rust pattern's verbose mode and counts skip ${name} as regex-syntax does`, async () => {
      await same({ builtin: { pattern: `(?x)a${w}b`, action: 'redact', replacement: '<R>' } }, ['ab', `a${w}b`]);
      await same({ builtin: { pattern: `(?x)[a${w}]`, action: 'redact', replacement: '<R>' } }, [`a${w}b`]);
      await same({ builtin: { pattern: `a{${w}2${w}}`, action: 'redact', replacement: '<R>' } }, ['aa', 'a']);
    });
  }
});

describe.skipIf(!nativeAvailable)('whitespace as native reads it: price catalog lookups', () => {
  const entry = (model: string, extra = '') =>
    ['[[components.config.sources.catalog.entries]]', 'provider = "openai"', `model_id = ${JSON.stringify(model)}`, 'pricing_as_of = "2026-01-01"', 'pricing_source = "test"', extra, 'rates = { input_per_million = 1.0, output_per_million = 2.0 }', 'prompt_cache = { read_accounting = "included_in_prompt_tokens" }', ''].join('\n');
  const aliases = Object.entries(EDGES).map(([name, w]) => JSON.stringify(`${w}alias-${name}${w}`));
  const catalog = ['[[components]]', 'kind = "pricing"', '[components.config]', '[[components.config.sources]]', 'type = "inline"', '[components.config.sources.catalog]', 'version = 1', entry('edge-model'), entry('aliased', `aliases = [${aliases.join(', ')}]`)].join('\n');
  const models = Object.entries(EDGES).flatMap(([name, w]) => [`${w}edge-model${w}`, `vendor/${w}edge-model${w}`, `alias-${name}`]);
  const chat = (model: string): Json => ({ id: 'r', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1000, completion_tokens: 100 } });
  const script: Script = ({ hooks }) => {
    hooks.emit('on_session_start', { session_id: 's1', model: 'x', platform: 'cli' } as never);
    models.forEach((model, i) => {
      const base = { session_id: 's1', turn_id: 't1', api_request_id: `t1:api:${i + 1}`, model, provider: 'openai' };
      hooks.emit('pre_api_request', { ...base, request: { body: { model, messages: [{ role: 'user', content: `call ${i}` }] } } } as never);
      hooks.emit('post_api_request', { ...base, response: chat(model), finish_reason: 'stop' } as never);
    });
    hooks.emit('on_session_finalize', { session_id: 's1' } as never);
  };
  const costs = (run: ComponentRunResult) => [...run.trajectories.values()][0]!.steps.filter((s) => s.source === 'agent').map((s) => s.metrics?.cost_usd);

  it('trims model names and aliases as Rust does before it compares them', async () => {
    const [memory, native] = (await Promise.all(FILE_BACKENDS.map((b) => runComponents(b.create(), { components: catalog, script })))) as [ComponentRunResult, ComponentRunResult];
    expect(native.problems).toEqual([]);
    expect(memory.problems).toEqual([]);
    const nativeCosts = costs(native);
    // Both rules are exercised: native prices U+0085 at the edges and not U+FEFF.
    expect(nativeCosts.filter((cost) => cost === undefined).length).toBeGreaterThan(0);
    expect(Object.fromEntries(models.map((model, i) => [model, costs(memory)[i]]))).toEqual(Object.fromEntries(models.map((model, i) => [model, nativeCosts[i]])));
  });
});

describe.skipIf(nativePlugin === null)('whitespace as native reads it: plugins.toml validation', () => {
  const obs = (config: unknown) => ({ version: 1, components: [{ kind: 'observability', enabled: true, config }] });
  const otlp = (endpoint: Record<string, unknown>) => obs({ version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'full', ...endpoint }] } });
  // An endpoint native's validate() takes but its activation refuses (a URL with a no-break space at an edge): the
  // memory relay's validation says it will skip it, a warning of its own (docs/operators/otlp.md).
  const MEMORY_ONLY = new Set(['observability.backend_unsupported', 'plugin.backend_unsupported_component', 'observability.otel_endpoint_skipped']);
  const documents = (w: string): Record<string, unknown> => ({
    'a stream sink name': obs({ version: 4, atof: { enabled: true, sinks: [{ type: 'stream', name: `${w}sink`, url: 'http://127.0.0.1:1/x' }] } }),
    'a stream sink URL': obs({ version: 4, atof: { enabled: true, sinks: [{ type: 'stream', name: 'sink', url: `${w}http://127.0.0.1:1/x${w}` }] } }),
    'an S3 bucket': obs({ version: 4, atif: { enabled: true, output_directory: '/tmp/x', storage: [{ type: 's3', bucket: w }] } }),
    'an OTLP endpoint': otlp({ endpoint: w }),
    'an OTLP endpoint around a URL': otlp({ endpoint: `${w}http://127.0.0.1:1${w}` }),
    'a metadata promotion prefix': otlp({ endpoint: 'http://127.0.0.1:1', promote_metadata_prefixes: [w] }),
    'a guardrails endpoint': { version: 1, components: [{ kind: 'nemo_guardrails', enabled: true, config: { version: 1, mode: 'remote', remote: { endpoint: w, config_id: 'c' } } }] },
  });
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])])) : value;

  for (const [name, w] of Object.entries(EDGES)) {
    for (const [what, document] of Object.entries(documents(w))) {
      // U+FEFF and U+180E are no whitespace to native: an endpoint made of them passes validation there, and the
      // memory relay warns that it skips it (it is no URL), a warning of its own.
      if (what.startsWith('an OTLP endpoint') && (name === 'bom' || name === 'mvs')) continue;
      it(`${what} with ${name}: native's diagnostics`, () => {
        const ours = validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code));
        expect(sorted(ours)).toEqual(sorted(nativePlugin!.validate(document).config.diagnostics));
      });
    }
  }

  // Native checks promoted prefixes and attribute mappings by its own rules (surrounding whitespace by Rust's trim,
  // blank as White_Space, control and format characters) and names them as Rust's `{:?}` writes a string.
  const PREFIXES: unknown[][] = [[' a'], ['a\u0085'], ['a\u00a0'], ['\ufeffa'], ['a*'], ['a', 'a'], ['a', 'a.'], ['a..b'], ['.a'], ['a.'], ['a-b_c.d9'], ['é'], ['a b'], ['x\u200bz'], ['\u0001'], ['\u00ad'], ['a\u0301 '], ['"q\\"\t '], ['a', ' b']];
  const MAPPINGS: unknown[][] = [
    [{ key: ' ', alias: 'x' }],
    [{ key: '\ufeff', alias: 'x' }],
    [{ key: 'a', alias: '\u00ad' }],
    [{ key: 'a', alias: 'x' }, { key: 'b', alias: ' x\u0085' }],
    [{ key: 'a', alias: 'x' }, { key: 'b', alias: '\ufeffx' }],
    [{ key: 'a', alias: 'é\u0301"\\\t' }],
  ];
  for (const prefixes of PREFIXES) {
    it(`metadata promotion prefixes ${JSON.stringify(prefixes)}: native's diagnostics`, () => {
      const document = otlp({ endpoint: 'http://127.0.0.1:1', promote_metadata_prefixes: prefixes });
      expect(sorted(validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code)))).toEqual(sorted(nativePlugin!.validate(document).config.diagnostics));
    });
  }
  for (const mappings of MAPPINGS) {
    it(`attribute mappings ${JSON.stringify(mappings)}: native's diagnostics`, () => {
      const document = otlp({ endpoint: 'http://127.0.0.1:1', attribute_mappings: mappings });
      expect(sorted(validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code)))).toEqual(sorted(nativePlugin!.validate(document).config.diagnostics));
    });
  }
  it("reports an endpoint's problems in native's order", () => {
    const document = otlp({ endpoint: ' ', transport: 'bad', headers: { a: '1' }, header_env: { a: 'HOME' }, promote_metadata_prefixes: [' '], attribute_mappings: [{ key: ' ', alias: 'x' }], max_export_batch_size: 5000, max_queue_size: 10 });
    const fields = (list: readonly unknown[]) => list.map((d) => (d as { field?: string }).field);
    expect(fields(validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code)))).toEqual(fields(nativePlugin!.validate(document).config.diagnostics));
  });
});

describe.skipIf(nativePlugin === null)('whitespace as native reads it: random plugins.toml fields', () => {
  // Texts from every whitespace class, format and control characters, a combining mark and a few ASCII ones,
  // in the fields native trims or calls blank: an OTLP endpoint, its prefixes and mappings, stream sinks' names
  // and URLs (one name repeated), an S3 bucket. Header names are left out: native checks their syntax, which
  // the memory relay does not (yet) for OTLP endpoints.
  const ALPHABET = [' ', '\t', '\v', '\f', '\n', '\u0085', '\u00a0', '\u1680', '\u2000', '\u2028', '\u202f', '\u205f', '\u3000', '\ufeff', '\u180e', '\u200b', '\u0001', '\u00ad', '\u0301', 'a', 'b', '.', '-', '_', '*', '"', '\\', 'é', '/', ':'];
  const text = (d: Draw, lo = 0, hi = 4) => Array.from({ length: d.int(lo, hi) }, () => d.pick(ALPHABET)).join('');
  const word = (d: Draw) => (d.chance(0.5) ? text(d) : `${text(d, 0, 2)}ab${text(d, 0, 2)}`);
  const url = (d: Draw, path: string) => (d.chance(0.5) ? `${text(d, 0, 2)}http://127.0.0.1:1${path}${text(d, 0, 2)}` : word(d));
  const documentOf = (seed: number) => {
    const d = new Draw(seed);
    const endpoint: Record<string, unknown> = { type: 'full', endpoint: url(d, '') };
    if (d.chance(0.7)) endpoint.promote_metadata_prefixes = Array.from({ length: d.int(1, 3) }, () => word(d));
    if (d.chance(0.7)) endpoint.attribute_mappings = Array.from({ length: d.int(1, 3) }, () => ({ key: word(d), alias: word(d) }));
    const sinks = Array.from({ length: d.int(1, 2) }, () => ({
      type: 'stream',
      ...(d.chance(0.2) ? { transport: d.pick(['websocket', 'bad', 'ndjson']) } : {}),
      name: d.chance(0.4) ? 'same\u0085x' : word(d),
      url: url(d, '/x'),
    }));
    return {
      version: 1,
      components: [{ kind: 'observability', enabled: true, config: { version: 4, opentelemetry: { enabled: true, endpoints: [endpoint] }, atof: { enabled: true, sinks }, atif: { enabled: true, output_directory: '/tmp/x', storage: [{ type: 's3', bucket: word(d) }] } } }],
    };
  };
  // The memory relay's own warning that it skips an endpoint no URL parser reads (native validates it and fails later).
  const OURS_ONLY = new Set(['observability.backend_unsupported', 'plugin.backend_unsupported_component', 'observability.otel_endpoint_skipped']);
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])])) : value;

  it("gives native's diagnostics for 300 seeds", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const document = documentOf(seed);
      const ours = validatePluginConfig(document).diagnostics.filter((d) => !OURS_ONLY.has(d.code));
      expect(sorted(ours), `seed ${seed}: ${JSON.stringify(document)}`).toEqual(sorted(nativePlugin!.validate(document).config.diagnostics));
    }
  });
});
