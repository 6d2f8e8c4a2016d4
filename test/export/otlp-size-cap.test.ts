// A receiver's request size cap (the Collector's gRPC receiver takes 4 MiB,
// its HTTP receiver 20 MiB; other backends have their own) against LLM spans
// that carry the whole conversation so far: a batch the receiver refuses for
// its size is sent again in halves, so only a span too large on its own is
// lost, counted in status() as `tooLarge` and warned about without its text.
// The receivers are real OTLP servers on 127.0.0.1 with the cap the real ones
// apply (HTTP 413; gRPC RESOURCE_EXHAUSTED from grpc-js's own
// max_receive_message_length check); the session runs through the plugin with
// a plugins.toml, as a host runs it.
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../support/otlp-normalize.ts';
import { withProcessEnv } from '../support/process-env.ts';
import { CALLS, growingSession, output, run, singleSizes, spanKey, type Run, type Transport } from '../support/otlp-size-cap.ts';

const tooLargeWarnings = (run: Run) => run.warnings.filter((p) => p.includes('too large'));

interface Uncapped {
  lines: ReturnType<typeof growingSession>;
  reference: Run;
  /** Each span's request size when sent alone. */
  sizes: Map<string, number>;
}

const uncappedRuns = new Map<Transport, Promise<Uncapped>>();

/**
 * The growing session of CALLS calls, its run into a receiver without a cap and its spans' sizes alone: made once
 * per transport, on first use, for the two cases that compare a capped run with it (each made both anew before).
 */
function uncapped(transport: Transport): Promise<Uncapped> {
  let made = uncappedRuns.get(transport);
  if (made === undefined) {
    made = (async () => {
      const lines = growingSession(CALLS);
      const reference = await run('memory', transport, lines);
      return { lines, reference, sizes: await singleSizes(transport, lines) };
    })();
    uncappedRuns.set(transport, made);
  }
  return made;
}

