/**
 * The `adaptive` component's configuration: native's validation (codes,
 * components, fields, messages, order, as `nemo-relay-node` 0.9.2 reports
 * them) and the response and tool cache settings the cache engine
 * (`src/components/cache/`) runs. Hints, ACG, tool parallelism, telemetry
 * and state are validated only: they change nothing on native either.
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { isCredentialHeader } from '../../shared/secret-text.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { componentPolicy, POLICY_FIELDS, pushByPolicy, type Policy } from './policy.ts';
import { POLICY_SCHEMA } from './schema.ts';
import { BEHAVIOR, BOOL, F64, I32, STRING, U32, U64, USIZE, checkShape, optional, type Schema } from './shape.ts';
import { isNativeBlank } from '../../shared/whitespace.ts';

export const ADAPTIVE = 'adaptive';

/** A class or override of the tool cache, as configured. */
export interface ToolPolicyConfig {
  cacheable?: boolean;
  ttl_seconds?: number;
  bypass_rate?: number;
  tool_version?: string;
  arg_skip?: string[];
  members?: string[];
}

/** The response and tool cache settings, defaults filled. */
export interface ResponseCacheSettings {
  ttlSeconds: number;
  namespace: string;
  bypassRate: number;
  cacheNondeterministic: boolean;
  keyStrategy: 'exact_request' | 'logical';
  headerAllowlist: string[];
  /** `in_memory` (the only store the memory relay has) or `redis`. */
  backend: string;
  maxBytes: number;
  tools: {
    enabled: boolean;
    cacheErrors: boolean;
    default: ToolPolicyConfig;
    classes: [string, ToolPolicyConfig][];
    overrides: [string, ToolPolicyConfig][];
  } | null;
}

export interface AdaptiveSettings {
  /** Null without a `[response_cache]` table. */
  responseCache: ResponseCacheSettings | null;
}

export interface AdaptiveValidation {
  diagnostics: ConfigDiagnostic[];
  settings: AdaptiveSettings | null;
}

const BACKEND: Schema = { t: 'struct', name: 'BackendSpec', fields: { kind: STRING, config: { t: 'map' } }, required: ['kind'] };
const TOOL_CLASS: Schema = {
  t: 'struct',
  name: 'ToolClass',
  fields: { cacheable: BOOL, ttl_seconds: optional(U64), bypass_rate: optional(F64), tool_version: optional(STRING), arg_skip: { t: 'seq', of: STRING }, members: { t: 'seq', of: STRING } },
};
const TOOL_OVERRIDE: Schema = {
  t: 'struct',
  name: 'ToolOverride',
  fields: { cacheable: optional(BOOL), ttl_seconds: optional(U64), bypass_rate: optional(F64), tool_version: optional(STRING), arg_skip: optional({ t: 'seq', of: STRING }) },
};
const SCHEMA: Schema = {
  t: 'struct',
  name: 'AdaptiveConfig',
  fields: {
    version: U32,
    agent_id: optional(STRING),
    state: optional({ t: 'struct', name: 'StateConfig', fields: { backend: BACKEND }, required: ['backend'] }),
    telemetry: optional({ t: 'struct', name: 'TelemetryComponentConfig', fields: { subscriber_name: optional(STRING), learners: { t: 'seq', of: STRING } } }),
    adaptive_hints: optional({
      t: 'struct',
      name: 'AdaptiveHintsComponentConfig',
      fields: { priority: I32, break_chain: BOOL, inject_header: BOOL, inject_body_path: STRING },
    }),
    tool_parallelism: optional({ t: 'struct', name: 'ToolParallelismComponentConfig', fields: { priority: I32, mode: STRING } }),
    acg: optional({
      t: 'struct',
      name: 'AcgComponentConfig',
      fields: {
        provider: STRING,
        observation_window: USIZE,
        priority: I32,
        stability_thresholds: {
          t: 'struct',
          name: 'StabilityThresholds',
          fields: { stable_threshold: F64, semi_stable_threshold: F64, min_observations_for_full_confidence: U32 },
          required: ['stable_threshold', 'semi_stable_threshold', 'min_observations_for_full_confidence'],
        },
      },
    }),
    response_cache: optional({
      t: 'struct',
      name: 'ResponseCacheConfig',
      fields: {
        ttl_seconds: U64,
        namespace: STRING,
        priority: I32,
        bypass_rate: F64,
        cache_nondeterministic: BOOL,
        key_strategy: STRING,
        header_allowlist: { t: 'seq', of: STRING },
        backend: { t: 'struct', name: 'BackendConfig', fields: { kind: STRING, config: { t: 'map' } } },
        tools: optional({
          t: 'struct',
          name: 'ToolCacheConfig',
          fields: {
            enabled: BOOL,
            priority: I32,
            cache_errors: BOOL,
            default: TOOL_CLASS,
            classes: { t: 'mapOf', of: TOOL_CLASS },
            overrides: { t: 'mapOf', of: TOOL_OVERRIDE },
          },
        }),
      },
    }),
    policy: POLICY_SCHEMA,
  },
};

