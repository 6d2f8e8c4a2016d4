// One session id used by more than one process (two workers given one
// conversation id, a conversation resumed in a new process the next day):
// each process's trajectory lands in a file of its own, beside the others
// under the `~n` rule the process uses for its own repeats, and none is
// replaced; the shared ATOF file holds every process's events. Real child
// processes on the built package, on the memory backend and on native
// (whose ATIF files the plugin writes and names).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readValidAtif, readValidAtof } from '../contract/files.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';
import { dist, runChild, spawnChild, type SpawnedChild } from '../support/child.ts';
import { HookRegistry } from '../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../src/plugin/plugin.ts';
import { silentLogger } from '../../src/shared/logger.ts';

type Backend = 'memory' | 'native';

/**
 * A host that runs `sessions` sessions of the id `shared-1` one after the
 * other, each of three turns (a partial write after each, at once), and
 * answers with `tag`, so each trajectory says which process and session
 * wrote it. With `barrier`, it waits until that many hosts are ready, so
 * they write their first trajectories at the same moment. With `handOut`,
 * each session asks `hooks.traceContext()` where its trajectory goes
 * before its first write, and prints the answer after `@@HANDED@@`.
 */
function host(backend: Backend, dir: string, tag: string, options: { sessions?: number; barrier?: number; handOut?: boolean } = {}): string {
  return `
import fs from 'node:fs';
import path from 'node:path';
import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
const dir = ${JSON.stringify(dir)};
const plugin = createNemoRelayPlugin({
  backend: ${JSON.stringify(backend)},
  env: {},
  trajectoryWriteDelayMs: 0,
  settings: { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'agent-atof.jsonl', atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'agent-atif-{session_id}.json' },
});
const hooks = new HookRegistry();
plugin.register(hooks);
await plugin.ready;
const barrier = ${options.barrier ?? 0};
if (barrier > 0) {
  fs.writeFileSync(path.join(dir, 'ready-${tag}'), '');
  while (fs.readdirSync(dir).filter((name) => name.startsWith('ready-')).length < barrier) await new Promise((go) => setTimeout(go, 2));
}
for (let s = 1; s <= ${options.sessions ?? 1}; s++) {
  const answer = '${tag} session ' + s;
  hooks.emit('on_session_start', { session_id: 'shared-1', model: 'gpt-4o' });
  if (${options.handOut === true}) {
    // Asked before the session's first write, as work continuing it elsewhere asks (an MCP call in its first turn).
    const context = await hooks.traceContext({ session_id: 'shared-1' });
    console.log('@@HANDED@@' + JSON.stringify(context?.trajectory ?? null));
  }
  for (let t = 1; t <= 3; t++) {
    const ids = { session_id: 'shared-1', turn_id: 't' + t };
    hooks.emit('pre_llm_call', { ...ids, user_message: 'turn ' + t });
    hooks.emit('pre_api_request', { ...ids, api_request_id: 't' + t + ':api', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'turn ' + t }] } } });
    hooks.emit('post_api_request', { ...ids, api_request_id: 't' + t + ':api', response: { choices: [{ message: { role: 'assistant', content: answer } }] } });
    hooks.emit('on_session_end', { ...ids, completed: true });
    await new Promise((go) => setTimeout(go, 1));
  }
  hooks.emit('on_session_finalize', { session_id: 'shared-1' });
}
await plugin.shutdown();
const outputs = plugin.status().outputs.filter((o) => o.kind === 'atif').map((o) => ({ path: path.basename(o.path), errors: o.errors, bytes: o.bytes }));
console.log('@@RESULT@@' + JSON.stringify(outputs));
const copyFolder = path.join(dir, 'shared-1~2');
if (fs.existsSync(path.join(copyFolder, 'trajectory.json'))) {
  console.log('@@COPY@@' + JSON.stringify({ names: fs.readdirSync(copyFolder), text: fs.readFileSync(path.join(copyFolder, 'trajectory.json'), 'utf8') }));
}
`;
}

/** The ATIF files of `shared-1` in `dir`, each with the answer its steps carry (one per file: each session answers with its own tag). */
function trajectories(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    if (!name.startsWith('agent-atif-shared-1')) continue;
    const trajectory = readValidAtif(path.join(dir, name));
    const answers = new Set(trajectory.steps.filter((step) => step.source === 'agent').map((step) => step.message));
    expect(answers.size, `${name} holds one session's answers`).toBe(1);
    expect(trajectory.steps.filter((step) => step.source === 'user').map((step) => step.message), name).toEqual(['turn 1', 'turn 2', 'turn 3']);
    found[name] = [...answers][0] as string;
  }
  return found;
}

function succeeded(child: SpawnedChild): { path: string; errors: number; bytes: number }[] {
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return child.result as { path: string; errors: number; bytes: number }[];
}

