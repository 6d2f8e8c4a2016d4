/**
 * The bundled scripted sessions: what `nemo-relay-hooks demo` runs and what
 * `.ci/record-examples.ts` records into `examples/*.hooks.jsonl`.
 *
 * - `agent-session`: the full demo. One turn with a rate-limited API call and
 *   its retry (same `api_request_id`, `retry_count` 0 then 1), parallel tool
 *   calls, an approval around a shell command, and a subagent with its own
 *   LLM calls and a failing tool.
 * - `plain-chat`: two chat turns, no tools; the second hits the prompt cache.
 * - `tool-loop`: one turn whose model calls tools three times before answering.
 * - `anthropic-session`: Anthropic Messages-shaped requests and responses
 *   (`tool_use` blocks, `input_tokens`/`cache_read_input_tokens`).
 *
 * Ids are fixed, so recordings are reproducible and easy to grep.
 *
 * @module
 */

import type { Scenario, ScenarioContext } from './script.ts';
import { openAiAssistant, openAiResponse, openAiTool, openAiUsage, toolMessage } from './script.ts';
import { ScriptedTurn } from './turn.ts';

const SYSTEM_PROMPT = 'You are a careful coding agent. Use tools to inspect the repository before you answer.';

const TOOLS = [
  openAiTool('read_file', 'Read a file of the workspace', { path: { type: 'string' } }, ['path']),
  openAiTool('search_code', 'Search the workspace for a regular expression', { pattern: { type: 'string' }, glob: { type: 'string' } }, ['pattern']),
  openAiTool('terminal', 'Run a shell command (asks for approval)', { command: { type: 'string' } }, ['command']),
  openAiTool('delegate_task', 'Hand a focused task to a subagent', { goal: { type: 'string' }, role: { type: 'string' } }, ['goal']),
];

