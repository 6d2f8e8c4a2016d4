/**
 * NeMo Relay's propagation context: the causal parent (and the trace's root)
 * that work in another process continues, and its two wire forms, the JSON
 * text `nemo-relay-node`'s `propagationContextToJson` writes and the W3C
 * `traceparent`.
 *
 * The rules are native's (0.9.2), measured: the JSON is exactly
 * `{"version":1,"root_uuid":"…","parent_uuid":"…"}` (`root_uuid` left out
 * when there is none), uuids lowercase and hyphenated; reading accepts what
 * native accepts (a struct or its three-element array form, any uuid form
 * `Uuid::parse_str` takes, unknown fields ignored) and refuses what it
 * refuses (a version other than 1, a nil uuid, a duplicate field, a float
 * version, trailing text). Error messages are ours; each names the field.
 *
 * @module
 */

/** NeMo Relay's causal context, in the shape native's JS API uses. */
export interface PropagationContext {
  /** Always 1. */
  version: 1;
  /** The trace's root: the caller's session scope (its `propagation_root_uuid`). Absent in a rootless context. */
  rootUuid?: string;
  /** The caller's span the received work hangs under: its uuid. */
  parentUuid: string;
}

/** A propagation context that cannot be read or written: the message says which field and why. */
export class PropagationContextError extends Error {
  override readonly name = 'PropagationContextError';
}

const NIL = '00000000-0000-0000-0000-000000000000';
const HEX = /^[0-9a-fA-F]+$/;
const GROUPS = [8, 4, 4, 4, 12];

/**
 * A uuid in any form native's `Uuid::parse_str` accepts (hyphenated, simple,
 * `urn:uuid:` + hyphenated, `{hyphenated}`), as the lowercase hyphenated
 * text; `undefined` for anything else.
 */
function canonicalUuid(text: string): string | undefined {
  let body = text;
  if (body.startsWith('urn:uuid:')) body = body.slice(9);
  else if (body.startsWith('{') && body.endsWith('}')) body = body.slice(1, -1);
  else if (body.length === 32) return HEX.test(body) ? hyphenated(body.toLowerCase()) : undefined;
  const parts = body.split('-');
  if (parts.length !== 5 || parts.some((part, index) => part.length !== GROUPS[index] || !HEX.test(part))) return undefined;
  return parts.join('-').toLowerCase();
}

