// A host written as docs/hosts/emitting-hooks.md and middleware.md say: one
// session with a turn whose first API call fails once and is retried, two
// tool calls through request and execution middleware (one redacted, one
// approved then blocked), a sub-agent run by a third tool call, and a
// streamed second API call whose usage the host reads from the last chunk.
// The files must say what the host emitted: ids, order, tokens, statuses and
// the sub-agent's link; and memory and native write the same.
//
// Then a host whose tools take their arguments as text (the JSON text a
// model's tool call carries, a shell's command line), with no tool call in
// the model's answer: the trajectory held that text as the call's
// `arguments`, which ATIF requires to be an object, so `validate` rejected
// the file (native's converter wrote the same). The same with managed tool
// calls (`hooks.execute('tool_execution', ...)`): the tool gets the text, the
// trajectory the object.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInProcess } from '../cli/support.ts';
import { ExecutionBlocked, TurnIds } from '../../src/hooks/index.ts';
import { backends, finishedRun, recordedPlugin, type AtifDoc, type AtofEvent } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { normalizeEvents } from '../differential/normalize.ts';
import { runComponents, type ComponentRunResult } from '../support/component-run.ts';

const PROMPT = 'List the files, then summarise them';

/** What an OpenAI chat stream with `stream_options.include_usage` delivers: text deltas, then a usage-only chunk. */
function* chatStream(): Generator<Record<string, unknown>> {
  for (const content of ['Two ', 'text ', 'files.']) yield { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
  yield { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
  yield { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', choices: [], usage: { prompt_tokens: 210, completion_tokens: 4, total_tokens: 214, prompt_tokens_details: { cached_tokens: 128 } } };
}

async function runHost(backend: 'memory' | 'native') {
  const recorded = recordedPlugin('host-program', backend);
  const { hooks } = recorded;
  hooks.use('tool_request', ({ args }) => (typeof args.token === 'string' ? { args: { ...args, token: '[redacted]' }, reason: 'no secrets' } : undefined));
  hooks.use('tool_execution', (payload, next) => {
    if (payload.tool_name === 'rm') throw new ExecutionBlocked('rm is not allowed');
    return next();
  });

  hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o', platform: 'cli' });
  const turn = new TurnIds({ sessionId: 's1', taskId: 'task-1', turnId: 'turn-1' });
  hooks.emit('pre_llm_call', () => ({ ...turn, user_message: PROMPT, is_first_turn: true }));

  const api1 = turn.nextApiCall();
  const body1 = { model: 'gpt-4o', messages: [{ role: 'user', content: PROMPT }] };
  const toolCalls = [
    { id: 'call_ls', type: 'function', function: { name: 'ls', arguments: '{"dir":".","token":"s3cret"}' } },
    { id: 'call_rm', type: 'function', function: { name: 'rm', arguments: '{"path":"a.txt"}' } },
    { id: 'call_delegate', type: 'function', function: { name: 'delegate', arguments: '{"goal":"summarise"}' } },
  ];
  for (let retry_count = 0; ; retry_count++) {
    hooks.emit('pre_api_request', () => ({ ...turn, ...api1, retry_count, provider: 'openai', model: 'gpt-4o', request: { body: body1 } }));
    if (retry_count === 0) {
      hooks.emit('api_request_error', () => ({ ...turn, ...api1, retry_count, status_code: 503, retryable: true, error: { type: 'InternalServerError', message: 'overloaded' } }));
      continue;
    }
    const response = {
      id: 'chatcmpl-1',
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    };
    hooks.emit('post_api_request', () => ({ ...turn, ...api1, provider: 'openai', model: 'gpt-4o', response, usage: response.usage, finish_reason: 'tool_calls', response_model: response.model }));
    break;
  }

  const ids = (tool_call_id: string) => ({ ...turn, api_request_id: api1.api_request_id, tool_call_id });
  const args = hooks.applyRequest('tool_request', { dir: '.', token: 's3cret' }, { ...ids('call_ls'), tool_name: 'ls' });
  hooks.emit('pre_tool_call', () => ({ ...ids('call_ls'), tool_name: 'ls', args, middleware_trace: hooks.requestTrace(args) }));
  const listing = await hooks.execute('tool_execution', { ...ids('call_ls'), tool_name: 'ls', args }, () => 'a.txt\nb.txt');
  hooks.emit('post_tool_call', () => ({ ...ids('call_ls'), tool_name: 'ls', args, result: listing, status: 'ok' }));

  hooks.emit('pre_approval_request', { session_id: 's1', turn_id: turn.turn_id, tool_call_id: 'call_rm', command: 'rm a.txt', surface: 'cli' });
  hooks.emit('post_approval_response', { session_id: 's1', turn_id: turn.turn_id, tool_call_id: 'call_rm', command: 'rm a.txt', surface: 'cli', choice: 'once' });
  hooks.emit('pre_tool_call', () => ({ ...ids('call_rm'), tool_name: 'rm', args: { path: 'a.txt' } }));
  let blocked: unknown;
  try {
    await hooks.execute('tool_execution', { ...ids('call_rm'), tool_name: 'rm', args: { path: 'a.txt' } }, () => 'removed');
  } catch (error) {
    blocked = error;
  }
  expect(blocked).toBeInstanceOf(ExecutionBlocked);
  hooks.emit('post_tool_call', () => ({ ...ids('call_rm'), tool_name: 'rm', args: { path: 'a.txt' }, result: 'rm is not allowed', status: 'blocked', error_type: 'ExecutionBlocked', error_message: 'rm is not allowed' }));

  hooks.emit('pre_tool_call', () => ({ ...ids('call_delegate'), tool_name: 'delegate', args: { goal: 'summarise' } }));
  hooks.emit('subagent_start', { parent_session_id: 's1', parent_turn_id: turn.turn_id, child_session_id: 'child-1', child_subagent_id: 'sub-1', child_role: 'summariser', child_goal: 'summarise' });
  const child = new TurnIds({ sessionId: 'child-1' });
  hooks.emit('pre_llm_call', () => ({ ...child, user_message: 'Summarise a.txt and b.txt', parent_session_id: 's1' }));
  const capi = child.nextApiCall();
  hooks.emit('pre_api_request', () => ({ ...child, ...capi, provider: 'anthropic', model: 'claude-haiku-4-5', request: { body: { messages: [{ role: 'user', content: 'Summarise a.txt and b.txt' }] } } }));
  hooks.emit('post_api_request', () => ({ ...child, ...capi, provider: 'anthropic', model: 'claude-haiku-4-5', response: { choices: [{ message: { role: 'assistant', content: 'Two text files.' }, finish_reason: 'stop' }] }, usage: { prompt_tokens: 30, completion_tokens: 4 } }));
  hooks.emit('post_llm_call', () => ({ ...child, assistant_response: 'Two text files.' }));
  hooks.emit('on_session_end', () => ({ ...child, completed: true }));
  hooks.emit('on_session_finalize', { session_id: 'child-1' });
  hooks.emit('subagent_stop', { parent_session_id: 's1', parent_turn_id: turn.turn_id, child_session_id: 'child-1', child_role: 'summariser', child_status: 'completed', child_summary: 'Two text files.', tool_call_id: 'call_delegate' });
  hooks.emit('post_tool_call', () => ({ ...ids('call_delegate'), tool_name: 'delegate', args: { goal: 'summarise' }, result: 'Two text files.', status: 'ok' }));

  // Streamed: the host emits post_api_request once the stream ended, with what it accumulated.
  const api2 = turn.nextApiCall();
  const messages = [
    { role: 'user', content: PROMPT },
    { role: 'assistant', content: null, tool_calls: toolCalls },
    { role: 'tool', tool_call_id: 'call_ls', content: listing },
    { role: 'tool', tool_call_id: 'call_rm', content: 'rm is not allowed' },
    { role: 'tool', tool_call_id: 'call_delegate', content: 'Two text files.' },
  ];
  hooks.emit('pre_api_request', () => ({ ...turn, ...api2, provider: 'openai', model: 'gpt-4o', request: { body: { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages } } }));
  let text = '';
  let finish: string | null = null;
  let usage: Record<string, unknown> | undefined;
  let model: string | undefined;
  for (const chunk of chatStream()) {
    model ??= chunk.model as string;
    const choice = (chunk.choices as Array<{ delta: { content?: string }; finish_reason: string | null }>)[0];
    text += choice?.delta.content ?? '';
    finish = choice?.finish_reason ?? finish;
    usage = (chunk.usage as Record<string, unknown> | undefined) ?? usage;
  }
  const streamed = { id: 'chatcmpl-2', model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }], usage };
  hooks.emit('post_api_request', () => ({ ...turn, ...api2, provider: 'openai', model: 'gpt-4o', response: streamed, usage, finish_reason: finish, response_model: model }));
  hooks.emit('post_llm_call', () => ({ ...turn, assistant_response: text }));
  hooks.emit('on_session_end', () => ({ ...turn, completed: true }));
  hooks.emit('on_session_finalize', { session_id: 's1', reason: 'cli_exit' });
  return { recorded, api1, api2 };
}

/** Scope events as `start name`, the session scopes' agent prefix (the package's name) written `agent`. */
const scopes = (atof: AtofEvent[]) =>
  atof.filter((event) => event.kind === 'scope').map((event) => `${event.scope_category} ${String(event.name).replace(/^.*-session-/, 'agent-session-')}`);

describe.each(backends())('a host that emits the hooks as the docs say (%s)', (backend) => {
  it('writes what it emitted: ids, order, tokens, statuses, the sub-agent link', async () => {
    const { recorded, api1, api2 } = await runHost(backend);
    const { doc, atof } = await finishedRun(recorded);
    expect(api1.api_request_id).toBe('turn-1:api:1');
    expect(api2.api_request_id).toBe('turn-1:api:2');

    const steps = doc.steps as AtifDoc[];
    expect(steps.map((step) => [step.source, step.message, step.extra?.invocation?.status ?? null])).toEqual([
      ['user', PROMPT, null],
      ['agent', expect.stringContaining('overloaded'), 'failed'],
      ['agent', '', 'completed'],
      ['agent', 'Two text files.', 'completed'],
    ]);
    expect(steps[2]!.model_name).toBe('gpt-4o-2024-08-06');
    expect(steps[2]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['call_ls', 'call_rm', 'call_delegate']);
    expect(steps[2]!.metrics).toMatchObject({ prompt_tokens: 100, completion_tokens: 20 });
    expect(steps[3]!.metrics).toMatchObject({ prompt_tokens: 210, completion_tokens: 4, cached_tokens: 128 });
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 310, total_completion_tokens: 24, total_cached_tokens: 128, total_steps: 4 });

    const results = steps[2]!.observation.results as AtifDoc[];
    expect(results.map((result) => [result.source_call_id, result.content ?? null, result.extra?.metadata?.status ?? null])).toEqual([
      ['call_ls', 'a.txt\nb.txt', 'ok'],
      ['call_rm', 'rm is not allowed', 'blocked'],
      ['call_delegate', 'Two text files.', null],
    ]);
    // The blocked call says why it failed, beside the result the model was told.
    expect(results[1]!.extra.metadata).toMatchObject({ 'otel.status_code': 'ERROR', 'error.type': 'ExecutionBlocked', 'error.message': 'rm is not allowed' });
    expect(results[0]!.extra.metadata['error.message']).toBeUndefined();
    // Its invocation does not read as completed, as a failed LLM attempt's does not (native says completed for both).
    expect(steps[2]!.extra.tool_invocations.map((invocation: AtifDoc) => [invocation.invocation_id, invocation.status])).toEqual([
      ['call_ls', 'completed'],
      ['call_rm', 'failed'],
      ['call_delegate', 'completed'],
    ]);
    expect(results[2]!.subagent_trajectory_ref).toEqual([expect.objectContaining({ session_id: 'child-1' })]);
    const [sub] = doc.subagent_trajectories as AtifDoc[];
    expect(sub!.trajectory_id).toBe(results[2]!.subagent_trajectory_ref[0].trajectory_id);
    expect(sub!.agent).toMatchObject({ name: 'summariser', model_name: 'claude-haiku-4-5' });
    expect(sub!.steps.map((step: AtifDoc) => [step.source, step.message])).toEqual([
      ['user', 'Summarise a.txt and b.txt'],
      ['agent', 'Two text files.'],
    ]);
    expect(sub!.final_metrics).toMatchObject({ total_prompt_tokens: 30, total_completion_tokens: 4 });

    // ATOF: the host's order, its ids on each span, the redacted arguments and the trace that says why.
    expect(scopes(atof)).toEqual([
      'start agent-session-s1',
      'start openai', 'end openai', 'start openai', 'end openai',
      'start ls', 'end ls',
      'start rm', 'end rm',
      'start delegate', 'start agent-session-child-1', 'start anthropic', 'end anthropic', 'end agent-session-child-1', 'end delegate',
      'start openai', 'end openai',
      'end agent-session-s1',
    ]);
    const llmStarts = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'start' && event.name === 'openai');
    expect(llmStarts.map((event) => [event.metadata.api_request_id, event.metadata.turn_id, event.metadata.task_id])).toEqual([
      ['turn-1:api:1', 'turn-1', 'task-1'],
      ['turn-1:api:1', 'turn-1', 'task-1'],
      ['turn-1:api:2', 'turn-1', 'task-1'],
    ]);
    const ls = atof.find((event) => event.kind === 'scope' && event.scope_category === 'start' && event.name === 'ls')!;
    expect(ls.data).toEqual({ dir: '.', token: '[redacted]' });
    expect(ls.metadata).toMatchObject({ tool_call_id: 'call_ls', api_request_id: 'turn-1:api:1' });
    // docs/hosts/middleware.md: the rewritten arguments are recorded, the trace of who rewrote them is not.
    const emitted = recorded.log.find((entry) => entry.hook === 'pre_tool_call' && entry.payload.tool_call_id === 'call_ls')!;
    expect(emitted.payload.middleware_trace).toEqual([expect.objectContaining({ reason: 'no secrets' })]);
    expect(JSON.stringify(atof)).not.toContain('no secrets');
    expect(JSON.stringify(doc)).not.toContain('no secrets');
    const marks = atof.filter((event) => event.kind === 'mark').map((event) => [event.name, event.metadata?.tool_call_id ?? null]);
    expect(marks).toEqual(expect.arrayContaining([
      ['hermes.approval.request', 'call_rm'],
      ['hermes.approval.response', 'call_rm'],
    ]));
    await sameOnNative(recorded);
  });
});

