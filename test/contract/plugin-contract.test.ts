// The plugin over each backend: the same hook scenarios, emitted through a
// HookRegistry the plugin is registered on, against the fake, the memory
// relay and the native adapter. For the fake, the plugin's requests are read
// from its recorded calls; for memory and native, from the ATOF file they
// wrote (validated, like every ATIF file), and both must tell the same story.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type NemoRelayPlugin } from '../../src/index.ts';
import type { OutputHealth, RelayBackend } from '../../src/relay/contract.ts';
import type { FakeCall, FakeHandle, FakeRelay } from '../../src/testing/index.ts';
import { BACKENDS, nativeLoadError, recordingLogger, tempDir } from './backends.ts';
import { readAtifDir, readValidAtof, type ReadEvent } from './files.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

type Op = [op: string, name: string, parent?: string | null];

/** What the plugin asked the fake for, one entry per call. */
function opsFromFake(calls: readonly FakeCall[]): Op[] {
  const nameOf = (handle: unknown) => (handle as FakeHandle | null | undefined)?.name ?? null;
  const ops: Op[] = [];
  for (const { op, args } of calls) {
    switch (op) {
      case 'pushScope':
        ops.push(['push', String(args.name), nameOf(args.parent)]);
        break;
      case 'popScope':
        ops.push(['pop', String(nameOf(args.handle))]);
        break;
      case 'mark':
        ops.push(['mark', String(args.name), nameOf(args.parent)]);
        break;
      case 'llmStart':
      case 'toolStart':
      case 'executeLlm':
      case 'executeTool':
        ops.push([op.endsWith('Llm') || op === 'llmStart' ? 'llm' : 'tool', String(args.name), nameOf(args.parent)]);
        if (op.startsWith('execute')) ops.push([op === 'executeLlm' ? 'llm.end' : 'tool.end', String(args.name)]);
        break;
      case 'llmEnd':
        ops.push(['llm.end', String(nameOf(args.handle))]);
        break;
      case 'toolEnd':
        ops.push(['tool.end', String(nameOf(args.handle))]);
        break;
      default:
        break;
    }
  }
  return ops;
}

/** The same entries, read back from an ATOF file. */
function opsFromAtof(events: readonly ReadEvent[]): Op[] {
  const names = new Map<string, string>();
  for (const event of events) if (event.kind === 'scope' && event.scope_category === 'start') names.set(event.uuid, event.name);
  const parentOf = (event: ReadEvent) => (event.parent_uuid ? (names.get(event.parent_uuid) ?? null) : null);
  return events.map((event): Op => {
    if (event.kind === 'mark') return ['mark', event.name, parentOf(event)];
    const span = event.category === 'llm' ? 'llm' : event.category === 'tool' ? 'tool' : null;
    if (event.scope_category === 'start') return [span ?? 'push', event.name, parentOf(event)];
    return span ? [`${span}.end`, event.name] : ['pop', event.name];
  });
}

const IDS = { session_id: 's1', task_id: 'task-1', turn_id: 't1' };
const CHILD = { session_id: 'c1', task_id: 'task-c1', turn_id: 'ct1', parent_session_id: 's1' };
const REQUEST = { method: 'POST', body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } };
const RESPONSE = (text: string) => ({
  id: `chatcmpl-${text}`,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});
const TOOL_CALL = { id: 'call-1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } };
const ASKS_FOR_TOOL = {
  id: 'chatcmpl-tool',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [TOOL_CALL] }, finish_reason: 'tool_calls' }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
};
const FOLLOW_UP = {
  method: 'POST',
  body: {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
      { role: 'tool', tool_call_id: 'call-1', content: 'a.txt' },
    ],
  },
};

