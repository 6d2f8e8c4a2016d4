// plugins.toml validation of the memory relay: the same diagnostics (codes,
// levels, components, fields, messages, order) as native's validate(), plus
// warnings for what only the native backend can do.
import { describe, expect, it } from 'vitest';
import { validatePluginConfig } from '../../../src/formats/index.ts';
import { nativePlugin, nativeUnavailable } from '../../support/native-driver.ts';
import { compareOtlpConfigSeed } from '../../support/random-otlp-config.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../../contract/backends.ts';
import type { InvalidPluginConfigError } from '../../../src/relay/errors.ts';

const obs = (config: unknown, extra: Record<string, unknown> = {}) => ({
  version: 1,
  components: [{ kind: 'observability', enabled: true, config, ...extra }],
});
const atof = (section: unknown) => obs({ version: 4, atof: section });
const atif = (section: unknown) => obs({ version: 4, atif: section });
const template = (filename_template: string) => atif({ enabled: true, filename_template });
const otel = (section: unknown) => obs({ version: 4, opentelemetry: section });

/** Documents whose diagnostics must equal native's. */
const CASES: Record<string, unknown> = {
  'a valid document': obs({
    version: 4,
    atof: { enabled: true, sinks: [{ type: 'file', output_directory: '/tmp/x', filename: 'e.jsonl', mode: 'overwrite' }] },
    atif: { enabled: true, agent_name: 'a', agent_version: '1', model_name: 'm', output_directory: '/tmp/x', filename_template: 't-{session_id}.json' },
  }),
  'an empty document': {},
  'document version 2': { version: 2, components: [] },
  'unknown component kind': { version: 1, components: [{ kind: 'nope', enabled: true, config: {} }] },
  'unknown top-level and component fields': { version: 1, components: [{ kind: 'observability', config: { version: 4 }, bogus: 1 }], extra_thing: 1 },
  'duplicate observability component': { version: 1, components: [{ kind: 'observability', config: { version: 4 } }, { kind: 'observability', config: { version: 4 } }] },
  'observability version 5': obs({ version: 5 }),
  'observability version 2': obs({ version: 2 }),
  'observability version missing': obs({}),
  'observability version as a string': obs({ version: '4' }),
  'observability version as a float': obs({ version: 4.5 }),
  'observability version negative': obs({ version: -1 }),
  'observability unknown field': obs({ version: 4, foo: 1 }),
  'version 3 with logs': obs({ version: 3, opentelemetry: { enabled: true, endpoints: [{ type: 'full', endpoint: 'http://x:4318' }], logs: { enabled: true } } }),
  'version 3 with metrics': obs({ version: 3, opentelemetry: { enabled: false, metrics: { enabled: false } } }),
  'two OTLP types on one destination': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1' }, { type: 'gen_ai', endpoint: 'http://localhost:1/v1/traces' }] }),
  'two OTLP types on one gRPC destination': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://localhost:1', transport: 'grpc' }, { type: 'openinference', endpoint: 'http://127.0.0.1:1', transport: 'grpc' }] }),
  'one OTLP type twice on one destination': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1' }, { type: 'full', endpoint: 'http://127.0.0.1:1' }] }),
  'unknown OTLP type': otel({ enabled: true, endpoints: [{ type: 'jaeger', endpoint: 'http://127.0.0.1:1' }] }),
  'OTLP transport http_json': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', transport: 'http_json' }] }),
  'blank OTLP endpoint': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: ' ' }] }),
  'OTLP endpoint without endpoint': otel({ enabled: true, endpoints: [{ type: 'full' }] }),
  'unknown mark projection': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', mark_projection: 'span' }] }),
  'attribute mapping without alias': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', attribute_mappings: [{ key: 'a' }] }] }),
  'mark_exclude_names not a list': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', mark_exclude_names: 'x' }] }),
  'blank metadata promotion prefix': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', promote_metadata_prefixes: [''] }] }),
  'OTLP batch larger than the queue': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', max_export_batch_size: 5000, max_queue_size: 10 }] }),
  'OTLP resource attribute not a string': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', resource_attributes: { a: 1 } }] }),
  'OTLP header in headers and header_env': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { a: '1' }, header_env: { a: 'HOME' } }] }),
  'OTLP header name with a space': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x a': 'v' } }] }),
  'OTLP header name with surrounding spaces': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { ' x-a ': 'v' } }] }),
  'OTLP header name not ASCII': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x-é': 'v' } }] }),
  'OTLP header name empty': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { '': 'v' } }] }),
  'OTLP header name with a quote': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x"a': 'v' } }] }),
  'OTLP header names of every token character, in capitals': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { "X-!#$%&'*+.^_`|~": 'v' } }] }),
  'OTLP header value with a line break': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x-a': 'a\nb' } }] }),
  'OTLP header value with DEL': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x-a': 'a\u007fb' } }] }),
  'OTLP header values empty, with a tab, past Latin-1': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { a: '', b: 'x\ty', c: '€ é' } }] }),
  'OTLP header in headers and header_env in different case': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'X-A': '1' }, header_env: { 'x-a': 'HOME' } }] }),
  'OTLP header_env naming an empty variable': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', header_env: { authorization: '' } }] }),
  'OTLP header_env naming a blank variable': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', header_env: { authorization: ' ' } }] }),
  'OTLP header_env header name invalid': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', header_env: { 'x a': 'HOME' } }] }),
  'OTLP logs endpoint header name invalid (named like a trace endpoint)': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1' }], logs: { enabled: true, minimum_severity: 'loud', endpoints: [{ endpoint: 'http://127.0.0.1:2', headers: { 'c c': 'v' } }] } }),
  'OTLP bad headers on two endpoints before their collision': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:3', headers: { 'a a': '1' } }, { type: 'gen_ai', endpoint: 'http://127.0.0.1:3', headers: { 'b b': '1' } }] }),
  'OTLP queue size negative (a usize)': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', max_queue_size: -1 }] }),
  'OTLP batch size negative (a usize)': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', max_export_batch_size: -1 }] }),
  'OTLP timeout negative (a u64)': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', timeout_millis: -1 }] }),
  'OTLP zero queue, batch and delay, and a batch above the queue': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', max_queue_size: 0, max_export_batch_size: 5, scheduled_delay_millis: 0 }] }),
  'OTLP batch above the default queue (only what the endpoint sets is compared)': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', max_export_batch_size: 5000 }] }),
  'three OTLP types on one destination: every earlier one named': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://h/v1/traces' }, { type: 'gen_ai', endpoint: 'http://h:80/v1/traces' }, { type: 'openinference', endpoint: 'http://h/v1/traces' }] }),
  'two OTLP types on blank endpoints': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: ' ' }, { type: 'gen_ai', endpoint: '' }] }),
  'OTLP logs derived from trace paths that cannot give /v1/logs': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'https://collector/otel' }, { type: 'gen_ai', endpoint: 'http://h/v1/traces/' }], logs: { enabled: true } }),
  'OTLP logs derived onto one destination': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1/v1/traces' }, { type: 'full', endpoint: 'http://localhost:1/' }, { type: 'full', endpoint: 'http://h/base' }], logs: { enabled: true } }),
  'OTLP logs endpoints blank, twice': otel({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ endpoint: ' ' }, { endpoint: '' }] } }),
  'OTLP logs endpoint ending in /v1/traces/': otel({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ endpoint: 'http://h:1/custom' }, { endpoint: 'http://h:1/x/v1/traces/' }] } }),
  'OTLP logs endpoints on one destination, / and /v1/logs': otel({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ endpoint: 'http://127.0.0.1:1/' }, { endpoint: 'http://localhost:1/v1/logs' }] } }),
  'OTLP logs enabled with an empty endpoint list': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://h:1' }], logs: { enabled: true, endpoints: [] } }),
  'OTLP logs off, its endpoints still checked': otel({ enabled: true, endpoints: [], logs: { enabled: false, endpoints: [{ endpoint: ' ', headers: { 'x-a': '1', 'X-B': '2' } }] } }),
  'OTLP logs endpoint header_env also in headers': otel({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ endpoint: 'http://h:1', headers: { k: '1' }, header_env: { K: 'HOME' } }] } }),
  'OTLP metrics derived from a trace path that cannot give /v1/metrics': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://h:1/base' }], metrics: { enabled: true } }),
  'OTLP metrics endpoints on one destination': otel({ enabled: true, endpoints: [], metrics: { enabled: true, endpoints: [{ endpoint: 'http://h:1' }, { endpoint: 'http://h:1/v1/metrics' }] } }),
  'OTLP metrics off with an empty endpoint list': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://h:1' }], metrics: { enabled: false, endpoints: [] } }),
  'OTLP logs with an unknown severity': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1' }], logs: { enabled: true, minimum_severity: 'loud' } }),
  'OTLP logs endpoint without endpoint': otel({ enabled: true, endpoints: [], logs: { enabled: true, endpoints: [{ transport: 'grpc' }] } }),
  'OTLP logs with explicit endpoints': otel({ enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1' }], logs: { enabled: true, endpoints: [{ endpoint: 'http://127.0.0.1:2', transport: 'grpc', bogus: 1 }] } }),
  'legacy flat atof fields': atof({ enabled: true, output_directory: '/tmp', filename: 'x', mode: 'append', endpoints: [] }),
  'standalone openinference section': obs({ version: 4, openinference: { enabled: true } }),
  'openinference null': obs({ version: 4, openinference: null }),
  'atof enabled without sinks': atof({ enabled: true }),
  'atof enabled with empty sinks': atof({ enabled: true, sinks: [] }),
  'atof disabled without sinks': atof({ enabled: false }),
  'atof null': atof(null),
  'atof not an object': atof(5),
  'bad sink mode': atof({ enabled: true, sinks: [{ type: 'file', mode: 'sideways' }] }),
  'bad sink mode in a disabled section': atof({ enabled: false, sinks: [{ type: 'file', mode: 'x' }] }),
  'sink mode with capital letter': atof({ enabled: true, sinks: [{ type: 'file', mode: 'Append' }] }),
  'sink mode null': atof({ sinks: [{ type: 'file', mode: null }] }),
  'unknown sink type': atof({ enabled: true, sinks: [{ type: 'kafka' }] }),
  'sink without type': atof({ enabled: true, sinks: [{ filename: 'a' }] }),
  'sink type null': atof({ sinks: [{ type: null }] }),
  'sink not an object': atof({ enabled: true, sinks: ['file'] }),
  'sinks not a list': atof({ enabled: true, sinks: {} }),
  'sinks null': atof({ sinks: null }),
  'sink with unknown fields': atof({ enabled: true, sinks: [{ type: 'file', colour: 'red' }] }),
  'atof unknown field': atof({ enabled: true, sinks: [{ type: 'file' }], wat: 1 }),
  'sink filename of the wrong type': atof({ enabled: true, sinks: [{ type: 'file', filename: 5 }] }),
  'sink output_directory null': atof({ sinks: [{ type: 'file', output_directory: null, filename: null }] }),
  'atof enabled of the wrong type': atof({ enabled: 'yes', sinks: [{ type: 'file' }] }),
  'stream sink without url': atof({ enabled: true, sinks: [{ type: 'stream' }] }),
  'stream sink with bad transport, timeout and policy': atof({
    enabled: true,
    sinks: [{ type: 'stream', url: 'http://x', timeout_millis: 0, transport: 'pigeon', field_name_policy: 'zz' }],
  }),
  'stream sink names': atof({
    enabled: true,
    sinks: [
      { type: 'stream', url: 'http://x', name: ' a ' },
      { type: 'stream', url: 'http://y', name: 'b' },
      { type: 'stream', url: 'http://z', name: 'b' },
    ],
  }),
  'stream sink header in both maps, env not set': atof({
    enabled: true,
    sinks: [{ type: 'stream', url: 'http://x', headers: { a: '1' }, header_env: { a: 'NRH_TEST_UNSET_ENV_VAR' } }],
  }),
  'stream sink: every field wrong, in native order': atof({
    enabled: true,
    sinks: [{ type: 'stream', url: 'ftp://x', name: ' a ', timeout_millis: 0, field_name_policy: 'z', headers: { 'bad h': '1', b: '2' }, header_env: { b: 'NRH_TEST_UNSET_ENV_VAR' } }],
  }),
  'stream sink: bad url, header names and header value': atof({
    enabled: true,
    sinks: [
      { type: 'stream', url: 'ftp://x', transport: 'ndjson', headers: { 'bad h': '1' }, header_env: { 'bad e': 'NRH_TEST_UNSET_ENV_VAR' } },
      // One header per map: native reports a map's keys in hash order.
      { type: 'stream', url: 'http://x', headers: { v: 'x\ny' } },
    ],
  }),
  'stream sink urls per transport': atof({
    enabled: true,
    sinks: [
      { type: 'stream', url: '' },
      { type: 'stream', url: 'http://', transport: 'http_post' },
      { type: 'stream', url: 'ws://x', transport: 'ndjson' },
      { type: 'stream', url: 'http://x', transport: 'websocket' },
      { type: 'stream', url: 'not a url' },
      { type: 'stream', url: 'HTTP://X/y' },
      { type: 'stream', url: 'wss://x/y', transport: 'websocket' },
      { type: 'stream', url: 'https://x', transport: 'ndjson', name: '' },
    ],
  }),
  'atif http storage: every field wrong': atif({
    enabled: true,
    storage: [
      { type: 'http', endpoint: 'ftp://x', timeout_millis: 0, headers: { 'bad h': '1' }, header_env: { a: 'NRH_TEST_UNSET_ENV_VAR' } },
      { type: 'http', endpoint: 'http://x', headers: { v: 'a\nb' } },
    ],
  }),
  'atif http storage endpoints': atif({
    enabled: true,
    storage: [
      { type: 'http', endpoint: 'http://' },
      { type: 'http', endpoint: ' http://x' },
      { type: 'http', endpoint: 'https://x/u', header_env: { 'bad e': 'PATH' } },
    ],
  }),
  'atif s3 storage with unset variables and blank bucket': atif({
    enabled: true,
    storage: [
      { type: 's3', bucket: '  ', secret_access_key_var: 'NRH_TEST_UNSET_ENV_VAR', session_token_var: 'NRH_TEST_UNSET_ENV_VAR' },
      { type: 's3', bucket: 'b', endpoint_url: 'not a url', key_prefix: '../x', allow_http: true, access_key_id: 'A', secret_access_key_var: 'PATH' },
    ],
  }),
  'atif s3 allow_http of the wrong type': atif({ enabled: true, storage: [{ type: 's3', bucket: 'b', allow_http: 'yes' }] }),
  'template without {session_id}': template('x.json'),
  'template without {session_id} in a disabled section': atif({ enabled: false, filename_template: 'x.json' }),
  'absolute template': template('/etc/{session_id}.json'),
  'template with ..': template('../{session_id}.json'),
  'template with a . segment': template('./{session_id}.json'),
  'template with subfolders and odd literal characters': template('a b/c\\d:ü//{session_id}}-{x}.json'),
  'template with an unknown placeholder kept literal': template('{session_id}-{user}.json'),
  'template fallback with ..': template('{session_id}-{metadata.x:-../y}.json'),
  'template fallback with a space': template('{session_id}-{metadata.x:-a b}.json'),
  'template fallback empty': template('{session_id}{metadata.a:-}'),
  'template fallback with a subfolder': template('{session_id}{metadata.a:-x/y}'),
  'template with an unclosed placeholder': template('{session_id}-{metadata.x.json'),
  'template metadata path empty': template('{session_id}-{metadata.}.json'),
  'template metadata path with a space': template('{session_id}{metadata.a b}'),
  'template metadata path with ..': template('{session_id}{metadata.a..b}'),
  'template with nested braces': template('{session_id}{metadata.{a}}'),
  'template {session_id:-x}': template('{session_id:-x}'),
  'template empty': template(''),
  'template: containment checked before path safety': template('../{metadata.a..b}'),
  'template: path safety checked before placeholders': template('/{session_id}{metadata.c'),
  'template: first bad placeholder wins': template('{session_id}{metadata.a:-../b}{metadata.c d}'),
  'template null': atif({ filename_template: null }),
  'atif unknown field': atif({ enabled: true, weird: 1 }),
  'atif agent_name null': atif({ agent_name: null }),
  'atif model_name of each wrong type': atif({ model_name: true }),
  'atif model_name a list': atif({ model_name: [] }),
  'atif model_name an object': atif({ model_name: {} }),
  'atif model_name a float': atif({ model_name: 1.5 }),
  'atif tool_definitions not a list': atif({ enabled: true, tool_definitions: {} }),
  'atif tool_definitions of any JSON': atif({ enabled: true, tool_definitions: [1, { name: 'x' }] }),
  'atif extra of any JSON': atif({ enabled: true, extra: [] }),
  'atif storage': atif({ enabled: true, storage: [{ type: 'http', endpoint: 'http://x' }] }),
  'atif storage of unknown type': atif({ enabled: true, storage: [{ type: 'ftp' }] }),
  'atif storage s3 with empty bucket': atif({ enabled: true, storage: [{ type: 's3', bucket: '' }] }),
  'atif storage http without endpoint': atif({ enabled: true, storage: [{ type: 'http' }] }),
  'atif null': atif(null),
  'atif a string': atif('s'),
  'type errors: first in sorted key order wins': obs({ version: 4, atif: { enabled: 'x', agent_name: 5 }, atof: { enabled: 'y' } }),
  'opentelemetry enabled': obs({ version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'full', endpoint: 'http://localhost:4318' }] } }),
  'opentelemetry disabled': obs({ version: 4, opentelemetry: { enabled: false } }),
  'opentelemetry enabled without endpoints': obs({ version: 4, opentelemetry: { enabled: true } }),
  'opentelemetry unknown fields': obs({ version: 4, opentelemetry: { enabled: true, wat: 1, endpoints: [] } }),
  'opentelemetry unknown endpoint type': obs({ version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'zipkin', endpoint: 'http://x' }] } }),
  'opentelemetry endpoint without endpoint': obs({ version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'full' }] } }),
  'opentelemetry bad transport': obs({ version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'full', endpoint: 'http://x', transport: 'smoke' }] } }),
  'opentelemetry logs with unknown field and no endpoints': obs({ version: 4, opentelemetry: { enabled: false, logs: { enabled: true, foo: 1 } } }),
  'enable_full_payloads': obs({ version: 4, enable_full_payloads: true }),
  'enable_full_payloads a string': obs({ version: 4, enable_full_payloads: 'yes' }),
  'component policy: unknown fields are errors': obs({ version: 4, policy: { unknown_field: 'error' }, foo: 1 }),
  'component policy with an unknown field': obs({ version: 4, policy: { bogus: 'x' } }),
  'component policy with a bad value': obs({ version: 4, policy: { unknown_field: 'x' } }),
  'component policy: unsupported values are warnings': obs({ version: 4, policy: { unsupported_value: 'warn' }, atof: { enabled: true, sinks: [{ type: 'file', mode: 'x' }] } }),
  'document policy: unknown components are errors': { version: 1, policy: { unknown_component: 'error' }, components: [{ kind: 'nope' }] },
  'document policy: unknown components ignored': { version: 1, policy: { unknown_component: 'ignore' }, components: [{ kind: 'nope' }] },
  'document policy: unknown fields ignored': { version: 1, policy: { unknown_field: 'ignore' }, components: [{ kind: 'observability', config: { version: 4, foo: 1 } }] },
  'document policy: unknown fields are errors': { version: 1, policy: { unknown_field: 'error' }, components: [{ kind: 'observability', config: { version: 4, foo: 1 } }] },
  'document policy: unsupported values are warnings': { version: 1, policy: { unsupported_value: 'warn' }, components: [{ kind: 'observability', config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', mode: 'x' }] } } }] },
  'document policy: unsupported values ignored': { version: 1, policy: { unsupported_value: 'ignore' }, components: [{ kind: 'observability', config: { version: 4, atof: { enabled: true } } }] },
  'a disabled component is still validated': { version: 1, components: [{ kind: 'observability', enabled: false, config: { version: 9, atof: { enabled: true } } }] },
  'diagnostic order across sections': obs({
    version: 9,
    zz: 1,
    openinference: {},
    atof: { enabled: true, output_directory: 'x', qq: 1 },
    atif: { enabled: true, ww: 1, filename_template: 'x' },
    opentelemetry: { enabled: false, vv: 1, logs: {} },
  }),
  'diagnostic order with version 3 signals': obs({ version: 3, atof: { enabled: true, mode: 'x' }, atif: { ww: 1 }, opentelemetry: { vv: 1, metrics: {}, logs: {} } }),
  'diagnostic order of combined unknown fields and errors': obs({
    version: 3,
    zeta: 1,
    alpha: 2,
    openinference: {},
    atof: { enabled: true, zz: 1, aa: 2, sinks: [{ type: 'file', mode: 'bad' }, { type: 'stream', url: 'u', transport: 'x' }] },
    atif: { enabled: true, qq: 1, filename_template: 'x' },
    opentelemetry: { enabled: true, oo: 1, endpoints: [{ type: 'full', endpoint: 'http://x', ee: 1 }], logs: { enabled: true }, metrics: {} },
  }),
  'document-level order: version, duplicates, then components in order': {
    version: 2,
    components: [{ kind: 'nope' }, { kind: 'observability', config: { version: 9 } }, { kind: 'observability', config: { version: 8 } }, { kind: 'zzz' }],
  },
};

/** Documents native's validate() throws for (the memory relay reports the same text). */
const SHAPE_ERRORS: Record<string, unknown> = {
  'document version as a string': { version: '1', components: [] },
  'document version null': { version: null, components: [] },
  'component without kind': { version: 1, components: [{ enabled: true, config: {} }] },
  'component kind null': { version: 1, components: [{ kind: null }] },
  'components not a list': { version: 1, components: {} },
  'components null': { components: null },
  'component null': { version: 1, components: [null] },
  'component config not an object': { version: 1, components: [{ kind: 'observability', config: 5 }] },
  'component enabled a string': { version: 1, components: [{ kind: 'observability', enabled: 'yes', config: { version: 4 } }] },
  'document policy with a bad value': { version: 1, policy: { unknown_field: 'loud' }, components: [] },
  'document policy null': { version: 1, policy: null, components: [] },
  'document a string': 'x',
};

// With the skips: what native refuses only at activation (the whole document), the memory relay reads when it
// validates, and skips that endpoint (docs/operators/otlp.md).
const MEMORY_ONLY = new Set(['observability.backend_unsupported', 'plugin.backend_unsupported_component', 'observability.otel_endpoint_skipped']);
const nativeDiagnostics = (document: unknown) => nativePlugin!.validate(document).config.diagnostics;
const ourDiagnostics = (document: unknown) => validatePluginConfig(document).diagnostics.filter((d) => !MEMORY_ONLY.has(d.code));

describe.skipIf(nativePlugin === null)(`plugin config diagnostics equal native validate()${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  for (const [name, document] of Object.entries(CASES)) {
    it(`reports the same diagnostics for ${name}`, () => {
      expect(ourDiagnostics(document)).toEqual(nativeDiagnostics(document));
    });
  }
  it('exercises real diagnostics, not only clean documents', () => {
    const withDiagnostics = Object.values(CASES).filter((document) => nativeDiagnostics(document).length > 0);
    expect(withDiagnostics.length).toBeGreaterThan(95);
  });
  it('reports every header problem native reports, whatever order native walks its tables in', () => {
    // Native walks headers and header_env in hash order: its messages come in a varying order, and which of two
    // names differing in case it calls the duplicate varies too. Compared as sets, a duplicate by its lowercase name.
    const document = otel({
      enabled: true,
      endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:1', headers: { 'x a': 'v', 'b b': 'v', y: 'a\nb', 'X-B': '1', 'x-b': '2', Ab: '1', ab: '2', AB: '3' }, header_env: { 'z z': 'V', q: '', 'X-B': 'W', Y: 'Z', 'k-1': 'K', 'K-1': 'L' } }],
    });
    type Diagnostic = { field?: string; message: string; level: string; code: string };
    const key = (d: Diagnostic) =>
      / contains duplicate header /.test(d.message) ? `${d.level} ${d.code} duplicate ${d.message.replace(/header ("[^"]*")/, (_, n: string) => `header ${n.toLowerCase()}`)}` : `${d.level} ${d.code} ${d.field} ${d.message}`;
    const theirs = (nativeDiagnostics(document) as Diagnostic[]).map(key).sort();
    expect(theirs.length).toBeGreaterThan(8);
    expect(ourDiagnostics(document).map(key).sort()).toEqual(theirs);
  });
  // Seeds past these run in test/slow/random-otlp-config.test.ts.
  it('reports what native reports for random OpenTelemetry sections (seeds 1-150)', () => {
    const differing = [];
    for (let seed = 1; seed <= 150; seed++) {
      const difference = compareOtlpConfigSeed(seed);
      if (difference.onlyNative.length + difference.onlyMemory.length > 0) differing.push({ seed, ...difference });
    }
    expect(differing).toEqual([]);
  });
  for (const [name, document] of Object.entries(SHAPE_ERRORS)) {
    it(`reports native's shape error for ${name}`, () => {
      let nativeMessage = '';
      try {
        nativePlugin!.validate(document);
      } catch (error) {
        nativeMessage = (error as Error).message;
      }
      expect(nativeMessage).not.toBe('');
      const ours = validatePluginConfig(document);
      expect(ours.shapeError).toBe(nativeMessage);
      expect(ours.diagnostics).toEqual([{ level: 'error', code: 'plugin.invalid_config', message: nativeMessage }]);
    });
  }
});

describe('plugin config features the memory relay does not implement', () => {
  it('reads OpenTelemetry, stream sinks, ATIF storage and the rest, with no warning', () => {
    const result = validatePluginConfig(
      obs({
        version: 4,
        atof: { enabled: true, sinks: [{ type: 'stream', url: 'http://x' }, { type: 'file', filename: 'e.jsonl' }] },
        atif: { enabled: true, storage: [{ type: 'http', endpoint: 'http://x' }] },
        opentelemetry: { enabled: true, endpoints: [{ type: 'full', endpoint: 'http://localhost:4318' }] },
      }),
    );
    expect(result.diagnostics.map((d) => [d.level, d.code, d.component, d.field])).toEqual([]);
    expect(result.observability?.opentelemetry.traces).toMatchObject([{ type: 'full', transport: 'http_binary', url: 'http://localhost:4318/v1/traces' }]);
    expect(result.observability?.streamSinks.map((sink) => [sink.index, sink.url, sink.transport])).toEqual([[0, 'http://x', 'http_post']]);
    expect(result.observability?.storage).toMatchObject([{ type: 'http', index: 0, endpoint: 'http://x' }]);
    expect(result.observability?.fileSinks).toEqual([{ index: 1, outputDirectory: undefined, filename: 'e.jsonl', mode: 'append' }]);
    expect(result.observability?.atif).toMatchObject({ agentName: 'NeMo Relay', agentVersion: '0.9.0', modelName: 'unknown' });
  });

  it('warns about what it does not run (nemo_guardrails, dynamic plugins) instead of failing', () => {
    const result = validatePluginConfig({
      version: 1,
      components: [
        { kind: 'adaptive' },
        { kind: 'pricing', enabled: false },
        { kind: 'nemo_guardrails', config: { codec: 'openai_chat', remote: { endpoint: 'http://127.0.0.1:9', config_id: 'c' } } },
      ],
      plugins: { dynamic: [{ manifest: './x/relay-plugin.toml' }] },
    });
    expect(result.diagnostics.map((d) => [d.level, d.code, d.component ?? d.field])).toEqual([
      ['warning', 'nemo_guardrails.deprecated', 'nemo_guardrails'],
      ['warning', 'plugin.backend_unsupported_component', 'nemo_guardrails'],
      ['warning', 'plugin.backend_unsupported_component', 'plugins.dynamic'],
    ]);
  });
});

describe.skipIf(!nativeAvailable)(`activating a document as native does${nativeAvailable ? '' : ` (skipped: ${nativeLoadError})`}`, () => {
  // What each backend's activation does with `document`: the error's text and diagnostics, or 'active'.
  async function outcome(backend: (typeof FILE_BACKENDS)[number], document: Record<string, unknown>) {
    const relay = backend.create();
    try {
      const activation = await relay.initializePluginConfig!(document as never);
      await activation.close();
      return 'active';
    } catch (error) {
      const { message, diagnostics } = error as InvalidPluginConfigError;
      // The native adapter says where it activated (`invalid config: activation failed: ...`); the reason is native's.
      return { reason: message.replace(/^invalid config: (activation failed: )?/, ''), diagnostics };
    } finally {
      await relay.shutdown?.();
    }
  }
  const both = async (document: Record<string, unknown>) => Promise.all(FILE_BACKENDS.map((backend) => outcome(backend, document)));

  it('refuses an enabled component kind no relay registers (native only warns when it validates), and ignores a disabled one', async () => {
    // A misspelt kind: the memory relay activated the document with a warning, and ran no redaction.
    const [native, memory] = await both({ version: 1, components: [{ kind: 'pii-redaction', config: { builtin: { action: 'hash' } } }] });
    expect(native).toEqual({ reason: "not found: plugin component 'pii-redaction' is not registered", diagnostics: [expect.objectContaining({ level: 'warning', code: 'plugin.unknown_component' })] });
    expect(memory).toEqual(native);
    const ignored = { version: 1, policy: { unknown_component: 'ignore' }, components: [{ kind: 'frob' }] };
    expect(await both(ignored)).toEqual([{ reason: "not found: plugin component 'frob' is not registered", diagnostics: [] }, { reason: "not found: plugin component 'frob' is not registered", diagnostics: [] }]);
    expect(await both({ version: 1, components: [{ kind: 'frob', enabled: false }] })).toEqual(['active', 'active']);
  });

  it("reports a document refused for its shape with the same plugin.invalid_config diagnostic (native's own diagnostics are empty)", async () => {
    for (const document of [{ version: 1, components: { kind: 'pii_redaction' } }, { version: '1', components: [] }]) {
      const [native, memory] = await both(document);
      expect(native).toMatchObject({ diagnostics: [{ level: 'error', code: 'plugin.invalid_config', message: expect.stringMatching(/^invalid plugin config: invalid type: /) }] });
      expect(memory).toEqual(native);
    }
  });
});
