/**
 * A seeded random differential for the OTLP mappings of LLM calls: requests
 * and responses of the three provider shapes (Chat Completions, Anthropic
 * Messages, Responses) built from the pieces hosts and frameworks send and
 * some they should not (every role, content as text, null, a list of typed
 * parts or blocks, a part of the other shape's kind, media parts, tool calls
 * and results, reasoning, tool definitions, fields of the wrong type in
 * requests and now and then in responses), sent by the plugin on the memory
 * relay and on native 0.9.2 to a loopback receiver as gen_ai, openinference
 * and full spans, and compared after ids become labels. Native's decodes
 * reject a whole request or response for a field of the wrong type; the
 * first run of this probe found 125 differences in 120 seeds, and wider runs
 * (seeds 121-1000) more: all now read as native reads them.
 * With `gemini`, Gemini `generateContent` requests and answers too
 * (`contents`, `systemInstruction`, `tools`, `generationConfig`;
 * `candidates`, `usageMetadata`), read by native's Gemini codec
 * (src/formats/gemini.ts).
 */

import type { HookLine } from '../fixtures/streams/script.ts';
import type { Receiver } from './otlp-receiver.ts';
import { Draw, randomText, randomValue } from './random-redaction.ts';
import { otlpDifferences } from './random-tool-values.ts';