const CLASS_FIELDS = ['cacheable', 'ttl_seconds', 'bypass_rate', 'tool_version', 'arg_skip', 'members'];
const OVERRIDE_FIELDS = ['cacheable', 'ttl_seconds', 'bypass_rate', 'tool_version', 'arg_skip'];

/** Validates an `adaptive` component's config (native's rules). */
export function validateAdaptive(config: JsonObject, documentPolicy: Policy): AdaptiveValidation {
  const shape = checkShape(config, SCHEMA);
  if (shape !== null) {
    return {
      diagnostics: [{ level: 'error', code: 'adaptive.invalid_plugin_config', component: ADAPTIVE, message: `invalid config: invalid adaptive plugin config: ${shape}` }],
      settings: null,
    };
  }
  const policy = componentPolicy(isJsonObject(config.policy) ? (config.policy as Policy) : {}, documentPolicy);
  const diagnostics: ConfigDiagnostic[] = [];
  const unknown = (component: string, object: unknown, known: readonly string[]) => {
    if (!isJsonObject(object)) return;
    for (const field of Object.keys(object).sort()) {
      if (known.includes(field)) continue;
      pushByPolicy(diagnostics, policy.unknown_field, 'warning', {
        code: 'adaptive.unknown_field',
        component,
        field,
        message: `field '${field}' is not recognized for '${component}'`,
      });
    }
  };
  unknown(ADAPTIVE, config, ['version', 'agent_id', 'state', 'telemetry', 'adaptive_hints', 'tool_parallelism', 'acg', 'response_cache', 'policy']);
  unknown('policy', config.policy, POLICY_FIELDS);
  const state = config.state;
  if (isJsonObject(state)) {
    unknown('state', state, ['backend']);
    const backend = state.backend;
    if (isJsonObject(backend)) {
      unknown('backend', backend, ['kind', 'config']);
      const kind = typeof backend.kind === 'string' ? backend.kind : '';
      const known = kind === 'in_memory' ? [] : kind === 'redis' ? ['url', 'key_prefix'] : null;
      if (known !== null) unknown(kind, backend.config, known);
    }
  }
  unknown('telemetry', config.telemetry, ['subscriber_name', 'learners']);
  unknown('adaptive_hints', config.adaptive_hints, ['priority', 'break_chain', 'inject_header', 'inject_body_path']);
  unknown('tool_parallelism', config.tool_parallelism, ['priority', 'mode']);
  unknown('acg', config.acg, ['provider', 'observation_window', 'priority', 'stability_thresholds']);
  const cache = config.response_cache;
  if (isJsonObject(cache)) {
    unknown('response_cache', cache, ['ttl_seconds', 'namespace', 'priority', 'bypass_rate', 'cache_nondeterministic', 'key_strategy', 'header_allowlist', 'backend', 'tools']);
    if (isJsonObject(cache.backend)) {
      unknown('response_cache.backend', cache.backend, ['kind', 'config']);
      const kind = typeof cache.backend.kind === 'string' ? cache.backend.kind : 'in_memory';
      const known = kind === 'in_memory' ? ['max_bytes'] : kind === 'redis' ? ['url', 'key_prefix'] : null;
      if (known !== null) unknown(`response_cache.backend.${kind}`, cache.backend.config, known);
    }
    const tools = cache.tools;
    if (isJsonObject(tools)) {
      unknown('response_cache.tools', tools, ['enabled', 'priority', 'cache_errors', 'default', 'classes', 'overrides']);
      unknown('response_cache.tools.default', tools.default, CLASS_FIELDS);
      if (isJsonObject(tools.classes)) for (const name of Object.keys(tools.classes).sort()) unknown(`response_cache.tools.classes.${name}`, tools.classes[name], CLASS_FIELDS);
      if (isJsonObject(tools.overrides)) for (const name of Object.keys(tools.overrides).sort()) unknown(`response_cache.tools.overrides.${name}`, tools.overrides[name], OVERRIDE_FIELDS);
    }
  }

  // The runtime's own checks.
  const version = typeof config.version === 'number' ? config.version : 1;
  if (version !== 1) {
    pushByPolicy(diagnostics, policy.unsupported_value, 'error', {
      code: 'adaptive.unsupported_config_version',
      field: 'version',
      message: `adaptive config version ${version} is unsupported`,
    });
  }
  if (isJsonObject(state) && isJsonObject(state.backend)) {
    const kind = String(state.backend.kind);
    if (kind !== 'in_memory' && kind !== 'redis') {
      pushByPolicy(diagnostics, policy.unknown_component, 'warning', { code: 'adaptive.unknown_backend', component: kind, message: `backend kind '${kind}' is unsupported` });
    }
  }
  for (const section of ['telemetry', 'acg'] as const) {
    if (config[section] != null && config.state == null) {
      diagnostics.push({
        level: 'warning',
        code: 'adaptive.section_disabled_missing_state',
        component: section,
        message: `${section} requires state backend and will be disabled`,
      });
    }
  }
  const parallelism = config.tool_parallelism;
  if (isJsonObject(parallelism)) {
    const mode = typeof parallelism.mode === 'string' ? parallelism.mode : 'observe_only';
    if (!['observe_only', 'inject_hints', 'schedule'].includes(mode)) {
      pushByPolicy(diagnostics, policy.unsupported_value, 'error', {
        code: 'adaptive.unsupported_value',
        component: 'tool_parallelism',
        field: 'mode',
        message: `tool_parallelism mode '${mode}' is unsupported; expected observe_only, inject_hints, or schedule`,
      });
    }
  }
  const acg = config.acg;
  if (isJsonObject(acg)) {
    const provider = typeof acg.provider === 'string' ? acg.provider : 'passthrough';
    if (!['anthropic', 'openai', 'passthrough'].includes(provider)) {
      pushByPolicy(diagnostics, policy.unsupported_value, 'error', {
        code: 'adaptive.unsupported_value',
        component: 'acg',
        field: 'provider',
        message: `acg provider '${provider}' is unsupported; expected anthropic, openai, or passthrough`,
      });
    }
  }
  let responseCache: ResponseCacheSettings | null = null;
  if (isJsonObject(cache)) responseCache = responseCacheSettings(cache, diagnostics);
  if (diagnostics.some((d) => d.level === 'error')) return { diagnostics, settings: null };
  return { diagnostics, settings: { responseCache } };
}

