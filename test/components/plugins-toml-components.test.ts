// The plugins.toml components beyond observability (pii_redaction, pricing,
// adaptive, nemo_guardrails) are validated on the memory relay with the
// same diagnostics as native's validate(): codes, levels, fields, messages
// and order, for valid and invalid configurations alike.
import { describe, expect, it } from 'vitest';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { nativePlugin, nativeUnavailable } from '../support/native-driver.ts';

const component = (kind: string) => (config: unknown, extra: Record<string, unknown> = {}) => ({ version: 1, components: [{ kind, config, ...extra }] });
const pii = component('pii_redaction');

/** pii_redaction configurations, valid and not. */
const PII_CASES: unknown[] = [
  pii({"builtin": {"action": "redact", "detector": "email", "unmasked_prefix": -1}}),
  pii({"priority": "high", "builtin": {"action": "redact", "detector": "email"}}),
  pii({"input": "yes", "builtin": {"action": "redact", "detector": "email"}}),
  pii({"builtin": {"action": "redact", "detector": "email", "target_paths": "x"}}),
  pii({"builtin": "x"}),
  pii({"builtin": {"action": "redact", "detector": "email"}, "extra_top": 1, "policy": {"unknown_field": "error"}}),
  pii({"builtin": {"action": "redact", "detector": "email", "frob": 1}}),
  pii({"builtin": {"action": "redact", "detector": "email", "target_path_globs": ["/**", "/a*/b", "a/b"]}}),
  pii({"builtin": {"preset": "trajectory_context", "action": "redact", "target_paths": ["/a"], "detector": "email", "mask_char": "#", "target_path_globs": ["/x"], "pattern": "a", "replacement": "x"}}),
  pii({"builtin": {"preset": "everything", "custom_mark_payload_policy": "drop"}}),
  pii({"builtin": {"action": "hash", "custom_mark_payload_policy": "preserve", "metric_string_attribute_allowlist": {"a": ["b"]}}}),
  pii({"builtin": {"preset": "trajectory_context", "metric_string_attribute_allowlist": {"a": ["b"]}}}),
  pii({"builtin": {"preset": "trajectory_context", "metric_string_attribute_allowlist": "x"}}),
  pii({"mode": "cloud", "builtin": {"action": "hash"}}),
  pii({"mode": "local_model", "builtin": {"action": "hash"}}),
  pii({"mode": "local_model"}),
  pii({"mode": "local_model", "local": {"backend": "x", "frob": 2}}),
  pii({"codec": "gemini", "builtin": {"action": "hash"}}),
  pii({"codec": "gemini", "input": false, "output": false, "builtin": {"action": "hash"}}),
  pii({"version": 2, "builtin": {"action": "hash"}}),
  pii({"input": false, "output": false, "mark": false, "tool_input": false, "tool_output": false, "builtin": {"action": "hash"}}),
  pii({"profiles": [], "mode": "builtin", "builtin": {"action": "hash"}}),
  pii({"profiles": [{"enabled": false, "builtin": {"action": "hash"}}]}),
  pii({"profiles": [{"builtin": {"action": "frob"}}, {"mode": "local_model"}, {"builtin": {"action": "redact"}, "x": 1}]}),
  pii({"profiles": [{"mark": true, "builtin": {"action": "hash"}}]}),
  pii({"builtin": {"action": "mask", "mask_char": ""}}),
  pii({"builtin": {"action": "redact", "detector": "ssn", "pattern": "("}}),
  pii({"builtin": {"action": "shred", "custom_mark_payload_policy": "redact_all_leaves"}}),
  pii({"builtin": {"action": "remove", "detector": "email"}}),
  pii({"builtin": {"action": "remove", "target_path_globs": ["/a/*"]}}),
  pii({"builtin": {"action": "remove", "target_paths": ["a/b", "/a~2b", "", "/"]}}),
  pii({"builtin": {}}, { enabled: false }),
  pii({"policy": {"unsupported_value": "warn"}, "builtin": {}}),
  pii({"policy": {"frob": "warn"}, "builtin": {"action": "hash"}}),
  pii({"policy": "x", "builtin": {"action": "hash"}}),
  pii({"policy": {"unsupported_value": "loud"}, "builtin": {"action": "hash"}}),
  {"version": 1, "policy": {"unsupported_value": "warn", "unknown_field": "ignore"}, "components": [{"kind": "pii_redaction", "config": {"frob": 1, "builtin": {}}}]},
  pii({"builtin": {"action": "hash", "replacement": "x", "mask_char": "##", "unmasked_prefix": 3}}),
  pii({"priority": -5, "builtin": {"action": "hash"}}),
  pii({"priority": 3000000000, "builtin": {"action": "hash"}}),
  pii({"builtin": {"action": "hash", "unmasked_prefix": 1.5}}),
  pii({"builtin": {"action": null}}),
  pii({"builtin": {"action": "hash", "pattern": null}}),
  pii({"local": null, "builtin": {"action": "hash"}}),
  pii({"builtin": {"action": "remove", "pattern": "(", "detector": "email", "custom_mark_payload_policy": "x", "mask_char": "", "target_paths": ["x"], "target_path_globs": ["y"]}}),
  pii({"builtin": {"action": "mask", "pattern": "(", "detector": "emailx", "mask_char": ""}}),
  pii({"builtin": {"preset": "trajectory_context", "target_paths": ["x"]}}),
  pii({"builtin": {"preset": "trajectory_context", "unmasked_prefix": 1, "unmasked_suffix": 2, "replacement": "r", "custom_mark_payload_policy": "redact_all_leaves"}}),
  {"version": 1, "policy": {"unsupported_value": "warn"}, "components": [{"kind": "pii_redaction", "config": {"policy": {"unsupported_value": "error"}, "builtin": {}}}]},
  {"version": 1, "policy": {"unsupported_value": "error"}, "components": [{"kind": "pii_redaction", "config": {"policy": {"unsupported_value": "warn"}, "builtin": {}}}]},
  {"version": 1, "policy": {"unknown_field": "error"}, "components": [{"kind": "pii_redaction", "config": {"x": 1, "builtin": {"action": "hash"}}}]},
  pii({"profiles": [{"builtin": {"action": "hash"}}], "codec": "x", "version": 3, "zzz": 1, "policy": {"q": 1}}),
  pii({"profiles": "x"}),
  pii({"profiles": [1]}),
  pii({"profiles": [{"mode": "cloud", "builtin": {"action": "hash"}, "local": {}}]}),
  pii({"profiles": [{"mode": "local_model", "local": {}}, {"builtin": {"action": "hash"}, "priority": 5}]}),
  pii({"mode": "builtin", "local": {}, "builtin": {"action": "hash"}}),
  pii({"mode": "local_model", "local": {}, "input": false, "output": false, "mark": false, "tool_input": false, "tool_output": false}),
  pii({"builtin": {"action": "hash", "target_path_globs": ["/a", "x"]}, "input": 1}),  pii({ builtin: { action: 'redact', pattern: 'a(?=b)' } }),
  pii({ builtin: { action: 'redact', pattern: '(a)\\1' } }),
  pii({ builtin: { action: 'redact', pattern: '(?P<n>a)(?P<n>b)' } }),
  pii({ builtin: { action: 'redact', pattern: '[z-a]' } }),
  pii({ builtin: { action: 'redact', pattern: 'x{1000}{1000}' } }),
  pii({ builtin: { action: 'redact', pattern: '\\p{Foo}' } }),
  pii({ builtin: { action: 'redact', pattern: '(a+)+$' } }),
  pii({ builtin: { action: 'regex_replace', pattern: '(?i)\\bfoo\\b', replacement: '$1' } }),
];