/** The sessions the shared ATOF file holds, by the answer each gave. */
function atofAnswers(dir: string): string[] {
  const { events } = readValidAtof(path.join(dir, 'agent-atof.jsonl'));
  const answers = new Set<string>();
  for (const event of events) {
    const data = (event as { data?: { choices?: { message?: { content?: string } }[] } }).data;
    const content = event.category === 'llm' && event.scope_category === 'end' ? data?.choices?.[0]?.message?.content : undefined;
    if (typeof content === 'string') answers.add(content);
  }
  return [...answers].sort();
}

const backends: { backend: Backend; available: boolean; why: string }[] = [
  { backend: 'memory', available: true, why: '' },
  { backend: 'native', available: nativeAvailable, why: ` (skipped: ${nativeLoadError})` },
];

for (const { backend, available, why } of backends) {
  describe.skipIf(!available)(`one session id in several processes, on ${backend}${available ? '' : why}`, () => {
    it('two processes writing it at once each keep their trajectory, in two files; the ATOF file has both', async () => {
      const dir = tempDir('shared-session-at-once');
      const [a, b] = await Promise.all([spawnChild(host(backend, dir, 'A', { barrier: 2 })), spawnChild(host(backend, dir, 'B', { barrier: 2 }))]);
      const written = [...succeeded(a!), ...succeeded(b!)];
      const files = trajectories(dir);
      // Which process got the plain name is a race; that each has one file, and which, is not.
      expect(Object.keys(files)).toEqual(['agent-atif-shared-1.json', 'agent-atif-shared-1~2.json']);
      expect(Object.values(files).sort()).toEqual(['A session 1', 'B session 1']);
      // Each process lists the file it wrote, whole and without an error.
      for (const output of written) {
        expect(output.errors).toBe(0);
        expect(output.bytes).toBe(fs.statSync(path.join(dir, output.path)).size);
      }
      expect(written.map((output) => files[output.path]).sort()).toEqual(['A session 1', 'B session 1']);
      expect(atofAnswers(dir)).toEqual(['A session 1', 'B session 1']);
      // The claims leave no temporary file behind.
      expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    });

    it('a later run of the id lands beside the earlier runs, and its own repeats follow on', async () => {
      const dir = tempDir('shared-session-later');
      expect(succeeded(await spawnChild(host(backend, dir, 'day 1')))).toEqual([expect.objectContaining({ path: 'agent-atif-shared-1.json' })]);
      expect(succeeded(await spawnChild(host(backend, dir, 'day 2')))).toEqual([expect.objectContaining({ path: 'agent-atif-shared-1~2.json' })]);
      // Two sessions of the id in one process: the first takes the next free name, the second the one after it.
      const third = succeeded(await spawnChild(host(backend, dir, 'day 3', { sessions: 2 })));
      expect(third.map((output) => output.path)).toEqual(['agent-atif-shared-1~3.json', 'agent-atif-shared-1~4.json']);
      expect(trajectories(dir)).toEqual({
        'agent-atif-shared-1.json': 'day 1 session 1',
        'agent-atif-shared-1~2.json': 'day 2 session 1',
        'agent-atif-shared-1~3.json': 'day 3 session 1',
        'agent-atif-shared-1~4.json': 'day 3 session 2',
      });
      expect(atofAnswers(dir)).toEqual(['day 1 session 1', 'day 2 session 1', 'day 3 session 1', 'day 3 session 2']);
    });

    it('a trajectory path handed out before the first write names the file that run is written to, not an earlier run’s', async () => {
      const dir = tempDir('shared-session-handed-out');
      const runs: { written: string[]; handed: string[] }[] = [];
      for (const [tag, sessions] of [['day 1', 1], ['day 2', 1], ['day 3', 2]] as const) {
        const child = await spawnChild(host(backend, dir, tag, { sessions, handOut: true }));
        const written = succeeded(child).map((output) => output.path);
        const handed = child.stdout.split('@@HANDED@@').slice(1).map((line) => JSON.parse(line.split('\n')[0]!) as { trajectory_path?: string });
        runs.push({ written, handed: handed.map((ref) => ref.trajectory_path ?? '(none)') });
      }
      // Each session was told the name its file then got: an earlier run's file is passed by, and so is the process's own.
      expect(runs).toEqual([
        { written: ['agent-atif-shared-1.json'], handed: ['agent-atif-shared-1.json'] },
        { written: ['agent-atif-shared-1~2.json'], handed: ['agent-atif-shared-1~2.json'] },
        { written: ['agent-atif-shared-1~3.json', 'agent-atif-shared-1~4.json'], handed: ['agent-atif-shared-1~3.json', 'agent-atif-shared-1~4.json'] },
      ]);
      expect(trajectories(dir)).toEqual({
        'agent-atif-shared-1.json': 'day 1 session 1',
        'agent-atif-shared-1~2.json': 'day 2 session 1',
        'agent-atif-shared-1~3.json': 'day 3 session 1',
        'agent-atif-shared-1~4.json': 'day 3 session 2',
      });
    });
  });
}

/** Why a private mount namespace with a tmpfs cannot be had here, or null. */
function tmpfsWhy(): string | null {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt'], { encoding: 'utf8' });
  if (probe.error) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `cannot mount a tmpfs in a private mount namespace (${probe.stderr.trim()})`;
  return null;
}
const noTmpfs = tmpfsWhy();
if (noTmpfs !== null) console.warn(`[shared session files] the claim by copy is not run: ${noTmpfs}`);

