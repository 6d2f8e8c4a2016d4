/**
 * What leaves the plugin for a backend, made safe in one place:
 *
 * - **Credentials in headers never leave.** `authorization`,
 *   `proxy-authorization`, `x-api-key`, `api-key`, `x-goog-api-key`,
 *   `anthropic-api-key`, `cookie` and `set-cookie` are dropped from every
 *   `headers` value of every payload (a hook's raw request in an unmatched
 *   mark, an adapter's request, a tool's arguments), on every backend, in
 *   every form a program holds headers in: a plain object, a `Headers`
 *   (what the OpenAI and Anthropic clients hand their `fetch`; recorded as a
 *   plain object of its entries, where JSON alone would record `{}`), a
 *   `Map`, `[name, value]` pairs (fetch's other `HeadersInit`), a flat
 *   `[name, value, name, value]` list (undici's diagnostics channel), HAR's
 *   `{name, value}` entries, and raw `Name: value` header text. Native drops
 *   six of these names from the recorded LLM request's header object only.
 * - **The host's `redact` hook** (`createNemoRelayPlugin({ redact })`) sees
 *   every event's name and payloads and may replace them, after the
 *   backend's own `pii_redaction` on the memory relay (it runs inside the
 *   relay, on the event every output receives) and, on a backend that
 *   cannot run it there (native, custom backends), on each call's payloads
 *   before they are handed over. A hook that throws or returns something
 *   unusable clears what it governs: payloads become `null`, the name
 *   `[REDACTED]` (fail closed).
 *
 * The host's own calls (managed LLM and tool execution) always receive the
 * original request and return the original result: only the recorded copy
 * is changed.
 *
 * @module
 */

import type {
  AtofExporterOptions,
  AtifExporterOptions,
  Json,
  JsonObject,
  LlmEndOptions,
  LlmHandle,
  LlmStartOptions,
  ManagedLlmCall,
  ManagedLlmOptions,
  ManagedToolCall,
  ManagedToolOptions,
  MarkOptions,
  PopScopeOptions,
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../relay/contract.ts';
import type { AtofEvent } from '../formats/atof/types.ts';
import { isJsonObject, toJson } from '../shared/json.ts';
import { isCredentialHeader } from '../shared/secret-text.ts';
import { jsonEqual } from './llm-response.ts';

/** An event as the `redact` hook sees it: its name and payloads, with what it is. */
export interface RedactableEvent {
  /** `scope` for scopes and LLM and tool spans, `mark` for marks. */
  readonly kind: 'scope' | 'mark';
  /** `start` or `end` of a scope or span; null for a mark. */
  readonly phase: 'start' | 'end' | null;
  /** `agent`, `llm`, `tool`, `custom`, ...; null for a mark. */
  readonly category: string | null;
  /** The scope, span or mark name (a session scope's holds the session id). */
  name: string;
  /** The payload: a scope's input or output, an LLM request (`{content, headers}`) or response, tool arguments or result, a mark's data. */
  data: Json;
  /** The event's metadata. */
  metadata: Json;
  /** A tool end's result annotation, when it has one. */
  annotation?: Json;
}

/** What the hook may give back: the fields to replace (a missing one is kept). */
export interface RedactedFields {
  name?: string;
  data?: Json;
  metadata?: Json;
  annotation?: Json;
}

/**
 * The host's redaction hook: called with a private copy of each event; it
 * may change that copy in place, or return the fields to replace. Synchronous.
 */
export type RedactHook = (event: RedactableEvent) => RedactedFields | void;

/** The placeholder for a name the hook could not be trusted with. */
const REDACTED_NAME = '[REDACTED]';

/**
 * `value` without credential headers: every value under a `headers` key
 * (any case) loses its sensitive entries. Copies only the objects on the
 * way to a change; returns `value` itself when there is none.
 */
export function withoutSensitiveHeaders<T>(value: T, depth = 0): T {
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  let copy: Record<string, unknown> | unknown[] | null = null;
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        // Most values are primitives: only an object can hold headers.
        if (typeof item !== 'object' || item === null) continue;
        const cleaned = withoutSensitiveHeaders(item, depth + 1);
        if (cleaned !== item) {
          copy ??= value.slice();
          (copy as unknown[])[i] = cleaned;
        }
      }
      return (copy ?? value) as T;
    }
    const source = value as Record<string, unknown>;
    const prototype: unknown = Object.getPrototypeOf(source);
    if (prototype === Object.prototype || prototype === null) {
      // A plain object: `for...in` reads V8's cached key list where `Object.keys` allocates a
      // new array per object, and this walk visits every object of every payload (bench/RESULTS.md,
      // "the object path before the converter").
      for (const key in source) copy = cleanedEntry(source, key, depth, copy as Record<string, unknown> | null);
    } else {
      for (const key of Object.keys(source)) copy = cleanedEntry(source, key, depth, copy as Record<string, unknown> | null);
    }
  } catch {
    // A getter or Proxy that throws: the backend's own conversion records it as unserializable.
    return value;
  }
  return (copy ?? value) as T;
}

