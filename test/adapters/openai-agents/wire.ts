// The OpenAI API for the Agents SDK's own models, offline: a fake `fetch`
// the real `openai` client (and OpenAIResponsesModel /
// OpenAIChatCompletionsModel on top of it) talks to as to api.openai.com.
// Replies are scripted per requested model, so several agents can share one
// client, and answered in the Responses or Chat Completions JSON or SSE
// shape (test/support/provider-wire.ts) the request asks for; every request
// body is kept for the checks.
import { setDefaultOpenAIClient } from '@openai/agents';
import OpenAI from 'openai';
import { chatCompletion, chatCompletionStream, openAiError, openAiResponse, openAiResponseStream, wireResponse, type ChatToolCall, type ChatUsage, type WebSearch } from '../../support/provider-wire.ts';

export interface Reply {
  text?: string;
  calls?: ChatToolCall[];
  reasoning?: string | string[];
  /** The reasoning item's `encrypted_content` (a `store: false` request that includes it). */
  encryptedReasoning?: string;
  /** Web searches OpenAI ran inside the call (Responses `web_search_call` items). */
  webSearches?: WebSearch[];
  /** Other hosted tools' Responses items (test/support/provider-wire.ts: `fileSearchCallItem`, `mcpCallItem`, ...). */
  hostedItems?: Array<Record<string, unknown>>;
  /** Calls of the tools the program runs (test/support/provider-wire.ts: `shellCallItem`, `applyPatchCallItem`, `computerCallItem`). */
  localCalls?: Array<Record<string, unknown>>;
  usage: { input: number; output: number; cached?: number; reasoning?: number };
  /** The model the API says answered (default: the requested alias plus a date). */
  model?: string;
}

export interface Failure {
  status: number;
  message: string;
}

export type Scripted = Reply | Failure;

export interface SeenRequest {
  api: 'responses' | 'chat';
  body: Record<string, any>;
}

const isFailure = (step: Scripted): step is Failure => 'status' in step;

/** The dated snapshot a real API reports for an alias. */
export const dated = (alias: string): string => `${alias}-2025-04-14`;

export class FakeOpenAI {
  readonly requests: SeenRequest[] = [];
  #script = new Map<string, Scripted[]>();
  #n = 0;

  constructor(script: Record<string, Scripted[]> = {}) {
    this.load(script);
  }

  /**
   * A new script (and no requests seen). The SDK's default provider keeps
   * the first default client it gets, so a file keeps one fake and reloads it.
   */
  load(script: Record<string, Scripted[]>): this {
    this.#script = new Map(Object.entries(script).map(([model, steps]) => [model, [...steps]]));
    this.requests.length = 0;
    return this;
  }

  /** An `openai` client on this fake; its own retries are off, so every attempt reaches the runner. */
  client(): OpenAI {
    return clientOn(this.fetch);
  }

  readonly fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const href = typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
    const body = JSON.parse(String(init?.body ?? '{}')) as Record<string, any>;
    const api = href.endsWith('/responses') ? 'responses' : href.endsWith('/chat/completions') ? 'chat' : undefined;
    this.#n += 1;
    const requestId = `req_${this.#n}`;
    if (api === undefined) return wireResponse(openAiError(404, 'invalid_request_error', `no route ${href}`), requestId);
    this.requests.push({ api, body });
    const step = this.#script.get(body.model)?.shift();
    if (step === undefined) return wireResponse(openAiError(500, 'server_error', `no scripted reply for ${body.model}`), requestId);
    if (isFailure(step)) return wireResponse(openAiError(step.status, 'server_error', step.message), requestId);
    const model = step.model ?? dated(body.model);
    const usage: ChatUsage = { prompt_tokens: step.usage.input, completion_tokens: step.usage.output, cached: step.usage.cached, reasoning: step.usage.reasoning };
    const toolCalls = step.calls ?? [];
    if (api === 'responses') {
      const options = { id: `resp_${this.#n}`, model, text: step.text, toolCalls, reasoning: step.reasoning, encryptedReasoning: step.encryptedReasoning, webSearches: step.webSearches, hostedItems: step.hostedItems, localCalls: step.localCalls, usage };
      return wireResponse(body.stream === true ? openAiResponseStream(options) : openAiResponse(options), requestId);
    }
    const options = { id: `chatcmpl-${this.#n}`, model, content: step.text ?? null, toolCalls, usage };
    return wireResponse(body.stream === true ? chatCompletionStream(options) : chatCompletion(options), requestId);
  };
}

const clientOn = (fetch: FakeOpenAI['fetch']): OpenAI => new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch, maxRetries: 0 });

let defaultFake: FakeOpenAI | undefined;

/**
 * `api` behind the SDK's default client, as a program's
 * `setDefaultOpenAIClient(new OpenAI(...))` sets it. The SDK's default runner
 * keeps the first default client it is given for the life of the process, so
 * the files sharing a process share one real `openai` client whose fetch goes
 * to the fake the running file made the default (files in a process run one
 * after the other).
 */
export function useAsDefaultClient(api: FakeOpenAI): void {
  if (defaultFake === undefined) {
    setDefaultOpenAIClient(clientOn((url, init) => defaultFake!.fetch(url, init)));
  }
  defaultFake = api;
}
