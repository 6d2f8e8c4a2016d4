/**
 * The ATIF builder against the native runtime: every scenario runs through
 * `nemo-relay-node` (raw subscriber + manual AtifExporter), then the builder
 * gets the captured events and must produce the same document — deep-equal,
 * same key order, and the same JSON text.
 */

import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/relay/contract.ts';
import { AtifBuilder } from '../../src/formats/atif/builder.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import { validateAtofEvents } from '../../src/formats/atof/validate.ts';
import type { ExporterOptions, Scenario } from '../support/native-atif.ts';
import { native, nativeSkipReason, runExporterScenario } from '../support/native-atif.ts';
import { atifErrorLines, expectedNativeErrors } from '../support/harbor.ts';
import { attemptsAsMemory } from '../differential/normalize.ts';

const AGENT: ExporterOptions = { sessionId: 'diff-session', agentName: 'diff-agent', agentVersion: '1.2.3', modelName: 'default-model' };

/**
 * Runs `script` natively, rebuilds from the captured events and compares.
 * `knownInvalid` lists the `path rule` pairs of ATIF violations native itself
 * produces for the scenario (the builder must reproduce them too).
 */
async function differential(
  script: (s: Scenario) => void | Promise<void>,
  options: ExporterOptions = AGENT,
  knownInvalid: string[] = [],
): Promise<AtifTrajectory> {
  const run = await runExporterScenario(native!, options, script);
  const builder = new AtifBuilder(options);
  for (const event of run.events) builder.add(event);
  const built = builder.build();
  const expected = JSON.parse(run.nativeJson) as AtifTrajectory;
  expect(built).toEqual(expected);
  expect(JSON.stringify(built)).toBe(JSON.stringify(expected));
  expect(builder.toJson()).toBe(run.nativeJson);
  expect(atifErrorLines(built)).toEqual(expectedNativeErrors(built, knownInvalid));
  expect(validateAtofEvents(run.events)).toEqual([]);
  return built;
}

const sources = (t: AtifTrajectory): string[] => t.steps.map((step) => step.source);

const anthropicResponse = (id: string, text: string, tools: { id: string; name: string; input: Json }[], usage: Json): Json => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [
    ...(text === '' ? [] : [{ type: 'text', text }]),
    ...tools.map((tool) => ({ type: 'tool_use', id: tool.id, name: tool.name, input: tool.input })),
  ],
  stop_reason: tools.length > 0 ? 'tool_use' : 'end_turn',
  usage,
});

