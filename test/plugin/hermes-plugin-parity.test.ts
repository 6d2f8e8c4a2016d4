// The Hermes plugin's own test suite (tests/plugins/test_nemo_relay_plugin.py),
// ported scenario by scenario against the recording fake. Python's keyword
// arguments become option objects; `fake.events` tuples become `{ op, args }`.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_NAMES } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import type { FakeRelay } from '../../src/testing/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'nrh-seed-'));
}

function freshPlugin(fake: FakeRelay, env: Record<string, string> = {}) {
  return createNemoRelayPlugin({ backend: fake, env, logger: silentLogger });
}

const base = {
  session_id: 's1',
  task_id: 't1',
  turn_id: 'turn-1',
  telemetry_schema_version: 'hermes.observer.v1',
};

function markNames(fake: FakeRelay): string[] {
  return fake.callsOf('mark').map((call) => call.args.name as string);
}

function markCall(fake: FakeRelay, name: string) {
  const call = fake.callsOf('mark').find((c) => c.args.name === name);
  expect(call, `mark ${name}`).toBeDefined();
  return call!;
}

describe('ported Hermes plugin tests', () => {
  it('subscribes exactly the fifteen hooks of the manifest', () => {
    // The fifteen names themselves are pinned once, in test/hooks/names.test.ts.
    expect(HOOK_NAMES).toHaveLength(15);
    const plugin = freshPlugin(createFakeRelay());
    expect(new Set(Object.keys(plugin.handlers))).toEqual(new Set(HOOK_NAMES));
  });

  it('is inert until a hook arrives, like a bundled plugin that is not enabled', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    expect(fake.calls).toEqual([]);
    expect(plugin.status().state).toBe('idle');
  });

  it('uses the relay runtime on session start', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    plugin.handlers.on_session_start({ session_id: 's1' });
    expect(fake.ops()).toContain('pushScope');
  });

  it('emits LLM and tool spans and exports ATIF', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake, {
      HERMES_NEMO_RELAY_ATOF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: path.join(dir, 'atof'),
      HERMES_NEMO_RELAY_ATIF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: path.join(dir, 'atif'),
    });

    plugin.handlers.on_session_start({ ...base, model: 'demo-model', platform: 'cli' });
    plugin.handlers.pre_api_request({
      ...base,
      api_request_id: 'api-1',
      provider: 'openai',
      model: 'demo-model',
      request: { method: 'POST', body: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    plugin.handlers.post_api_request({
      ...base,
      api_request_id: 'api-1',
      response: { assistant_message: { role: 'assistant', content: 'hello' } },
    });
    plugin.handlers.pre_tool_call({ ...base, tool_name: 'read_file', tool_call_id: 'tool-1', args: { path: 'x' } });
    plugin.handlers.post_tool_call({ ...base, tool_name: 'read_file', tool_call_id: 'tool-1', result: '{"ok": true}', status: 'ok' });
    plugin.handlers.on_session_end({ ...base, completed: true, interrupted: false });
    plugin.handlers.on_session_finalize({ ...base, reason: 'shutdown' });
    await plugin.flush();

    const ops = fake.ops();
    for (const op of ['registerAtofExporter', 'registerAtifExporter', 'llmStart', 'llmEnd', 'toolStart', 'toolEnd', 'popScope'] as const) {
      expect(ops).toContain(op);
    }
    expect(existsSync(path.join(dir, 'atif', 'hermes-atif-s1.json'))).toBe(true);
  });

  it('closes the API span with the error on api_request_error', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    plugin.handlers.pre_api_request({
      ...base,
      api_request_id: 'api-err',
      provider: 'openai',
      model: 'demo-model',
      request: { body: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    plugin.handlers.api_request_error({
      ...base,
      api_request_id: 'api-err',
      error: { type: 'RateLimitError', message: 'rate limited' },
      retryable: true,
      reason: 'rate_limit',
    });

    const end = fake.callsOf('llmEnd')[0]!;
    expect(end.args.handle).toMatchObject({ type: 'llm', name: 'openai' });
    expect(end.args.response).toEqual({ error: { type: 'RateLimitError', message: 'rate limited' } });
    expect((end.args.metadata as Record<string, unknown>).reason).toBe('rate_limit');
    expect(plugin.status().openSpans.llm).toBe(0);
  });

  it('emits approval marks', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    plugin.handlers.pre_approval_request({ session_id: 's1', approval_id: 'approval-1', tool_name: 'shell' });
    plugin.handlers.post_approval_response({ session_id: 's1', approval_id: 'approval-1', approved: true });
    expect(markNames(fake)).toContain('hermes.approval.request');
    expect(markNames(fake)).toContain('hermes.approval.response');
  });

  it('emits fallback marks for unmatched ends', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 'missing-api', response: { ok: true } });
    plugin.handlers.api_request_error({
      session_id: 's1',
      api_request_id: 'missing-api',
      error: { type: 'TimeoutError', message: 'timed out' },
    });
    plugin.handlers.post_tool_call({ session_id: 's1', tool_call_id: 'missing-tool', result: { ok: true } });
    const names = markNames(fake);
    expect(names).toContain('hermes.api.response.unmatched');
    expect(names).toContain('hermes.api.error');
    expect(names).toContain('hermes.tool.response.unmatched');
    expect(plugin.status().counters.unmatchedEnds).toBe(3);
  });

  it('promotes trajectory and subagent ids into metadata', () => {
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake);
    plugin.handlers.pre_llm_call({
      session_id: 'parent-session',
      task_id: 'task-1',
      turn_id: 'turn-1',
      telemetry_schema_version: 'hermes.observer.v1',
    });
    plugin.handlers.subagent_start({
      parent_session_id: 'parent-session',
      parent_turn_id: 'turn-1',
      parent_subagent_id: 'parent-sa',
      child_session_id: 'child-session',
      child_subagent_id: 'child-sa',
      child_role: 'leaf',
      telemetry_schema_version: 'hermes.observer.v1',
    });
    plugin.handlers.subagent_stop({
      parent_session_id: 'parent-session',
      parent_turn_id: 'turn-1',
      child_session_id: 'child-session',
      child_role: 'leaf',
      child_status: 'completed',
      telemetry_schema_version: 'hermes.observer.v1',
    });

    const turnMetadata = markCall(fake, 'hermes.turn.start').args.metadata as Record<string, unknown>;
    expect(turnMetadata.session_id).toBe('parent-session');
    expect(turnMetadata.trajectory_id).toBe('parent-session');

    const startMetadata = markCall(fake, 'hermes.subagent.start').args.metadata as Record<string, unknown>;
    expect(startMetadata.parent_session_id).toBe('parent-session');
    expect(startMetadata.parent_trajectory_id).toBe('parent-session');
    expect(startMetadata.child_session_id).toBe('child-session');
    expect(startMetadata.child_trajectory_id).toBe('child-session');
    expect(startMetadata.child_subagent_id).toBe('child-sa');
    expect(startMetadata.child_role).toBe('leaf');

    const stopMetadata = markCall(fake, 'hermes.subagent.stop').args.metadata as Record<string, unknown>;
    expect(stopMetadata.child_status).toBe('completed');
  });

  it('reparents the child session scope under the parent for embedded ATIF', () => {
    const fake = createFakeRelay();
    // Configured as Hermes is (a HERMES_NEMO_RELAY_* variable set): the Hermes plugin's scope names.
    const plugin = freshPlugin(fake, { HERMES_NEMO_RELAY_ATOF_ENABLED: '0' });
    plugin.handlers.on_session_start({ session_id: 'parent-session' });
    plugin.handlers.subagent_start({
      parent_session_id: 'parent-session',
      parent_turn_id: 'turn-1',
      child_session_id: 'child-session',
      child_subagent_id: 'child-sa',
      child_role: 'leaf',
      telemetry_schema_version: 'hermes.observer.v1',
    });
    plugin.handlers.on_session_start({ session_id: 'child-session' });

    const childPush = fake.callsOf('pushScope').find((c) => c.args.name === 'hermes-session-child-session')!;
    expect(childPush.args.parent).toMatchObject({ type: 'scope', name: 'hermes-session-parent-session' });
    const metadata = childPush.args.metadata as Record<string, unknown>;
    expect(metadata.session_id).toBe('child-session');
    expect(metadata.trajectory_id).toBe('child-session');
    expect(metadata.nemo_relay_scope_role).toBe('subagent');
    expect(metadata.subagent_id).toBe('child-sa');
    expect(metadata.parent_session_id).toBe('parent-session');
  });

  function runParentAndChild(plugin: ReturnType<typeof freshPlugin>): void {
    plugin.handlers.on_session_start({ session_id: 'parent-session' });
    plugin.handlers.subagent_start({
      parent_session_id: 'parent-session',
      child_session_id: 'child-session',
      child_subagent_id: 'child-sa',
    });
    plugin.handlers.on_session_start({ session_id: 'child-session' });
    plugin.handlers.on_session_end({ session_id: 'child-session' });
    plugin.handlers.on_session_finalize({ session_id: 'child-session' });
    plugin.handlers.on_session_end({ session_id: 'parent-session' });
    plugin.handlers.on_session_finalize({ session_id: 'parent-session' });
  }

  it('skips the embedded child ATIF file by default', async () => {
    const dir = tempDir();
    const plugin = freshPlugin(createFakeRelay(), {
      HERMES_NEMO_RELAY_ATIF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: path.join(dir, 'atif'),
    });
    runParentAndChild(plugin);
    await plugin.flush();
    expect(existsSync(path.join(dir, 'atif', 'hermes-atif-parent-session.json'))).toBe(true);
    expect(existsSync(path.join(dir, 'atif', 'hermes-atif-child-session.json'))).toBe(false);
  });

  it('writes the embedded child ATIF file in all mode', async () => {
    const dir = tempDir();
    const plugin = freshPlugin(createFakeRelay(), {
      HERMES_NEMO_RELAY_ATIF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: path.join(dir, 'atif'),
      HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE: 'all',
    });
    runParentAndChild(plugin);
    await plugin.flush();
    expect(existsSync(path.join(dir, 'atif', 'hermes-atif-parent-session.json'))).toBe(true);
    expect(existsSync(path.join(dir, 'atif', 'hermes-atif-child-session.json'))).toBe(true);
  });

  it('initializes the relay from plugins.toml instead of the direct ATOF exporter', async () => {
    const dir = tempDir();
    const pluginsToml = path.join(dir, 'plugins.toml');
    const atofDir = path.join(dir, 'exports', 'events');
    const atifDir = path.join(dir, 'exports', 'trajectories');
    writeFileSync(
      pluginsToml,
      `
version = 1

[[components]]
kind = "observability"
enabled = true

[components.config.atof]
enabled = true
output_directory = ${JSON.stringify(atofDir)}

[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(atifDir)}
`,
    );
    const fake = createFakeRelay();
    const plugin = freshPlugin(fake, { HERMES_NEMO_RELAY_PLUGINS_TOML: pluginsToml });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();

    expect(fake.ops()).toContain('initializePluginConfig');
    expect(fake.ops()).not.toContain('registerAtofExporter');
    expect(existsSync(atofDir)).toBe(true);
    expect(existsSync(atifDir)).toBe(true);
  });

  it('does nothing and throws nothing when the relay cannot load', async () => {
    const plugin = createNemoRelayPlugin({
      backend: 'native',
      env: { NEMO_RELAY_HOOKS_BACKEND: 'off' },
      logger: silentLogger,
    });
    expect(() => plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'api-1' })).not.toThrow();
    expect(() => plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 'api-1' })).not.toThrow();
    await plugin.flush();
    expect(plugin.status().backend.kind).toBe('off');
  });
});