for (const transport of ['http', 'grpc'] as const) {
  describe(`a receiver's request size cap (${transport})`, () => {
    it('delivers every span of a batch over the cap, exactly once, in order and unchanged, when each span fits', async () => {
      const { lines, reference, sizes } = await uncapped(transport);
      // The premise: the whole session is one default batch, one request.
      expect(reference.rx.requests.length).toBe(1);
      expect([...sizes.keys()].sort()).toEqual([...reference.order].sort());
      const largest = Math.max(...sizes.values());
      const cap = largest * 2;
      expect(reference.rx.requests[0]!.bytes).toBeGreaterThan(cap * 4);

      const capped = await run('memory', transport, lines, { cap });
      expect(capped.rx.requests.filter((r) => r.tooLarge !== true).length).toBeGreaterThan(1);
      expect(capped.order).toEqual(reference.order);
      expect(normalizeSpans(capped.rx.spans())).toEqual(normalizeSpans(reference.rx.spans()));
      for (const request of capped.rx.requests.filter((r) => r.tooLarge !== true)) expect(request.bytes).toBeLessThanOrEqual(cap);
      if (transport === 'http') expect(capped.rx.requests.some((r) => r.tooLarge === true)).toBe(true);
      expect(output(capped.result, 'otlp-traces')).toMatchObject({ sent: reference.order.length, failed: 0, tooLarge: 0, dropped: 0, queued: 0 });
      expect(capped.warnings).toEqual([]);
    });

    it('loses only the span too large on its own: counted as tooLarge, warned about once with its size and not its text', async () => {
      const lines = growingSession(CALLS, { screenshotBytes: 300_000 });
      const reference = await run('memory', transport, lines);
      const sizes = await singleSizes(transport, lines);
      const bySize = [...sizes.entries()].sort((a, b) => b[1] - a[1]);
      const [huge, next] = [bySize[0]!, bySize[1]!];
      expect(huge[0]).toBe(`openai grow-turn-1:api:${CALLS}`);
      const cap = Math.floor((huge[1] + next[1]) / 2);

      const capped = await run('memory', transport, lines, { cap });
      expect(capped.order).toEqual(reference.order.filter((k) => k !== huge[0]));
      expect(normalizeSpans(capped.rx.spans())).toEqual(normalizeSpans(reference.rx.spans().filter((s) => spanKey(s) !== huge[0])));
      expect(output(capped.result, 'otlp-traces')).toMatchObject({ sent: reference.order.length - 1, failed: 1, tooLarge: 1, dropped: 0, queued: 0 });
      const warnings = tooLargeWarnings(capped);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${huge[1]} bytes`);
      if (transport === 'grpc') expect(warnings[0]).toContain(`cap of ${cap} bytes`);
      expect(warnings[0]).not.toMatch(/base64|export function|Reading module/);
      expect(output(capped.result, 'otlp-traces').lastError).toContain('too large');
    });

    it('retries a half that fails for another reason (503) as before, the rest of its batch waiting with it, and loses nothing', async () => {
      const { lines, reference, sizes } = await uncapped(transport);
      const cap = Math.max(...sizes.values()) * 2;
      // The first request under the cap (part of a half) fails once as unavailable, then the receiver takes everything.
      const capped = await run('memory', transport, lines, { cap, behaviour: { sequence: [503], retryAfter: '0' } });
      expect([...capped.order].sort()).toEqual([...reference.order].sort());
      expect(normalizeSpans(capped.rx.spans())).toEqual(normalizeSpans(reference.rx.spans()));
      expect(output(capped.result, 'otlp-traces')).toMatchObject({ sent: reference.order.length, failed: 0, tooLarge: 0, dropped: 0, queued: 0 });
      expect(output(capped.result, 'otlp-traces').errors).toBe(1);
    });

    it('ends, with each span and log record failed once, when the receiver refuses every request', async () => {
      const lines = growingSession(8, { fileBytes: 200 });
      const refused = await run('memory', transport, lines, { cap: 1, logs: ['enabled = true'] });
      const spans = output(refused.result, 'otlp-traces');
      const logs = output(refused.result, 'otlp-logs');
      // The session, 8 LLM calls and 8 tool calls.
      expect(spans.failed).toBe(17);
      expect(logs.failed).toBeGreaterThan(0);
      for (const health of [spans, logs]) expect(health).toMatchObject({ sent: 0, dropped: 0, queued: 0, tooLarge: health.failed });
      if (transport === 'http') {
        // Halving n items down to single ones: 2n - 1 requests, no more.
        const requests = (path: string) => refused.rx.requests.filter((r) => r.path === path).length;
        expect(requests('/v1/traces')).toBe(2 * spans.failed! - 1);
        expect(requests('/v1/logs')).toBe(2 * logs.failed! - 1);
      }
      // One warning per destination: the refusals are one outage.
      expect(tooLargeWarnings(refused)).toHaveLength(2);
    });

    it('keeps the shutdown budget while halving, each span counted once (failed, or dropped when the budget ran out)', async () => {
      const lines = growingSession(CALLS);
      // The budget is for the split, not the start: the plugins.toml activation comes first, and a run before it
      // loads the exporter's modules.
      await run('memory', transport, growingSession(2), { cap: 1 });
      const refused = await run('memory', transport, lines, { cap: 1, timeoutMs: 300, awaitReady: true });
      expect(refused.ms).toBeLessThan(5000);
      const health = output(refused.result, 'otlp-traces');
      expect(health.sent).toBe(0);
      expect(health.failed).toBe(health.tooLarge);
      // Every span is counted once at every moment: failed, dropped, or (only when shutdown() returned at its budget
      // saying the outputs were still writing, as on a machine too loaded to finish the split's bookkeeping in
      // 300 ms) still queued.
      expect(health.failed! + health.dropped! + health.queued!).toBe(2 * CALLS + 1);
      const late = refused.warnings.some((warning) => warning.includes('did not finish within 300 ms'));
      if (!late) expect(health.queued).toBe(0);
    });
  });
}

describe("a receiver's request size cap, gzip requests (http)", () => {
  it('splits a compressed request the receiver refuses for its size as it splits an uncompressed one', async () => {
    // Compression makes the exporter use its own HTTP transport, which reports a 413 in its own error type.
    withProcessEnv({ OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip' });
    const refused = await run('memory', 'http', growingSession(8, { fileBytes: 200 }), { cap: 1 });
    expect(refused.rx.requests.every((r) => r.tooLarge === true && r.headers['content-encoding'] === 'gzip')).toBe(true);
    expect(refused.rx.requests.length).toBe(2 * 17 - 1);
    expect(output(refused.result, 'otlp-traces')).toMatchObject({ sent: 0, failed: 17, tooLarge: 17, dropped: 0, queued: 0 });
    expect(tooLargeWarnings(refused)).toHaveLength(1);
  });
});