describe.skipIf(native === undefined)(`ATIF builder vs native AtifExporter${nativeSkipReason ? ` (skipped: ${nativeSkipReason})` : ''}`, () => {
  it('reproduces a plain OpenAI chat exchange with cached-token usage', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null, { metadata: { session_id: 'logical-1' }, input: { cwd: '/w' } });
      s.chat(
        'openai',
        { model: 'gpt-test', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello' }] },
        {
          id: 'chatcmpl-1',
          model: 'gpt-test-2025',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi there' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 8 } },
        },
        session,
        { model: 'gpt-test' },
      );
      s.pop(session, { ok: true });
    });
    expect(sources(t)).toEqual(['user', 'agent']);
    expect(t.steps[1]?.metrics).toEqual({ prompt_tokens: 20, completion_tokens: 5, cached_tokens: 8, extra: { total_tokens: 25 } });
  });

  it('reproduces an OpenAI chat tool loop with several tools, JSON-string arguments and a continuation request', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const history: Json[] = [{ role: 'user', content: 'inspect the repo' }];
      s.chat(
        'openai',
        { messages: history },
        {
          choices: [
            {
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { id: 'call_a', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt","z":1,"b":[1.5,2]}' } },
                  { id: 'call_b', type: 'function', function: { name: 'list', arguments: '{}' } },
                  { id: 'call_c', type: 'function', function: { name: 'grep', arguments: 'not json' } },
                ],
              },
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 3 },
        },
        session,
      );
      // Completion order differs from request order.
      const b = s.tool('list', {}, session, 'call_b');
      const a = s.tool('read', { path: 'a.txt', z: 1, b: [1.5, 2] }, session, 'call_a');
      s.toolEnd(b, ['a.txt', 'b.txt']);
      s.toolEnd(a, 'contents of a');
      const c = s.tool('grep', { raw: 'not json' }, session, 'call_c');
      s.toolEnd(c, { matches: 0 });
      s.chat(
        'openai',
        {
          messages: [
            ...history,
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'call_a', content: 'contents of a' },
          ],
        },
        { choices: [{ message: { role: 'assistant', content: 'done' } }], usage: { prompt_tokens: 30, completion_tokens: 2 } },
        session,
      );
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent', 'agent']);
    expect(t.steps[1]?.observation?.results.map((r) => r.source_call_id)).toEqual(['call_b', 'call_a', 'call_c']);
  });

  it('reproduces OpenAI responses-API request and response shapes', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat(
        'openai.responses',
        { model: 'gpt-r', instructions: 'sys', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] }] },
        {
          id: 'resp_1',
          model: 'gpt-r',
          output: [
            { type: 'reasoning', summary: [] },
            { type: 'function_call', call_id: 'fc_1', name: 'weather', arguments: '{"city":"Paris"}' },
          ],
          usage: { input_tokens: 50, output_tokens: 7, input_tokens_details: { cached_tokens: 10 }, output_tokens_details: { reasoning_tokens: 3 } },
        },
        session,
      );
      const tool = s.tool('weather', { city: 'Paris' }, session, 'fc_1');
      s.toolEnd(tool, { temp_c: 21.5 });
      s.chat(
        'openai.responses',
        {
          input: [
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
            { type: 'function_call', call_id: 'fc_1', name: 'weather', arguments: '{"city":"Paris"}' },
            { type: 'function_call_output', call_id: 'fc_1', output: '{"temp_c":21.5}' },
          ],
        },
        { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 21.5C.' }] }], usage: { input_tokens: 60, output_tokens: 6 } },
        session,
      );
      s.chat('openai.responses', { input: 'plain string input' }, { output_text: 'ok' }, session);
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent', 'agent', 'user', 'agent']);
  });

  it('reproduces Anthropic messages with tool_use blocks, cache tokens and tool_result continuations', async () => {
    const t = await differential((s) => {
      const session = s.push('claude-code', 'Agent', null, { metadata: { nemo_relay_scope_role: 'session', session_id: 's-1' } });
      const turn = s.push('turn', 'Custom', session, { metadata: { nemo_relay_scope_role: 'turn', turn_index: 1 } });
      const request = { model: 'claude-test', system: 'sys', max_tokens: 100, messages: [{ role: 'user', content: 'fix it' }] };
      s.chat(
        'anthropic',
        request,
        anthropicResponse('m1', 'Looking.', [{ id: 'tu_1', name: 'Bash', input: { command: 'ls' } }, { id: 'tu_2', name: 'Read', input: { path: 'x' } }], {
          input_tokens: 12,
          output_tokens: 7,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 30,
        }),
        turn,
        { model: 'claude-test' },
      );
      const bash = s.tool('Bash', { command: 'ls' }, turn, 'tu_1');
      s.toolEnd(bash, { stdout: 'x', exit_code: 0 }, { annotation: { duration_ms: 4 } });
      const read = s.tool('Read', { path: 'x' }, turn, 'tu_2');
      s.toolEnd(read, [{ type: 'text', text: 'file body' }]);
      s.chat(
        'anthropic',
        {
          ...request,
          messages: [
            ...request.messages,
            { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'ls' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'x' }] },
          ],
        },
        anthropicResponse('m2', 'Fixed.', [], { input_tokens: 40, output_tokens: 3, cache_read_input_tokens: 130 }),
        turn,
        { model: 'claude-test' },
      );
      s.pop(turn);
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent', 'agent']);
    expect(t.steps[1]?.metrics?.prompt_tokens).toBe(142);
    expect(t.final_metrics?.total_cached_tokens).toBe(260);
  });

  it("reproduces the plugin's own response shape (assistant_message with JSON-string arguments and reasoning_content)", async () => {
    const t = await differential((s) => {
      const session = s.push('hermes', 'Agent', null);
      s.chat(
        'hermes.llm',
        { model: 'hermes-model', messages: [{ role: 'user', content: 'plan' }], reasoning_effort: 'high' },
        {
          model: 'hermes-model',
          assistant_message: {
            role: 'assistant',
            content: 'I will search.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"relay","limit":3}' } }],
            reasoning_content: 'thinking...',
          },
          finish_reason: 'tool_calls',
          usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
        },
        session,
      );
      const tool = s.tool('web_search', { query: 'relay', limit: 3 }, session, 'call_1');
      s.toolEnd(tool, 'three results');
      s.chat(
        'hermes.llm',
        { model: 'hermes-model', messages: [{ role: 'user', content: 'plan' }], reasoning_effort: 2 },
        { model: 'hermes-model', assistant_message: { role: 'assistant', content: null, tool_calls: [] }, finish_reason: 'stop', reasoning: 'short' },
        session,
      );
      s.pop(session);
    });
    expect(t.steps[1]?.reasoning_effort).toBe('high');
    expect(t.steps[1]?.tool_calls?.[0]?.arguments).toEqual({ limit: 3, query: 'relay' });
  });

  it("reproduces the adapters' hosted tool calls (provider_executed, provider_result, provider_error) on the step, with no tool span", async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const sources = [{ type: 'url', url: 'https://weather.example/paris' }];
      s.chat(
        'openai.responses',
        { model: 'gpt-4.1', messages: [{ role: 'user', content: 'weather?' }] },
        {
          model: 'gpt-4.1',
          assistant_message: {
            role: 'assistant',
            content: 'Let me check.',
            tool_calls: [
              { id: 'ws_1', type: 'function', function: { name: 'web_search', arguments: '{"type":"search","query":"Paris weather"}' }, provider_executed: true, provider_result: { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'Paris weather', sources } } },
              {
                id: 'mcp_1',
                type: 'function',
                function: { name: 'roll', arguments: '{"sides":0}' },
                provider_executed: true,
                provider_result: { id: 'mcp_1', type: 'mcp_call', server_label: 'dice', name: 'roll', arguments: '{"sides":0}', output: null, error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'sides must be positive' }] } },
                provider_error: 'sides must be positive',
              },
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
          usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
        },
        session,
      );
      const tool = s.tool('weather', { city: 'Paris' }, session, 'call_1');
      s.toolEnd(tool, 'sunny');
      s.pop(session);
    });
    const calls = t.steps[1]?.tool_calls ?? [];
    expect(calls.map((call) => [call.tool_call_id, call.extra])).toEqual([
      ['ws_1', { provider_executed: true, provider_result: { action: { query: 'Paris weather', sources: [{ type: 'url', url: 'https://weather.example/paris' }], type: 'search' }, id: 'ws_1', status: 'completed', type: 'web_search_call' } }],
      // A hosted call that failed keeps how (`provider_error`) beside what the provider returned.
      ['mcp_1', { provider_error: 'sides must be positive', provider_executed: true, provider_result: { arguments: '{"sides":0}', error: { content: [{ text: 'sides must be positive', type: 'text' }], type: 'mcp_tool_execution_error' }, id: 'mcp_1', name: 'roll', output: null, server_label: 'dice', type: 'mcp_call' } }],
      ['call_1', undefined],
    ]);
    expect(t.steps[1]?.observation?.results.map((result) => result.source_call_id)).toEqual(['call_1']);
  });

  it('reproduces a tool result nobody requested as a system step, and a tool with no LLM step before it', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const early = s.tool('setup', { x: 1 }, session, null);
      s.toolEnd(early, 'ready');
      s.chat('openai', { messages: [{ role: 'user', content: 'go' }] }, { choices: [{ message: { content: 'going' } }] }, session);
      const stray = s.tool('stray', { y: 2 }, session, 'nobody-asked');
      s.toolEnd(stray, { ok: 1 });
      const unnamedId = s.tool('helper', { z: 3 }, session, null);
      s.toolEnd(unnamedId, 'synthetic id');
      s.pop(session);
    });
    expect(sources(t)).toContain('system');
  });

  it('reproduces error-ended LLM calls, ERROR-status tool ends and managed failures (data null)', async () => {
    const t = await differential(async (s) => {
      const session = s.push('session', 'Agent', null);
      s.chat(
        'anthropic',
        { model: 'claude-test', messages: [{ role: 'user', content: 'do' }] },
        anthropicResponse('m1', '', [{ id: 'tu_1', name: 'Write', input: { path: '/etc/x' } }, { id: 'tu_2', name: 'Bash', input: { command: 'false' } }], {
          input_tokens: 1,
          output_tokens: 1,
        }),
        session,
      );
      await s.failingToolExecute('Write', { path: '/etc/x' }, session, 'tu_1');
      const bash = s.tool('Bash', { command: 'false' }, session, 'tu_2');
      s.toolEnd(bash, { stderr: 'boom', exit_code: 1 }, { metadata: { 'otel.status_code': 'ERROR', 'error.type': 'exit_code' } });
      s.chat(
        'anthropic',
        { model: 'claude-test', messages: [{ role: 'user', content: 'do' }] },
        { error: { type: 'overloaded_error', message: 'Overloaded' }, status: 529, retry_after: 1.5 },
        session,
        { metadata: { error: true } },
      );
      await s.failingLlmExecute('anthropic', { model: 'claude-test', messages: [{ role: 'user', content: 'again' }] }, session, 'claude-test');
      s.pop(session);
    });
    expect(t.steps.some((step) => typeof step.message === 'string' && step.message.includes('overloaded_error'))).toBe(true);
  });

  it('reproduces managed successes (tool and LLM execute)', async () => {
    await differential(async (s) => {
      const session = s.push('session', 'Agent', null);
      await s.llmExecute(
        'openai',
        { messages: [{ role: 'user', content: 'sum' }] },
        { choices: [{ message: { content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] } }] },
        session,
        'gpt-test',
      );
      await s.toolExecute('add', { a: 1, b: 2 }, 3, session, 'c1');
      s.pop(session);
    });
  });

  it('reproduces subagents: with an LLM call (embedded), without one (dropped), and dispatched by a tool call', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null, { metadata: { nemo_relay_scope_role: 'session' } });
      const turn = s.push('turn', 'Custom', session, { metadata: { nemo_relay_scope_role: 'turn' } });
      s.chat(
        'anthropic',
        { model: 'claude-test', messages: [{ role: 'user', content: 'delegate' }] },
        anthropicResponse('m1', 'Delegating.', [{ id: 'tu_task', name: 'Task', input: { prompt: 'count' } }], { input_tokens: 3, output_tokens: 2 }),
        turn,
      );
      const task = s.tool('Task', { prompt: 'count' }, turn, 'tu_task');
      const dispatched = s.push('subagent:dispatched', 'Agent', turn, {
        metadata: { nemo_relay_scope_role: 'subagent', tool_call_id: 'tu_task', session_id: 'child-session' },
        input: { prompt: 'count' },
      });
      s.chat('anthropic', { messages: [{ role: 'user', content: 'count' }] }, anthropicResponse('m2', '3 files', [], { input_tokens: 2, output_tokens: 1 }), dispatched);
      s.pop(dispatched, { result: '3' });
      s.toolEnd(task, '3 files');
      const idle = s.push('subagent:idle', 'Agent', turn, { metadata: { nemo_relay_scope_role: 'subagent' }, input: { prompt: 'nothing' } });
      s.mark('subagent.note', idle, { n: 1 });
      s.pop(idle);
      const loose = s.push('subagent:loose', 'Agent', turn, { input: { prompt: 'free' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'free' }] }, { choices: [{ message: { content: 'done' } }] }, loose);
      const nested = s.push('subagent:nested', 'Agent', loose, { metadata: { nemo_relay_scope_role: 'subagent' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'deep' }] }, { choices: [{ message: { content: 'deeper' } }] }, nested);
      s.pop(nested);
      s.pop(loose);
      const empty = s.push('subagent:empty-unreferenced', 'Agent', turn);
      s.pop(empty);
      s.pop(turn);
      s.pop(session);
    });
    expect(t.subagent_trajectories?.map((sub) => sub.steps.length)).toEqual([2, 3, 0]);
    expect(t.subagent_trajectories?.[0]?.session_id).toBe('child-session');
  });

  it('ignores marks, including marks with data between an LLM call and its tools', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.mark('session.start', session, null, { session_id: 'x', user_id: 'u' });
      const llm = s.llm('openai', { messages: [{ role: 'user', content: 'q' }] }, session);
      s.mark('approval.request', session, { tool: 'Bash' });
      s.llmEnd(llm, { choices: [{ message: { content: 'a', tool_calls: [{ id: 'c', function: { name: 'Bash', arguments: '{}' } }] } }] });
      s.mark('approval.response', session, { decision: 'allow' });
      const tool = s.tool('Bash', {}, session, 'c');
      s.toolEnd(tool, 'ok');
      s.mark('session.end', session, { reason: 'exit' });
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent']);
  });

  it('merges two top-level agent scopes into one flat trajectory', async () => {
    const t = await differential((s) => {
      const first = s.push('first', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'one' }] }, { choices: [{ message: { content: '1' } }] }, first);
      s.pop(first);
      const second = s.push('second', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'two' }] }, { choices: [{ message: { content: '2' } }] }, second);
      const child = s.push('child', 'Agent', second, { metadata: { nemo_relay_scope_role: 'subagent' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'three' }] }, { choices: [{ message: { content: '3' } }] }, child);
      s.pop(child);
      s.pop(second);
    });
    expect(t.steps).toHaveLength(6);
    expect(t.subagent_trajectories).toBeUndefined();
  });

  it('falls back to a flat trajectory when an LLM call sits outside every agent scope', async () => {
    await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'in' }] }, { choices: [{ message: { content: 'a' } }] }, session);
      s.pop(session);
      const loose = s.push('loose-function', 'Function', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'out' }] }, { choices: [{ message: { content: 'b' } }] }, loose);
      s.pop(loose);
    });
  });

  it('picks the root agent named by a uuid session id among several', async () => {
    let target = '';
    const script = (s: Scenario): void => {
      const first = s.push('first', 'Agent', null);
      target = first.uuid;
      s.chat('openai', { messages: [{ role: 'user', content: 'one' }] }, { choices: [{ message: { content: '1' } }] }, first);
      s.pop(first);
      const second = s.push('second', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'two' }] }, { choices: [{ message: { content: '2' } }] }, second);
      s.pop(second);
    };
    // The session id must be known before the exporter exists: run once to learn the uuid shape, then use it.
    const run = await runExporterScenario(native!, AGENT, script);
    const builder = new AtifBuilder({ ...AGENT, sessionId: target });
    for (const event of run.events) builder.add(event);
    expect(builder.build().steps.map((step) => step.message)).toEqual(['one', '1']);
  });

  it('handles history shapes: fresh user last, tool continuation, system-only, prompt and content-part messages', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const reply = { choices: [{ message: { content: 'r' } }] };
      s.chat('p', { messages: [{ role: 'user', content: [{ type: 'text', text: 'parts' }, { type: 'image', source: { media_type: 'image/png', path: 'a.png' } }] }] }, reply, session);
      s.chat('p', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'input_image', image_url: 'x' }] }] }, reply, session);
      s.chat('p', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] }, reply, session);
      s.chat('p', { messages: [{ role: 'system', content: 'only system' }] }, reply, session);
      s.chat('p', { prompt: 'legacy prompt', model: 'from-request' }, reply, session);
      s.chat('p', { messages: [{ content: 'no role' }, { role: 'developer', content: 'dev' }] }, reply, session);
      s.chat('p', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] }] }, reply, session);
      s.chat('p', { input: [{ role: 'user', content: 'untyped item' }, { type: 'function_call_output', call_id: 'z', output: 'o' }] }, reply, session);
      const unended = s.llm('p', { messages: [{ role: 'assistant', content: 'dangling' }] }, session);
      s.pop(session);
      void unended;
    });
    expect(t.steps.filter((step) => step.source === 'user').length).toBeGreaterThan(3);
  });

  it('reproduces model-name precedence, reasoning fields and cost-bearing usage', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat('p1', { messages: [{ role: 'user', content: 'a' }] }, { model: 'from-response', content: 'x', usage: { cost_usd: 1, prompt_tokens: 3 } }, session, { model: 'from-profile' });
      s.chat('p2', { model: 'from-request', messages: [{ role: 'user', content: 'b' }] }, { content: 'y', usage: { cost: { total: 0.0000015, currency: 'usd' } } }, session);
      s.chat('p3', { messages: [{ role: 'user', content: 'c' }] }, { content: 'z', token_usage: { inputTokens: 4, outputTokens: 1, cacheRead: 2, cacheWrite: 1 }, usage: { extra_key: 1 } }, session);
      s.chat('p4', { messages: [{ role: 'user', content: 'd' }] }, { content: 'w', usage: { cost: { input: 0.25, output: 0.5, source: 'provider_reported' }, completion_tokens: 2 } }, session);
      s.chat('p5', { messages: [{ role: 'user', content: 'e' }] }, { content: 'v', usage: { cost: { total: 3, currency: 'EUR' }, prompt_tokens: 1 } }, session);
      s.chat('claude-proxy', { messages: [{ role: 'user', content: 'f' }] }, { content: 'u', usage: { input_tokens: 5, cache_read_input_tokens: 5, prompt_token_ids: [1, 2, -1], logprobs: [-0.5, -1] } }, session);
      s.pop(session);
    });
    expect(t.steps[1]?.model_name).toBe('from-response');
    expect(t.final_metrics?.total_cost_usd).toBeCloseTo(1.7500015);
  });

  it('keeps serde text details: payload floats, whole-number costs, unicode and escapes', async () => {
    await differential((s) => {
      const session = s.push('sessión ✓', 'Agent', null, { input: { pi: 3.14159, tiny: 1e-7, big: 1e21, neg: -0.5, whole: 2 } });
      s.chat(
        'openai',
        { messages: [{ role: 'user', content: 'quote " backslash \\ newline \n tab \t emoji 😀 \u0001' }] },
        { error: { message: 'bad \u2028 line', code: 1.5e-6, nested: { b: 1, a: [0.1, 100] } } },
        session,
      );
      s.chat('openai', { messages: [{ role: 'user', content: 'cost' }] }, { choices: [{ message: { content: 'c' } }], usage: { cost_usd: 2, prompt_tokens: 1 } }, session);
      s.pop(session);
    });
  });

  it('matches tool executions without ids to requested calls by name and arguments', async () => {
    await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat(
        'openai',
        { messages: [{ role: 'user', content: 'twice' }] },
        {
          choices: [
            {
              message: {
                content: '',
                tool_calls: [
                  { id: 'c1', function: { name: 'read', arguments: '{"path":"a"}' } },
                  { id: 'c2', function: { name: 'read', arguments: '{"path":"b"}' } },
                  { function: { name: 'noid', arguments: '{}' } },
                ],
              },
            },
          ],
        },
        session,
      );
      const b = s.tool('read', { path: 'b' }, session, null);
      const a = s.tool('read', { path: 'a' }, session, null);
      s.toolEnd(a, 'A');
      s.toolEnd(b, 'B');
      const n = s.tool('noid', {}, session, null);
      s.toolEnd(n, 'N');
      s.pop(session);
    });
  });

  it('exports a partial trajectory while scopes and spans are still open', async () => {
    await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'q' }] }, { choices: [{ message: { content: null, tool_calls: [{ id: 'c', function: { name: 't', arguments: '{}' } }] } }] }, session);
      s.tool('t', {}, session, 'c');
      s.llm('openai', { messages: [{ role: 'user', content: 'q2' }] }, session);
    });
  });

  it('treats a turn-role agent scope inside a session as part of the session', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const turn = s.push('turn-agent', 'Agent', session, { metadata: { nemo_relay_scope_role: 'turn' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'q' }] }, { choices: [{ message: { content: 'a' } }] }, turn);
      s.pop(turn);
      s.pop(session);
    });
    expect(t.subagent_trajectories).toBeUndefined();
    expect(t.steps).toHaveLength(2);
  });

  it('defers observations that arrive before the LLM end that requested them', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const llm = s.llm('openai', { messages: [{ role: 'user', content: 'q' }] }, session);
      // The tool runs (and is stamped) before the LLM end arrives, as with lagging default stamps.
      const early = s.tool('fast', { n: 1 }, session, 'c_fast');
      s.toolEnd(early, 'early result');
      s.llmEnd(llm, { choices: [{ message: { content: 'x', tool_calls: [{ id: 'c_fast', function: { name: 'fast', arguments: '{"n":1}' } }] } }] });
      const orphan = s.tool('orphan', {}, session, 'c_never');
      s.toolEnd(orphan, { never: 'requested' });
      s.chat('openai', { messages: [{ role: 'user', content: 'q2' }] }, { choices: [{ message: { content: 'y' } }] }, session);
      s.pop(session);
    });
    expect(t.steps[1]?.observation?.results[0]?.content).toBe('early result');
  });

  it('handles tool starts without ids: unique names, duplicate names and synthetic ids', async () => {
    await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat(
        'openai',
        { messages: [{ role: 'user', content: 'q' }] },
        {
          choices: [
            {
              message: {
                content: 'tools',
                tool_calls: [
                  { id: 'd1', function: { name: 'dup', arguments: '{"i":1}' } },
                  { id: 'd2', function: { name: 'dup', arguments: '{"i":2}' } },
                  { id: 'u1', function: { name: 'unique', arguments: '{"i":3}' } },
                ],
              },
            },
          ],
        },
        session,
      );
      const u = s.tool('unique', { different: true }, session, null);
      const d = s.tool('dup', { i: 9 }, session, null);
      const extra = s.tool('unrequested', { k: 'v' }, session, null, { why: 'side effect' });
      s.toolEnd(extra, 'side');
      s.toolEnd(d, 'dup result');
      s.toolEnd(u, 'unique result');
      s.pop(session);
    });
  });

  it('attaches a subagent to the tool call that is running when it starts', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat(
        'openai',
        { messages: [{ role: 'user', content: 'q' }] },
        { choices: [{ message: { content: '', tool_calls: [{ id: 'task_1', function: { name: 'task', arguments: '{"goal":"g"}' } }] } }] },
        session,
      );
      const task = s.tool('task', { goal: 'g' }, session, 'task_1');
      const child = s.push('worker', 'Agent', session, { input: { goal: 'g' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'g' }] }, { choices: [{ message: { content: 'did g' } }] }, child);
      s.pop(child);
      s.toolEnd(task, 'did g');
      const second = s.push('worker-2', 'Agent', session, { metadata: { tool_call_id: 'task_1' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'g2' }] }, { choices: [{ message: { content: 'did g2' } }] }, second);
      s.pop(second);
      s.pop(session);
    });
    expect(t.steps[1]?.observation?.results[0]?.subagent_trajectory_ref).toHaveLength(2);
  });

  it('de-duplicates two instrumentations of one LLM request by fidelity', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const request = { messages: [{ role: 'user', content: 'same' }] };
      const response = { choices: [{ message: { content: 'same answer' } }] };
      const hook = s.llm('hook', request, session, { metadata: { hook_event_name: 'post_api_request' } });
      const gateway = s.llm('gateway', request, session, { metadata: { provider_payload_exact: true } });
      s.llmEnd(gateway, { ...response, usage: { prompt_tokens: 5 } });
      s.llmEnd(hook, { ...response, usage: { completion_tokens: 2, reasoning_tokens: 1 } });
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent']);
    expect(t.steps[1]?.metrics).toEqual({ prompt_tokens: 5, completion_tokens: 2, extra: { reasoning_tokens: 1 } });
  });

  it('drops a tool-call-only step that a later step repeats with observations', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const calls = { choices: [{ message: { content: '', tool_calls: [{ id: 'r1', function: { name: 'read', arguments: '{"p":1}' } }] } }] };
      s.chat('projection', { messages: [{ role: 'user', content: 'q' }] }, calls, session);
      s.chat('exact', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'thinking' }] }, calls, session);
      const tool = s.tool('read', { p: 1 }, session, 'r1');
      s.toolEnd(tool, 'read 1');
      s.pop(session);
    });
    expect(sources(t)).toEqual(['user', 'agent']);
  });

  it('re-formats runtime (nanosecond) timestamps the way native does', async () => {
    await differential((s) => {
      const session = s.lib.pushScope('session', s.type('Agent'), null, null, null, null, null, null);
      const llm = s.lib.llmCall('openai', { headers: {}, content: { messages: [{ role: 'user', content: 'q' }] } }, session, null, null, null, null, null);
      s.lib.llmCallEnd(llm, { choices: [{ message: { content: 'a' } }] }, null, null, null);
      s.lib.popScope(session, null, null, null);
    });
  });

  it('reproduces odd payload shapes: unknown blocks, non-object responses, mixed usage objects, alternate tool-call keys', async () => {
    await differential(async (s) => {
      const session = s.push('session', 'Agent', null, { metadata: 'plain string metadata' });
      const ask = (content: Json): Json => ({ messages: [{ role: 'user', content }] });
      s.chat('x', ask('a'), { type: 'message', content: [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: '  ' }], usage: { input_tokens: 4, cache_creation_input_tokens: 2 } }, session);
      s.chat('x', ask('b'), { type: 'message', content: [{ type: 'mystery' }], model: 'm-b', usage: { input_tokens: 4, cache_read_input_tokens: 1 } }, session);
      s.chat('x', ask('c'), { choices: [{ message: { content: [{ type: 'text', text: 'part' }] } }], output_text: 'both shapes', usage: { prompt_tokens: 1 } }, session);
      s.chat('x', ask('d'), { choices: [{ message: { content: null } }] }, session);
      s.chat('x', ask('e'), 'just a string response', session);
      s.chat('x', ask('f'), [1, 'two', { three: 3 }], session);
      s.chat('x', ask('g'), 42, session);
      s.chat('x', 'request is a string', { answer: { nested: true } }, session);
      s.chat('x', ask('h'), { raw_response: { choices: [{ message: { content: 'from raw', tool_calls: [{ call_id: 'rc', toolName: 'raw_tool', args: { q: 1 } }] } }] } }, session);
      s.chat('x', ask('i'), { raw_response: 'not an object', choices: [{ message: { content: 'ignored' } }] }, session);
      s.chat('x', ask('j'), {
        content: 'mixed usage',
        usage: { input_tokens: 3, shared: 'usage', only_usage: 1, prompt_token_ids: [1, 2] },
        token_usage: { output: 2, shared: 'token_usage', logprobs: [-0.25, 'x'] },
      }, session);
      s.chat('x', ask('k'), { tool_calls: [{ tool_call_id: 't-k', tool_name: 'k_tool', input: '[1,2]' }, { function_name: 'named_only', arguments: 7 }] }, session);
      s.chat('x', ask('l'), { tool_calls: [{ id: 'ok', name: 'fine' }, 'not an object'] }, session);
      s.chat('x', ask('m'), { tool_calls: [], output: [{ type: 'function_call', call_id: 'fc', name: 'fn', arguments: '"str"' }] }, session);
      const annotated = s.tool('k_tool', [1, 2], session, 't-k');
      s.lib.toolCallEnd(annotated, { result: null, annotation: { note: 'null result' } }, null, null, Date.now() * 1000 + 50_000);
      s.pop(session);
    }, AGENT, [
      // native: a tool start whose input is not an object becomes a tool call with non-object arguments.
      '$.steps[27].tool_calls[1].arguments atif.arguments',
    ]);
  });

  // Found by the random-stream differential (test/differential/random-diff.ts, plugins.toml):
  // the builder took a function_call item's `id` where native takes its `call_id`.
  it('names a responses-API function_call by its call_id, before its item id, as native does', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const ask: Json = { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }] };
      s.chat('openai.responses', ask, { output: [{ type: 'function_call', id: 'fc_item', call_id: 'call_1', name: 'f', arguments: '{}' }] }, session);
      s.chat('openai.responses', ask, { output: [{ type: 'function_call', id: 'fc_item', tool_call_id: 'tc', call_id: 'call_2', name: 'f', arguments: '{}' }] }, session);
      s.chat('openai.responses', ask, { output: [{ type: 'function_call', id: 'fc_empty', call_id: '', name: 'f', arguments: '{}' }] }, session);
      s.chat('openai.responses', ask, { output: [{ type: 'function_call', id: 'fc_number', call_id: 5, name: 'f', arguments: '{}' }] }, session);
      s.chat('openai.responses', ask, { tool_calls: [{ id: 'listed', call_id: 'not_this', type: 'function', function: { name: 'f', arguments: '{}' } }] }, session);
      s.pop(session);
    });
    expect(t.steps.flatMap((step) => (step.tool_calls ?? []).map((call) => call.tool_call_id))).toEqual(['call_1', 'call_2', 'fc_empty', 'fc_number', 'listed']);
  });

  // Found by the random-stream differential: the builder took a text block of U+0085 for
  // a message and one of U+FEFF for blank, where native's trim does the opposite.
  it("reads a blank Anthropic text block with native's whitespace (U+0085 blank, U+FEFF not)", async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      const ask: Json = { messages: [{ role: 'user', content: 'q' }] };
      for (const text of ['\u0085', '\ufeff', ' \u0085\u00a0\u2028\u3000 ', 'a\u0085']) {
        s.chat('anthropic', ask, { type: 'message', role: 'assistant', content: [{ type: 'text', text }], stop_reason: 'end_turn' }, session);
      }
      s.pop(session);
    });
    expect(t.steps.filter((step) => step.source === 'agent').map((step) => step.message)).toEqual([
      [{ type: 'text', text: '\u0085' }],
      '\ufeff',
      [{ type: 'text', text: ' \u0085\u00a0\u2028\u3000 ' }],
      'a\u0085',
    ]);
  });

  it('handles an agent scope pushed under a tool handle and a turn-role agent inside it', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.chat('openai', { messages: [{ role: 'user', content: 'q' }] }, { choices: [{ message: { content: '', tool_calls: [{ id: 'sp', function: { name: 'spawn', arguments: '{}' } }] } }] }, session);
      const tool = s.tool('spawn', {}, session, 'sp');
      const child = s.push('child', 'Agent', tool, { metadata: { nemo_relay_scope_role: 'subagent' } });
      const childTurn = s.push('child-turn', 'Agent', child, { metadata: { nemo_relay_scope_role: 'turn' } });
      s.chat('openai', { messages: [{ role: 'user', content: 'child work' }] }, { choices: [{ message: { content: 'child done' } }] }, childTurn);
      s.pop(childTurn);
      s.pop(child);
      s.toolEnd(tool, 'spawned');
      s.pop(session);
    });
    // The binding does not parent a scope to a tool handle, so the child is a second root: one flat trajectory.
    expect(t.subagent_trajectories).toBeUndefined();
    expect(t.steps.map((step) => step.message)).toContain('child done');
  });

  it('produces an empty trajectory for a session without LLM calls', async () => {
    const t = await differential((s) => {
      const session = s.push('session', 'Agent', null);
      s.mark('note', session, { x: 1 });
      s.pop(session);
    });
    expect(t.steps).toEqual([]);
  });

  it('omits agent.model_name when none is configured', async () => {
    const t = await differential(
      (s) => {
        const session = s.push('session', 'Agent', null);
        s.chat('openai', { messages: [{ role: 'user', content: 'q' }] }, { choices: [{ message: { content: 'a' } }] }, session);
        s.pop(session);
      },
      { sessionId: 'no-model', agentName: 'a', agentVersion: 'v' },
    );
    expect(t.agent).toEqual({ name: 'a', version: 'v' });
  });
});