/** The full demo: retries, tools, an approval and a subagent. */
export const agentSession: Scenario = async (context) => {
  const { hooks, clock } = context;
  const sessionId = 'demo-session-7f3a';
  const model = 'gpt-4o-2024-08-06';
  hooks.emit('on_session_start', { session_id: sessionId, model, platform: 'cli' });

  const turn = new ScriptedTurn(context, {
    sessionId,
    taskId: 'task-0c41',
    turnId: 'turn-1',
    model,
    platform: 'cli',
    provider: 'openai',
    apiMode: 'chat_completions',
  });
  const user = 'The date parser test is flaky. Find out why and tell me how to fix it.';
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
  turn.begin(user, [], true);
  await clock.pause(40);

  // API call 1: rate limited once, then answered with two parallel tool calls.
  const look = openAiAssistant(null, [
    { id: 'call_read_1', name: 'read_file', args: { path: 'src/date.ts' } },
    { id: 'call_search_2', name: 'search_code', args: { pattern: 'parseDate\\(', glob: 'test/**/*.ts' } },
  ]);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS, tool_choice: 'auto', max_tokens: 1024 },
    failures: [
      {
        statusCode: 429,
        error: { type: 'rate_limit_error', message: 'Rate limit reached for gpt-4o: 30000 TPM. Please retry after 1s.' },
        retryable: true,
        durationMs: 180,
      },
    ],
    response: openAiResponse('chatcmpl-demo-1', model, look, openAiUsage({ prompt: 1240, completion: 58 }), clock.now()),
    usage: openAiUsage({ prompt: 1240, completion: 58 }),
    assistantMessage: look,
    finishReason: 'tool_calls',
    durationMs: 620,
  });
  messages.push(look);
  const source = 'export function parseDate(text: string): Date {\n  return new Date(text);\n}\n';
  await turn.toolCall({ toolCallId: 'call_read_1', toolName: 'read_file', args: { path: 'src/date.ts' }, result: source, durationMs: 12 });
  messages.push(toolMessage('call_read_1', source));
  const hits = 'test/date.test.ts:14: expect(parseDate("2024-03-10 02:30")).toEqual(...)';
  await turn.toolCall({
    toolCallId: 'call_search_2',
    toolName: 'search_code',
    args: { pattern: 'parseDate\\(', glob: 'test/**/*.ts' },
    result: hits,
    durationMs: 35,
  });
  messages.push(toolMessage('call_search_2', hits));

  // API call 2: run the test, which needs an approval.
  const run = openAiAssistant('Let me run the test in a different time zone.', [
    { id: 'call_term_3', name: 'terminal', args: { command: 'TZ=America/New_York npx vitest run test/date.test.ts' } },
  ]);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS, tool_choice: 'auto', max_tokens: 1024 },
    response: openAiResponse('chatcmpl-demo-2', model, run, openAiUsage({ prompt: 1420, completion: 41, cached: 1152 }), clock.now()),
    usage: openAiUsage({ prompt: 1420, completion: 41, cached: 1152 }),
    assistantMessage: run,
    finishReason: 'tool_calls',
    durationMs: 540,
  });
  messages.push(run);
  const testOutput = 'FAIL test/date.test.ts > parses local times\nExpected: 2024-03-10T07:30:00.000Z\nReceived: Invalid Date\n1 failed, 11 passed';
  await turn.toolCall(
    {
      toolCallId: 'call_term_3',
      toolName: 'terminal',
      args: { command: 'TZ=America/New_York npx vitest run test/date.test.ts' },
      result: testOutput,
      durationMs: 1450,
    },
    async () => {
      // Hermes' approval payloads carry `session_key`, not `session_id`; the
      // plugin keys sessions by `session_id`, so the host adds it.
      const approval = {
        session_id: sessionId,
        turn_id: 'turn-1',
        tool_call_id: 'call_term_3',
        session_key: sessionId,
        command: 'TZ=America/New_York npx vitest run test/date.test.ts',
        description: 'run a command that executes project code',
        pattern_key: 'npx',
        pattern_keys: ['npx'],
        surface: 'cli',
      };
      hooks.emit('pre_approval_request', approval);
      await clock.pause(900);
      hooks.emit('post_approval_response', { ...approval, choice: 'once' });
    },
  );
  messages.push(toolMessage('call_term_3', testOutput));

  // API call 3: delegate the fix to a subagent.
  const goal = 'Propose a time-zone-safe parseDate and list the tests that cover it.';
  const delegate = openAiAssistant(null, [{ id: 'call_delegate_4', name: 'delegate_task', args: { goal, role: 'fixer' } }]);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS, tool_choice: 'auto', max_tokens: 1024 },
    response: openAiResponse('chatcmpl-demo-3', model, delegate, openAiUsage({ prompt: 1610, completion: 36, cached: 1408 }), clock.now()),
    usage: openAiUsage({ prompt: 1610, completion: 36, cached: 1408 }),
    assistantMessage: delegate,
    finishReason: 'tool_calls',
    durationMs: 480,
  });
  messages.push(delegate);
  const summary = 'Use a fixed-offset ISO parser; new Date() reads "2024-03-10 02:30" in local time, which does not exist during the DST jump.';
  await turn.toolCall(
    { toolCallId: 'call_delegate_4', toolName: 'delegate_task', args: { goal, role: 'fixer' }, result: summary, durationMs: 30 },
    () => subagent(context, { parentSessionId: sessionId, parentTurnId: 'turn-1', goal, summary }),
  );
  messages.push(toolMessage('call_delegate_4', summary));

  // API call 4: the answer.
  const answerText =
    'The test fails when it runs in a time zone with a DST jump: `new Date("2024-03-10 02:30")` is a local time that does not exist there. Parse the string as UTC (append `Z`, or use `Date.UTC`), and pin `TZ=UTC` in the test script.';
  const answer = openAiAssistant(answerText);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS, tool_choice: 'auto', max_tokens: 1024 },
    response: openAiResponse('chatcmpl-demo-4', model, answer, openAiUsage({ prompt: 1702, completion: 88, cached: 1536 }), clock.now()),
    usage: openAiUsage({ prompt: 1702, completion: 88, cached: 1536 }),
    assistantMessage: answer,
    finishReason: 'stop',
    durationMs: 910,
  });
  messages.push(answer);
  turn.end(answerText, messages.slice(1));
  hooks.emit('on_session_finalize', { session_id: sessionId, platform: 'cli', reason: 'cli_exit' });
};