type D = Draw;
const text = (d: D) => (d.chance(0.3) ? d.pick(['', '  ', ' a ', '\u0085b', '-0', 'null', '{"x":1}', '[" a "]']) : randomText(d, d.int(0, 3)));
function chatContent(d: D): unknown {
  const r = d.next();
  if (r < 0.5) return text(d);
  if (r < 0.6) return null;
  if (r < 0.9) return Array.from({ length: d.int(0, 3) }, () => d.pick([
    () => ({ type: 'text', text: text(d) }),
    () => ({ type: 'image_url', image_url: { url: 'https://x/y.png' } }),
    () => ({ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }),
    () => ({ type: 'refusal', refusal: text(d) }),
    () => ({ type: d.pick(['file', 'weird']), x: 1 }),
    () => text(d),
    // A block of the Messages shape, which the Chat decode does not model.
    () => anthropicBlock(d),
  ])());
  return randomValue(d, 1);
}
function chatMessage(d: D): unknown {
  const role = d.pick(['system', 'user', 'assistant', 'tool', 'developer', 'function', 'critic']);
  const m: Record<string, unknown> = { role, content: chatContent(d) };
  if (role === 'assistant' && d.chance(0.4)) m.tool_calls = Array.from({ length: d.int(1, 2) }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: d.pick(['f', 'g', '']), arguments: d.chance(0.7) ? JSON.stringify(randomValue(d, 1)) : text(d) } }));
  if (role === 'tool') m.tool_call_id = d.pick(['c0', 'c1', '']);
  if (d.chance(0.15)) m.name = d.pick(['bob', '', 'f']);
  if (d.chance(0.05)) delete m.content;
  if (d.chance(0.05)) m.extra_field = 1;
  return m;
}
function anthropicBlock(d: D): unknown {
  return d.pick([
    () => ({ type: 'text', text: text(d) }),
    () => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } }),
    () => ({ type: 'tool_use', id: 'tu1', name: d.pick(['f', 'g']), input: randomValue(d, 1) }),
    () => ({ type: 'tool_result', tool_use_id: 'tu1', content: d.chance(0.5) ? text(d) : [{ type: 'text', text: text(d) }], ...(d.chance(0.2) ? { is_error: true } : {}) }),
    () => ({ type: 'thinking', thinking: text(d), signature: 's' }),
    () => ({ type: 'redacted_thinking', data: 'x' }),
    () => ({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } }),
    // A part of the Chat shape, which the Messages decode does not model.
    () => ({ type: 'refusal', refusal: text(d) }),
  ])();
}
function anthropicMessage(d: D): unknown {
  return { role: d.pick(['user', 'assistant', 'system']), content: d.chance(0.4) ? text(d) : Array.from({ length: d.int(0, 3) }, () => anthropicBlock(d)) };
}
function responsesItem(d: D): unknown {
  return d.pick([
    () => ({ role: d.pick(['user', 'system', 'developer', 'assistant']), content: d.chance(0.5) ? text(d) : [{ type: d.pick(['input_text', 'output_text', 'input_image', 'refusal']), text: text(d), ...(d.chance(0.3) ? { image_url: 'u' } : {}) }] }),
    () => ({ type: 'message', role: d.pick(['user', 'assistant']), content: [{ type: d.pick(['input_text', 'output_text']), text: text(d) }] }),
    () => ({ type: 'function_call', call_id: 'fc1', name: 'f', arguments: d.chance(0.7) ? JSON.stringify(randomValue(d, 1)) : text(d) }),
    () => ({ type: 'function_call_output', call_id: 'fc1', output: text(d) }),
    () => ({ type: 'reasoning', id: 'rs1', summary: [{ type: 'summary_text', text: text(d) }] }),
  ])();
}
function tools(d: D, shape: string): unknown[] {
  return Array.from({ length: d.int(0, 2) }, () => {
    if (shape === 'chat') return d.chance(0.8) ? { type: 'function', function: { name: d.pick(['f', 'g']), ...(d.chance(0.6) ? { description: text(d) } : {}), ...(d.chance(0.7) ? { parameters: { type: 'object', properties: { x: { type: 'string' } } } } : {}) } } : { type: d.pick(['web_search', 'code_interpreter']) };
    if (shape === 'anthropic') return d.chance(0.8) ? { name: 'f', ...(d.chance(0.5) ? { description: text(d) } : {}), input_schema: { type: 'object' } } : { type: 'web_search_20250305', name: 'web_search' };
    return d.chance(0.8) ? { type: 'function', name: 'f', ...(d.chance(0.5) ? { description: text(d) } : {}), parameters: { type: 'object' } } : { type: d.pick(['web_search_preview', 'file_search']) };
  });
}
/** Now and then a top-level request field of the wrong type (a count that is negative, fractional or past u32, text for a flag, ...). */
function oddParameter(d: D, body: Record<string, unknown>): Record<string, unknown> {
  if (d.chance(0.1)) body[d.pick(['model', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'stop_sequences', 'n', 'seed', 'stream', 'top_k', 'metadata', 'user', 'tool_choice', 'thinking', 'modalities', 'functions'])] = d.pick([-1, 1.5, 2 ** 40, 'x', true, null, [], ['a', 5], {}]);
  return body;
}
function request(d: D, shape: string): Record<string, unknown> {
  return oddParameter(d, wellFormedRequest(d, shape));
}
function wellFormedRequest(d: D, shape: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: d.pick(['gpt-4o', 'claude-sonnet-4-5', 'x']) };
  if (shape === 'chat') body.messages = Array.from({ length: d.int(0, 5) }, () => chatMessage(d));
  else if (shape === 'anthropic') {
    body.messages = Array.from({ length: d.int(0, 4) }, () => anthropicMessage(d));
    if (d.chance(0.5)) body.system = d.chance(0.5) ? text(d) : [{ type: 'text', text: text(d) }];
    body.max_tokens = d.pick([256, 1, 0]);
  } else {
    body.input = d.chance(0.3) ? text(d) : Array.from({ length: d.int(0, 4) }, () => responsesItem(d));
    if (d.chance(0.4)) body.instructions = text(d);
  }
  const t = tools(d, shape);
  if (t.length > 0) body.tools = t;
  for (const [k, v] of [['temperature', d.pick([0, 0.7, 1, 2])], ['top_p', 0.9], ['stop', d.pick(['x', ['a', 'b']])], ['stream', true], ['seed', 7], ['n', d.pick([1, 2])], ['max_completion_tokens', 100], ['tool_choice', 'auto']] as const) if (d.chance(0.2)) body[k] = v;
  return body;
}
/** Now and then a response field of the wrong type or left out, as a host's own or a proxy's answer may have one. */
function oddResponse(d: D, shape: string, response: Record<string, any>): unknown {
  if (!d.chance(0.15)) return response;
  const odd = () => d.pick([5, null, undefined, [], {}]);
  const set = (object: Record<string, unknown> | undefined, key: string) => {
    if (object === undefined) return;
    const value = odd();
    if (value === undefined) delete object[key];
    else object[key] = value;
  };
  const message = response.choices?.[0]?.message;
  const call = message?.tool_calls?.[0];
  if (shape === 'chat') {
    const [object, key] = d.pick([[response, 'id'], [response, 'model'], [response.choices[0], 'finish_reason'], [message, 'content'], [message, 'tool_calls'], [call, 'id'], [call, 'function'], [call?.function, 'name'], [call?.function, 'arguments']] as const);
    set(object, key);
  } else if (shape === 'anthropic') {
    const block = response.content.find((b: Record<string, unknown>) => b.type === 'tool_use');
    const [object, key] = d.pick([[response, 'id'], [response, 'model'], [response, 'role'], [response, 'stop_reason'], [response, 'stop_sequence'], [block, 'id'], [block, 'name']] as const);
    set(object, key);
  } else set(response, d.pick(['id', 'model', 'status']));
  return response;
}
function response(d: D, shape: string): unknown {
  return oddResponse(d, shape, wellFormedResponse(d, shape) as Record<string, any>);
}
function wellFormedResponse(d: D, shape: string): unknown {
  const usage = shape === 'anthropic' ? { input_tokens: d.int(0, 50), output_tokens: d.int(0, 50), ...(d.chance(0.3) ? { cache_read_input_tokens: 3 } : {}) } : shape === 'chat' ? { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } : { input_tokens: 5, output_tokens: 2, total_tokens: 7 };
  if (shape === 'chat') return { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: d.chance(0.8) ? text(d) : null, ...(d.chance(0.3) ? { tool_calls: [{ id: 'c0', type: 'function', function: { name: 'f', arguments: JSON.stringify(randomValue(d, 1)) } }] } : {}), ...(d.chance(0.1) ? { refusal: 'no' } : {}) }, finish_reason: d.pick(['stop', 'tool_calls', 'length', 'content_filter']) }], usage };
  if (shape === 'anthropic') return { id: 'm1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: Array.from({ length: d.int(0, 3) }, () => anthropicBlock(d)), stop_reason: d.pick(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', null]), stop_sequence: null, usage };
  return { id: 'r1', object: 'response', created_at: 1, status: d.pick(['completed', 'incomplete']), model: 'gpt-4o', output: Array.from({ length: d.int(0, 3) }, () => d.pick([() => ({ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: d.pick(['output_text', 'refusal']), text: text(d), refusal: 'r', annotations: [] }] }), () => ({ type: 'function_call', id: 'fc', call_id: 'call_1', name: 'f', arguments: JSON.stringify(randomValue(d, 1)) }), () => ({ type: 'reasoning', id: 'rs', summary: [] })])()), usage };
}
/** Now and then a value of the wrong type in place of `value` (what native's decode rejects a whole request or answer for). */
const typo = (d: D, value: unknown, wrong: readonly unknown[]): unknown => (d.chance(0.03) ? d.pick(wrong) : value);
function geminiPart(d: D, calls: boolean, results: boolean): unknown {
  return d.pick([
    () => ({ text: typo(d, text(d), [5, null]) }),
    () => ({ text: text(d), thought: true }),
    () => ({ text: text(d), thoughtSignature: 'sig' }),
    () => (calls ? { functionCall: { ...(d.chance(0.2) ? { id: d.pick(['c1', 'c2', 'f']) } : {}), name: typo(d, d.pick(['f', 'g']), ['', 5]), ...(d.chance(0.8) ? { args: typo(d, randomValue(d, 1) ?? {}, ['{"x":1}', null, [1]]) } : {}) } } : { text: text(d) }),
    () => (results ? { functionResponse: { ...(d.chance(0.2) ? { id: 'c1' } : {}), name: d.pick(['f', 'g']), response: typo(d, { output: randomValue(d, 1) }, ['ok', null]) } } : { text: text(d) }),
    () => ({ inlineData: { mimeType: 'image/png', data: 'AAA' } }),
    () => ({ fileData: { mimeType: 'application/pdf', fileUri: 'gs://b/f' } }),
    () => ({ executableCode: { language: 'PYTHON', code: 'print(1)' } }),
    () => d.pick([{}, { foo: 1 }, { text: 'a', functionCall: { name: 'f', args: {} } }]),
  ])();
}
/** The parts of one Gemini turn: a `user` turn of function results now and then (all its parts), else mixed parts. */
function geminiParts(d: D, role: string): unknown[] {
  if (role === 'user' && d.chance(0.25)) return Array.from({ length: d.int(1, 2) }, (_, i) => ({ functionResponse: { name: d.chance(0.8) ? ['f', 'g'][i] : 'f', response: { output: randomValue(d, 1) } } }));
  return Array.from({ length: d.int(0, 3) }, () => geminiPart(d, role !== 'user', false));
}
function geminiRequest(d: D): Record<string, unknown> {
  const body: Record<string, unknown> = { model: typo(d, d.pick(['gemini-2.5-pro', 'gemini-2.5-flash']), [5]) };
  if (d.chance(0.1)) delete body.model;
  body.contents = typo(
    d,
    Array.from({ length: d.int(0, 4) }, () => {
      const role = typo(d, d.pick(['user', 'model', undefined]), ['assistant', 'system', null]) as string | undefined;
      return { ...(role === undefined ? {} : { role }), parts: typo(d, geminiParts(d, role ?? 'user'), ['x', undefined]) };
    }),
    ['hello', null],
  );
  if (d.chance(0.4)) body.systemInstruction = typo(d, { ...(d.chance(0.3) ? { role: 'system' } : {}), parts: Array.from({ length: d.int(0, 2) }, () => ({ text: text(d), ...(d.chance(0.1) ? { thought: true } : {}) })) }, ['be nice', null, { parts: [{ inlineData: {} }] }]);
  if (d.chance(0.4)) {
    body.tools = typo(
      d,
      Array.from({ length: d.int(0, 2) }, () => {
        const tool: Record<string, unknown> = {};
        if (d.chance(0.7)) tool.functionDeclarations = Array.from({ length: d.int(0, 2) }, () => ({ name: typo(d, d.pick(['f', 'g']), ['']), ...(d.chance(0.5) ? { description: typo(d, text(d), [5]) } : {}), ...(d.chance(0.6) ? { parameters: { type: 'OBJECT', properties: { x: { type: 'STRING' } } } } : {}), ...(d.chance(0.1) ? { response: { type: 'STRING' } } : {}) }));
        if (d.chance(0.3)) tool[d.pick(['googleSearch', 'codeExecution', 'urlContext'])] = {};
        return tool;
      }),
      [{ functionDeclarations: [] }, null],
    );
  }
  if (d.chance(0.4)) {
    const config: Record<string, unknown> = {};
    for (const [k, v] of [['temperature', typo(d, d.pick([0, 0.7, 1, 2]), ['hot', null])], ['topP', 0.9], ['topK', 40], ['maxOutputTokens', typo(d, d.pick([100, 0]), [1.5, '9'])], ['stopSequences', typo(d, ['x', 'y'], ['x'])], ['candidateCount', 1], ['seed', 7]] as const) if (d.chance(0.35)) config[k] = v;
    body.generationConfig = typo(d, config, [5]);
  }
  return body;
}
function geminiAnswer(d: D): unknown {
  const usage: Record<string, unknown> = { promptTokenCount: typo(d, d.int(0, 50), [1.5, '10', -1]), candidatesTokenCount: d.int(0, 50) };
  for (const key of ['totalTokenCount', 'thoughtsTokenCount', 'cachedContentTokenCount', 'toolUsePromptTokenCount']) if (d.chance(0.3)) usage[key] = d.int(0, 20);
  const candidate = (): unknown => ({
    ...(d.chance(0.9) ? { content: typo(d, { role: 'model', parts: Array.from({ length: d.int(0, 3) }, () => geminiPart(d, true, d.chance(0.05))) }, ['x', null]) } : {}),
    ...(d.chance(0.9) ? { finishReason: typo(d, d.pick(['STOP', 'STOP', 'MAX_TOKENS', 'SAFETY', 'RECITATION', 'OTHER', 'MALFORMED_FUNCTION_CALL', 'FINISH_REASON_UNSPECIFIED', 'stop']), [3]) } : {}),
    index: 0,
  });
  const response: Record<string, unknown> = { candidates: Array.from({ length: d.pick([1, 1, 1, 0, 2]) }, candidate) };
  if (d.chance(0.9)) response.usageMetadata = typo(d, usage, [5]);
  if (d.chance(0.8)) response.modelVersion = typo(d, 'gemini-2.5-flash-001', [5]);
  if (d.chance(0.8)) response.responseId = 'resp-1';
  if (d.chance(0.1)) response.usage = d.pick([{ prompt_tokens: 3, completion_tokens: 4 }, { promptTokenCount: 20, candidatesTokenCount: 9 }]);
  if (d.chance(0.05)) response.model = 'other-model';
  return response;
}

