/**
 * The `pii_redaction` component's configuration: its shape, native's
 * validation (the same codes, fields, messages and order as
 * `nemo-relay-node` 0.9.2 reports), and the settings the redaction engine
 * runs (`src/components/redaction/`).
 *
 * Two forms are accepted, as in native: the legacy single policy (`mode`,
 * the five surface switches, `priority`, `builtin`, `local`) and
 * `profiles` (each an ordered policy over every surface). Matchers are
 * Rust patterns: one native's engine refuses is refused here with its
 * message (`shared/rust-regex`).
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { rustRegexError } from '../../shared/rust-regex/index.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { componentPolicy, levelFor, POLICY_FIELDS, type Policy } from './policy.ts';
import { POLICY_SCHEMA } from './schema.ts';
import { BEHAVIOR, BOOL, I32, STRING, U32, U64, USIZE, checkShape, optional, type Schema } from './shape.ts';

export const PII_REDACTION = 'pii_redaction';

/** The five actions of the built-in backend. */
export type RedactionAction = 'remove' | 'redact' | 'regex_replace' | 'hash' | 'mask';

/** The 14 detector presets, by family, in native's order. */
export const DETECTORS = {
  'common PII': ['email', 'phone', 'ip_address', 'ipv6', 'url'],
  'structured secrets': ['api_key', 'uuid', 'bearer_token', 'jwt', 'credit_card'],
  'cloud credentials': ['aws_access_key_id', 'aws_secret_access_key', 'gcp_api_key', 'azure_storage_account_key'],
} as const;

export type DetectorName = (typeof DETECTORS)[keyof typeof DETECTORS][number];

const DETECTOR_NAMES: ReadonlySet<string> = new Set(Object.values(DETECTORS).flat());

/** The codecs native accepts for `codec`, in its message's order. */
const CODECS = ['openai_responses', 'anthropic_messages', 'oci_genai', 'openai_chat', 'gemini_generate_content'];

/** Which parts of the event stream a policy sanitizes. */
export interface RedactionSurfaces {
  input: boolean;
  output: boolean;
  tool_input: boolean;
  tool_output: boolean;
  mark: boolean;
}

/** The `[builtin]` table of one policy, validated. */
export interface BuiltinRedaction {
  preset: 'trajectory_context' | null;
  action: RedactionAction;
  targetPaths: string[];
  targetPathGlobs: string[];
  pattern: string | null;
  detector: DetectorName | null;
  replacement: string | null;
  maskChar: string | null;
  unmaskedPrefix: number | null;
  unmaskedSuffix: number | null;
  customMarkPayloadPolicy: 'preserve' | 'redact_all_leaves';
}

/** One policy the engine runs, in the order it runs (ascending priority, then document order). */
export interface RedactionPolicy {
  priority: number;
  surfaces: RedactionSurfaces;
  builtin: BuiltinRedaction;
}

/** What an activation of the component runs. */
export interface PiiRedactionSettings {
  /** The enabled built-in policies, in running order. */
  policies: RedactionPolicy[];
  /** The component's fallback `codec`, when set. */
  codec: string | null;
  /**
   * Set when an enabled policy uses `mode = "local_model"`: native validates
   * it, then fails to activate ("backend is unavailable in this runtime").
   */
  localModel: boolean;
}

export interface PiiRedactionValidation {
  diagnostics: ConfigDiagnostic[];
  /** The settings, when validation found no error. */
  settings: PiiRedactionSettings | null;
}

/** Native's activation error for a `local_model` policy (no local backend exists in any runtime here). */
export const LOCAL_MODEL_UNAVAILABLE = 'registration failed: PII redaction local-model backend is unavailable in this runtime';

// ---- shapes (serde) -----------------------------------------------------------

const LOCAL_SCHEMA: Schema = {
  t: 'struct',
  name: 'LocalBackendConfig',
  fields: { backend: optional(STRING), model_id: optional(STRING), detector_profile: optional(STRING), allow_network: optional(BOOL), max_latency_ms: optional(U64) },
};

