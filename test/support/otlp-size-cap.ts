/**
 * A receiver's request size cap against LLM spans that carry the whole
 * conversation so far: a session whose spans grow call by call, and a run
 * of it through the plugin into a loopback OTLP receiver that may be capped
 * (the memory or the native backend, the same plugins.toml).
 */

import { afterEach, expect } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import type { OutputHealth } from '../../src/relay/contract.ts';
import { recordingLogger } from '../contract/backends.ts';
import { startGrpcReceiver, startHttpReceiver, type Behaviour, type DecodedSpan, type Receiver, type ReceiverOptions } from './otlp-receiver.ts';
import { replayWithOtlp, type OtlpReplayOptions, type OtlpReplayResult } from './otlp-replay.ts';
import { Agent, openAiMessage, openAiResponse, openAiTool, openAiUsage, StreamRecorder, toolMessage, type HookLine } from '../fixtures/streams/script.ts';

const GPT = 'gpt-4o-2024-08-06';
const TOOLS = [openAiTool('read_file', 'Read a file', { path: { type: 'string' } })];
/** LLM calls of the session: enough that its one batch is many times its largest span. */
export const CALLS = 24;

/** A source file of about `bytes` characters, different for each `index`. */
function sourceFile(index: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let line = 1; size < bytes; line++) {
    const text = `export function step${index}_${line}(input: number): number { return input * ${line} + ${index}; }`;
    lines.push(text);
    size += text.length + 1;
  }
  return lines.join('\n');
}

/**
 * One turn of `calls` LLM calls, each reading a file whose text joins the
 * conversation the next call sends, so each LLM span is larger than the one
 * before. With `screenshotBytes`, the last call also sends a base64 PNG.
 */
export function growingSession(calls: number, options: { fileBytes?: number; screenshotBytes?: number } = {}): HookLine[] {
  const r = new StreamRecorder();
  const agent = new Agent(r, { sessionId: 'grow-1', model: GPT, provider: 'openai', apiMode: 'chat_completions' });
  agent.start();
  const turn = agent.turn('grow-turn-1');
  const question = 'Read every module and summarise what it does.';
  const messages: Record<string, unknown>[] = [{ role: 'system', content: 'You are a careful coding agent.' }, { role: 'user', content: question }];
  turn.user(question);
  for (let n = 1; n <= calls; n++) {
    if (n === calls && options.screenshotBytes !== undefined) {
      const png = Buffer.alloc(options.screenshotBytes, n).toString('base64');
      messages.push({ role: 'user', content: [{ type: 'text', text: 'This is how the page looks now.' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] });
    }
    const read = { id: `call_read_${n}`, name: 'read_file', args: { path: `src/module-${n}.ts` } };
    const call = turn.apiCall({ model: GPT, messages: [...messages], tools: TOOLS, max_tokens: 800 });
    turn.attempt(call);
    const asked = openAiMessage(`Reading module ${n}.`, [read]);
    turn.answered(call, openAiResponse(`chatcmpl-grow-${n}`, GPT, asked, openAiUsage(900 * n, 30), r.now()), { usage: openAiUsage(900 * n, 30), assistant: asked, finishReason: 'tool_calls' });
    messages.push(asked);
    const content = sourceFile(n, options.fileBytes ?? 1500);
    turn.toolStarted(call, read.id, read.name, read.args);
    turn.toolEnded(call, read.id, read.name, read.args, content);
    messages.push(toolMessage(read.id, content));
  }
  turn.end('Summary written.');
  agent.finalize();
  return r.lines;
}

/** A span's name and call id: the same in every run of a stream (uuids and times are not). */
export function spanKey(span: DecodedSpan): string {
  const a = span.attributes;
  return `${span.name} ${String(a['nemo_relay.tool_call_id'] ?? a['nemo_relay.start.metadata.api_request_id'] ?? '')}`;
}

export type Transport = 'http' | 'grpc';
/** Receivers started by `run`, closed after each test of the file that imports this. */
const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((rx) => rx.close()));
});

async function receiver(transport: Transport, options: ReceiverOptions = {}): Promise<Receiver> {
  const rx = transport === 'grpc' ? await startGrpcReceiver(options) : await startHttpReceiver(options);
  open.push(rx);
  return rx;
}

export interface Run {
  rx: Receiver;
  result: OtlpReplayResult;
  /** What the relay (which owns the OTLP destinations) logged at warn or error. */
  warnings: string[];
  /** Span keys in the order the receiver got them. */
  order: string[];
  ms: number;
}

/**
 * The whole session in one batch, sent at shutdown: with the default delay a loaded machine's slow emit lets the
 * batch timer cut it in two, and two batches may be in flight at once (the pipeline sends up to four), so their
 * spans arrive interleaved.
 */
export const ONE_BATCH = ['scheduled_delay_millis = 600000'];

export interface RunOptions extends Pick<OtlpReplayOptions, 'logs' | 'timeoutMs' | 'awaitReady'> {
  /** The receiver's request size cap. */
  cap?: number;
  /** How the receiver answers the requests under its cap. */
  behaviour?: Behaviour;
  /** Extra lines for the endpoint table; default {@link ONE_BATCH}. */
  extra?: string[];
}

/** Replays `lines` through the plugin on `backend` into a fresh receiver (capped at `cap`) with one `full` endpoint. */
export async function run(backend: 'memory' | 'native', transport: Transport, lines: readonly HookLine[], options: RunOptions = {}): Promise<Run> {
  const rx = await receiver(transport, options.cap === undefined ? {} : { maxRequestBytes: options.cap });
  if (options.behaviour !== undefined) rx.behaviour = options.behaviour;
  const logger = recordingLogger();
  const relay = backend === 'native' ? loadNativeRelay({ logger }) : createMemoryRelay({ logger });
  const started = Date.now();
  const result = await replayWithOtlp(relay, lines, {
    endpoints: [{ type: 'full', endpoint: rx.url, transport: transport === 'grpc' ? 'grpc' : 'http_binary', extra: options.extra ?? ONE_BATCH }],
    localFiles: false,
    ...(options.logs ? { logs: options.logs } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.awaitReady === true ? { awaitReady: true } : {}),
  });
  const warnings = [...result.problems, ...logger.lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.message)];
  return { rx, result, warnings, order: rx.spans().map(spanKey), ms: Date.now() - started };
}

export function output(result: OtlpReplayResult, kind: OutputHealth['kind']): OutputHealth {
  const found = result.status.outputs.find((o) => o.kind === kind);
  expect(found, kind).toBeDefined();
  return found!;
}

/** Each span's request size on its own (a batch of one), as the receiver counts it, by key. */
export async function singleSizes(transport: Transport, lines: readonly HookLine[]): Promise<Map<string, number>> {
  const { rx } = await run('memory', transport, lines, { extra: ['max_export_batch_size = 1'] });
  const sizes = new Map<string, number>();
  for (const request of rx.requests) {
    expect(request.spans.length).toBe(1);
    sizes.set(spanKey(request.spans[0]!), request.bytes);
  }
  return sizes;
}