/**
 * One entry of `withoutSensitiveHeaders`' walk: `copy` (made at the first
 * change) with `key` cleaned. An inherited key (a `for...in` over an object
 * whose `Object.prototype` was given enumerable keys) is left alone: it is
 * not part of what the backend records.
 */
function cleanedEntry(source: Record<string, unknown>, key: string, depth: number, copy: Record<string, unknown> | null): Record<string, unknown> | null {
  const item = source[key];
  // Most values are primitives: only an object, or header text under a `headers` key, can hold headers.
  if ((typeof item !== 'object' || item === null) && (typeof item !== 'string' || !isHeadersKey(key))) return copy;
  const cleaned = isHeadersKey(key) ? cleanHeaders(item) : withoutSensitiveHeaders(item, depth + 1);
  if (cleaned === item || !Object.hasOwn(source, key)) return copy;
  copy ??= { ...source };
  copy[key] = cleaned;
  return copy;
}

/**
 * `headers` in any case. The first letter is checked before lower-casing:
 * ids such as `task_id` and `turn_id` have the same length, and no other
 * character lower-cases to an `h`.
 */
function isHeadersKey(key: string): boolean {
  return key.length === 7 && (key.charCodeAt(0) | 0x20) === 0x68 && key.toLowerCase() === 'headers';
}

/** One `headers` value without its credential entries, in the form the program holds it (copied only when one is dropped). */
function cleanHeaders(headers: unknown): unknown {
  if (typeof headers === 'string') return cleanHeaderText(headers);
  if (typeof headers !== 'object' || headers === null) return headers;
  if (Array.isArray(headers)) return cleanHeaderList(headers);
  if (headers instanceof Map) return cleanHeaderMap(headers);
  if (isHeadersClass(headers)) return headerEntries(headers);
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(headers)) {
    if (!isCredentialHeader(key)) continue;
    copy ??= { ...(headers as Record<string, unknown>) };
    delete copy[key];
  }
  return copy ?? headers;
}

/** Raw header text (`Name: value` lines) without its credential lines. */
function cleanHeaderText(text: string): string {
  if (!text.includes(':')) return text;
  const lines = text.split(/(?<=\n)/);
  const kept = lines.filter((line) => {
    const colon = line.indexOf(':');
    return colon <= 0 || !isCredentialHeader(line.slice(0, colon).trim());
  });
  return kept.length === lines.length ? text : kept.join('');
}

/**
 * A list of headers without its credential entries: `[name, value]` pairs,
 * HAR's `{name, value}` objects, or, when every item is a string, a flat
 * `[name, value, ...]` list.
 */
function cleanHeaderList(list: unknown[]): unknown[] {
  const flat = list.length % 2 === 0 && list.every((item) => typeof item === 'string');
  const step = flat ? 2 : 1;
  const kept: unknown[] = [];
  for (let i = 0; i < list.length; i += step) {
    const item = list[i];
    const name = flat ? item : Array.isArray(item) ? item[0] : typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
    if (typeof name === 'string' && isCredentialHeader(name)) continue;
    kept.push(item);
    if (flat) kept.push(list[i + 1]);
  }
  return kept.length === list.length ? list : kept;
}

function cleanHeaderMap(map: Map<unknown, unknown>): Map<unknown, unknown> {
  let copy: Map<unknown, unknown> | null = null;
  for (const key of map.keys()) {
    if (!isCredentialHeader(String(key))) continue;
    copy ??= new Map(map);
    copy.delete(key);
  }
  return copy ?? map;
}