function hyphenated(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function usableUuid(value: unknown, field: 'parent_uuid' | 'root_uuid'): string {
  if (typeof value !== 'string') throw new PropagationContextError(`propagation context ${field} must be a UUID string, got ${describe(value)}`);
  const uuid = canonicalUuid(value);
  if (uuid === undefined) throw new PropagationContextError(`propagation context ${field} is not a UUID: ${JSON.stringify(value.slice(0, 80))}`);
  return uuid;
}

function notNil(uuid: string, field: 'parent_uuid' | 'root_uuid'): void {
  if (uuid === NIL) throw new PropagationContextError(`propagation context ${field} is not a usable Relay identifier (the nil UUID)`);
}

function checkVersion(version: number): void {
  if (version !== 1) throw new PropagationContextError(`unsupported propagation context version ${version}; expected 1`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/**
 * The context native's `propagationContextToJson` would write for this
 * object, checked the way native checks it; throws `PropagationContextError`.
 */
function normalized(context: PropagationContext): PropagationContext {
  if (typeof context !== 'object' || context === null) throw new PropagationContextError(`a propagation context must be an object, got ${describe(context)}`);
  const raw = context as { version?: unknown; rootUuid?: unknown; parentUuid?: unknown };
  // Native converts the version to an unsigned integer first (so 1.5 is 1 and null is 0).
  const version = raw.version === null ? 0 : raw.version;
  if (typeof version !== 'number') throw new PropagationContextError(`propagation context version must be a number, got ${describe(raw.version)}`);
  if (version < 0) throw new PropagationContextError('propagation context version is out of range');
  checkVersion(Number.isNaN(version) ? 0 : Math.trunc(version));
  const parentUuid = usableUuid(raw.parentUuid, 'parent_uuid');
  notNil(parentUuid, 'parent_uuid');
  if (raw.rootUuid === undefined) return { version: 1, parentUuid };
  const rootUuid = usableUuid(raw.rootUuid, 'root_uuid');
  notNil(rootUuid, 'root_uuid');
  return { version: 1, rootUuid, parentUuid };
}

/** The JSON text native's `propagationContextToJson` writes for `context`. Throws `PropagationContextError`. */
export function propagationContextToJson(context: PropagationContext): string {
  const checked = normalized(context);
  return checked.rootUuid === undefined
    ? `{"version":1,"parent_uuid":"${checked.parentUuid}"}`
    : `{"version":1,"root_uuid":"${checked.rootUuid}","parent_uuid":"${checked.parentUuid}"}`;
}

/**
 * The W3C `traceparent` of a rooted context, as native's
 * `propagationContextToTraceparent` writes it: the root's 32 hex digits as
 * the trace id, the low 64 bits of the parent as the span id, sampled.
 * Throws `PropagationContextError` for a rootless context.
 */
export function propagationContextToTraceparent(context: PropagationContext): string {
  const checked = normalized(context);
  if (checked.rootUuid === undefined) throw new PropagationContextError('a rootless propagation context cannot be converted to a traceparent');
  return `00-${checked.rootUuid.replaceAll('-', '')}-${checked.parentUuid.replaceAll('-', '').slice(16)}-01`;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A context continuing a W3C `traceparent` from a caller that sends no NeMo
 * Relay context (an OpenTelemetry-instrumented one): the trace id becomes the
 * root, and the parent a uuid whose low 64 bits are the caller's span id, so
 * the spans sent to a collector join the caller's trace under its span.
 * `undefined` when the header is not a valid version-00 (or later) traceparent.
 */
export function propagationContextFromTraceparent(traceparent: string): PropagationContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, , rest] = match as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is invalid; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { version: 1, rootUuid: hyphenated(traceId), parentUuid: hyphenated(`${'0'.repeat(16)}${spanId}`) };
}

/**
 * Reads the JSON text of a propagation context as native's
 * `propagationContextFromJson` does. Throws `PropagationContextError`.
 */
export function propagationContextFromJson(text: string): PropagationContext {
  if (typeof text !== 'string') throw new PropagationContextError(`a propagation context is JSON text, got ${describe(text)}`);
  const reader = new Reader(text);
  const fields = reader.document();
  if (!fields.has('version')) throw new PropagationContextError('propagation context: missing field `version`');
  if (!fields.has('parent_uuid')) throw new PropagationContextError('propagation context: missing field `parent_uuid`');
  checkVersion(fields.get('version') as number);
  const parentUuid = fields.get('parent_uuid') as string;
  notNil(parentUuid, 'parent_uuid');
  const rootUuid = fields.get('root_uuid');
  if (rootUuid === undefined || rootUuid === null) return { version: 1, parentUuid };
  notNil(rootUuid as string, 'root_uuid');
  return { version: 1, rootUuid: rootUuid as string, parentUuid };
}

const KNOWN = ['version', 'root_uuid', 'parent_uuid'] as const;
type Known = (typeof KNOWN)[number];
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const UNPAIRED_SURROGATE = /\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}/;

/**
 * A strict JSON reader for the one document: serde's grammar (what JSON.parse
 * takes, minus unpaired surrogate escapes), and for the top-level value the
 * raw tokens, so a float version, a duplicate field and the array form are
 * told apart as native tells them.
 */
class Reader {
  #at = 0;

  constructor(private readonly text: string) {}

  document(): Map<Known, unknown> {
    this.#ws();
    const fields = new Map<Known, unknown>();
    const first = this.text[this.#at];
    if (first === '{') this.#struct(fields);
    else if (first === '[') this.#sequence(fields);
    else {
      const start = this.#at;
      this.#value();
      throw new PropagationContextError(`propagation context JSON must be an object, got ${this.text.slice(start, start + 20)}`);
    }
    this.#ws();
    if (this.#at < this.text.length) this.#fail('trailing characters');
    return fields;
  }

  #struct(fields: Map<Known, unknown>): void {
    this.#at++;
    this.#ws();
    if (this.text[this.#at] === '}') {
      this.#at++;
      return;
    }
    for (;;) {
      this.#ws();
      if (this.text[this.#at] !== '"') this.#fail('expected a field name');
      const key = this.#string();
      this.#ws();
      if (this.text[this.#at] !== ':') this.#fail('expected ":"');
      this.#at++;
      this.#ws();
      if ((KNOWN as readonly string[]).includes(key)) {
        if (fields.has(key as Known)) this.#fail(`duplicate field \`${key}\``);
        fields.set(key as Known, this.#field(key as Known));
      } else this.#value();
      this.#ws();
      const next = this.text[this.#at++];
      if (next === '}') return;
      if (next !== ',') this.#fail('expected "," or "}"');
      this.#ws();
      if (this.text[this.#at] === '}') this.#fail('trailing comma');
    }
  }

  /** Serde's sequence form of the struct: exactly `[version, root_uuid, parent_uuid]`. */
  #sequence(fields: Map<Known, unknown>): void {
    this.#at++;
    let index = 0;
    for (;;) {
      this.#ws();
      if (this.text[this.#at] === ']') {
        if (index < KNOWN.length) this.#fail(`invalid length ${index}, expected 3 elements`);
        this.#at++;
        return;
      }
      if (index >= KNOWN.length) this.#fail('trailing characters');
      if (index > 0) {
        if (this.text[this.#at] !== ',') this.#fail('expected "," or "]"');
        this.#at++;
        this.#ws();
      }
      const key = KNOWN[index++]!;
      fields.set(key, this.#field(key));
    }
  }

  #field(key: Known): unknown {
    const start = this.#at;
    const value = this.#value();
    const raw = this.text.slice(start, this.#at);
    if (key === 'version') {
      if (typeof value !== 'number') this.#fail(`invalid type: ${describe(value)}, expected u16`, start);
      if (!/^-?\d+$/.test(raw)) this.#fail(`invalid type: floating point \`${raw}\`, expected u16`, start);
      if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 65535) this.#fail(`invalid value: integer \`${raw}\`, expected u16`, start);
      return value;
    }
    if (key === 'root_uuid' && value === null) return null;
    return usableUuid(value, key);
  }

  #value(): unknown {
    const c = this.text[this.#at];
    if (c === '"') return this.#string();
    if (c === '{' || c === '[') return this.#nested(c);
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.#at)) {
        this.#at += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = this.#at;
    const match = NUMBER.exec(this.text);
    if (match === null || match[0] === '' || match[0] === '-') this.#fail('expected a value');
    this.#at += match[0].length;
    return Number(match[0]);
  }

  #nested(open: '{' | '['): unknown {
    const close = open === '{' ? '}' : ']';
    this.#at++;
    this.#ws();
    if (this.text[this.#at] === close) {
      this.#at++;
      return open === '{' ? {} : [];
    }
    for (;;) {
      this.#ws();
      if (open === '{') {
        if (this.text[this.#at] !== '"') this.#fail('expected a field name');
        this.#string();
        this.#ws();
        if (this.text[this.#at++] !== ':') this.#fail('expected ":"');
        this.#ws();
      }
      this.#value();
      this.#ws();
      const next = this.text[this.#at++];
      if (next === close) return open === '{' ? {} : [];
      if (next !== ',') this.#fail(`expected "," or "${close}"`);
      this.#ws();
      if (this.text[this.#at] === close) this.#fail('trailing comma');
    }
  }

  #string(): string {
    const start = this.#at;
    this.#at++;
    for (;;) {
      const c = this.text[this.#at];
      if (c === undefined) this.#fail('unterminated string', start);
      if (c === '"') break;
      if (c === '\\') this.#at++;
      else if (c < ' ') this.#fail('control character in a string');
      this.#at++;
    }
    this.#at++;
    const raw = this.text.slice(start, this.#at);
    if (raw.includes('\\u') && UNPAIRED_SURROGATE.test(raw)) this.#fail('unpaired surrogate escape', start);
    try {
      return JSON.parse(raw) as string;
    } catch {
      return this.#fail('invalid string escape', start);
    }
  }

  #ws(): void {
    while (this.#at < this.text.length) {
      const c = this.text[this.#at];
      if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return;
      this.#at++;
    }
  }

  #fail(reason: string, at = this.#at): never {
    throw new PropagationContextError(`invalid propagation context JSON: ${reason} at character ${at + 1}`);
  }
}
