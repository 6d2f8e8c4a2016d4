// The Claude Agent SDK adapter on query options that change how a turn ends or
// what it answers, on the real SDK and its bundled CLI against the loopback
// Anthropic API (test/support/anthropic-mock.ts): `maxTurns` and
// `maxBudgetUsd` reached (the SDK streams an error result, then throws),
// structured output (`outputFormat`), and the program's own `PreToolUse`
// hooks beside the wrapper's, denying a call, changing its input and adding
// context. Each test holds the trajectory to what happened: which tools ran
// and with what, what the model was told, how the turn ended and with which
// error, and the tokens the SDK reports.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`; one
// query per case.
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from '../adapters/support.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { approvalsOf, modelUsageTotals, observations, offlineApi as offlineApiOf, resultTotals, stepTotals, toldTheModel, toolEnds } from '../support/claude-checks.ts';

const MODEL = 'claude-sonnet-4-5-20250929';

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** An in-process MCP server whose one tool says what it was asked, and the calls it ran. */
function lookupServer() {
  const ran: unknown[] = [];
  const ops = sdk.createSdkMcpServer({
    name: 'ops',
    version: '1.0.0',
    tools: [sdk.tool('lookup', 'Looks a word up', { word: z.string() }, async (args) => (ran.push(args), { content: [{ type: 'text', text: `${args.word}: found` }] }))],
  });
  return { ops, ran };
}

/** The query's session end, and that nothing is left open: every tool call started ended, the session was finalized. */
function sessionEnd(log: Recorded['log']): Record<string, unknown> {
  const started = log.filter((entry) => entry.hook === 'pre_tool_call').map((entry) => entry.payload.tool_call_id);
  const ended = log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => entry.payload.tool_call_id);
  expect(ended.sort()).toEqual(started.sort());
  const ends = log.filter((entry) => entry.hook === 'on_session_end');
  expect(ends).toHaveLength(1);
  expect(log.filter((entry) => entry.hook === 'on_session_finalize')).toHaveLength(1);
  return ends[0]!.payload;
}

/** A tool result as the model was sent it, without the reminders the CLI appends to it (the stream shows none). */
function withoutReminders(text: string): string {
  return text.replace(/\n\n<system-reminder>[\s\S]*?<\/system-reminder>/g, '');
}

function postToolCall(log: Recorded['log'], id: string): Record<string, unknown> {
  return log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === id)!.payload;
}

/** Runs the query as the SDK's docs write it; the SDK throws after an error result, which the program catches. */
async function drain(iterable: AsyncIterable<any>): Promise<{ messages: any[]; thrown: unknown }> {
  const messages: any[] = [];
  let thrown: unknown;
  try {
    for await (const message of iterable) messages.push(message);
  } catch (error) {
    thrown = error;
  }
  return { messages, thrown };
}