function cacheError(diagnostics: ConfigDiagnostic[], code: string, field: string | undefined, message: string): void {
  diagnostics.push({ level: 'error', code, component: 'response_cache', ...(field !== undefined ? { field } : {}), message });
}

/** The `[response_cache]` table's rules (always errors, whatever the policy) and its settings. */
function responseCacheSettings(cache: JsonObject, diagnostics: ConfigDiagnostic[]): ResponseCacheSettings {
  const settings: ResponseCacheSettings = {
    ttlSeconds: typeof cache.ttl_seconds === 'number' ? cache.ttl_seconds : 3600,
    namespace: typeof cache.namespace === 'string' ? cache.namespace : '',
    bypassRate: typeof cache.bypass_rate === 'number' ? cache.bypass_rate : 0,
    cacheNondeterministic: cache.cache_nondeterministic === true,
    keyStrategy: cache.key_strategy === 'logical' ? 'logical' : 'exact_request',
    headerAllowlist: (cache.header_allowlist ?? []) as string[],
    backend: 'in_memory',
    maxBytes: 256 * 1024 * 1024,
    tools: null,
  };
  if (isNativeBlank(settings.namespace)) {
    cacheError(
      diagnostics,
      'response_cache.missing_namespace',
      'namespace',
      'namespace must identify one trusted cache-sharing domain; do not enable one response cache across mutually untrusted tenants or upstreams',
    );
  }
  if (settings.ttlSeconds === 0) cacheError(diagnostics, 'response_cache.invalid_ttl', 'ttl_seconds', 'ttl_seconds must be greater than 0');
  if (!(settings.bypassRate >= 0 && settings.bypassRate <= 1)) cacheError(diagnostics, 'response_cache.invalid_bypass_rate', 'bypass_rate', 'bypass_rate must be in [0.0, 1.0]');
  const strategy = typeof cache.key_strategy === 'string' ? cache.key_strategy : 'exact_request';
  if (strategy !== 'exact_request' && strategy !== 'logical') {
    cacheError(diagnostics, 'response_cache.unsupported_key_strategy', 'key_strategy', `unsupported key_strategy '${strategy}'; supported: "exact_request", "logical"`);
  }
  for (const name of settings.headerAllowlist) {
    if (isCredentialHeader(name)) {
      cacheError(diagnostics, 'response_cache.auth_header_allowlisted', 'header_allowlist', `'${name}' is an auth header and must never be folded into cache keys`);
    }
  }
  const backend = isJsonObject(cache.backend) ? cache.backend : {};
  const kind = typeof backend.kind === 'string' ? backend.kind : 'in_memory';
  const backendConfig = isJsonObject(backend.config) ? backend.config : {};
  settings.backend = kind;
  if (kind === 'in_memory') {
    if ('max_bytes' in backendConfig) {
      const value = backendConfig.max_bytes;
      if (!(typeof value === 'number' && Number.isInteger(value) && value > 0)) {
        cacheError(diagnostics, 'response_cache.invalid_backend_option', 'backend.config', 'max_bytes must be a positive integer');
      } else {
        settings.maxBytes = value;
      }
    }
  } else if (kind === 'redis') {
    const url = backendConfig.url;
    if (typeof url !== 'string' || isNativeBlank(url)) cacheError(diagnostics, 'response_cache.missing_redis_url', 'backend.config.url', 'redis backend requires backend.config.url');
    if ('key_prefix' in backendConfig && typeof backendConfig.key_prefix !== 'string') {
      cacheError(diagnostics, 'response_cache.invalid_backend_option', 'backend.config', 'key_prefix must be a string');
    }
  } else {
    cacheError(diagnostics, 'response_cache.unknown_backend', 'backend.kind', `unknown backend kind '${kind}'`);
  }
  if (isJsonObject(cache.tools)) settings.tools = toolSettings(cache.tools, diagnostics);
  return settings;
}

