// What native (nemo-relay-node 0.9.2) does with a receiver's request size
// cap, the same session and plugins.toml as otlp-size-cap.test.ts: one
// attempt per batch, so the whole batch is lost when it is over the cap,
// with no count in status(), and the failed export fails the activation
// close. The memory relay splits the batch and delivers every span (the
// difference is documented in docs/backends/memory-and-native.md). Its own
// process: a failed activation close stays in native's process-wide state.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { CALLS, growingSession, output, run, singleSizes } from '../support/otlp-size-cap.ts';

if (!nativeAvailable) console.warn(`native size-cap comparison skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

describe.skipIf(!nativeAvailable)('native and a receiver capped below one batch (http)', () => {
  it('loses the whole batch on native, where the memory relay delivers every span', async () => {
    const lines = growingSession(CALLS);
    const cap = Math.max(...(await singleSizes('http', lines)).values()) * 2;

    const theirs = await run('native', 'http', lines, { cap });
    // One request for the whole session, refused (413), not tried again: nothing arrives.
    expect(theirs.rx.requests.map((r) => r.tooLarge === true)).toEqual([true]);
    expect(theirs.rx.spans()).toEqual([]);
    expect(output(theirs.result, 'otlp-traces').unobserved).toBeTruthy();
    // Native counts nothing, but its failed close said spans were lost: status() says so too, not "errors: 0".
    expect(output(theirs.result, 'otlp-traces')).toMatchObject({ errors: 1, lastError: expect.stringMatching(/^native reported a failed delivery when the activation closed: (OpenTelemetry trace export to http:\/\/127\.0\.0\.1:\d+ failed|otel\.traces_export_failed)/) });
    expect(theirs.warnings.some((w) => w.includes('activation close failed') && w.includes('trace export'))).toBe(true);

    const ours = await run('memory', 'http', lines, { cap });
    expect(ours.order.length).toBe(2 * CALLS + 1);
    expect(output(ours.result, 'otlp-traces')).toMatchObject({ sent: 2 * CALLS + 1, failed: 0, tooLarge: 0 });
  });
});
