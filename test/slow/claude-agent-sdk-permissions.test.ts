// The Claude Agent SDK adapter on the programs that decide what a tool call
// may do, on the real SDK and its bundled CLI against the loopback Anthropic
// API (test/support/anthropic-mock.ts): canUseTool allowing (with changed
// input) and denying with a message, the caller's PreToolUse and
// PermissionRequest hooks denying and allowing, the CLI's own permission
// modes refusing calls, a denial that stops the turn, and
// interrupt() cutting a turn of a streaming-input conversation. Each test
// holds the trajectory to what the program did: which tools ran and with
// what, what the model was told (the tool results the mock received), who
// decided, and the SDK's own result messages.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`.
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { approvalsOf, observations, offlineApi as offlineApiOf, resultTotals, stepTotals, toldTheModel, toolEnds } from '../support/claude-checks.ts';

const MODEL = 'claude-perm-2026-01-01';

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('wrapClaudeAgentSdk: who decided what a tool call may do', () => {
  for (const backend of backends()) {
    it(`records canUseTool's and the caller's PreToolUse hooks' decisions as approvals, and a denied call as denied with what the model was told (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? {
              blocks: [
                { type: 'text', text: 'Working on it.' },
                { type: 'tool_use', id: 'toolu_weather', name: 'mcp__ops__get_weather', input: { city: 'Paris' } },
                { type: 'tool_use', id: 'toolu_delete', name: 'mcp__ops__delete_file', input: { path: '/etc/hosts' } },
                { type: 'tool_use', id: 'toolu_secret', name: 'mcp__ops__read_secret', input: { name: 'db' } },
                { type: 'tool_use', id: 'toolu_deploy', name: 'mcp__ops__deploy', input: { env: 'prod' } },
                { type: 'tool_use', id: 'toolu_broken', name: 'mcp__ops__broken', input: { x: 1 } },
              ],
              usage: { input: 40, output: 30, cacheRead: 8 },
              model: MODEL,
            }
          : { blocks: [{ type: 'text', text: 'Done, with two refusals.' }], usage: { input: 90, output: 9 }, model: MODEL },
      );
      const ran: Array<[string, unknown]> = [];
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [
          sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async (args) => (ran.push(['get_weather', args]), { content: [{ type: 'text', text: `${args.city}: sunny` }] })),
          sdk.tool('delete_file', 'Deletes a file', { path: z.string() }, async (args) => (ran.push(['delete_file', args]), { content: [{ type: 'text', text: 'deleted' }] })),
          sdk.tool('read_secret', 'Reads a secret', { name: z.string() }, async (args) => (ran.push(['read_secret', args]), { content: [{ type: 'text', text: 'hunter2' }] })),
          sdk.tool('deploy', 'Deploys', { env: z.string() }, async (args) => (ran.push(['deploy', args]), { content: [{ type: 'text', text: `deployed to ${args.env}` }] })),
          sdk.tool('broken', 'Always fails', { x: z.number() }, async () => {
            throw new Error('tool exploded');
          }),
        ],
      });
      const recorded = recordedPlugin(`claude-permissions-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      // As the SDK's permission docs write it: a canUseTool callback, and PreToolUse hooks with matchers.
      for await (const message of query({
        prompt: 'Check the weather, clean up, read the db secret, deploy.',
        options: {
          model: 'claude-perm',
          cwd: home,
          env,
          settingSources: [],
          mcpServers: { ops },
          canUseTool: async (toolName, input) => {
            if (toolName === 'mcp__ops__delete_file') return { behavior: 'deny', message: 'Deleting files is not allowed.' };
            if (toolName === 'mcp__ops__get_weather') return { behavior: 'allow', updatedInput: { ...input, city: 'Lyon' } };
            return { behavior: 'allow', updatedInput: input };
          },
          hooks: {
            PreToolUse: [
              { matcher: 'mcp__ops__read_secret', hooks: [async () => ({ hookSpecificOutput: { hookEventName: 'PreToolUse' as const, permissionDecision: 'deny' as const, permissionDecisionReason: 'Secrets stay in the vault.' } })] },
              { matcher: 'mcp__ops__deploy', hooks: [async () => ({ hookSpecificOutput: { hookEventName: 'PreToolUse' as const, permissionDecision: 'allow' as const, updatedInput: { env: 'staging' } } })] },
            ],
          },
        },
      })) {
        messages.push(message);
      }
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the program did: the allowed calls ran with the input the decisions gave them; the denied ones never ran.
      expect(ran.sort()).toEqual([['deploy', { env: 'staging' }], ['get_weather', { city: 'Lyon' }]]);
      expect(messages.filter((m) => m.type === 'result').map((m) => [m.subtype, m.permission_denials.map((d: any) => d.tool_use_id).sort()])).toEqual([['success', ['toolu_delete', 'toolu_secret']]]);
      const told = toldTheModel(mock);

      // Who decided, and how: canUseTool (a person's surface) names no decider; a hook does.
      expect(approvalsOf(recorded.log, 'toolu_weather')).toEqual([['pre_approval_request', null, null, 'mcp__ops__get_weather'], ['post_approval_response', 'once', null, 'allowed with changed input']]);
      expect(approvalsOf(recorded.log, 'toolu_delete')).toEqual([['pre_approval_request', null, null, 'mcp__ops__delete_file'], ['post_approval_response', 'deny', null, 'Deleting files is not allowed.']]);
      expect(approvalsOf(recorded.log, 'toolu_secret')).toEqual([['pre_approval_request', null, null, 'mcp__ops__read_secret'], ['post_approval_response', 'deny', 'PreToolUse hook', 'Secrets stay in the vault.']]);
      expect(approvalsOf(recorded.log, 'toolu_deploy')).toEqual([['pre_approval_request', null, null, 'mcp__ops__deploy'], ['post_approval_response', 'once', 'PreToolUse hook', 'allowed with changed input']]);
      expect(approvalsOf(recorded.log, 'toolu_broken')).toEqual([['pre_approval_request', null, null, 'mcp__ops__broken'], ['post_approval_response', 'once', null, null]]);
      // Each approval comes after its call's start and before its end.
      const order = recorded.log.map((entry) => `${entry.hook}:${String(entry.payload.tool_call_id ?? '')}`);
      for (const id of ['toolu_weather', 'toolu_delete', 'toolu_secret', 'toolu_deploy', 'toolu_broken']) {
        expect(order.indexOf(`pre_tool_call:${id}`)).toBeLessThan(order.indexOf(`pre_approval_request:${id}`));
        expect(order.indexOf(`post_approval_response:${id}`)).toBeLessThan(order.indexOf(`post_tool_call:${id}`));
      }

      // How each call ended: a denied call is `denied` (not a tool error), its result the text the model was told.
      expect(toolEnds(recorded.log)).toEqual({
        toolu_weather: ['ok', 'Lyon: sunny'],
        toolu_delete: ['denied', told.get('toolu_delete')!.content],
        toolu_secret: ['denied', told.get('toolu_secret')!.content],
        toolu_deploy: ['ok', 'deployed to staging'],
        toolu_broken: ['error', 'tool exploded'],
      });
      expect(told.get('toolu_delete')!.content).toBe('Deleting files is not allowed.');
      expect(told.get('toolu_secret')!.content).toContain('Secrets stay in the vault.');

      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const seen = observations(doc);
      expect(Object.fromEntries([...seen].map(([id, result]) => [id, result.extra.metadata.status]))).toEqual({ toolu_weather: 'ok', toolu_delete: 'denied', toolu_secret: 'denied', toolu_deploy: 'ok', toolu_broken: 'error' });
      expect(seen.get('toolu_delete')!.content).toBe(told.get('toolu_delete')!.content);
      // The trajectory's arguments are the model's; the approval says the input changed.
      const calls = (doc.steps as AtifDoc[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.find((call: AtifDoc) => call.tool_call_id === 'toolu_weather').arguments).toEqual({ city: 'Paris' });
      // The ATOF file has every decision as an approval mark.
      const marks = atof.filter((event) => event.kind === 'mark' && event.name === 'hermes.approval.response');
      expect(marks.map((mark) => [mark.data?.tool_call_id ?? mark.metadata?.tool_call_id, mark.data?.choice ?? mark.metadata?.choice]).sort()).toEqual([
        ['toolu_broken', 'once'],
        ['toolu_delete', 'deny'],
        ['toolu_deploy', 'once'],
        ['toolu_secret', 'deny'],
        ['toolu_weather', 'once'],
      ]);
      // Token totals are the SDK's own.
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
    }, 120_000);
  }

  for (const mode of ['plan', 'dontAsk', 'default'] as const) {
    it(`records a call the CLI's permission mode '${mode}' refused as denied by it, without a canUseTool`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? {
              blocks: [
                { type: 'tool_use', id: 'toolu_weather', name: 'mcp__ops__get_weather', input: { city: 'Paris' } },
                { type: 'tool_use', id: 'toolu_time', name: 'mcp__ops__time', input: {} },
              ],
              usage: { input: 12, output: 6 },
              model: MODEL,
            }
          : { blocks: [{ type: 'text', text: 'I could not check the weather.' }], usage: { input: 30, output: 7 }, model: MODEL },
      );
      const ran: string[] = [];
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [
          sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async (args) => (ran.push('get_weather'), { content: [{ type: 'text', text: `${args.city}: sunny` }] })),
          sdk.tool('time', 'The time', {}, async () => (ran.push('time'), { content: [{ type: 'text', text: '12:00' }] })),
        ],
      });
      const recorded = recordedPlugin(`claude-permission-mode-${mode}`);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      for await (const message of query({ prompt: 'Weather and time?', options: { model: 'claude-perm', cwd: home, env, settingSources: [], mcpServers: { ops }, allowedTools: ['mcp__ops__time'], permissionMode: mode } })) {
        messages.push(message);
      }
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const refusals = messages.filter((m) => m.type === 'system' && m.subtype === 'permission_denied');
      const refused = refusals.map((m) => m.tool_use_id).sort();
      // Plan mode refuses every call; the others refuse what is not allowed.
      expect(refused).toEqual(mode === 'plan' ? ['toolu_time', 'toolu_weather'] : ['toolu_weather']);
      expect(ran).toEqual(mode === 'plan' ? [] : ['time']);
      const told = toldTheModel(mock);
      for (const refusal of refusals) {
        expect(approvalsOf(recorded.log, refusal.tool_use_id)).toEqual([
          ['pre_approval_request', null, null, refusal.decision_reason ?? refusal.tool_name],
          ['post_approval_response', 'deny', refusal.decision_reason_type ?? 'permissions', refusal.message],
        ]);
        expect(toolEnds(recorded.log)[refusal.tool_use_id]).toEqual(['denied', told.get(refusal.tool_use_id)!.content]);
      }
      if (mode !== 'plan') {
        expect(approvalsOf(recorded.log, 'toolu_time')).toEqual([]);
        expect(toolEnds(recorded.log).toolu_time).toEqual(['ok', '12:00']);
      }
      expect(validateAtif(atif[0]!)).toEqual([]);
      expect(stepTotals(atif[0]!)).toEqual(resultTotals(messages));
    }, 120_000);
  }

  for (const [destination, choice] of [['session', 'session'], ['localSettings', 'always']] as const) {
    it(`records an "always allow" as lasting: \`${choice}\` for a rule kept in ${destination}, and the later call the rule allowed unasked`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? { blocks: [{ type: 'tool_use', id: 'toolu_w1', name: 'mcp__ops__get_weather', input: { city: 'Paris' } }], usage: { input: 12, output: 6 }, model: MODEL }
          : request.assistantTurns === 1
            ? { blocks: [{ type: 'tool_use', id: 'toolu_w2', name: 'mcp__ops__get_weather', input: { city: 'Rome' } }], usage: { input: 20, output: 6 }, model: MODEL }
            : { blocks: [{ type: 'text', text: 'Sunny in both.' }], usage: { input: 30, output: 5 }, model: MODEL },
      );
      const ops = sdk.createSdkMcpServer({
        name: 'ops',
        version: '1.0.0',
        tools: [sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async (args) => ({ content: [{ type: 'text', text: `${args.city}: sunny` }] }))],
      });
      const recorded = recordedPlugin(`claude-permission-lasting-${destination}`);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const asked: string[] = [];
      const messages: any[] = [];
      // As the SDK's permission docs write "always allow": the allow returns a rule for the rest of the session.
      for await (const message of query({
        prompt: 'Weather in Paris, then Rome?',
        options: {
          model: 'claude-perm',
          cwd: home,
          env,
          settingSources: [],
          mcpServers: { ops },
          canUseTool: async (toolName, input, { toolUseID }) => {
            asked.push(toolUseID);
            return { behavior: 'allow', updatedInput: input, updatedPermissions: [{ type: 'addRules', rules: [{ toolName }], behavior: 'allow', destination }] };
          },
        },
      })) {
        messages.push(message);
      }
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      // The CLI keeps a session rule at once: it asked about the first call only. A rule for a settings file goes through
      // the file (which this query does not read back, `settingSources: []`), so the CLI may ask again.
      expect(asked[0]).toBe('toolu_w1');
      if (destination === 'session') expect(asked).toEqual(['toolu_w1']);
      expect(toolEnds(recorded.log)).toEqual({ toolu_w1: ['ok', 'Paris: sunny'], toolu_w2: ['ok', 'Rome: sunny'] });
      // Each call asked about has its request and lasting answer; a call the rule let through has none.
      for (const id of ['toolu_w1', 'toolu_w2']) {
        const expected = asked.includes(id) ? [['pre_approval_request', null, null, 'mcp__ops__get_weather'], ['post_approval_response', choice, null, null]] : [];
        expect(approvalsOf(recorded.log, id), id).toEqual(expected);
      }
      expect(mock.requests).toHaveLength(3);
      expect(validateAtif(atif[0]!)).toEqual([]);
      expect(stepTotals(atif[0]!)).toEqual(resultTotals(messages));
    }, 120_000);
  }

  it('records a PermissionRequest hook\'s decisions once each, though the CLI reports its denial too', async () => {
    const { mock, env, home } = await offlineApi((request) =>
      request.assistantTurns === 0
        ? {
            blocks: [
              { type: 'tool_use', id: 'toolu_weather', name: 'mcp__ops__get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_delete', name: 'mcp__ops__delete_file', input: { path: '/etc/hosts' } },
            ],
            usage: { input: 12, output: 6 },
            model: MODEL,
          }
        : { blocks: [{ type: 'text', text: 'Paris is sunny; I may not delete.' }], usage: { input: 30, output: 7 }, model: MODEL },
    );
    const ops = sdk.createSdkMcpServer({
      name: 'ops',
      version: '1.0.0',
      tools: [
        sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async (args) => ({ content: [{ type: 'text', text: `${args.city}: sunny` }] })),
        sdk.tool('delete_file', 'Deletes a file', { path: z.string() }, async () => ({ content: [{ type: 'text', text: 'deleted' }] })),
      ],
    });
    const recorded = recordedPlugin('claude-permission-request');
    const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const messages: any[] = [];
    for await (const message of query({
      prompt: 'Weather, then delete /etc/hosts.',
      options: {
        model: 'claude-perm',
        cwd: home,
        env,
        settingSources: [],
        mcpServers: { ops },
        hooks: {
          PermissionRequest: [
            {
              hooks: [
                async (input) => {
                  const deny = (input as { tool_name: string }).tool_name === 'mcp__ops__delete_file';
                  return { hookSpecificOutput: { hookEventName: 'PermissionRequest' as const, decision: deny ? { behavior: 'deny' as const, message: 'Not on this host.' } : { behavior: 'allow' as const } } };
                },
              ],
            },
          ],
        },
      },
    })) {
      messages.push(message);
    }
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The CLI reports the hook's denial as a permission_denied of its own; the trajectory has the decision once.
    expect(messages.filter((m) => m.type === 'system' && m.subtype === 'permission_denied').map((m) => m.tool_use_id)).toEqual(['toolu_delete']);
    expect(approvalsOf(recorded.log, 'toolu_weather')).toEqual([['pre_approval_request', null, null, 'mcp__ops__get_weather'], ['post_approval_response', 'once', 'PermissionRequest hook', null]]);
    expect(approvalsOf(recorded.log, 'toolu_delete')).toEqual([['pre_approval_request', null, null, 'mcp__ops__delete_file'], ['post_approval_response', 'deny', 'PermissionRequest hook', 'Not on this host.']]);
    const told = toldTheModel(mock);
    expect(toolEnds(recorded.log)).toEqual({ toolu_weather: ['ok', 'Paris: sunny'], toolu_delete: ['denied', told.get('toolu_delete')!.content] });
    expect(validateAtif(atif[0]!)).toEqual([]);
    expect(stepTotals(atif[0]!)).toEqual(resultTotals(messages));
  }, 120_000);

  it('records a denial that stops the turn (interrupt: true) as a denied call and an interrupted turn, though the SDK throws', async () => {
    const { mock, env, home } = await offlineApi(() => ({
      blocks: [
        { type: 'tool_use', id: 'toolu_wipe', name: 'mcp__ops__wipe', input: { disk: 'all' } },
        { type: 'tool_use', id: 'toolu_time', name: 'mcp__ops__time', input: {} },
      ],
      usage: { input: 14, output: 6 },
      model: MODEL,
    }));
    const ran: string[] = [];
    const ops = sdk.createSdkMcpServer({
      name: 'ops',
      version: '1.0.0',
      tools: [
        sdk.tool('wipe', 'Wipes a disk', { disk: z.string() }, async () => (ran.push('wipe'), { content: [{ type: 'text', text: 'wiped' }] })),
        sdk.tool('time', 'The time', {}, async () => (ran.push('time'), { content: [{ type: 'text', text: '12:00' }] })),
      ],
    });
    const recorded = recordedPlugin('claude-deny-interrupt');
    const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const messages: any[] = [];
    let thrown: unknown;
    try {
      for await (const message of query({
        prompt: 'Wipe everything, then tell me the time.',
        options: {
          model: 'claude-perm',
          cwd: home,
          env,
          settingSources: [],
          mcpServers: { ops },
          canUseTool: async (toolName, input) => (toolName === 'mcp__ops__wipe' ? { behavior: 'deny', message: 'Never. Stopping here.', interrupt: true } : { behavior: 'allow', updatedInput: input }),
        },
      })) {
        messages.push(message);
      }
    } catch (error) {
      thrown = error;
    }
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The SDK reports the stopped turn as an error result, then throws it.
    expect(String(thrown)).toContain('error result');
    expect(messages.filter((m) => m.type === 'result').map((m) => m.terminal_reason)).toEqual(['aborted_tools']);
    expect(ran).toEqual([]);
    expect(approvalsOf(recorded.log, 'toolu_wipe')).toEqual([['pre_approval_request', null, null, 'mcp__ops__wipe'], ['post_approval_response', 'deny', null, 'Never. Stopping here.']]);
    // The turn stopped before another request: the call's result is the tool_result the SDK streamed.
    expect(mock.requests).toHaveLength(1);
    const streamed = messages.flatMap((m) => (m.type === 'user' && Array.isArray(m.message.content) ? m.message.content : [])).find((block: any) => block.tool_use_id === 'toolu_wipe');
    expect(toolEnds(recorded.log).toolu_wipe).toEqual(['denied', streamed.content]);
    expect(toolEnds(recorded.log).toolu_time![0]).toBe('error');
    const end = recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload;
    expect(end).toMatchObject({ completed: false, interrupted: true, failed: false, result_subtype: 'error_during_execution' });
    expect(validateAtif(atif[0]!)).toEqual([]);
    expect(stepTotals(atif[0]!)).toEqual(resultTotals(messages));
  }, 120_000);

  it('records a turn cut by interrupt() as interrupted, not failed, and the next turn of the same conversation as its own', async () => {
    const { env, home, mock } = await offlineApi((request) => {
      const asked = JSON.stringify(request.body.messages);
      if (!asked.includes('second question')) {
        return { blocks: [{ type: 'tool_use', id: 'toolu_slow', name: 'mcp__ops__slow', input: {} }], usage: { input: 10, output: 4 }, model: MODEL };
      }
      return { blocks: [{ type: 'text', text: 'second answer' }], usage: { input: 25, output: 5, cacheRead: 3 }, model: MODEL };
    });
    let started: () => void = () => {};
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    let release: () => void = () => {};
    const ops = sdk.createSdkMcpServer({
      name: 'ops',
      version: '1.0.0',
      tools: [
        sdk.tool('slow', 'Takes its time', {}, async () => {
          started();
          await new Promise<void>((resolve) => (release = resolve));
          return { content: [{ type: 'text', text: 'finally' }] };
        }),
      ],
    });
    const recorded = recordedPlugin('claude-interrupt');
    const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const say = (content: string) => ({ type: 'user' as const, message: { role: 'user' as const, content }, parent_tool_use_id: null, session_id: '' });
    let firstResult: () => void = () => {};
    const firstDone = new Promise<void>((resolve) => (firstResult = resolve));
    async function* conversation() {
      yield say('first question');
      await firstDone;
      yield say('second question');
    }
    const q = query({ prompt: conversation(), options: { model: 'claude-perm', cwd: home, env, settingSources: [], mcpServers: { ops }, allowedTools: ['mcp__ops__slow'] } });
    void toolStarted.then(() => q.interrupt());
    const results: any[] = [];
    for await (const message of q) {
      if (message.type !== 'result') continue;
      results.push(message);
      if (results.length === 1) firstResult();
      else break;
    }
    release();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(results.map((m) => [m.subtype, m.terminal_reason])).toEqual([
      ['error_during_execution', 'aborted_tools'],
      ['success', 'completed'],
    ]);
    const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.completed, entry.payload.interrupted, entry.payload.failed]);
    expect(ends).toEqual([
      [false, true, false],
      [true, false, false],
    ]);
    expect(recorded.log.filter((entry) => entry.hook === 'on_session_start')).toHaveLength(1);
    // The cut call ended with what the model was told about it, as a failure (it never returned).
    const told = toldTheModel(mock);
    expect(toolEnds(recorded.log).toolu_slow).toEqual(['error', told.get('toolu_slow')!.content]);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect((doc.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['first question', 'second question']);
    expect(stepTotals(doc)).toEqual(resultTotals(results));
  }, 120_000);
});