/** A session with a turn, an API call, an approved tool call and a subagent. */
function emitSession(hooks: HookRegistry): void {
  hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o', platform: 'cli' });
  hooks.emit('pre_llm_call', { ...IDS, user_message: 'hi', conversation_history: [], is_first_turn: true });
  hooks.emit('pre_api_request', { ...IDS, api_request_id: 't1:api:1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', retry_count: 0, request: REQUEST });
  hooks.emit('post_api_request', { ...IDS, api_request_id: 't1:api:1', provider: 'openai', response: ASKS_FOR_TOOL, finish_reason: 'tool_calls' });
  hooks.emit('pre_tool_call', { ...IDS, tool_call_id: 'call-1', tool_name: 'terminal', args: { command: 'ls' } });
  hooks.emit('pre_approval_request', { ...IDS, tool_call_id: 'call-1', command: 'ls', surface: 'cli' });
  hooks.emit('post_approval_response', { ...IDS, tool_call_id: 'call-1', command: 'ls', surface: 'cli', choice: 'once' });
  hooks.emit('post_tool_call', { ...IDS, tool_call_id: 'call-1', tool_name: 'terminal', args: { command: 'ls' }, result: 'a.txt', status: 'ok' });
  hooks.emit('subagent_start', { parent_session_id: 's1', parent_turn_id: 't1', child_session_id: 'c1', child_subagent_id: 'sub-1', child_role: 'helper' });
  hooks.emit('pre_llm_call', { ...CHILD, user_message: 'help', conversation_history: [] });
  hooks.emit('pre_api_request', { ...CHILD, api_request_id: 'ct1:api:1', provider: 'openai', request: { method: 'POST', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'help' }] } } });
  hooks.emit('post_api_request', { ...CHILD, api_request_id: 'ct1:api:1', provider: 'openai', response: RESPONSE('helped') });
  hooks.emit('post_llm_call', { ...CHILD, assistant_response: 'helped' });
  hooks.emit('on_session_finalize', { session_id: 'c1', reason: 'subagent_complete' });
  hooks.emit('subagent_stop', { parent_session_id: 's1', child_session_id: 'c1', child_status: 'completed' });
  hooks.emit('pre_api_request', { ...IDS, api_request_id: 't1:api:2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', retry_count: 0, request: FOLLOW_UP });
  hooks.emit('post_api_request', { ...IDS, api_request_id: 't1:api:2', provider: 'openai', response: RESPONSE('hello'), finish_reason: 'stop' });
  hooks.emit('post_llm_call', { ...IDS, assistant_response: 'hello' });
  hooks.emit('on_session_end', { ...IDS, completed: true });
  hooks.emit('on_session_finalize', { session_id: 's1', reason: 'cli_exit' });
}

const SESSION_OPS: Op[] = [
  ['push', 'hermes-session-s1', null],
  ['mark', 'hermes.turn.start', 'hermes-session-s1'],
  ['llm', 'openai', 'hermes-session-s1'],
  ['llm.end', 'openai'],
  ['tool', 'terminal', 'hermes-session-s1'],
  ['mark', 'hermes.approval.request', 'hermes-session-s1'],
  ['mark', 'hermes.approval.response', 'hermes-session-s1'],
  ['tool.end', 'terminal'],
  ['mark', 'hermes.subagent.start', 'hermes-session-s1'],
  ['push', 'hermes-session-c1', 'hermes-session-s1'],
  ['mark', 'hermes.turn.start', 'hermes-session-c1'],
  ['llm', 'openai', 'hermes-session-c1'],
  ['llm.end', 'openai'],
  ['mark', 'hermes.turn.end', 'hermes-session-c1'],
  ['pop', 'hermes-session-c1'],
  ['mark', 'hermes.subagent.stop', 'hermes-session-s1'],
  ['llm', 'openai', 'hermes-session-s1'],
  ['llm.end', 'openai'],
  ['mark', 'hermes.turn.end', 'hermes-session-s1'],
  ['mark', 'hermes.session.end', 'hermes-session-s1'],
  ['pop', 'hermes-session-s1'],
];

function observabilityToml(dir: string, extraToml = ''): string {
  return writeObservabilityToml(dir, { atofDir: path.join(dir, 'plugin-atof'), atifDir: path.join(dir, 'plugin-atif'), extraToml });
}

