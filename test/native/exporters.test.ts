import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { NativeRelay } from '../../native/relay.ts';
import { loadBinding } from '../../native/binding.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { AtofExporterError } from '../../src/relay/index.ts';
import type { ScopeHandle } from '../../src/relay/contract.ts';
import { available, readAtof, relay, tempDir } from './support.ts';

const REQUEST = (text: string) => ({ headers: {}, content: { model: 'm', messages: [{ role: 'user', content: text }] } });
const RESPONSE = (text: string, toolUse?: { id: string; name: string }) => ({
  id: `msg-${text}`,
  type: 'message',
  role: 'assistant',
  content: [{ type: 'text', text }, ...(toolUse ? [{ type: 'tool_use', id: toolUse.id, name: toolUse.name, input: {} }] : [])],
  stop_reason: toolUse ? 'tool_use' : 'end_turn',
  usage: { input_tokens: 3, output_tokens: 2 },
});

describe.skipIf(!available)('native ATOF exporter', () => {
  let backend: NativeRelay | undefined;
  afterEach(async () => {
    await backend?.shutdown();
    backend = undefined;
  });

  it('writes to outputDirectory/filename (camelCase reaches native) and reports health', async () => {
    backend = relay();
    const dir = path.join(tempDir('atof'), 'nested', 'dir');
    const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
    expect(sink.path).toBe(path.join(dir, 'events.jsonl'));
    expect(backend.outputs()).toEqual([{ kind: 'atof', path: sink.path, lastWrite: null, bytes: 0, errors: 0 }]);
    const s = backend.pushScope({ name: 's', category: 'agent' });
    backend.popScope(s);
    await backend.flush();
    const [health] = backend.outputs();
    expect(health?.bytes).toBe(fs.statSync(sink.path).size);
    expect(health?.bytes).toBeGreaterThan(0);
    expect(Date.parse(String(health?.lastWrite))).not.toBeNaN();
    const events = readAtof(sink.path);
    expect(events.map((e) => e.name)).toEqual(['s', 's']);
    expect(validateAtofEvents(events)).toEqual([]);
  });

  it('appends across exporters in append mode and truncates in overwrite mode', async () => {
    backend = relay();
    const dir = tempDir('modes');
    for (const mode of ['append', 'overwrite'] as const) {
      for (let i = 0; i < 2; i++) {
        const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: `${mode}.jsonl`, mode });
        backend.mark({ name: `${mode}-${i}` });
        await sink.close();
      }
    }
    expect(readAtof(path.join(dir, 'append.jsonl')).map((e) => e.name)).toEqual(['append-0', 'append-1']);
    expect(readAtof(path.join(dir, 'overwrite.jsonl')).map((e) => e.name)).toEqual(['overwrite-1']);
  });

  // docs/known-limits.md, "Several plugins on native in one process": native's event stream is process-wide, so a
  // second native relay's ATOF file receives the first's events too. When this fails, native keeps them apart: say so.
  it('writes the events of every native relay of the process into each relay\'s ATOF file (a known limit)', async () => {
    backend = relay();
    const other = relay();
    try {
      const dir = tempDir('two-relays');
      const mine = backend.registerAtofExporter({ outputDirectory: dir, filename: 'mine.jsonl', mode: 'overwrite' });
      const theirs = other.registerAtofExporter({ outputDirectory: dir, filename: 'theirs.jsonl', mode: 'overwrite' });
      backend.mark({ name: 'from-mine' });
      other.mark({ name: 'from-theirs' });
      await Promise.all([backend.flush(), other.flush()]);
      expect(readAtof(mine.path).map((e) => e.name).sort()).toEqual(['from-mine', 'from-theirs']);
      expect(readAtof(theirs.path).map((e) => e.name).sort()).toEqual(['from-mine', 'from-theirs']);
    } finally {
      await other.shutdown();
    }
  });

  it('stops writing after close, and close and flush stay harmless afterwards', async () => {
    backend = relay();
    const sink = backend.registerAtofExporter({ outputDirectory: tempDir('close'), filename: 'e.jsonl', mode: 'overwrite' });
    backend.mark({ name: 'before' });
    await sink.close();
    await sink.close();
    await sink.flush();
    backend.mark({ name: 'after' });
    await backend.flush();
    expect(readAtof(sink.path).map((e) => e.name)).toEqual(['before']);
    expect(backend.outputs()).toEqual([]);
  });

  it('drains native delivery once per flush for every sink, and a sink flushed again with nothing new sent does not wait again', async () => {
    const loaded = loadBinding();
    let drains = 0;
    const binding = new Proxy(loaded.binding, {
      get(target, name, receiver) {
        if (name === 'flushSubscribers') {
          return () => {
            drains += 1;
            return target.flushSubscribers();
          };
        }
        return Reflect.get(target, name, receiver);
      },
    });
    const counted = new NativeRelay({ ...loaded, binding }, { logger: silentLogger, allowConfigDiscovery: false });
    backend = counted;
    const dir = tempDir('one-drain');
    const first = counted.registerAtofExporter({ outputDirectory: dir, filename: 'a.jsonl', mode: 'overwrite' });
    const second = counted.registerAtofExporter({ outputDirectory: dir, filename: 'b.jsonl', mode: 'overwrite' });
    counted.mark({ name: 'one' });
    await counted.flush();
    expect(drains).toBe(1);
    expect(readAtof(first.path).map((e) => e.name)).toEqual(['one']);
    expect(readAtof(second.path).map((e) => e.name)).toEqual(['one']);
    // The plugin flushes its own sink right after the relay: nothing was sent since, so nothing to wait for.
    await first.flush();
    expect(drains).toBe(1);
    counted.mark({ name: 'two' });
    await first.flush();
    expect(drains).toBe(2);
    expect(readAtof(first.path).map((e) => e.name)).toEqual(['one', 'two']);
    expect(counted.stats().dropped).toBe(0);
    expect(counted.outputs().map((o) => o.errors)).toEqual([0, 0]);
  });

  it('rejects an invalid mode or file name with AtofExporterError before touching the disk', () => {
    backend = relay();
    const dir = tempDir('bad');
    expect(() => backend!.registerAtofExporter({ outputDirectory: dir, filename: 'x.jsonl', mode: 'sideways' as never })).toThrow(AtofExporterError);
    expect(() => backend!.registerAtofExporter({ outputDirectory: dir, filename: '../x.jsonl', mode: 'append' })).toThrow(/plain file name/);
    expect(() => backend!.registerAtofExporter({ outputDirectory: dir, filename: '', mode: 'append' })).toThrow(AtofExporterError);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe.skipIf(!available)('native per-session ATIF', () => {
  let backend: NativeRelay | undefined;
  afterEach(async () => {
    await backend?.shutdown();
    backend = undefined;
  });

  function turn(r: NativeRelay, session: ScopeHandle, text: string): void {
    const llm = r.llmStart({ name: 'anthropic', parent: session, request: REQUEST(text), modelName: 'm' });
    r.llmEnd(llm, { response: RESPONSE(`${text} answer`) });
  }

  it('gives each interleaved session only its own steps and embeds its subagent', async () => {
    backend = relay();
    const r = backend;
    const a = r.pushScope({ name: 'session-a', category: 'agent' });
    const b = r.pushScope({ name: 'session-b', category: 'agent' });
    const atifA = r.registerAtifExporter({ scope: a, sessionId: 'sid-a', agentName: 'agent', agentVersion: '1', modelName: 'm' });
    const atifB = r.registerAtifExporter({ scope: b, sessionId: 'sid-b', agentName: 'agent', agentVersion: '1' });
    turn(r, a, 'a1');
    turn(r, b, 'b1');
    const sub = r.pushScope({ name: 'helper', category: 'agent', parent: a, input: { prompt: 'sub' } });
    const parallel = r.pushScope({ name: 'parallel', category: 'agent', parent: a, input: { prompt: 'par' } });
    turn(r, sub, 'sub1');
    turn(r, parallel, 'par1');
    turn(r, b, 'b2');
    r.popScope(sub);
    r.popScope(parallel);
    turn(r, a, 'a2');
    r.popScope(b);
    r.popScope(a);

    const docA = JSON.parse(await atifA.exportJson()) as AtifTrajectory;
    const docB = JSON.parse(await atifB.exportJson()) as AtifTrajectory;
    expect(validateAtif(docA)).toEqual([]);
    expect(validateAtif(docB)).toEqual([]);
    expect(docA).toMatchObject({ session_id: 'sid-a', agent: { name: 'agent', version: '1', model_name: 'm' } });
    const messages = (doc: AtifTrajectory) => doc.steps.map((step) => `${step.source}:${typeof step.message === 'string' ? step.message : JSON.stringify(step.message)}`);
    expect(messages(docB)).toEqual(['user:b1', 'agent:b1 answer', 'user:b2', 'agent:b2 answer']);
    expect(messages(docA)).toEqual(['user:a1', 'agent:a1 answer', 'agent:', 'agent:', 'user:a2', 'agent:a2 answer']);
    expect(docA.subagent_trajectories?.map(messages)).toEqual([
      ['user:sub1', 'agent:sub1 answer'],
      ['user:par1', 'agent:par1 answer'],
    ]);
    atifA.deregister();
    atifB.deregister();
  });

  it('produces what native\'s own AtifExporter produces for a lone session', async () => {
    backend = relay();
    const r = backend;
    const lib = createRequire(import.meta.url)('nemo-relay-node') as {
      AtifExporter: new (sessionId: string, agentName: string, agentVersion: string, modelName?: string) => {
        register(name: string): void;
        deregister(name: string): boolean;
        exportJson(): string;
      };
    };
    const reference = new lib.AtifExporter('sid', 'agent', '1', 'm');
    reference.register('reference-atif');
    const session = r.pushScope({ name: 'claude-code', category: 'agent', metadata: { nemo_relay_scope_role: 'session' }, input: { cwd: '/w' } });
    const atif = r.registerAtifExporter({ scope: session, sessionId: 'sid', agentName: 'agent', agentVersion: '1', modelName: 'm' });
    const t = r.pushScope({ name: 'turn', category: 'custom', parent: session, metadata: { nemo_relay_scope_role: 'turn' } });
    const llm = r.llmStart({ name: 'anthropic', parent: t, request: REQUEST('list files'), modelName: 'm' });
    r.llmEnd(llm, { response: RESPONSE('running ls', { id: 'toolu_1', name: 'Bash' }) });
    const tool = r.toolStart({ name: 'Bash', parent: t, args: { command: 'ls' }, toolCallId: 'toolu_1' });
    r.toolEnd(tool, { result: { stdout: 'a.txt' }, annotation: { ms: 1 } });
    await r.executeTool({ name: 'Write', parent: t, args: {}, toolCallId: 'toolu_2' }, () => 'written');
    const sub = r.pushScope({ name: 'helper', category: 'agent', parent: t, metadata: { nemo_relay_scope_role: 'subagent' }, input: { prompt: 'count' } });
    turn(r, sub, 'count');
    r.popScope(sub, { output: 'done' });
    r.popScope(t);
    r.popScope(session);
    const ours = await atif.exportJson();
    const theirs = reference.exportJson();
    reference.deregister('reference-atif');
    atif.deregister();
    expect(validateAtif(JSON.parse(ours))).toEqual([]);
    expect(JSON.parse(ours)).toEqual(JSON.parse(theirs));
    expect(ours).toBe(theirs);
  });

  it('exports the same document twice, and a partial one while the session is open', async () => {
    backend = relay();
    const s = backend.pushScope({ name: 's', category: 'agent' });
    const atif = backend.registerAtifExporter({ scope: s, sessionId: 'sid', agentName: 'n', agentVersion: 'v' });
    turn(backend, s, 'first');
    const partial = JSON.parse(await atif.exportJson()) as AtifTrajectory;
    expect(partial.steps).toHaveLength(2);
    turn(backend, s, 'second');
    backend.popScope(s);
    const once = await atif.exportJson();
    expect(await atif.exportJson()).toBe(once);
    expect((JSON.parse(once) as AtifTrajectory).steps).toHaveLength(4);
    atif.deregister();
    atif.deregister();
  });

  it('stops collecting after deregister, and a later exporter starts clean', async () => {
    backend = relay();
    const s = backend.pushScope({ name: 's', category: 'agent' });
    const first = backend.registerAtifExporter({ scope: s, sessionId: 'one', agentName: 'n', agentVersion: 'v' });
    turn(backend, s, 'seen');
    await backend.flush();
    first.deregister();
    turn(backend, s, 'unseen-by-first');
    const second = backend.registerAtifExporter({ scope: s, sessionId: 'two', agentName: 'n', agentVersion: 'v' });
    turn(backend, s, 'seen-by-second');
    backend.popScope(s);
    const one = JSON.parse(await first.exportJson()) as AtifTrajectory;
    const two = JSON.parse(await second.exportJson()) as AtifTrajectory;
    expect(one.steps.map((step) => step.message)).toEqual(['seen', 'seen answer']);
    expect(two.steps.map((step) => step.message)).toEqual(['seen-by-second', 'seen-by-second answer']);
    second.deregister();
  });

  it('returns an empty trajectory (valid but for Harbor\'s non-empty steps) for a scope handle it does not know', async () => {
    backend = relay();
    const atif = backend.registerAtifExporter({ scope: {} as ScopeHandle, sessionId: 'sid', agentName: 'n', agentVersion: 'v' });
    backend.mark({ name: 'unrelated' });
    const doc = JSON.parse(await atif.exportJson()) as AtifTrajectory;
    expect(doc.steps).toEqual([]);
    expect(validateAtif(doc).map((error) => `${error.path} ${error.rule}`)).toEqual(['$.steps atif.steps_empty']);
    expect(backend.stats().errors).toBe(1);
    atif.deregister();
  });
});
