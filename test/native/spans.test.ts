import { describe, expect, it } from 'vitest';
import type { LlmHandle, ToolHandle } from '../../src/relay/contract.ts';
import { available, NativeFixture, recordingLogger, relay } from './support.ts';

describe.skipIf(!available)('native LLM and tool spans', () => {
  const fixture = new NativeFixture('spans');
  const recorded = fixture.recorded.bind(fixture);

  it('writes every end after its start, even when the caller stamps it at or before the start', async () => {
    const t = 1_764_400_000_000_000;
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent', timestampUs: t });
      const llm = r.llmStart({ name: 'openai', parent: s, request: { headers: {}, content: {} }, timestampUs: t + 10 });
      r.llmEnd(llm, { response: {}, timestampUs: t + 10 });
      const tool = r.toolStart({ name: 'x', parent: s, args: {}, timestampUs: t + 20 });
      r.toolEnd(tool, { result: 'ok', timestampUs: t + 5 });
      r.popScope(s, { timestampUs: t });
    });
    // recorded() already checks validateAtofEvents (end > start); the ends moved to start + 1 µs.
    const ends = events.filter((e) => e.scope_category === 'end').map((e) => [e.name, e.timestamp]);
    expect(ends).toEqual([
      ['openai', '2025-11-29T07:06:40.000011+00:00'],
      ['x', '2025-11-29T07:06:40.000021+00:00'],
      ['s', '2025-11-29T07:06:40.000001+00:00'],
    ]);
  });

  it('ends a tool with the {result} shape, its annotation and its call id', async () => {
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const tool = r.toolStart({ name: 'Bash', parent: s, args: { command: 'ls' }, toolCallId: 'toolu_1', metadata: { hook: 'pre' } });
      r.toolEnd(tool, { result: { stdout: 'a' }, annotation: { duration_ms: 3 }, metadata: { hook: 'post' } });
      r.popScope(s);
    });
    const [start, end] = events.filter((e) => e.name === 'Bash');
    expect(start).toMatchObject({ category: 'tool', data: { command: 'ls' }, category_profile: { tool_call_id: 'toolu_1' } });
    expect(end).toMatchObject({
      data: { stdout: 'a' },
      category_profile: { tool_call_id: 'toolu_1', tool_result_annotation: { duration_ms: 3 } },
    });
  });

  it('marks an error-ended tool with otel.status_code ERROR and keeps the caller error.type', async () => {
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const typed = r.toolStart({ name: 'typed', parent: s, args: {} });
      r.toolEnd(typed, { result: { error: 'ENOENT' }, status: 'error', annotation: { dropped: true }, metadata: { 'error.type': 'tool_error', k: 1 } });
      const bare = r.toolStart({ name: 'bare', parent: s, args: {} });
      r.toolEnd(bare, { result: new Error('boom'), status: 'error', metadata: 'not-an-object' });
      r.popScope(s);
    });
    const typedEnd = events.find((e) => e.name === 'typed' && e.scope_category === 'end');
    expect(typedEnd?.metadata).toEqual({ 'error.type': 'tool_error', k: 1, 'otel.status_code': 'ERROR' });
    expect(typedEnd?.category_profile).not.toHaveProperty('tool_result_annotation');
    const bareEnd = events.find((e) => e.name === 'bare' && e.scope_category === 'end');
    expect(bareEnd?.metadata).toEqual({ metadata: 'not-an-object', 'otel.status_code': 'ERROR' });
    expect(bareEnd?.data).toEqual({ message: 'boom', name: 'Error' });
  });

  it('records an LLM request with string headers and the error in response and metadata', async () => {
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const llm = r.llmStart({
        name: 'anthropic',
        parent: s,
        modelName: 'claude-x',
        request: {
          headers: { 'anthropic-version': '2023-06-01', retries: 2 as never, accept: ['a', 'b'] as never, gone: undefined as never, 'x-api-key': 'secret' },
          content: { messages: [{ role: 'user', content: 'hi' }] },
        },
      });
      r.llmEnd(llm, { response: { error: { type: 'overloaded_error' } }, metadata: { 'error.type': 'overloaded_error', 'otel.status_code': 'ERROR' } });
      r.popScope(s);
    });
    const [start, end] = events.filter((e) => e.name === 'anthropic');
    expect(start).toMatchObject({
      category: 'llm',
      category_profile: { model_name: 'claude-x' },
      data: { headers: { accept: 'a, b', 'anthropic-version': '2023-06-01', retries: '2' }, content: { messages: [{ role: 'user', content: 'hi' }] } },
    });
    // Native strips credentials and forces OK on a manual LLM end; the error stays in data and error.type.
    expect((start?.data as { headers: object }).headers).not.toHaveProperty('x-api-key');
    expect(end).toMatchObject({ data: { error: { type: 'overloaded_error' } }, metadata: { 'error.type': 'overloaded_error', 'otel.status_code': 'OK' } });
  });

  it('ignores a second end of a span, counting it as an error', async () => {
    const logger = recordingLogger();
    fixture.backend = relay(logger);
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const llm = r.llmStart({ name: 'p', parent: s, request: { headers: {}, content: {} } });
      r.llmEnd(llm, { response: { n: 1 } });
      r.llmEnd(llm, { response: { n: 2 } });
      const tool = r.toolStart({ name: 't', parent: s, args: {} });
      r.toolEnd(tool, { result: 1 });
      r.toolEnd(tool, { result: 2 });
      r.toolEnd(llm as unknown as ToolHandle, { result: 3 });
      r.llmEnd({} as LlmHandle, { response: null });
      r.popScope(s);
    });
    expect(events.filter((e) => e.scope_category === 'end' && e.name !== 's').map((e) => e.data)).toEqual([{ n: 1 }, 1]);
    expect(fixture.backend.stats()).toMatchObject({ events: 6, errors: 4, dropped: 0 });
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      expect.stringContaining('llmEnd failed: llm span already ended'),
      expect.stringContaining('toolEnd failed: tool span already ended'),
    ]);
  });

  it('emits spans without a parent under a detached root, away from open scopes', async () => {
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const tool = r.toolStart({ name: 'orphan', args: {} });
      r.toolEnd(tool, { result: null });
      r.mark({ name: 'orphan-mark' });
      r.popScope(s);
    });
    const session = events.find((e) => e.name === 's');
    const orphan = events.find((e) => e.name === 'orphan');
    expect(orphan?.parent_uuid).not.toBe(session?.uuid);
    expect(events.find((e) => e.name === 'orphan-mark')?.parent_uuid).toBe(orphan?.parent_uuid);
  });

  it('still ends spans and scopes whose end options cannot be read', async () => {
    const unreadable = new Proxy({}, {
      get() {
        throw new Error('unreadable');
      },
    }) as never;
    const events = await recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const llm = r.llmStart({ name: 'p', parent: s, request: { headers: {}, content: {} } });
      r.llmEnd(llm, unreadable);
      const tool = r.toolStart({ name: 't', parent: s, args: {} });
      r.toolEnd(tool, unreadable);
      r.popScope(s, unreadable);
    });
    expect(events.map((e) => `${e.name}:${e.scope_category}`)).toEqual(['s:start', 'p:start', 'p:end', 't:start', 't:end', 's:end']);
    expect(fixture.backend?.stats()).toMatchObject({ events: 6, errors: 0, dropped: 0 });
  });
});
