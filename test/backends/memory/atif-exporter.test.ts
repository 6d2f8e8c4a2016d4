// Per-session ATIF exporters of the memory relay: the document equals what
// native's AtifExporter exports for the same session, and interleaved
// sessions stay apart (native's own exporter would mix them).
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import type { ScopeHandle } from '../../../src/relay/contract.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { SLICE_UNITS } from '../../../src/shared/slices.ts';
import { native, nativeUnavailable, normalize, runNativeAtif, type Driver } from '../../support/native-driver.ts';

/**
 * One coding-agent session as a generator: it yields between steps so two
 * sessions can be interleaved. `onSession` receives the session scope
 * right after it is pushed (where a per-session exporter is registered).
 */
function* session(d: Driver, tag: string, t0: number, onSession?: (scope: ScopeHandle) => void): Generator<void, void, void> {
  let t = t0;
  const ts = () => (t += 10);
  const scope = d.pushScope({ name: `${tag}-agent`, category: 'agent', metadata: { session_id: tag, user_id: 'u-1' }, input: { cwd: '/w' }, timestampUs: ts() });
  onSession?.(scope);
  yield;
  d.mark({ name: 'session.start', parent: scope, metadata: { session_id: tag }, timestampUs: ts() });
  const turn = d.pushScope({ name: `${tag}-turn`, category: 'custom', parent: scope, metadata: { nemo_relay_scope_role: 'turn', turn_index: 1 }, timestampUs: ts() });
  yield;
  const request = {
    headers: { 'anthropic-version': '2023-06-01' },
    content: { model: 'claude-x', system: 'You are terse.', messages: [{ role: 'user', content: `${tag}: list files` }] },
  };
  const llm = d.llmStart({ name: 'anthropic', parent: turn, request, modelName: 'claude-x', timestampUs: ts() });
  yield;
  d.llmEnd(llm, {
    response: {
      id: `msg-${tag}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'text', text: `${tag} will run ls` },
        { type: 'tool_use', id: `tu-${tag}`, name: 'Bash', input: { command: 'ls' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 3 },
    },
    timestampUs: ts(),
  });
  yield;
  const tool = d.toolStart({ name: 'Bash', parent: turn, args: { command: 'ls' }, toolCallId: `tu-${tag}`, timestampUs: ts() });
  yield;
  d.toolEnd(tool, { result: { stdout: 'a.txt\nb.txt' }, annotation: { duration_ms: 4 }, timestampUs: ts() });
  const sub = d.pushScope({ name: `subagent:${tag}`, category: 'agent', parent: turn, metadata: { nemo_relay_scope_role: 'subagent' }, input: { prompt: 'count' }, timestampUs: ts() });
  yield;
  const subLlm = d.llmStart({ name: 'anthropic', parent: sub, request: { headers: {}, content: { messages: [{ role: 'user', content: 'count' }] } }, modelName: 'claude-x', timestampUs: ts() });
  d.llmEnd(subLlm, { response: { content: [{ type: 'text', text: '2 files' }], usage: { input_tokens: 2, output_tokens: 1 } }, timestampUs: ts() });
  d.popScope(sub, { output: { result: '2 files' }, timestampUs: ts() });
  yield;
  const llm2 = d.llmStart({
    name: 'anthropic',
    parent: turn,
    request: { headers: {}, content: { messages: [...request.content.messages, { role: 'assistant', content: 'ls' }] } },
    modelName: 'claude-x',
    timestampUs: ts(),
  });
  d.llmEnd(llm2, { response: { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }, timestampUs: ts() });
  d.popScope(turn, { output: 'done', timestampUs: ts() });
  yield;
  d.popScope(scope, { timestampUs: ts() });
}

function drain(...runs: Generator<void, void, void>[]): void {
  let open = runs;
  while (open.length > 0) open = open.filter((run) => !run.next().done);
}

const exporterArgs = (tag: string) => ({ sessionId: `sid-${tag}`, agentName: 'probe-agent', agentVersion: '0.0.1', modelName: 'claude-x' });

describe('memory relay ATIF exporter', () => {
  it('exports interleaved sessions separately, each a valid ATIF document of its own session only', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporters: Record<string, ReturnType<typeof relay.registerAtifExporter>> = {};
    const d = relay as unknown as Driver;
    const register = (tag: string) => (scope: ScopeHandle) => {
      exporters[tag] = relay.registerAtifExporter({ scope, ...exporterArgs(tag) });
    };
    drain(session(d, 'A', 1_800_000_000_000_000, register('A')), session(d, 'B', 1_800_000_000_000_005, register('B')));
    for (const tag of ['A', 'B']) {
      const doc = JSON.parse(await exporters[tag]!.exportJson());
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.session_id).toBe(`sid-${tag}`);
      const text = JSON.stringify(doc);
      expect(text).toContain(`${tag} will run ls`);
      expect(text).not.toContain(`${tag === 'A' ? 'B' : 'A'} will run ls`);
      expect(doc.subagent_trajectories).toHaveLength(1);
    }
  });

  it('can be exported repeatedly and while the session is still open, and stops growing after deregister', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const scope = relay.pushScope({ name: 'agent', category: 'agent' });
    const exporter = relay.registerAtifExporter({ scope, sessionId: 's', agentName: 'n', agentVersion: 'v' });
    const llm = relay.llmStart({ name: 'p', parent: scope, request: { headers: {}, content: { messages: [{ role: 'user', content: 'hi' }] } } });
    relay.llmEnd(llm, { response: { content: [{ type: 'text', text: 'hello' }] } });
    const partial = await exporter.exportJson();
    expect(await exporter.exportJson()).toBe(partial);
    expect(JSON.parse(partial).steps.map((s: { source: string }) => s.source)).toEqual(['user', 'agent']);
    exporter.deregister();
    exporter.deregister();
    const late = relay.llmStart({ name: 'p', parent: scope, request: { headers: {}, content: { messages: [{ role: 'user', content: 'again' }] } } });
    relay.llmEnd(late, { response: { content: [{ type: 'text', text: 'ignored' }] } });
    relay.popScope(scope);
    expect(await exporter.exportJson()).toBe(partial);
  });

  it('returns an empty trajectory, without throwing, for a scope handle it does not know', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporter = relay.registerAtifExporter({ scope: {} as ScopeHandle, sessionId: 's', agentName: 'n', agentVersion: 'v' });
    relay.mark({ name: 'm' });
    const doc = JSON.parse(await exporter.exportJson());
    expect(doc).toMatchObject({ session_id: 's', steps: [], final_metrics: { total_steps: 0 } });
    expect(relay.stats().errors).toBe(1);
  });
});

describe.skipIf(native === null)(`memory relay ATIF equals native AtifExporter${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  it('exports the same document, byte for byte after uuid labelling, for each of two interleaved sessions', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporters: Record<string, ReturnType<typeof relay.registerAtifExporter>> = {};
    const d = relay as unknown as Driver;
    const register = (tag: string) => (scope: ScopeHandle) => {
      exporters[tag] = relay.registerAtifExporter({ scope, ...exporterArgs(tag) });
    };
    drain(session(d, 'A', 1_800_000_000_000_000, register('A')), session(d, 'B', 1_800_000_000_000_005, register('B')));
    for (const [tag, t0] of [['A', 1_800_000_000_000_000], ['B', 1_800_000_000_000_005]] as const) {
      // Native's exporter sees every event in the process, so its reference runs one session alone.
      const theirs = await runNativeAtif((nd) => drain(session(nd, tag, t0)), exporterArgs(tag));
      const ours = await exporters[tag]!.exportJson();
      expect(JSON.parse(theirs).steps.length).toBeGreaterThan(3);
      expect(normalize([ours])).toEqual(normalize([theirs]));
    }
  });
});

describe('memory registerAtifExporter: exportJson builds between turns of the host\'s event loop', () => {
  it('resolves with exportJsonNow\'s text after turns of the event loop, a slice per turn, for a long session', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const root = relay.pushScope({ name: 'agent', category: 'agent' });
    const exporter = relay.registerAtifExporter({ scope: root, sessionId: 'long', agentName: 'a', agentVersion: '1' });
    const calls = 2 * SLICE_UNITS;
    for (let i = 0; i < calls; i++) {
      const llm = relay.llmStart({ name: 'openai', parent: root, request: { headers: {}, content: { messages: [{ role: 'user', content: `q${i}` }] } }, modelName: 'm' });
      relay.llmEnd(llm, { response: { choices: [{ message: { role: 'assistant', content: `a${i}` } }] } });
    }
    relay.popScope(root);
    let text: string | undefined;
    let turnsBefore = 0;
    let counting = true;
    const count = (): void => {
      if (!counting) return;
      if (text === undefined) turnsBefore++;
      setImmediate(count);
    };
    setImmediate(count);
    text = await exporter.exportJson();
    counting = false;
    // Reading and converting 2 events per call, SLICE_UNITS events a slice: the host's loop turned between slices.
    expect(turnsBefore).toBeGreaterThanOrEqual((2 * 2 * calls) / SLICE_UNITS);
    expect(text).toBe(exporter.exportJsonNow!());
    expect((JSON.parse(text) as { steps: unknown[] }).steps.length).toBeGreaterThanOrEqual(calls);
  });
});
