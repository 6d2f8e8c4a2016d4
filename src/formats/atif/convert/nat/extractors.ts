/**
 * The reference converter's payload readers, chosen per event by its
 * `data_schema`: OpenAI chat completions (also the default, for events
 * without a schema or with one not listed here), Anthropic messages and
 * Gemini generateContent. Each reads the input messages of an LLM start and
 * the text and tool calls of an LLM end.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../../shared/json.ts';
import { asObject, parseJson } from '../../../../shared/json.ts';
import { asString } from '../../../../shared/text.ts';

interface InputMessage {
  role: string;
  /** Text, or content parts passed through unchanged. */
  content: Json;
}

interface OutputToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Json;
}

interface LlmOutput {
  text: string;
  toolCalls: OutputToolCall[];
}

export interface LlmExtractor {
  inputMessages(data: Json | undefined): InputMessage[];
  output(data: Json | undefined): LlmOutput;
}

const asArray = (value: Json | undefined): Json[] => (Array.isArray(value) ? value : []);

/** Tool arguments as an object: a JSON string is parsed, text that is not JSON is kept as `{raw}`. */
function toolArguments(value: Json | undefined): Json {
  if (typeof value !== 'string') return value ?? {};
  try {
    return parseJson(value) as Json;
  } catch {
    return { raw: value };
  }
}

/** The text of typed blocks (`{type: "text", text}`), concatenated; tool-use and tool-result echoes carry none. */
function blockText(content: Json | undefined): string | undefined {
  if (typeof content === 'string') return content;
  const texts = asArray(content)
    .map((block) => asObject(block))
    .filter((block) => block !== undefined && block.type === 'text' && typeof block.text === 'string')
    .map((block) => (block as JsonObject).text as string);
  return texts.length === 0 ? undefined : texts.join('');
}

const openAiChat: LlmExtractor = {
  inputMessages(data) {
    const object = asObject(data);
    const messages = asArray(asObject(object?.content)?.messages ?? object?.messages);
    return messages.flatMap((message) => {
      const entry = asObject(message);
      const role = asString(entry?.role);
      const content = entry?.content;
      if (role === undefined || content === undefined || content === null || content === '') return [];
      return [{ role, content }];
    });
  },
  output(data) {
    const object = asObject(data);
    const message = asObject(asObject(asArray(object?.choices)[0])?.message) ?? object;
    const calls = asArray(message?.tool_calls).flatMap((call) => {
      const entry = asObject(call);
      const fn = asObject(entry?.function);
      const id = asString(entry?.id);
      const name = asString(entry?.name) ?? asString(fn?.name);
      if (id === undefined || name === undefined) return [];
      return [{ tool_call_id: id, function_name: name, arguments: toolArguments(entry?.arguments ?? fn?.arguments) }];
    });
    return { text: asString(message?.content) ?? '', toolCalls: calls };
  },
};

const anthropicMessages: LlmExtractor = {
  inputMessages(data) {
    const object = asObject(data);
    const out: InputMessage[] = [];
    const system = blockText(object?.system);
    if (system !== undefined && system !== '') out.push({ role: 'system', content: system });
    for (const message of asArray(object?.messages)) {
      const entry = asObject(message);
      const role = asString(entry?.role);
      const text = blockText(entry?.content);
      // A user turn made only of tool_result blocks echoes a tool result: no step.
      if (role !== undefined && text !== undefined && text !== '') out.push({ role, content: text });
    }
    return out;
  },
  output(data) {
    const blocks = asArray(asObject(data)?.content);
    const toolCalls = blocks.flatMap((block) => {
      const entry = asObject(block);
      if (entry?.type !== 'tool_use' || typeof entry.id !== 'string' || typeof entry.name !== 'string') return [];
      return [{ tool_call_id: entry.id, function_name: entry.name, arguments: toolArguments(entry.input) }];
    });
    return { text: blockText(blocks) ?? '', toolCalls };
  },
};

const GEMINI_ROLES: Record<string, string> = { model: 'assistant' };

function partsText(parts: Json | undefined): string | undefined {
  const texts = asArray(parts)
    .map((part) => asString(asObject(part)?.text))
    .filter((text): text is string => text !== undefined);
  return texts.length === 0 ? undefined : texts.join('');
}

const geminiGenerateContent: LlmExtractor = {
  inputMessages(data) {
    const object = asObject(data);
    const out: InputMessage[] = [];
    const system = partsText(asObject(object?.systemInstruction ?? object?.system_instruction)?.parts);
    if (system !== undefined && system !== '') out.push({ role: 'system', content: system });
    for (const item of asArray(object?.contents)) {
      const entry = asObject(item);
      const role = asString(entry?.role) ?? 'user';
      const text = partsText(entry?.parts);
      if (text !== undefined && text !== '') out.push({ role: GEMINI_ROLES[role] ?? role, content: text });
    }
    return out;
  },
  output(data) {
    const parts = asArray(asObject(asObject(asArray(asObject(data)?.candidates)[0])?.content)?.parts);
    // Gemini gives function calls no id: `name__n`, n counting the calls of this response from 1.
    let ordinal = 0;
    const toolCalls = parts.flatMap((part) => {
      const call = asObject(asObject(part)?.functionCall);
      const name = asString(call?.name);
      if (name === undefined) return [];
      ordinal += 1;
      return [{ tool_call_id: `${name}__${ordinal}`, function_name: name, arguments: toolArguments(call?.args) }];
    });
    return { text: partsText(parts) ?? '', toolCalls };
  },
};

const EXTRACTORS: Record<string, LlmExtractor> = {
  'openai/chat-completions@1': openAiChat,
  'anthropic/messages@1': anthropicMessages,
  'gemini/generate-content@1': geminiGenerateContent,
};

/** The extractor for an event's `data_schema`; OpenAI chat completions when it names none we know. */
export function llmExtractor(schema: unknown): LlmExtractor {
  const object = typeof schema === 'object' && schema !== null ? (schema as { name?: unknown; version?: unknown }) : undefined;
  return EXTRACTORS[`${String(object?.name)}@${String(object?.version)}`] ?? openAiChat;
}
