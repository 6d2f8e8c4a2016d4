// Writes a large synthetic hook stream (many short sessions, each closed
// by on_session_finalize) for the streaming-replay test.
import { closeSync, openSync, writeSync } from 'node:fs';

/** Writes `sessions` sessions of exactly `linesPerSession` lines (>= 8, even) to `file`. Returns the line count. */
export function writeSyntheticStream(file: string, sessions: number, linesPerSession: number): number {
  const fd = openSync(file, 'w');
  let lines = 0;
  let chunk: string[] = [];
  const push = (hook: string, payload: Record<string, unknown>): void => {
    chunk.push(JSON.stringify({ hook, payload }));
    lines += 1;
    if (chunk.length >= 5000) {
      writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
  };
  const loops = Math.floor((linesPerSession - 6) / 4);
  const padding = linesPerSession - 6 - loops * 4;
  for (let s = 0; s < sessions; s++) {
    const ids = { session_id: `s-${s}`, task_id: `t-${s}`, turn_id: `s-${s}-turn` };
    push('on_session_start', { session_id: ids.session_id, model: 'gpt-4o-mini', platform: 'cli' });
    push('pre_llm_call', { ...ids, user_message: `question ${s}`, is_first_turn: true, model: 'gpt-4o-mini' });
    for (let i = 1; i <= loops; i++) {
      const api = { ...ids, api_request_id: `${ids.turn_id}:api:${i}`, api_call_count: i, provider: 'openai', model: 'gpt-4o-mini' };
      const call = `call-${s}-${i}`;
      push('pre_api_request', { ...api, retry_count: 0, request: { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${s}` }] } } });
      push('post_api_request', {
        ...api,
        response: {
          model: 'gpt-4o-mini',
          choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: call, type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }] }, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 50 } },
        },
      });
      push('pre_tool_call', { ...ids, api_request_id: api.api_request_id, tool_call_id: call, tool_name: 'lookup', args: { q: 1 } });
      push('post_tool_call', { ...ids, api_request_id: api.api_request_id, tool_call_id: call, tool_name: 'lookup', args: { q: 1 }, result: 'ok', status: 'ok' });
    }
    for (let p = 0; p < padding; p++) push('pre_approval_request', { ...ids, command: 'ls', surface: 'cli' });
    push('post_llm_call', { ...ids, assistant_response: 'done' });
    push('on_session_end', { ...ids, completed: true });
    push('on_session_finalize', { session_id: ids.session_id, reason: 'cli_exit' });
    push('on_session_reset', { session_id: `s-${s}-after`, reason: 'new' });
  }
  if (chunk.length > 0) writeSync(fd, chunk.join('\n') + '\n');
  closeSync(fd);
  return lines;
}
