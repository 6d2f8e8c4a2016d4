// A recorded run replays to the run's own files: the AI SDK and LangChain
// programs of the timing tests (test/adapters/timing-programs.ts), with the
// plugin writing ATOF and ATIF and a createHookRecorder on the same registry
// (docs/hosts/recording.md), then `replay` of the recording into another
// folder (docs/cli/replay.md, "Times"). The replay's files must say what the
// live run's say: the same events in the same order, the same trajectory,
// each time within a few ms of the live one (never equal: the recorder and
// the plugin each read the clock), and checkTimes passing on them against
// the same exchanges. On the memory backend, and native where it loads (the
// replay on the same backend).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookRecorder, type HookRecorder } from '../../src/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import { cliInProcess, tempDir } from '../cli/support.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc, type AtofEvent } from './support.ts';
import { checkTimes } from './timing-checks.ts';
import { aiSdkProgram, langchainProgram, type ProgramSetup, type ProgramRun } from './timing-programs.ts';

/**
 * How far a replayed time may sit from the live one. The recorder and the plugin read the clock one after the other
 * for each hook, so the two readings are usually well under a millisecond apart (MEDIAN_MS bounds the typical one);
 * a pause between them (a GC, the process descheduled on a loaded machine: 322 ms was seen with five suites running)
 * shows as more, so each one alone is held only to SKEW_MS. That the replay takes its times from the recording is
 * checked exactly, apart from this: each replayed ATOF time is one the recording holds.
 */
const SKEW_MS = 1000;
const MEDIAN_MS = 2;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Keys whose values are times: compared within SKEW_MS, apart from the rest. */
const TIME_KEYS = new Set(['timestamp', 'start_timestamp', 'end_timestamp']);

/**
 * `value` with every uuid replaced by its position among the uuids met (so
 * parent links are compared by position, not value) and every time taken
 * out into `times` (as Unix ms), in document order.
 */
function masked(value: unknown, times: number[], uuids = new Map<string, string>()): unknown {
  if (typeof value === 'string' && UUID.test(value)) {
    if (!uuids.has(value)) uuids.set(value, `<uuid ${uuids.size}>`);
    return uuids.get(value);
  }
  if (Array.isArray(value)) return value.map((item) => masked(item, times, uuids));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (TIME_KEYS.has(key)) {
        // ATOF writes RFC 3339 strings; ATIF's invocations write epoch seconds.
        times.push(typeof item === 'number' ? item * 1000 : parseTimestamp(item) / 1000);
        out[key] = '<time>';
      } else {
        out[key] = masked(item, times, uuids);
      }
    }
    return out;
  }
  return value;
}

/** The two lists of times agree one by one: each within SKEW_MS, and the typical one within MEDIAN_MS. */
function expectTimesClose(replayed: number[], live: number[], what: string): void {
  expect(replayed.length, `${what}: as many times`).toBe(live.length);
  const gaps = replayed.map((time, index) => Math.abs(time - live[index]!));
  const off = gaps.map((gap, index) => [index, gap] as const).filter(([, gap]) => !(gap <= SKEW_MS));
  expect(off, `${what}: each time within ${SKEW_MS} ms of the live one ([index, gap])`).toEqual([]);
  const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
  expect(median, `${what}: the median gap`).toBeLessThanOrEqual(MEDIAN_MS);
}

