/**
 * Loopback OTLP receivers for tests: an OTLP/HTTP protobuf server and an
 * OTLP/gRPC server on 127.0.0.1, both decoding what they receive with the
 * OTLP protobuf definitions from `@opentelemetry/otlp-transformer@0.214.0`
 * (installed as the dev dependency `@opentelemetry/otlp-transformer-decoder`;
 * its generated protobufjs code is the last release that decodes requests).
 *
 * A receiver records every request, decodes `/v1/traces` and `/v1/logs`
 * bodies into plain spans and log records (ids as hex, times as nanosecond
 * strings, attributes as plain values), and can be told to misbehave
 * (status code, `Retry-After`, a hang) for the failure tests. With
 * `maxRequestBytes` a receiver refuses a larger request as the collector
 * does: HTTP 413 (its `max_request_body_size`), gRPC RESOURCE_EXHAUSTED
 * from grpc-js's own `grpc.max_receive_message_length` check.
 */

import http from 'node:http';
import { createRequire } from 'node:module';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';

const require = createRequire(import.meta.url);

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
}
interface ProtoRoot {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoType } };
        logs: { v1: { ExportLogsServiceRequest: ProtoType } };
      };
    };
  };
}

const root = require('@opentelemetry/otlp-transformer-decoder/build/src/generated/root.js') as ProtoRoot;
const TraceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const LogsRequest = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attributes;
  events: { name: string; timeUnixNano: string; attributes: Attributes }[];
  status: { code: number; message: string };
  flags: number;
  resource: Attributes;
  scope: { name: string; version: string };
}

export interface DecodedLog {
  timeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: AttributeValue;
  attributes: Attributes;
  traceId: string;
  spanId: string;
  resource: Attributes;
  scope: { name: string; version: string };
}

export interface ReceivedRequest {
  transport: 'http' | 'grpc';
  path: string;
  headers: Record<string, string>;
  bytes: number;
  spans: DecodedSpan[];
  logs: DecodedLog[];
  /** Refused with 413 for its size (HTTP; grpc-js refuses an oversized message before the handler sees it). */
  tooLarge?: true;
}

export interface ReceiverOptions {
  /** Requests with a larger body are refused as too large, as a capped collector refuses them. */
  maxRequestBytes?: number;
  /** gRPC only: serve TLS with this key and certificate (PEM); the receiver's `url` is then `https://localhost:<port>`. */
  tls?: { key: Buffer; cert: Buffer };
}

/** How the receiver answers: by default an empty 200. */
export interface Behaviour {
  status?: number;
  retryAfter?: string;
  /** Never answer (the connection stays open until the receiver closes). */
  hang?: boolean;
  /** Statuses for the next requests, one each, before `status` applies again. */
  sequence?: number[];
  /** gRPC only: the failure's details, from the request's metadata (a collector quoting the token it refused). */
  details?: (headers: Record<string, string>) => string;
}

type Any = Record<string, unknown>;

function hex(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  return '';
}

function longText(value: unknown): string {
  if (value === null || value === undefined) return '0';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object' && 'low' in (value as Any)) {
    const v = value as { low: number; high: number; unsigned?: boolean };
    const bits = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
    // An int64 (attribute values) is signed: -2^53 arrives as a Long, not a number.
    return (v.unsigned === true ? bits : BigInt.asIntN(64, bits)).toString();
  }
  return String(value);
}

function anyValue(value: unknown): AttributeValue {
  const v = (value ?? {}) as Any;
  if (hasOwn(v, 'stringValue')) return v.stringValue as string;
  if (hasOwn(v, 'boolValue')) return v.boolValue as boolean;
  if (hasOwn(v, 'intValue')) return Number(longText(v.intValue));
  if (hasOwn(v, 'doubleValue')) return v.doubleValue as number;
  if (hasOwn(v, 'arrayValue')) return (((v.arrayValue as Any).values ?? []) as unknown[]).map(anyValue);
  if (hasOwn(v, 'kvlistValue')) return attributes((v.kvlistValue as Any).values);
  if (hasOwn(v, 'bytesValue')) return hex(v.bytesValue);
  return null;
}

