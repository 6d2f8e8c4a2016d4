/**
 * OTLP export: the cost of exporting one span through the memory relay
 * (relay scope → span assembly with native's ids, times and `full`
 * attributes → batching pipeline → the OTLP/HTTP protobuf exporter) against
 * the OpenTelemetry JS SDK doing the same (`BasicTracerProvider` +
 * `BatchSpanProcessor` + the same `OTLPTraceExporter`), in the same process,
 * batches interleaved. Both send to one loopback HTTP receiver that
 * discards the bodies; the drain (everything delivered) is included.
 *
 * The SDK span carries the same name, kind and attribute set the memory
 * relay computes for its span (precomputed once, so the SDK pays none of
 * the mapping); both queues are sized so nothing is dropped. OTLP is the
 * relay's only output here, so it builds event objects rather than ATOF
 * lines (with an ATOF file or ATIF beside it, each line is parsed back).
 *
 * The caller-side ratio is not a fair comparison on its own: the SDK's
 * BatchSpanProcessor serializes a full batch inside `end()`, the relay's
 * pipeline on a timer, so the drained ratio is the goal.
 *
 * @module
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CaseReport, figure, interleave, iterations, ratio, rowOf, type Subject } from '../harness.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { existingOtlpHub } from '../../src/export/otlp/index.ts';
import type { RelayCore } from '../../src/backends/memory/listeners.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { SpanKind, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';

const report = new CaseReport('otlp-export', 'OTLP export: a span through the memory relay vs the OpenTelemetry JS SDK (BatchSpanProcessor + the same OTLP exporter)');
const N = iterations(2000, 20);
const QUEUE = N * 4;

let bytes = 0;
let requests = 0;
const server = http.createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;

const INPUT = { cwd: '/srv/app', session_id: 'bench-session', prompt: 'list the files' };
const METADATA = { session_id: 'bench-session', turn_id: 'turn-1', model: 'gpt-4o-mini', platform: 'cli' };
const OUTPUT = { status: 'ok', files: 3 };

// ---- memory relay
const relay = createMemoryRelay({ logger: silentLogger });
const activation = await relay.initializePluginConfig({
  version: 1,
  components: [
    {
      kind: 'observability',
      config: {
        version: 4,
        opentelemetry: {
          enabled: true,
          endpoints: [{ type: 'full', endpoint: url, service_name: 'bench', max_queue_size: QUEUE, max_export_batch_size: 512, scheduled_delay_millis: 5000 }],
        },
      },
    },
  ],
});
// The OTLP hub and the internal listeners hang off the relay's core (not public API; the bench reaches in).
const core = (relay as unknown as { core: RelayCore }).core;
const hub = existingOtlpHub(core)!;
const root = relay.pushScope({ name: 'bench-root', category: 'agent', metadata: METADATA });
const memorySubject: Subject = {
  name: 'memory relay -> OTLP',
  iters: N,
  run(n) {
    for (let i = 0; i < n; i++) {
      const scope = relay.pushScope({ name: 'step', category: 'function', parent: root, input: INPUT, metadata: METADATA });
      relay.popScope(scope, { output: OUTPUT });
    }
  },
  drain: () => hub.flush(),
};

// The attributes the memory relay sends for that span, captured once for the SDK span.
const { SpanAssembler } = await import('../../src/export/otlp/assembler.ts');
const { validatePluginConfig } = await import('../../src/formats/plugins-toml/validate.ts');
const endpointSettings = validatePluginConfig({
  version: 1,
  components: [{ kind: 'observability', config: { version: 4, opentelemetry: { enabled: true, endpoints: [{ type: 'full', endpoint: url }] } } }],
}).observability!.opentelemetry.traces[0]!;
let attributes: Record<string, string | number | boolean> = {};
const assembler = new SpanAssembler(endpointSettings, { attributes: {} }, { name: 'x' }, (span) => (attributes = span.attributes as typeof attributes));
const unsubscribe = core.addListener((event, top) => assembler.accept(event, top));
relay.popScope(relay.pushScope({ name: 'step', category: 'function', parent: root, input: INPUT, metadata: METADATA }), { output: OUTPUT });
unsubscribe();
await hub.flush();

// ---- OTel SDK
const exporter = new OTLPTraceExporter({ url });
const processor = new BatchSpanProcessor(exporter, { maxQueueSize: QUEUE, maxExportBatchSize: 512, scheduledDelayMillis: 5000 });
const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'bench' }), spanProcessors: [processor] });
const tracer = provider.getTracer('bench');
const parent = trace.setSpan(ROOT_CONTEXT, tracer.startSpan('bench-root'));
const sdkSubject: Subject = {
  name: 'OTel SDK BatchSpanProcessor -> OTLP',
  iters: N,
  run(n) {
    for (let i = 0; i < n; i++) tracer.startSpan('step', { kind: SpanKind.INTERNAL, attributes }, parent).end();
  },
  drain: () => provider.forceFlush(),
};

// The span alone, nothing exported: what each side does per span before the (shared) exporter.
// A second relay whose only receiver is an assembler, as the hub feeds it; an SDK provider whose processor keeps nothing.
const buildRelay = createMemoryRelay({ logger: silentLogger });
const buildCore = (buildRelay as unknown as { core: RelayCore }).core;
let built = 0;
const buildAssembler = new SpanAssembler(endpointSettings, { attributes: {} }, { name: 'x' }, () => built++);
const detachBuild = buildCore.addListener((event, top) => buildAssembler.accept(event, top));
const buildRoot = buildRelay.pushScope({ name: 'bench-root', category: 'agent', metadata: METADATA });
const noopProvider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'bench' }),
  spanProcessors: [{ onStart() {}, onEnd: () => void built++, forceFlush: async () => {}, shutdown: async () => {} }],
});
const noopTracer = noopProvider.getTracer('bench');
const noopParent = trace.setSpan(ROOT_CONTEXT, noopTracer.startSpan('bench-root'));
const memoryBuild: Subject = {
  name: 'memory relay span, not exported',
  iters: N,
  run(n) {
    for (let i = 0; i < n; i++) {
      const scope = buildRelay.pushScope({ name: 'step', category: 'function', parent: buildRoot, input: INPUT, metadata: METADATA });
      buildRelay.popScope(scope, { output: OUTPUT });
    }
  },
};
const sdkBuild: Subject = {
  name: 'OTel SDK span, not exported',
  iters: N,
  run(n) {
    for (let i = 0; i < n; i++) noopTracer.startSpan('step', { kind: SpanKind.INTERNAL, attributes }, noopParent).end();
  },
};

const timings = await interleave([memorySubject, sdkSubject], { reps: 9, warmup: 2 });
const buildTimings = await interleave([memoryBuild, sdkBuild], { reps: 9, warmup: 2 });
detachBuild();
const [memory, sdk] = timings as [(typeof timings)[0], (typeof timings)[0]];
report.figure(figure('memory_over_otel_sdk', 'span export: memory relay / OTel SDK BatchSpanProcessor (same exporter, drained)', ratio(memory, sdk, true), 'x', { op: '<=', target: 1 }));
report.figure(figure('memory_over_otel_sdk_caller', 'span export, caller side only: memory relay / OTel SDK', ratio(memory, sdk, false), 'x'));
report.figure(figure('memory_over_otel_sdk_span_only', 'span built, not exported: memory relay (events + assembly) / OTel SDK (startSpan + end)', ratio(buildTimings[0]!, buildTimings[1]!, false), 'x'));
for (const timing of [...timings, ...buildTimings]) report.row(rowOf(timing.name, `${timing.name} (per span)`, timing));
const health = hub.outputs()[0]!;
report.fact('attributes_per_span', Object.keys(attributes).length);
report.fact('memory_spans_sent', health.sent ?? 0);
report.fact('memory_spans_dropped_or_failed', (health.dropped ?? 0) + (health.failed ?? 0));
report.fact('requests', requests);
report.fact('bytes', bytes);
report.fact('spans_built_not_exported', built);
report.note('Per span: one relay scope push + pop (two ATOF events) becoming one OTLP span with native\'s full attributes, vs tracer.startSpan(...).end() with the same attributes precomputed. Drain = hub.flush() vs provider.forceFlush().');

relay.popScope(root);
buildRelay.popScope(buildRoot);
await buildRelay.shutdown();
await noopProvider.shutdown();
await activation.close();
await relay.shutdown();
await provider.shutdown();
server.close();
report.write();
