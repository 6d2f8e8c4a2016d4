/**
 * The builder's `plugin-host` style against the trajectory files native's
 * observability plugin writes: one activation (only one may exist per
 * process, so this file owns it), several root scopes, then each root's
 * events — read back from the plugin's own ATOF file — go through a
 * builder, which must reproduce the plugin's ATIF file byte for byte.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/relay/contract.ts';
import { AtifBuilder } from '../../src/formats/atif/builder.ts';
import { createSubtreeFilter } from '../../src/formats/atif/subtree.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { native, nativeSkipReason, observability, Scenario } from '../support/native-atif.ts';

const TOOL_DEFINITIONS: Json[] = [{ name: 'Bash', description: 'run a command', parameters: { type: 'object', properties: {} } }];
const AGENT_EXTRA = { zeta: 1, alpha: { b: 2, a: [1.5, 2] } };

describe.skipIf(native === undefined)(`ATIF builder vs native plugin-managed files${nativeSkipReason ? ` (skipped: ${nativeSkipReason})` : ''}`, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-atif-plugin-'));
  const roots: { uuid: string; label: string }[] = [];
  let events: AtofEvent[] = [];

  beforeAll(async () => {
    // Keep the user's ~/.config/nemo-relay/plugins.toml out of the activation.
    process.env.XDG_CONFIG_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-atif-xdg-'));
    const lib = native!;
    const obs = observability!;
    const activation = await lib.initialize({
      version: 1,
      components: [
        obs.ComponentSpec({
          version: 4,
          atof: obs.atofConfig({ enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'events.jsonl', mode: 'overwrite' }] }),
          atif: obs.atifConfig({
            enabled: true,
            agent_name: 'plugin-agent',
            agent_version: '9.9.9',
            model_name: 'config-model',
            output_directory: dir,
            filename_template: 'trajectory-{session_id}.json',
            tool_definitions: TOOL_DEFINITIONS,
            extra: AGENT_EXTRA,
          }),
        }),
      ],
    });
    try {
      const s = new Scenario(lib);
      // 1. A full session: turn, tool loop, subagents, marks.
      const session = s.push('hermes-session', 'Agent', null, {
        metadata: { nemo_relay_scope_role: 'session', session_id: 'logical-7', user_id: 'user-3' },
        input: { cwd: '/w' },
      });
      roots.push({ uuid: session.uuid, label: 'session' });
      s.mark('session.start', session, null, { session_id: 'logical-7', user_id: 'user-3' });
      // 2. A second session, interleaved with the first: no correlation metadata, one LLM call.
      const bareStack = lib.createScopeStack();
      const bare = s.onStack(bareStack, () => s.push('bare-session', 'Agent', null, { metadata: { nemo_relay_scope_role: 'session' } }));
      roots.push({ uuid: bare.uuid, label: 'bare' });
      s.mark('note', bare, { x: 1 });
      const turn = s.push('turn', 'Custom', session, { metadata: { nemo_relay_scope_role: 'turn', turn_index: 1 }, input: { prompt: 'hi' } });
      s.chat(
        'anthropic',
        { model: 'claude-x', system: 'sys', messages: [{ role: 'user', content: 'hi' }] },
        {
          id: 'm1',
          type: 'message',
          role: 'assistant',
          model: 'claude-x',
          content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 'tu1', name: 'Bash', input: { command: 'pwd' } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 4 },
        },
        turn,
        { model: 'claude-x' },
      );
      s.mark('approval.request', turn, { tool: 'Bash' });
      const tool = s.tool('Bash', { command: 'pwd' }, turn, 'tu1');
      s.toolEnd(tool, '/w', { annotation: { exit_code: 0 } });
      const sub = s.push('subagent:s1', 'Agent', turn, { metadata: { nemo_relay_scope_role: 'subagent', session_id: 'child-7' }, input: { prompt: 'sub' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'sub' }] }, { choices: [{ message: { content: 'sub ok' } }], usage: { cost_usd: 2, prompt_tokens: 1 } }, sub);
      s.pop(sub, { result: 'sub done' });
      const idle = s.push('subagent:idle', 'Agent', turn, { metadata: { nemo_relay_scope_role: 'subagent' } });
      s.pop(idle);
      s.chat(
        'anthropic',
        { model: 'claude-x', system: 'sys', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: '/w' }] }] },
        { id: 'm2', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 1 } },
        turn,
      );
      s.chat('openai', { messages: [{ role: 'user', content: 'bare question' }] }, { choices: [{ message: { content: 'bare answer' } }] }, bare);
      s.pop(turn, { output: 'done' });
      s.pop(session, { status: 'ended' });
      s.onStack(bareStack, () => s.pop(bare));

      // 3. A harness without a session scope: a root-level turn scope gets its own file.
      const rootTurn = s.push('root-turn', 'Custom', null, { metadata: { nemo_relay_scope_role: 'turn', session_id: 'turn-only' } });
      roots.push({ uuid: rootTurn.uuid, label: 'root turn' });
      s.chat('openai', { messages: [{ role: 'user', content: 'q' }] }, { choices: [{ message: { content: 'a' } }] }, rootTurn);
      s.pop(rootTurn);
      await lib.flushSubscribers();
    } finally {
      await activation.close();
    }
    const parsed = parseAtofJsonl(fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8'));
    expect(parsed.errors).toEqual([]);
    events = parsed.events;
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function reproduce(rootUuid: string): { built: AtifTrajectory; text: string; file: string } {
    const filter = createSubtreeFilter(rootUuid);
    const builder = new AtifBuilder({
      sessionId: rootUuid,
      agentName: 'plugin-agent',
      agentVersion: '9.9.9',
      modelName: 'config-model',
      style: 'plugin-host',
      toolDefinitions: TOOL_DEFINITIONS,
      extra: AGENT_EXTRA,
    });
    for (const event of events) if (filter(event)) builder.add(event);
    const file = fs.readFileSync(path.join(dir, `trajectory-${rootUuid}.json`), 'utf8');
    return { built: builder.build(), text: builder.toJson(), file };
  }

  it('writes a valid ATOF file', () => {
    expect(events.length).toBeGreaterThan(10);
    expect(validateAtofEvents(events)).toEqual([]);
  });

  it('reproduces a full session file: sorted keys, nemo_relay correlation, observed events, embedded subagent', () => {
    const root = roots.find((r) => r.label === 'session')!;
    const { built, text, file } = reproduce(root.uuid);
    expect(built).toEqual(JSON.parse(file));
    expect(JSON.stringify(built)).toBe(JSON.stringify(JSON.parse(file)));
    expect(text).toBe(file);
    expect(validateAtif(built)).toEqual([]);
    expect(built.extra?.nemo_relay).toEqual({ session_id: 'logical-7', session_instance_id: root.uuid, user_id: 'user-3' });
    expect(built.subagent_trajectories).toHaveLength(1);
  });

  it('reproduces an interleaved session\'s file from its subtree alone, without correlation metadata', () => {
    const root = roots.find((r) => r.label === 'bare')!;
    const { built, text, file } = reproduce(root.uuid);
    expect(JSON.stringify(built)).toBe(JSON.stringify(JSON.parse(file)));
    expect(text).toBe(file);
    expect(built.steps.map((step) => step.message)).toEqual(['bare question', 'bare answer']);
    expect(built.extra?.nemo_relay).toEqual({ session_instance_id: root.uuid });
  });

  it('reproduces the file of a root-level turn scope', () => {
    const root = roots.find((r) => r.label === 'root turn')!;
    const { built, text, file } = reproduce(root.uuid);
    expect(JSON.stringify(built)).toBe(JSON.stringify(JSON.parse(file)));
    expect(text).toBe(file);
    expect(built.steps.map((step) => step.source)).toEqual(['user', 'agent']);
  });
});