/** A fetch `Headers` (any runtime's or library's): its entries live behind methods, not in own properties. */
function isHeadersClass(value: object): value is { forEach(callback: (value: unknown, name: string) => void): void } {
  const candidate = value as { forEach?: unknown; get?: unknown; has?: unknown; append?: unknown };
  return typeof candidate.forEach === 'function' && typeof candidate.get === 'function' && typeof candidate.has === 'function' && typeof candidate.append === 'function';
}

/** A `Headers`' entries as a plain object, without the credential ones. */
function headerEntries(headers: { forEach(callback: (value: unknown, name: string) => void): void }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  headers.forEach((value, name) => {
    // defineProperty: a header may be called `__proto__`.
    if (typeof name === 'string' && !isCredentialHeader(name)) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  });
  return out;
}

/** Runs the hook on one event's parts; never throws (a failure clears what the hook governs). */
function runHook(hook: RedactHook, event: RedactableEvent, onFailure: (error: unknown) => void): RedactableEvent {
  try {
    const returned = hook(event);
    const out: RedactableEvent = { ...event };
    if (returned !== undefined && returned !== null) {
      if (typeof returned !== 'object') throw new TypeError(`the redact hook returned a ${typeof returned}; return an object of fields, or nothing`);
      if ('name' in returned) out.name = returned.name as string;
      if ('data' in returned) out.data = returned.data as Json;
      if ('metadata' in returned) out.metadata = returned.metadata as Json;
      if ('annotation' in returned) out.annotation = returned.annotation as Json;
    }
    if (typeof out.name !== 'string') throw new TypeError(`the redact hook left a ${typeof out.name} name; names are strings`);
    // What the hook produced is recorded as plain JSON (a cycle or a BigInt must not reach the backend).
    out.data = toJson(out.data);
    out.metadata = toJson(out.metadata);
    if (out.annotation !== undefined) out.annotation = toJson(out.annotation);
    return out;
  } catch (error) {
    onFailure(error);
    const cleared: RedactableEvent = { ...event, name: REDACTED_NAME, data: null, metadata: null };
    if (event.annotation !== undefined) cleared.annotation = null;
    return cleared;
  }
}

/**
 * The hook as an event transform, for a backend that runs it inside
 * (`addEventTransform`): the event every output receives.
 */
export function hookTransform(hook: RedactHook, onFailure: (error: unknown) => void): (event: AtofEvent) => AtofEvent {
  return (event) => {
    const phase = event.kind === 'scope' ? event.scope_category : null;
    const profile = event.category_profile;
    const annotation = isJsonObject(profile) && profile.tool_result_annotation !== undefined ? profile.tool_result_annotation : undefined;
    const view: RedactableEvent = {
      kind: event.kind,
      phase,
      category: event.category,
      name: event.name,
      data: structuredCopy(event.data),
      metadata: structuredCopy(event.metadata),
      ...(annotation !== undefined ? { annotation: structuredCopy(annotation) } : {}),
    };
    const out = runHook(hook, view, onFailure);
    const result = { ...event, name: out.name, data: out.data, metadata: out.metadata } as AtofEvent;
    if (annotation !== undefined && isJsonObject(profile)) {
      const copy: JsonObject = { ...profile };
      if (out.annotation === null || out.annotation === undefined) delete copy.tool_result_annotation;
      else copy.tool_result_annotation = out.annotation;
      (result as { category_profile: unknown }).category_profile = copy;
    }
    return result;
  };
}

/** A deep copy of plain JSON (the hook may change its copy in place). */
function structuredCopy(value: Json): Json {
  if (typeof value !== 'object' || value === null) return value;
  return JSON.parse(JSON.stringify(value)) as Json;
}

export interface EgressOptions {
  /** The host's hook, when the backend cannot run it inside. */
  redact?: RedactHook;
  /** Told about each event the hook failed on. */
  onRedactFailure?: (error: unknown) => void;
}

/**
 * `backend` as the plugin calls it: every payload without credential
 * headers and, given a hook, through the hook first. The host's managed
 * calls still receive their original input and return their original
 * result.
 */
