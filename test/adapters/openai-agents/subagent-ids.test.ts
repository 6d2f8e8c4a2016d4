// Every sub-agent run has an id of its own (`subagent_start.child_subagent_id`, the `subagent_id` of its scope), tracing
// on or off. With tracing on, a run started inside a traced run joins that run's trace: an id read from the trace named
// every sibling sub-agent, and the parent's own session, alike, while with tracing off each had its own. Two programs,
// each with two sibling sub-agents from one model response: agents used as tools (`agent.asTool()`), and `run()` inside
// a function tool. Each runs with tracing on and off, and the two recordings must say the same.
import { describe, expect, it } from 'vitest';
import { Agent, run, tool } from '@openai/agents';
import * as z from 'zod';
import { expectNothingLost, recordedPlugin, viewLines, type AtifDoc, type AtofEvent, type Recorded } from '../support.ts';
import { expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, type Tracing, TRACING, useTracing } from './support.ts';
import { FakeOpenAI, useAsDefaultClient, type Scripted } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

const instrument = instrumentEachTest();

interface Program {
  script: Record<string, Scripted[]>;
  /** The tool the parent model calls twice, and what each call asks. */
  tool: string;
  calls: Record<string, string>;
  /** The agent each call's sub-agent runs. */
  role: Record<string, string>;
  run(): Promise<unknown>;
}

const usage = { input: 40, output: 6 };

const PROGRAMS: Record<string, Program> = {
  'two agents as tools called in one step': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_es', name: 'translate_to_spanish', args: { input: 'Thank you' } }, { id: 'call_fr', name: 'translate_to_french', args: { input: 'Thank you' } }], usage },
        { text: 'Gracias. Merci.', usage },
      ],
      // One model each: whichever sub-agent asks first, each gets its own answer.
      'gpt-4.1-nano': [{ text: 'Gracias', usage }],
      'gpt-4.1-mini': [{ text: 'Merci', usage }],
    },
    tool: 'translate_to_',
    calls: { call_es: '{"input":"Thank you"}', call_fr: '{"input":"Thank you"}' },
    role: { call_es: 'spanish_agent', call_fr: 'french_agent' },
    run() {
      const spanish = new Agent({ name: 'spanish_agent', instructions: 'Translate to Spanish.', model: 'gpt-4.1-nano' });
      const french = new Agent({ name: 'french_agent', instructions: 'Translate to French.', model: 'gpt-4.1-mini' });
      const orchestrator = new Agent({
        name: 'orchestrator_agent',
        instructions: 'Translate.',
        model: 'gpt-4.1',
        tools: [spanish.asTool({ toolName: 'translate_to_spanish', toolDescription: 'Translate to Spanish' }), french.asTool({ toolName: 'translate_to_french', toolDescription: 'Translate to French' })],
      });
      return run(orchestrator, 'Say thank you in Spanish and French.');
    },
  },
  'run() inside a tool called twice in one step': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_e1', name: 'ask_expert', args: { q: 'Alpha' } }, { id: 'call_e2', name: 'ask_expert', args: { q: 'Beta' } }], usage },
        { text: 'Both answered.', usage },
      ],
      'gpt-4.1-mini': [{ text: 'An expert answer', usage }, { text: 'An expert answer', usage }],
    },
    tool: 'ask_expert',
    calls: { call_e1: '{"q":"Alpha"}', call_e2: '{"q":"Beta"}' },
    role: { call_e1: 'Expert', call_e2: 'Expert' },
    run() {
      const expert = new Agent({ name: 'Expert', instructions: 'You are an expert.', model: 'gpt-4.1-mini' });
      const askExpert = tool({ name: 'ask_expert', description: 'Ask an expert', parameters: z.object({ q: z.string() }), execute: async ({ q }) => (await run(expert, q)).finalOutput ?? '' });
      const boss = new Agent({ name: 'Boss', instructions: 'Ask the experts.', model: 'gpt-4.1', tools: [askExpert] });
      return run(boss, 'Ask the experts.');
    },
  },
};

