/**
 * Random `[components.config.opentelemetry]` sections for the validate()
 * differential: endpoints (trace and log) with header tables whose names
 * and values come from the classes native tells apart (tokens, capitals of
 * the same name, spaces, colons, quotes, non-ASCII, empty; control
 * characters, tab, Latin-1 and past it), header_env variables (blank or
 * not), batch numbers (0, small, a batch above the queue), endpoint strings
 * (blank, padded, with a path, a trailing slash or a query), log and
 * metric sections, and the collisions of two types on one destination. `compareOtlpConfigSeed`
 * returns what the memory relay's validator and native's `validate()` say
 * differently, as sets: native walks header tables in hash order, so the
 * order of its messages and which of two names differing in case it calls
 * the duplicate vary from run to run.
 */

import type { JsonObject } from '../../src/shared/json.ts';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { nativePlugin } from './native-driver.ts';
import { Draw } from './seeded-random.ts';

const NAMES = ['x-a', 'X-A', 'x-A', 'authorization', 'Authorization', 'x a', ' x-b', 'x:c', 'x"d', 'x-é', '', 'k_1', "!#$%&'*+.^`|~", 'x-b'];
const VALUES = ['v', '', ' padded ', 'a\tb', 'a\nb', 'a\u007fb', 'a\u0000b', 'café', '€5', 'Bearer t0k3n', '\u00a0x'];
const VARIABLES = ['HOME', 'PATH', '', ' ', 'NRH_UNSET_VARIABLE', 'A B'];
const ENDPOINTS = ['http://127.0.0.1:4318', 'http://localhost:4318/', 'http://127.0.0.1:4318/v1/traces', ' http://127.0.0.1:4318 ', 'http://collector:4318/base?x=1', 'https://collector/otel', ' '];
const NUMBERS = [0, 1, 2, 10, 512, 2048, 5000];

function table(draw: Draw, of: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (let i = draw.int(0, 4); i > 0; i--) out[draw.pick(NAMES)] = draw.pick(of);
  return out;
}

function endpoint(draw: Draw, trace: boolean): JsonObject {
  const out: JsonObject = { endpoint: draw.pick(ENDPOINTS) };
  if (trace) out.type = draw.pick(['full', 'gen_ai', 'openinference']);
  if (draw.chance(0.3)) out.transport = draw.pick(['http_binary', 'grpc']);
  if (draw.chance(0.6)) out.headers = table(draw, VALUES);
  if (draw.chance(0.5)) out.header_env = table(draw, VARIABLES);
  if (trace) {
    for (const field of ['max_queue_size', 'max_export_batch_size', 'scheduled_delay_millis', 'timeout_millis']) {
      if (draw.chance(0.2)) out[field] = draw.pick(NUMBERS);
    }
  } else if (draw.chance(0.2)) {
    out.timeout_millis = draw.pick(NUMBERS);
  }
  return out;
}

/** The document of one seed. */
export function randomOtlpDocument(seed: number): JsonObject {
  const draw = new Draw(seed);
  const otel: JsonObject = { enabled: true, endpoints: Array.from({ length: draw.int(0, 3) }, () => endpoint(draw, true)) };
  if (draw.chance(0.4)) {
    const logs: JsonObject = { enabled: draw.chance(0.8) };
    if (draw.chance(0.6)) logs.endpoints = Array.from({ length: draw.int(1, 2) }, () => endpoint(draw, false));
    otel.logs = logs;
  }
  if (draw.chance(0.3)) {
    const metrics: JsonObject = { enabled: draw.chance(0.8) };
    if (draw.chance(0.6)) metrics.endpoints = Array.from({ length: draw.int(0, 2) }, () => endpoint(draw, false));
    otel.metrics = metrics;
  }
  return { version: 1, components: [{ kind: 'observability', config: { version: 4, opentelemetry: otel } }] };
}

type Diagnostic = { level: string; code: string; component?: string; field?: string; message: string };

/** Checks native makes only at activation (the memory relay reads them when it validates, and skips the endpoint). */
const ACTIVATION_ONLY = new Set(['observability.otel_endpoint_skipped', 'observability.otel_env_headers', 'observability.backend_unsupported', 'plugin.backend_unsupported_component']);
/** Warnings of ours native never gives (it drops such a setting quietly). */
const OURS_ONLY = new Set(['observability.ignored_on_gen_ai']);

function key(d: Diagnostic): string {
  const text = `${d.level} ${d.code} ${d.component ?? ''} ${d.field ?? ''} ${d.message}`;
  return / contains (a )?duplicate header /.test(d.message) ? text.toLowerCase() : text;
}

/** What the two validators say differently for the seed's document (empty when they agree). */
export function compareOtlpConfigSeed(seed: number): { onlyNative: string[]; onlyMemory: string[] } {
  const document = randomOtlpDocument(seed);
  let theirs: string[];
  try {
    theirs = (nativePlugin!.validate(document).config.diagnostics as Diagnostic[]).map(key);
  } catch (error) {
    theirs = [`throws ${(error as Error).message}`];
  }
  const validation = validatePluginConfig(document);
  const ours = validation.shapeError !== undefined ? [`throws ${validation.shapeError}`] : (validation.diagnostics as Diagnostic[]).filter((d) => !ACTIVATION_ONLY.has(d.code) && !OURS_ONLY.has(d.code)).map(key);
  const remaining = [...ours];
  const onlyNative: string[] = [];
  for (const item of theirs) {
    const at = remaining.indexOf(item);
    if (at === -1) onlyNative.push(item);
    else remaining.splice(at, 1);
  }
  return { onlyNative, onlyMemory: remaining };
}
