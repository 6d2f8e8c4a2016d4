/**
 * The wire: the official OpenTelemetry JS OTLP exporters (traces and logs,
 * protobuf over HTTP or gRPC). They are optional peer dependencies and are
 * imported only when an endpoint is configured, so nobody else pays their
 * import time or install size. The 0.223.x line is the newest that runs on
 * Node 20 as well as Bun and Deno.
 *
 * @module
 */

import type { OtlpTransport } from '../../formats/plugins-toml/opentelemetry.ts';
import { connectionFailure, DeliveryError, DestinationUnusableError, HttpStatusError, RequestTooLargeError } from '../delivery/errors.ts';
import { sendHttp } from '../delivery/http.ts';
import { httpsTrust, trustOptions, untrustedCertificateHint } from '../delivery/trust.ts';
import { processEnv, readVariable } from '../../shared/env.ts';
import { withoutValues } from '../../shared/secret-text.ts';

export type Signal = 'traces' | 'logs';

/** What the pipeline needs from an exporter (the OTel `SpanExporter`/`LogRecordExporter` shape). */
export interface WireExporter {
  export(items: unknown[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
  /** The encoded request bytes delivered so far, when the exporter can tell. */
  sentBytes?(): number;
  /** The delay the receiver asked for in its last `Retry-After`, if any (consumed by the read). */
  takeRetryAfterMs?(): number | undefined;
  /** Closes the connection now, requests in flight included (the gRPC channel holds the process until it closes). */
  abandon?(): void;
}

export interface WireOptions {
  signal: Signal;
  transport: OtlpTransport;
  url: string;
  headers: Record<string, string>;
  timeoutMillis: number;
}

/** The package each signal and transport needs, for messages and the README. */
function exporterPackage(signal: Signal, transport: OtlpTransport): string {
  const wire = transport === 'grpc' ? 'grpc' : 'proto';
  return signal === 'traces' ? `@opentelemetry/exporter-trace-otlp-${wire}` : `@opentelemetry/exporter-logs-otlp-${wire}`;
}

type ExporterClass = new (config: Record<string, unknown>) => WireExporter;

// Literal specifiers, so bundlers and Deno's npm resolution see them. Each `import()` is handled where it is
// written (`.catch`): esbuild and `bun build` read that as "may be missing", so a host that bundles its agent
// without this optional peer still builds (an unhandled one stopped the build: `Could not resolve`), and the
// import fails here, at run time, as it does unbundled.
async function loadClass(signal: Signal, transport: OtlpTransport): Promise<ExporterClass> {
  if (signal === 'traces') {
    if (transport === 'grpc') return ((await import('@opentelemetry/exporter-trace-otlp-grpc').catch(rethrow)) as unknown as { OTLPTraceExporter: ExporterClass }).OTLPTraceExporter;
    return ((await import('@opentelemetry/exporter-trace-otlp-proto').catch(rethrow)) as unknown as { OTLPTraceExporter: ExporterClass }).OTLPTraceExporter;
  }
  if (transport === 'grpc') return ((await import('@opentelemetry/exporter-logs-otlp-grpc').catch(rethrow)) as unknown as { OTLPLogExporter: ExporterClass }).OTLPLogExporter;
  return ((await import('@opentelemetry/exporter-logs-otlp-proto').catch(rethrow)) as unknown as { OTLPLogExporter: ExporterClass }).OTLPLogExporter;
}

function rethrow(error: unknown): never {
  throw error;
}

interface GrpcMetadata {
  set(key: string, value: string): void;
}

interface GrpcModule {
  Metadata: new () => GrpcMetadata;
  credentials: { createFromSecureContext(context: unknown): unknown };
}

/**
 * The exporter package could not be imported. Activation already said so once,
 * with the install command (export/packages.ts), so the pipeline counts what it
 * cannot send without saying it again.
 */
export class ExporterPackageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExporterPackageError';
  }
}

/**
 * Creates the exporter for one destination. Rejects with an
 * `ExporterPackageError` naming the package to install when it is missing,
 * and with the exporter's own error when it cannot be built (Deno without
 * `--allow-env`: it reads its `OTEL_*` variables).
 */
