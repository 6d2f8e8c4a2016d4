import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { HookHost } from '../../src/index.ts';
import { shapeLlmResponse } from '../../src/plugin/llm-response.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

function tomlFile(body: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-managed-'));
  const file = path.join(dir, 'plugins.toml');
  writeFileSync(file, body);
  return file;
}

const ADAPTIVE = `version = 1

[[components]]
kind = "adaptive"
enabled = true

[components.config.tool_parallelism]
mode = "parallel_safe"
`;

function recordingHost() {
  const hooks: string[] = [];
  const middleware: string[] = [];
  const host: HookHost = {
    on: (name) => {
      hooks.push(name);
      return () => {};
    },
    use: (kind) => {
      middleware.push(kind);
      return () => {};
    },
  };
  return { host, hooks, middleware };
}

describe('managed execution', () => {
  it('installs no execution middleware when neither adaptive nor dynamic plugins are configured', () => {
    const plugin = createNemoRelayPlugin({ backend: createFakeRelay(), env: {}, logger: silentLogger });
    const { host, hooks, middleware } = recordingHost();
    plugin.register(host);
    expect(hooks).toHaveLength(15);
    expect(middleware).toEqual([]);
  });

  it('installs the execution middlewares when plugins.toml enables the adaptive component', () => {
    const plugin = createNemoRelayPlugin({
      backend: createFakeRelay(),
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) },
      logger: silentLogger,
    });
    const { host, middleware } = recordingHost();
    plugin.register(host);
    expect(middleware).toEqual(['llm_execution', 'tool_execution']);
  });

  it('runs LLM calls through the relay, recording the shaped response and returning the raw one', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) },
      logger: silentLogger,
    });
    await plugin.ready;
    await plugin.flush();
    const raw = {
      model: 'gpt-x',
      choices: [{ message: { role: 'assistant', content: 'hi', tool_calls: [] }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    };
    const result = await plugin.llmExecution(
      { session_id: 's1', api_mode: 'anthropic_messages', model: 'claude', request: { messages: [] } },
      () => raw,
    );
    expect(result).toBe(raw);
    const call = fake.callsOf('executeLlm')[0]!;
    expect(call.args.name).toBe('anthropic.messages');
    expect(call.args.modelName).toBe('claude');
  });

  it('hands the relay the payload’s headers as a plain object, credential headers left out, and the host its own (docs/operators/cache.md)', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) }, logger: silentLogger });
    await plugin.ready;
    const forms: [unknown, Record<string, string>][] = [
      [new Headers({ 'X-Tenant': 'acme', Authorization: 'Bearer sk-1', 'x-goog-api-key': 'k' }), { 'x-tenant': 'acme' }],
      [{ 'x-tenant': 'globex', 'x-retries': 2, 'x-debug': true, accept: ['a', 'b'], 'x-skip': { no: 1 }, Cookie: 'c', 'Proxy-Authorization': 'p', 'api-key': 'k', 'anthropic-api-key': 'k', 'set-cookie': 's' }, { 'x-tenant': 'globex', 'x-retries': '2', 'x-debug': 'true', accept: 'a, b' }],
      [[['x-tenant', 'initech'], ['X-API-Key', 'k'], ['bad']], { 'x-tenant': 'initech' }],
      [new Map([['__proto__', 'x']]), { ['__proto__']: 'x' }],
      [new Proxy({ 'x-tenant': 'a' }, { ownKeys: () => { throw new Error('no keys'); } }), {}],
      ['x-tenant: acme', {}],
      [undefined, {}],
    ];
    for (const [i, [headers, expected]] of forms.entries()) {
      const payload = { session_id: 's1', api_request_id: `a${i}`, api_mode: 'chat_completions', request: { messages: [] }, headers };
      let seen: unknown;
      await plugin.llmExecution(payload, (p) => {
        seen = (p as { headers?: unknown } | undefined)?.headers;
        return { choices: [] };
      });
      const request = fake.callsOf('executeLlm')[i]!.args.request as { headers: Record<string, string> };
      expect(Object.entries(request.headers), String(i)).toEqual(Object.entries(expected));
      expect(seen, String(i)).toBe(headers);
    }
  });

  it('gives the host its own downstream error object back', async () => {
    const fake = createFakeRelay();
    // A relay that rewrites callback errors, like the native one does.
    fake.executeTool = async (_options, call) => {
      try {
        return await call({ a: 1 });
      } catch (error) {
        throw new Error(`internal error: JS tool execution callback failed: ${(error as Error).message}`);
      }
    };
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) },
      logger: silentLogger,
    });
    await plugin.ready;
    await plugin.flush();
    class ToolFailure extends Error {}
    const original = new ToolFailure('tool exploded');
    await expect(
      plugin.toolExecution({ session_id: 's1', tool_name: 'shell', args: { a: 1 } }, () => {
        throw original;
      }),
    ).rejects.toBe(original);
  });

  it('skips manual LLM and tool spans when managed execution records them', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) },
      logger: silentLogger,
    });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'r1' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1' });
    await plugin.flush();
    expect(fake.ops()).not.toContain('llmStart');
    expect(fake.ops()).not.toContain('toolStart');
  });

  it('passes calls straight through when the backend has no managed execution', async () => {
    const fake = createFakeRelay({ managed: false });
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlFile(ADAPTIVE) },
      logger: silentLogger,
    });
    await plugin.ready;
    await plugin.flush();
    const result = await plugin.toolExecution({ session_id: 's1', args: { x: 1 } }, (payload) => payload);
    expect(result).toMatchObject({ args: { x: 1 } });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1' });
    expect(fake.ops()).toContain('toolStart');
  });

  it('activates valid dynamic plugins with paths resolved against plugins.toml', async () => {
    const file = tomlFile(`version = 1

[[dynamic_plugins]]
plugin_id = " audit "
kind = "worker"
manifest_ref = "./plugins/audit/relay-plugin.toml"
environment_ref = "envs/py"
[dynamic_plugins.config]
mode = "audit"
`);
    const fake = createFakeRelay({ dynamicPlugins: true });
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    const { host, middleware } = recordingHost();
    plugin.register(host);
    expect(middleware).toEqual(['llm_execution', 'tool_execution']);
    await plugin.flush();
    const call = fake.callsOf('activateDynamicPlugins')[0]!;
    expect(call.args.specs).toEqual([
      {
        plugin_id: 'audit',
        kind: 'worker',
        manifest_ref: path.join(path.dirname(file), 'plugins/audit/relay-plugin.toml'),
        environment_ref: path.join(path.dirname(file), 'envs/py'),
        config: { mode: 'audit' },
      },
    ]);
    expect(call.args.document).toEqual({ version: 1 });
    expect(plugin.status().pluginConfig).toMatchObject({ active: true, dynamic: true });
  });

  it('activates no dynamic plugin when any spec is invalid', async () => {
    const file = tomlFile(`version = 1

[[dynamic_plugins]]
plugin_id = "good"
kind = "worker"
manifest_ref = "m.toml"

[[dynamic_plugins]]
plugin_id = "bad"
kind = "python"
manifest_ref = "m.toml"
`);
    const fake = createFakeRelay({ dynamicPlugins: true });
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    expect(fake.ops()).not.toContain('activateDynamicPlugins');
    expect(fake.ops()).toContain('initializePluginConfig');
    const codes = plugin.status().diagnostics.map((d) => d.code);
    expect(codes).toContain('plugins_toml.invalid_dynamic_plugin');
    expect(codes).toContain('plugins_toml.dynamic_plugins_disabled');
  });

  it('refuses a gateway [plugins] table', async () => {
    const file = tomlFile(`version = 1

[[plugins.dynamic]]
manifest = "./x/relay-plugin.toml"
`);
    const fake = createFakeRelay({ dynamicPlugins: true });
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    expect(fake.ops()).not.toContain('activateDynamicPlugins');
    const refused = plugin.status().diagnostics.find((d) => d.code === 'plugins_toml.gateway_plugins_refused');
    expect(refused?.message).toContain('[[dynamic_plugins]]');
    // The gateway table never reaches the relay document.
    expect(fake.callsOf('initializePluginConfig')[0]!.args.document).toEqual({ version: 1 });
  });
});