/**
 * The hook lines of one seed: a session of 1-3 LLM calls, each of a random
 * provider shape. `gemini`: Gemini `generateContent` requests and answers
 * among them (a shape drawn only with this set, so the other seeds draw as
 * before).
 */
export function llmShapeLines(seed: number, options: { gemini?: boolean } = {}): HookLine[] {
  const d = new Draw(seed);
  const out: unknown[] = [{ hook: 'on_session_start', payload: { session_id: 's1' } }];
  for (let i = 0; i < d.int(1, 3); i++) {
    const shape = options.gemini === true && d.chance(0.6) ? 'gemini' : d.pick(['chat', 'anthropic', 'responses']);
    const provider = shape === 'anthropic' ? 'anthropic' : shape === 'gemini' ? d.pick(['gemini', 'google']) : 'openai';
    const api_mode = shape === 'chat' || shape === 'gemini' ? 'chat_completions' : shape === 'anthropic' ? 'anthropic_messages' : 'codex_responses';
    const b = { session_id: 's1', turn_id: `t${i}`, api_request_id: `a${i}`, provider, api_mode, model: 'm' };
    out.push({ hook: 'pre_llm_call', payload: { session_id: 's1', turn_id: `t${i}`, user_message: 'hi' } });
    out.push({ hook: 'pre_api_request', payload: { ...b, request: { method: 'POST', headers: {}, body: shape === 'gemini' ? geminiRequest(d) : request(d, shape) } } });
    out.push({ hook: 'post_api_request', payload: { ...b, response: shape === 'gemini' ? geminiAnswer(d) : response(d, shape) } });
    out.push({ hook: 'post_llm_call', payload: { session_id: 's1', turn_id: `t${i}`, assistant_response: 'ok' } });
  }
  out.push({ hook: 'on_session_finalize', payload: { session_id: 's1' } });
  return out as HookLine[];
}

/** Every difference of one seed, one per endpoint type that differs, each naming the seed (and the seed's requests). */
export async function compareLlmShapeSeed(seed: number, receiver: Receiver, options: { gemini?: boolean } = {}): Promise<string[]> {
  const lines = llmShapeLines(seed, options);
  const found = await otlpDifferences(seed, lines, receiver, ['gen_ai', 'openinference', 'full']);
  if (found.length > 0) found.push(`requests of seed ${seed}: ${JSON.stringify(lines.filter((line) => line.hook === 'pre_api_request').map((line) => (line.payload as { request: { body: unknown } }).request.body)).slice(0, 2000)}`);
  if (found.length > 0 && options.gemini === true) found.push(`answers of seed ${seed}: ${JSON.stringify(lines.filter((line) => line.hook === 'post_api_request').map((line) => (line.payload as { response: unknown }).response)).slice(0, 2000)}`);
  return found;
}
