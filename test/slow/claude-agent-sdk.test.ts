// The Claude Agent SDK adapter on the real SDK and its bundled CLI, offline:
// ANTHROPIC_BASE_URL points at a loopback server speaking the Anthropic
// Messages API (SSE), with non-essential traffic off and a temporary HOME.
// The programs are written the way the SDK's docs write them: an in-process
// MCP server (createSdkMcpServer + tool) with a tool that works and one that
// throws, a built-in tool (Read), a sub-agent from the `agents` option run by
// the Agent tool, a request the API answers 529 once, and the caller's own
// hooks. Each test checks the trajectory against what the program did: the
// requests the mock answered, the SDK's own result messages, the hooks.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`, on
// Node and on Bun (.ci/run).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, llmModels, recordedPlugin, rowWithoutDuration, type AtifDoc, type AtofEvent } from '../adapters/support.ts';
import { cliInProcess } from '../cli/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type AnthropicMock, type MockReply, type MockRequest } from '../support/anthropic-mock.ts';
import { recordedConversation, sentConversation } from '../support/claude-conversation.ts';

const MAIN_MODEL = 'claude-main-2026-01-01';
const SUB_MODEL = 'claude-sub-2026-01-01';
/** The models the program asks for (modelUsage is keyed by these); the API answers with the ones above. */
const ASKED_MAIN = 'claude-main';
const ASKED_SUB = 'claude-sub';
const PROMPT = 'What is the weather in Paris, and where does the city come from?';

interface Scenario {
  /** The first main request is answered 529 once. */
  failFirst?: boolean;
  /** The sub-agent's first request is answered 529 once (seen only for a foreground agent). */
  failSubFirst?: boolean;
  /** The sub-agent's second request (after its Read) is answered 529 once. */
  failSubSecond?: boolean;
  /** The Agent call asks for a foreground run. */
  foreground?: boolean;
}

