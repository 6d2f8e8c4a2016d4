/**
 * One simulated agent step: the CPU work a host does around one LLM call and
 * one tool call, with the network replaced by canned responses.
 *
 * It is deliberately lean (no I/O, no tokenizer, a small conversation), so
 * the hook overhead measured against it is an upper bound for real hosts,
 * whose steps also wait hundreds of milliseconds on a provider.
 *
 * @module
 */

export interface AgentState {
  sessionId: string;
  model: string;
  messages: Record<string, unknown>[];
  lastUserMessage: string;
  lastRequest: Record<string, unknown> | null;
  lastRequestBytes: number;
}

/** The ids a host keeps per turn and call anyway (logs, retries), hooks or not. */
export interface StepIds {
  turnId: string;
  apiRequestId: string;
}

export function stepIds(state: AgentState, i: number): StepIds {
  const turnId = `${state.sessionId}:turn:${i}`;
  return { turnId, apiRequestId: `${turnId}:api:1` };
}

export interface StepResult {
  response: Record<string, unknown>;
  usage: Record<string, unknown>;
  toolCallId: string;
  toolName: string;
  toolArgs: Record<string, unknown>;
  toolResult: string;
  assistantText: string;
  resultChars: number;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'search_notes',
      description: 'Search the project notes for a phrase and return matching lines.',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file from the workspace.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

const NOTES = Array.from({ length: 40 }, (_, i) => `note ${i}: the build ${i % 3 === 0 ? 'passed' : 'failed'} on runner ${i % 7} after ${i * 13} seconds`).join('\n');

const WORDS = 'please check why the nightly build failed and summarise the runner logs for the team in two sentences'.split(' ');

export function createAgentState(sessionId = 'bench-session'): AgentState {
  return {
    sessionId,
    model: 'gpt-4o-mini',
    messages: [{ role: 'system', content: 'You are a careful coding agent. Use tools when they help, then answer briefly.' }],
    lastUserMessage: '',
    lastRequest: null,
    lastRequestBytes: 0,
  };
}

/** Runs one step and returns what the hooks of that step would carry. */
export function agentStep(state: AgentState, i: number, ids: StepIds): StepResult {
  const userMessage = `${WORDS[i % WORDS.length]} ${WORDS[(i + 5) % WORDS.length]} (step ${i})`;
  state.lastUserMessage = userMessage;
  state.messages.push({ role: 'user', content: userMessage });
  if (state.messages.length > 13) state.messages.splice(1, state.messages.length - 13);

  const request = { model: state.model, messages: state.messages, tools: TOOLS, temperature: 0.2, max_tokens: 512 };
  const body = JSON.stringify(request);
  state.lastRequest = request;
  state.lastRequestBytes = body.length;

  const toolCallId = `call_${ids.apiRequestId}`;
  const rawResponse = `{"id":"chatcmpl-${i}","model":"${state.model}","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"${toolCallId}","type":"function","function":{"name":"search_notes","arguments":"{\\"query\\":\\"runner ${i % 7}\\",\\"limit\\":3}"}}]}}],"usage":{"prompt_tokens":${body.length >> 2},"completion_tokens":18,"total_tokens":${(body.length >> 2) + 18}}}`;
  const response = JSON.parse(rawResponse) as {
    choices: { message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[];
    usage: Record<string, unknown>;
  };
  const call = response.choices[0]!.message.tool_calls[0]!;
  const toolArgs = JSON.parse(call.function.arguments) as { query: string; limit: number };

  const hits: string[] = [];
  for (const line of NOTES.split('\n')) {
    if (line.includes(toolArgs.query)) {
      hits.push(line);
      if (hits.length >= toolArgs.limit) break;
    }
  }
  const toolResult = JSON.stringify({ hits, count: hits.length });
  state.messages.push({ role: 'assistant', content: null, tool_calls: [call] });
  state.messages.push({ role: 'tool', tool_call_id: call.id, content: toolResult });
  const assistantText = `Found ${hits.length} matching notes for ${toolArgs.query}.`;
  state.messages.push({ role: 'assistant', content: assistantText });

  return {
    response: response as unknown as Record<string, unknown>,
    usage: response.usage,
    toolCallId: call.id,
    toolName: call.function.name,
    toolArgs,
    toolResult,
    assistantText,
    resultChars: toolResult.length + assistantText.length,
  };
}
