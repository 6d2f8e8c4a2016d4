// nemo-relay-node 0.9.2 sends no trace over plain http:// to a host other
// than this machine (it takes http:// to localhost, 127.0.0.0/8 and [::1]
// only): given such an endpoint alone, it refused the whole document and
// recorded nothing; beside a log table, it dropped the traces silently and
// sent the logs. The plugin skips such an endpoint on both backends before
// they see the document, with a warning, so both record the same: ATOF and
// ATIF, no trace to that endpoint, its derived logs, the other endpoints.
//
// 0.0.0.0 and [::ffff:127.0.0.1] are hosts native counts as another machine
// that still reach the loopback receivers, so what would be sent is seen.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { readStream } from '../differential/replay.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { normalizeLogs, normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';
import { replayWithOtlp, type OtlpReplayOptions } from '../support/otlp-replay.ts';

const STREAMS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../fixtures/streams');
const stream = (name: string) => readStream(path.join(STREAMS, `${name}.hooks.jsonl`));
const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };

const open: Receiver[] = [];
async function receiver(): Promise<Receiver> {
  const rx = await startHttpReceiver();
  open.push(rx);
  return rx;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((rx) => rx.close()));
});

/** One stream replayed on a backend; what each receiver got from it. */
async function capture(backend: 'native' | 'memory', name: string, options: OtlpReplayOptions, receivers: Receiver[]) {
  for (const rx of receivers) rx.requests.length = 0;
  const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
  const result = await replayWithOtlp(relay, stream(name), options);
  return {
    result,
    skipped: result.status.pluginConfig.diagnostics.filter((d) => d.code === 'observability.otel_endpoint_skipped').map((d) => [d.field, d.message]),
    received: receivers.map((rx) => ({ spans: [...rx.spans()], logs: [...rx.logs()], paths: rx.requests.map((r) => r.path) })),
  };
}

/** Session ids of an ATOF file's lines. */
const sessionsOf = (lines: readonly string[]) => new Set(lines.map((l) => (JSON.parse(l) as { metadata?: { session_id?: string } }).metadata?.session_id).filter(Boolean));

describe.skipIf(!nativeAvailable)(`plain-http:// remote trace endpoints: memory and native record the same${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it('such an endpoint alone: both write ATOF and ATIF, send it nothing, and say why', async () => {
    const remote = await receiver();
    const options: OtlpReplayOptions = { endpoints: [{ type: 'full', endpoint: remote.url.replace('127.0.0.1', '0.0.0.0') }] };
    const theirs = await capture('native', 'interleaved-sessions', options, [remote]);
    const ours = await capture('memory', 'interleaved-sessions', options, [remote]);
    for (const run of [theirs, ours]) {
      expect(run.skipped.map(([field]) => field)).toEqual(['endpoints[0].endpoint']);
      expect(run.skipped[0]![1]).toContain('fix: use https://, or a collector on this host');
      expect(run.received[0]!.paths).toEqual([]);
      expect(run.result.problems.join('\n')).not.toContain('rejected plugins.toml');
    }
    expect(theirs.result.atofLines.length).toBe(ours.result.atofLines.length);
    expect(sessionsOf(theirs.result.atofLines)).toEqual(sessionsOf(ours.result.atofLines));
    expect(sessionsOf(ours.result.atofLines).size).toBeGreaterThanOrEqual(2);
    expect(theirs.result.atifFiles.length).toBe(ours.result.atifFiles.length);
    expect(ours.result.atifFiles.length).toBeGreaterThanOrEqual(2);
  });

  it('beside a loopback endpoint and a log table: no trace to it on either backend, the same derived logs to it, the same spans to the loopback one', async () => {
    const remote = await receiver();
    const local = await receiver();
    const options: OtlpReplayOptions = {
      endpoints: [
        { type: 'full', endpoint: remote.url.replace('127.0.0.1', '[::ffff:127.0.0.1]') },
        { type: 'openinference', endpoint: local.url },
      ],
      logs: ['enabled = true'],
    };
    const theirs = await capture('native', 'subagent', options, [remote, local]);
    const ours = await capture('memory', 'subagent', options, [remote, local]);
    expect(ours.skipped).toEqual(theirs.skipped);
    expect(ours.skipped.map(([field]) => field)).toEqual(['endpoints[0].endpoint']);
    for (const run of [theirs, ours]) {
      expect(run.received[0]!.spans).toEqual([]);
      expect(run.received[0]!.logs.length).toBeGreaterThan(0);
      expect(run.received[1]!.spans.length).toBeGreaterThan(0);
    }
    expect(normalizeLogs(ours.received[0]!.logs, opts)).toEqual(normalizeLogs(theirs.received[0]!.logs, opts));
    expect(normalizeLogs(ours.received[1]!.logs, opts)).toEqual(normalizeLogs(theirs.received[1]!.logs, opts));
    expect(normalizeSpans(ours.received[1]!.spans, opts)).toEqual(normalizeSpans(theirs.received[1]!.spans, opts));
    expect(theirs.result.atofLines.length).toBe(ours.result.atofLines.length);
    expect(theirs.result.atifFiles.length).toBe(ours.result.atifFiles.length);
  });
});
