// Background sub-agents (`run_in_background: true`, the CLI's default) with
// `forwardSubagentText: true`, on the real SDK and its bundled CLI against a
// loopback Anthropic Messages API. A background agent's Agent call returns
// as it starts (`async_launched`, no usage); the CLI forwards the agent's
// text and thinking as messages with `parent_tool_use_id`, with the
// provisional usage of each reply's first event (`output_tokens: 1`), then
// says the agent ended (`task_updated`, then `task_notification`, whose
// `usage.total_tokens` is its last reply's prompt and output tokens
// together), then starts a turn of its own to tell the main agent.
//
// 1. No transcript (`persistSession: false`): the final answer's step has
//    the forwarded id, thinking and text, and the API's output tokens (the
//    notification's total less the reply's prompt tokens), not the
//    provisional 1; the agent ends completed, in the turn of the prompt.
// 2. With a transcript: each reply once (the forwarded messages are not
//    counted beside the transcript's records), with the API's usage.
// 3. Two background agents at once, no transcript, their messages
//    interleaved in the stream: each answer in its own session, with its own
//    notification's tokens.
//
// Slow (each query spawns the CLI): npx vitest run --config vitest.slow.config.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { offlineApi as offlineApiOf, tokensByModel } from '../support/claude-checks.ts';

const MAIN = 'claude-main';
const SUB = 'claude-sub';
const dated = (model: string): string => `${model}-2026-01-01`;
const askedFor = (answered: string): string => answered.replace(/-2026-01-01$/, '');
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** The final answer's usage as the API sends it: 15 input, 4 cache reads, 8 output. */
const FINAL_USAGE = { input: 15, output: 8, cacheRead: 4 };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

type Topic = 'paris' | 'lyon';
const thought = (topic: Topic): string => `The ${topic} notes name the founders.`;
const answer = (topic: Topic): string => (topic === 'paris' ? 'Founded by the Parisii.' : 'Founded as Lugdunum.');

/**
 * The loopback API: the main agent sends a researcher per topic to the background, says it started them, and answers
 * the CLI's notification; each researcher reads its file, then answers with thinking and text. With `interleave`, the
 * first final answer to be asked for pauses after its thinking until the other's thinking is sent.
 */
async function program(topics: Topic[], persistSession: boolean, interleave = false) {
  let home = '';
  let secondThinkingSent: () => void = () => {};
  const secondThinking = new Promise<void>((resolve) => (secondThinkingSent = resolve));
  let finals = 0;
  const { mock, env, home: dir } = await offlineApiOf((request: MockRequest): MockReply => {
    if (request.system.includes('You are the researcher')) {
      const topic: Topic = JSON.stringify(request.body.messages[0]).includes('Lyon') ? 'lyon' : 'paris';
      if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: `toolu_read_${topic}`, name: 'Read', input: { file_path: path.join(home, `${topic}.txt`) } }], usage: { input: 7, output: 3 }, model: dated(SUB) };
      finals++;
      const hold = !interleave ? undefined : finals === 1 ? { afterBlock: 0, until: () => secondThinking } : { afterBlock: 0, until: async () => secondThinkingSent() };
      return { blocks: [{ type: 'thinking', thinking: thought(topic) }, { type: 'text', text: answer(topic) }], usage: FINAL_USAGE, model: dated(SUB), id: `msg_final_${topic}`, ...(hold === undefined ? {} : { hold }) };
    }
    if (request.assistantTurns === 0) {
      const agentCall = (topic: Topic) => ({ type: 'tool_use' as const, id: `toolu_agent_${topic}`, name: 'Agent', input: { description: `research ${topic}`, prompt: `Find how ${topic === 'paris' ? 'Paris' : 'Lyon'} was founded.`, subagent_type: 'researcher', run_in_background: true } });
      return { blocks: topics.map(agentCall), usage: { input: 30, output: 6 }, model: dated(MAIN) };
    }
    const notified = JSON.stringify(request.body.messages.at(-1)).includes('task-notification');
    return { blocks: [{ type: 'text', text: notified ? 'The researchers answered.' : 'The researchers are on it.' }], usage: { input: 40 + request.assistantTurns, output: 5 }, model: dated(MAIN) };
  }, cleanups);
  home = dir;
  writeFileSync(path.join(home, 'paris.txt'), 'Paris: the Parisii.\n');
  writeFileSync(path.join(home, 'lyon.txt'), 'Lyon: Lugdunum.\n');
  const recorded = recordedPlugin(`claude-background-forwarded-${topics.join('-')}-${persistSession ? 'transcript' : 'none'}`);
  const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: quiet });
  const messages: any[] = [];
  for await (const message of claude.query({
    prompt: 'How were Paris and Lyon founded?',
    options: {
      model: MAIN,
      cwd: home,
      env,
      settingSources: [],
      allowedTools: ['Read', 'Agent'],
      thinking: { type: 'enabled', budgetTokens: 2000 },
      forwardSubagentText: true,
      persistSession,
      agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: SUB } },
    },
  })) {
    messages.push(message);
  }
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(atif).toHaveLength(1);
  const doc = atif[0]!;
  expect(validateAtif(doc)).toEqual([]);
  return { recorded, messages, mock, doc };
}

