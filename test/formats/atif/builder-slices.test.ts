/**
 * `AtifBuilder.toJsonInSlices`: the trajectory's text built a slice at a
 * time (the memory relay's plugins.toml trajectories are, so that a long
 * session's end does not stop the host) is byte for byte the text of the
 * whole document written in one go, for both styles, with payloads that
 * take the exact writer's every path (integer-like keys, numbers native
 * writes differently, unsorted keys, text outside ASCII).
 */

import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { AtifBuilder, type AtifBuilderOptions } from '../../../src/formats/atif/builder.ts';
import { serializeTrajectory } from '../../../src/formats/atif/serialize.ts';
import type { AtofEvent } from '../../../src/formats/atof/types.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { SLICE_UNITS } from '../../../src/shared/slices.ts';

/** A session of `turns` model calls with a tool call each, recorded by the memory relay; its events. */
function recordedSession(turns: number): { root: string; events: AtofEvent[] } {
  const relay = createMemoryRelay({ logger: silentLogger });
  const events: AtofEvent[] = [];
  relay.subscribe((event) => {
    events.push(event);
  });
  let clock = 1_800_000_000_000_000;
  const ts = () => (clock += 7);
  const root = relay.pushScope({ name: 'agent', category: 'agent', metadata: { session_id: 'logical', user_id: 'u' }, timestampUs: ts() });
  for (let i = 0; i < turns; i++) {
    const llm = relay.llmStart({
      name: 'openai',
      parent: root,
      request: { headers: {}, content: { model: 'm', messages: [{ role: 'user', content: `ask ${i} — ünïcödé 🙂` }], zeta: 1, alpha: { '10': 'ten', '2': 'two', b: 1e-6 } } },
      modelName: 'm',
      timestampUs: ts(),
    });
    relay.llmEnd(llm, {
      response: {
        choices: [{ message: { role: 'assistant', content: i % 3 === 0 ? `answer ${i}` : null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'ls', arguments: `{"path":"/w/${i}","depth":1.0,"big":12345678901234567890}` } }] } }],
        usage: { prompt_tokens: 2 ** 33, completion_tokens: 2, cost: 0.5 },
      },
      timestampUs: ts(),
    });
    const tool = relay.toolStart({ name: 'ls', parent: root, args: { path: `/w/${i}`, '7': [1, 2.5, -0] }, toolCallId: `c${i}`, timestampUs: ts() });
    relay.toolEnd(tool, { result: { entries: i, ratio: 4294967296.5 }, timestampUs: ts() });
  }
  relay.popScope(root, { timestampUs: ts() });
  return { root: (root as unknown as { uuid: string }).uuid, events };
}

function builderOf(events: AtofEvent[], options: AtifBuilderOptions): AtifBuilder {
  const builder = new AtifBuilder(options);
  for (const event of events) builder.add(event);
  return builder;
}

/** Runs the sliced build to its end; its text and how many slices it took. */
function sliced(builder: AtifBuilder): { text: string; slices: number } {
  const work = builder.toJsonInSlices();
  let slices = 1;
  let step = work.next();
  while (step.done !== true) {
    slices++;
    step = work.next();
  }
  return { text: step.value, slices };
}

/** Equal texts; on a difference, the neighbourhood of the first one (a diff of two megabytes would take minutes). */
function expectSameText(actual: string, expected: string): void {
  if (actual === expected) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  expect({ at, actual: actual.slice(Math.max(0, at - 80), at + 80) }).toEqual({ at, expected: expected.slice(Math.max(0, at - 80), at + 80) });
}

describe('AtifBuilder.toJsonInSlices', () => {
  const { root, events } = recordedSession(300);

  it('writes the plugin-host document as one serialization of the whole document does, in many slices', () => {
    const options: AtifBuilderOptions = { rootUuid: root, agentName: 'probe', agentVersion: '1', modelName: 'm', style: 'plugin-host', extra: { '2': 1, a: 2.0 } };
    const whole = serializeTrajectory(builderOf(events, options).build(), 'plugin-host');
    const { text, slices } = sliced(builderOf(events, options));
    expectSameText(text, whole);
    // Reading, converting and writing the observed events each take slices of SLICE_UNITS events.
    expect(slices).toBeGreaterThanOrEqual(Math.floor((3 * events.length) / SLICE_UNITS));
    expect(JSON.parse(text).extra.observed_events).toHaveLength(events.length);
  });

  it('gives the same text as toJson() for the exporter style', () => {
    const options: AtifBuilderOptions = { sessionId: 's', agentName: 'probe', agentVersion: '1', style: 'exporter' };
    expectSameText(sliced(builderOf(events, options)).text, builderOf(events, options).toJson());
    expectSameText(sliced(builderOf(events, options)).text, serializeTrajectory(builderOf(events, options).build(), 'exporter'));
  });

  it('gives the same text for a session shorter than a slice, and for one without events', () => {
    const short = recordedSession(2);
    const options: AtifBuilderOptions = { rootUuid: short.root, agentName: 'probe', agentVersion: '1', modelName: 'm', style: 'plugin-host' };
    expectSameText(sliced(builderOf(short.events, options)).text, serializeTrajectory(builderOf(short.events, options).build(), 'plugin-host'));
    expectSameText(sliced(builderOf([], options)).text, serializeTrajectory(builderOf([], options).build(), 'plugin-host'));
  });
});
