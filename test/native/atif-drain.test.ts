// Exports that ask for native's delivery to drain while a drain is in flight
// share the next one: thousands of session closes at once must not become
// thousands of concurrent flushSubscribers() calls (a burst of 8,000 closed
// sessions then missed a 30 s shutdown with 0 trajectories written).
import { describe, expect, it } from 'vitest';
import { AtifRouter } from '../../native/atif.ts';
import type { NativeBinding } from '../../native/binding.ts';

function countingBinding() {
  const calls = { flush: 0, inFlight: 0, maxInFlight: 0 };
  const binding = {
    registerSubscriber: () => {},
    deregisterSubscriber: () => {},
    flushSubscribers: async () => {
      calls.flush += 1;
      calls.inFlight += 1;
      calls.maxInFlight = Math.max(calls.maxInFlight, calls.inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      calls.inFlight -= 1;
    },
  } as unknown as NativeBinding;
  return { binding, calls };
}

describe('native ATIF exports', () => {
  it('share delivery drains: 1,000 concurrent exports cost at most two flushSubscribers() calls', async () => {
    const { binding, calls } = countingBinding();
    const router = new AtifRouter(binding, () => {});
    const exporters = Array.from({ length: 1000 }, (_, i) => router.register({ sessionId: `s${i}`, agentName: 'a', agentVersion: '1' } as never, null));
    const documents = await Promise.all(exporters.map((exporter) => exporter.exportJson()));
    expect(documents.every((text) => JSON.parse(text).schema_version === 'ATIF-v1.7')).toBe(true);
    expect(calls.flush).toBeLessThanOrEqual(2);
    expect(calls.maxInFlight).toBe(1);
  });

  it('still drains again for an export asked after a drain started', async () => {
    const { binding, calls } = countingBinding();
    const router = new AtifRouter(binding, () => {});
    const exporter = router.register({ sessionId: 's', agentName: 'a', agentVersion: '1' } as never, null);
    const first = exporter.exportJson();
    await Promise.resolve();
    await Promise.resolve();
    const second = exporter.exportJson();
    await Promise.all([first, second]);
    expect(calls.flush).toBe(2);
  });
});
