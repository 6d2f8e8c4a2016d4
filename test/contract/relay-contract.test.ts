// The RelayBackend contract, one scenario table run against the fake, the
// in-memory relay and the native adapter. Behavioural assertions (nothing
// throws, handles come back, managed calls return the host's own result and
// error, flush/shutdown settle) hold for all three; the fake records calls
// and writes nothing, so assertions about files and their formats apply to
// memory and native only, and every file they write is validated.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  AtofExporter,
  JsonObject,
  LlmHandle,
  OutputHealth,
  RelayBackend,
  ScopeHandle,
  ToolHandle,
} from '../../src/relay/contract.ts';
import type { FakeRelay } from '../../src/testing/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { BACKENDS, nativeLoadError, tempDir } from './backends.ts';
import { pairsByUuid, parseValidAtif, readAtifDir, readValidAtof, type ReadEvent } from './files.ts';
import { observabilityDocument } from '../support/plugins-toml.ts';

const OPENAI_REQUEST = (text: string) => ({
  headers: {},
  content: { model: 'gpt-4o', messages: [{ role: 'user', content: text }] },
});

const OPENAI_RESPONSE = (text: string, toolCall?: { id: string; name: string; args: object }) => ({
  id: `chatcmpl-${text.length}`,
  model: 'gpt-4o',
  choices: [
    {
      index: 0,
      finish_reason: toolCall ? 'tool_calls' : 'stop',
      message: {
        role: 'assistant',
        content: toolCall ? null : text,
        ...(toolCall
          ? { tool_calls: [{ id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: JSON.stringify(toolCall.args) } }] }
          : {}),
      },
    },
  ],
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
});

/** Values a host might hand over by accident; none may make a backend throw. */
function hostileValues(): Record<string, unknown> {
  const cycle: Record<string, unknown> = { name: 'cycle' };
  cycle.self = cycle;
  return {
    cycle,
    bigint: { count: 10n },
    fn: () => 1,
    symbol: Symbol('s'),
    date: new Date(0),
    map: new Map([['k', 1]]),
    error: new TypeError('boom'),
    nan: { n: Number.NaN, inf: Number.POSITIVE_INFINITY },
    sparse: [1, undefined, 3],
    throwing: {
      get secret() {
        throw new Error('getter throws');
      },
    },
  };
}

/** A payload whose key listing throws: `toJson` copes, a hand-rolled fast path may not. */
function keylessProxy(): object {
  return new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('ownKeys throws');
      },
    },
  );
}

class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(readonly status: number) {
    super(`provider answered ${status}`);
  }
}

const isInteger = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;

function expectOutputShape(output: OutputHealth): void {
  expect(['atof', 'atif']).toContain(output.kind);
  expect(typeof output.path).toBe('string');
  expect(output.lastWrite === null || !Number.isNaN(Date.parse(output.lastWrite))).toBe(true);
  expect(isInteger(output.bytes)).toBe(true);
  expect(isInteger(output.errors)).toBe(true);
}

