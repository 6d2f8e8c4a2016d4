/**
 * The `agent` block of the plugin's own trajectory files: a sub-agent's own
 * name (`child_role`) and model, on both backends, while the plugins.toml
 * files keep native's block (the parent's; test/differential/corpus.test.ts);
 * and the model a response reports when the session named none.
 */
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { validateAtif } from '../../src/formats/index.ts';
import { FILE_BACKENDS, tempDir } from '../contract/backends.ts';

function call(plugin: ReturnType<typeof createNemoRelayPlugin>, sessionId: string, id: string, model: string, question: string, answer: string): void {
  plugin.handlers.pre_api_request({ session_id: sessionId, api_request_id: id, provider: 'openai', model, request: { body: { model, messages: [{ role: 'user', content: question }] } } });
  plugin.handlers.post_api_request({ session_id: sessionId, api_request_id: id, model, response: { model, choices: [{ message: { role: 'assistant', content: answer } }] } });
}

describe.each(FILE_BACKENDS)('a sub-agent in the plugin trajectory ($name backend)', (backend) => {
  it.skipIf(!backend.available)('carries its own name and model, not its parent\'s', async () => {
    const dir = tempDir('subagent-agent');
    try {
      const plugin = createNemoRelayPlugin({
        backend: backend.create(),
        env: {},
        logger: silentLogger,
        settings: { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'run-{session_id}.json', atifAgentName: 'planner' },
      });
      plugin.handlers.on_session_start({ session_id: 'P', model: 'gpt-4o' });
      call(plugin, 'P', 'p1', 'gpt-4o', 'plan the trip', 'delegating');
      plugin.handlers.subagent_start({ session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1', child_role: 'researcher', model: 'claude-haiku-4-5' });
      plugin.handlers.on_session_start({ session_id: 'C', model: 'claude-haiku-4-5' });
      call(plugin, 'C', 'c1', 'claude-haiku-4-5', 'find trains', 'three trains');
      plugin.handlers.subagent_stop({ session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1', child_role: 'researcher' });
      plugin.handlers.on_session_finalize({ session_id: 'C' });
      call(plugin, 'P', 'p2', 'gpt-4o', 'and then?', 'book the 9:00');
      plugin.handlers.on_session_finalize({ session_id: 'P' });
      await plugin.shutdown();
      const files = readdirSync(dir);
      const parentFile = files.find((file) => file === 'run-P.json');
      expect(parentFile, files.join(', ')).toBeDefined();
      const parent = JSON.parse(readFileSync(path.join(dir, parentFile!), 'utf8'));
      expect(validateAtif(parent)).toEqual([]);
      expect(parent.agent).toMatchObject({ name: 'planner', model_name: 'gpt-4o' });
      const children = parent.subagent_trajectories ?? [];
      expect(children).toHaveLength(1);
      expect(children[0].agent).toMatchObject({ name: 'researcher', model_name: 'claude-haiku-4-5' });
      expect(children[0].steps.map((step: { message: string }) => step.message)).toEqual(['find trains', 'three trains']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!backend.available)('names the model a sub-agent\'s first response reports when nothing else names it', async () => {
    const dir = tempDir('subagent-reported');
    try {
      const plugin = createNemoRelayPlugin({
        backend: backend.create(),
        env: {},
        logger: silentLogger,
        settings: { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'run-{session_id}.json', atifAgentName: 'planner' },
      });
      plugin.handlers.on_session_start({ session_id: 'P', model: 'gpt-4o' });
      call(plugin, 'P', 'p1', 'gpt-4o', 'plan the trip', 'delegating');
      plugin.handlers.subagent_start({ session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1', child_role: 'researcher' });
      plugin.handlers.on_session_start({ session_id: 'C' });
      call(plugin, 'C', 'c1', 'claude-haiku-4-5-20251001', 'find trains', 'three trains');
      plugin.handlers.subagent_stop({ session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1', child_role: 'researcher' });
      plugin.handlers.on_session_finalize({ session_id: 'C' });
      plugin.handlers.on_session_finalize({ session_id: 'P' });
      await plugin.shutdown();
      const parent = JSON.parse(readFileSync(path.join(dir, 'run-P.json'), 'utf8'));
      expect(validateAtif(parent)).toEqual([]);
      expect(parent.agent).toMatchObject({ name: 'planner', model_name: 'gpt-4o' });
      expect(parent.subagent_trajectories[0].agent).toMatchObject({ name: 'researcher', model_name: 'claude-haiku-4-5-20251001' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function runWithoutModel(plugin: ReturnType<typeof createNemoRelayPlugin>): void {
  // As a framework adapter sees it: the model is known only from the response.
  plugin.handlers.on_session_start({ session_id: 'S' });
  plugin.handlers.pre_api_request({ session_id: 'S', api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi?' }] } } });
  plugin.handlers.post_api_request({ session_id: 'S', api_request_id: 'a1', response: { model: 'gpt-4o-2024-08-06', choices: [{ message: { role: 'assistant', content: 'hello' } }] } });
  plugin.handlers.on_session_finalize({ session_id: 'S' });
}

describe.each(FILE_BACKENDS)('a session that reports no model ($name backend)', (backend) => {
  it.skipIf(!backend.available)('names the model its first response reports, not "unknown"', async () => {
    const dir = tempDir('reported-model');
    try {
      const plugin = createNemoRelayPlugin({ backend: backend.create(), env: {}, logger: silentLogger, settings: { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'run-{session_id}.json' } });
      runWithoutModel(plugin);
      await plugin.shutdown();
      const trajectory = JSON.parse(readFileSync(path.join(dir, 'run-S.json'), 'utf8'));
      expect(validateAtif(trajectory)).toEqual([]);
      expect(trajectory.agent.model_name).toBe('gpt-4o-2024-08-06');
      expect(trajectory.steps.at(-1).model_name).toBe('gpt-4o-2024-08-06');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!backend.available)('keeps a model name the host set, and the Hermes plugin\'s "unknown" under its variables', async () => {
    const dir = tempDir('set-model');
    try {
      const set = createNemoRelayPlugin({ backend: backend.create(), env: {}, logger: silentLogger, settings: { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'set-{session_id}.json', atifModelName: 'house-model' } });
      runWithoutModel(set);
      await set.shutdown();
      expect(JSON.parse(readFileSync(path.join(dir, 'set-S.json'), 'utf8')).agent.model_name).toBe('house-model');
      const hermes = createNemoRelayPlugin({ backend: backend.create(), env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir }, logger: silentLogger });
      runWithoutModel(hermes);
      await hermes.shutdown();
      expect(JSON.parse(readFileSync(path.join(dir, 'hermes-atif-S.json'), 'utf8')).agent.model_name).toBe('unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