export function egressBackend(backend: RelayBackend, options: EgressOptions = {}): RelayBackend {
  const hook = options.redact;
  const onFailure = options.onRedactFailure ?? (() => {});
  const clean = <T>(value: T): T => withoutSensitiveHeaders(value);
  /** The hook over one call's parts, as an event; null without a hook. */
  const redacted = (kind: 'scope' | 'mark', phase: 'start' | 'end' | null, category: string | null, name: string, data: unknown, metadata: unknown, annotation?: unknown): RedactableEvent | null => {
    if (hook === undefined) return null;
    const view: RedactableEvent = { kind, phase, category, name, data: toJson(data), metadata: toJson(metadata) };
    if (annotation !== undefined && annotation !== null) view.annotation = toJson(annotation);
    return runHook(hook, view, onFailure);
  };
  // With a hook, spans and scopes remember their category and name for their end (the hook's view names them).
  const names = new WeakMap<object, { category: string; name: string }>();
  const remember = (handle: object, category: string, name: string): void => {
    if (hook !== undefined) names.set(handle, { category, name });
  };

  const wrapped: RelayBackend = {
    kind: backend.kind,
    ...(backend.version !== undefined ? { version: backend.version } : {}),
    pushScope(o: PushScopeOptions): ScopeHandle {
      const input = clean(o.input);
      const metadata = clean(o.metadata);
      const r = redacted('scope', 'start', o.category, o.name, input, metadata);
      const handle = backend.pushScope(r === null ? (input === o.input && metadata === o.metadata ? o : { ...o, input, metadata }) : { ...o, name: r.name, input: r.data, metadata: r.metadata });
      remember(handle as object, o.category, o.name);
      return handle;
    },
    popScope(handle: ScopeHandle, o?: PopScopeOptions): void {
      const output = clean(o?.output);
      const metadata = clean(o?.metadata);
      if (hook === undefined) {
        backend.popScope(handle, o !== undefined && output === o.output && metadata === o.metadata ? o : { ...o, output, metadata });
        return;
      }
      const seen = names.get(handle as object);
      const r = redacted('scope', 'end', seen?.category ?? null, seen?.name ?? '', output, metadata);
      backend.popScope(handle, r === null ? { ...o, output, metadata } : { ...o, output: r.data, metadata: r.metadata });
    },
    mark(o: MarkOptions): void {
      const data = clean(o.data);
      const metadata = clean(o.metadata);
      const r = redacted('mark', null, null, o.name, data, metadata);
      backend.mark(r === null ? (data === o.data && metadata === o.metadata ? o : { ...o, data, metadata }) : { ...o, name: r.name, data: r.data, metadata: r.metadata });
    },
    llmStart(o: LlmStartOptions): LlmHandle {
      const options = llmStartOptions(o);
      const handle = backend.llmStart(options);
      remember(handle as object, 'llm', o.name);
      return handle;
    },
    llmEnd(handle: LlmHandle, o: LlmEndOptions): void {
      backend.llmEnd(handle, endOptions(hook === undefined ? '' : (names.get(handle as object)?.name ?? ''), 'llm', o));
    },
    toolStart(o: ToolStartOptions): ToolHandle {
      const handle = backend.toolStart(toolStartOptions(o));
      remember(handle as object, 'tool', o.name);
      return handle;
    },
    toolEnd(handle: ToolHandle, o: ToolEndOptions): void {
      const result = clean(o.result);
      const metadata = clean(o.metadata);
      const annotation = clean(o.annotation);
      if (hook === undefined) {
        backend.toolEnd(handle, result === o.result && metadata === o.metadata && annotation === o.annotation ? o : { ...o, result, metadata, annotation });
        return;
      }
      const seen = names.get(handle as object);
      const r = redacted('scope', 'end', 'tool', seen?.name ?? '', result, metadata, annotation);
      backend.toolEnd(handle, r === null ? { ...o, result, metadata, annotation } : { ...o, result: r.data, metadata: r.metadata, ...(o.annotation !== undefined ? { annotation: r.annotation ?? null } : {}) });
    },
    registerAtofExporter: (o: AtofExporterOptions) => backend.registerAtofExporter(o),
    registerAtifExporter: (o: AtifExporterOptions) => backend.registerAtifExporter(o),
    // Set below only when the backend has it (a custom backend may not).
    initializePluginConfig: undefined as unknown as RelayBackend['initializePluginConfig'],
    flush: () => backend.flush(),
  };
  if (typeof backend.initializePluginConfig === 'function') wrapped.initializePluginConfig = (d, o) => backend.initializePluginConfig(d, o);
  else delete (wrapped as Partial<RelayBackend>).initializePluginConfig;

  function llmStartOptions(o: LlmStartOptions): LlmStartOptions {
    const request = { headers: clean(o.request?.headers ?? {}), content: clean(o.request?.content) };
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'start', 'llm', o.name, { content: request.content, headers: request.headers }, metadata);
    if (r === null) return { ...o, request, metadata };
    const data = isJsonObject(r.data) ? r.data : {};
    return { ...o, name: r.name, request: { headers: (isJsonObject(data.headers) ? data.headers : {}) as Record<string, string>, content: data.content ?? null }, metadata: r.metadata };
  }

  function toolStartOptions(o: ToolStartOptions): ToolStartOptions {
    const args = clean(o.args);
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'start', 'tool', o.name, args, metadata);
    if (r === null) return args === o.args && metadata === o.metadata ? o : { ...o, args, metadata };
    return { ...o, name: r.name, args: r.data, metadata: r.metadata };
  }

  function endOptions(name: string, category: string, o: LlmEndOptions): LlmEndOptions {
    const response = clean(o.response);
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'end', category, name, response, metadata);
    if (r === null) return response === o.response && metadata === o.metadata ? o : { ...o, response, metadata };
    return { ...o, response: r.data, metadata: r.metadata };
  }

  // Optional capabilities pass through, with the managed calls keeping the host's own input and result.
  if (typeof backend.executeLlm === 'function') {
    wrapped.executeLlm = async (o: ManagedLlmOptions, call: ManagedLlmCall) => {
      const recorded = llmStartOptions(o as LlmStartOptions);
      let original: unknown;
      let recordedResult: unknown;
      const value = await backend.executeLlm!({ ...o, name: recorded.name, request: recorded.request, metadata: recorded.metadata }, async (forwarded) => {
        // The host's call gets its own request (the relay's injected headers kept), not the recorded copy.
        original = await call({ headers: { ...(forwarded?.headers ?? {}) }, content: o.request?.content });
        recordedResult = endOptions(o.name, 'llm', { response: original }).response;
        return recordedResult;
      });
      return value === recordedResult || (recordedResult !== undefined && jsonEqual(value, recordedResult)) ? original : value;
    };
  }
  if (typeof backend.executeTool === 'function') {
    wrapped.executeTool = async (o: ManagedToolOptions, call: ManagedToolCall) => {
      const recorded = toolStartOptions(o as ToolStartOptions);
      let original: unknown;
      let recordedResult: unknown;
      const value = await backend.executeTool!({ ...o, name: recorded.name, args: recorded.args, metadata: recorded.metadata }, async () => {
        original = await call(o.args);
        recordedResult = redactedResult(o.name, original);
        return recordedResult;
      });
      return value === recordedResult || (recordedResult !== undefined && jsonEqual(value, recordedResult)) ? original : value;
    };
  }
  function redactedResult(name: string, result: unknown): unknown {
    const cleaned = clean(result);
    const r = redacted('scope', 'end', 'tool', name, cleaned, null);
    return r === null ? cleaned : r.data;
  }
  if (typeof backend.initializePluginConfigSync === 'function') wrapped.initializePluginConfigSync = (d, o) => backend.initializePluginConfigSync!(d, o);
  if (typeof backend.activateDynamicPlugins === 'function') wrapped.activateDynamicPlugins = (d, s, o) => backend.activateDynamicPlugins!(d, s, o);
  if (typeof backend.shutdown === 'function') wrapped.shutdown = (o) => backend.shutdown!(o);
  if (typeof backend.stats === 'function') wrapped.stats = () => backend.stats!();
  if (typeof backend.outputs === 'function') wrapped.outputs = () => backend.outputs!();
  if (typeof backend.addEventTransform === 'function') wrapped.addEventTransform = (t) => backend.addEventTransform!(t);
  if (typeof backend.propagationContext === 'function') wrapped.propagationContext = (h) => backend.propagationContext!(h);
  return wrapped;
}