describe.each(BACKENDS)('RelayBackend contract: $name', (backendCase) => {
  const title = backendCase.available ? 'shared behaviour' : `skipped: native backend cannot load here (${nativeLoadError})`;
  describe.skipIf(!backendCase.available)(title, () => {
    let backend: RelayBackend;
    let dir: string;
    let sinks: AtofExporter[];

    beforeEach(() => {
      backend = backendCase.create();
      dir = tempDir(`contract-${backendCase.name}`);
      sinks = [];
    });
    afterEach(async () => {
      await backend.shutdown?.();
    });

    /** An ATOF sink in this test's folder; for the fake, a recorded registration. */
    const sink = (filename = 'events.jsonl'): AtofExporter => {
      const exporter = backend.registerAtofExporter({ outputDirectory: dir, filename, mode: 'overwrite' });
      sinks.push(exporter);
      return exporter;
    };

    /** Flushes and returns the sink's validated events (file backends only). */
    const written = async (exporter: AtofExporter): Promise<ReadEvent[]> => {
      await backend.flush();
      await exporter.flush();
      return readValidAtof(exporter.path).events;
    };

    it(`reports kind "${backendCase.name}"`, () => {
      expect(backend.kind).toBe(backendCase.name);
      if (backend.version !== undefined) expect(typeof backend.version).toBe('string');
    });

    // ------------------------------------------------------------- handles

    it('returns handles it accepts back as parents and as the span or scope to end', async () => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent', input: { session_id: 's1' }, metadata: { session_id: 's1' } });
      const turn = backend.pushScope({ name: 'turn', category: 'custom', parent: session });
      backend.mark({ name: 'turn.start', parent: turn, data: { n: 1 } });
      const llm = backend.llmStart({ name: 'openai', parent: turn, request: OPENAI_REQUEST('hi'), modelName: 'gpt-4o' });
      backend.llmEnd(llm, { response: OPENAI_RESPONSE('hello') });
      const tool = backend.toolStart({ name: 'read_file', parent: session, args: { path: 'a' }, toolCallId: 'call-1' });
      backend.toolEnd(tool, { result: 'contents' });
      backend.popScope(turn);
      backend.popScope(session);

      for (const handle of [session, turn, llm, tool]) {
        expect(typeof handle).toBe('object');
        expect(handle).not.toBeNull();
      }
      expect(new Set([session, turn, llm, tool]).size).toBe(4);

      if (backendCase.name === 'fake') {
        const fake = backend as FakeRelay;
        expect(fake.callsOf('popScope').map((call) => call.args.handle)).toEqual([turn, session]);
        expect(fake.callsOf('llmEnd')[0]!.args.handle).toBe(llm);
        expect(fake.callsOf('toolEnd')[0]!.args.handle).toBe(tool);
        expect(fake.callsOf('mark')[0]!.args.parent).toBe(turn);
        return;
      }
      const log = await written(events);
      const start = (name: string) => log.find((e) => e.name === name && (e.kind === 'mark' || e.scope_category === 'start'))!;
      expect(log.map((e) => [e.kind, e.scope_category ?? null, e.category, e.name])).toEqual([
        ['scope', 'start', 'agent', 'session'],
        ['scope', 'start', 'custom', 'turn'],
        ['mark', null, null, 'turn.start'],
        ['scope', 'start', 'llm', 'openai'],
        ['scope', 'end', 'llm', 'openai'],
        ['scope', 'start', 'tool', 'read_file'],
        ['scope', 'end', 'tool', 'read_file'],
        ['scope', 'end', 'custom', 'turn'],
        ['scope', 'end', 'agent', 'session'],
      ]);
      expect(start('turn').parent_uuid).toBe(start('session').uuid);
      expect(start('turn.start').parent_uuid).toBe(start('turn').uuid);
      expect(start('openai').parent_uuid).toBe(start('turn').uuid);
      expect(start('read_file').parent_uuid).toBe(start('session').uuid);
      expect(start('read_file').category_profile).toEqual({ tool_call_id: 'call-1' });
      expect(start('openai').category_profile).toEqual({ model_name: 'gpt-4o' });
      for (const [uuid, pair] of pairsByUuid(log)) {
        expect(pair.start, uuid).toBeDefined();
        expect(pair.ends, uuid).toHaveLength(1);
      }
    });

    if (backendCase.writesFiles) {
      it('gives the propagation context of a span, and a top-level scope pushed with it continues it', async () => {
        const events = sink();
        const client = backend.pushScope({ name: 'client', category: 'agent', metadata: { session_id: 'c' } });
        const tool = backend.toolStart({ name: 'add', parent: client, args: { a: 1 }, toolCallId: 'call-1' });
        const llm = backend.llmStart({ name: 'openai', parent: client, request: OPENAI_REQUEST('hi') });
        const context = backend.propagationContext!(tool)!;
        const ofScope = backend.propagationContext!(client)!;
        const ofLlm = backend.propagationContext!(llm)!;
        // As another process would get it: through the wire text.
        const server = backend.pushScope({ name: 'server', category: 'agent', metadata: { session_id: 's' }, propagation: context });
        const inner = backend.pushScope({ name: 'inner', category: 'agent', parent: server });
        const serverLlm = backend.llmStart({ name: 'openai', parent: inner, request: OPENAI_REQUEST('inner') });
        backend.llmEnd(serverLlm, { response: OPENAI_RESPONSE('done') });
        backend.popScope(inner);
        backend.popScope(server);
        // A context native refuses (version 2) opens an ordinary top-level scope.
        const refused = backend.pushScope({ name: 'refused', category: 'agent', propagation: { ...context, version: 2 as 1 } });
        backend.popScope(refused);
        backend.llmEnd(llm, { response: OPENAI_RESPONSE('hello') });
        backend.toolEnd(tool, { result: 2 });
        backend.popScope(client);
        expect(backend.propagationContext!(createFakeRelay().pushScope({ name: 'x', category: 'agent' }))).toBeNull();

        const log = await written(events);
        const start = (name: string) => log.find((e) => e.name === name && e.scope_category === 'start')!;
        const root = start('client').propagation_root_uuid;
        expect(root).toBe(start('client').uuid);
        expect(context).toEqual({ version: 1, rootUuid: root, parentUuid: start('add').uuid });
        expect(ofScope).toEqual({ version: 1, rootUuid: root, parentUuid: start('client').uuid });
        expect(ofLlm).toEqual({ version: 1, rootUuid: root, parentUuid: log.find((e) => e.category === 'llm')!.uuid });
        expect(start('server').parent_uuid).toBe(start('add').uuid);
        for (const name of ['server', 'inner']) expect(start(name).propagation_root_uuid, name).toBe(root);
        expect(log.filter((e) => e.parent_uuid === start('inner').uuid).map((e) => e.propagation_root_uuid)).toEqual([root, root]);
        expect(start('inner').parent_uuid).toBe(start('server').uuid);
        expect(start('refused').propagation_root_uuid).toBe(start('refused').uuid);
        expect(start('refused').parent_uuid).not.toBe(start('add').uuid);
        expect(backend.stats!().errors).toBeGreaterThan(0);
      });
    }

    it('never throws on foreign, wrong-kind or missing handles', async () => {
      const events = sink();
      const foreign = createFakeRelay().pushScope({ name: 'elsewhere', category: 'agent' });
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const llm = backend.llmStart({ name: 'llm', parent: session, request: OPENAI_REQUEST('x') });
      const tool = backend.toolStart({ name: 'tool', parent: session, args: {} });
      const calls: (() => unknown)[] = [
        () => backend.popScope(foreign),
        () => backend.popScope({} as ScopeHandle),
        () => backend.popScope(null as unknown as ScopeHandle),
        () => backend.popScope(undefined as unknown as ScopeHandle),
        () => backend.popScope(llm as unknown as ScopeHandle),
        () => backend.llmEnd(tool as unknown as LlmHandle, { response: {} }),
        () => backend.toolEnd(llm as unknown as ToolHandle, { result: null }),
        () => backend.llmEnd('llm' as unknown as LlmHandle, { response: {} }),
        () => backend.toolEnd(42 as unknown as ToolHandle, { result: null }),
        () => backend.mark({ name: 'orphan', parent: foreign }),
        () => backend.mark({ name: 'orphan', parent: 'nope' as unknown as ScopeHandle }),
        () => backend.pushScope({ name: 'child', category: 'agent', parent: {} as ScopeHandle }),
        () => backend.llmStart({ name: 'llm2', parent: tool as unknown as ScopeHandle, request: OPENAI_REQUEST('y') }),
        () => backend.toolStart({ name: 'tool2', parent: foreign, args: {} }),
      ];
      for (const call of calls) expect(call).not.toThrow();
      // A wrong-kind end did not end the real span: it still ends once, now.
      expect(() => backend.llmEnd(llm, { response: OPENAI_RESPONSE('ok') })).not.toThrow();
      expect(() => backend.toolEnd(tool, { result: 'ok' })).not.toThrow();
      backend.popScope(session);

      if (!backendCase.writesFiles) return;
      expect(backend.stats!().errors).toBeGreaterThanOrEqual(9);
      const log = await written(events);
      const pairs = pairsByUuid(log);
      for (const name of ['session', 'llm', 'tool']) {
        const start = log.find((e) => e.name === name && e.scope_category === 'start')!;
        expect(pairs.get(start.uuid)!.ends, name).toHaveLength(1);
      }
      expect(log.some((e) => e.name === 'elsewhere')).toBe(false);
    });

    // ------------------------------------------------------------- bad input

    it('never throws on hostile payloads, names, categories, attributes or timestamps', async () => {
      const events = sink();
      const hostile = hostileValues();
      const values = Object.values(hostile);
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      for (const [label, value] of Object.entries(hostile)) {
        expect(() => {
          const scope = backend.pushScope({ name: `scope-${label}`, category: 'function', parent: session, input: value, metadata: value });
          backend.mark({ name: `mark-${label}`, parent: scope, data: value, metadata: value });
          const llm = backend.llmStart({
            name: `llm-${label}`,
            parent: scope,
            request: { headers: { 'x-h': value } as unknown as Record<string, string>, content: value },
            metadata: value,
            modelName: value as string,
          });
          backend.llmEnd(llm, { response: value, metadata: value });
          const tool = backend.toolStart({ name: `tool-${label}`, parent: scope, args: value, metadata: value, toolCallId: value as string });
          backend.toolEnd(tool, { result: value, annotation: value, metadata: value, status: 'error' });
          backend.popScope(scope, { output: value, metadata: value });
        }, label).not.toThrow();
      }
      const odd: (() => unknown)[] = [
        () => backend.pushScope({ name: 'bad-category', category: 'nonsense' as never }),
        () => backend.pushScope({ name: 'bad-attributes', category: 'agent', attributes: ['bogus', 7, null] as never }),
        () => backend.pushScope({ name: 42 as unknown as string, category: 'agent' }),
        () => backend.pushScope({ name: 'nan-time', category: 'agent', timestampUs: Number.NaN }),
        () => backend.pushScope({ name: 'float-time', category: 'agent', timestampUs: 1.5 }),
        () => backend.pushScope({ name: 'huge-time', category: 'agent', timestampUs: 2 ** 60 }),
        () => backend.mark({ name: 'string-time', timestampUs: 'now' as unknown as number }),
        () => backend.llmStart({ name: 'no-request', request: undefined as never }),
        () => backend.llmStart({ name: 'bad-request', request: { headers: 5, content: values } as never }),
        () => backend.toolStart({ name: 'no-args', args: undefined }),
      ];
      for (const call of odd) expect(call).not.toThrow();
      backend.popScope(session);

      if (!backendCase.writesFiles) return;
      const log = await written(events);
      // Every hostile payload was recorded, converted to JSON, not dropped.
      for (const label of Object.keys(hostile)) {
        expect(log.filter((e) => e.name === `mark-${label}`), label).toHaveLength(1);
        expect(log.filter((e) => e.name === `tool-${label}`), label).toHaveLength(2);
      }
      const cycleMark = log.find((e) => e.name === 'mark-cycle')!;
      expect(cycleMark.data).toEqual({ name: 'cycle', self: '[Circular]' });
      expect(log.find((e) => e.name === 'bad-category')?.category).toBe('unknown');
    });

    // A Proxy whose ownKeys trap throws must still produce its events (the
    // payload becomes "[Unserializable: ...]"), as native records them.
    it('records an event whose payload cannot even list its keys', async () => {
      const events = sink();
      const proxy = keylessProxy();
      expect(() => {
        const scope = backend.pushScope({ name: 'scope-proxy', category: 'agent', input: proxy, metadata: proxy });
        backend.mark({ name: 'mark-proxy', parent: scope, data: proxy, metadata: proxy });
        backend.popScope(scope, { output: proxy });
      }).not.toThrow();
      if (!backendCase.writesFiles) return;
      const log = await written(events);
      expect(log.map((e) => e.name)).toEqual(['scope-proxy', 'mark-proxy', 'scope-proxy']);
    });

    it('ignores a second pop or end, and counts it', async () => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const llm = backend.llmStart({ name: 'llm', parent: session, request: OPENAI_REQUEST('x') });
      const tool = backend.toolStart({ name: 'tool', parent: session, args: {} });
      const before = backend.stats?.().errors ?? 0;
      for (let i = 0; i < 2; i++) {
        expect(() => backend.llmEnd(llm, { response: OPENAI_RESPONSE(`end ${i}`) })).not.toThrow();
        expect(() => backend.toolEnd(tool, { result: i })).not.toThrow();
        expect(() => backend.popScope(session)).not.toThrow();
      }
      if (!backendCase.writesFiles) return;
      expect(backend.stats!().errors - before).toBe(3);
      const log = await written(events);
      expect(log.map((e) => [e.name, e.scope_category])).toEqual([
        ['session', 'start'],
        ['llm', 'start'],
        ['tool', 'start'],
        ['llm', 'end'],
        ['tool', 'end'],
        ['session', 'end'],
      ]);
      // The first end wins.
      expect(log.find((e) => e.name === 'tool' && e.scope_category === 'end')!.data).toBe(0);
    });

    // ------------------------------------------------------------- managed execution

    it('resolves managed LLM execution with the very object the call returned', async () => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const response = OPENAI_RESPONSE('managed');
      let seen: unknown;
      const result = backend.executeLlm!(
        { name: 'openai.chat_completions', parent: session, request: OPENAI_REQUEST('hi'), modelName: 'gpt-4o', metadata: { turn_id: 't1' } },
        async (request) => {
          seen = request;
          return response;
        },
      );
      await expect(result).resolves.toBe(response);
      expect(seen).toMatchObject({ content: OPENAI_REQUEST('hi').content });
      backend.popScope(session);
      if (!backendCase.writesFiles) return;
      const log = await written(events);
      const spans = log.filter((e) => e.category === 'llm');
      expect(spans.map((e) => e.scope_category)).toEqual(['start', 'end']);
      expect(spans[1]!.data).toEqual(JSON.parse(JSON.stringify(response)));
      expect(spans[1]!.metadata).toMatchObject({ turn_id: 't1', 'otel.status_code': 'OK' });
    });

    it('resolves managed tool execution with the very object the call returned', async () => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const value = { files: ['a', 'b'] };
      let seen: unknown;
      const result = backend.executeTool!({ name: 'list', parent: session, args: { dir: '.' }, toolCallId: 'call-7' }, (args) => {
        seen = args;
        return value;
      });
      await expect(result).resolves.toBe(value);
      expect(seen).toEqual({ dir: '.' });
      backend.popScope(session);
      if (!backendCase.writesFiles) return;
      const log = await written(events);
      const spans = log.filter((e) => e.category === 'tool');
      expect(spans.map((e) => e.scope_category)).toEqual(['start', 'end']);
      expect(spans[0]!.category_profile).toEqual({ tool_call_id: 'call-7' });
      expect(spans[1]!.data).toEqual(value);
    });

    it('hands managed calls the host\'s own media and records it whole', async () => {
      // The provider and the tool must get the image. A managed call's content and result are the response cache's
      // key and answer, so they are recorded whole (a Buffer as its JSON), unlike an observed call's (payload journey).
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const image = Buffer.alloc(4096, 1);
      const content = { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image }] }] };
      let sentImage: unknown;
      await backend.executeLlm!({ name: 'openai.chat_completions', parent: session, request: { headers: {}, content } }, (request) => {
        sentImage = ((request.content as typeof content).messages[0]!.content[1] as { image: unknown }).image;
        return OPENAI_RESPONSE('A grey square.');
      });
      expect(sentImage).toBe(image);
      let toolArgs: unknown;
      await backend.executeTool!({ name: 'describe', parent: session, args: { image } }, (args) => {
        toolArgs = args;
        return { image };
      });
      expect((toolArgs as { image: unknown }).image).toBe(image);
      backend.popScope(session);
      if (!backendCase.writesFiles) return;
      const log = await written(events);
      const llmStart = log.find((e) => e.category === 'llm' && e.scope_category === 'start')!;
      const whole = JSON.parse(JSON.stringify(image)) as unknown;
      expect((llmStart.data as unknown as { content: typeof content }).content.messages[0]!.content[1]).toEqual({ type: 'image', image: whole });
      const tool = log.filter((e) => e.category === 'tool');
      expect(tool.map((e) => e.data)).toEqual([{ image: whole }, { image: whole }]);
    });

    const failures: [string, () => unknown, 'sync' | 'async'][] = [
      ['an Error subclass (rejected)', () => new ProviderError(429), 'async'],
      ['an Error subclass (thrown synchronously)', () => new ProviderError(500), 'sync'],
      ['a string', () => 'plain string failure', 'async'],
      ['a plain object', () => ({ code: 'E_TOOL', retry: true }), 'async'],
    ];
    it.each(failures)('rejects managed execution with the original error object: %s', async (_label, make, mode) => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      const llmError = make();
      const toolError = make();
      const fail = (error: unknown): (() => unknown) =>
        mode === 'sync'
          ? () => {
              throw error;
            }
          : async () => {
              throw error;
            };
      await expect(
        backend.executeLlm!({ name: 'openai.chat_completions', parent: session, request: OPENAI_REQUEST('x') }, fail(llmError)),
      ).rejects.toBe(llmError);
      await expect(backend.executeTool!({ name: 'shell', parent: session, args: { cmd: 'false' } }, fail(toolError))).rejects.toBe(toolError);
      backend.popScope(session);
      if (!backendCase.writesFiles) return;
      const log = await written(events);
      const ends = log.filter((e) => (e.category === 'llm' || e.category === 'tool') && e.scope_category === 'end');
      expect(ends).toHaveLength(2);
      for (const end of ends) {
        expect(end.data).toBeNull();
        expect(end.metadata).toMatchObject({ 'otel.status_code': 'ERROR', 'error.type': 'internal_error' });
      }
      if (llmError instanceof ProviderError) expect(ends[0]!.metadata).toMatchObject({ 'exception.type': 'ProviderError' });
    });

    // ------------------------------------------------------------- flush and shutdown

    it('flush() resolves before anything happened, after events, concurrently and after shutdown', async () => {
      await expect(backend.flush()).resolves.toBeUndefined();
      sink();
      backend.mark({ name: 'one' });
      await expect(Promise.all([backend.flush(), backend.flush(), backend.flush()])).resolves.toHaveLength(3);
      await backend.shutdown?.();
      await expect(backend.flush()).resolves.toBeUndefined();
    });

    it('flush() does not reject when an ATOF file cannot be written', async () => {
      // The sink's folder is replaced by a plain file: writes fail, flush must still resolve.
      const blocked = path.join(dir, 'blocked');
      const exporter = backend.registerAtofExporter({ outputDirectory: blocked, filename: 'events.jsonl', mode: 'overwrite' });
      fs.rmSync(blocked, { recursive: true, force: true });
      fs.writeFileSync(blocked, 'not a folder');
      backend.mark({ name: 'lost' });
      await expect(backend.flush()).resolves.toBeUndefined();
      await expect(exporter.flush()).resolves.toBeUndefined();
      await expect(exporter.close()).resolves.toBeUndefined();
    });

    it('shutdown() is idempotent, and calls after it neither throw nor reach closed files', async () => {
      const events = sink();
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      backend.mark({ name: 'before', parent: session });
      backend.popScope(session);
      await expect(Promise.all([backend.shutdown!(), backend.shutdown!()])).resolves.toHaveLength(2);
      await expect(backend.shutdown!()).resolves.toBeUndefined();
      const snapshot = backendCase.writesFiles ? fs.readFileSync(events.path, 'utf8') : '';
      expect(() => {
        const late = backend.pushScope({ name: 'late', category: 'agent' });
        backend.mark({ name: 'after', parent: late });
        backend.popScope(late);
      }).not.toThrow();
      await backend.flush();
      await backend.shutdown!();
      if (!backendCase.writesFiles) {
        expect((backend as FakeRelay).callsOf('shutdown').length).toBeGreaterThanOrEqual(3);
        return;
      }
      expect(fs.readFileSync(events.path, 'utf8')).toBe(snapshot);
      expect(readValidAtof(events.path).events.map((e) => e.name)).toEqual(['session', 'before', 'session']);
    });

    // ------------------------------------------------------------- ATOF exporter

    it('registerAtofExporter returns the path of the file it writes; close() is idempotent', async () => {
      const exporter = backend.registerAtofExporter({ outputDirectory: path.join(dir, 'nested', 'atof'), filename: 'run.jsonl', mode: 'append' });
      expect(typeof exporter.path).toBe('string');
      expect(path.basename(exporter.path)).toBe('run.jsonl');
      backend.mark({ name: 'hello', data: { n: 1 } });
      await expect(exporter.flush()).resolves.toBeUndefined();
      await expect(exporter.close()).resolves.toBeUndefined();
      await expect(exporter.close()).resolves.toBeUndefined();
      await expect(exporter.flush()).resolves.toBeUndefined();
      backend.mark({ name: 'after-close' });
      await backend.flush();
      if (!backendCase.writesFiles) return;
      expect(exporter.path).toBe(path.join(dir, 'nested', 'atof', 'run.jsonl'));
      const { events } = readValidAtof(exporter.path);
      expect(events.map((e) => [e.kind, e.name, e.data])).toEqual([['mark', 'hello', { n: 1 }]]);
    });

    if (backendCase.writesFiles) {
      it('appends to an existing ATOF file in append mode and starts it afresh in overwrite mode', async () => {
        for (const mode of ['append', 'overwrite'] as const) {
          for (const round of [1, 2]) {
            const exporter = backend.registerAtofExporter({ outputDirectory: dir, filename: `${mode}.jsonl`, mode });
            backend.mark({ name: `${mode}-${round}` });
            await exporter.close();
          }
        }
        expect(readValidAtof(path.join(dir, 'append.jsonl')).events.map((e) => e.name)).toEqual(['append-1', 'append-2']);
        expect(readValidAtof(path.join(dir, 'overwrite.jsonl')).events.map((e) => e.name)).toEqual(['overwrite-2']);
      });

      // Both backends refuse a filename that is not a plain file name.
      it('never writes an ATOF file outside its output folder', async () => {
        const inner = path.join(dir, 'inner');
        let exporter: AtofExporter | undefined;
        try {
          exporter = backend.registerAtofExporter({ outputDirectory: inner, filename: '../escaped.jsonl', mode: 'overwrite' });
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
        }
        backend.mark({ name: 'where am I' });
        await backend.flush();
        await exporter?.close();
        expect(fs.existsSync(path.join(dir, 'escaped.jsonl'))).toBe(false);
      });

      it('writes each event to every registered ATOF file', async () => {
        const first = sink('first.jsonl');
        const second = sink('second.jsonl');
        const session = backend.pushScope({ name: 'session', category: 'agent' });
        backend.popScope(session);
        const a = await written(first);
        const b = await written(second);
        expect(a).toHaveLength(2);
        expect(b).toEqual(a);
      });
    }

    // ------------------------------------------------------------- ATIF exporter

    it('exportJson() returns the session trajectory as JSON, repeatedly and while scopes are open', async () => {
      const session = backend.pushScope({ name: 'hermes-session-s1', category: 'agent', metadata: { session_id: 's1' } });
      const exporter = backend.registerAtifExporter({ scope: session, sessionId: 's1', agentName: 'Hermes Agent', agentVersion: '1.2.3', modelName: 'gpt-4o' });
      const llm = backend.llmStart({ name: 'openai', parent: session, request: OPENAI_REQUEST('list files'), modelName: 'gpt-4o' });
      backend.llmEnd(llm, { response: OPENAI_RESPONSE('', { id: 'call-1', name: 'ls', args: { dir: '.' } }) });
      const tool = backend.toolStart({ name: 'ls', parent: session, args: { dir: '.' }, toolCallId: 'call-1' });
      backend.toolEnd(tool, { result: 'a.txt' });
      // Another session's LLM call must not leak into this trajectory.
      const other = backend.pushScope({ name: 'hermes-session-s2', category: 'agent' });
      const otherLlm = backend.llmStart({ name: 'openai', parent: other, request: OPENAI_REQUEST('other session'), modelName: 'gpt-4o' });
      backend.llmEnd(otherLlm, { response: OPENAI_RESPONSE('not yours') });
      backend.popScope(other);

      const partial = await exporter.exportJson();
      expect(typeof partial).toBe('string');
      const partialDoc = JSON.parse(partial) as Record<string, unknown>;
      expect(partialDoc.session_id).toBe('s1');
      backend.popScope(session);
      const final = await exporter.exportJson();
      expect(await exporter.exportJson()).toBe(final);
      expect(() => exporter.deregister()).not.toThrow();
      expect(() => exporter.deregister()).not.toThrow();

      if (!backendCase.writesFiles) {
        // The fake's placeholder document: it records the calls, it builds nothing.
        expect(JSON.parse(final)).toEqual({ session_id: 's1', agent_name: 'Hermes Agent' });
        expect((backend as FakeRelay).ops().filter((op) => op.startsWith('atif.'))).toEqual([
          'atif.exportJson',
          'atif.exportJson',
          'atif.exportJson',
          'atif.deregister',
          'atif.deregister',
        ]);
        return;
      }
      parseValidAtif(partial, 'partial trajectory');
      const doc = parseValidAtif(final, 'final trajectory');
      expect(doc).toMatchObject({
        schema_version: 'ATIF-v1.7',
        session_id: 's1',
        trajectory_id: 's1',
        agent: { name: 'Hermes Agent', version: '1.2.3', model_name: 'gpt-4o' },
      });
      expect(doc.steps.map((step) => [step.source, step.message])).toEqual([
        ['user', 'list files'],
        ['agent', ''],
      ]);
      expect(doc.steps[1]!.tool_calls).toEqual([{ tool_call_id: 'call-1', function_name: 'ls', arguments: { dir: '.' } }]);
      expect(doc.steps[1]!.observation).toMatchObject({ results: [{ source_call_id: 'call-1', content: 'a.txt' }] });
      expect(JSON.stringify(doc)).not.toContain('other session');
    });

    it('an ATIF exporter for a foreign scope still answers with a document', async () => {
      const foreign = createFakeRelay().pushScope({ name: 'elsewhere', category: 'agent' });
      let exporter: ReturnType<RelayBackend['registerAtifExporter']> | undefined;
      expect(() => {
        exporter = backend.registerAtifExporter({ scope: foreign, sessionId: 'lost', agentName: 'a', agentVersion: 'v' });
      }).not.toThrow();
      backend.mark({ name: 'unrelated' });
      const json = await exporter!.exportJson();
      expect(JSON.parse(json)).toMatchObject({ session_id: 'lost' });
      if (backendCase.writesFiles) expect(parseValidAtif(json).steps).toEqual([]);
      exporter!.deregister();
    });

    // ------------------------------------------------------------- plugin config

    it('activates a plugins.toml document, reports on it, and closes idempotently', async () => {
      const document = observabilityDocument({
        atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'plugin-events.jsonl', mode: 'overwrite' }] },
        atif: { enabled: true, agent_name: 'hermes', agent_version: '1.0', output_directory: dir, filename_template: 'trajectory-{session_id}.json' },
      });
      const activation = await backend.initializePluginConfig(document);
      expect(Array.isArray(activation.report.diagnostics)).toBe(true);
      expect(Array.isArray(activation.report.configPaths)).toBe(true);
      expect(activation.report.diagnostics.filter((d) => d.level === 'error')).toEqual([]);

      const session = backend.pushScope({ name: 'hermes', category: 'agent', metadata: { session_id: 'plugin-s1', nemo_relay_scope_role: 'session' } });
      const llm = backend.llmStart({ name: 'openai', parent: session, request: OPENAI_REQUEST('through the plugin host') });
      backend.llmEnd(llm, { response: OPENAI_RESPONSE('done') });
      backend.popScope(session);
      await backend.flush();
      await expect(activation.close()).resolves.toBeUndefined();
      await expect(activation.close()).resolves.toBeUndefined();

      if (!backendCase.writesFiles) {
        expect((backend as FakeRelay).ops().filter((op) => op === 'initializePluginConfig' || op === 'activation.close')).toEqual([
          'initializePluginConfig',
          'activation.close',
        ]);
        return;
      }
      const { events } = readValidAtof(path.join(dir, 'plugin-events.jsonl'));
      expect(events.map((e) => e.name)).toEqual(['hermes', 'openai', 'openai', 'hermes']);
      const trajectories = readAtifDir(dir);
      expect(trajectories.size).toBe(1);
      const [trajectory] = [...trajectories.values()];
      expect(trajectory!.steps.map((step) => step.source)).toEqual(['user', 'agent']);
      // Closed means closed: a second activation is possible now.
      const again = await backend.initializePluginConfig(document);
      await again.close();
    });

    if (backendCase.writesFiles) {
      it('rejects an invalid plugins.toml document with an error that says why', async () => {
        const invalid = { version: 1, components: [{ kind: 'observability', enabled: true, config: { version: 4, atof: { enabled: 'yes' } } }] };
        const outcome = await backend.initializePluginConfig(invalid as unknown as JsonObject).then(
          async (activation) => {
            await activation.close();
            return null;
          },
          (error: unknown) => error,
        );
        expect(outcome).toBeInstanceOf(Error);
        expect((outcome as Error).message).toMatch(/invalid observability plugin config: invalid type: string "yes", expected a boolean/);
        // Said once: native's diagnostics carry the prefix the rejection's text already starts with.
        expect((outcome as Error).message.match(/invalid config/g)).toHaveLength(1);
      });
    }

    // ------------------------------------------------------------- stats and outputs

    it('stats() counts events, and outputs() describes every file being written', async () => {
      const initial = backend.stats!();
      for (const key of ['events', 'errors', 'dropped'] as const) expect(isInteger(initial[key]), key).toBe(true);
      const exporter = sink('health.jsonl');
      const session = backend.pushScope({ name: 'session', category: 'agent' });
      backend.mark({ name: 'm', parent: session });
      backend.popScope(session);
      expect(backend.stats!().events - initial.events).toBe(3);
      expect(backend.stats!().errors).toBe(initial.errors);
      await backend.flush();
      await exporter.flush();
      const outputs = backend.outputs!();
      expect(Array.isArray(outputs)).toBe(true);
      for (const output of outputs) expectOutputShape(output);
      if (!backendCase.writesFiles) return;
      const health = outputs.find((output) => output.path === exporter.path);
      expect(health).toMatchObject({ kind: 'atof', errors: 0 });
      expect(health!.bytes).toBe(fs.statSync(exporter.path).size);
      expect(health!.lastWrite).not.toBeNull();
    });
  });
});