function toolSettings(tools: JsonObject, diagnostics: ConfigDiagnostic[]): NonNullable<ResponseCacheSettings['tools']> {
  const def = (isJsonObject(tools.default) ? tools.default : {}) as ToolPolicyConfig;
  // serde reads the maps into BTreeMaps: sorted by name.
  const classes = Object.entries(isJsonObject(tools.classes) ? tools.classes : {}).sort(([a], [b]) => compareNames(a, b)) as [string, ToolPolicyConfig][];
  const overrides = Object.entries(isJsonObject(tools.overrides) ? tools.overrides : {}).sort(([a], [b]) => compareNames(a, b)) as [string, ToolPolicyConfig][];
  toolPolicyProblems(diagnostics, 'default', def);
  if (def.cacheable === true) {
    cacheError(
      diagnostics,
      'response_cache.tool_cacheable_default',
      'tools.default.cacheable',
      'tools.default.cacheable must be false; use a named class or override to classify cacheable tools',
    );
  }
  if ((def.members ?? []).length > 0) {
    cacheError(
      diagnostics,
      'response_cache.tool_default_members',
      'tools.default',
      'tools.default.members is never matched (the default bucket applies to every unclassified tool); move these names into a named class',
    );
  }
  const owner = new Map<string, string>();
  for (const [name, cls] of classes) {
    toolPolicyProblems(diagnostics, `classes.${name}`, cls);
    for (const member of cls.members ?? []) {
      if (!isSupportedToolPattern(member)) {
        cacheError(diagnostics, 'response_cache.tool_invalid_pattern', 'tools.classes', `tool member '${member}' in class '${name}' must be an exact name, 'prefix*', '*suffix', or '*contains*'`);
      }
      const previous = owner.get(member);
      if (previous !== undefined) {
        if (previous !== name) {
          cacheError(
            diagnostics,
            'response_cache.tool_multiple_classes',
            'tools.classes',
            `tool member '${member}' appears in multiple classes ('${previous}' and '${name}'); a member — exact name or pattern — may appear in at most one class`,
          );
        }
      } else {
        owner.set(member, name);
      }
      if (cls.cacheable === true && member === '*') {
        cacheError(
          diagnostics,
          'response_cache.tool_catch_all_member',
          'tools.classes',
          `class '${name}' lists the catch-all member '${member}' with cacheable = true, which caches every tool; use a named class to classify cacheable tools`,
        );
      }
    }
  }
  for (let i = 0; i < classes.length; i++) {
    for (let j = i + 1; j < classes.length; j++) {
      const [leftName, left] = classes[i]!;
      const [rightName, right] = classes[j]!;
      if ((left.cacheable === true) === (right.cacheable === true)) continue;
      const conflict = (left.members ?? []).some(
        (l) => l.includes('*') && (right.members ?? []).some((r) => l !== r && r.includes('*') && wildcardPatternsOverlap(l, r)),
      );
      if (conflict) {
        cacheError(
          diagnostics,
          'response_cache.tool_conflicting_classes',
          'tools.classes',
          `classes '${leftName}' and '${rightName}' contain overlapping wildcard members with conflicting cacheable settings; split the patterns so one policy applies to every tool`,
        );
      }
    }
  }
  for (const [name, over] of overrides) {
    if (!isSupportedToolPattern(name)) {
      cacheError(diagnostics, 'response_cache.tool_invalid_pattern', 'tools.overrides', `tool override '${name}' must be an exact name, 'prefix*', '*suffix', or '*contains*'`);
    }
    toolPolicyProblems(diagnostics, `overrides.${name}`, over);
    if (over.cacheable === true && name === '*') {
      cacheError(
        diagnostics,
        'response_cache.tool_catch_all_override',
        'tools.overrides',
        `override '${name}' sets cacheable = true for every tool; use a named override to classify cacheable tools`,
      );
    }
  }
  for (let i = 0; i < overrides.length; i++) {
    for (let j = i + 1; j < overrides.length; j++) {
      const [leftName, left] = overrides[i]!;
      const [rightName, right] = overrides[j]!;
      if (left.cacheable === right.cacheable || !leftName.includes('*') || !rightName.includes('*') || !wildcardPatternsOverlap(leftName, rightName)) continue;
      cacheError(
        diagnostics,
        'response_cache.tool_conflicting_overrides',
        'tools.overrides',
        `overrides '${leftName}' and '${rightName}' overlap with conflicting cacheable settings; split the patterns so one policy applies to every tool`,
      );
    }
  }
  return { enabled: tools.enabled === true, cacheErrors: tools.cache_errors === true, default: def, classes, overrides };
}