export async function createWireExporter(options: WireOptions): Promise<WireExporter> {
  let Exporter: ExporterClass;
  try {
    Exporter = await loadClass(options.signal, options.transport);
  } catch (error) {
    throw new ExporterPackageError(
      `${exporterPackage(options.signal, options.transport)} could not be loaded (${error instanceof Error ? error.message : String(error)}); install it next to nemo-relay-hooks to send OTLP ${options.signal}`,
    );
  }
  const config: Record<string, unknown> = { url: options.url, timeoutMillis: options.timeoutMillis };
  if (options.transport === 'grpc') {
    const secure = /^https:\/\//i.test(options.url) && !namesGrpcRoots();
    const grpc = secure || Object.keys(options.headers).length > 0 ? ((await import('@grpc/grpc-js').catch(rethrow)) as unknown as GrpcModule) : undefined;
    // grpc-js checks a TLS collector against its own roots alone: it gets the authorities every other sender trusts
    // (`delivery/trust.ts`), the same secure context; nothing found beyond the runtime's roots leaves grpc-js's default.
    const { secureContext } = secure ? httpsTrust() : { secureContext: undefined };
    if (grpc !== undefined && secureContext !== undefined) config.credentials = grpc.credentials.createFromSecureContext(secureContext);
    if (grpc !== undefined && Object.keys(options.headers).length > 0) {
      const metadata = new grpc.Metadata();
      for (const [key, value] of Object.entries(options.headers)) {
        try {
          metadata.set(key.toLowerCase(), value);
        } catch {
          // grpc-js quotes the value in its error; a header value is often a credential.
          throw new Error(`the gRPC header ${key} cannot be sent (grpc-js refused its value)`);
        }
      }
      config.metadata = metadata;
    }
  } else {
    // Names in lower case, as native sends them (HTTP reads them in any case; the bytes are native's).
    config.headers = Object.fromEntries(Object.entries(options.headers).map(([key, value]) => [key.toLowerCase(), utf8Bytes(value)]));
    config.httpAgentOptions = unrefAgentFactory;
  }
  return single(new Exporter(config), options);
}

/**
 * Whether `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH` names grpc-js's roots: a host
 * that set it chose gRPC's authorities itself, which grpc-js applies only to
 * credentials it builds, so it keeps building them.
 */