const BUILTIN_SCHEMA: Schema = {
  t: 'struct',
  name: 'BuiltinBackendConfig',
  fields: {
    preset: optional(STRING),
    action: STRING,
    target_paths: { t: 'seq', of: STRING },
    target_path_globs: { t: 'seq', of: STRING },
    pattern: optional(STRING),
    detector: optional(STRING),
    replacement: optional(STRING),
    mask_char: optional(STRING),
    unmasked_prefix: optional(USIZE),
    unmasked_suffix: optional(USIZE),
    custom_mark_payload_policy: STRING,
    metric_string_attribute_allowlist: optional({ t: 'mapOf', of: { t: 'seq', of: STRING } }),
  },
};

const PROFILE_SCHEMA: Schema = {
  t: 'struct',
  name: 'PiiRedactionProfile',
  fields: { enabled: BOOL, mode: STRING, priority: I32, builtin: optional(BUILTIN_SCHEMA), local: optional(LOCAL_SCHEMA) },
};

const CONFIG_SCHEMA: Schema = {
  t: 'struct',
  name: 'PiiRedactionConfig',
  fields: {
    version: U32,
    mode: STRING,
    input: BOOL,
    output: BOOL,
    mark: BOOL,
    tool_input: BOOL,
    tool_output: BOOL,
    priority: I32,
    codec: optional(STRING),
    profiles: { t: 'seq', of: PROFILE_SCHEMA },
    builtin: optional(BUILTIN_SCHEMA),
    local: optional(LOCAL_SCHEMA),
    policy: POLICY_SCHEMA,
  },
};

const TOP_FIELDS = ['version', 'mode', 'input', 'output', 'mark', 'tool_input', 'tool_output', 'priority', 'codec', 'profiles', 'builtin', 'local', 'policy'];
const LEGACY_FIELDS = ['mode', 'input', 'output', 'mark', 'tool_input', 'tool_output', 'priority', 'builtin', 'local'];
const PROFILE_FIELDS = ['enabled', 'mode', 'priority', 'builtin', 'local'];
const BUILTIN_FIELDS = [
  'preset',
  'action',
  'target_paths',
  'target_path_globs',
  'pattern',
  'detector',
  'replacement',
  'mask_char',
  'unmasked_prefix',
  'unmasked_suffix',
  'custom_mark_payload_policy',
  'metric_string_attribute_allowlist',
];
const LOCAL_FIELDS = ['backend', 'model_id', 'detector_profile', 'allow_network', 'max_latency_ms'];
/** Fields that may not sit beside `preset`, in native's order. */
const PRESET_EXCLUSIVE = ['action', 'detector', 'pattern', 'target_paths', 'target_path_globs', 'mask_char', 'unmasked_prefix', 'unmasked_suffix'];

// ---- validation -----------------------------------------------------------------

/** A policy's fields as serde reads them (defaults filled). */
interface PolicyConfig {
  mode: string;
  surfaces: RedactionSurfaces;
  priority: number;
  raw: JsonObject;
}

class Findings {
  readonly diagnostics: ConfigDiagnostic[] = [];
  private readonly unknown: 'warning' | 'error' | null;
  private readonly unsupported: 'warning' | 'error' | null;

  constructor(policy: Policy) {
    this.unknown = levelFor(policy.unknown_field);
    this.unsupported = levelFor(policy.unsupported_value, 'error');
  }

  unknownField(field: string, name = field): void {
    if (this.unknown !== null) {
      this.diagnostics.push({ level: this.unknown, code: 'pii_redaction.unknown_field', component: PII_REDACTION, field, message: `unknown field '${name}'` });
    }
  }

  unsupportedValue(field: string | undefined, message: string, code = 'pii_redaction.unsupported_value'): void {
    if (this.unsupported === null) return;
    const diagnostic: ConfigDiagnostic = { level: this.unsupported, code, component: PII_REDACTION, message };
    if (field !== undefined) diagnostic.field = field;
    this.diagnostics.push(diagnostic);
  }