function toolPolicyProblems(diagnostics: ConfigDiagnostic[], location: string, policy: ToolPolicyConfig): void {
  if (policy.ttl_seconds === 0) cacheError(diagnostics, 'response_cache.tool_invalid_ttl', 'tools', `tools.${location}.ttl_seconds must be greater than 0 when set`);
  const rate = policy.bypass_rate;
  if (rate !== undefined && rate !== null && !(rate >= 0 && rate <= 1)) {
    cacheError(diagnostics, 'response_cache.tool_invalid_bypass_rate', 'tools', `tools.${location}.bypass_rate must be in [0.0, 1.0] when set`);
  }
}

/** Rust's `str` order (by UTF-8 bytes, which is code point order). */
function compareNames(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** A tool-name pattern: `prefix*`, `*suffix`, `*contains*`, or `*` (everything). */
export type WildcardPattern = { kind: 'prefix' | 'suffix' | 'contains'; text: string };

export function parseWildcardPattern(pattern: string): WildcardPattern | null {
  if (pattern === '*') return { kind: 'contains', text: '' };
  const inner = (text: string) => text !== '' && !text.includes('*');
  if (pattern.length >= 2 && pattern.startsWith('*') && pattern.endsWith('*')) {
    const text = pattern.slice(1, -1);
    return inner(text) ? { kind: 'contains', text } : null;
  }
  if (pattern.startsWith('*')) {
    const text = pattern.slice(1);
    return inner(text) ? { kind: 'suffix', text } : null;
  }
  if (pattern.endsWith('*')) {
    const text = pattern.slice(0, -1);
    return inner(text) ? { kind: 'prefix', text } : null;
  }
  return null;
}

export function isSupportedToolPattern(pattern: string): boolean {
  return !pattern.includes('*') || parseWildcardPattern(pattern) !== null;
}

function wildcardPatternsOverlap(left: string, right: string): boolean {
  const l = parseWildcardPattern(left);
  const r = parseWildcardPattern(right);
  if (l === null || r === null) return false;
  if (l.kind === 'prefix' && r.kind === 'prefix') return l.text.startsWith(r.text) || r.text.startsWith(l.text);
  if (l.kind === 'suffix' && r.kind === 'suffix') return l.text.endsWith(r.text) || r.text.endsWith(l.text);
  return true;
}