interface SubagentScript {
  parentSessionId: string;
  parentTurnId: string;
  goal: string;
  summary: string;
}

async function subagent(context: ScenarioContext, script: SubagentScript): Promise<void> {
  const { hooks, clock } = context;
  const childSessionId = 'demo-subagent-91b2';
  const model = 'gpt-4o-mini-2024-07-18';
  const started = clock.now();
  hooks.emit('subagent_start', {
    parent_session_id: script.parentSessionId,
    parent_turn_id: script.parentTurnId,
    child_session_id: childSessionId,
    child_subagent_id: 'subagent-1',
    child_role: 'fixer',
    child_goal: script.goal,
  });
  const turn = new ScriptedTurn(context, {
    sessionId: childSessionId,
    taskId: 'task-5d20',
    turnId: 'subturn-1',
    model,
    platform: 'cli',
    provider: 'openai',
    apiMode: 'chat_completions',
    extra: { parent_session_id: script.parentSessionId },
  });
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a focused subagent. Answer with a short proposal.' },
    { role: 'user', content: script.goal },
  ];
  turn.begin(script.goal, [], true);
  const look = openAiAssistant(null, [
    { id: 'call_sub_read_1', name: 'read_file', args: { path: 'test/date-utils.test.ts' } },
  ]);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS.slice(0, 2), max_tokens: 512 },
    response: openAiResponse('chatcmpl-demo-sub-1', model, look, openAiUsage({ prompt: 310, completion: 22 }), clock.now()),
    usage: openAiUsage({ prompt: 310, completion: 22 }),
    assistantMessage: look,
    finishReason: 'tool_calls',
    durationMs: 260,
  });
  messages.push(look);
  const missing = 'Error: ENOENT: no such file or directory, open \'test/date-utils.test.ts\'';
  await turn.toolCall({
    toolCallId: 'call_sub_read_1',
    toolName: 'read_file',
    args: { path: 'test/date-utils.test.ts' },
    result: missing,
    durationMs: 3,
    status: 'error',
    errorType: 'FileNotFoundError',
    errorMessage: 'test/date-utils.test.ts does not exist',
  });
  messages.push(toolMessage('call_sub_read_1', missing));
  const answer = openAiAssistant(script.summary);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS.slice(0, 2), max_tokens: 512 },
    response: openAiResponse('chatcmpl-demo-sub-2', model, answer, openAiUsage({ prompt: 372, completion: 45, cached: 256 }), clock.now()),
    usage: openAiUsage({ prompt: 372, completion: 45, cached: 256 }),
    assistantMessage: answer,
    finishReason: 'stop',
    durationMs: 330,
  });
  messages.push(answer);
  turn.end(script.summary, messages.slice(1));
  hooks.emit('on_session_finalize', { session_id: childSessionId, platform: 'cli', reason: 'subagent_complete' });
  hooks.emit('subagent_stop', {
    parent_session_id: script.parentSessionId,
    parent_turn_id: script.parentTurnId,
    child_session_id: childSessionId,
    child_role: 'fixer',
    child_summary: script.summary,
    child_status: 'completed',
    tool_call_history: [{ tool_name: 'read_file', status: 'error' }],
    duration_ms: Math.round((clock.now() - started) * 1000),
  });
}