/** The tool calls of the string-arguments host: its id, tool name and the arguments as the host emits them. */
const TEXT_ARGUMENTS = [
  ['call_read', 'read_file', '{"path":"notes.txt"}'],
  ['call_shell', 'shell', 'ls -la'],
  ['call_touch', 'touch', '["a.txt","b.txt"]'],
] as const;

describe.each(backends())('a host whose tools take string arguments (%s)', (backend) => {
  it('records them as objects, as docs/hosts/emitting-hooks.md says: the trajectory validates, and memory writes what native writes', async () => {
    const recorded = recordedPlugin('host-text-args', backend);
    const { hooks } = recorded;
    hooks.emit('on_session_start', { session_id: 's-text', model: 'gpt-4o', platform: 'cli' });
    const turn = new TurnIds({ sessionId: 's-text', taskId: 'task-text', turnId: 'turn-text' });
    hooks.emit('pre_llm_call', () => ({ ...turn, user_message: 'Tidy up' }));
    const api = turn.nextApiCall();
    hooks.emit('pre_api_request', () => ({ ...turn, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Tidy up' }] } } }));
    hooks.emit('post_api_request', () => ({ ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: 'On it.' }, finish_reason: 'stop' }] }, usage: { prompt_tokens: 5, completion_tokens: 2 } }));
    // The host runs its tools itself: no model asked for them. The payload types say an object; a JavaScript host passes text.
    for (const [tool_call_id, tool_name, text] of TEXT_ARGUMENTS) {
      const args = text as unknown as Record<string, unknown>;
      hooks.emit('pre_tool_call', () => ({ ...turn, api_request_id: api.api_request_id, tool_call_id, tool_name, args }));
      hooks.emit('post_tool_call', () => ({ ...turn, api_request_id: api.api_request_id, tool_call_id, tool_name, args, result: 'done', status: 'ok' }));
    }
    hooks.emit('post_llm_call', () => ({ ...turn, assistant_response: 'On it.' }));
    hooks.emit('on_session_end', () => ({ ...turn, completed: true }));
    hooks.emit('on_session_finalize', { session_id: 's-text' });
    const { doc, atof } = await finishedRun(recorded);

    const atifDir = path.join(recorded.dir, 'atif');
    const validated = await cliInProcess(['validate', ...readdirSync(atifDir).map((file) => path.join(atifDir, file))]);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    // A JSON object's text is that object; other text is {raw}; JSON that is not an object is {value}.
    const expected = [
      ['call_read', 'read_file', { path: 'notes.txt' }],
      ['call_shell', 'shell', { raw: 'ls -la' }],
      ['call_touch', 'touch', { value: ['a.txt', 'b.txt'] }],
    ];
    const calls = (doc.steps as AtifDoc[]).flatMap((step) => (step.tool_calls ?? []) as AtifDoc[]);
    expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments])).toEqual(expected);
    // The ATOF tool spans carry the same objects, so every reader of either file sees one form.
    const starts = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'start' && event.category === 'tool');
    expect(starts.map((event) => [event.metadata.tool_call_id, event.name, event.data])).toEqual(expected);
    await sameOnNative(recorded);
  });
});