function readFolder(dir: string): { atof: AtofEvent[]; atif: AtifDoc[]; files: string[] } {
  const list = (sub: string) => readdirSync(path.join(dir, sub)).sort();
  const atof = list('atof').flatMap((file) =>
    readFileSync(path.join(dir, 'atof', file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AtofEvent),
  );
  const atif = list('atif').map((file) => JSON.parse(readFileSync(path.join(dir, 'atif', file), 'utf8')) as AtifDoc);
  return { atof, atif, files: [...list('atof').map((f) => `atof/${f}`), ...list('atif').map((f) => `atif/${f}`)] };
}

let api = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>>;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(async () => {
  await server.close();
});

const programs: Array<[string, (setup: ProgramSetup) => Promise<ProgramRun>]> = [
  ['AI SDK', aiSdkProgram],
  ['LangChain', langchainProgram],
];

describe('a recorded run replays to the run’s own files, at the run’s times', () => {
  for (const backend of backends()) {
    for (const [framework, program] of programs) {
      for (const streamed of [false, true]) {
        it(`${framework} ${streamed ? 'streamed' : 'whole'} on ${backend}`, async () => {
          api = new FakeProvider();
          server.exchanges.length = 0;
          const label = `replay-${framework === 'AI SDK' ? 'ai' : 'lc'}-${streamed ? 'stream' : 'whole'}`;
          // The recorder subscribes before the plugin, as a host that records everything attaches it first: each
          // line is stamped when the hook was emitted, not once the plugin had handled it.
          let recorder!: HookRecorder;
          const recorded = recordedPlugin(label, backend, {}, (hooks, dir) => void (recorder = createHookRecorder(hooks, path.join(dir, 'run.hooks.jsonl'))));
          const recording = recorder.path;
          const run = await program({ hooks: recorded.hooks, api, serverUrl: server.url, streamed });
          recorder.close();
          expect(recorder.errors).toBe(0);
          const { counters } = await recorded.finish();
          expectNothingLost(counters);
          const live = readFolder(recorded.dir);
          expect(live.atif).toHaveLength(1);
          const times = { ...run, exchanges: server.exchanges };
          checkTimes(live.atof, live.atif[0]!, times);

          const out = tempDir(`nrh-${label}-replayed-`);
          const replay = await cliInProcess(['replay', recording, '--out', out, '--backend', backend, '--json']);
          expect(replay.stderr).toBe('');
          expect(replay.code).toBe(0);
          const replayed = readFolder(out);
          expect(replayed.files).toEqual(['atof/run-atof.jsonl', `atif/run-atif-${live.atif[0]!.session_id}.json`]);
          expect(validateAtif(replayed.atif[0]!)).toEqual([]);

          // Who the agent is: the live plugin names it after the host (this package's package.json) where the
          // session reports no name or version; the recording holds only hooks, so the replay names it as
          // docs/cli/replay.md says (the session's report, else "agent" and "unknown"). That alone may differ.
          const start = readFileSync(recording, 'utf8').split('\n').map((line) => (line === '' ? undefined : JSON.parse(line))).find((line) => line?.hook === 'on_session_start');
          const identity = { name: start.payload.agent_name ?? 'agent', version: start.payload.agent_version ?? 'unknown' };
          expect(replayed.atif[0]!.agent).toMatchObject(identity);
          const replayedScope = `${identity.name}-session-user-42`;
          expect(replayed.atof.filter((event) => event.category === 'agent').map((event) => event.name)).toEqual([replayedScope, replayedScope]);
          // The session's scope is named after the agent wherever it is named (ATOF, each step's ancestry).
          const liveScope = JSON.stringify(live.atof.find((event) => event.category === 'agent')!.name);
          const renamed = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll(JSON.stringify(replayedScope), liveScope)) as T;
          replayed.atof = renamed(replayed.atof);
          replayed.atif[0] = { ...renamed(replayed.atif[0]!), agent: { ...replayed.atif[0]!.agent, name: live.atif[0]!.agent.name, version: live.atif[0]!.agent.version } };
          // ATOF: every event as the live run wrote it, in its order; uuids and parent links by position.
          const liveTimes: number[] = [];
          const replayedTimes: number[] = [];
          expect(masked(replayed.atof, replayedTimes)).toEqual(masked(live.atof, liveTimes));
          expectTimesClose(replayedTimes, liveTimes, 'ATOF');
          // Each replayed time is one the recorder wrote, to the microsecond: none was read at replay.
          const recordedTimes = new Set(readFileSync(recording, 'utf8').split('\n').filter((line) => line !== '').map((line) => parseTimestamp((JSON.parse(line) as { timestamp: string }).timestamp)));
          expect(replayed.atof.filter((event) => !recordedTimes.has(parseTimestamp(event.timestamp))).map((event) => [event.name, event.scope_category, event.timestamp])).toEqual([]);
          // ATIF: the same trajectory, ids and times aside.
          const liveDocTimes: number[] = [];
          const replayedDocTimes: number[] = [];
          expect(masked(replayed.atif[0], replayedDocTimes)).toEqual(masked(live.atif[0], liveDocTimes));
          expectTimesClose(replayedDocTimes, liveDocTimes, 'ATIF');
          // And what the times say holds of the replay too, against the same exchanges and tool run.
          checkTimes(replayed.atof, replayed.atif[0]!, times);
        }, 60_000);
      }
    }
  }
});