/** Two chat turns without tools; the second reuses the cached prompt. */
const plainChat: Scenario = async (context) => {
  const { hooks, clock } = context;
  const sessionId = 'chat-session-2c88';
  const model = 'gpt-4o-mini-2024-07-18';
  hooks.emit('on_session_start', { session_id: sessionId, model, platform: 'telegram' });
  const history: Record<string, unknown>[] = [];
  const exchanges = [
    { user: 'What is the difference between a mutex and a semaphore?', answer: 'A mutex lets one holder in at a time and must be released by that holder; a semaphore counts permits, so N holders may enter, and any thread may release.', usage: { prompt: 412, completion: 61 } },
    { user: 'And when would I pick a semaphore?', answer: 'When a resource has a fixed number of slots, e.g. at most 4 concurrent downloads or a pool of 10 database connections.', usage: { prompt: 489, completion: 44, cached: 384 } },
  ];
  for (const [index, exchange] of exchanges.entries()) {
    const turn = new ScriptedTurn(context, {
      sessionId,
      taskId: 'task-chat',
      turnId: `chat-turn-${index + 1}`,
      model,
      platform: 'telegram',
      provider: 'openai',
      apiMode: 'chat_completions',
    });
    turn.begin(exchange.user, [...history], index === 0);
    const messages = [{ role: 'system', content: 'You are a helpful assistant.' }, ...history, { role: 'user', content: exchange.user }];
    const answer = openAiAssistant(exchange.answer);
    await turn.apiCall({
      body: { model, messages, max_tokens: 512, temperature: 0.3 },
      response: openAiResponse(`chatcmpl-chat-${index + 1}`, model, answer, openAiUsage(exchange.usage), clock.now()),
      usage: openAiUsage(exchange.usage),
      assistantMessage: answer,
      finishReason: 'stop',
      durationMs: 700,
    });
    history.push({ role: 'user', content: exchange.user }, answer);
    turn.end(exchange.answer, [...history]);
    await clock.pause(4000);
  }
  hooks.emit('on_session_finalize', { session_id: sessionId, platform: 'telegram', reason: 'gateway_shutdown' });
};

/** One turn whose model calls tools three times before it answers. */
const toolLoop: Scenario = async (context) => {
  const { hooks } = context;
  const sessionId = 'loop-session-4e19';
  const model = 'gpt-4.1-2025-04-14';
  hooks.emit('on_session_start', { session_id: sessionId, model, platform: 'cli' });
  const turn = new ScriptedTurn(context, {
    sessionId,
    taskId: 'task-loop',
    turnId: 'loop-turn-1',
    model,
    platform: 'cli',
    provider: 'openai',
    apiMode: 'chat_completions',
  });
  const user = 'How many TODO comments are in src/, and which file has the most?';
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: user },
  ];
  turn.begin(user, [], true);
  const steps = [
    { id: 'call_loop_1', name: 'search_code', args: { pattern: 'TODO', glob: 'src/**' }, result: 'src/a.ts:3\nsrc/a.ts:19\nsrc/b.ts:7', usage: { prompt: 980, completion: 25 } },
    { id: 'call_loop_2', name: 'read_file', args: { path: 'src/a.ts' }, result: '// TODO: cache\n...\n// TODO: retry', usage: { prompt: 1030, completion: 19, cached: 896 } },
    { id: 'call_loop_3', name: 'read_file', args: { path: 'src/b.ts' }, result: '// TODO: remove after v2', usage: { prompt: 1090, completion: 19, cached: 1024 } },
  ];
  for (const [index, step] of steps.entries()) {
    const call = openAiAssistant(null, [{ id: step.id, name: step.name, args: step.args }]);
    await turn.apiCall({
      body: { model, messages: [...messages], tools: TOOLS.slice(0, 2), max_tokens: 800 },
      response: openAiResponse(`chatcmpl-loop-${index + 1}`, model, call, openAiUsage(step.usage), context.clock.now()),
      usage: openAiUsage(step.usage),
      assistantMessage: call,
      finishReason: 'tool_calls',
      durationMs: 450,
    });
    messages.push(call);
    await turn.toolCall({ toolCallId: step.id, toolName: step.name, args: step.args, result: step.result, durationMs: 20 });
    messages.push(toolMessage(step.id, step.result));
  }
  const text = 'There are 3 TODO comments in src/: 2 in src/a.ts and 1 in src/b.ts, so src/a.ts has the most.';
  const answer = openAiAssistant(text);
  await turn.apiCall({
    body: { model, messages: [...messages], tools: TOOLS.slice(0, 2), max_tokens: 800 },
    response: openAiResponse('chatcmpl-loop-4', model, answer, openAiUsage({ prompt: 1140, completion: 33, cached: 1024 }), context.clock.now()),
    usage: openAiUsage({ prompt: 1140, completion: 33, cached: 1024 }),
    assistantMessage: answer,
    finishReason: 'stop',
    durationMs: 520,
  });
  messages.push(answer);
  turn.end(text, messages.slice(1));
  hooks.emit('on_session_finalize', { session_id: sessionId, platform: 'cli', reason: 'cli_exit' });
};

