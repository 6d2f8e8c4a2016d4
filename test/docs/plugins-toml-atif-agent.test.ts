// The `atif` keys of a plugins.toml as docs/operators/plugins-toml.md
// describes them, against the trajectories the README's host writes with
// it, on both backends. The page said `model_name` is `agent.model_name`
// "when the session reports no model"; the trajectory said "unknown" for a
// session that reported gpt-4o, as native writes it: the key names the
// model of every trajectory, and each agent step names the model that
// answered.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNemoRelayPlugin, HookRegistry } from '../../src/index.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';
import { ROOT } from '../cli/support.ts';

function keyMeaning(key: string): string {
  const page = readFileSync(path.join(ROOT, 'docs/operators/plugins-toml.md'), 'utf8');
  const row = page.split('\n').find((line) => line.startsWith(`| \`components[].config.atif.${key}\` |`));
  if (row === undefined) throw new Error(`docs/operators/plugins-toml.md has no row for atif.${key}`);
  return row;
}

/** The README's first host, its answer naming the model that gave it, through a plugins.toml's ATIF section. */
async function trajectory(backend: 'memory' | 'native', atifKeys: string): Promise<{ agent: Record<string, unknown>; steps: { source: string; model_name?: string }[] }> {
  const dir = tempDir(`plugins-toml-agent-${backend}`);
  const toml = path.join(dir, 'plugins.toml');
  const out = path.join(dir, 'atif');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(toml, ['version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atif]', 'enabled = true', `output_directory = ${JSON.stringify(out)}`, 'filename_template = "trajectory-{session_id}.json"', atifKeys].join('\n'));
  const hooks = new HookRegistry();
  const plugin = createNemoRelayPlugin({ backend, env: {}, settings: { pluginsTomlPath: toml } });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
  hooks.emit('pre_api_request', { session_id: 's1', api_request_id: 'a1', provider: 'openai', request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] } } });
  hooks.emit('post_api_request', { session_id: 's1', api_request_id: 'a1', response: { model: 'gpt-4o-2024-08-06', choices: [{ message: { role: 'assistant', content: 'Hello!' } }] } });
  hooks.emit('on_session_finalize', { session_id: 's1' });
  await plugin.shutdown();
  const files = readdirSync(out);
  expect(files).toHaveLength(1);
  return JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8'));
}

const backends = [
  { backend: 'memory' as const, available: true, why: '' },
  { backend: 'native' as const, available: nativeAvailable, why: ` (skipped: ${nativeLoadError})` },
];

for (const { backend, available, why } of backends) {
  describe.skipIf(!available)(`a plugins.toml's ATIF agent block, on ${backend}${available ? '' : why}`, () => {
    it('without model_name is "unknown" whatever the session reported; each agent step names its model', async () => {
      const written = await trajectory(backend, '');
      expect(written.agent).toMatchObject({ name: 'NeMo Relay', version: '0.9.0', model_name: 'unknown' });
      expect(written.steps.map((step) => [step.source, step.model_name])).toEqual([
        ['user', undefined],
        ['agent', 'gpt-4o-2024-08-06'],
      ]);
    });

    it('with model_name, agent_name and agent_version takes them for the trajectory, over the session\'s model', async () => {
      const written = await trajectory(backend, 'agent_name = "support-bot"\nagent_version = "2.1.0"\nmodel_name = "configured-model"');
      expect(written.agent).toMatchObject({ name: 'support-bot', version: '2.1.0', model_name: 'configured-model' });
      expect(written.steps[1]?.model_name).toBe('gpt-4o-2024-08-06');
    });
  });
}

describe('docs/operators/plugins-toml.md on the atif agent keys', () => {
  it('says what the trajectories above hold: the configured value or native\'s default, never the session\'s model', () => {
    const model = keyMeaning('model_name');
    expect(model).not.toMatch(/session reports/);
    expect(model).toContain('`unknown`');
    expect(model).toContain('every trajectory');
    expect(keyMeaning('agent_name')).toContain('`NeMo Relay`');
    expect(keyMeaning('agent_version')).toContain('`0.9.0`');
  });
});
