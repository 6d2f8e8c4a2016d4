/**
 * The `nemo_guardrails` component's configuration, validated as native
 * 0.9.2 validates it (always with its deprecation warning). The memory
 * relay does not run Guardrails: a valid component is reported as not run,
 * loudly (see `validate.ts`), and an invalid one rejects the document as on
 * native.
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { componentPolicy, POLICY_FIELDS, pushByPolicy, type Policy } from './policy.ts';
import { POLICY_SCHEMA } from './schema.ts';
import { BEHAVIOR, BOOL, I32, STRING, U32, U64, checkShape, optional, type Schema } from './shape.ts';
import { isNativeBlank } from '../../shared/whitespace.ts';

export const NEMO_GUARDRAILS = 'nemo_guardrails';

const CODECS = ['openai_responses', 'anthropic_messages', 'oci_genai', 'openai_chat', 'gemini_generate_content'];

const SCHEMA: Schema = {
  t: 'struct',
  name: 'NeMoGuardrailsConfig',
  fields: {
    version: U32,
    mode: STRING,
    config_path: optional(STRING),
    config_yaml: optional(STRING),
    colang_content: optional(STRING),
    codec: optional(STRING),
    input: BOOL,
    output: BOOL,
    tool_input: BOOL,
    tool_output: BOOL,
    priority: I32,
    remote: optional({
      t: 'struct',
      name: 'RemoteBackendConfig',
      fields: { endpoint: optional(STRING), config_id: optional(STRING), config_ids: { t: 'seq', of: STRING }, headers: { t: 'stringMap', secret: true }, timeout_millis: U64 },
    }),
    local: optional({ t: 'struct', name: 'LocalBackendConfig', fields: { python_module: optional(STRING), python_executable: optional(STRING), python_path: optional(STRING) } }),
    request_defaults: optional({ t: 'struct', name: 'RequestDefaultsConfig', fields: { thread_id: optional(STRING), llm_output: optional(BOOL) } }),
    policy: POLICY_SCHEMA,
  },
};

const DEPRECATION: ConfigDiagnostic = {
  level: 'warning',
  code: 'nemo_guardrails.deprecated',
  component: NEMO_GUARDRAILS,
  message: 'the built-in `nemo_guardrails` plugin is deprecated and scheduled for removal in NeMo Relay 0.9',
};

/** Validates a `nemo_guardrails` component's config; the diagnostics start with native's deprecation warning. */
export function validateGuardrails(config: JsonObject, documentPolicy: Policy): ConfigDiagnostic[] {
  const shape = checkShape(config, SCHEMA);
  if (shape !== null) {
    return [
      { ...DEPRECATION },
      { level: 'error', code: 'nemo_guardrails.invalid_plugin_config', component: NEMO_GUARDRAILS, message: `invalid config: invalid NeMo Guardrails plugin config: ${shape}` },
    ];
  }
  const policy = componentPolicy(isJsonObject(config.policy) ? (config.policy as Policy) : {}, documentPolicy);
  const diagnostics: ConfigDiagnostic[] = [{ ...DEPRECATION }];
  const value = (field: string | undefined, message: string, code = 'nemo_guardrails.unsupported_value') =>
    pushByPolicy(diagnostics, policy.unsupported_value, 'error', { code, component: NEMO_GUARDRAILS, field, message });
  const unknown = (object: JsonObject, known: readonly string[], component = NEMO_GUARDRAILS) => {
    for (const field of Object.keys(object)) {
      if (known.includes(field)) continue;
      pushByPolicy(diagnostics, policy.unknown_field, 'warning', { code: 'nemo_guardrails.unknown_field', component, field, message: `field '${field}' is not recognized for '${component}'` });
    }
  };
  const section = (name: string, known: readonly string[]) => {
    if (!(name in config)) return;
    const object = config[name];
    if (!isJsonObject(object)) {
      value(name, `'${name}' must be an object`);
      return;
    }
    unknown(object, known, name);
  };
  unknown(config, ['version', 'mode', 'config_path', 'config_yaml', 'colang_content', 'codec', 'input', 'output', 'tool_input', 'tool_output', 'priority', 'remote', 'local', 'request_defaults', 'policy']);
  section('policy', POLICY_FIELDS);
  section('remote', ['endpoint', 'config_id', 'config_ids', 'headers', 'timeout_millis']);
  section('local', ['python_module', 'python_executable', 'python_path']);
  section('request_defaults', ['context', 'thread_id', 'state', 'rails', 'llm_params', 'llm_output', 'output_vars', 'log']);

  const version = typeof config.version === 'number' ? config.version : 1;
  if (version !== 1) value('version', `NeMo Guardrails config version ${version} is unsupported`, 'nemo_guardrails.unsupported_config_version');
  const mode = typeof config.mode === 'string' ? config.mode : 'remote';
  if (mode !== 'remote' && mode !== 'local') value('mode', "mode must be 'remote' or 'local'");
  const remote = isJsonObject(config.remote) ? config.remote : null;
  const local = isJsonObject(config.local) ? config.local : null;
  const nonEmpty = (field: string, text: unknown, message: string) => {
    if (typeof text === 'string' && isNativeBlank(text)) value(field, message);
  };
  nonEmpty('config_path', config.config_path, 'config_path must not be empty');
  nonEmpty('config_yaml', config.config_yaml, 'config_yaml must not be empty');
  nonEmpty('colang_content', config.colang_content, 'colang_content must not be empty');
  if (remote !== null) {
    nonEmpty('remote.endpoint', remote.endpoint, 'remote.endpoint must not be empty');
    nonEmpty('remote.config_id', remote.config_id, 'remote.config_id must not be empty');
    ((remote.config_ids ?? []) as string[]).forEach((id, i) => nonEmpty(`remote.config_ids[${i}]`, id, 'remote.config_ids entries must not be empty'));
  }
  if (local !== null) {
    for (const field of ['python_module', 'python_executable', 'python_path']) nonEmpty(`local.${field}`, local[field], `local.${field} must not be empty`);
  }
  const has = (key: string) => config[key] != null;
  if (mode === 'local') {
    if (has('config_path') === has('config_yaml')) value(undefined, 'exactly one of config_path or config_yaml is required in local mode', 'nemo_guardrails.invalid_config_source');
    if (has('colang_content') && !has('config_yaml')) value('colang_content', 'colang_content can only be used with config_yaml');
    if (remote !== null) value('remote', "remote backend settings cannot be used when mode is 'local'");
  } else if (mode === 'remote') {
    if (has('config_path') || has('config_yaml') || has('colang_content')) {
      value(undefined, 'remote mode uses remote config identity and cannot include config_path, config_yaml, or colang_content', 'nemo_guardrails.invalid_config_source');
    }
    if (local !== null) value('local', "local backend settings cannot be used when mode is 'remote'");
    if (!(remote !== null && typeof remote.endpoint === 'string' && !isNativeBlank(remote.endpoint))) value('remote.endpoint', "remote.endpoint is required when mode is 'remote'");
    const hasId = remote !== null && remote.config_id != null;
    const hasIds = remote !== null && Array.isArray(remote.config_ids) && remote.config_ids.length > 0;
    if (hasId && hasIds) value('remote', 'remote.config_id and remote.config_ids cannot be used together');
    if (!(hasId || hasIds)) value(undefined, 'remote mode requires remote.config_id or remote.config_ids', 'nemo_guardrails.invalid_config_source');
  }
  const input = config.input !== false;
  const output = config.output !== false;
  const toolInput = config.tool_input === true;
  const toolOutput = config.tool_output === true;
  const codec = typeof config.codec === 'string' ? config.codec : null;
  if (input || output) {
    if (codec === null) value('codec', 'codec is required when any LLM surface is enabled');
    else if (!CODECS.includes(codec)) value('codec', `codec must be one of: ${CODECS.join(', ')}`);
  }
  if (!(input || output || toolInput || toolOutput)) value(undefined, 'at least one Guardrails surface must be enabled');
  if (mode === 'remote') {
    if ((input || output) && codec !== null && codec !== 'openai_chat') value('codec', "remote mode currently supports only codec = 'openai_chat'");
    if (toolInput) value('tool_input', 'remote mode does not currently support managed tool_input against the stock Guardrails remote contract');
  }
  if (isJsonObject(config.request_defaults) && mode === 'local') value('request_defaults', 'local mode does not currently support request_defaults');
  return diagnostics;
}