/**
 * The one place the builder and native's exporter disagree on purpose
 * (README, differences between the backends): usage whose own shape
 * includes the cache in its input (OpenAI chat `prompt_tokens`, the shape
 * the framework adapters emit; LangChain `usage_metadata`; the AI SDK's
 * `inputTokens`) under an Anthropic provider name. Native adds the cache
 * reads and writes again because of the name; the builder counts by shape.
 * Raw Anthropic usage (`input_tokens` without the cache) is added up on both.
 */
describe.skipIf(native === undefined)(`ATIF builder vs native AtifExporter: Anthropic prompt tokens${nativeSkipReason ? ` (skipped: ${nativeSkipReason})` : ''}`, () => {
  it('counts inclusive usage under an Anthropic provider once, where native adds the cache again', async () => {
    const run = await runExporterScenario(native!, AGENT, (s) => {
      const session = s.push('session', 'Agent', null);
      const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });
      s.chat('anthropic', ask('a'), { content: 'chat', usage: { prompt_tokens: 1410, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 1216 } } }, session);
      s.chat('anthropic.messages', ask('b'), { content: 'written', usage: { prompt_tokens: 3270, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 0 }, cache_write_tokens: 3000 } }, session);
      s.chat('anthropic', ask('c'), { content: 'langchain', usage: { input_tokens: 1410, output_tokens: 12, input_token_details: { cache_read: 1216 } } }, session);
      s.chat('anthropic', ask('d'), { content: 'ai sdk', usage: { inputTokens: 1410, outputTokens: 12, inputTokenDetails: { cacheReadTokens: 1216, noCacheTokens: 194 } } }, session);
      s.chat('anthropic', ask('e'), { content: 'raw', usage: { input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216 } }, session);
      s.pop(session);
    });
    const builder = new AtifBuilder(AGENT);
    for (const event of run.events) builder.add(event);
    const counts = (t: AtifTrajectory) => t.steps.filter((step) => step.metrics !== undefined).map((step) => [step.metrics!.prompt_tokens, step.metrics!.cached_tokens]);
    const built = builder.build();
    const expected = JSON.parse(run.nativeJson) as AtifTrajectory;
    expect(counts(built)).toEqual([[1410, 1216], [3270, 3000], [1410, 1216], [1410, 1216], [1410, 1216]]);
    // Native: twice for the chat shape; no cache count at all for LangChain's and the AI SDK's details.
    expect(counts(expected)).toEqual([[2626, 1216], [6270, 3000], [1410, undefined], [1410, undefined], [1410, 1216]]);
    // Everything else is the same document.
    const withoutCounts = (t: AtifTrajectory) => JSON.parse(JSON.stringify(t, (key, value) => (key === 'metrics' || key === 'final_metrics' ? undefined : value)));
    expect(withoutCounts(built)).toEqual(withoutCounts(expected));
  });
});