describe('LLM response shaping', () => {
  it('passes a response already in the assistant_message shape through', () => {
    const response = { model: 'm', assistant_message: { role: 'assistant', content: 'x' } };
    expect(shapeLlmResponse(response)).toEqual(response);
  });

  it('shapes an OpenAI chat completion', () => {
    expect(
      shapeLlmResponse({
        model: 'gpt',
        choices: [
          {
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              reasoning_content: 'think',
              tool_calls: [{ id: 'c1', function: { name: 'ls', arguments: '{"p":"."}' } }],
            },
          },
        ],
        usage: { prompt_tokens: 5 },
      }),
    ).toEqual({
      model: 'gpt',
      assistant_message: {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"p":"."}' } }],
        reasoning_content: 'think',
      },
      finish_reason: 'tool_calls',
      usage: { prompt_tokens: 5 },
    });
  });

  it('falls back to content or output_text for other shapes', () => {
    expect(shapeLlmResponse({ output_text: 'done' })).toMatchObject({ assistant_message: { role: 'assistant', content: 'done' } });
  });
});

describe('calls that cross the execution middleware while plugins.toml still activates', () => {
  for (const when of ['before the backend is ready', 'after ready', 'after activation settled'] as const) {
    it(`are each recorded exactly once from their hooks (${when})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-managed-'));
      const file = writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories'), extraToml: '\n[[components]]\nkind = "adaptive"\nenabled = true\n' });
      const hooks = new HookRegistry();
      const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
      plugin.register(hooks);
      if (when !== 'before the backend is ready') await plugin.ready;
      hooks.emit('on_session_start', { session_id: 's' });
      if (when === 'after activation settled') await plugin.flush();
      for (let i = 0; i < 5; i++) {
        const ids = { session_id: 's', tool_call_id: `tc${i}`, tool_name: 'read_file' };
        hooks.emit('pre_tool_call', { ...ids, args: { i } });
        const result = await hooks.execute('tool_execution', { ...ids, args: { i } }, (p) => ({ content: `ok${(p.args as { i: number }).i}` }));
        hooks.emit('post_tool_call', { ...ids, result });
      }
      hooks.emit('on_session_finalize', { session_id: 's' });
      await plugin.shutdown();
      const events = readFileSync(path.join(dir, 'events', 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      const toolStarts = events.filter((e) => e.category === 'tool' && e.scope_category === 'start');
      expect(toolStarts.map((e) => e.category_profile?.tool_call_id).sort()).toEqual(['tc0', 'tc1', 'tc2', 'tc3', 'tc4']);
      expect(events.filter((e) => e.category === 'tool' && e.scope_category === 'end')).toHaveLength(5);
    });
  }
});
