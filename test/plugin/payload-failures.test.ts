// A host written as docs/hosts/emitting-hooks.md writes it, whose payload
// function throws once (`pre_tool_call`) and which emits one payload that is
// not an object (`post_approval_response`). Nothing reaches a subscriber for
// the first: only the registry sees it, so the plugin's status() must report
// it from there (as undelivered, in `dropped`, and per hook), and the same
// on memory and native. Other subscribers get exactly what they got before.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { HookRegistry, TurnIds } from '../../src/hooks/index.ts';
import { recordingLogger } from '../hooks/helpers.ts';
import { backends } from '../adapters/support.ts';

async function runHost(backend: 'memory' | 'native') {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-payload-failures-'));
  const logger = recordingLogger();
  const hooks = new HookRegistry({ logger });
  const seen: Array<{ hook: string; tool_call_id?: unknown; keys: string[] }> = [];
  // Another subscriber, registered before the plugin: what it receives must not depend on the counting.
  for (const name of ['pre_tool_call', 'post_tool_call', 'post_approval_response'] as const) {
    hooks.on(name, (payload) => void seen.push({ hook: name, tool_call_id: (payload as { tool_call_id?: unknown }).tool_call_id, keys: Object.keys(payload).sort() }));
  }
  const plugin = createNemoRelayPlugin({
    backend,
    logger,
    env: {},
    settings: { atofEnabled: true, atofOutputDirectory: path.join(dir, 'atof'), atifEnabled: true, atifOutputDirectory: path.join(dir, 'atif') },
  });
  plugin.register(hooks);

  hooks.emit('on_session_start', { session_id: 'payload-failures-s1', model: 'gpt-4o', platform: 'cli' });
  const turn = new TurnIds({ sessionId: 'payload-failures-s1' });
  hooks.emit('pre_llm_call', () => ({ ...turn, user_message: 'Read the notes' }));
  const api = turn.nextApiCall();
  const call = { id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } };
  hooks.emit('pre_api_request', () => ({ ...turn, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Read the notes' }] } } }));
  hooks.emit('post_api_request', () => ({ ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }, usage: { prompt_tokens: 12, completion_tokens: 7 } }));
  const tool = { ...turn, api_request_id: api.api_request_id, tool_call_id: call.id, tool_name: 'read_file' };
  let args: Record<string, unknown> | undefined;
  // The host's payload function fails (here: the arguments are not JSON yet): the event cannot be built.
  hooks.emit('pre_tool_call', () => ({ ...tool, args: (args = JSON.parse(call.function.arguments.slice(1))) }));
  expect(args).toBeUndefined();
  hooks.emit('post_tool_call', () => ({ ...tool, result: 'buy milk', status: 'ok' }));
  // A JavaScript host passing something that is not an object: delivered as an empty payload.
  hooks.emit('post_approval_response', 'once' as never);
  const beforeShutdown = plugin.status();
  hooks.emit('post_llm_call', () => ({ ...turn, assistant_response: 'Buy milk.' }));
  hooks.emit('on_session_end', () => ({ ...turn, completed: true }));
  hooks.emit('on_session_finalize', { session_id: 'payload-failures-s1' });
  await plugin.shutdown({ timeoutMs: 60_000 });
  const atif = readdirSync(path.join(dir, 'atif')).map((file) => JSON.parse(readFileSync(path.join(dir, 'atif', file), 'utf8')));
  return { status: plugin.status(), beforeShutdown, seen, warnings: logger.at('warn').map((record) => record.message), atif };
}

describe('payloads the host could not build, in status()', () => {
  for (const backend of backends()) {
    it(`counts the lost pre_tool_call and the emptied payload, per hook and reason (${backend})`, async () => {
      const { status, beforeShutdown, seen, warnings, atif } = await runHost(backend);
      expect(status.backend.kind, status.backend.reason).toBe(backend);
      // Counted while the host runs, not only after shutdown.
      for (const current of [beforeShutdown, status]) {
        expect(current.counters).toMatchObject({ undelivered: 1, emptyPayloads: 1 });
        expect(current.payloadFailures).toEqual({ thunkThrew: { pre_tool_call: 1 }, notAnObject: { post_approval_response: 1 } });
      }
      // The lost event is a drop like any other: nothing else was dropped here. Its post_tool_call found no span.
      expect(status.counters.dropped).toBe(1);
      expect(status.counters.unmatchedEnds).toBe(1);
      expect(status.counters.errors).toBe(0);
      expect(warnings.filter((message) => message.includes('"pre_tool_call": the payload function threw'))).toHaveLength(1);
      // The other subscriber: no pre_tool_call (nothing to deliver), the post_tool_call with its id, the empty payload stamped.
      expect(seen).toEqual([
        { hook: 'post_tool_call', tool_call_id: 'call_read', keys: ['api_request_id', 'result', 'session_id', 'status', 'task_id', 'telemetry_schema_version', 'tool_call_id', 'tool_name', 'turn_id'] },
        { hook: 'post_approval_response', tool_call_id: undefined, keys: ['telemetry_schema_version'] },
      ]);
      // The trajectory still holds the model call that asked for the tool.
      expect(atif).toHaveLength(1);
      expect(atif[0].steps.flatMap((step: { tool_calls?: Array<{ tool_call_id: string }> }) => step.tool_calls ?? []).map((c: { tool_call_id: string }) => c.tool_call_id)).toEqual(['call_read']);
    });
  }

  it('counts only what failed while the plugin was registered, and keeps it after unregister', async () => {
    const hooks = new HookRegistry({ logger: recordingLogger() });
    const other = hooks.on('pre_tool_call', () => undefined);
    const fail = () => hooks.emit('pre_tool_call', () => {
      throw new Error('no payload');
    });
    fail(); // before the plugin: not its loss
    const plugin = createNemoRelayPlugin({ backend: 'off', logger: recordingLogger(), env: {} });
    const unregister = plugin.register(hooks);
    fail();
    fail();
    unregister();
    fail(); // after: not its loss either
    other();
    expect(hooks.payloadFailures()).toEqual({ thunkThrew: { pre_tool_call: 4 }, notAnObject: {} });
    expect(plugin.status().payloadFailures).toEqual({ thunkThrew: { pre_tool_call: 2 }, notAnObject: {} });
    expect(plugin.status().counters.undelivered).toBe(2);
    await plugin.shutdown();
  });

  it('reads a host without the method, or whose method throws, as counting nothing', async () => {
    const plugin = createNemoRelayPlugin({ backend: 'off', logger: recordingLogger(), env: {} });
    const host = { on: () => () => undefined, use: () => () => undefined };
    const broken = { ...host, payloadFailures: () => { throw new Error('broken host'); } };
    plugin.register(host);
    plugin.register(broken);
    expect(plugin.status().counters).toMatchObject({ undelivered: 0, emptyPayloads: 0, dropped: 0 });
    expect(plugin.status().payloadFailures).toEqual({ thunkThrew: {}, notAnObject: {} });
    await plugin.shutdown();
  });
});