/**
 * The other purposeful difference (README, differences between the
 * backends): a failed LLM attempt (an end with `error.type`, as the plugin
 * ends an `api_request_error`) and its retry (the next start with the same
 * `api_request_id`). Native marks the failed attempt's invocation
 * "completed" and starts the retry with a repeated user step; the builder
 * says "failed" and lets the retry continue the request.
 */
describe.skipIf(native === undefined)(`ATIF builder vs native AtifExporter: failed attempts${nativeSkipReason ? ` (skipped: ${nativeSkipReason})` : ''}`, () => {
  it('records a failed attempt as failed and its retry in the same request, where native says completed and repeats the user step', async () => {
    const run = await runExporterScenario(native!, AGENT, (s) => {
      const session = s.push('session', 'Agent', null);
      const request = { model: 'gpt-test', messages: [{ role: 'user', content: 'Summarise the changelog.' }] };
      const attempt = { api_request_id: 'turn-1:api:1' };
      const first = s.llm('openai', request, session, { metadata: attempt });
      s.llmEnd(first, { error: { type: 'rate_limit_error', message: 'Rate limit reached' } }, { ...attempt, 'error.type': 'rate_limit_error' });
      const retry = s.llm('openai', request, session, { metadata: attempt });
      s.llmEnd(retry, { choices: [{ message: { role: 'assistant', content: 'Version 2.0.' } }], usage: { prompt_tokens: 30, completion_tokens: 4 } }, attempt);
      s.pop(session);
    });
    const builder = new AtifBuilder(AGENT);
    for (const event of run.events) builder.add(event);
    const built = builder.build();
    const expected = JSON.parse(run.nativeJson) as AtifTrajectory;
    const summary = (t: AtifTrajectory) =>
      t.steps.map((step) => [step.source, (step.extra as { invocation?: { status?: string } } | undefined)?.invocation?.status ?? null, typeof step.message === 'string' ? step.message.slice(0, 24) : step.message]);
    expect(summary(built)).toEqual([
      ['user', null, 'Summarise the changelog.'],
      ['agent', 'failed', '{"error":{"message":"Rat'],
      ['agent', 'completed', 'Version 2.0.'],
    ]);
    expect(summary(expected)).toEqual([
      ['user', null, 'Summarise the changelog.'],
      ['agent', 'completed', '{"error":{"message":"Rat'],
      ['user', null, 'Summarise the changelog.'],
      ['agent', 'completed', 'Version 2.0.'],
    ]);
    // The rest is native's document: with the two changes made to it, they are equal.
    expect(built).toEqual(attemptsAsMemory(expected));
  });
});