function namesGrpcRoots(): boolean {
  const file = readVariable(processEnv(), 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH').value;
  return file !== undefined && file !== '';
}

/**
 * A header value as the string of its UTF-8 bytes, one character per byte: HTTP clients send a header string's
 * characters as Latin-1 bytes, so this puts native's bytes on the wire (`é` as two bytes, `€` as three, where the
 * clients would send `é` as one byte and refuse `€`).
 */
function utf8Bytes(value: string): string {
  if (!/[^\u0000-\u007f]/.test(value)) return value;
  let out = '';
  for (const byte of new TextEncoder().encode(value)) out += String.fromCharCode(byte);
  return out;
}

/** The OTel network transport's shape (`IExporterTransport`). */
interface Transport {
  send(data: Uint8Array, timeoutMillis: number): Promise<{ status: string; retryInMillis?: number; error?: Error }>;
  shutdown(): void;
}

/**
 * The exporter with one attempt per export, its delivered bytes counted.
 *
 * The OTel HTTP exporter wraps its transport in a retrying one whose backoff
 * timers are referenced: with a collector down, a host that had finished and
 * returned from `shutdown()` stayed alive up to `timeout_millis` more.
 * The pipeline already retries failed batches, with
 * unref'd timers and the receiver's `Retry-After`, so the exporter gets the
 * inner transport. The delegate is the exporter's own (OTLPExporterBase
 * keeps it in `_delegate`, with `_transport`); an exporter of another shape
 * is used as it is, without a byte count.
 *
 * Over HTTP the request itself goes through the library's one HTTP request
 * (`delivery/http.ts`): the exporter's own times out only a silent socket,
 * so a collector that answers a byte a second was never timed out, and a
 * `timeout_millis` of 2^31 ms or more timed every request out at once.
 * Ours bounds the whole exchange by `timeout_millis` and closes the
 * requests in flight when the pipeline abandons them.
 */
function single(exporter: WireExporter, options: WireOptions): WireExporter {
  const delegate = (exporter as unknown as { _delegate?: { _transport?: Transport & { _transport?: Transport } } })._delegate;
  const outer = delegate?._transport;
  if (delegate === undefined || outer === undefined || typeof outer.send !== 'function') return exporter;
  const otel = outer._transport !== undefined && typeof outer._transport.send === 'function' ? outer._transport : outer;
  const inner = options.transport === 'grpc' ? otel : (httpTransport(otel, options) ?? otel);
  let bytes = 0;
  let retryAfter: number | undefined;
  delegate._transport = {
    send: async (data, timeoutMillis) => {
      const result = await inner.send(data, timeoutMillis);
      if (result.status === 'success') bytes += data.byteLength;
      else if (typeof result.retryInMillis === 'number') retryAfter = result.retryInMillis;
      if (result.status === 'success') return result;
      const tooLarge = refusedAsTooLarge(result.error, data.byteLength);
      if (tooLarge !== null) return { status: 'failure', error: tooLarge };
      // The HTTP transport's errors (`sendHttp`) already name the fix, and quote nothing the receiver said.
      return options.transport === 'grpc' ? { ...result, error: withoutHeaderValues(withTrustHint(result.error), options.headers) } : result;
    },
    shutdown: () => inner.shutdown(),
  };
  exporter.sentBytes = () => bytes;
  exporter.abandon = () => {
    try {
      inner.shutdown();
    } catch {
      // Closing what is already closed.
    }
  };
  exporter.takeRetryAfterMs = () => {
    const delay = retryAfter;
    retryAfter = undefined;
    return delay;
  };
  return exporter;
}

/**
 * A failure over an untrusted certificate with the fix named, and not
 * retried (`connectionFailure`), as the HTTP senders do:
 * grpc-js reports it as UNAVAILABLE with OpenSSL's text inside ("unable to
 * verify the first certificate").
 */
function withTrustHint(error: Error | undefined): Error | undefined {
  const hint = untrustedCertificateHint(error);
  if (error === undefined || hint === '') return error;
  // grpc-js ends the text with an empty "Resolution note:" when it has none, which would precede the hint.
  const hinted = connectionFailure(`${error.message.replace(/[\s.]*Resolution note:\s*$/, '')} (${hint})`, error);
  return Object.assign(hinted, { code: (error as { code?: unknown }).code });
}

/**
 * A gRPC failure without the destination's header values in its text: grpc-js
 * puts the receiver's status details in the message, and a collector that
 * refuses a token may quote it ("bad token Bearer ..."), which would then be
 * printed in `status()` and warnings. The HTTP senders never quote a receiver.
 */
function withoutHeaderValues(error: Error | undefined, headers: Record<string, string>): Error | undefined {
  if (error === undefined) return error;
  const message = withoutValues(error.message, Object.values(headers));
  if (message === error.message) return error;
  // The same kind of error (one not to retry stays one), without the values.
  const masked = error instanceof DestinationUnusableError ? new DestinationUnusableError(message) : new Error(message);
  masked.name = error.name;
  return Object.assign(masked, { code: (error as { code?: unknown }).code });
}

/** gRPC's RESOURCE_EXHAUSTED: also a quota's answer, so only a message over the size limit counts as too large. */
const GRPC_RESOURCE_EXHAUSTED = 8;
/** grpc-js ("Received message larger than max (N vs M)") and grpc-go ("grpc: received message larger than max (N vs. M)", "...after decompression larger than max"). */
const GRPC_TOO_LARGE = /message.*larger than(?: max)?\s*(?:\((\d+) vs\.? (\d+)\)|(\d+))?/i;

/**
 * The typed error for a request the receiver refused for its size (HTTP
 * 413, or a gRPC message over the receiver's limit), or null for any other
 * failure. The receiver's own text is not kept: only its limit, as a number.
 */
function refusedAsTooLarge(error: unknown, requestBytes: number): RequestTooLargeError | null {
  if (error instanceof HttpStatusError && error.status === 413) {
    return new RequestTooLargeError(`${error.message} (request too large: ${requestBytes} bytes)`, requestBytes);
  }
  const grpc = error as { code?: unknown; details?: unknown; message?: unknown } | null | undefined;
  if (grpc === null || typeof grpc !== 'object') return null;
  // The exporter's own HTTP transport (used when it compresses) reports the status as `code`; gRPC codes end at 16.
  if (grpc.code === 413) return new RequestTooLargeError(`the receiver answered HTTP 413 (request too large: ${requestBytes} bytes)`, requestBytes);
  if (grpc.code !== GRPC_RESOURCE_EXHAUSTED) return null;
  const match = GRPC_TOO_LARGE.exec(String(grpc.details ?? grpc.message ?? ''));
  if (match === null) return null;
  const limit = Number(match[2] ?? match[3]);
  const limitBytes = Number.isFinite(limit) && limit > 0 ? limit : undefined;
  return new RequestTooLargeError(
    `the receiver answered RESOURCE_EXHAUSTED (request too large: ${requestBytes} bytes${limitBytes === undefined ? '' : `, its limit ${limitBytes}`})`,
    requestBytes,
    limitBytes,
  );
}

/** What the OTel HTTP transport was built with (`HttpExporterTransport._parameters`). */
interface HttpParameters {
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  compression?: string;
}

/**
 * The OTel HTTP transport's request, sent through `sendHttp` with the
 * headers the exporter computed (its content type and user agent, the
 * configured headers). Null when the transport is not of the known shape or
 * compresses (left to the exporter then).
 */
function httpTransport(otel: Transport, options: WireOptions): Transport | null {
  const parameters = (otel as { _parameters?: HttpParameters })._parameters;
  if (parameters === undefined || typeof parameters.headers !== 'function') return null;
  if (parameters.compression !== undefined && parameters.compression !== 'none') return null;
  let closing = new AbortController();
  return {
    send: async (data, timeoutMillis) => {
      const headers: Record<string, string> = { ...(await parameters.headers!()) };
      if (!Object.keys(headers).some((key) => key.toLowerCase() === 'user-agent')) headers['User-Agent'] = OTEL_USER_AGENT;
      try {
        // A redirect is not followed, as native's exporter follows none, and fails the batch without a retry.
        await sendHttp({ url: options.url, method: 'POST', headers, body: data, timeoutMs: timeoutMillis, signal: closing.signal, redirects: 'report' });
        return { status: 'success' };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        if (error instanceof DeliveryError && error.retryable) {
          return { status: 'retryable', error: failure, ...(error.retryAfterMs !== undefined ? { retryInMillis: error.retryAfterMs } : {}) };
        }
        return { status: 'failure', error: failure };
      }
    },
    shutdown: () => {
      closing.abort();
      closing = new AbortController();
    },
  };
}

const OTEL_USER_AGENT = 'OTel-OTLP-Exporter-JavaScript';

/**
 * The HTTP agent of an exporter: its sockets never keep the process alive
 * (a request to a collector that hangs would otherwise hold a finished host
 * for its whole timeout). A flush or shutdown the host awaits keeps the
 * process alive with its own timer meanwhile.
 */
async function unrefAgentFactory(protocol: string): Promise<unknown> {
  const http = (protocol === 'https:' ? await import('node:https') : await import('node:http')) as typeof import('node:http');
  // An https collector is checked against the same authorities as every other sender (`delivery/trust.ts`).
  const agent = new http.Agent({ keepAlive: true, ...(protocol === 'https:' ? trustOptions() : {}) });
  const unrefSocket = (socket: unknown) => void (socket as { unref?: () => unknown } | undefined)?.unref?.();
  const create = agent.createConnection.bind(agent) as (...args: unknown[]) => unknown;
  (agent as unknown as { createConnection: (...args: unknown[]) => unknown }).createConnection = (...args: unknown[]) => {
    const socket = create(...args);
    unrefSocket(socket);
    return socket;
  };
  // The agent refs a kept-alive socket again when it reuses it.
  const reuse = agent.reuseSocket.bind(agent);
  agent.reuseSocket = (socket, request) => {
    reuse(socket, request);
    unrefSocket(socket);
  };
  return agent;
}