/**
 * The same host with managed tool calls (plugins.toml's `adaptive` on, `hooks.execute('tool_execution', ...)`,
 * docs/hosts/middleware.md): each tool gets its arguments as the host gave them, the text, and the trajectory records
 * the object the hooked calls record, so it validates; memory writes what native writes.
 */
describe('a host whose managed tools take string arguments', () => {
  const runs = new Map<string, ComponentRunResult>();
  for (const backend of FILE_BACKENDS) {
    it.skipIf(!backend.available)(`runs each tool with its text and records it as an object: the trajectory validates (${backend.name})`, async () => {
      const run = await runComponents(backend.create(), {
        components: '[[components]]\nkind = "adaptive"\n',
        script: async ({ hooks, terminal }) => {
          hooks.emit('on_session_start', { session_id: 's-managed', model: 'gpt-4o', platform: 'cli' });
          const turn = new TurnIds({ sessionId: 's-managed', taskId: 'task-managed', turnId: 'turn-managed' });
          hooks.emit('pre_llm_call', () => ({ ...turn, user_message: 'Tidy up' }));
          const api = turn.nextApiCall();
          hooks.emit('pre_api_request', () => ({ ...turn, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Tidy up' }] } } }));
          hooks.emit('post_api_request', () => ({ ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: 'On it.' }, finish_reason: 'stop' }] }, usage: { prompt_tokens: 5, completion_tokens: 2 } }));
          for (const [tool_call_id, tool_name, text] of TEXT_ARGUMENTS) {
            const args = text as unknown as Record<string, unknown>;
            await hooks.execute('tool_execution', { ...turn, api_request_id: api.api_request_id, tool_call_id, tool_name, args }, terminal('tool', 'done') as never);
          }
          hooks.emit('post_llm_call', () => ({ ...turn, assistant_response: 'On it.' }));
          hooks.emit('on_session_end', () => ({ ...turn, completed: true }));
          hooks.emit('on_session_finalize', { session_id: 's-managed' });
        },
      });
      runs.set(backend.name, run);
      expect(run.problems).toEqual([]);
      // What the host's tools received: the text, as given.
      expect(run.terminalCalls.map((call) => [call.kind, (call.input as { args: unknown }).args])).toEqual(TEXT_ARGUMENTS.map(([, , text]) => ['tool', text]));

      const atifDir = path.join(run.dir, 'atif');
      const validated = await cliInProcess(['validate', ...readdirSync(atifDir).map((file) => path.join(atifDir, file))]);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
      const expected = [
        ['call_read', 'read_file', { path: 'notes.txt' }],
        ['call_shell', 'shell', { raw: 'ls -la' }],
        ['call_touch', 'touch', { value: ['a.txt', 'b.txt'] }],
      ];
      const calls = [...run.trajectories.values()].flatMap((doc) => doc.steps.flatMap((step) => step.tool_calls ?? []));
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments])).toEqual(expected);
      const starts = run.events.filter((event) => event.kind === 'scope' && event.scope_category === 'start' && event.category === 'tool') as AtofEvent[];
      expect(starts.map((event) => [event.metadata?.tool_call_id, event.name, event.data])).toEqual(expected);
      if (runs.has('memory') && runs.has('native')) expect(normalizeEvents(runs.get('memory')!.events)).toEqual(normalizeEvents(runs.get('native')!.events));
    });
  }
});
