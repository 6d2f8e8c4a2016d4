// At exit a trajectory is exported without draining native delivery
// (exportJsonNow); events still in flight used to leave it silently empty
// (0 steps, passing validate). Now it says it is partial and is counted.
import { describe, expect, it } from 'vitest';
import { atifErrorLines, emptyStepsErrors } from '../support/harbor.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { available } from './support.ts';

describe.skipIf(!available)('native ATIF export at exit', () => {
  it('marks a trajectory exported while events are in flight as partial, and counts it', async () => {
    const relay = loadNativeRelay({ logger: silentLogger });
    const root = relay.pushScope({ name: 'session', category: 'agent', metadata: { session_id: 's' } });
    const exporter = relay.registerAtifExporter({ scope: root, sessionId: 's', agentName: 'a', agentVersion: '1' });
    const errorsBefore = relay.stats().errors;
    for (let i = 0; i < 50; i++) {
      const llm = relay.llmStart({ name: 'llm', parent: root, request: { headers: {}, content: { messages: [{ role: 'user', content: `q${i}` }] } } });
      relay.llmEnd(llm, { response: { content: [{ type: 'text', text: `a${i}` }] } });
    }
    const now = JSON.parse(exporter.exportJsonNow!()) as { notes?: string; steps: unknown[] };
    expect(now.notes).toMatch(/^partial: \d+ event\(s\) emitted before this export had not been delivered/);
    // Events in flight may leave it without steps (Harbor's rules flag that); nothing else may be wrong.
    expect(atifErrorLines(now)).toEqual(emptyStepsErrors(now));
    expect(relay.stats().errors).toBeGreaterThan(errorsBefore);
    // Once delivery is drained the document is whole and says nothing of the kind.
    const drained = JSON.parse(await exporter.exportJson()) as { notes?: string; steps: unknown[] };
    expect(drained.notes).toBeUndefined();
    expect(drained.steps.length).toBeGreaterThanOrEqual(50);
    expect(JSON.parse(exporter.exportJsonNow!()).notes).toBeUndefined();
    relay.popScope(root);
    await relay.shutdown();
  });
});
if (!available) console.warn('[native ATIF exit] skipped: nemo-relay-node cannot load here');