/** pricing, adaptive and nemo_guardrails configurations. */
const OTHER_CASES: unknown[] = [
  component("pricing")({}),
  component("pricing")({"sources": []}),
  component("pricing")({"foo": 1}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "openai", "model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "openai", "model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "unit": "per_request", "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rates": {"input_per_million": -1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rates": {"input_per_million": "1", "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2, "reasoning_per_million": 1}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "frob": 1, "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "unit": "per_vibe", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "maybe"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rate_schedule": {"type": "time_of_day"}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rate_schedule": {"type": "prompt_token_threshold", "applies_to": "marginal", "tiers": []}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rate_schedule": {"type": "prompt_token_threshold", "tiers": []}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rate_schedule": {"type": "prompt_token_threshold", "tiers": [{"min_prompt_tokens": 5, "max_prompt_tokens": 2, "rates": {"input_per_million": 1, "output_per_million": 2}}]}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rate_schedule": {"type": "prompt_token_threshold", "tiers": [{"rates": {"input_per_million": 1, "output_per_million": -2}}]}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "openai", "model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}, {"provider": "OpenAI", "model_id": "M ", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "openai", "model_id": "m", "aliases": ["n"], "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}, {"provider": "openai", "model_id": "n", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "file"}]}),
  component("pricing")({"sources": [{"type": "file", "path": "/x.json"}]}),
  component("pricing")({"sources": [{"type": "http", "url": "x"}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 2, "entries": []}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"entries": []}}]}),
  component("pricing")({"sources": [{"type": "inline"}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [], "x": 1}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": []}, "x": 1}]}),
  component("pricing")({"sources": [{"catalog": {"version": 1, "entries": []}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": " ", "model_id": "m", "currency": "", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "currency": "", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rates": {"input_per_million": 1}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "http"}]}, { enabled: false }),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "aliases": ["", "  "], "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p", "model_id": "m", "rates": {"input_per_million": 1, "output_per_million": 2}, "rate_schedule": {"type": "prompt_token_threshold", "tiers": [{"rates": {"input_per_million": 1, "output_per_million": 2}, "x": 1}]}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("pricing")({"sources": [{"type": "inline", "catalog": {"version": 1, "entries": [{"provider": "p/", "model_id": "a/b", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}, {"provider": "p", "model_id": "a/b", "rates": {"input_per_million": 1, "output_per_million": 2}, "prompt_cache": {"read_accounting": "separate"}, "pricing_as_of": "x", "pricing_source": "y"}]}}]}),
  component("adaptive")({}),
  component("adaptive")({"response_cache": {}}),
  component("adaptive")({"response_cache": {"namespace": ""}}),
  component("adaptive")({"response_cache": {"namespace": "p", "key_strategy": "fuzzy"}}),
  component("adaptive")({"response_cache": {"namespace": "p", "bypass_rate": 1.5}}),
  component("adaptive")({"response_cache": {"namespace": "p", "ttl_seconds": 0}}),
  component("adaptive")({"response_cache": {"namespace": "p", "tools": {"default": {"cacheable": true}}}}),
  component("adaptive")({"response_cache": {"namespace": "p", "tools": {"classes": {"ro": {"cacheable": true, "members": ["read_*", "a*b", "*x*", "exact"]}}}}}),
  component("adaptive")({"response_cache": {"namespace": "p", "tools": {"overrides": {"x*y": {"cacheable": true}}}}}),
  component("adaptive")({"tool_parallelism": {"mode": "turbo"}, "acg": {"provider": "google"}}),
  component("adaptive")({"acg": {"provider": "anthropic"}, "telemetry": {}}),
  component("adaptive")({"state": {"backend": {"kind": "sqlite"}}}),
  component("adaptive")({"acg": {"provider": "anthropic", "stability_thresholds": {"semi_stable_threshold": 0.2}}}),
  component("adaptive")({"mode": "x", "frob": 1, "response_cache": {"namespace": "p", "zz": 1}}),
  component("adaptive")({"response_cache": {"namespace": "p", "ttl_seconds": -1}}),
  component("adaptive")({"response_cache": {"namespace": "p", "bypass_rate": "x"}}),
  component("adaptive")({"version": 2}),
  component("adaptive")({"response_cache": {"namespace": "p", "backend": {"kind": "redis"}}}),
  component("adaptive")({"response_cache": {"namespace": "p", "backend": {"kind": "memcached"}}}),
  component("adaptive")({"response_cache": {"namespace": "p", "header_allowlist": ["X-Tenant"], "tools": {"enabled": false, "cache_errors": true, "classes": {"c": {"ttl_seconds": 0, "bypass_rate": 2, "members": []}}}}}),
  component("adaptive")({"response_cache": {"namespace": "  "}}),
  component("adaptive")({"adaptive_hints": {"inject_header": true}, "agent_id": "a"}),
  component("nemo_guardrails")({}),
  component("nemo_guardrails")({}, { enabled: false }),
  component("nemo_guardrails")({"remote": {"endpoint": "http://x", "config_id": "c"}, "codec": "openai_chat"}),
  component("nemo_guardrails")({"remote": {"endpoint": "http://x", "config_id": "c"}, "codec": "openai_chat", "tool_input": true}),
  component("nemo_guardrails")({"mode": "local", "config_path": "/x"}),
  component('adaptive')({ response_cache: { namespace: 'p', header_allowlist: ['Authorization'], backend: { kind: 'in_memory', config: { max_bytes: 0, zz: 1 } } } }),
  component('adaptive')({ response_cache: { namespace: 'p', tools: { default: { members: ['x'] }, classes: { a: { cacheable: true, members: ['read_*', '*'] }, b: { members: ['re*', 'read_*'] } }, overrides: { '*': { cacheable: true }, 'a*': { cacheable: false } } } } }),
  component('adaptive')({ state: { backend: { kind: 'redis', config: { url: 'redis://x', q: 1 } } }, telemetry: { x: 1 }, adaptive_hints: { y: 1 }, tool_parallelism: { z: 1 }, acg: { w: 1 }, policy: { v: 1 } }),
  { version: 1, policy: { unknown_field: 'error' }, components: [{ kind: 'adaptive', config: { frob: 1 } }] },
  component('nemo_guardrails')({ mode: 'local', config_yaml: 'x', colang_content: '', remote: {}, request_defaults: {} }),
  component('nemo_guardrails')({ mode: 'remote', remote: { endpoint: ' ', config_id: 'a', config_ids: ['b', ''] }, config_path: 'x', local: {}, codec: 'anthropic_messages' }),
  component('nemo_guardrails')({ mode: 'cloud', input: false, output: false, frob: 1, remote: { zz: 1 } }),
  component('nemo_guardrails')({ version: 2, codec: 'x', remote: { endpoint: 'http://x', config_ids: ['a'] } }),
  component('nemo_guardrails')({ input: 'x' }),
];

const MEMORY_ONLY = new Set(['observability.backend_unsupported', 'plugin.backend_unsupported_component']);
const nativeDiagnostics = (document: unknown) => nativePlugin!.validate(document).config.diagnostics;
const ourDiagnostics = (document: unknown) => validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code));

describe.skipIf(nativePlugin === null)(`component diagnostics equal native validate()${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  for (const [i, document] of PII_CASES.entries()) {
    it(`pii_redaction #${i}: ${JSON.stringify(document).slice(40, 160)}`, () => {
      expect(ourDiagnostics(document)).toEqual(nativeDiagnostics(document));
    });
  }
  for (const [i, document] of OTHER_CASES.entries()) {
    it(`component #${i}: ${JSON.stringify(document).slice(26, 160)}`, () => {
      expect(ourDiagnostics(document)).toEqual(nativeDiagnostics(document));
    });
  }
  it('exercises errors and warnings, not only clean configurations', () => {
    const levels = PII_CASES.flatMap((document) => (nativeDiagnostics(document) as { level: string }[]).map((d) => d.level));
    expect(levels.filter((l) => l === 'error').length).toBeGreaterThan(40);
    expect(levels).toContain('warning');
  });
});