/** Anthropic Messages-shaped requests and responses, with a tool_use round trip. */
const anthropicSession: Scenario = async (context) => {
  const { hooks } = context;
  const sessionId = 'claude-session-b7d0';
  const model = 'claude-sonnet-4-5-20250929';
  hooks.emit('on_session_start', { session_id: sessionId, model, platform: 'cli' });
  const turn = new ScriptedTurn(context, {
    sessionId,
    taskId: 'task-claude',
    turnId: 'claude-turn-1',
    model,
    platform: 'cli',
    provider: 'anthropic',
    apiMode: 'anthropic_messages',
  });
  const user = 'Which Node version does this project need?';
  const tools = [
    { name: 'read_file', description: 'Read a file of the workspace', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  ];
  const system = 'You are a careful coding agent.';
  const messages: Record<string, unknown>[] = [{ role: 'user', content: [{ type: 'text', text: user }] }];
  turn.begin(user, [], true);

  const toolUse = { type: 'tool_use', id: 'toolu_01A9', name: 'read_file', input: { path: 'package.json' } };
  const firstContent = [{ type: 'text', text: 'I will check package.json.' }, toolUse];
  const firstUsage = { input_tokens: 620, output_tokens: 48, cache_read_input_tokens: 0, cache_creation_input_tokens: 512 };
  await turn.apiCall({
    body: { model, system, messages: [...messages], tools, max_tokens: 1024 },
    response: { id: 'msg_01demo1', type: 'message', role: 'assistant', model, content: firstContent, stop_reason: 'tool_use', stop_sequence: null, usage: firstUsage },
    usage: firstUsage,
    assistantMessage: {
      role: 'assistant',
      content: 'I will check package.json.',
      tool_calls: [{ id: 'toolu_01A9', type: 'function', function: { name: 'read_file', arguments: '{"path":"package.json"}' } }],
    },
    finishReason: 'tool_calls',
    durationMs: 830,
  });
  messages.push({ role: 'assistant', content: firstContent });
  const packageJson = '{ "name": "app", "engines": { "node": ">=20" } }';
  await turn.toolCall({ toolCallId: 'toolu_01A9', toolName: 'read_file', args: { path: 'package.json' }, result: packageJson, durationMs: 6 });
  messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A9', content: packageJson }] });

  const text = 'It needs Node 20 or newer (`engines.node` is ">=20").';
  const secondUsage = { input_tokens: 702, output_tokens: 21, cache_read_input_tokens: 512, cache_creation_input_tokens: 0 };
  await turn.apiCall({
    body: { model, system, messages: [...messages], tools, max_tokens: 1024 },
    response: { id: 'msg_01demo2', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: secondUsage },
    usage: secondUsage,
    assistantMessage: { role: 'assistant', content: text },
    finishReason: 'stop',
    durationMs: 610,
  });
  turn.end(text, [...messages, { role: 'assistant', content: [{ type: 'text', text }] }]);
  hooks.emit('on_session_finalize', { session_id: sessionId, platform: 'cli', reason: 'cli_exit' });
};

/** Every bundled scenario by name; `agent-session` is the demo. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'agent-session': agentSession,
  'plain-chat': plainChat,
  'tool-loop': toolLoop,
  'anthropic-session': anthropicSession,
};
