/**
 * A minimal agent host wired to nemo-relay-hooks: a `HookRegistry`, the
 * NeMo Relay plugin writing ATOF and ATIF files (its `redact` hook keeps a
 * secret out of them), request middleware that rewrites a secret in tool
 * arguments before the tool gets them, execution middleware that times the
 * real tool call, and a hook recorder so the run can be replayed later.
 *
 *   node examples/host.mjs [out-dir]
 *   bun examples/host.mjs [out-dir]
 *   deno run -A examples/host.mjs [out-dir]
 *
 * It imports the package by name, as an application does (inside this
 * repository, after `npm install`, the name resolves to the package itself).
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHookRecorder, createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { TurnIds } from 'nemo-relay-hooks/hooks';
import { validateAtif } from 'nemo-relay-hooks/formats';

const out = process.argv[2] ?? mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-host-'));

// A secret in tool arguments: the model's request carries it (its tool call, in the LLM response), so the
// trajectory would record it wherever it comes from. The plugin's `redact` hook sees every event before any
// output does; this one replaces each `token` field, in the tool calls' JSON text too.
const TOKEN_LEFT_OUT = '[redacted]';
function withoutTokens(value) {
  if (typeof value === 'string') {
    if (!value.includes('"token"')) return value;
    try {
      return JSON.stringify(withoutTokens(JSON.parse(value)));
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(withoutTokens);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, key === 'token' ? TOKEN_LEFT_OUT : withoutTokens(field)]));
}

// 1. The registry the host emits on, and the plugin that records into NeMo Relay.
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({
  redact: (event) => ({ data: withoutTokens(event.data) }),
  backend: 'auto', // native on Node when nemo-relay-node loads, the in-memory relay elsewhere
  settings: {
    atofEnabled: true,
    atofOutputDirectory: path.join(out, 'atof'),
    atifEnabled: true,
    atifOutputDirectory: path.join(out, 'atif'),
    atifAgentName: 'Example Host',
  },
});
plugin.register(hooks);
// Optional: keep the raw hook stream too (`nemo-relay-hooks replay` reads it). It holds the payloads as emitted
// (no redaction applies to it): the model's response with its token. Keep it where you keep raw prompts.
const recorder = createHookRecorder(hooks, path.join(out, 'hooks.jsonl'));

// 2. Middleware: rewrite tool arguments before the tool and the hooks get them (the ATOF tool span records
// these; the trajectory's tool calls are the model's request, which the `redact` hook above cleans), and wrap
// the real call.
hooks.use('tool_request', ({ args }) => {
  if (typeof args.token !== 'string') return undefined;
  return { args: { ...args, token: TOKEN_LEFT_OUT }, source: 'example', reason: 'the clock needs no token' };
});
hooks.use('tool_execution', async (payload, next) => {
  const started = performance.now();
  try {
    return await next();
  } finally {
    console.log(`  ${payload.tool_name} took ${(performance.now() - started).toFixed(1)} ms`);
  }
});

// 3. One turn of a pretend agent loop.
const sessionId = 'host-example-session';
hooks.emit('on_session_start', { session_id: sessionId, model: 'gpt-4o-mini', platform: 'cli' });
const turn = new TurnIds({ sessionId });
hooks.emit('pre_llm_call', () => ({ ...turn, user_message: 'What time is it in UTC?', is_first_turn: true, model: 'gpt-4o-mini' }));

const api = turn.nextApiCall(); // minted once; retries would share it
const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What time is it in UTC?' }] };
hooks.emit('pre_api_request', () => ({ ...turn, ...api, retry_count: 0, provider: 'openai', model: 'gpt-4o-mini', request: { body } }));
const toolCall = { id: 'call_clock_1', type: 'function', function: { name: 'clock', arguments: '{"zone":"UTC","token":"s3cret"}' } };
const response = {
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [toolCall] }, finish_reason: 'tool_calls' }],
  usage: { prompt_tokens: 42, completion_tokens: 9, total_tokens: 51 },
};
hooks.emit('post_api_request', () => ({ ...turn, ...api, provider: 'openai', model: 'gpt-4o-mini', response, usage: response.usage }));

const ids = { ...turn, api_request_id: api.api_request_id, tool_call_id: toolCall.id };
const hostArgs = { zone: 'UTC', token: 's3cret' };
const args = hooks.applyRequest('tool_request', hostArgs, { ...ids, tool_name: 'clock' });
hooks.emit('pre_tool_call', () => ({ ...ids, tool_name: 'clock', args, middleware_trace: hooks.requestTrace(args) }));
const result = await hooks.execute('tool_execution', { ...ids, tool_name: 'clock', args }, () => new Date().toISOString());
hooks.emit('post_tool_call', () => ({ ...ids, tool_name: 'clock', args, result, status: 'ok' }));

hooks.emit('post_llm_call', () => ({ ...turn, assistant_response: `It is ${String(result)}.` }));
hooks.emit('on_session_end', () => ({ ...turn, completed: true }));
hooks.emit('on_session_finalize', { session_id: sessionId, reason: 'cli_exit' });

// 4. Write everything and check it.
recorder.close();
await plugin.shutdown();
console.log(`backend: ${plugin.status().backend.kind}`);
for (const file of readdirSync(path.join(out, 'atif'))) {
  const target = path.join(out, 'atif', file);
  const errors = validateAtif(JSON.parse(readFileSync(target, 'utf8')));
  console.log(`${target}: ${errors.length === 0 ? 'valid ATIF' : `${errors.length} errors`}`);
}
console.log(`hooks recorded to ${recorder.path} (${recorder.lines} lines)`);