/** The sub-agent sessions of a trajectory, by the Agent call that started each. */
function subagents(doc: AtifDoc): Map<string, AtifDoc> {
  return new Map(((doc.subagent_trajectories ?? []) as AtifDoc[]).map((sub) => [String(sub.session_id).replace(/^.*:sub:/, ''), sub]));
}

function agentSteps(doc: AtifDoc): AtifDoc[] {
  return (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
}

/** What the program got of one background agent: its call's result, its forwarded final answer, its notification. */
function streamed(messages: any[], topic: Topic) {
  const call = `toolu_agent_${topic}`;
  const launched = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === null && m.message.content.some((b: any) => b.tool_use_id === call)).tool_use_result;
  const forwarded = messages.filter((m) => m.type === 'assistant' && m.parent_tool_use_id === call && m.message.id === `msg_final_${topic}`);
  const notification = messages.find((m) => m.type === 'system' && m.subtype === 'task_notification' && m.tool_use_id === call);
  return { launched, forwarded, notification };
}

/** One background agent's session holds its two replies: the Read call, then the final answer with its thinking. */
function expectReplies(doc: AtifDoc, topic: Topic, recorded: Awaited<ReturnType<typeof program>>['recorded']) {
  const sub = subagents(doc).get(`toolu_agent_${topic}`)!;
  const steps = agentSteps(sub);
  expect(steps.map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), step.reasoning_content])).toEqual([
    [dated(SUB), '', [`toolu_read_${topic}`], undefined],
    [dated(SUB), answer(topic), [], thought(topic)],
  ]);
  // The final answer's tokens are the API's: 15 + 4 prompt (4 cached), 8 output.
  expect([steps[1]!.metrics?.prompt_tokens, steps[1]!.metrics?.cached_tokens, steps[1]!.metrics?.completion_tokens]).toEqual([19, 4, 8]);
  const answers = recorded.log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === sub.session_id).map((entry) => entry.payload as { response: { id?: string } });
  expect(answers.at(-1)!.response.id).toBe(`msg_final_${topic}`);
  const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === sub.session_id).map((entry) => [entry.payload.completed, entry.payload.interrupted]);
  expect(ends, 'the agent ends once, completed').toEqual([[true, false]]);
  return steps;
}

/**
 * The CLI's notification turns belong to the prompt's turn: one turn, with every request the main agent sent (two
 * notifications may be told in one request or in two, as the CLI's timing falls) and the agents started from it.
 */
function expectOneTurn({ recorded, doc, mock }: Awaited<ReturnType<typeof program>>, topics: Topic[]) {
  const mainEnds = recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id);
  expect(mainEnds.map((entry) => entry.payload.completed)).toEqual([true]);
  const turn = mainEnds[0]!.payload.turn_id;
  const mainRequests = recorded.log.filter((entry) => entry.hook === 'pre_api_request' && entry.payload.session_id === doc.session_id);
  expect(mainRequests).toHaveLength(mock.requests.filter((request) => !request.system.includes('You are the researcher')).length);
  expect(mainRequests.every((entry) => String(entry.payload.api_request_id).startsWith(`${String(turn)}:`))).toBe(true);
  const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop').map((entry) => [entry.payload.tool_call_id, entry.payload.parent_turn_id, entry.payload.child_status]);
  expect(stops.sort()).toEqual(topics.map((topic) => [`toolu_agent_${topic}`, turn, 'completed']).sort());
}

