// The Claude Agent SDK adapter on query options no other suite runs, written
// as the SDK's TypeScript reference writes them, on the real SDK and its
// bundled CLI against the loopback Anthropic API (test/support/anthropic-mock.ts):
// `forwardSubagentText` (a sub-agent's own text and thinking forwarded into
// the main stream), `toolAliases` (a built-in tool name routed to an MCP
// tool) and `includePartialMessages` asked for by the program itself. Each
// test holds the trajectory to what the program got: the steps and their
// models, the tool calls and what ran, what the model was told, and the
// tokens the SDK's result and `modelUsage` report.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`; one
// query per case.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, onlyTrajectory, recordedPlugin, type AtifDoc, type Recorded } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { modelUsageTotals, observations, offlineApi as offlineApiOf, resultTotals, stepTotals, tokensByModel, toldTheModel, toolEnds } from '../support/claude-checks.ts';

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// Models the CLI does not know, so it asks for them by these names (the API answers with a dated one).
const MAIN = 'claude-main';
const SUB = 'claude-sub';
const dated = (model: string): string => `${model}-2026-01-01`;
const askedFor = (answered: string): string => answered.replace(/-2026-01-01$/, '');

async function drain(iterable: AsyncIterable<any>): Promise<any[]> {
  const messages: any[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

/** Each agent step of a trajectory: [model, message, tool call ids]. */
function agentSteps(doc: AtifDoc): unknown[][] {
  return (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.model_name, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)]);
}

/** Every record of the sub-agents' transcripts the CLI wrote under `home` (`<session>/subagents/agent-<id>.jsonl`). */
function subagentRecords(home: string): any[] {
  const projects = path.join(home, '.claude', 'projects');
  const files = (readdirSync(projects, { recursive: true }) as string[]).filter((file) => /(^|[\\/])subagents[\\/]agent-[^\\/]+\.jsonl$/.test(file));
  return files.flatMap((file) => readFileSync(path.join(projects, file), 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line)));
}

/** The query's one turn ended as its result says, with every tool call started ended. */
function expectCompletedTurn(log: Recorded['log']): void {
  const started = log.filter((entry) => entry.hook === 'pre_tool_call').map((entry) => entry.payload.tool_call_id);
  const ended = log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => entry.payload.tool_call_id);
  expect(ended.sort()).toEqual(started.sort());
  const ends = log.filter((entry) => entry.hook === 'on_session_end' && !String(entry.payload.session_id).includes(':sub:'));
  expect(ends.map((entry) => [entry.payload.completed, entry.payload.failed, entry.payload.interrupted])).toEqual([[true, false, false]]);
}

