// A builder asked for its trajectory again and again while events arrive
// (a session's partial writes, then the final one) keeps what it already
// worked out between builds. This proves it writes, at every step, exactly
// what a fresh builder over the same events writes: every recorded stream
// of the corpus (replayed through the memory relay), the ATOF fixtures, the
// upstream example streams when ../shared/peers is there, and each of them
// reordered (events out of timestamp order) and with broken timestamps.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { AtifBuilder, type AtifBuilderOptions } from '../../src/formats/atif/builder.ts';
import { serializeTrajectory } from '../../src/formats/atif/serialize.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { STREAM_NAMES, streamFileName } from '../fixtures/streams/streams.ts';
import { PEERS, peersUnavailable } from '../support/peers.ts';
import { readStream, replay } from './replay.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const STREAMS_DIR = path.resolve(HERE, '../fixtures/streams');
const FORMAT_FIXTURES = path.resolve(HERE, '../formats/fixtures');

const parseLines = (text: string): AtofEvent[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AtofEvent);

/** The root scope a plugin-host file is for: the first agent scope started. */
function rootOf(events: readonly AtofEvent[]): string | undefined {
  return events.find((event) => event.kind === 'scope' && event.category === 'agent' && event.scope_category === 'start')?.uuid;
}

function optionSets(events: readonly AtofEvent[]): AtifBuilderOptions[] {
  const root = rootOf(events);
  return [
    { sessionId: 'sid', agentName: 'agent', agentVersion: '1' },
    { sessionId: root ?? 'sid', agentName: 'agent', agentVersion: '1', modelName: 'm' },
    { rootUuid: root, agentName: 'agent', agentVersion: '1', style: 'plugin-host', extra: { a: 1 } },
  ];
}

/**
 * Feeds `events` one at a time to one builder, asking it for its text (and
 * every few events its document) after each, and compares with a fresh
 * builder given the same events at once. Clears it halfway and starts over,
 * as native's `AtifExporter.clear()` does.
 */
function expectSameAsFresh(events: readonly AtofEvent[], options: AtifBuilderOptions): void {
  const fresh = (count: number, from = 0): AtifBuilder => {
    const builder = new AtifBuilder(options);
    for (let i = from; i < count; i++) builder.add(events[i] as AtofEvent);
    return builder;
  };
  const incremental = new AtifBuilder(options);
  const half = Math.floor(events.length / 2);
  let from = 0;
  for (let i = 0; i < events.length; i++) {
    if (i === half) {
      incremental.clear();
      expect(incremental.toJson()).toBe(serializeTrajectory(fresh(0).build(), options.style ?? 'exporter'));
      from = half;
    }
    incremental.add(events[i] as AtofEvent);
    const expected = fresh(i + 1, from);
    // The reference is the whole-document serializer over a fresh build: no state kept anywhere.
    const text = serializeTrajectory(expected.build(), options.style ?? 'exporter');
    expect([i, incremental.toJson()]).toEqual([i, text]);
    expect(expected.toJson()).toBe(text);
    if (i % 5 === 0 || i === events.length - 1) expect(incremental.build()).toStrictEqual(expected.build());
  }
  // Asked twice with nothing new: the same text.
  expect(incremental.toJson()).toBe(serializeTrajectory(fresh(events.length, from).build(), options.style ?? 'exporter'));
}

/** Variants that take the builder off its common path: events out of timestamp order, and timestamps it cannot read. */
function variants(events: readonly AtofEvent[]): [string, AtofEvent[]][] {
  const late = events.map((event, i) => (i % 7 === 3 && i + 2 < events.length ? events[i + 2] : i % 7 === 5 && i >= 2 ? events[i - 2] : event) as AtofEvent);
  const broken = events.map((event, i) => (i % 6 === 4 ? { ...event, timestamp: 'not a time' } : event));
  return [
    ['as recorded', [...events]],
    ['some events late', late],
    ['reversed', [...events].reverse()],
    ['unreadable timestamps', broken],
  ];
}

describe('AtifBuilder between builds', () => {
  for (const name of STREAM_NAMES) {
    it(`writes what a fresh builder writes at every event: the ${name} stream`, async () => {
      const result = await replay(createMemoryRelay(), readStream(path.join(STREAMS_DIR, streamFileName(name))));
      fs.rmSync(result.dir, { recursive: true, force: true });
      const events = parseLines(result.atofLines.join('\n'));
      expect(events.length).toBeGreaterThan(0);
      for (const [, variant] of variants(events)) for (const options of optionSets(variant)) expectSameAsFresh(variant, options);
    });
  }

  for (const file of ['atof-session.jsonl', 'plugin-atof-events.jsonl']) {
    it(`writes what a fresh builder writes at every event: ${file}`, () => {
      const events = parseLines(fs.readFileSync(path.join(FORMAT_FIXTURES, file), 'utf8'));
      for (const [, variant] of variants(events)) for (const options of optionSets(variant)) expectSameAsFresh(variant, options);
    });
  }

  const peerFiles =
    peersUnavailable === undefined
      ? ['variants', 'nat-reference-converter'].flatMap((dir) =>
          fs
            .readdirSync(path.join(PEERS, dir))
            .filter((file) => file.endsWith('.jsonl'))
            .map((file) => path.join(dir, file)),
        )
      : [];
  if (peersUnavailable !== undefined) console.warn(`skipping the upstream streams of the incremental ATIF test: ${peersUnavailable}`);
  it.skipIf(peersUnavailable !== undefined)('writes what a fresh builder writes at every event: the upstream example streams', () => {
    for (const file of peerFiles) {
      const events = parseLines(fs.readFileSync(path.join(PEERS, file), 'utf8'));
      for (const [, variant] of variants(events)) for (const options of optionSets(variant)) expectSameAsFresh(variant, options);
    }
  });
});
