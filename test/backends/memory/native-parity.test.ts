// The in-memory relay emits what native emits: each scenario runs on the
// real nemo-relay-node runtime and on the memory relay with the same calls,
// and the subscriber events and the ATOF file lines are compared after
// replacing uuids by labels (in order of first appearance) — so parent
// links, propagation roots and start/end pairing are compared too.
import { describe, expect, it } from 'vitest';
import { native, nativeUnavailable, normalize, runMemory, runNative, type Scenario } from '../../support/native-driver.ts';
import { validateAtofEvents } from '../../../src/formats/atof/validate.ts';

const T0 = 1_800_000_000_000_000;
const at = (n: number) => T0 + n * 10;

async function expectParity(scenario: Scenario, options: { timestamps?: boolean } = {}) {
  const theirs = await runNative(scenario);
  const ours = await runMemory(scenario);
  expect(ours.events.length).toBeGreaterThan(0);
  expect(normalize(ours.events, options)).toEqual(normalize(theirs.events, options));
  expect(normalize(ours.lines, options)).toEqual(normalize(theirs.lines, options));
  expect(validateAtofEvents(ours.lines.map((line) => JSON.parse(line)))).toEqual([]);
  return { ours, theirs };
}

describe.skipIf(native === null)(`memory relay events equal native's${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  it('emits the same session: agent, turn, marks, an LLM call and tool calls', async () => {
    await expectParity((d) => {
      const session = d.pushScope({
        name: 'claude-code',
        category: 'agent',
        metadata: { session_id: 'sess-abc', nemo_relay_scope_role: 'session' },
        input: { cwd: '/srv/demo' },
        timestampUs: at(1),
      });
      d.mark({ name: 'session.start', parent: session, metadata: { user_id: 'u-1', session_id: 'sess-abc' }, timestampUs: at(2) });
      const turn = d.pushScope({
        name: 'claude-code-turn',
        category: 'custom',
        parent: session,
        metadata: { turn_index: 1, nemo_relay_scope_role: 'turn' },
        input: { prompt: 'list files' },
        timestampUs: at(3),
      });
      const llm = d.llmStart({
        name: 'anthropic',
        parent: turn,
        request: {
          headers: { 'x-api-key': 'sk-secret', Authorization: 'Bearer x', 'anthropic-version': '2023-06-01', Cookie: 'c' },
          content: { model: 'claude', max_tokens: 256, messages: [{ role: 'user', content: 'list files' }], system: 'probe' },
        },
        metadata: { hook: 'llm.request.start' },
        modelName: 'claude',
        timestampUs: at(4),
      });
      d.llmEnd(llm, {
        response: {
          id: 'msg_01',
          content: [
            { type: 'text', text: 'I will run ls.' },
            { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
          ],
          usage: { output_tokens: 7, input_tokens: 12 },
        },
        metadata: { hook: 'llm.request.end', 'otel.status_code': 'ERROR', 'otel.status_description': 'dropped by native' },
        timestampUs: at(5),
      });
      d.mark({ name: 'approval.request', parent: turn, data: { tool: 'Bash', args: { command: 'ls' } }, timestampUs: at(6) });
      const tool = d.toolStart({ name: 'Bash', parent: turn, args: { command: 'ls' }, toolCallId: 'toolu_01', metadata: { hook: 'tool.start' }, timestampUs: at(7) });
      d.toolEnd(tool, { result: { stdout: 'a.txt', exit_code: 0 }, annotation: { duration_ms: 5 }, metadata: { hook: 'tool.end' }, timestampUs: at(8) });
      const failing = d.toolStart({ name: 'Write', parent: turn, args: ['array', 'args'], metadata: { hook: 'tool.start' }, timestampUs: at(9) });
      d.toolEnd(failing, { result: 'EACCES', status: 'error', annotation: { ignored: true }, metadata: { 'error.type': 'tool_error' }, timestampUs: at(10) });
      d.popScope(turn, { output: { output: 'done' }, metadata: { status: 'closed' }, timestampUs: at(11) });
      d.mark({ name: 'session.end', parent: session, data: { reason: 'exit' }, timestampUs: at(12) });
      d.popScope(session, { output: { status: 'ended' }, timestampUs: at(13) });
    });
  });

  it('sets propagation roots like native for non-agent top-level scopes and their agent children', async () => {
    await expectParity((d) => {
      const custom = d.pushScope({ name: 'custom-top', category: 'custom', attributes: ['relocatable', 'parallel'], timestampUs: at(1) });
      const agent = d.pushScope({ name: 'agent-under-custom', category: 'agent', parent: custom, timestampUs: at(2) });
      const nested = d.pushScope({ name: 'nested-agent', category: 'agent', parent: agent, timestampUs: at(3) });
      const fn = d.pushScope({ name: 'fn', category: 'function', parent: nested, attributes: ['parallel'], timestampUs: at(4) });
      d.mark({ name: 'in-fn', parent: fn, timestampUs: at(5) });
      d.popScope(fn, { timestampUs: at(6) });
      d.popScope(nested, { timestampUs: at(7) });
      d.popScope(agent, { timestampUs: at(8) });
      // Pushed in LIFO order: raw native derives the root from the stack's top, the memory relay from the tree.
      const sibling = d.pushScope({ name: 'sibling-fn', category: 'function', parent: custom, timestampUs: at(9) });
      d.mark({ name: 'in-sibling', parent: sibling, timestampUs: at(10) });
      d.popScope(sibling, { timestampUs: at(10) });
      d.popScope(custom, { timestampUs: at(11) });
      const other = d.pushScope({ name: 'second-top-level', category: 'agent', timestampUs: at(12) });
      d.popScope(other, { timestampUs: at(13) });
    });
  });

  it('parents marks and spans without a parent to one process-level root', async () => {
    await expectParity((d) => {
      d.mark({ name: 'orphan-1', data: { d: 1 }, timestampUs: at(1) });
      const llm = d.llmStart({ name: 'p', request: { headers: {}, content: 'x' }, timestampUs: at(2) });
      d.llmEnd(llm, { response: null, timestampUs: at(3) });
      const tool = d.toolStart({ name: 't', args: null, timestampUs: at(4) });
      d.toolEnd(tool, { result: null, timestampUs: at(5) });
      d.mark({ name: 'orphan-2', timestampUs: at(6) });
    });
  });

  it('merges end metadata over start metadata like native, whatever their shapes', async () => {
    await expectParity((d) => {
      const cases: [unknown, unknown][] = [
        [{ a: 1, n: { x: 1 } }, { b: 2, a: 3, n: { y: 2 } }],
        [{ a: 1 }, 'end-string'],
        ['start-string', { b: 2 }],
        [{ a: 1 }, undefined],
        [['start', 'array'], null],
        [undefined, undefined],
      ];
      let n = 0;
      for (const [start, end] of cases) {
        const scope = d.pushScope({ name: `s${n}`, category: 'function', metadata: start, timestampUs: at(++n) });
        d.popScope(scope, { metadata: end, timestampUs: at(++n) });
        const llm = d.llmStart({ name: `l${n}`, request: { headers: {}, content: {} }, metadata: start, modelName: 'm', timestampUs: at(++n) });
        d.llmEnd(llm, { response: { ok: true }, metadata: end, timestampUs: at(++n) });
        const tool = d.toolStart({ name: `t${n}`, args: {}, metadata: start, timestampUs: at(++n) });
        d.toolEnd(tool, { result: 1, metadata: end, timestampUs: at(++n) });
        const failed = d.toolStart({ name: `f${n}`, args: {}, metadata: start, timestampUs: at(++n) });
        d.toolEnd(failed, { result: 1, status: 'error', metadata: end, timestampUs: at(++n) });
      }
    });
  });

  it('writes the same categories and profiles for spans without model name or tool call id', async () => {
    await expectParity((d) => {
      const llm = d.llmStart({ name: 'no-model', request: { headers: { 'X-Api-Key': 'k', 'x-goog-api-key': 'g', 'api-key': 'a', 'proxy-authorization': 'p', traceparent: 'kept' }, content: [1, 2] }, timestampUs: at(1) });
      d.llmEnd(llm, { response: 'plain text', timestampUs: at(2) });
      const tool = d.toolStart({ name: 'no-id', args: 'raw', timestampUs: at(3) });
      d.toolEnd(tool, { result: { r: [3, 2, 1] }, annotation: { note: 'a' }, timestampUs: at(4) });
    });
  });

  it('serializes payloads byte for byte like native: key order, nesting, unicode and numbers', async () => {
    await expectParity((d) => {
      const data = {
        zeta: 1,
        alpha: { z: [{ b: 1, a: 2 }], a: null },
        text: 'tab\there "quoted" \\ back ü 日本 😀 \u0001 \u2028',
        numbers: [0, -0, 1.5, -2.25, 0.1 + 0.2, 1e-7, 123456789.125, 1e20, 2 ** 53, 2147483647, 2147483648, -2147483649, 4294967295],
        more_numbers: [4294967296, 1_764_000_000_000, 1e15, 1e16, 1.5e16, 1e21, 1.5e300, 1e-5, 0.000015, 1e-6, 1.5e-6, 5e-324, -1e-7],
        integer_keys: { '10': 'ten', '9': 'nine', b: 'b', '!': 'bang', '0': 'zero' },
        flags: [true, false],
        empty: { obj: {}, arr: [] },
        Upper: 'sorted before lower case',
        _under: 'sorted after upper case',
      };
      const scope = d.pushScope({ name: 'payloads ✓', category: 'function', input: data, metadata: data, timestampUs: at(1) });
      d.mark({ name: 'mark', parent: scope, data, metadata: { k: data.numbers }, timestampUs: at(2) });
      d.popScope(scope, { output: data, timestampUs: at(3) });
    });
  });

  it('renders explicit timestamps like native: whole seconds, milliseconds, microseconds, before 1970', async () => {
    await expectParity((d) => {
      const stamps = [1_700_000_000_000_000, 1_700_000_000_500_000, 1_700_000_000_000_001, 1_700_000_000_123_400, -5];
      for (const stamp of stamps) d.mark({ name: `at ${stamp}`, timestampUs: stamp });
    });
  });

  it('records managed tool and LLM calls like native, success and failure', async () => {
    class ToolFailure extends Error {
      override name = 'ToolFailure';
    }
    const { ours } = await expectParity(
      async (d) => {
        const session = d.pushScope({ name: 'managed-agent', category: 'agent', metadata: { session_id: 'S-1' }, timestampUs: at(1) });
        const inner = d.pushScope({ name: 'sub', category: 'agent', parent: session, timestampUs: at(2) });
        await d.executeTool({ name: 'echo', parent: session, args: { x: 1 }, metadata: { m: 1 }, toolCallId: 'call_1' }, async (args) => ({ echoed: args }));
        await d
          .executeTool({ name: 'boom', parent: session, args: {}, metadata: 'string-meta' }, async () => {
            throw new ToolFailure('tool exploded');
          })
          .catch(() => undefined);
        await d.executeTool({ name: 'void', parent: session, args: 1 }, () => undefined);
        await d
          .executeTool({ name: 'throws-string', parent: session, args: 1 }, () => {
            throw 'plain string';
          })
          .catch(() => undefined);
        await d.executeLlm(
          { name: 'anthropic', parent: inner, request: { headers: { authorization: 'Bearer s' }, content: { m: 1 } }, metadata: { 'otel.status_description': 'kept', a: 1 }, modelName: 'm' },
          async () => ({ id: 'msg', content: [{ type: 'text', text: 'hi' }] }),
        );
        await d
          .executeLlm({ name: 'anthropic', parent: inner, request: { headers: {}, content: 1 } }, async () => {
            throw new TypeError('rate limited 429');
          })
          .catch(() => undefined);
        await d.executeLlm({ name: 'no-parent', request: { headers: {}, content: 2 } }, async () => 'text response');
        d.popScope(inner, { timestampUs: at(3) });
        d.popScope(session, { timestampUs: at(4) });
      },
      { timestamps: true },
    );
    expect(ours.relay.stats().errors).toBe(0);
  });
});