// protobufjs decoded messages carry defaults on the prototype; only own keys were on the wire (oneof members).
function hasOwn(object: Any, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function attributes(list: unknown): Attributes {
  const out: Attributes = {};
  // proto3 leaves a default field out: a missing key is the empty key "" (native's encoder omits it, the JS SDK's writes it).
  for (const kv of (list ?? []) as Any[]) out[(kv.key as string | undefined) ?? ''] = anyValue(kv.value);
  return out;
}

function scopeOf(scope: unknown): { name: string; version: string } {
  const s = (scope ?? {}) as Any;
  return { name: (s.name as string) ?? '', version: (s.version as string) ?? '' };
}

/** Decodes an `ExportTraceServiceRequest` body into plain spans. */
export function decodeTraces(body: Uint8Array): DecodedSpan[] {
  const request = TraceRequest.decode(body) as Any;
  const out: DecodedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Any[]) {
    const resource = attributes(((rs.resource ?? {}) as Any).attributes);
    for (const ss of (rs.scopeSpans ?? []) as Any[]) {
      const scope = scopeOf(ss.scope);
      for (const span of (ss.spans ?? []) as Any[]) {
        const status = (span.status ?? {}) as Any;
        out.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name as string,
          kind: span.kind as number,
          startTimeUnixNano: longText(span.startTimeUnixNano),
          endTimeUnixNano: longText(span.endTimeUnixNano),
          attributes: attributes(span.attributes),
          events: ((span.events ?? []) as Any[]).map((e) => ({
            name: e.name as string,
            timeUnixNano: longText(e.timeUnixNano),
            attributes: attributes(e.attributes),
          })),
          status: { code: (status.code as number) ?? 0, message: (status.message as string) ?? '' },
          flags: (span.flags as number) ?? 0,
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

/** Decodes an `ExportLogsServiceRequest` body into plain log records. */
export function decodeLogs(body: Uint8Array): DecodedLog[] {
  const request = LogsRequest.decode(body) as Any;
  const out: DecodedLog[] = [];
  for (const rl of (request.resourceLogs ?? []) as Any[]) {
    const resource = attributes(((rl.resource ?? {}) as Any).attributes);
    for (const sl of (rl.scopeLogs ?? []) as Any[]) {
      const scope = scopeOf(sl.scope);
      for (const record of (sl.logRecords ?? []) as Any[]) {
        out.push({
          timeUnixNano: longText(record.timeUnixNano),
          severityNumber: (record.severityNumber as number) ?? 0,
          severityText: (record.severityText as string) ?? '',
          body: anyValue(record.body),
          attributes: attributes(record.attributes),
          traceId: hex(record.traceId),
          spanId: hex(record.spanId),
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

function decodeFor(path: string, body: Uint8Array): { spans: DecodedSpan[]; logs: DecodedLog[] } {
  if (path.endsWith('TraceService/Export') || path.endsWith('/v1/traces') || path === '/' || path.endsWith('/custom')) {
    try {
      return { spans: decodeTraces(body), logs: [] };
    } catch {
      /* not a trace request */
    }
  }
  if (path.endsWith('LogsService/Export') || path.endsWith('/v1/logs')) return { spans: [], logs: decodeLogs(body) };
  return { spans: [], logs: [] };
}

/** A receiver's common face. */
export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  behaviour: Behaviour;
  spans(): DecodedSpan[];
  logs(): DecodedLog[];
  /** Resolves once `predicate` holds for the requests received (checked on every request). */
  waitFor(predicate: (receiver: Receiver) => boolean): Promise<void>;
  close(): Promise<void>;
}

abstract class BaseReceiver implements Receiver {
  abstract readonly url: string;
  readonly requests: ReceivedRequest[] = [];
  behaviour: Behaviour = {};
  private waiters: { predicate: (r: Receiver) => boolean; resolve: () => void }[] = [];

  spans(): DecodedSpan[] {
    return this.requests.flatMap((r) => r.spans);
  }

  logs(): DecodedLog[] {
    return this.requests.flatMap((r) => r.logs);
  }

  waitFor(predicate: (receiver: Receiver) => boolean): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ predicate, resolve }));
  }

  /** The behaviour for the request now arriving (consumes one `sequence` entry). */
  protected next(): Behaviour {
    const sequence = this.behaviour.sequence;
    if (sequence !== undefined && sequence.length > 0) return { ...this.behaviour, status: sequence.shift() };
    return this.behaviour;
  }

  protected record(request: ReceivedRequest): void {
    this.requests.push(request);
    this.waiters = this.waiters.filter((w) => {
      if (!w.predicate(this)) return true;
      w.resolve();
      return false;
    });
  }

  abstract close(): Promise<void>;
}

class HttpReceiver extends BaseReceiver {
  url = '';
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();

  constructor(options: ReceiverOptions) {
    super();
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const path = (req.url ?? '/').split('?')[0]!;
        const headers: Record<string, string> = {};
        for (const [key, value] of Object.entries(req.headers)) headers[key] = Array.isArray(value) ? value.join(', ') : String(value);
        if (options.maxRequestBytes !== undefined && body.length > options.maxRequestBytes) {
          this.record({ transport: 'http', path, headers, bytes: body.length, spans: [], logs: [], tooLarge: true });
          res.writeHead(413, { 'content-type': 'text/plain' });
          res.end('request body too large');
          return;
        }
        const behaviour = this.next();
        const decoded = behaviour.status === undefined || behaviour.status < 300 ? decodeFor(path, body) : { spans: [], logs: [] };
        this.record({ transport: 'http', path, headers, bytes: body.length, ...decoded });
        if (behaviour.hang) {
          this.hanging.add(res);
          return;
        }
        const status = behaviour.status ?? 200;
        const extra: Record<string, string> = behaviour.retryAfter !== undefined ? { 'retry-after': behaviour.retryAfter } : {};
        res.writeHead(status, { 'content-type': 'application/x-protobuf', ...extra });
        res.end();
      });
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Starts an OTLP/HTTP receiver on 127.0.0.1 (any free port). */
export function startHttpReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  return new HttpReceiver(options).listen();
}

interface GrpcModule {
  Server: new (options?: Record<string, number>) => {
    addService(service: object, implementation: object): void;
    bindAsync(address: string, credentials: object, callback: (error: Error | null, port: number) => void): void;
    tryShutdown(callback: () => void): void;
    forceShutdown(): void;
  };
  ServerCredentials: { createInsecure(): object; createSsl(rootCerts: Buffer | null, keyCertPairs: { private_key: Buffer; cert_chain: Buffer }[]): object };
  status: Record<string, number>;
}

class GrpcReceiver extends BaseReceiver {
  url = '';
  private readonly grpc: GrpcModule = require('@grpc/grpc-js') as GrpcModule;
  private readonly server: InstanceType<GrpcModule['Server']>;
  private readonly tls: ReceiverOptions['tls'];
  private terminator: tls.Server | undefined;

  constructor(options: ReceiverOptions) {
    super();
    this.tls = options.tls;
    this.server = new this.grpc.Server(options.maxRequestBytes === undefined ? {} : { 'grpc.max_receive_message_length': options.maxRequestBytes });
  }

  async listen(): Promise<this> {
    const identity = (value: Buffer) => value;
    const method = (path: string) => ({
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    });
    const handler =
      (path: string) =>
      (call: { request: Buffer; metadata: { getMap(): Record<string, unknown> } }, callback: (error: unknown, value?: Buffer) => void) => {
        const headers: Record<string, string> = {};
        for (const [key, value] of Object.entries(call.metadata.getMap())) headers[key] = String(value);
        const behaviour = this.next();
        const failing = behaviour.status !== undefined && behaviour.status >= 300;
        const decoded = failing ? { spans: [], logs: [] } : decodeFor(path, call.request);
        this.record({ transport: 'grpc', path, headers, bytes: call.request.length, ...decoded });
        if (behaviour.hang) return;
        if (failing) {
          callback({ code: this.grpc.status.UNAVAILABLE, details: behaviour.details?.(headers) ?? `receiver told to fail (${behaviour.status})` });
          return;
        }
        callback(null, Buffer.alloc(0));
      };
    const trace = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
    const logs = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
    this.server.addService({ Export: method(trace) }, { Export: handler(trace) });
    this.server.addService({ Export: method(logs) }, { Export: handler(logs) });
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', this.grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
    );
    if (this.tls === undefined) {
      this.url = `http://127.0.0.1:${port}`;
      return this;
    }
    // TLS is ended by a node:tls server in front, offering h2 as a gRPC server does: grpc-js's own TLS server
    // does not handshake on Deno (its client then reads plaintext HTTP/2 frames as a TLS record).
    const terminator = tls.createServer({ key: this.tls.key, cert: this.tls.cert, ALPNProtocols: ['h2'] }, (secure) => {
      const plain = net.connect(port, '127.0.0.1');
      secure.pipe(plain).pipe(secure);
      const close = () => {
        secure.destroy();
        plain.destroy();
      };
      secure.on('error', close).on('close', close);
      plain.on('error', close).on('close', close);
    });
    terminator.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    this.terminator = terminator;
    // The name the certificate carries (localhost), as a client checks it.
    this.url = `https://localhost:${(terminator.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.forceShutdown();
    const terminator = this.terminator;
    if (terminator !== undefined) await new Promise<void>((resolve) => terminator.close(() => resolve()));
  }
}

/** Starts an OTLP/gRPC receiver (traces and logs) on 127.0.0.1 (any free port). */
export function startGrpcReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  return new GrpcReceiver(options).listen();
}
