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

export type Signal = 'traces' | 'logs';

/** What the pipeline needs from an exporter (the OTel `SpanExporter`/`LogRecordExporter` shape). */
export interface WireExporter {
  export(items: unknown[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
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

// Literal specifiers, so bundlers and Deno's npm resolution see them.
async function loadClass(signal: Signal, transport: OtlpTransport): Promise<ExporterClass> {
  if (signal === 'traces') {
    if (transport === 'grpc') return ((await import('@opentelemetry/exporter-trace-otlp-grpc')) as unknown as { OTLPTraceExporter: ExporterClass }).OTLPTraceExporter;
    return ((await import('@opentelemetry/exporter-trace-otlp-proto')) as unknown as { OTLPTraceExporter: ExporterClass }).OTLPTraceExporter;
  }
  if (transport === 'grpc') return ((await import('@opentelemetry/exporter-logs-otlp-grpc')) as unknown as { OTLPLogExporter: ExporterClass }).OTLPLogExporter;
  return ((await import('@opentelemetry/exporter-logs-otlp-proto')) as unknown as { OTLPLogExporter: ExporterClass }).OTLPLogExporter;
}

interface GrpcMetadata {
  set(key: string, value: string): void;
}

/**
 * Creates the exporter for one destination. Rejects with a message naming
 * the package to install when it is missing.
 */
export async function createWireExporter(options: WireOptions): Promise<WireExporter> {
  let Exporter: ExporterClass;
  try {
    Exporter = await loadClass(options.signal, options.transport);
  } catch (error) {
    throw new Error(
      `${exporterPackage(options.signal, options.transport)} could not be loaded (${error instanceof Error ? error.message : String(error)}); install it next to nemo-relay-hooks to send OTLP ${options.signal}`,
    );
  }
  const config: Record<string, unknown> = { url: options.url, timeoutMillis: options.timeoutMillis };
  if (options.transport === 'grpc') {
    if (Object.keys(options.headers).length > 0) {
      const grpc = (await import('@grpc/grpc-js')) as unknown as { Metadata: new () => GrpcMetadata };
      const metadata = new grpc.Metadata();
      for (const [key, value] of Object.entries(options.headers)) metadata.set(key.toLowerCase(), value);
      config.metadata = metadata;
    }
  } else {
    config.headers = { ...options.headers };
  }
  return new Exporter(config);
}
