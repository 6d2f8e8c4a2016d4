// `view` on a host's denied approval: the host emits the hooks itself, asks
// before running `send_email`, the user denies, and the call ends `denied`.
// A deny is one failure, on the call it stopped (docs/cli/view.md,
// "Approvals"): the ATOF file showed it so, but a plugin-host ATIF file (a
// plugins.toml's, whose observed_events keep the approval marks) showed the
// failed call and the deny both as errors, so the session counted two.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TurnIds } from '../../src/hooks/index.ts';
import { recordedPlugin } from '../adapters/support.ts';
import { cliInProcess, tempDir } from './support.ts';
import { all, filesOf, viewed, type JsonNode } from './view-json.ts';

/** The same run as a plugin-host ATIF file (its observed_events keep the approval marks). */
async function pluginHostCopy(atof: string): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['convert', atof, '--out', out, '--style', 'plugin-host'])).code).toBe(0);
  const [name] = readdirSync(out);
  return path.join(out, name!);
}

describe('view: a host\'s denied approval is one failure, from each file', () => {
  it('the call denied carries the error; the deny shows who decided, without a second one', async () => {
    const recorded = recordedPlugin('view-host-deny');
    const { hooks } = recorded;
    hooks.emit('on_session_start', { session_id: 'mail-1', model: 'gpt-4o' });
    const turn = new TurnIds({ sessionId: 'mail-1', taskId: 'task-1', turnId: 'turn-1' });
    hooks.emit('pre_llm_call', { ...turn, user_message: 'Email Bob the report.' });
    const send = { id: 'call_send', type: 'function', function: { name: 'send_email', arguments: '{"to":"bob"}' } };
    const api = turn.nextApiCall();
    hooks.emit('pre_api_request', { ...turn, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Email Bob the report.' }] } } });
    hooks.emit('post_api_request', { ...turn, ...api, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: null, tool_calls: [send] }, finish_reason: 'tool_calls' }] } });
    const ids = { ...turn, api_request_id: api.api_request_id, tool_call_id: send.id, tool_name: 'send_email' };
    hooks.emit('pre_tool_call', { ...ids, args: { to: 'bob' } });
    hooks.emit('pre_approval_request', { ...turn, tool_call_id: send.id, command: 'send_email bob', surface: 'cli' });
    hooks.emit('post_approval_response', { ...turn, tool_call_id: send.id, command: 'send_email bob', choice: 'deny', decided_by: 'user' });
    hooks.emit('post_tool_call', { ...ids, args: { to: 'bob' }, result: 'Tool execution was not approved.', status: 'denied', error_type: 'approval_denied', error_message: 'Tool execution was not approved.' });
    const next = turn.nextApiCall();
    hooks.emit('pre_api_request', { ...turn, ...next, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Email Bob the report.' }] } } });
    hooks.emit('post_api_request', { ...turn, ...next, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: 'You declined.' }, finish_reason: 'stop' }] } });
    hooks.emit('post_llm_call', { ...turn, assistant_response: 'You declined.' });
    hooks.emit('on_session_end', { ...turn, completed: true });
    hooks.emit('on_session_finalize', { session_id: 'mail-1' });
    await recorded.finish();
    const files = filesOf(recorded.dir);
    for (const [kind, file] of Object.entries({ atof: files.atof, host: await pluginHostCopy(files.atof) })) {
      const session = await viewed(file);
      expect(session.totals, kind).toMatchObject({ toolCalls: 1, errors: 1 });
      const call = all(session).find((node) => node.kind === 'tool') as JsonNode & { error?: string };
      expect(call.error, kind).toBe('approval_denied: Tool execution was not approved.');
      const deny = call.children.find((node) => node.title === 'approval: deny') as JsonNode & { error?: string };
      expect(deny.note, kind).toBe('by user');
      expect(deny.error, kind).toBeUndefined();
    }
  }, 30_000);
});