/** Ids as their order of first appearance: a session id is a trace id with tracing on and a uuid with tracing off. */
function comparableIds(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value).replace(/trace_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (id) => {
    if (!ids.has(id)) ids.set(id, `<id${ids.size}>`);
    return ids.get(id)!;
  });
  return JSON.parse(text);
}

/** Who is who in one recording, checked as it is read: each sub-agent's id, session, scope, trajectory and `view` row. */
async function identities(program: Program, recorded: Recorded, atif: AtifDoc[], atof: AtofEvent[]) {
  const doc = onlyTrajectory(atif);
  const parent = doc.session_id as string;
  const starts = hooks(recorded, 'subagent_start').sort((a, b) => a.tool_call_id.localeCompare(b.tool_call_id));
  const callIds = Object.keys(program.calls);
  expect(starts.map((start) => [start.tool_call_id, start.child_role, start.parent_session_id, start.child_session_id])).toEqual(callIds.map((id) => [id, program.role[id], parent, `${parent}:sub:${id}`]));
  const subagentIds = starts.map((start) => start.child_subagent_id as string);
  expect(new Set(subagentIds).size, 'each sub-agent run has an id of its own').toBe(callIds.length);
  const sessions = new Set([parent, ...starts.map((start) => start.child_session_id as string)]);
  for (const id of subagentIds) expect(sessions.has(id), `${id} names no session`).toBe(false);

  // The child scopes carry the same id (native keys a sub-agent's requests by it).
  const scopes = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'start' && event.metadata?.nemo_relay_scope_role === 'subagent');
  const scopeIds = Object.fromEntries(scopes.map((event) => [event.metadata.parent_tool_call_id, event.metadata.subagent_id]));
  expect(callIds.map((id) => scopeIds[id])).toEqual(subagentIds);

  // Each call's observation refers to its own sub-agent's embedded trajectory.
  const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
  const trajectories = callIds.map((id) => {
    const ref = observation(doc, id)?.subagent_trajectory_ref?.[0];
    const child = children.find((candidate) => candidate.trajectory_id === ref?.trajectory_id);
    expect(child?.session_id, `the trajectory ${id} refers to`).toBe(`${parent}:sub:${id}`);
    expect(child?.agent.name).toBe(program.role[id]);
    return { call: id, trajectory_id: child?.trajectory_id, agent: child?.agent.name };
  });
  expect(children).toHaveLength(callIds.length);

  // `view` shows each sub-agent right under the call that ran it.
  const lines = await viewLines(recorded, 'atif');
  for (const id of callIds) {
    const at = lines.findIndex((line) => line.includes(`tool ${program.tool}`) && line.includes(program.calls[id]!) && lines[lines.indexOf(line) + 1]?.includes(`subagent ${parent}:sub:${id}`));
    expect(at, `view: the sub-agent of ${id} under its call`).toBeGreaterThanOrEqual(0);
  }

  return {
    starts: starts.map((start) => ({ tool_call_id: start.tool_call_id, parent_session_id: start.parent_session_id, child_session_id: start.child_session_id, child_subagent_id: start.child_subagent_id, child_role: start.child_role, child_goal: start.child_goal })),
    scopes: callIds.map((id) => scopeIds[id]),
    trajectories,
  };
}

describe('OpenAI Agents SDK: sibling sub-agents each have an id of their own, tracing on or off', () => {
  for (const [label, program] of Object.entries(PROGRAMS)) {
    it(`${label}: the recordings with tracing on and off agree`, async () => {
      const recordings: Partial<Record<Tracing, unknown>> = {};
      for (const tracing of TRACING) {
        useTracing(tracing);
        api.load(program.script);
        const recorded = recordedPlugin('agents-subagent-ids');
        instrument(recorded.hooks);
        await program.run();
        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        recordings[tracing] = comparableIds(await identities(program, recorded, atif, atof));
      }
      expect(recordings['tracing on']).toEqual(recordings['tracing off']);
    }, 60_000);
  }
});