/** The model's side of the conversation: what each request gets, by who asks and how far its conversation is. */
function script(scenario: Scenario, home: string): (request: MockRequest) => MockReply {
  let failMain = scenario.failFirst === true;
  let failSub = scenario.failSubFirst === true;
  let failSubLater = scenario.failSubSecond === true;
  const overloaded: MockReply = { status: 529, errorType: 'overloaded_error', message: 'Overloaded' };
  return (request) => {
    if (request.system.includes('You are the researcher')) {
      if (failSub) {
        failSub = false;
        return overloaded;
      }
      if (failSubLater && request.assistantTurns === 1) {
        failSubLater = false;
        return overloaded;
      }
      if (request.assistantTurns === 0) {
        return { blocks: [{ type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: { input: 7, output: 3 }, model: SUB_MODEL };
      }
      return { blocks: [{ type: 'text', text: 'Founded in the 3rd century BC by the Parisii.' }], usage: { input: 15, output: 8, cacheRead: 4 }, model: SUB_MODEL };
    }
    if (failMain) {
      failMain = false;
      return overloaded;
    }
    switch (request.assistantTurns) {
      case 0:
        return {
          blocks: [
            { type: 'text', text: 'Let me check the weather.' },
            { type: 'tool_use', id: 'toolu_weather_1', name: 'mcp__weather__get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_broken_1', name: 'mcp__weather__broken', input: { x: 1 } },
          ],
          usage: { input: 10, output: 5, cacheRead: 100 },
          model: MAIN_MODEL,
        };
      case 1:
        return {
          blocks: [{ type: 'tool_use', id: 'toolu_task_1', name: 'Agent', input: { description: 'research Paris', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', ...(scenario.foreground === true ? { run_in_background: false } : {}) } }],
          usage: { input: 30, output: 6, cacheWrite: 20 },
          model: MAIN_MODEL,
        };
      default:
        return { blocks: [{ type: 'text', text: `Paris is sunny, and was founded long ago (answer ${request.assistantTurns}).` }], usage: { input: 50 + request.assistantTurns, output: 12 }, model: MAIN_MODEL };
    }
  };
}

interface Run {
  messages: any[];
  callerHookIds: string[];
  mock: AnthropicMock;
  home: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The program as the SDK's docs write it; `claude` is the SDK module, wrapped or not. */
async function runProgram(claude: typeof sdk, scenario: Scenario, extra: { options?: Record<string, unknown>; env?: Record<string, string>; perMessage?: () => Promise<void>; stopAfter?: (message: any) => boolean } = {}): Promise<Run> {
  let answer: ((request: MockRequest) => MockReply) | undefined;
  const mock = await startAnthropicMock((request) => answer!(request));
  const offline = offlineClaudeEnv(mock.url, extra.env);
  const home = offline.home;
  // One script per run, so its 529-once state is the run's.
  answer = script(scenario, home);
  cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
  writeFileSync(path.join(home, 'notes.txt'), 'Paris was founded in the 3rd century BC by the Parisii.\n');
  const weather = sdk.createSdkMcpServer({
    name: 'weather',
    version: '1.0.0',
    tools: [
      sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => ({ content: [{ type: 'text', text: JSON.stringify({ city, sky: 'sunny', celsius: 21 }) }] })),
      sdk.tool('broken', 'A tool that always fails', { x: z.number() }, async () => {
        throw new Error('tool exploded');
      }),
    ],
  });
  const callerHookIds: string[] = [];
  const messages: any[] = [];
  for await (const message of claude.query({
    prompt: PROMPT,
    options: {
      model: ASKED_MAIN,
      cwd: home,
      env: offline.env,
      settingSources: [],
      mcpServers: { weather },
      allowedTools: ['mcp__weather__get_weather', 'mcp__weather__broken', 'Read', 'Agent'],
      agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: ASKED_SUB } },
      hooks: {
        PreToolUse: [
          {
            hooks: [
              async (input) => {
                callerHookIds.push((input as { tool_use_id: string }).tool_use_id);
                return {};
              },
            ],
          },
        ],
      },
      ...extra.options,
    },
  })) {
    messages.push(message);
    if (extra.perMessage !== undefined) await extra.perMessage();
    if (extra.stopAfter?.(message) === true) break;
  }
  return { messages, callerHookIds, mock, home };
}

/** One thing the adapter was told, in the order it came: a message of the stream, or one of the SDK's hook inputs. */
type Replayed = { message: Record<string, any> } | { hook: Record<string, any> };

/** The adapter's hook events, as the CLI sends them to the callbacks the adapter registers. */
const REPLAYED_HOOKS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStart', 'SubagentStop', 'UserPromptSubmit'];

/** The real SDK, noting every message the adapter reads and every hook input it gets, in the order they come. */
function capturingSdk(timeline: Replayed[]): typeof sdk {
  const query = ((params: { prompt: any; options?: Record<string, any> }) => {
    const options = params.options ?? {};
    const hooks: Record<string, unknown[]> = { ...(options.hooks ?? {}) };
    const note = async (input: unknown) => {
      timeline.push({ hook: JSON.parse(JSON.stringify(input)) });
      return {};
    };
    for (const event of REPLAYED_HOOKS) hooks[event] = [...(hooks[event] ?? []), { hooks: [note] }];
    const inner = sdk.query({ ...params, options: { ...options, hooks } } as Parameters<typeof sdk.query>[0]);
    return (async function* () {
      for await (const message of inner) {
        timeline.push({ message: JSON.parse(JSON.stringify(message)) });
        yield message;
      }
    })();
  }) as unknown as typeof sdk.query;
  return { ...sdk, query };
}

/** An SDK whose query() replays a captured timeline: messages yielded, hook inputs given to the caller's hooks; `before(i)` runs before event i. */
function replayingSdk(timeline: Replayed[], before: (index: number) => void): typeof sdk {
  const query = ((params: { prompt: unknown; options?: Record<string, any> }) => {
    const hooks: Record<string, Array<{ hooks: Array<(input: unknown, id: unknown, options: unknown) => Promise<unknown>> }>> = params.options?.hooks ?? {};
    return (async function* () {
      for (const [index, event] of timeline.entries()) {
        before(index);
        if ('message' in event) yield event.message;
        else for (const matcher of hooks[event.hook.hook_event_name] ?? []) for (const hook of matcher.hooks) await hook(event.hook, event.hook.tool_use_id, { signal: new AbortController().signal });
      }
    })();
  }) as unknown as typeof sdk.query;
  return { ...sdk, query };
}

/** The replies the mock sent for one agent, in order: what the model did. */
function repliesOf(mock: AnthropicMock, model: string): Array<Extract<MockReply, { blocks: unknown }>> {
  return mock.replies.filter((entry) => entry.model === model && 'blocks' in entry.reply).map((entry) => entry.reply as Extract<MockReply, { blocks: unknown }>);
}

/** A provider attempt that failed (and was retried, or not): an agent step whose invocation failed. */
const failedAttempt = (step: AtifDoc): boolean => step.extra?.invocation?.status === 'failed';

/** The agent steps that are the model's answers (failed attempts apart). */
function agentSteps(doc: AtifDoc): AtifDoc[] {
  return (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent' && step.llm_call_count !== 0 && !failedAttempt(step));
}

/** Each agent step is one reply of the model: its text, its tool calls (ids, names, inputs) and its usage. */
function expectStepsMatchReplies(doc: AtifDoc, replies: Array<Extract<MockReply, { blocks: unknown }>>, model: string): void {
  const steps = agentSteps(doc);
  expect(steps.map((step) => step.model_name)).toEqual(replies.map(() => model));
  expect(steps.map((step) => (typeof step.message === 'string' ? step.message : ''))).toEqual(replies.map((reply) => reply.blocks.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('')));
  expect(steps.map((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments]))).toEqual(
    replies.map((reply) => reply.blocks.filter((b) => b.type === 'tool_use').map((b) => [(b as any).id, (b as any).name, (b as any).input])),
  );
  // Anthropic's input_tokens leave cache reads and writes out; the trajectory's prompt counts them in, once.
  expect(steps.map((step) => [step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual(
    replies.map((reply) => [reply.usage.input + (reply.usage.cacheRead ?? 0) + (reply.usage.cacheWrite ?? 0), reply.usage.output]),
  );
}

function resultOf(doc: AtifDoc, callId: string): AtifDoc | undefined {
  for (const step of doc.steps as AtifDoc[]) {
    const result = (step.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === callId);
    if (result !== undefined) return result;
  }
  return undefined;
}

/** The token totals the SDK itself reports: `usage` of each result (main loop) and `modelUsage` of the last (every model). */
function sdkTotals(messages: any[]): { main: [number, number]; byModel: Record<string, [number, number]> } {
  const results = messages.filter((m) => m.type === 'result');
  const main: [number, number] = [0, 0];
  for (const result of results) {
    main[0] += result.usage.input_tokens + result.usage.cache_read_input_tokens + result.usage.cache_creation_input_tokens;
    main[1] += result.usage.output_tokens;
  }
  const byModel: Record<string, [number, number]> = {};
  for (const [model, usage] of Object.entries(results.at(-1).modelUsage as Record<string, any>)) {
    byModel[model] = [usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens, usage.outputTokens];
  }
  return { main, byModel };
}

/** The .jsonl files under a folder (the CLI's session transcripts). */
function transcripts(dir: string): string[] {
  let found: string[] = [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found = found.concat(transcripts(full));
    else if (entry.name.endsWith('.jsonl') && full.includes(`${path.sep}projects${path.sep}`)) found.push(full);
  }
  return found;
}

function stepTotals(doc: AtifDoc): [number, number] {
  return agentSteps(doc).reduce<[number, number]>((sum, step) => [sum[0] + (step.metrics?.prompt_tokens ?? 0), sum[1] + (step.metrics?.completion_tokens ?? 0)], [0, 0]);
}

/**
 * Nothing the hooks opened is left open: every session started is finalized,
 * every sub-agent stopped, every tool call ended and every attempt answered
 * or failed.
 */
function expectAllClosed(log: Array<{ hook: string; payload: Record<string, unknown> }>): void {
  const count = (hook: string, key: (p: Record<string, unknown>) => unknown) => log.filter((e) => e.hook === hook).map((e) => String(key(e.payload))).sort();
  expect(count('on_session_finalize', (p) => p.session_id)).toEqual(count('on_session_start', (p) => p.session_id).concat(count('subagent_start', (p) => p.child_session_id)).sort());
  expect(count('subagent_stop', (p) => p.child_session_id)).toEqual(count('subagent_start', (p) => p.child_session_id));
  expect(count('post_tool_call', (p) => p.tool_call_id)).toEqual(count('pre_tool_call', (p) => p.tool_call_id));
  const attempt = (p: Record<string, unknown>) => `${String(p.api_request_id)}#${String(p.retry_count ?? '')}`;
  const ends = log.filter((e) => e.hook === 'post_api_request' || e.hook === 'api_request_error').length;
  expect(ends).toBe(log.filter((e) => e.hook === 'pre_api_request').length);
  expect(new Set(log.filter((e) => e.hook === 'pre_api_request').map((e) => attempt(e.payload))).size).toBe(ends);
}

/** The LLM ends of one api_request_id, in order (ATOF). */
function attemptsById(atof: AtofEvent[]): Map<string, AtofEvent[]> {
  const byId = new Map<string, AtofEvent[]>();
  for (const event of atof) {
    if (event.kind !== 'scope' || event.category !== 'llm' || event.scope_category !== 'end') continue;
    const id = event.metadata?.api_request_id;
    if (typeof id === 'string') byId.set(id, [...(byId.get(id) ?? []), event]);
  }
  return byId;
}

describe('wrapClaudeAgentSdk: the real SDK and CLI against a loopback Anthropic API', () => {
  for (const backend of backends()) {
    it(`records tools, a failing tool, a retried request and a background sub-agent as one complete trajectory (${backend} backend)`, async () => {
      const recorded = recordedPlugin(`claude-${backend}`, backend);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const run = await runProgram(claude, { failFirst: true });
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectAllClosed(recorded.log);

      // The program did what the script says, and the caller's own hook saw every tool call.
      const sessionId = run.messages.find((m) => m.type === 'system' && m.subtype === 'init').session_id;
      expect(run.messages.filter((m) => m.type === 'result').every((m) => m.subtype === 'success')).toBe(true);
      expect(run.callerHookIds).toEqual(expect.arrayContaining(['toolu_weather_1', 'toolu_broken_1', 'toolu_task_1', 'toolu_read_1']));
      expect(run.messages.some((m) => m.type === 'stream_event' || (m.type === 'system' && m.subtype === 'status' && m.status === 'requesting')), 'no partial messages the caller did not ask for').toBe(false);
      expect(run.mock.others, 'no traffic besides the model requests').toEqual([]);

      // One trajectory file: the query's session, keyed by the SDK's session_id, the sub-agent embedded.
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.session_id).toBe(sessionId);
      expect(doc.agent).toMatchObject({ name: 'claude-agent-sdk', model_name: MAIN_MODEL });
      // The session is named after the framework's agent. It starts as the CLI announces its first request, before an
      // answer names the model: the trajectory's (above) is the one the API answered with.
      const sessionStart = recorded.log.find((entry) => entry.hook === 'on_session_start')!.payload;
      expect(sessionStart).toMatchObject({ session_id: sessionId, agent_name: 'claude-agent-sdk' });
      expect(sessionStart.model).toBeUndefined();
      const steps = doc.steps as AtifDoc[];
      expect(steps[0]).toMatchObject({ source: 'user', message: PROMPT });
      expectStepsMatchReplies(doc, repliesOf(run.mock, MAIN_MODEL), MAIN_MODEL);
      // Each request names the model the CLI asked for, each answer the one the API answered with and why it stopped,
      // in the adapters' one spelling (Anthropic's tool_use is tool_calls, end_turn stop); a sub-agent's requests name
      // none: what it asks for is not in its messages.
      const ofSession = (hook: string, id: string) => recorded.log.filter((entry) => entry.hook === hook && entry.payload.session_id === id).map((entry) => entry.payload);
      expect(new Set(run.mock.requests.filter((request) => !request.system.includes('You are the researcher')).map((request) => request.model))).toEqual(new Set([ASKED_MAIN]));
      expect(new Set(ofSession('pre_api_request', sessionId).map((payload) => (payload.request as { body: { model?: string } }).body.model))).toEqual(new Set([ASKED_MAIN]));
      const mainAnswers = ofSession('post_api_request', sessionId);
      expect(mainAnswers.map((payload) => payload.response_model)).toEqual(repliesOf(run.mock, MAIN_MODEL).map(() => MAIN_MODEL));
      expect(mainAnswers.map((payload) => payload.finish_reason)).toEqual(repliesOf(run.mock, MAIN_MODEL).map((reply) => (reply.blocks.some((block) => block.type === 'tool_use') ? 'tool_calls' : 'stop')));

      // Tool calls by the SDK's tool_use ids; the failing tool is an error observation with its text.
      expect(resultOf(doc, 'toolu_weather_1')).toMatchObject({ content: '{"city":"Paris","sky":"sunny","celsius":21}', extra: { metadata: { status: 'ok' } } });
      expect(resultOf(doc, 'toolu_broken_1')).toMatchObject({ content: 'tool exploded', extra: { metadata: { status: 'error' } } });

      // The sub-agent: its own session, linked from the Agent call's observation, with its own model and steps.
      const children = doc.subagent_trajectories as AtifDoc[];
      expect(children).toHaveLength(1);
      const child = children[0]!;
      expect(resultOf(doc, 'toolu_task_1')!.subagent_trajectory_ref[0].trajectory_id).toBe(child.trajectory_id);
      expect(child.session_id).not.toBe(sessionId);
      expect((child.steps as AtifDoc[])[0]).toMatchObject({ source: 'user', message: 'Find how Paris was founded.' });
      expectStepsMatchReplies(child, repliesOf(run.mock, SUB_MODEL), SUB_MODEL);
      expect(resultOf(child, 'toolu_read_1')!.content).toContain('Paris was founded in the 3rd century BC');
      expect(ofSession('pre_api_request', child.session_id).map((payload) => (payload.request as { body: { model?: string } }).body.model)).toEqual(repliesOf(run.mock, SUB_MODEL).map(() => undefined));
      expect(ofSession('post_api_request', child.session_id).map((payload) => [payload.response_model, payload.finish_reason])).toEqual(
        repliesOf(run.mock, SUB_MODEL).map((reply) => [SUB_MODEL, reply.blocks.some((block) => block.type === 'tool_use') ? 'tool_calls' : 'stop']),
      );

      // Token totals equal what the SDK reports: result usage for the main loop, modelUsage per model.
      const totals = sdkTotals(run.messages);
      expect(stepTotals(doc)).toEqual(totals.main);
      expect({ [ASKED_MAIN]: stepTotals(doc), [ASKED_SUB]: stepTotals(child) }).toEqual(totals.byModel);
      // The turn's end carries what the SDK's results said: their usage summed, the per-model usage and the cost.
      const results = run.messages.filter((m) => m.type === 'result');
      const turnEnd = recorded.log.find((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === sessionId)!.payload;
      expect(turnEnd).toMatchObject({ completed: true, result_subtype: 'success', model_usage: results.at(-1).modelUsage, total_cost_usd: results.at(-1).total_cost_usd });
      expect((turnEnd.result_usage as Record<string, number>).output_tokens).toBe(totals.main[1]);
      // Every request was in the stream or a sub-agent's transcript, each step counted under the model modelUsage names
      // (the API answers with a dated name): nothing is left to state.
      expect(turnEnd.unattributed_usage).toBeUndefined();

      // The retried request: one api_request_id, the 529 attempt then the answer.
      const retried = [...attemptsById(atof).values()].filter((events) => events.length > 1);
      expect(retried).toHaveLength(1);
      const [failed, answered] = retried[0]!;
      expect(failed!.metadata['error.type']).toBe('overloaded');
      expect(JSON.stringify(failed)).toContain('529');
      expect(answered!.metadata['error.type']).toBeUndefined();
      expect(recorded.log.filter((entry) => entry.hook === 'api_request_error').map((entry) => entry.payload.status_code)).toEqual([529]);
      // In the trajectory: one failed attempt, then its retry's answer, and the user's step once.
      const failedSteps = steps.filter(failedAttempt);
      expect(failedSteps).toHaveLength(1);
      expect(JSON.stringify(failedSteps[0]!.message)).toContain('HTTP 529 overloaded');
      expect(steps[steps.indexOf(failedSteps[0]!) + 1]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['toolu_weather_1', 'toolu_broken_1']);
      expect(steps.filter((step) => step.source === 'user')).toHaveLength(1);
    }, 120_000);
  }

  it('gives the caller the same messages as the unwrapped SDK, and records a foreground sub-agent and its retry', async () => {
    const plain = await runProgram(sdk, { foreground: true, failSubFirst: true });
    const recorded = recordedPlugin('claude-same');
    const wrapped = await runProgram(wrapClaudeAgentSdk(sdk, recorded.hooks), { foreground: true, failSubFirst: true });
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);

    // What the caller reads: the same kinds of messages, in the same order, with the same ids and content.
    // Progress heartbeats come by the clock, so their number differs from run to run; everything else must match.
    const timed = (m: any) => m.type === 'tool_progress' || (m.type === 'system' && m.subtype === 'task_progress');
    const shape = (messages: any[]) =>
      messages.filter((m) => !timed(m)).map((m) => [m.type, m.subtype ?? null, m.parent_tool_use_id ?? null, m.message?.content?.map?.((b: any) => b.type + ':' + (b.id ?? b.tool_use_id ?? b.text ?? '')) ?? null, m.type === 'result' ? m.result : null]);
    expect(shape(wrapped.messages)).toEqual(shape(plain.messages));
    expect(wrapped.callerHookIds).toEqual(plain.callerHookIds);

    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expectStepsMatchReplies(doc, repliesOf(wrapped.mock, MAIN_MODEL), MAIN_MODEL);
    const child = (doc.subagent_trajectories as AtifDoc[])[0]!;
    expectStepsMatchReplies(child, repliesOf(wrapped.mock, SUB_MODEL), SUB_MODEL);
    // The sub-agent's session ends, with all its steps, before its parent's. (Its last step may be recorded just
    // after the Agent call's result: the CLI writes the transcript that holds its final usage a little late.)
    const hooks = recorded.log.map((entry) => `${entry.hook}:${String(entry.payload.session_id ?? entry.payload.tool_call_id ?? '')}`);
    expect(hooks.indexOf('subagent_stop:toolu_task_1')).toBeLessThan(hooks.indexOf(`on_session_end:${doc.session_id}`));
    // Its retried request (announced by tool_progress.subagent_retry) keeps one api_request_id.
    const childRetries = recorded.log.filter((entry) => entry.hook === 'api_request_error' && entry.payload.session_id === child.session_id);
    expect(childRetries.map((entry) => entry.payload.status_code)).toEqual([529]);
    const retried = attemptsById(atof).get(childRetries[0]!.payload.api_request_id as string)!;
    expect(retried.map((event) => event.metadata['error.type'] ?? null)).toEqual(['overloaded', null]);
    // The refused attempt names the model, as the main agent's do: the one that answered the request on its retry (a
    // sub-agent's request says none); the answered attempt's request names none, as before.
    expect(childRetries.map((entry) => entry.payload.model)).toEqual([SUB_MODEL]);
    expect(llmModels(atof, [childRetries[0]!.payload.api_request_id])).toEqual([[SUB_MODEL, null]]);
    const failedStep = (child.steps as AtifDoc[]).find((step) => step.extra?.llm_response?.error !== undefined);
    expect(failedStep?.model_name).toBe(SUB_MODEL);
    const totals = sdkTotals(wrapped.messages);
    expect({ [ASKED_MAIN]: stepTotals(doc), [ASKED_SUB]: stepTotals(child) }).toEqual(totals.byModel);
    expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.unattributed_usage)).toEqual([undefined, undefined]);
  }, 120_000);

  it('records a foreground sub-agent\'s retry on the request the API refused, not on the one before it', async () => {
    const recorded = recordedPlugin('claude-sub-retry-later');
    const run = await runProgram(wrapClaudeAgentSdk(sdk, recorded.hooks), { foreground: true, failSubSecond: true });
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const child = (atif[0]!.subagent_trajectories as AtifDoc[])[0]!;
    expectStepsMatchReplies(child, repliesOf(run.mock, SUB_MODEL), SUB_MODEL);
    // tool_progress.subagent_retry names no request: it is the one after those the sub-agent had made, its second,
    // whichever of them its transcript already held when the stream said so.
    const calls = [...new Set(recorded.log.filter((entry) => entry.hook === 'pre_api_request' && entry.payload.session_id === child.session_id).map((entry) => entry.payload.api_request_id as string))];
    const attempts = calls.map((id) => attemptsById(atof).get(id)!.map((event) => event.metadata['error.type'] ?? null));
    expect(attempts).toEqual([[null], ['overloaded', null]]);
    // The refused attempt of its second request names the model that answered that request.
    expect(calls.map((id) => llmModels(atof, [id])[0])).toEqual([[null], [SUB_MODEL, null]]);
  }, 120_000);

  it('records tool calls, and the caller\'s approvals of them, in the model request that asked for them when the caller reads slowly', async () => {
    const recorded = recordedPlugin('claude-slow-reader');
    // The MCP tools are not pre-allowed: the CLI asks the caller's canUseTool, which allows one and denies the other.
    const asked: string[] = [];
    const canUseTool = async (name: string, input: Record<string, unknown>) => {
      asked.push(name);
      return name.endsWith('broken') ? { behavior: 'deny' as const, message: 'broken is not allowed here' } : { behavior: 'allow' as const, updatedInput: input };
    };
    const run = await runProgram(wrapClaudeAgentSdk(sdk, recorded.hooks), { foreground: true }, {
      perMessage: () => new Promise((resolve) => setTimeout(resolve, 40)),
      options: { allowedTools: ['Read', 'Agent'], canUseTool },
    });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectAllClosed(recorded.log);
    expect(asked).toEqual(['mcp__weather__get_weather', 'mcp__weather__broken']);
    // Every pre_tool_call names the request whose response holds its id, and follows that request's start, in the
    // same session (the CLI starts a call while its reply still streams: the call may come before the reply's end).
    const log = recorded.log;
    for (const [index, entry] of log.entries()) {
      if (entry.hook !== 'pre_tool_call') continue;
      const id = entry.payload.tool_call_id;
      const asked = log.findIndex((e) => e.hook === 'post_api_request' && JSON.stringify((e.payload.assistant_message as AtifDoc)?.tool_calls ?? []).includes(`"${String(id)}"`));
      expect(asked, `the request that asked for ${String(id)}`).toBeGreaterThanOrEqual(0);
      expect(entry.payload.api_request_id, `${String(id)} names the request that asked for it`).toBe(log[asked]!.payload.api_request_id);
      const started = log.findIndex((e) => e.hook === 'pre_api_request' && e.payload.api_request_id === entry.payload.api_request_id);
      expect(started).toBeLessThan(index);
      expect(log[asked]!.payload.session_id).toBe(entry.payload.session_id);
    }
    // Each approval request and answer comes after its tool call's start, in the call's session.
    const order = log.map((entry) => `${entry.hook}:${String(entry.payload.tool_call_id ?? '')}`);
    for (const [id, approved] of [['toolu_weather_1', 'once'], ['toolu_broken_1', 'deny']] as const) {
      const start = order.indexOf(`pre_tool_call:${id}`);
      expect(start).toBeLessThan(order.indexOf(`pre_approval_request:${id}`));
      expect(order.indexOf(`pre_approval_request:${id}`)).toBeLessThan(order.indexOf(`post_approval_response:${id}`));
      expect(log.find((entry) => entry.hook === 'post_approval_response' && entry.payload.tool_call_id === id)!.payload.choice).toBe(approved);
    }
    const doc = atif[0]!;
    expectStepsMatchReplies(doc, repliesOf(run.mock, MAIN_MODEL), MAIN_MODEL);
    expectStepsMatchReplies((doc.subagent_trajectories as AtifDoc[])[0]!, repliesOf(run.mock, SUB_MODEL), SUB_MODEL);
    // The denied call never ran: its observation is the denial the model was sent.
    expect(resultOf(doc, 'toolu_weather_1')).toMatchObject({ content: '{"city":"Paris","sky":"sunny","celsius":21}', extra: { metadata: { status: 'ok' } } });
    expect(resultOf(doc, 'toolu_broken_1')).toMatchObject({ extra: { metadata: { status: 'denied' } } });
    expect(String(resultOf(doc, 'toolu_broken_1')!.content)).toContain('broken is not allowed here');
  }, 120_000);

  it('records every step of a sub-agent whose transcript the CLI writes only after the stream says it stopped', async () => {
    // The CLI writes transcripts in batches, after it streams; on a busy machine (CI, on Bun) the stream and the
    // hooks can say a sub-agent stopped before its transcript holds a single record. A real run is captured as the
    // adapter saw it (every message and hook input, in order), then replayed with its sub-agent's transcript
    // written at the very end: the timing CI met, made certain.
    const timeline: Replayed[] = [];
    const listening = new HookRegistry();
    listening.on('pre_api_request', () => {});
    const capture = await runProgram(wrapClaudeAgentSdk(capturingSdk(timeline), listening), { foreground: true });
    const stop = timeline.find((event): event is { hook: Record<string, any> } => 'hook' in event && event.hook.hook_event_name === 'SubagentStop')!.hook;
    const transcript = readFileSync(stop.agent_transcript_path, 'utf8');
    expect(transcript, 'the CLI wrote the sub-agent\'s transcript').toContain('"type":"assistant"');
    const lastStopSignal = timeline.findLastIndex((event) => 'message' in event && event.message.type === 'system' && (event.message.subtype === 'task_notification' || event.message.subtype === 'task_updated'));
    expect(lastStopSignal).toBeGreaterThan(timeline.findIndex((event) => 'hook' in event && event.hook.hook_event_name === 'SubagentStop'));

    for (const written of ['after the stream said it stopped', 'never'] as const) {
      const replayHome = mkdtempSync(path.join(tmpdir(), 'nrh-claude-replay-'));
      cleanups.push(() => rmSync(replayHome, { recursive: true, force: true }));
      const moved = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(capture.home, replayHome));
      const transcriptPath = stop.agent_transcript_path.replace(capture.home, replayHome);
      const warnings: string[] = [];
      const recorded = recordedPlugin(`claude-late-transcript-${written === 'never' ? 'none' : 'late'}`);
      const claude = wrapClaudeAgentSdk(replayingSdk(timeline.map((event) => ('hook' in event ? { hook: moved(event.hook) } : event)), (index) => {
        if (written === 'never' || index !== lastStopSignal + 1) return;
        mkdirSync(path.dirname(transcriptPath), { recursive: true });
        writeFileSync(transcriptPath, transcript);
      }), recorded.hooks, { logger: { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error: (m: string) => void warnings.push(m) } });
      for await (const message of claude.query({ prompt: PROMPT, options: {} })) void message;
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectAllClosed(recorded.log);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expectStepsMatchReplies(doc, repliesOf(capture.mock, MAIN_MODEL), MAIN_MODEL);
      const child = (doc.subagent_trajectories as AtifDoc[])[0]!;
      const hooks = recorded.log.map((entry) => `${entry.hook}:${String(entry.payload.session_id ?? entry.payload.tool_call_id ?? '')}`);
      expect(hooks.indexOf('subagent_stop:toolu_task_1')).toBeLessThan(hooks.indexOf(`on_session_end:${doc.session_id}`));
      if (written === 'never') {
        // No transcript by the query's end: the steps the stream showed, none dropped, and a warning.
        expect(agentSteps(child).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id))).toEqual(['toolu_read_1']);
        expect(warnings.some((w) => w.includes('provisional'))).toBe(true);
      } else {
        // The transcript came late: the sub-agent waited for it, and has every step with its final usage.
        expectStepsMatchReplies(child, repliesOf(capture.mock, SUB_MODEL), SUB_MODEL);
        expect(warnings).toEqual([]);
      }
    }
  }, 120_000);

  it('ends every session of a query the caller abandons while its sub-agent runs, and leaves nothing open', async () => {
    const recorded = recordedPlugin('claude-abandon');
    const run = await runProgram(wrapClaudeAgentSdk(sdk, recorded.hooks, { agentName: 'weather-bot' }), {}, { stopAfter: (m) => m.type === 'system' && m.subtype === 'task_started' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectAllClosed(recorded.log);
    expect(run.messages.some((m) => m.type === 'result')).toBe(false);
    const hooks = recorded.log.map((entry) => entry.hook);
    expect(hooks.at(-1)).toBe('on_session_finalize');
    const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload);
    expect(ends).toHaveLength(2);
    expect(ends.every((end) => end.interrupted === true && end.completed === false)).toBe(true);
    expect(atif).toHaveLength(1);
    expect(validateAtif(atif[0]!)).toEqual([]);
    expect(atif[0]!.agent.name).toBe('weather-bot');
  }, 120_000);

  it('records a sub-agent from the stream when the SDK keeps no transcript, and says its usage is provisional', async () => {
    const warnings: string[] = [];
    const recorded = recordedPlugin('claude-no-transcript');
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error: (m: string) => void warnings.push(m) } });
    const run = await runProgram(claude, { foreground: true }, { options: { persistSession: false } });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(transcripts(path.join(run.home, '.claude')), 'the SDK wrote no transcript').toEqual([]);
    const doc = atif[0]!;
    expectStepsMatchReplies(doc, repliesOf(run.mock, MAIN_MODEL), MAIN_MODEL);
    const child = (doc.subagent_trajectories as AtifDoc[])[0]!;
    const childCalls = agentSteps(child).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
    expect(childCalls).toEqual(['toolu_read_1']);
    expect(warnings.some((w) => w.includes('provisional'))).toBe(true);
  }, 120_000);

  for (const scope of ['run', 'host'] as const) {
  it(`records a streaming-input conversation as one session with one turn per user message (sessionScope '${scope}')`, async () => {
    const recorded = recordedPlugin(`claude-streaming-input-${scope}`);
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { sessionScope: scope, sessionId: 'conversation-7' });
    // With sessionScope 'host' the host opens and closes the session around the query.
    if (scope === 'host') recorded.hooks.emit('on_session_start', { session_id: 'conversation-7', platform: 'test-host' });
    let home = '';
    const mock = await startAnthropicMock((request) => ({ blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5 + request.assistantTurns, output: 2 }, model: MAIN_MODEL }));
    const offline = offlineClaudeEnv(mock.url);
    home = offline.home;
    cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
    const say = (content: string) => ({ type: 'user' as const, message: { role: 'user' as const, content }, parent_tool_use_id: null, session_id: '' });
    // The first two questions come from the prompt's iterable, the third through Query.streamInput().
    let answered: () => void = () => {};
    let done: () => void = () => {};
    async function* conversation() {
      yield say('first question');
      await new Promise<void>((resolve) => (answered = resolve));
      yield say('second question');
      // The prompt stays open while streamInput() sends more.
      await new Promise<void>((resolve) => (done = resolve));
    }
    const q = claude.query({ prompt: conversation(), options: { model: 'claude-main', cwd: home, env: offline.env, settingSources: [] } });
    let results = 0;
    const resultMessages: any[] = [];
    for await (const message of q) {
      if (message.type !== 'result') continue;
      resultMessages.push(message);
      results += 1;
      if (results === 1) answered();
      else if (results === 2) {
        void q.streamInput(
          (async function* () {
            yield say('third question');
          })(),
        );
      } else break;
    }
    done();
    // The adapter closed no session the host owns: the host does it now.
    expect(recorded.log.filter((e) => e.hook === 'on_session_finalize')).toHaveLength(scope === 'run' ? 1 : 0);
    if (scope === 'host') recorded.hooks.emit('on_session_finalize', { session_id: 'conversation-7', platform: 'test-host' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect(atif[0]!.session_id).toBe('conversation-7');
    const steps = atif[0]!.steps as AtifDoc[];
    expect(steps.filter((s) => s.source === 'user').map((s) => s.message)).toEqual(['first question', 'second question', 'third question']);
    expect(agentSteps(atif[0]!).map((s) => s.message)).toEqual(['answer 0', 'answer 1', 'answer 2']);
    expect(recorded.log.filter((e) => e.hook === 'on_session_start')).toHaveLength(1);
    expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => e.payload.user_message)).toEqual(['first question', 'second question', 'third question']);
    // Each later turn says it is not the first, with the conversation before it.
    expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => [e.payload.is_first_turn, (e.payload.conversation_history as AtifDoc[]).map((m) => `${m.role}:${m.content}`)])).toEqual([
      [true, []],
      [false, ['user:first question', 'assistant:answer 0']],
      [false, ['user:first question', 'assistant:answer 0', 'user:second question', 'assistant:answer 1']],
    ]);
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => e.payload.completed)).toEqual([true, true, true]);
    // Each turn's request is the conversation the CLI sent for it, and each turn ends with its own result.
    expect(mock.requests).toHaveLength(3);
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages))).toEqual(mock.requests.map((request) => sentConversation(request.body.messages)));
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => [e.payload.result_subtype, e.payload.result_usage, e.payload.num_turns])).toEqual(
      resultMessages.map((m) => ['success', Object.fromEntries(Object.entries(m.usage).filter(([, v]) => typeof v === 'number')), m.num_turns]),
    );
  }, 120_000);
  }

  for (const busy of ['between turns', 'during a tool call'] as const) {
  it(`records user messages sent while the CLI is busy (${busy}) as the CLI takes them in, each request the one it sent`, async () => {
    const recorded = recordedPlugin('claude-queued');
    let notes = '';
    // The first message asks for a tool when the test says so: the other two arrive while it runs.
    const mock = await startAnthropicMock((request) =>
      busy === 'during a tool call' && request.assistantTurns === 0
        ? { blocks: [{ type: 'tool_use', id: 'toolu_notes', name: 'Read', input: { file_path: notes } }], usage: { input: 4, output: 3 }, model: MAIN_MODEL }
        : { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5 + request.assistantTurns, output: 2 }, model: MAIN_MODEL },
    );
    const offline = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
    notes = path.join(offline.home, 'notes.txt');
    writeFileSync(notes, 'noted\n');
    const say = (content: string) => ({ type: 'user' as const, message: { role: 'user' as const, content }, parent_tool_use_id: null, session_id: '' });
    // All three sent at once, not waiting for an answer.
    async function* conversation() {
      yield say('first');
      yield say('second');
      yield say('third');
    }
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const results: any[] = [];
    // The prompts the CLI took in, as the caller's own UserPromptSubmit hook sees them.
    const submitted: string[] = [];
    const hooks = { UserPromptSubmit: [{ hooks: [async (input: any) => (submitted.push(input.prompt), {})] }] };
    for await (const message of claude.query({ prompt: conversation(), options: { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [], allowedTools: ['Read'], hooks } })) {
      if (message.type === 'result') results.push(message);
    }
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const requests = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages));
    expect(requests).toEqual(mock.requests.map((request) => sentConversation(request.body.messages)));
    // No message is missing from what was sent, whichever way the CLI took it.
    for (const text of ['first', 'second', 'third']) expect(requests.at(-1)!.some((line) => line.includes(text)), text).toBe(true);
    // One turn per result: the turns are the CLI's, not one per message sent.
    const turnMessages = recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => e.payload.user_message);
    expect(turnMessages).toHaveLength(results.length);
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => [(e.payload.result_usage as Record<string, number>).input_tokens, e.payload.num_turns])).toEqual(results.map((m) => [m.usage.input_tokens, m.num_turns]));
    expect(atif).toHaveLength(1);
    expect(validateAtif(atif[0]!)).toEqual([]);
    // Each turn's user message is the prompt the CLI took (messages queued together are joined); messages taken while a tool ran are no turn.
    expect(turnMessages).toEqual(busy === 'between turns' ? submitted : submitted.slice(0, 1));
    // A turn's user step, and (as native writes a request that ends with a user message) one for the messages sent into the running turn: every message, once.
    expect((atif[0]!.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => step.message).join('\n')).toBe('first\nsecond\nthird');
  }, 120_000);
  }

  for (const scope of ['run', 'host'] as const) {
  for (const how of ['resume', 'continue'] as const) {
  it(`records a query that resumes a session (options.${how}) under the same session id, as a later turn whose request is the one the CLI sent (sessionScope '${scope}')`, async () => {
    const recorded = recordedPlugin(`claude-${how}-${scope}`);
    let notes = '';
    // The first question reads a file, so the conversation the resumed query carries has a tool call and its result.
    const mock = await startAnthropicMock((request) =>
      request.assistantTurns === 0
        ? { blocks: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_notes_1', name: 'Read', input: { file_path: notes } }], usage: { input: 4, output: 3 }, model: MAIN_MODEL }
        : { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5 + request.assistantTurns, output: 2 }, model: MAIN_MODEL },
    );
    const offline = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
    notes = path.join(offline.home, 'notes.txt');
    writeFileSync(notes, 'Paris was founded by the Parisii.\n');
    const options = { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [], allowedTools: ['Read'] };
    // With sessionScope 'host' the host keeps one session open around both queries, under the SDK's session id.
    let sessionId = '';
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, scope === 'host' ? { sessionScope: 'host', sessionId: () => sessionId } : {});
    const results: any[] = [];
    for await (const message of claude.query({ prompt: 'first question', options })) {
      if (message.type === 'system' && message.subtype === 'init') {
        sessionId = message.session_id;
        if (scope === 'host') recorded.hooks.emit('on_session_start', { session_id: sessionId, platform: 'test-host' });
      }
      if (message.type === 'result') results.push(message);
    }
    for await (const message of claude.query({ prompt: 'second question', options: { ...options, ...(how === 'resume' ? { resume: sessionId } : { continue: true }) } })) {
      if (message.type === 'system' && message.subtype === 'init') expect(message.session_id, 'the SDK resumed the same session').toBe(sessionId);
      if (message.type === 'result') results.push(message);
    }
    if (scope === 'host') recorded.hooks.emit('on_session_finalize', { session_id: sessionId, platform: 'test-host' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The CLI sent the earlier conversation with the resumed query's request.
    expect(mock.requests).toHaveLength(3);
    expect(JSON.stringify(mock.requests[2]!.body.messages)).toContain('answer 1');
    // Every recorded request is the conversation the CLI sent, the resumed one too (in the stream's terms: no system prompt, no reminders).
    const recordedRequests = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages));
    expect(recordedRequests).toEqual(mock.requests.map((request) => sentConversation(request.body.messages)));
    expect(recordedRequests[2]).toEqual(['user:first question', 'assistant:Reading.[toolu_notes_1]', 'tool:toolu_notes_1:1\tParis was founded by the Parisii.\n2\t', 'assistant:answer 1', 'user:second question']);
    const turns = recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => [e.payload.session_id, e.payload.user_message, e.payload.is_first_turn, recordedConversation(e.payload.conversation_history as any[])]);
    expect(turns).toEqual([
      [sessionId, 'first question', true, []],
      [sessionId, 'second question', false, recordedRequests[2]!.slice(0, -1)],
    ]);
    expect(atif.every((doc) => doc.session_id === sessionId)).toBe(true);
    const userSteps = atif.map((doc) => (doc.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => step.message));
    // Each query its own session (a second file for the same id), unless the host holds one session around both.
    expect(userSteps).toEqual(scope === 'run' ? [['first question'], ['second question']] : [['first question', 'second question']]);
    const totals = atif.reduce<[number, number]>((sum, doc) => [sum[0] + stepTotals(doc)[0], sum[1] + stepTotals(doc)[1]], [0, 0]);
    expect(totals).toEqual(results.reduce<[number, number]>((sum, m) => [sum[0] + m.usage.input_tokens, sum[1] + m.usage.output_tokens], [0, 0]));
    // The resumed query brought a new message: `view` shows it as the next turn from the ATOF file and the
    // trajectory alike (not a run resumed after a pause, which goes on with its turn), row for row but durations.
    if (scope === 'host') {
      const rows = async (dir: string) => {
        const files = readdirSync(path.join(recorded.dir, dir)).map((name) => path.join(recorded.dir, dir, name));
        const text = (await cliInProcess(['view', ...files])).stdout;
        return text.split('\n').filter((line) => /^ {10}session |[├└]─ /.test(line)).map((line) => rowWithoutDuration(line.trim()));
      };
      const fromAtif = await rows('atif');
      expect(await rows('atof')).toEqual(fromAtif);
      expect(fromAtif.filter((row) => row.startsWith('turn ')).map((row) => row.replace(/ {2}.*(“.*”)$/, ' $1'))).toEqual(['turn 1 “first question”', 'turn 2 “second question”']);
    }
  }, 120_000);
  }
  }

  it('records every result a resumed query sent of an earlier reply that called two tools at once', async () => {
    // The CLI writes each of the two results as the child of the block that called it: only the last is on the chain back from the prompt.
    const recorded = recordedPlugin('claude-resume-parallel');
    let files: string[] = [];
    const mock = await startAnthropicMock((request) =>
      request.assistantTurns === 0
        ? { blocks: [{ type: 'text', text: 'Reading both.' }, ...files.map((file, i) => ({ type: 'tool_use' as const, id: `toolu_notes_${i + 1}`, name: 'Read', input: { file_path: file } }))], usage: { input: 4, output: 3 }, model: MAIN_MODEL }
        : { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5, output: 2 }, model: MAIN_MODEL },
    );
    const offline = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
    files = ['paris.txt', 'lyon.txt'].map((name) => path.join(offline.home, name));
    for (const file of files) writeFileSync(file, `${path.basename(file, '.txt')} notes\n`);
    const options = { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [], allowedTools: ['Read'] };
    let sessionId = '';
    for await (const message of sdk.query({ prompt: 'first question', options })) if (message.type === 'system' && message.subtype === 'init') sessionId = message.session_id;
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    for await (const message of claude.query({ prompt: 'second question', options: { ...options, resume: sessionId } })) void message;
    await recorded.finish();
    const sent = sentConversation(mock.requests.at(-1)!.body.messages);
    // (In the order the reads ended, which is either.)
    expect(sent.filter((line) => line.startsWith('tool:')).map((line) => line.split(':')[1]).sort(), 'the CLI sent both results').toEqual(['toolu_notes_1', 'toolu_notes_2']);
    const requests = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages));
    expect(requests).toEqual([sent]);
  }, 120_000);

  it('records the conversation a forked session (resume + forkSession) sent, up to resumeSessionAt', async () => {
    const recorded = recordedPlugin('claude-fork');
    const mock = await startAnthropicMock((request) => ({ blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5, output: 2 }, model: MAIN_MODEL }));
    const offline = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
    const options = { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [] };
    // Two turns, then a fork that goes on from the first answer: the second turn is not part of what it sends.
    let sessionId = '';
    let firstAnswer = '';
    for await (const message of sdk.query({ prompt: 'one', options })) {
      if (message.type === 'system' && message.subtype === 'init') sessionId = message.session_id;
      if (message.type === 'assistant') firstAnswer = message.uuid;
    }
    for await (const message of sdk.query({ prompt: 'two', options: { ...options, resume: sessionId } })) void message;
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    let forkId = '';
    for await (const message of claude.query({ prompt: 'three', options: { ...options, resume: sessionId, forkSession: true, resumeSessionAt: firstAnswer } })) {
      if (message.type === 'system' && message.subtype === 'init') forkId = message.session_id;
    }
    await recorded.finish();
    expect(forkId).not.toBe(sessionId);
    const sent = sentConversation(mock.requests.at(-1)!.body.messages);
    const request = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages));
    expect(sent).toEqual(['user:one', 'assistant:answer 0', 'user:three']);
    expect(request).toEqual([sent]);
  }, 120_000);

  it('records the conversation a session resumed after /compact sent: the summary and what followed it, not what was compacted away', async () => {
    const recorded = recordedPlugin('claude-compacted');
    const mock = await startAnthropicMock((request) => ({ blocks: [{ type: 'text', text: `summary or answer ${request.assistantTurns}` }], usage: { input: 5, output: 2 }, model: MAIN_MODEL }));
    const offline = offlineClaudeEnv(mock.url);
    cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
    const options = { model: 'claude-main', cwd: offline.home, env: offline.env, settingSources: [] };
    let sessionId = '';
    for await (const message of sdk.query({ prompt: 'first question', options })) {
      if (message.type === 'system' && message.subtype === 'init') sessionId = message.session_id;
    }
    let compacted = false;
    for await (const message of sdk.query({ prompt: '/compact', options: { ...options, resume: sessionId } })) if (message.type === 'system' && message.subtype === 'compact_boundary') compacted = true;
    expect(compacted, 'the CLI compacted the session').toBe(true);
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    for await (const message of claude.query({ prompt: 'third question', options: { ...options, resume: sessionId } })) void message;
    await recorded.finish();
    const wire = mock.requests.at(-1)!.body.messages as any[];
    // The CLI sends the summary, the /compact command and the new prompt joined into one user message; its notes apart, the recorded user messages say the same, in order.
    const sentText = wire
      .filter((m) => m.role === 'user')
      .flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content))
      .filter((b: any) => b.type === 'text' && !b.text.startsWith('<system-reminder>') && !b.text.startsWith('<local-command-caveat>'))
      .map((b: any) => b.text.trim())
      .join('');
    const requests = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => (e.payload.request as any).body.messages as any[]);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.every((m) => m.role === 'user')).toBe(true);
    // (The CLI puts a line break between the joined messages.)
    expect(requests[0]!.map((m) => m.content.trim()).join('')).toBe(sentText);
    expect(requests[0]![0]!.content).toMatch(/^This session is being continued/);
    expect(JSON.stringify(requests[0])).not.toContain('first question');
    expect(requests[0]!.at(-1)).toEqual({ role: 'user', content: 'third question' });
    // The summary request of the earlier /compact query is in the modelUsage the CLI starts from, not this query's to state.
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => e.payload.unattributed_usage)).toEqual([undefined]);
  }, 120_000);

  it('records a request the API keeps refusing as a failed attempt and a failed session', async () => {
    const recorded = recordedPlugin('claude-refused');
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    let home = '';
    const mock = await startAnthropicMock(() => ({ status: 529, errorType: 'overloaded_error', message: 'Overloaded' }));
    const offline = offlineClaudeEnv(mock.url, { CLAUDE_CODE_MAX_RETRIES: '1' });
    home = offline.home;
    cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
    const messages: any[] = [];
    // The SDK ends such a query by throwing after its error result; the caller sees exactly that.
    let thrown: unknown;
    try {
      for await (const message of claude.query({ prompt: 'hello?', options: { model: 'claude-main', cwd: home, env: offline.env, settingSources: [] } })) messages.push(message);
    } catch (error) {
      thrown = error;
    }
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectAllClosed(recorded.log);
    expect(String(thrown)).toContain('529');
    const result = messages.find((m) => m.type === 'result');
    expect(result.is_error).toBe(true);
    const errors = recorded.log.filter((e) => e.hook === 'api_request_error');
    expect(errors.length).toBe(mock.requests.length);
    expect(new Set(errors.map((e) => e.payload.api_request_id)).size).toBe(1);
    expect(errors.map((e) => e.payload.retry_count)).toEqual(errors.map((_, i) => i));
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true });
    expect(atif).toHaveLength(1);
    expect(validateAtif(atif[0]!)).toEqual([]);
    expect([...attemptsById(atof).values()][0]!.every((event) => event.metadata['error.type'] !== undefined)).toBe(true);
  }, 120_000);

  it('is the SDK itself when nobody listens', async () => {
    const claude = wrapClaudeAgentSdk(sdk, new HookRegistry());
    const run = await runProgram(claude, {});
    expect(run.messages.filter((m) => m.type === 'result').length).toBeGreaterThan(0);
    expect(run.messages.some((m) => m.type === 'stream_event')).toBe(false);
  }, 120_000);
});
