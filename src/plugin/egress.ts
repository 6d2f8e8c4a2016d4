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
 *   The rule is `shared/credential-headers.ts`; a backend that offers
 *   `dropCredentialHeaders` (native, the memory relay, off) applies it in the
 *   walk it makes of each payload anyway (its copy, the memory relay's line
 *   writer), and the wrapper then hands the payloads over unwalked.
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
import { isJsonObject, jsonEqual, MEDIA_LEFT_OUT, toJson } from '../shared/json.ts';
import { withoutSensitiveHeaders } from '../shared/credential-headers.ts';

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
    // What the hook produced is recorded as plain JSON (a cycle or a BigInt must not reach the backend). Its media
    // are as the hook left them: it was handed an observed payload with its media left out already, and a managed
    // call's content whole, since that is the response cache's key (on native, what the hook gives back is keyed).
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

/** The removal of `backend.dropCredentialHeaders()`, or null when the backend does not drop them itself. */
function credentialsDroppedBy(backend: RelayBackend): (() => void) | null {
  if (typeof backend.dropCredentialHeaders !== 'function') return null;
  try {
    const removal: unknown = backend.dropCredentialHeaders();
    return typeof removal === 'function' ? (removal as () => void) : null;
  } catch {
    return null;
  }
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
  /** Told the hook's answer on each agent scope's start: what names a session's own trajectory. */
  agentStarted?: (start: RedactableEvent) => void;
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
  // A backend that drops credential headers in its own copy of each payload spares every payload a walk here
  // (bench/RESULTS.md, "the credential-header walk inside the copy"); a hook must see them dropped already.
  const dropping = hook === undefined ? credentialsDroppedBy(backend) : null;
  const clean = dropping !== null ? <T>(value: T): T => value : <T>(value: T): T => withoutSensitiveHeaders(value);
  /**
   * The hook over one call's parts, as an event; null without a hook. It sees what the memory relay's hook sees
   * (its copy of the payload): media left out, except in a managed call's content (`managed`), which the relay
   * copies whole because it is the response cache's key and answer.
   */
  const redacted = (kind: 'scope' | 'mark', phase: 'start' | 'end' | null, category: string | null, name: string, data: unknown, metadata: unknown, annotation?: unknown, managed = false): RedactableEvent | null => {
    if (hook === undefined) return null;
    const view: RedactableEvent = { kind, phase, category, name, data: toJson(data, managed ? undefined : MEDIA_LEFT_OUT), metadata: toJson(metadata, MEDIA_LEFT_OUT) };
    if (annotation !== undefined && annotation !== null) view.annotation = toJson(annotation, MEDIA_LEFT_OUT);
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
      if (r !== null && o.category === 'agent') options.agentStarted?.(r);
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
      // With nothing to do here, the recorder's own options go through (it builds the request object itself).
      const options = dropping !== null ? o : llmStartOptions(o);
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

  function llmStartOptions(o: LlmStartOptions, managed = false): LlmStartOptions {
    const request = { headers: clean(o.request?.headers ?? {}), content: clean(o.request?.content) };
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'start', 'llm', o.name, { content: request.content, headers: request.headers }, metadata, undefined, managed);
    if (r === null) return { ...o, request, metadata };
    const data = isJsonObject(r.data) ? r.data : {};
    return { ...o, name: r.name, request: { headers: (isJsonObject(data.headers) ? data.headers : {}) as Record<string, string>, content: data.content ?? null }, metadata: r.metadata };
  }

  function toolStartOptions(o: ToolStartOptions, managed = false): ToolStartOptions {
    const args = clean(o.args);
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'start', 'tool', o.name, args, metadata, undefined, managed);
    if (r === null) return args === o.args && metadata === o.metadata ? o : { ...o, args, metadata };
    return { ...o, name: r.name, args: r.data, metadata: r.metadata };
  }

  function endOptions(name: string, category: string, o: LlmEndOptions, managed = false): LlmEndOptions {
    const response = clean(o.response);
    const metadata = clean(o.metadata);
    const r = redacted('scope', 'end', category, name, response, metadata, undefined, managed);
    if (r === null) return response === o.response && metadata === o.metadata ? o : { ...o, response, metadata };
    return { ...o, response: r.data, metadata: r.metadata };
  }

  // Optional capabilities pass through, with the managed calls keeping the host's own input and result.
  if (typeof backend.executeLlm === 'function') {
    wrapped.executeLlm = async (o: ManagedLlmOptions, call: ManagedLlmCall) => {
      const recorded = llmStartOptions(o as LlmStartOptions, true);
      let original: unknown;
      let recordedResult: unknown;
      const value = await backend.executeLlm!({ ...o, name: recorded.name, request: recorded.request, metadata: recorded.metadata }, async (forwarded) => {
        // The host's call gets its own request (the relay's injected headers kept), not the recorded copy.
        original = await call({ headers: { ...(forwarded?.headers ?? {}) }, content: o.request?.content });
        recordedResult = endOptions(o.name, 'llm', { response: original }, true).response;
        return recordedResult;
      });
      return value === recordedResult || (recordedResult !== undefined && jsonEqual(value, recordedResult)) ? original : value;
    };
  }
  if (typeof backend.executeTool === 'function') {
    wrapped.executeTool = async (o: ManagedToolOptions, call: ManagedToolCall) => {
      const recorded = toolStartOptions(o as ToolStartOptions, true);
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
    const r = redacted('scope', 'end', 'tool', name, cleaned, null, undefined, true);
    return r === null ? cleaned : r.data;
  }
  if (typeof backend.initializePluginConfigSync === 'function') wrapped.initializePluginConfigSync = (d, o) => backend.initializePluginConfigSync!(d, o);
  if (typeof backend.activateDynamicPlugins === 'function') wrapped.activateDynamicPlugins = (d, s, o) => backend.activateDynamicPlugins!(d, s, o);
  if (typeof backend.shutdown === 'function') {
    wrapped.shutdown =
      dropping === null
        ? (o) => backend.shutdown!(o)
        : async (o) => {
            try {
              await backend.shutdown!(o);
            } finally {
              dropping();
            }
          };
  }
  if (typeof backend.dropCredentialHeaders === 'function') wrapped.dropCredentialHeaders = () => backend.dropCredentialHeaders!();
  if (typeof backend.stats === 'function') wrapped.stats = () => backend.stats!();
  if (typeof backend.outputs === 'function') wrapped.outputs = () => backend.outputs!();
  if (typeof backend.addEventTransform === 'function') wrapped.addEventTransform = (t) => backend.addEventTransform!(t);
  if (typeof backend.propagationContext === 'function') wrapped.propagationContext = (h) => backend.propagationContext!(h);
  return wrapped;
}
