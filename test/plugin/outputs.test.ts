import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { validateAtif } from '../../src/formats/index.ts';
import { atifErrorLines } from '../support/harbor.ts';

describe('status().outputs', () => {
  it('lists at most 1,000 ATIF files, dropping the first written, so a long-lived host does not grow without bound', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-outputs-'));
    try {
      const plugin = createNemoRelayPlugin({
        backend: createFakeRelay(),
        env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
        logger: silentLogger,
      });
      for (let i = 0; i < 1005; i++) {
        plugin.handlers.on_session_start({ session_id: `s${i}` });
        plugin.handlers.on_session_finalize({ session_id: `s${i}` });
      }
      await plugin.flush();
      expect(readdirSync(dir)).toHaveLength(1005);
      const listed = plugin.status().outputs.filter((output) => output.kind === 'atif').map((output) => path.basename(output.path));
      expect(listed).toHaveLength(1000);
      expect(listed[0]).toBe('hermes-atif-s5.json');
      expect(listed[999]).toBe('hermes-atif-s1004.json');
      await plugin.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the off backend', () => {
  it('writes no file at all, not even an empty trajectory, and counts what it dropped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-off-'));
    const plugin = createNemoRelayPlugin({
      backend: 'off',
      env: {},
      logger: silentLogger,
      settings: { atofFilename: 'hermes-atof.jsonl', atifFilenameTemplate: 'hermes-atif-{session_id}.json', atofEnabled: true, atofOutputDirectory: dir, atifEnabled: true, atifOutputDirectory: dir },
    });
    await plugin.ready;
    plugin.handlers.on_session_start({ session_id: 'o1' });
    plugin.handlers.pre_llm_call({ session_id: 'o1', turn_id: 't1' });
    plugin.handlers.on_session_end({ session_id: 'o1', turn_id: 't1' });
    plugin.handlers.on_session_finalize({ session_id: 'o1' });
    await plugin.shutdown();
    expect(readdirSync(dir)).toEqual([]);
    expect(plugin.status().backend.kind).toBe('off');
    expect(plugin.status().counters.dropped).toBeGreaterThan(0);
  });
});

describe('a subagent that starts after its parent closed', () => {
  it('gets a trajectory of its own, since the parent one is final already', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-late-child-'));
    const plugin = createNemoRelayPlugin({
      backend: createMemoryRelay({ logger: silentLogger }),
      env: {},
      logger: silentLogger,
      settings: { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'hermes-atif-{session_id}.json' },
    });
    plugin.handlers.on_session_start({ session_id: 'P' });
    plugin.handlers.subagent_start({ session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1' });
    plugin.handlers.on_session_finalize({ session_id: 'P' });
    await plugin.flush();
    plugin.handlers.on_session_start({ session_id: 'C' });
    plugin.handlers.pre_api_request({ session_id: 'C', api_request_id: 'c1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'child question' }] } } });
    plugin.handlers.post_api_request({ session_id: 'C', api_request_id: 'c1', response: { choices: [{ message: { role: 'assistant', content: 'child answer' } }] } });
    plugin.handlers.on_session_finalize({ session_id: 'C' });
    await plugin.shutdown();
    // The parent made no model call: no step, so no (invalid) trajectory of its own; status() says why.
    expect(readdirSync(dir).sort()).toEqual(['hermes-atif-C.json']);
    expect(plugin.status().outputs.find((o) => o.path.endsWith('hermes-atif-P.json'))?.skipped).toMatch(/session P recorded no step/);
    const child = JSON.parse(readFileSync(path.join(dir, 'hermes-atif-C.json'), 'utf8'));
    expect(validateAtif(child)).toEqual([]);
    expect(child.steps.map((step: { message: string }) => step.message)).toEqual(['child question', 'child answer']);
  });
});

describe('ATIF writes in the thread pool', () => {
  it('shutdown() and flush() wait for the trajectory writes still running', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-atif-pool-'));
    try {
      const plugin = createNemoRelayPlugin({
        backend: createMemoryRelay({ logger: silentLogger }),
        env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
        logger: silentLogger,
        trajectoryWriteDelayMs: 0,
      });
      const session = (id: string) => {
        plugin.handlers.on_session_start({ session_id: id });
        plugin.handlers.pre_api_request({ session_id: id, api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi?' }] } } });
        plugin.handlers.post_api_request({ session_id: id, api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
      };
      session('s1');
      plugin.handlers.on_session_finalize({ session_id: 's1' });
      await plugin.flush();
      expect(readdirSync(dir)).toEqual(['hermes-atif-s1.json']);
      session('s2');
      plugin.handlers.on_session_end({ session_id: 's2', turn_id: 't1' });
      await plugin.shutdown();
      expect(readdirSync(dir).sort()).toEqual(['hermes-atif-s1.json', 'hermes-atif-s2.json']);
      for (const name of readdirSync(dir)) expect(atifErrorLines(JSON.parse(readFileSync(path.join(dir, name), 'utf8')))).toEqual([]);
      const listed = plugin.status().outputs.filter((o) => o.kind === 'atif');
      expect(listed.map((o) => [path.basename(o.path), o.errors, o.bytes > 0])).toEqual([
        ['hermes-atif-s1.json', 0, true],
        ['hermes-atif-s2.json', 0, true],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ATIF writes after a passing fault', () => {
  it('writes a trajectory whose write failed once the folder works again (flush runs the pending retry)', async () => {
    const top = mkdtempSync(path.join(tmpdir(), 'nrh-atif-retry-'));
    const dir = path.join(top, 'atif');
    const { writeFileSync, mkdirSync } = await import('node:fs');
    writeFileSync(dir, 'in the way'); // ENOTDIR now, as a full disk would fail the write
    try {
      const plugin = createNemoRelayPlugin({
        backend: createMemoryRelay({ logger: silentLogger }),
        env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
        logger: silentLogger,
        trajectoryWriteDelayMs: 0,
      });
      plugin.handlers.on_session_start({ session_id: 's1' });
      plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi?' }] } } });
      plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
      plugin.handlers.on_session_finalize({ session_id: 's1' });
      await plugin.flush();
      expect(plugin.status().outputs.find((o) => o.kind === 'atif')!.errors).toBeGreaterThan(0);
      rmSync(dir);
      mkdirSync(dir);
      await plugin.flush();
      expect(readdirSync(dir)).toEqual(['hermes-atif-s1.json']);
      const written = JSON.parse(readFileSync(path.join(dir, 'hermes-atif-s1.json'), 'utf8'));
      expect(atifErrorLines(written)).toEqual([]);
      await plugin.shutdown();
    } finally {
      rmSync(top, { recursive: true, force: true });
    }
  });
});