describe.skipIf(noTmpfs !== null)(`a name that cannot be claimed by a hard link${noTmpfs === null ? '' : ` (skipped: ${noTmpfs})`}`, () => {
  it('is claimed by an exclusive copy: the next free name gets the whole trajectory, the taken one is kept', () => {
    // A folder per session (`{session_id}/trajectory.json`) whose `~2` folder is another file system:
    // the link from the temporary file (beside the first name) fails with EXDEV, as on a file system without hard links.
    const dir = tempDir('shared-session-copy');
    fs.mkdirSync(path.join(dir, 'shared-1'));
    fs.writeFileSync(path.join(dir, 'shared-1', 'trajectory.json'), 'an earlier run');
    fs.mkdirSync(path.join(dir, 'shared-1~2'));
    const source = host('memory', dir, 'copied').replace("atifFilenameTemplate: 'agent-atif-{session_id}.json'", "atifFilenameTemplate: '{session_id}/trajectory.json'");
    const child = runChild(source, { launcher: ['unshare', '-m'], shellPrefix: `mount -t tmpfs -o size=1m tmpfs ${JSON.stringify(path.join(dir, 'shared-1~2'))} &&` });
    // The one line a template with a folder part gets; nothing about the write.
    expect(child.stderr.trim().split('\n')).toEqual([expect.stringContaining('settings.template_with_path')]);
    expect(child.status).toBe(0);
    const outputs = JSON.parse(child.stdout.split('@@RESULT@@')[1]!.split('\n')[0]!) as { path: string; errors: number }[];
    expect(outputs).toEqual([expect.objectContaining({ path: 'trajectory.json', errors: 0 })]);
    // The tmpfs is gone with the child's namespace; what it held is asserted from the child's own reading.
    expect(child.stdout).toContain('@@COPY@@');
    const copied = JSON.parse(child.stdout.split('@@COPY@@')[1]!.split('\n')[0]!) as { names: string[]; text: string };
    expect(copied.names).toEqual(['trajectory.json']);
    const trajectory = JSON.parse(copied.text) as { steps: { source: string; message: unknown }[] };
    expect(trajectory.steps.filter((step) => step.source === 'agent').map((step) => step.message)).toEqual(['copied session 1', 'copied session 1', 'copied session 1']);
    expect(fs.readFileSync(path.join(dir, 'shared-1', 'trajectory.json'), 'utf8')).toBe('an earlier run');
    expect(fs.readdirSync(path.join(dir, 'shared-1'))).toEqual(['trajectory.json']);
  });
});

describe('two plugins of one process, one folder and one session id', () => {
  for (const { backend, available, why } of backends) {
    it.skipIf(!available)(`that both hand out a trajectory path before their first write name two files, each holding its session (${backend})${available ? '' : why}`, async () => {
      const dir = tempDir('shared-session-in-process');
      const settings = { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'agent-atif-{session_id}.json' };
      const plugins = ['first', 'second'].map((tag) => {
        const hooks = new HookRegistry();
        const plugin = createNemoRelayPlugin({ backend, env: {}, trajectoryWriteDelayMs: 0, settings, logger: silentLogger });
        plugin.register(hooks);
        return { tag, hooks, plugin };
      });
      const handed: (string | undefined)[] = [];
      for (const { hooks } of plugins) {
        hooks.emit('on_session_start', { session_id: 'shared-1', model: 'gpt-4o' });
        handed.push((await hooks.traceContext({ session_id: 'shared-1' }))?.trajectory?.trajectory_path);
      }
      // Neither has written yet: the names differ because the first is kept from the rest of the process.
      expect(handed).toEqual(['agent-atif-shared-1.json', 'agent-atif-shared-1~2.json']);
      // The second writes first: it still takes the name it was given.
      for (const { tag, hooks } of [...plugins].reverse()) {
        const ids = { session_id: 'shared-1', turn_id: 't1' };
        hooks.emit('pre_llm_call', { ...ids, user_message: 'turn 1' });
        hooks.emit('pre_api_request', { ...ids, api_request_id: 'a1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'turn 1' }] } } });
        hooks.emit('post_api_request', { ...ids, api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: `${tag} session 1` } }] } });
        hooks.emit('on_session_end', { ...ids, completed: true });
        hooks.emit('on_session_finalize', { session_id: 'shared-1' });
      }
      for (const { plugin } of plugins) await plugin.shutdown();
      const answers = Object.fromEntries(
        fs.readdirSync(dir).sort().map((name) => [name, readValidAtif(path.join(dir, name)).steps.filter((step) => step.source === 'agent').map((step) => step.message)]),
      );
      expect(answers).toEqual({ 'agent-atif-shared-1.json': ['first session 1'], 'agent-atif-shared-1~2.json': ['second session 1'] });
      for (const { plugin } of plugins) expect(plugin.status().counters.errors).toBe(0);
    });
  }
});