  /** Everything pushed since `from`, with `prefix` put before each field (profiles). */
  prefix(from: number, prefix: string): void {
    for (const diagnostic of this.diagnostics.slice(from)) diagnostic.field = diagnostic.field === undefined ? prefix : `${prefix}.${diagnostic.field}`;
  }

  get hasErrors(): boolean {
    return this.diagnostics.some((d) => d.level === 'error');
  }
}

/**
 * Validates a `pii_redaction` component's config. `documentPolicy` is the
 * document's `[policy]`: where it sets a behaviour it wins over the
 * component's own, as in native.
 */
export function validatePiiRedaction(config: JsonObject, documentPolicy: Policy): PiiRedactionValidation {
  const typeError = checkShape(config, CONFIG_SCHEMA);
  if (typeError !== null) {
    return {
      diagnostics: [
        {
          level: 'error',
          code: 'pii_redaction.invalid_plugin_config',
          component: PII_REDACTION,
          message: `invalid config: invalid PII redaction plugin config: ${typeError}`,
        },
      ],
      settings: null,
    };
  }
  const ownPolicy = isJsonObject(config.policy) ? (config.policy as Policy) : {};
  const policy = componentPolicy(ownPolicy, documentPolicy);
  const findings = new Findings(policy);
  for (const key of Object.keys(config)) if (!TOP_FIELDS.includes(key)) findings.unknownField(key);
  sectionFields(findings, config, 'policy', POLICY_FIELDS);
  const version = typeof config.version === 'number' ? config.version : 1;
  const codec = typeof config.codec === 'string' ? config.codec : null;
  const policies: RedactionPolicy[] = [];
  let localModel = false;

  if ('profiles' in config) {
    const profiles = config.profiles as JsonObject[];
    for (const field of LEGACY_FIELDS) {
      if (field in config) findings.unsupportedValue(field, `legacy field '${field}' cannot be combined with profiles`);
    }
    if (!profiles.some((p) => p.enabled !== false)) {
      findings.unsupportedValue('profiles', 'profiles must contain at least one enabled redaction profile');
    } else {
      profiles.forEach((raw, index) => {
        const from = findings.diagnostics.length;
        for (const key of Object.keys(raw)) if (!PROFILE_FIELDS.includes(key)) findings.unknownField(key);
        sectionFields(findings, raw, 'builtin', BUILTIN_FIELDS);
        sectionFields(findings, raw, 'local', LOCAL_FIELDS);
        const profile: PolicyConfig = {
          mode: typeof raw.mode === 'string' ? raw.mode : 'builtin',
          surfaces: { input: true, output: true, tool_input: true, tool_output: true, mark: true },
          priority: typeof raw.priority === 'number' ? raw.priority : 100,
          raw,
        };
        checkMode(findings, profile);
        checkBuiltinMode(findings, profile);
        const builtin = checkBuiltin(findings, raw);
        checkLocalMode(findings, profile);
        if (profile.mode === 'local_model' && !('local' in raw)) {
          findings.unsupportedValue('local', '`local` settings are required for a local-model profile');
        }
        findings.prefix(from, `profiles[${index}]`);
        if (raw.enabled === false) return;
        if (profile.mode === 'local_model') localModel = true;
        else if (builtin !== null) policies.push({ priority: profile.priority, surfaces: profile.surfaces, builtin });
      });
    }
    checkVersion(findings, version);
    checkCodec(findings, codec, true);
  } else {
    sectionFields(findings, config, 'builtin', BUILTIN_FIELDS);
    sectionFields(findings, config, 'local', LOCAL_FIELDS);
    const legacy: PolicyConfig = {
      mode: typeof config.mode === 'string' ? config.mode : 'builtin',
      surfaces: {
        input: config.input !== false,
        output: config.output !== false,
        tool_input: config.tool_input !== false,
        tool_output: config.tool_output !== false,
        mark: config.mark !== false,
      },
      priority: typeof config.priority === 'number' ? config.priority : 100,
      raw: config,
    };
    checkVersion(findings, version);
    checkMode(findings, legacy);
    const s = legacy.surfaces;
    if (!(s.input || s.output || s.mark || s.tool_input || s.tool_output)) findings.unsupportedValue(undefined, 'at least one redaction surface must be enabled');
    checkCodec(findings, codec, s.input || s.output);
    checkBuiltinMode(findings, legacy);
    const builtin = checkBuiltin(findings, config);
    checkLocalMode(findings, legacy);
    if (legacy.mode === 'local_model') localModel = true;
    else if (builtin !== null) policies.push({ priority: legacy.priority, surfaces: legacy.surfaces, builtin });
  }
  if (findings.hasErrors) return { diagnostics: findings.diagnostics, settings: null };
  // Ascending priority; the sort is stable, so document order breaks ties.
  policies.sort((a, b) => a.priority - b.priority);
  return { diagnostics: findings.diagnostics, settings: { policies, codec, localModel } };
}

