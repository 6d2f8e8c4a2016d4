// One trajectory per session even when sessions interleave. Two sessions A
// and B speak as user:A? | user:B? | agent:B. | agent:A.; through the plugin
// with the env exporters, each per-session ATIF file holds only its own
// steps (and its own embedded subagent), on memory and on native alike.
// The native-only part shows why the adapter builds per-session
// trajectories itself: native's own global AtifExporter, registered once per
// session, sees every event of the process and puts all four steps in both.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { parseValidAtif } from '../contract/files.ts';
import { native as nativeLib } from '../support/native-atif.ts';
import { Agent, openAiMessage, openAiResponse, openAiUsage, StreamRecorder, type HookLine } from '../fixtures/streams/script.ts';
import { streamFileName } from '../fixtures/streams/streams.ts';
import { readStream, replay } from './replay.ts';

const STREAMS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/streams');

/** The four-step interleaving of the issue, and nothing else. */
function fourSteps(): HookLine[] {
  const r = new StreamRecorder();
  const a = new Agent(r, { sessionId: 'A', model: 'gpt-4o', provider: 'openai', apiMode: 'chat_completions' });
  const b = new Agent(r, { sessionId: 'B', model: 'gpt-4o', provider: 'openai', apiMode: 'chat_completions' });
  a.start();
  b.start();
  const turnA = a.turn('A-1');
  const turnB = b.turn('B-1');
  turnA.user('A?');
  const callA = turnA.apiCall({ model: 'gpt-4o', messages: [{ role: 'user', content: 'A?' }] });
  turnA.attempt(callA);
  turnB.user('B?');
  const callB = turnB.apiCall({ model: 'gpt-4o', messages: [{ role: 'user', content: 'B?' }] });
  turnB.attempt(callB);
  turnB.answered(callB, openAiResponse('chatcmpl-B', 'gpt-4o', openAiMessage('B.'), openAiUsage(2, 1), r.now()), { finishReason: 'stop' });
  turnA.answered(callA, openAiResponse('chatcmpl-A', 'gpt-4o', openAiMessage('A.'), openAiUsage(2, 1), r.now()), { finishReason: 'stop' });
  turnB.end('B.');
  turnA.end('A.');
  b.finalize();
  a.finalize();
  return r.lines;
}

const said = (doc: AtifTrajectory | undefined) => doc?.steps.map((step) => `${step.source}:${String(step.message)}`);

const backends: [string, boolean, () => RelayBackend][] = [
  ['memory', true, () => createMemoryRelay({ logger: silentLogger })],
  ['native', nativeAvailable, () => loadNativeRelay({ logger: silentLogger })],
];

describe.each(backends)('interleaved sessions on %s', (name, available, create) => {
  const title = available ? 'one trajectory per session' : `skipped: native backend cannot load here (${nativeLoadError})`;
  describe.skipIf(!available)(title, () => {
    it('gives A only user:A? and agent:A., and B only user:B? and agent:B.', async () => {
      const run = await replay(create(), fourSteps());
      expect([...run.trajectories.keys()]).toEqual(['hermes-atif-A.json', 'hermes-atif-B.json']);
      expect(said(run.trajectories.get('hermes-atif-A.json'))).toEqual(['user:A?', 'agent:A.']);
      expect(said(run.trajectories.get('hermes-atif-B.json'))).toEqual(['user:B?', 'agent:B.']);
      expect(run.problems).toEqual([]);
    });

    it.each(['embedded', 'all'] as const)(
      'keeps each session\'s steps and its own subagent apart in the longer interleaved stream (subagent export mode %s)',
      async (mode) => {
        const lines = readStream(path.join(STREAMS_DIR, streamFileName('interleaved-sessions')));
        const run = await replay(create(), lines, { subagentExportMode: mode });
        for (const [own, other] of [
          ['A', 'B'],
          ['B', 'A'],
        ] as const) {
          const doc = run.trajectories.get(`hermes-atif-session-${own}.json`)!;
          expect(doc.session_id).toBe(`session-${own}`);
          expect(said(doc)!.slice(0, 2)).toEqual([`user:${own}?`, `agent:${own}.`]);
          expect(doc.subagent_trajectories?.map((child) => child.session_id)).toEqual([`helper-${own}`]);
          expect(said(doc.subagent_trajectories?.[0])).toEqual([`user:helper-${own}?`, `agent:helper-${own}.`]);
          const text = JSON.stringify(doc);
          for (const foreign of [`${other}?`, `${other}.`, `helper-${other}`, `session-${other}`, `${other}-turn`]) {
            expect(text, `${own} mentions ${foreign}`).not.toContain(foreign);
          }
          if (mode === 'all') {
            const helper = run.trajectories.get(`hermes-atif-helper-${own}.json`);
            expect(said(helper)).toEqual([`user:helper-${own}?`, `agent:helper-${own}.`]);
          }
        }
      },
    );
  });
});

const contrast = nativeAvailable && nativeLib !== undefined;
describe.skipIf(!contrast)(
  contrast ? 'what native\'s own AtifExporter would have written' : `native contrast skipped: native backend cannot load here (${nativeLoadError})`,
  () => {
    it('puts all four steps into both sessions\' trajectories, which is why the adapter builds them per session', async () => {
      const lib = nativeLib!;
      const exporters = ['A', 'B'].map((sessionId) => {
        const exporter = new lib.AtifExporter(sessionId, 'Hermes Agent', 'unknown', 'gpt-4o');
        exporter.register(`interleaved-contrast-${sessionId}`);
        return { sessionId, exporter };
      });
      let run: Awaited<ReturnType<typeof replay>>;
      try {
        run = await replay(loadNativeRelay({ logger: silentLogger }), fourSteps());
        await lib.flushSubscribers();
      } finally {
        for (const { sessionId, exporter } of exporters) exporter.deregister(`interleaved-contrast-${sessionId}`);
      }
      for (const { sessionId, exporter } of exporters) {
        const global = parseValidAtif(exporter.exportJson(), `native global AtifExporter for ${sessionId}`);
        expect(global.session_id).toBe(sessionId);
        expect(said(global)!.sort()).toEqual(['agent:A.', 'agent:B.', 'user:A?', 'user:B?']);
      }
      // The same run, through the adapter's per-session exporters: two steps each.
      expect(said(run.trajectories.get('hermes-atif-A.json'))).toEqual(['user:A?', 'agent:A.']);
      expect(said(run.trajectories.get('hermes-atif-B.json'))).toEqual(['user:B?', 'agent:B.']);
    });
  },
);