describe('wrapClaudeAgentSdk: options that end a turn early or shape its answer', () => {
  for (const backend of backends()) {
    it(`maxTurns reached: the tool that ran ends with its result, the turn fails with error_max_turns and the SDK's words (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi(() => ({
        blocks: [
          { type: 'text', text: 'Let me look it up.' },
          { type: 'tool_use', id: 'toolu_lookup', name: 'mcp__ops__lookup', input: { word: 'relay' } },
        ],
        usage: { input: 30, output: 8, cacheRead: 4 },
        model: MODEL,
      }));
      const { ops, ran } = lookupServer();
      const recorded = recordedPlugin(`claude-max-turns-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const { messages, thrown } = await drain(query({ prompt: 'Look up relay.', options: { model: 'claude-sonnet-4-5', cwd: home, env, settingSources: [], maxTurns: 1, mcpServers: { ops }, allowedTools: ['mcp__ops__lookup'] } }));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the SDK did: one request, the tool ran, then the turn limit stopped the query before the next request.
      const results = messages.filter((m) => m.type === 'result');
      expect(results.map((m) => [m.subtype, m.terminal_reason, m.errors])).toEqual([['error_max_turns', 'max_turns', ['Reached maximum number of turns (1)']]]);
      expect(String(thrown)).toContain('Reached maximum number of turns (1)');
      expect(mock.requests).toHaveLength(1);
      expect(ran).toEqual([{ word: 'relay' }]);

      // The call that ran ended with its result (the one the SDK streamed: the model was never sent it).
      const streamed = messages.flatMap((m) => (m.type === 'user' ? m.message.content : [])).find((block: any) => block.tool_use_id === 'toolu_lookup');
      expect(streamed.content).toEqual([{ type: 'text', text: 'relay: found' }]);
      expect(toolEnds(recorded.log)).toEqual({ toolu_lookup: ['ok', 'relay: found'] });
      // The turn ended as the result says: failed, not completed, with the SDK's error.
      expect(sessionEnd(recorded.log)).toMatchObject({ completed: false, failed: true, interrupted: false, error_type: 'error_max_turns', error_message: 'Reached maximum number of turns (1)', result_subtype: 'error_max_turns' });
      expect(recorded.log.some((entry) => entry.hook === 'post_llm_call')).toBe(false);

      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(observations(doc).get('toolu_lookup')!.content).toBe('relay: found');
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual([34, 8]);
    }, 120_000);

    it(`maxBudgetUsd reached: the call cut while running ends interrupted, the one the CLI never took up fails with error_max_budget_usd, as does the turn (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi(() => ({
        blocks: [
          { type: 'tool_use', id: 'toolu_slow', name: 'mcp__ops__slow_lookup', input: { word: 'budget' } },
          { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'notes.txt', content: 'budget' } },
        ],
        usage: { input: 3000, output: 800 },
        model: MODEL,
      }));
      // A tool that returns only once the query is over: the CLI starts it mid-reply and runs the Write after it, one at a time.
      const started: unknown[] = [];
      let release: () => void = () => {};
      const queryOver = new Promise<void>((resolve) => (release = resolve));
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [sdk.tool('slow_lookup', 'Looks a word up, slowly', { word: z.string() }, async (args) => (started.push(args), await queryOver, { content: [{ type: 'text', text: `${args.word}: found` }] }))],
      });
      const hookSaw: string[] = [];
      const recorded = recordedPlugin(`claude-max-budget-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const { messages, thrown } = await drain(
        query({
          prompt: 'Look up budget, then write it down.',
          options: {
            model: 'claude-sonnet-4-5',
            cwd: home,
            env,
            settingSources: [],
            maxBudgetUsd: 0.0001,
            mcpServers: { ops },
            allowedTools: ['mcp__ops__slow_lookup', 'Write'],
            // The program's own hook: it fires for every call the CLI takes up.
            hooks: { PreToolUse: [{ hooks: [async (input) => (hookSaw.push((input as { tool_use_id: string }).tool_use_id), {})] }] },
          },
        }),
      );
      release();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the SDK did: the first answer spent the budget; the CLI stopped with the lookup running and the Write not taken up.
      const result = messages.find((m) => m.type === 'result');
      expect([result.subtype, result.terminal_reason, result.errors]).toEqual(['error_max_budget_usd', 'budget_exhausted', ['Reached maximum budget ($0.0001)']]);
      expect(String(thrown)).toContain('Reached maximum budget ($0.0001)');
      expect(mock.requests).toHaveLength(1);
      expect(started).toEqual([{ word: 'budget' }]);
      expect(hookSaw).toEqual(['toolu_slow']);
      expect(existsSync(path.join(home, 'notes.txt'))).toBe(false);
      expect(messages.some((m) => m.type === 'user')).toBe(false);

      // The lookup was cut while it ran; the Write never ran, and fails with the error that stopped the query.
      expect(postToolCall(recorded.log, 'toolu_slow')).toMatchObject({ status: 'error', error_type: 'Interrupted', result: 'the query ended before the tool returned' });
      expect(postToolCall(recorded.log, 'toolu_write')).toMatchObject({ status: 'error', error_type: 'error_max_budget_usd', error_message: 'Reached maximum budget ($0.0001)', result: 'Reached maximum budget ($0.0001)' });
      expect(sessionEnd(recorded.log)).toMatchObject({ completed: false, failed: true, interrupted: false, error_type: 'error_max_budget_usd', error_message: 'Reached maximum budget ($0.0001)', result_subtype: 'error_max_budget_usd' });

      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(observations(doc).get('toolu_write')!.extra.metadata).toMatchObject({ status: 'error', 'error.type': 'error_max_budget_usd' });
      // The request's tokens are the step's, as modelUsage counts them; the CLI reports this result's main-loop usage as zero.
      expect(stepTotals(doc)).toEqual([3000, 800]);
      expect(modelUsageTotals(messages)).toEqual([3000, 800]);
      expect(resultTotals(messages)).toEqual([0, 0]);
    }, 120_000);

    it(`outputFormat json_schema: the CLI's StructuredOutput call is the one tool call, the turn's answer is result.structured_output (${backend} backend)`, async () => {
      const answer = { city: 'Paris', temperature_c: 21 };
      const { mock, env, home } = await offlineApi((request) => {
        const offered = (request.body.tools ?? []).map((tool: { name: string }) => tool.name);
        if (!offered.includes('StructuredOutput')) throw new Error(`no StructuredOutput tool offered: ${offered.join(', ')}`);
        return { blocks: [{ type: 'tool_use', id: 'toolu_structured', name: 'StructuredOutput', input: answer }], usage: { input: 42, output: 12, cacheRead: 6 }, model: MODEL };
      });
      const recorded = recordedPlugin(`claude-structured-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const schema = { type: 'object', properties: { city: { type: 'string' }, temperature_c: { type: 'number' } }, required: ['city', 'temperature_c'], additionalProperties: false };
      const { messages, thrown } = await drain(query({ prompt: 'The weather in Paris, as JSON.', options: { model: 'claude-sonnet-4-5', cwd: home, env, settingSources: [], outputFormat: { type: 'json_schema', schema } } }));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(thrown).toBeUndefined();

      // On the wire: the CLI offers a StructuredOutput tool whose input is the answer; its call ends the turn, no request follows.
      expect(mock.requests).toHaveLength(1);
      const result = messages.find((m) => m.type === 'result');
      expect(result.subtype).toBe('success');
      expect(result.structured_output).toEqual(answer);

      // The trajectory: that one call, as the model made it and the CLI answered it; nothing else ran.
      expect(toolEnds(recorded.log)).toEqual({ toolu_structured: ['ok', 'Structured output provided successfully'] });
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const calls = (doc.steps as AtifDoc[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['toolu_structured', 'StructuredOutput', answer]]);
      // The turn's answer is the structured result the program got.
      const final = recorded.log.find((entry) => entry.hook === 'post_llm_call')!.payload;
      expect(JSON.parse(String(final.assistant_response))).toEqual(result.structured_output);
      expect(sessionEnd(recorded.log)).toMatchObject({ completed: true, failed: false, result_subtype: 'success' });
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
    }, 120_000);

    it(`the program's own PreToolUse hook beside the wrapper's runs once per call; its denial, changed input and added context are recorded as they happened (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? {
              blocks: [
                { type: 'tool_use', id: 'toolu_deny', name: 'Bash', input: { command: 'rm -f claudefeat-nothing', description: 'Remove a file' } },
                { type: 'tool_use', id: 'toolu_update', name: 'Bash', input: { command: 'echo model', description: 'Echo' } },
                { type: 'tool_use', id: 'toolu_context', name: 'Bash', input: { command: 'echo context', description: 'Echo' } },
              ],
              usage: { input: 30, output: 9 },
              model: MODEL,
            }
          : { blocks: [{ type: 'text', text: 'Done.' }], usage: { input: 60, output: 2 }, model: MODEL },
      );
      const hookRan: string[] = [];
      // As the SDK's hooks docs write it: a PreToolUse matcher for Bash.
      const guard = async (input: any) => {
        hookRan.push(input.tool_use_id);
        const command = String(input.tool_input.command);
        if (command.startsWith('rm ')) return { hookSpecificOutput: { hookEventName: 'PreToolUse' as const, permissionDecision: 'deny' as const, permissionDecisionReason: 'No deleting.' } };
        if (command === 'echo model') return { hookSpecificOutput: { hookEventName: 'PreToolUse' as const, permissionDecision: 'allow' as const, updatedInput: { ...input.tool_input, command: 'echo updated' } } };
        return { hookSpecificOutput: { hookEventName: 'PreToolUse' as const, additionalContext: 'The user is in Paris.' } };
      };
      const recorded = recordedPlugin(`claude-own-hooks-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const { messages, thrown } = await drain(
        query({ prompt: 'Clean up, then echo twice.', options: { model: 'claude-sonnet-4-5', cwd: home, env, settingSources: [], allowedTools: ['Bash'], hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [guard] }] } } }),
      );
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(thrown).toBeUndefined();

      // The program's hook ran exactly once for each call: the wrapper neither dropped nor doubled it.
      expect(hookRan.sort()).toEqual(['toolu_context', 'toolu_deny', 'toolu_update']);
      const told = toldTheModel(mock);
      expect(told.get('toolu_deny')).toMatchObject({ is_error: true });
      expect(told.get('toolu_deny')!.content).toContain('No deleting.');
      // The changed input is what ran; the added context went to the model inside a tool result, in the CLI's words.
      expect(told.get('toolu_update')!.content).toMatch(/^updated\b/);
      expect(mock.requests[1]!.toolResults.some((result) => result.content.includes('The user is in Paris.'))).toBe(true);

      // The denial is a denied call decided by the hook; the changed input an allow that says so; the added context decides nothing.
      expect(approvalsOf(recorded.log, 'toolu_deny')).toEqual([['pre_approval_request', null, null, 'Bash'], ['post_approval_response', 'deny', 'PreToolUse hook', 'No deleting.']]);
      expect(approvalsOf(recorded.log, 'toolu_update')).toEqual([['pre_approval_request', null, null, 'Bash'], ['post_approval_response', 'once', 'PreToolUse hook', 'allowed with changed input']]);
      expect(approvalsOf(recorded.log, 'toolu_context')).toEqual([]);
      // Each observation is the tool's own result as the SDK streamed it: the CLI adds the hook's context (as a reminder) to
      // whichever result it sends next, which the stream does not show.
      expect(toolEnds(recorded.log)).toEqual({ toolu_deny: ['denied', withoutReminders(told.get('toolu_deny')!.content)], toolu_update: ['ok', 'updated'], toolu_context: ['ok', 'context'] });
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      // The calls' arguments are the model's, as it asked and as the next request's history holds them.
      const calls = (doc.steps as AtifDoc[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: AtifDoc) => [call.tool_call_id, call.arguments.command])).toEqual([
        ['toolu_deny', 'rm -f claudefeat-nothing'],
        ['toolu_update', 'echo model'],
        ['toolu_context', 'echo context'],
      ]);
      expect(sessionEnd(recorded.log)).toMatchObject({ completed: true, failed: false, result_subtype: 'success' });
      expect(messages.find((m) => m.type === 'result').permission_denials.map((d: { tool_use_id: string }) => d.tool_use_id)).toEqual(['toolu_deny']);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
    }, 120_000);
  }
});