function sectionFields(findings: Findings, config: JsonObject, section: string, supported: readonly string[]): void {
  if (!(section in config)) return;
  const value = config[section];
  if (!isJsonObject(value)) {
    findings.unsupportedValue(section, `'${section}' must be an object`);
    return;
  }
  for (const key of Object.keys(value)) if (!supported.includes(key)) findings.unknownField(`${section}.${key}`);
}

function checkVersion(findings: Findings, version: number): void {
  if (version !== 1) findings.unsupportedValue('version', `PII redaction config version ${version} is unsupported`, 'pii_redaction.unsupported_config_version');
}

function checkMode(findings: Findings, config: PolicyConfig): void {
  if (config.mode !== 'builtin' && config.mode !== 'local_model') findings.unsupportedValue('mode', "mode must be 'builtin' or 'local_model'");
}

function checkCodec(findings: Findings, codec: string | null, llmSurface: boolean): void {
  if (!llmSurface || codec === null || CODECS.includes(codec)) return;
  findings.unsupportedValue('codec', `codec must be one of: ${CODECS.join(', ')}`);
}

function checkBuiltinMode(findings: Findings, config: PolicyConfig): void {
  const has = 'builtin' in config.raw;
  if (config.mode === 'builtin') {
    if (!has) findings.unsupportedValue('builtin', "`builtin` settings are required when mode = 'builtin'");
  } else if (has) {
    findings.unsupportedValue('builtin', "`builtin` settings are valid only when mode = 'builtin'");
  }
}

function checkLocalMode(findings: Findings, config: PolicyConfig): void {
  if (config.mode !== 'local_model' && 'local' in config.raw) findings.unsupportedValue('local', "`local` settings are valid only when mode = 'local_model'");
}

/** An RFC 6901 pointer: empty (the root) or `/`-separated segments whose `~` escapes are `~0` or `~1`. */
export function isJsonPointer(pointer: string): boolean {
  if (pointer === '') return true;
  if (!pointer.startsWith('/')) return false;
  return !/~(?![01])/.test(pointer);
}

