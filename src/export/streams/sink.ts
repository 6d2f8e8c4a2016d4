/**
 * An ATOF stream sink: takes serialized events from any backend, queues
 * them (bounded) and hands them to its transport in order, with retries.
 * Its health is one `atof-stream` entry of `outputs()`.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import type { OutputHealth } from '../../relay/contract.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import type { StreamSinkSettings } from '../../formats/plugins-toml/sinks.ts';
import { createDeliveryQueue, type DeliveryQueue } from '../delivery/queue.ts';
import type { RetryPolicy } from '../../shared/retry.ts';
import { displayUrl } from '../../shared/secret-text.ts';
import { describeFailure } from '../delivery/errors.ts';
import { replaceDotsInKeys } from './field-names.ts';
import { httpPostTransport } from './http-post.ts';
import { ndjsonTransport, type RequestLines } from './ndjson.ts';
import type { StreamTransportImpl } from './transport.ts';
import { websocketTransport } from './websocket.ts';

/** Events held per sink while its destination is slow or down; beyond this, new events are dropped and counted. */
const DEFAULT_STREAM_QUEUE_ITEMS = 10_000;

export interface AtofStreamSinkOptions {
  logger: Logger;
  maxQueuedEvents?: number;
  retry?: Partial<RetryPolicy>;
}

export interface AtofStreamSink {
  /** Queues one serialized ATOF event (JSON text, no newline). Synchronous; never throws. */
  accept(line: string): void;
  /** Resolves once everything accepted so far was delivered or given up (true), or after `timeoutMs` (false). */
  flush(timeoutMs: number): Promise<boolean>;
  /** Sends what is queued within `timeoutMs`, then ends the connection; what is left is dropped and counted. */
  close(timeoutMs?: number): Promise<void>;
  /** Drops and counts everything pending now and tears the connection down, synchronously (exit, shutdown out of time). */
  abandon(reason: string): void;
  health(): OutputHealth;
}

export function createAtofStreamSink(settings: StreamSinkSettings, options: AtofStreamSinkOptions): AtofStreamSink {
  const shown = displayUrl(settings.url);
  const label = settings.name !== undefined ? `ATOF stream "${settings.name}" (${shown})` : `ATOF stream ${shown}`;
  let warned = false;
  // One warning per sink, not one per event: a dead receiver must not flood the host's log.
  const warnLoss = (reason: 'lost' | 'dropped', error: unknown) => {
    if (warned) return;
    warned = true;
    safeLog(options.logger, 'warn', `${label}: events are being ${reason} (${describeFailure(error)}); see status() outputs for counts`);
  };
  // ndjson: the queue counts a line as sent once it reached the socket, but it has arrived only once its request
  // ended with a 2xx answer. Until then it is `queued` (in flight); a request that ended otherwise (an error answer,
  // a connection dropped before the answer, no answer by the close's deadline or the process's exit) loses its lines:
  // `failed`, with its cause in `errors`, `lastError` and the warning.
  const unanswered = { lines: 0, bytes: 0 };
  const refused = { lines: 0, bytes: 0, errors: 0, lastError: undefined as string | undefined, queueErrorThen: undefined as string | undefined };
  const transport = transportFor(settings, {
    taken(bytes) {
      unanswered.lines++;
      unanswered.bytes += bytes;
    },
    settled(lines, bytes, error) {
      unanswered.lines -= lines;
      unanswered.bytes -= bytes;
      if (error === null) return;
      refused.lines += lines;
      refused.bytes += bytes;
      refused.errors++;
      refused.lastError = describeFailure(error);
      refused.queueErrorThen = queue.counters().lastError;
      warnLoss('lost', error);
    },
  });
  const queue: DeliveryQueue<string> = createDeliveryQueue<string>({
    maxItems: options.maxQueuedEvents ?? DEFAULT_STREAM_QUEUE_ITEMS,
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
    send: (line, signal) => transport.send(line, signal),
    sizeOf: (line) => Buffer.byteLength(line, 'utf8') + (settings.transport === 'websocket' ? 0 : 1),
    onGiveUp: (_line, reason, error) => warnLoss(reason === 'failed' ? 'lost' : 'dropped', error),
  });
  const rewrite = settings.fieldNamePolicy === 'replace_dots' ? replaceDotsInKeys : (line: string) => line;
  let closed: Promise<void> | null = null;
  return {
    accept(line) {
      let out: string;
      try {
        out = rewrite(line);
      } catch {
        out = line;
      }
      queue.push(out);
    },
    flush: (timeoutMs) => queue.flush(timeoutMs),
    close(timeoutMs = settings.timeoutMillis) {
      closed ??= (async () => {
        const started = Date.now();
        await queue.close(timeoutMs);
        await transport.close(Math.max(1, timeoutMs - (Date.now() - started)));
      })();
      return closed;
    },
    abandon(reason) {
      queue.abandon(reason);
      transport.destroy(reason);
    },
    health() {
      const c = queue.counters();
      const health: OutputHealth = {
        kind: 'atof-stream',
        path: shown,
        lastWrite: c.lastSuccess,
        bytes: Math.max(0, c.bytes - refused.bytes - unanswered.bytes),
        errors: c.attemptErrors + refused.errors,
        sent: Math.max(0, c.sent - refused.lines - unanswered.lines),
        failed: c.failed + refused.lines,
        dropped: c.dropped,
        queued: c.pending + unanswered.lines,
      };
      // The refusal, unless the queue met a failure of its own since.
      const lastError = refused.lastError !== undefined && c.lastError === refused.queueErrorThen ? refused.lastError : c.lastError;
      if (lastError !== undefined) health.lastError = lastError;
      return health;
    },
  };
}

function transportFor(settings: StreamSinkSettings, lines: RequestLines): StreamTransportImpl {
  switch (settings.transport) {
    case 'ndjson':
      return ndjsonTransport(settings.url, settings.headers, settings.timeoutMillis, lines);
    case 'websocket':
      return websocketTransport(settings.url, settings.headers, settings.timeoutMillis);
    default:
      return httpPostTransport(settings.url, settings.headers, settings.timeoutMillis);
  }
}