describe('wrapClaudeAgentSdk: query options no other suite runs', () => {
  for (const backend of backends()) {
    it(`forwardSubagentText: the sub-agent's forwarded text is its own steps, once, on its own model; the main agent's steps hold none of it (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (request.system.includes('You are the researcher.')) {
          return request.assistantTurns === 0
            ? { blocks: [{ type: 'text', text: 'Reading the notes.' }, { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: { input: 11, output: 3 }, model: dated(SUB) }
            : { blocks: [{ type: 'text', text: 'Founded by the Parisii.' }], usage: { input: 21, output: 4, cacheRead: 5 }, model: dated(SUB) };
        }
        return request.assistantTurns === 0
          ? { blocks: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'Research Paris', prompt: 'How was Paris founded?', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 8 }, model: dated(MAIN) }
          : { blocks: [{ type: 'text', text: 'Paris was founded by the Parisii.' }], usage: { input: 60, output: 7 }, model: dated(MAIN) };
      });
      writeFileSync(path.join(home, 'notes.txt'), 'Paris was founded by the Parisii.\n');
      const recorded = recordedPlugin(`claude-forward-subagent-text-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's reference writes programmatic sub-agents: one with its own prompt, tools and model.
      const messages = await drain(
        query({
          prompt: 'How was Paris founded? Ask the researcher.',
          options: {
            model: MAIN,
            cwd: home,
            env,
            settingSources: [],
            allowedTools: ['Agent', 'Read'],
            forwardSubagentText: true,
            agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: SUB } },
          },
        }),
      );
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the program got: the sub-agent's text forwarded, tagged with the Agent call it runs under.
      const forwarded = messages.filter((m) => m.type === 'assistant' && m.parent_tool_use_id === 'toolu_agent').flatMap((m) => m.message.content.filter((block: any) => block.type === 'text').map((block: any) => block.text));
      expect(forwarded).toEqual(['Reading the notes.', 'Founded by the Parisii.']);
      expect(mock.requests.map((request) => request.model)).toEqual([MAIN, SUB, SUB, MAIN]);
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);
      expectCompletedTurn(recorded.log);

      // The trajectory: the main agent's steps are its own; the sub-agent's, in its trajectory, each once, with its model.
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      expect(agentSteps(doc)).toEqual([
        [dated(MAIN), '', ['toolu_agent']],
        [dated(MAIN), 'Paris was founded by the Parisii.', []],
      ]);
      const subs = (doc.subagent_trajectories ?? []) as AtifDoc[];
      expect(subs).toHaveLength(1);
      expect(agentSteps(subs[0]!)).toEqual([
        [dated(SUB), 'Reading the notes.', ['toolu_read']],
        [dated(SUB), 'Founded by the Parisii.', []],
      ]);
      // The sub-agent's Read and the Agent call end as the model was told.
      const told = toldTheModel(mock);
      expect(observations(subs[0]!).get('toolu_read')!.content).toContain('Paris was founded by the Parisii.');
      expect(told.get('toolu_agent')!.content).toContain('Founded by the Parisii.');
      expect(String(observations(doc).get('toolu_agent')!.content)).toContain('Founded by the Parisii.');
      // Tokens per model as modelUsage counts them; the main agent's as the result does.
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(held).toEqual(reported);
      expect(reported).toEqual({ [MAIN]: [90, 15], [SUB]: [37, 7] });
      await sameOnNative(recorded);
    }, 180_000);

    it(`toolAliases: a call the model made to Bash that the alias routed to an MCP tool is recorded as the model made it, with the MCP tool's result and the MCP tool named as the one that ran; no Bash ran (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? { blocks: [{ type: 'text', text: 'Touching it.' }, { type: 'tool_use', id: 'toolu_alias', name: 'Bash', input: { command: 'touch aliased.txt', description: 'Touch a file' } }], usage: { input: 30, output: 8, cacheRead: 4 }, model: dated(MAIN) }
          : { blocks: [{ type: 'text', text: 'Done remotely.' }], usage: { input: 64, output: 3 }, model: dated(MAIN) },
      );
      // As the reference's example writes it: Bash runs inside a remote workspace, an MCP tool.
      const ran: unknown[] = [];
      const workspace = sdk.createSdkMcpServer({
        name: 'workspace',
        version: '1.0.0',
        tools: [sdk.tool('bash', 'Runs a command in the remote workspace', { command: z.string() }, async (args) => (ran.push(args), { content: [{ type: 'text', text: `remote ran: ${args.command}` }] }))],
      });
      const hookSaw: unknown[] = [];
      const recorded = recordedPlugin(`claude-tool-aliases-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages = await drain(
        query({
          prompt: 'Touch aliased.txt.',
          options: {
            model: MAIN,
            cwd: home,
            env,
            settingSources: [],
            mcpServers: { workspace },
            allowedTools: ['mcp__workspace__bash'],
            toolAliases: { Bash: 'mcp__workspace__bash' },
            hooks: { PreToolUse: [{ hooks: [async (input) => (hookSaw.push([(input as any).tool_use_id, (input as any).tool_name]), {})] }] },
          },
        }),
      );
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What ran: the MCP tool, with the model's command; the CLI's own hook names it; nothing ran locally.
      expect(ran).toEqual([{ command: 'touch aliased.txt' }]);
      expect(hookSaw).toEqual([['toolu_alias', 'mcp__workspace__bash']]);
      expect(existsSync(path.join(home, 'aliased.txt'))).toBe(false);
      expect(toldTheModel(mock).get('toolu_alias')).toMatchObject({ is_error: false, content: 'remote ran: touch aliased.txt' });
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);
      expectCompletedTurn(recorded.log);

      // The call as the model made it (the next request's history holds it so), ended with the MCP tool's result.
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      const calls = (doc.steps as AtifDoc[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['toolu_alias', 'Bash', { command: 'touch aliased.txt', description: 'Touch a file' }]]);
      expect(JSON.stringify(mock.requests[1]!.body.messages)).toContain('"name":"Bash"');
      expect(toolEnds(recorded.log)).toEqual({ toolu_alias: ['ok', 'remote ran: touch aliased.txt'] });
      expect(observations(doc).get('toolu_alias')!.content).toBe('remote ran: touch aliased.txt');
      // Which tool ran, as the CLI's hook named it: the call's end says it beside the name the model called.
      const end = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_alias')!.payload;
      expect([end.tool_name, end.routed_to]).toEqual(['Bash', 'mcp__workspace__bash']);
      expect(observations(doc).get('toolu_alias')!.extra.metadata).toMatchObject({ status: 'ok', routed_to: 'mcp__workspace__bash' });
      expect(agentSteps(doc)).toEqual([
        [dated(MAIN), 'Touching it.', ['toolu_alias']],
        [dated(MAIN), 'Done remotely.', []],
      ]);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
      await sameOnNative(recorded);
    }, 180_000);

    it(`includePartialMessages asked for by the program: it gets every partial event and request announcement the SDK streams, and the trajectory is the turn's, as without them (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? { blocks: [{ type: 'text', text: 'Echoing.' }, { type: 'tool_use', id: 'toolu_echo', name: 'Bash', input: { command: 'echo partial', description: 'Echo' } }], usage: { input: 25, output: 9, cacheRead: 3 }, model: dated(MAIN) }
          : { blocks: [{ type: 'text', text: 'It printed partial.' }], usage: { input: 55, output: 5 }, model: dated(MAIN) },
      );
      const recorded = recordedPlugin(`claude-partials-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's streaming-output docs write it: text deltas as they come.
      const messages: any[] = [];
      let streamedText = '';
      for await (const message of query({ prompt: 'Echo partial.', options: { model: MAIN, cwd: home, env, settingSources: [], allowedTools: ['Bash'], includePartialMessages: true } })) {
        messages.push(message);
        if (message.type === 'stream_event' && message.event.type === 'content_block_delta' && message.event.delta.type === 'text_delta') streamedText += message.event.delta.text;
      }
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // The program got what the SDK streams in this mode: each request announced, then its events, by the API's ids.
      expect(streamedText).toBe('Echoing.It printed partial.');
      const events = messages.filter((m) => m.type === 'stream_event');
      expect(events.filter((m) => m.event.type === 'message_start').map((m) => m.event.message.id)).toEqual(mock.replies.map((reply) => reply.id));
      expect(events.filter((m) => m.event.type === 'message_delta').map((m) => m.event.usage.output_tokens)).toEqual([9, 5]);
      expect(events.filter((m) => m.event.type === 'message_stop')).toHaveLength(2);
      expect(messages.filter((m) => m.type === 'system' && m.subtype === 'status' && m.status === 'requesting')).toHaveLength(2);
      expect(mock.requests).toHaveLength(2);
      expectCompletedTurn(recorded.log);

      // The trajectory is the turn's: two steps with the answers and tokens the API gave, the echo as the model was told.
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      expect(agentSteps(doc)).toEqual([
        [dated(MAIN), 'Echoing.', ['toolu_echo']],
        [dated(MAIN), 'It printed partial.', []],
      ]);
      expect((doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual([[28, 9, 3], [55, 5, 0]]);
      expect(toolEnds(recorded.log)).toEqual({ toolu_echo: ['ok', toldTheModel(mock).get('toolu_echo')!.content] });
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
      await sameOnNative(recorded);
    }, 180_000);

    it(`abortController aborted while an in-process MCP tool runs: the CLI cancels the call and finishes the turn; the call ends interrupted (not a tool error) with what the model was told, the turn as its result says (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? { blocks: [{ type: 'text', text: 'Looking it up.' }, { type: 'tool_use', id: 'toolu_slow', name: 'mcp__ops__slow_lookup', input: { word: 'abort' } }], usage: { input: 30, output: 8, cacheRead: 2 }, model: dated(MAIN) }
          : { blocks: [{ type: 'text', text: 'The lookup was cut.' }], usage: { input: 70, output: 5 }, model: dated(MAIN) },
      );
      // A tool that says when it started and returns only once the query is over.
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => (started = resolve));
      let release: () => void = () => {};
      const queryOver = new Promise<void>((resolve) => (release = resolve));
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [sdk.tool('slow_lookup', 'Looks a word up, slowly', { word: z.string() }, async (args) => (started(), await queryOver, { content: [{ type: 'text', text: `${args.word}: found` }] }))],
      });
      const recorded = recordedPlugin(`claude-abort-tool-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's reference writes cancelling: the program's own AbortController, aborted once the tool is running.
      const abortController = new AbortController();
      const messages: any[] = [];
      let thrown: unknown;
      try {
        for await (const message of query({ prompt: 'Look up abort.', options: { model: MAIN, cwd: home, env, settingSources: [], mcpServers: { ops }, allowedTools: ['mcp__ops__slow_lookup'], abortController } })) {
          messages.push(message);
          if (message.type === 'assistant' && message.message.content.some((block: any) => block.type === 'tool_use')) {
            await running;
            abortController.abort();
          }
        }
      } catch (error) {
        thrown = error;
      }
      release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the program got: the tool cancelled (the CLI says so, and tells the model), the turn finished, then the SDK threw.
      const cut = messages.find((m) => m.type === 'user' && m.message.content.some((block: any) => block.tool_use_id === 'toolu_slow'));
      expect(cut.tool_result_meta).toEqual([expect.objectContaining({ id: 'toolu_slow', non_execution_kind: 'interrupted' })]);
      const told = toldTheModel(mock).get('toolu_slow')!;
      expect(told.is_error).toBe(true);
      expect(told.content).toContain('interrupted before a result was received');
      expect(mock.requests).toHaveLength(2);
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);
      expect(String(thrown)).toContain('aborted');

      // The call was cut, not failed: interrupted, with what the model was told; the turn ended as its result says.
      const end = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_slow')!.payload;
      expect([end.status, end.error_type, end.result]).toEqual(['error', 'Interrupted', told.content]);
      expectCompletedTurn(recorded.log);
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      expect(observations(doc).get('toolu_slow')!.extra.metadata).toMatchObject({ status: 'error', 'error.type': 'Interrupted' });
      expect(agentSteps(doc)).toEqual([
        [dated(MAIN), 'Looking it up.', ['toolu_slow']],
        [dated(MAIN), 'The lookup was cut.', []],
      ]);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
      await sameOnNative(recorded);
    }, 180_000);

    it(`abortController aborted while a sub-agent's in-process MCP tool runs: the CLI cancels the call and both agents go on; the sub-agent's call ends interrupted (not a tool error), as its transcript says, though the streamed result does not (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (request.system.includes('You are the researcher.')) {
          return request.assistantTurns === 0
            ? { blocks: [{ type: 'text', text: 'Looking it up.' }, { type: 'tool_use', id: 'toolu_subslow', name: 'mcp__ops__slow_lookup', input: { word: 'abort' } }], usage: { input: 11, output: 3 }, model: dated(SUB) }
            : { blocks: [{ type: 'text', text: 'The lookup was cut.' }], usage: { input: 21, output: 4, cacheRead: 2 }, model: dated(SUB) };
        }
        return request.assistantTurns === 0
          ? { blocks: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'Look up', prompt: 'Look up abort.', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 8 }, model: dated(MAIN) }
          : { blocks: [{ type: 'text', text: 'The researcher was cut off.' }], usage: { input: 60, output: 7 }, model: dated(MAIN) };
      });
      // The sub-agent's tool says when it started and returns only once the query is over.
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => (started = resolve));
      let release: () => void = () => {};
      const queryOver = new Promise<void>((resolve) => (release = resolve));
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [sdk.tool('slow_lookup', 'Looks a word up, slowly', { word: z.string() }, async (args) => (started(), await queryOver, { content: [{ type: 'text', text: `${args.word}: found` }] }))],
      });
      const recorded = recordedPlugin(`claude-abort-subagent-tool-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const abortController = new AbortController();
      const messages: any[] = [];
      let thrown: unknown;
      try {
        for await (const message of query({
          prompt: 'Ask the researcher to look up abort.',
          options: {
            model: MAIN,
            cwd: home,
            env,
            settingSources: [],
            mcpServers: { ops },
            allowedTools: ['Agent', 'mcp__ops__slow_lookup'],
            abortController,
            agents: { researcher: { description: 'Looks words up', prompt: 'You are the researcher.', tools: ['mcp__ops__slow_lookup'], model: SUB } },
          },
        })) {
          messages.push(message);
          // Aborted once the sub-agent's tool runs, as the program would cancel a query that takes too long.
          if (message.type === 'assistant' && message.parent_tool_use_id === 'toolu_agent' && message.message.content.some((block: any) => block.type === 'tool_use')) {
            await running;
            abortController.abort();
          }
        }
      } catch (error) {
        thrown = error;
      }
      release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the program got: the sub-agent's call cancelled (the model told so), both agents answered, then the SDK threw.
      // The streamed result does not say the call was cut (its meta has no non_execution_kind, the main agent's has);
      // the sub-agent's transcript does.
      const cut = messages.find((m) => m.type === 'user' && m.parent_tool_use_id === 'toolu_agent' && m.message.content.some((block: any) => block.tool_use_id === 'toolu_subslow'));
      expect(cut.tool_result_meta.find((meta: any) => meta.id === 'toolu_subslow').non_execution_kind).toBeUndefined();
      const told = toldTheModel(mock);
      expect(told.get('toolu_subslow')!.is_error).toBe(true);
      expect(told.get('toolu_subslow')!.content).toContain('interrupted before a result was received');
      expect(subagentRecords(home).find((record) => record.type === 'user' && JSON.stringify(record.message).includes('toolu_subslow'))?.toolDenialKind).toBe('interrupted');
      expect(mock.requests.map((request) => request.model)).toEqual([MAIN, SUB, SUB, MAIN]);
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);
      expect(String(thrown)).toContain('aborted');

      // The sub-agent's call was cut, not failed: interrupted, with what the model was told.
      const end = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_subslow')!.payload;
      expect([end.status, end.error_type, end.result]).toEqual(['error', 'Interrupted', told.get('toolu_subslow')!.content]);
      expect(recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'toolu_subslow')).toHaveLength(1);
      expectCompletedTurn(recorded.log);
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      const subs = (doc.subagent_trajectories ?? []) as AtifDoc[];
      expect(subs).toHaveLength(1);
      expect(observations(subs[0]!).get('toolu_subslow')).toMatchObject({ content: told.get('toolu_subslow')!.content, extra: { metadata: { status: 'error', 'error.type': 'Interrupted' } } });
      expect(agentSteps(subs[0]!)).toEqual([
        [dated(SUB), 'Looking it up.', ['toolu_subslow']],
        [dated(SUB), 'The lookup was cut.', []],
      ]);
      // The Agent call ends with the sub-agent's answer, as the main agent was told.
      expect(toolEnds(recorded.log).toolu_agent).toEqual(['ok', told.get('toolu_agent')!.content]);
      expect(agentSteps(doc)).toEqual([
        [dated(MAIN), '', ['toolu_agent']],
        [dated(MAIN), 'The researcher was cut off.', []],
      ]);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(held).toEqual(reported);
      expect(reported).toEqual({ [MAIN]: [90, 15], [SUB]: [34, 7] });
      await sameOnNative(recorded);
    }, 180_000);

    for (const topModel of [undefined, MAIN]) {
      it(`agent (the main thread run as a defined agent${topModel === undefined ? '' : ', with the query\'s own model'}): the trajectory's agent is its name, each request and refused attempt the model the CLI sent it to (${backend} backend)`, async () => {
        let refused = false;
        const { mock, env, home } = await offlineApi((request) => {
          if (!refused) {
            refused = true;
            return { status: 529, errorType: 'overloaded_error', message: 'Overloaded' };
          }
          return { blocks: [{ type: 'text', text: 'Looks fine.' }], usage: { input: 30, output: 8 }, model: dated(request.model) };
        });
        const recorded = recordedPlugin(`claude-main-agent-${topModel ?? 'own'}-${backend}`, backend);
        const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
        // As the SDK's reference writes it: `agent` names one of `agents`, whose prompt, tools and model the main thread takes.
        const messages = await drain(
          query({
            prompt: 'Review the change.',
            options: { ...(topModel === undefined ? {} : { model: topModel }), cwd: home, env, settingSources: [], agent: 'reviewer', agents: { reviewer: { description: 'Reviews code', prompt: 'You are the reviewer.', tools: ['Read'], model: SUB } } },
          }),
        );
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);

        // On the wire: the agent's prompt, and its model unless the query names one; refused once, then answered.
        const sentTo = topModel ?? SUB;
        expect(mock.requests.map((request) => [request.model, request.system.includes('You are the reviewer.')])).toEqual([
          [sentTo, true],
          [sentTo, true],
        ]);
        expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);
        expect(Object.keys(messages.find((m) => m.type === 'result').modelUsage)).toEqual([sentTo]);
        expectCompletedTurn(recorded.log);

        const doc = onlyTrajectory(atif);
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.agent.name).toBe('reviewer');
        expect(doc.agent.model_name).toBe(dated(sentTo));
        // The refused attempt names the model its request went to; the answer, the one that answered.
        const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
        expect(agent.map((step) => [step.model_name, step.extra?.invocation?.status])).toEqual([
          [sentTo, 'failed'],
          [dated(sentTo), 'completed'],
        ]);
        expect(JSON.stringify(agent[0]!.message)).toContain('overloaded');
        expect(agent[1]!.message).toBe('Looks fine.');
        expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.model)).toEqual([sentTo, sentTo]);
        expect(stepTotals(doc)).toEqual(resultTotals(messages));
        expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
        await sameOnNative(recorded);
      }, 180_000);
    }
  }
});
