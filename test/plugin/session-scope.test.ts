// What a session's agent scope is called: the Hermes plugin's
// `hermes-session-<id>` when configured through HERMES_NEMO_RELAY_*, else
// `<agent>-session-<id>` with the agent the session's trajectory names; and
// `convert` reads both back (old files included).
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin, type NemoRelayPluginOptions } from '../../src/plugin/plugin.ts';
import { parseSessionScopeName, sessionScopeName } from '../../src/plugin/session-scope.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

/** The names of the session scopes the plugin pushed for `sessions` (payloads of on_session_start). */
async function scopeNames(options: NemoRelayPluginOptions, sessions: Record<string, unknown>[]): Promise<string[]> {
  const fake = createFakeRelay();
  const plugin = createNemoRelayPlugin({ backend: fake, logger: silentLogger, ...options });
  const hooks = new HookRegistry();
  plugin.register(hooks);
  await plugin.ready;
  for (const payload of sessions) hooks.emit('on_session_start', payload);
  await plugin.shutdown();
  return fake.calls.filter((call) => call.op === 'pushScope').map((call) => String(call.args.name));
}

const sessions = [{ session_id: 's1' }, { session_id: 's2', agent_name: 'Weather agent' }];

describe('session scope names', () => {
  it('configured through HERMES_NEMO_RELAY_*, are the Hermes plugin\'s, whatever the session reports', async () => {
    const names = await scopeNames({ env: { HERMES_NEMO_RELAY_ATOF_ENABLED: '0' } }, sessions);
    expect(names).toEqual(['hermes-session-s1', 'hermes-session-s2']);
  });

  it('otherwise say the agent: the host (its package.json, or the host option), else what an adapter reports', async () => {
    expect(await scopeNames({ env: {} }, sessions)).toEqual(['nemo-relay-hooks-session-s1', 'Weather agent-session-s2']);
    expect(await scopeNames({ env: { NEMO_RELAY_HOOKS_OUTPUTS: 'off' }, host: { name: 'my-agent' } }, sessions)).toEqual(['my-agent-session-s1', 'Weather agent-session-s2']);
  });

  it('an agent name the host set explicitly wins over what the session reports', async () => {
    expect(await scopeNames({ env: { NEMO_RELAY_HOOKS_ATIF_AGENT_NAME: 'Ops' } }, sessions)).toEqual(['Ops-session-s1', 'Ops-session-s2']);
    expect(await scopeNames({ env: {}, settings: { atifAgentName: 'Ops' } }, sessions)).toEqual(['Ops-session-s1', 'Ops-session-s2']);
  });

  it('read back: either form, with the session id telling where the agent name ends', () => {
    expect(parseSessionScopeName(sessionScopeName('default', 'my-session-agent', 'demo-session-7f3a'), 'demo-session-7f3a')).toEqual({ form: 'agent', agentName: 'my-session-agent', sessionId: 'demo-session-7f3a' });
    expect(parseSessionScopeName(sessionScopeName('hermes', 'ignored', 's1'), 's1')).toEqual({ form: 'hermes', sessionId: 's1' });
    // Files of the Hermes plugin and of earlier versions, with or without metadata.session_id.
    expect(parseSessionScopeName('hermes-session-x-session-y', undefined)).toEqual({ form: 'hermes', sessionId: 'x-session-y' });
    // No session id from the host: the plugin's "default".
    expect(parseSessionScopeName('agent-session-default', undefined)).toEqual({ form: 'agent', agentName: 'agent', sessionId: 'default' });
    // Not the plugin's: a native root, a scope whose name does not end in its session id.
    expect(parseSessionScopeName('claude-code', 'sess-abc')).toBeUndefined();
    expect(parseSessionScopeName('prog-session', 'prog-sid')).toBeUndefined();
    expect(parseSessionScopeName('-session-s1', 's1')).toBeUndefined();
  });
});