/** The `[builtin]` table's own rules; returns the validated table, or null when it is absent or wrong. */
function checkBuiltin(findings: Findings, config: JsonObject): BuiltinRedaction | null {
  const raw = config.builtin;
  if (!isJsonObject(raw)) return null;
  const before = findings.diagnostics.length;
  const targetPaths = (raw.target_paths ?? []) as string[];
  const targetPathGlobs = (raw.target_path_globs ?? []) as string[];
  targetPaths.forEach((path, i) => {
    if (!isJsonPointer(path)) findings.unsupportedValue(`builtin.target_paths[${i}]`, 'builtin.target_paths entries must be valid RFC 6901 JSON pointers');
  });
  targetPathGlobs.forEach((path, i) => {
    if (!isJsonPointer(path)) findings.unsupportedValue(`builtin.target_path_globs[${i}]`, 'builtin.target_path_globs entries must be valid RFC 6901 JSON pointers');
  });
  const preset = typeof raw.preset === 'string' ? raw.preset : null;
  const customPolicy = typeof raw.custom_mark_payload_policy === 'string' ? raw.custom_mark_payload_policy : 'preserve';
  const action = typeof raw.action === 'string' ? raw.action : 'remove';
  const pattern = typeof raw.pattern === 'string' ? raw.pattern : null;
  const detector = typeof raw.detector === 'string' ? raw.detector : null;
  const maskChar = typeof raw.mask_char === 'string' ? raw.mask_char : null;
  if (preset !== null) {
    if (preset !== 'trajectory_context') findings.unsupportedValue('builtin.preset', "builtin.preset must be 'trajectory_context'");
    if (customPolicy !== 'preserve' && customPolicy !== 'redact_all_leaves') {
      findings.unsupportedValue('builtin.custom_mark_payload_policy', "builtin.custom_mark_payload_policy must be 'preserve' or 'redact_all_leaves'");
    }
    for (const field of PRESET_EXCLUSIVE) {
      if (field in raw) findings.unsupportedValue(`builtin.${field}`, `builtin.${field} cannot be combined with builtin.preset`);
    }
  } else {
    for (const field of ['custom_mark_payload_policy', 'metric_string_attribute_allowlist']) {
      if (field in raw) findings.unsupportedValue(`builtin.${field}`, `builtin.${field} requires builtin.preset = 'trajectory_context'`);
    }
    if (!['remove', 'redact', 'regex_replace', 'hash', 'mask'].includes(action)) {
      findings.unsupportedValue('builtin.action', "builtin.action must be 'remove', 'redact', 'regex_replace', 'hash', or 'mask'");
    }
    if (action === 'remove' && targetPaths.length === 0 && targetPathGlobs.length === 0) {
      findings.unsupportedValue(
        'builtin.target_paths',
        "builtin.action = 'remove' requires at least one builtin.target_paths or builtin.target_path_globs selector",
      );
    }
    if ((action === 'regex_replace' || action === 'redact') && pattern === null && detector === null) {
      findings.unsupportedValue('builtin.pattern', "builtin.pattern or builtin.detector is required when builtin.action = 'regex_replace' or 'redact'");
    }
    if (pattern !== null && detector !== null) findings.unsupportedValue('builtin.detector', 'builtin.pattern and builtin.detector cannot both be set');
    if (pattern !== null) {
      const error = rustRegexError(pattern);
      if (error !== null) findings.unsupportedValue('builtin.pattern', `invalid builtin matcher regex '${pattern}': ${error}`);
    }
    if (detector !== null && !DETECTOR_NAMES.has(detector)) {
      const families = Object.entries(DETECTORS)
        .map(([family, names]) => `${family}: ${names.join(', ')}`)
        .join('; ');
      findings.unsupportedValue('builtin.detector', `builtin.detector must be one of the supported built-in detector presets (${families})`);
    }
    if (action === 'mask' && maskChar === '') findings.unsupportedValue('builtin.mask_char', "builtin.mask_char must not be empty when builtin.action = 'mask'");
  }
  if (findings.diagnostics.slice(before).some((d) => d.level === 'error')) return null;
  return {
    preset: preset === 'trajectory_context' ? preset : null,
    action: action as RedactionAction,
    targetPaths,
    targetPathGlobs,
    pattern,
    detector: detector as DetectorName | null,
    replacement: typeof raw.replacement === 'string' ? raw.replacement : null,
    maskChar,
    unmaskedPrefix: typeof raw.unmasked_prefix === 'number' ? raw.unmasked_prefix : null,
    unmaskedSuffix: typeof raw.unmasked_suffix === 'number' ? raw.unmasked_suffix : null,
    customMarkPayloadPolicy: customPolicy === 'redact_all_leaves' ? 'redact_all_leaves' : 'preserve',
  };
}