const ADAPTIVE = `
[[components]]
kind = "adaptive"
enabled = true

[components.config.tool_parallelism]
mode = "observe_only"
`;

function expectOutputShape(output: OutputHealth): void {
  expect(['atof', 'atif']).toContain(output.kind);
  expect(typeof output.path).toBe('string');
  expect(output.lastWrite === null || !Number.isNaN(Date.parse(output.lastWrite))).toBe(true);
  expect(Number.isInteger(output.bytes) && output.bytes >= 0).toBe(true);
  expect(Number.isInteger(output.errors) && output.errors >= 0).toBe(true);
}

describe.each(BACKENDS)('plugin over the $name backend', (backendCase) => {
  const title = backendCase.available ? 'shared behaviour' : `skipped: native backend cannot load here (${nativeLoadError})`;
  describe.skipIf(!backendCase.available)(title, () => {
    let backend: RelayBackend;
    let dir: string;
    let plugin: NemoRelayPlugin;
    let hooks: HookRegistry;
    let logger: ReturnType<typeof recordingLogger>;

    const envExporters = () => ({
      HERMES_NEMO_RELAY_ATOF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: path.join(dir, 'atof'),
      HERMES_NEMO_RELAY_ATOF_MODE: 'overwrite',
      HERMES_NEMO_RELAY_ATIF_ENABLED: 'true',
      HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: path.join(dir, 'atif'),
      HERMES_NEMO_RELAY_ATIF_AGENT_VERSION: '9.9.9',
    });

    const start = (env: Record<string, string>) => {
      plugin = createNemoRelayPlugin({ backend, env, logger });
      hooks = new HookRegistry({ logger: silentLogger });
      plugin.register(hooks);
    };

    /** The plugin's requests, from the fake's calls or from the ATOF file. */
    const recordedOps = (): Op[] =>
      backendCase.writesFiles
        ? opsFromAtof(readValidAtof(path.join(dir, 'atof', 'hermes-atof.jsonl')).events)
        : opsFromFake((backend as FakeRelay).calls);

    beforeEach(() => {
      backend = backendCase.create();
      dir = tempDir(`plugin-contract-${backendCase.name}`);
      logger = recordingLogger();
    });
    afterEach(async () => {
      await plugin?.shutdown();
      await backend.shutdown?.();
    });

    it('turns a session into the same scopes, spans and marks, in the same order, on every backend', async () => {
      start(envExporters());
      emitSession(hooks);
      await plugin.shutdown();
      expect(recordedOps()).toEqual(SESSION_OPS);
      expect(plugin.status().counters).toMatchObject({ hooks: 20, errors: 0, dropped: 0, unmatchedEnds: 0, abandonedSpans: 0 });
      expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    });

    it('marks the session scope as a session and the child scope as a subagent of it', async () => {
      start(envExporters());
      emitSession(hooks);
      await plugin.shutdown();
      const metadata = (name: string): Record<string, unknown> => {
        if (!backendCase.writesFiles) {
          return (backend as FakeRelay).callsOf('pushScope').find((call) => call.args.name === name)!.args.metadata as Record<string, unknown>;
        }
        const events = readValidAtof(path.join(dir, 'atof', 'hermes-atof.jsonl')).events;
        return events.find((e) => e.name === name && e.scope_category === 'start')!.metadata as Record<string, unknown>;
      };
      expect(metadata('hermes-session-s1')).toMatchObject({ session_id: 's1', trajectory_id: 's1', nemo_relay_scope_role: 'session' });
      expect(metadata('hermes-session-c1')).toMatchObject({
        session_id: 'c1',
        trajectory_id: 'c1',
        nemo_relay_scope_role: 'subagent',
        parent_session_id: 's1',
        parent_trajectory_id: 's1',
        subagent_id: 'sub-1',
      });
    });

    it('writes ATOF where configured and one ATIF trajectory per top-level session, the subagent embedded', async () => {
      start(envExporters());
      emitSession(hooks);
      await plugin.shutdown();
      if (!backendCase.writesFiles) {
        const fake = backend as FakeRelay;
        expect(fake.callsOf('registerAtofExporter').map((call) => call.args)).toEqual([
          { outputDirectory: path.join(dir, 'atof'), filename: 'hermes-atof.jsonl', mode: 'overwrite' },
        ]);
        expect(fake.callsOf('registerAtifExporter').map((call) => [call.args.sessionId, call.args.agentName, call.args.agentVersion, call.args.modelName])).toEqual([
          ['s1', 'Hermes Agent', '9.9.9', 'gpt-4o'],
        ]);
        return;
      }
      const trajectories = readAtifDir(path.join(dir, 'atif'));
      expect([...trajectories.keys()]).toEqual(['hermes-atif-s1.json']);
      const doc = trajectories.get('hermes-atif-s1.json')!;
      expect(doc).toMatchObject({ session_id: 's1', agent: { name: 'Hermes Agent', version: '9.9.9', model_name: 'gpt-4o' } });
      // The subagent ran after the tool call ended, so it is a step of its own that refers to the embedded child.
      expect(doc.steps.map((step) => [step.source, step.message, step.tool_calls?.map((call) => call.function_name) ?? []])).toEqual([
        ['user', 'hi', []],
        ['agent', '', ['terminal']],
        ['agent', '', ['hermes-session-c1']],
        ['agent', 'hello', []],
      ]);
      expect(doc.steps[1]!.observation?.results[0]).toMatchObject({ source_call_id: 'call-1', content: 'a.txt' });
      expect(doc.steps[2]!.observation?.results[0]?.subagent_trajectory_ref).toMatchObject([{ session_id: 'c1' }]);
      expect(doc.subagent_trajectories?.map((child) => child.session_id)).toEqual(['c1']);
      expect(doc.subagent_trajectories?.[0]?.steps.map((step) => step.message)).toEqual(['help', 'helped']);
    });

    it('never throws into the host, whatever the hook payloads, and keeps recording afterwards', async () => {
      start(envExporters());
      const cycle: Record<string, unknown> = { session_id: 'odd' };
      cycle.self = cycle;
      const hostile: unknown[] = [
        cycle,
        { session_id: 10n, api_request_id: Symbol('id') },
        { session_id: { toString: () => { throw new Error('no string'); } } },
        { session_id: 'odd', args: () => 1, result: new Map([[1, 2]]), response: new Error('x') },
        Object.freeze({ session_id: 'frozen' }),
        [],
      ];
      for (const name of Object.keys(plugin.handlers) as HookName[]) {
        for (const payload of hostile) {
          expect(() => hooks.emit(name, payload as never), name).not.toThrow();
        }
        for (const payload of [null, undefined, 42, 'text']) {
          expect(() => plugin.handlers[name](payload as never), name).not.toThrow();
        }
      }
      emitSession(hooks);
      await expect(plugin.flush()).resolves.toBeUndefined();
      await expect(plugin.shutdown()).resolves.toBeUndefined();
      // The well-formed session that followed is complete, in order.
      const ops = recordedOps();
      const first = ops.findIndex(([op, name]) => op === 'push' && name === 'hermes-session-s1');
      expect(first).toBeGreaterThan(0);
      expect(ops.slice(first, first + SESSION_OPS.length)).toEqual(SESSION_OPS);
      if (backendCase.writesFiles) readAtifDir(path.join(dir, 'atif'));
    });

    it('flush() never rejects; shutdown() is idempotent and closes open sessions, ending their open spans', async () => {
      start(envExporters());
      hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
      hooks.emit('pre_llm_call', { ...IDS, user_message: 'hi' });
      hooks.emit('pre_api_request', { ...IDS, api_request_id: 't1:api:1', provider: 'openai', request: REQUEST });
      hooks.emit('pre_tool_call', { ...IDS, tool_call_id: 'call-9', tool_name: 'terminal', args: { command: 'sleep 9' } });
      expect(plugin.status().openSpans).toEqual({ llm: 1, tool: 1 });
      await expect(Promise.all([plugin.flush(), plugin.flush()])).resolves.toEqual([undefined, undefined]);
      const shutdowns = [plugin.shutdown(), plugin.shutdown()];
      expect(shutdowns[0]).toBe(shutdowns[1]);
      await expect(Promise.all(shutdowns)).resolves.toEqual([undefined, undefined]);
      await expect(plugin.shutdown()).resolves.toBeUndefined();
      await expect(plugin.flush()).resolves.toBeUndefined();

      const status = plugin.status();
      expect(status).toMatchObject({ state: 'shutdown', sessions: 0, openSpans: { llm: 0, tool: 0 } });
      expect(status.counters.abandonedSpans).toBe(2);
      // Hooks after shutdown are dropped and counted, never thrown.
      expect(() => hooks.emit('pre_llm_call', { ...IDS, user_message: 'too late' })).not.toThrow();
      expect(plugin.status().counters.dropped).toBe(status.counters.dropped + 1);

      expect(recordedOps()).toEqual([
        ['push', 'hermes-session-s1', null],
        ['mark', 'hermes.turn.start', 'hermes-session-s1'],
        ['llm', 'openai', 'hermes-session-s1'],
        ['tool', 'terminal', 'hermes-session-s1'],
        ['llm.end', 'openai'],
        ['tool.end', 'terminal'],
        ['pop', 'hermes-session-s1'],
      ]);
      if (!backendCase.writesFiles) {
        // Three plugin shutdowns, one backend shutdown.
        expect((backend as FakeRelay).callsOf('shutdown')).toHaveLength(1);
        return;
      }
      const events = readValidAtof(path.join(dir, 'atof', 'hermes-atof.jsonl')).events;
      const llmEnd = events.find((e) => e.category === 'llm' && e.scope_category === 'end')!;
      const toolEnd = events.find((e) => e.category === 'tool' && e.scope_category === 'end')!;
      expect(llmEnd.metadata).toMatchObject({ 'error.type': 'session_closed', api_request_id: 't1:api:1' });
      expect(toolEnd.metadata).toMatchObject({ 'error.type': 'session_closed', 'otel.status_code': 'ERROR' });
      // The closed session's (partial) trajectory was written.
      const trajectories = readAtifDir(path.join(dir, 'atif'));
      expect(trajectories.get('hermes-atif-s1.json')?.steps.map((step) => step.source)).toEqual(['user', 'agent']);
    });

    it('runs managed execution through the middleware: the host gets its own result and its original error', async () => {
      start({ HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir, ADAPTIVE) });
      hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
      await plugin.flush();
      const response = RESPONSE('managed');
      const result = await hooks.execute(
        'llm_execution',
        { ...IDS, provider: 'openai', api_mode: 'chat_completions', request: REQUEST.body } as never,
        async () => response,
      );
      expect(result).toBe(response);
      class ToolFailure extends Error {
        override readonly name = 'ToolFailure';
        readonly exitCode = 2;
      }
      const failure = new ToolFailure('exit 2');
      await expect(
        hooks.execute('tool_execution', { ...IDS, tool_call_id: 'call-m', tool_name: 'terminal', args: { command: 'false' } } as never, async () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      const value = { ok: true };
      await expect(
        hooks.execute('tool_execution', { ...IDS, tool_call_id: 'call-n', tool_name: 'read_file', args: { path: 'a' } } as never, () => value),
      ).resolves.toBe(value);
      hooks.emit('on_session_finalize', { session_id: 's1' });
      await plugin.shutdown();

      const expected: Op[] = [
        ['push', 'hermes-session-s1', null],
        ['llm', 'openai.chat_completions', 'hermes-session-s1'],
        ['llm.end', 'openai.chat_completions'],
        ['tool', 'terminal', 'hermes-session-s1'],
        ['tool.end', 'terminal'],
        ['tool', 'read_file', 'hermes-session-s1'],
        ['tool.end', 'read_file'],
        ['pop', 'hermes-session-s1'],
      ];
      if (!backendCase.writesFiles) {
        expect(opsFromFake((backend as FakeRelay).calls)).toEqual(expected);
        return;
      }
      const events = readValidAtof(path.join(dir, 'plugin-atof', 'events.jsonl')).events;
      expect(opsFromAtof(events)).toEqual(expected);
      const failedEnd = events.find((e) => e.name === 'terminal' && e.scope_category === 'end')!;
      expect(failedEnd.metadata).toMatchObject({ 'otel.status_code': 'ERROR', 'exception.type': 'ToolFailure' });
    });

    it('activates plugins.toml once for the process, keeps it across sessions and closes it at shutdown', async () => {
      start({ HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) });
      emitSession(hooks);
      await plugin.flush();
      // The last session closing does not tear the document down: the next session records through it at once.
      expect(plugin.status().pluginConfig).toMatchObject({ active: true, dynamic: false });
      expect(plugin.status().pluginConfig.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
      hooks.emit('on_session_start', { session_id: 's2' });
      expect(plugin.status().queuedHooks).toBe(0);
      await plugin.flush();
      expect(plugin.status().pluginConfig.active).toBe(true);
      hooks.emit('on_session_finalize', { session_id: 's2' });
      await plugin.shutdown();
      expect(plugin.status().pluginConfig.active).toBe(false);

      if (!backendCase.writesFiles) {
        const fake = backend as FakeRelay;
        expect(fake.ops().filter((op) => op === 'initializePluginConfig' || op === 'activation.close')).toEqual([
          'initializePluginConfig',
          'activation.close',
        ]);
        // The document owns the exporters: the env ones are not registered.
        expect(fake.callsOf('registerAtifExporter')).toEqual([]);
        return;
      }
      const events = readValidAtof(path.join(dir, 'plugin-atof', 'events.jsonl')).events;
      expect(opsFromAtof(events).slice(0, SESSION_OPS.length)).toEqual(SESSION_OPS);
      expect(events.filter((e) => e.name === 'hermes-session-s2')).toHaveLength(2);
      const trajectories = [...readAtifDir(path.join(dir, 'plugin-atif')).values()];
      // s2 made no model call: the plugins.toml-managed file is written as native writes it, with no step.
      expect(trajectories).toHaveLength(2);
      expect(trajectories.filter((t) => t.steps.length > 0)).toHaveLength(1);
    });

    it('reports status() with the same shape on every backend', async () => {
      start(envExporters());
      hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
      hooks.emit('pre_api_request', { ...IDS, api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'ls?' }] } } });
      hooks.emit('post_api_request', { ...IDS, api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'running ls' } }] } });
      hooks.emit('pre_tool_call', { ...IDS, tool_call_id: 'call-1', tool_name: 'terminal', args: {} });
      await plugin.flush();
      const status = plugin.status();
      expect(status).toMatchObject({
        state: 'ready',
        backend: { kind: 'custom', reason: `backend object passed by the host (kind ${backendCase.name})` },
        sessions: 1,
        openSpans: { llm: 0, tool: 1 },
        queuedHooks: 0,
        pluginConfig: { path: '', active: false, dynamic: false, diagnostics: [] },
        diagnostics: [],
      });
      for (const value of Object.values(status.counters)) expect(Number.isInteger(value) && value >= 0).toBe(true);
      expect(status.counters.hooks).toBe(4);
      expect(status.counters.events).toBeGreaterThanOrEqual(4);
      for (const output of status.outputs) expectOutputShape(output);
      if (backendCase.writesFiles) {
        expect(status.outputs.find((o) => o.kind === 'atof')?.path).toBe(path.join(dir, 'atof', 'hermes-atof.jsonl'));
        hooks.emit('on_session_end', { session_id: 's1' });
        await plugin.flush();
        const atif = plugin.status().outputs.find((o) => o.kind === 'atif');
        expect(atif).toMatchObject({ path: path.join(dir, 'atif', 'hermes-atif-s1.json'), errors: 0 });
        expect(atif!.bytes).toBe(fs.statSync(atif!.path).size);
      }
    });
  });
});
