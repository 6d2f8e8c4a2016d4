/**
 * Hook payloads shaped like Hermes sends them, for the per-event and
 * throughput cases: ids, a sanitised request envelope, a response with
 * usage, tool arguments and a JSON-string tool result.
 *
 * Builders are deterministic and cheap, so replaying millions of them
 * measures the plugin, not the fixture. They spell every field out instead
 * of spreading the ids: V8 turns `{ ...ids, many more }` into slow objects
 * (measured at ~6 µs per payload), which would be billed to the plugin.
 *
 * @module
 */

export type Payload = Record<string, unknown>;

const SMALL_MESSAGES = [
  { role: 'system', content: 'You are a careful coding agent. Use tools when they help, then answer briefly.' },
  { role: 'user', content: 'Why did the nightly build fail? Check the runner logs.' },
];

const TOOLS = [
  { type: 'function', function: { name: 'search_notes', description: 'Search the project notes', parameters: { type: 'object', properties: { query: { type: 'string' } } } } },
];

/** An OpenAI-style chat request body with `messages` messages of about `bytes` total. */
export function chatBody(bytes: number, messages: number): Payload {
  if (bytes <= 600) return { model: 'gpt-4o-mini', messages: SMALL_MESSAGES, tools: TOOLS, temperature: 0.2, max_tokens: 512 };
  const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua'.split(' ');
  const list: Payload[] = [SMALL_MESSAGES[0]!];
  const perMessage = Math.max(20, Math.floor((bytes - 600) / (messages - 1)) - 40);
  for (let i = 1; i < messages; i++) {
    let content = '';
    let k = i;
    while (content.length < perMessage) content += `${words[k++ % words.length]} `;
    list.push({ role: i % 2 === 1 ? 'user' : 'assistant', content: content.slice(0, perMessage) });
  }
  return { model: 'gpt-4o-mini', messages: list, tools: TOOLS, temperature: 0.2, max_tokens: 512 };
}

export const SMALL_BODY = chatBody(0, 2);
export const LARGE_BODY = chatBody(8192, 20);

export interface Ids {
  session_id: string;
  turn_id: string;
  task_id: string;
}

export function idsOf(sessionId: string, turn: number): Ids {
  return { session_id: sessionId, turn_id: `${sessionId}:t${turn}`, task_id: `task-${sessionId}` };
}

export function sessionStart(sessionId: string): Payload {
  return { session_id: sessionId, model: 'gpt-4o-mini', platform: 'cli' };
}

export function sessionEnd(ids: Ids): Payload {
  return { session_id: ids.session_id, turn_id: ids.turn_id, task_id: ids.task_id, completed: true, failed: false, interrupted: false, turn_exit_reason: 'text_response', model: 'gpt-4o-mini', platform: 'cli' };
}

export function sessionFinalize(sessionId: string): Payload {
  return { session_id: sessionId, platform: 'cli', reason: 'cli_exit' };
}

export function preLlmCall(ids: Ids): Payload {
  return { session_id: ids.session_id, turn_id: ids.turn_id, task_id: ids.task_id, user_message: 'Why did the nightly build fail? Check the runner logs.', is_first_turn: false, model: 'gpt-4o-mini', platform: 'cli' };
}

export function postLlmCall(ids: Ids): Payload {
  return { session_id: ids.session_id, turn_id: ids.turn_id, task_id: ids.task_id, assistant_response: 'Runner 3 ran out of disk while linking; freeing the cache fixed it.', model: 'gpt-4o-mini', platform: 'cli' };
}

export function preApiRequest(ids: Ids, call: number, body: Payload): Payload {
  return {
    session_id: ids.session_id,
    turn_id: ids.turn_id,
    task_id: ids.task_id,
    api_request_id: `${ids.turn_id}:api:${call}`,
    api_call_count: call,
    model: 'gpt-4o-mini',
    provider: 'openai',
    api_mode: 'chat_completions',
    platform: 'cli',
    retry_count: 0,
    message_count: (body.messages as unknown[]).length,
    tool_count: 1,
    started_at: 1_764_400_000.25,
    request: { method: 'POST', url: 'https://api.openai.com/v1/chat/completions', headers: { 'content-type': 'application/json' }, body },
  };
}

export function postApiRequest(ids: Ids, call: number): Payload {
  return {
    session_id: ids.session_id,
    turn_id: ids.turn_id,
    task_id: ids.task_id,
    api_request_id: `${ids.turn_id}:api:${call}`,
    api_call_count: call,
    model: 'gpt-4o-mini',
    provider: 'openai',
    api_mode: 'chat_completions',
    platform: 'cli',
    api_duration: 1.25,
    started_at: 1_764_400_000.25,
    ended_at: 1_764_400_001.5,
    finish_reason: 'tool_calls',
    response_model: 'gpt-4o-mini-2024-07-18',
    response: {
      id: `chatcmpl-${call}`,
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${call}`, type: 'function', function: { name: 'search_notes', arguments: '{"query":"runner 3"}' } }] },
        },
      ],
    },
    usage: { prompt_tokens: 812, completion_tokens: 18, total_tokens: 830 },
  };
}

export function preToolCall(ids: Ids, call: number): Payload {
  return { session_id: ids.session_id, turn_id: ids.turn_id, task_id: ids.task_id, api_request_id: `${ids.turn_id}:api:1`, tool_call_id: `call_${ids.turn_id}_${call}`, tool_name: 'search_notes', args: { query: 'runner 3', limit: 3 } };
}

export function postToolCall(ids: Ids, call: number): Payload {
  return {
    session_id: ids.session_id,
    turn_id: ids.turn_id,
    task_id: ids.task_id,
    api_request_id: `${ids.turn_id}:api:1`,
    tool_call_id: `call_${ids.turn_id}_${call}`,
    tool_name: 'search_notes',
    args: { query: 'runner 3', limit: 3 },
    result: '{"hits":["note 3: the build failed on runner 3 after 39 seconds"],"count":1}',
    duration_ms: 4,
    status: 'ok',
  };
}

/**
 * The metadata the plugin derives for a payload (`metadataOf`): the
 * allowlisted ids plus `trajectory_id`. Bare baselines build the same object
 * by hand, as a direct caller would.
 */
export function directMetadata(p: Payload): Payload {
  const metadata: Payload = {
    telemetry_schema_version: 'hermes.observer.v1',
    session_id: p.session_id,
    platform: p.platform,
    task_id: p.task_id,
    turn_id: p.turn_id,
  };
  if (p.api_request_id !== undefined) metadata.api_request_id = p.api_request_id;
  if (p.tool_call_id !== undefined) metadata.tool_call_id = p.tool_call_id;
  if (p.provider !== undefined) metadata.provider = p.provider;
  if (p.model !== undefined) metadata.model = p.model;
  if (p.api_mode !== undefined) metadata.api_mode = p.api_mode;
  if (p.status !== undefined) metadata.status = p.status;
  if (p.reason !== undefined) metadata.reason = p.reason;
  metadata.trajectory_id = p.session_id;
  return metadata;
}