describe('wrapClaudeAgentSdk: a background sub-agent whose text the CLI forwards (forwardSubagentText)', () => {
  it("without a transcript: its final answer has the forwarded id, thinking and text, and the API's output tokens from its notification", async () => {
    const run = await program(['paris'], false);
    const { recorded, messages, mock, doc } = run;
    // What the program got: the call answered as it started (no usage); the final answer forwarded with provisional
    // usage and no stop reason; the notification's total is the answer's prompt and output tokens together.
    const { launched, forwarded, notification } = streamed(messages, 'paris');
    expect([launched.status, launched.usage]).toEqual(['async_launched', undefined]);
    expect(forwarded.map((m) => [m.message.content[0].type, m.message.usage.output_tokens, m.message.stop_reason])).toEqual([['thinking', 1, null], ['text', 1, null]]);
    expect([notification.status, notification.summary, notification.usage.total_tokens]).toEqual(['completed', answer('paris'), 15 + 4 + 8]);
    expect(messages.filter((m) => m.type === 'result').length, 'the notification turn has its own result').toBe(2);
    expect(mock.requests.map((request) => request.model)).toEqual([MAIN, SUB, MAIN, SUB, MAIN]);

    expectReplies(doc, 'paris', recorded);
    expectOneTurn(run, ['paris']);
    // Tokens per model as modelUsage counts them: the Read step's output is the stream's provisional one (no transcript,
    // no result reports it), the rest stated at the turn's end.
    const byModel = messages.at(-1).modelUsage[SUB];
    expect([byModel.inputTokens + byModel.cacheReadInputTokens, byModel.outputTokens]).toEqual([7 + 19, 3 + 8]);
    const unattributed = recorded.log.find((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === doc.session_id)!.payload.unattributed_usage as Record<string, any>;
    expect(unattributed[SUB].output_tokens, 'only the Read step\'s provisional shortfall').toBe(3 - 1);
    const { held, reported } = tokensByModel([doc], recorded.log, messages, askedFor);
    expect(held).toEqual(reported);
    await sameOnNative(recorded);
  }, 180_000);

  it('with a transcript: each reply once, with the API\'s usage, though the stream forwarded them too', async () => {
    const run = await program(['paris'], true);
    const { recorded, messages, doc } = run;
    const { forwarded } = streamed(messages, 'paris');
    expect(forwarded.map((m) => m.message.content[0].type)).toEqual(['thinking', 'text']);
    const steps = expectReplies(doc, 'paris', recorded);
    expect(steps.map((step) => [step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual([[7, 3], [19, 8]]);
    const sub = subagents(doc).get('toolu_agent_paris')!;
    const finishes = recorded.log.filter((entry) => entry.hook === 'post_api_request' && entry.payload.session_id === sub.session_id).map((entry) => entry.payload.finish_reason);
    expect(finishes).toEqual(['tool_calls', 'stop']);
    expectOneTurn(run, ['paris']);
    // Every token a step: no turn states any of the sub-agent's beside them.
    expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.unattributed_usage)).toEqual([undefined, undefined]);
    const { held, reported } = tokensByModel([doc], recorded.log, messages, askedFor);
    expect(held).toEqual(reported);
    expect(reported[SUB]).toEqual([7 + 19, 3 + 8]);
    await sameOnNative(recorded);
  }, 180_000);

  it('two at once without a transcript, their replies interleaved in the stream: each answer in its own session', async () => {
    const run = await program(['paris', 'lyon'], false, true);
    const { recorded, messages, doc } = run;
    // What the program got: the agents' messages interleaved (the first final answer asked for was held until the
    // other's was under way, so the other's messages come between the first's call and its answer).
    const order = messages.filter((m) => (m.type === 'assistant' || m.type === 'user') && m.parent_tool_use_id !== null).map((m) => `${m.parent_tool_use_id.replace('toolu_agent_', '')}:${m.message.content.map((b: any) => b.type).join('+')}`);
    console.log(`the sub-agents' messages, in stream order: ${order.join(', ')}`);
    const switches = order.filter((entry, index) => index > 0 && entry.split(':')[0] !== order[index - 1]!.split(':')[0]).length;
    expect(switches, 'neither agent\'s messages come all together').toBeGreaterThanOrEqual(2);
    const finals = messages.filter((m) => m.type === 'assistant' && String(m.message.id).startsWith('msg_final_')).map((m) => `${m.parent_tool_use_id}:${m.message.content[0].type}`);
    expect(finals).toHaveLength(4);
    for (const topic of ['paris', 'lyon'] as const) {
      const { notification } = streamed(messages, topic);
      expect([notification.status, notification.summary, notification.usage.total_tokens]).toEqual(['completed', answer(topic), 15 + 4 + 8]);
      expectReplies(doc, topic, recorded);
    }
    expect([...subagents(doc).keys()].sort()).toEqual(['toolu_agent_lyon', 'toolu_agent_paris']);
    expectOneTurn(run, ['paris', 'lyon']);
    const { held, reported } = tokensByModel([doc], recorded.log, messages, askedFor);
    expect(held).toEqual(reported);
    // Two sub-agents open at once: the backends differ only in propagation_root_uuid (docs/backends/memory-and-native.md).
    await sameOnNative(recorded, true);
  }, 180_000);
});
