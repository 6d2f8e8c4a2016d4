// What the Claude Agent SDK tests hold a trajectory to, read from the loopback
// Anthropic API (what the model was sent), the recorded hooks and the SDK's
// own result messages: shared by the tests that run the real CLI.
import { rmSync } from 'node:fs';
import type { AtifDoc, Recorded } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type AnthropicMock, type MockReply, type MockRequest } from './anthropic-mock.ts';

/** The loopback API answering with `script`, and the CLI's offline environment; `cleanups` gets what closes and removes them. */
export async function offlineApi(script: (request: MockRequest) => MockReply, cleanups: Array<() => Promise<void> | void>): Promise<{ mock: AnthropicMock; env: Record<string, string>; home: string }> {
  const mock = await startAnthropicMock(script);
  const offline = offlineClaudeEnv(mock.url);
  cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
  return { mock, env: offline.env, home: offline.home };
}

/** The CLI's own request for a compaction's summary (`/compact`, or the CLI's when the context nears its window). */
export function isSummary(request: MockRequest): boolean {
  return JSON.stringify(request.body.messages.at(-1)).includes('CRITICAL: Respond with TEXT ONLY');
}

/** Each turn end's `unattributed_usage` (undefined where it states none), in order. */
export function statedByTurn(log: Recorded['log']): unknown[] {
  return log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.unattributed_usage);
}

/** The tool results the model was sent, by tool_use_id: what each call's observation must say. */
export function toldTheModel(mock: AnthropicMock): Map<string, { content: string; is_error: boolean }> {
  return new Map(mock.requests.flatMap((request) => request.toolResults.map((result) => [result.tool_use_id, result] as const)));
}

/** Each tool call's approvals, as [hook, choice, decided_by, description], in the order they were recorded. */
export function approvalsOf(log: Recorded['log'], id: string): unknown[][] {
  return log
    .filter((entry) => (entry.hook === 'pre_approval_request' || entry.hook === 'post_approval_response') && entry.payload.tool_call_id === id)
    .map((entry) => [entry.hook, entry.payload.choice ?? null, entry.payload.decided_by ?? null, entry.payload.description ?? null]);
}

/** The input each call ran with instead of the model's, as its approval recorded it, by call id. */
export function changedArgsOf(log: Recorded['log']): Record<string, unknown> {
  return Object.fromEntries(log.filter((entry) => entry.hook === 'post_approval_response' && entry.payload.changed_args !== undefined).map((entry) => [String(entry.payload.tool_call_id), entry.payload.changed_args]));
}

/** How each tool call ended, by id: [status, result]. */
export function toolEnds(log: Recorded['log']): Record<string, [unknown, unknown]> {
  return Object.fromEntries(log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [String(entry.payload.tool_call_id), [entry.payload.status, entry.payload.result]]));
}

/** The main agent's answered steps' tokens: [prompt, completion]. */
export function stepTotals(doc: AtifDoc): [number, number] {
  const steps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent' && step.extra?.invocation?.status !== 'failed');
  return steps.reduce<[number, number]>((sum, step) => [sum[0] + (step.metrics?.prompt_tokens ?? 0), sum[1] + (step.metrics?.completion_tokens ?? 0)], [0, 0]);
}

/** The main loop's tokens as the SDK's result messages report them (prompt tokens count cache reads and writes in). */
export function resultTotals(messages: any[]): [number, number] {
  return messages
    .filter((m) => m.type === 'result')
    .reduce<[number, number]>((sum, m) => [sum[0] + m.usage.input_tokens + m.usage.cache_read_input_tokens + m.usage.cache_creation_input_tokens, sum[1] + m.usage.output_tokens], [0, 0]);
}

/** Every model's tokens as the latest result's `modelUsage` reports them (cumulative), in the same terms. */
export function modelUsageTotals(messages: any[]): [number, number] {
  const last = messages.filter((m) => m.type === 'result').at(-1);
  return Object.values(last.modelUsage as Record<string, any>).reduce<[number, number]>(
    (sum, m) => [sum[0] + m.inputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens, sum[1] + m.outputTokens],
    [0, 0],
  );
}

/** Each tool call's observation in the trajectory, by `source_call_id`. */
export function observations(doc: AtifDoc): Map<string, AtifDoc> {
  return new Map((doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).map((result: AtifDoc) => [result.source_call_id, result] as const)));
}

/** Every trajectory of a document: the main agent's and its sub-agents', nested as they are. */
function trajectories(doc: AtifDoc): AtifDoc[] {
  return [doc, ...((doc.subagent_trajectories ?? []) as AtifDoc[]).flatMap(trajectories)];
}

/**
 * Per model the latest result's `modelUsage` names, [prompt, completion] as the trajectory holds them: the answered
 * steps of every trajectory whose model `askedFor` maps to it (`modelUsage` names the model the CLI asked for, a step
 * the one the API answered with), plus what the turn ends stated no step holds (`unattributed_usage`). Beside it, the
 * same per model as `modelUsage` reports it, less what a resumed session's earlier queries spent (`carried`: their last
 * result's `modelUsage`, which the CLI starts from): the two must be equal.
 */
export function tokensByModel(docs: readonly AtifDoc[], log: Recorded['log'], messages: any[], askedFor: (answered: string) => string, carried: Record<string, any> = {}): { held: Record<string, [number, number]>; reported: Record<string, [number, number]> } {
  const last = messages.filter((m) => m.type === 'result').at(-1);
  const reported: Record<string, [number, number]> = {};
  const terms = (m: any): [number, number] => (m === undefined ? [0, 0] : [m.inputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens, m.outputTokens]);
  for (const [model, m] of Object.entries(last.modelUsage as Record<string, any>)) {
    const [prompt, completion] = terms(m);
    const [before, beforeCompletion] = terms(carried[model]);
    reported[model] = [prompt - before, completion - beforeCompletion];
  }
  const held: Record<string, [number, number]> = {};
  const add = (model: string, prompt: number, completion: number): void => {
    const sum = (held[model] ??= [0, 0]);
    sum[0] += prompt;
    sum[1] += completion;
  };
  for (const doc of docs.flatMap(trajectories)) {
    for (const step of doc.steps as AtifDoc[]) {
      if (step.source !== 'agent' || step.metrics === undefined) continue;
      add(askedFor(String(step.model_name ?? doc.agent?.model_name)), step.metrics.prompt_tokens ?? 0, step.metrics.completion_tokens ?? 0);
    }
  }
  for (const entry of log) {
    if (entry.hook !== 'on_session_end') continue;
    for (const [model, u] of Object.entries((entry.payload.unattributed_usage ?? {}) as Record<string, any>)) add(model, u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, u.output_tokens);
  }
  return { held, reported };
}

/** A UUID, as the SDK types a message's id. */
export type Uuid = `${string}-${string}-${string}-${string}-${string}`;

/** A user message of the SDK's streaming input; `uuid` is the program's own id for it (the SDK's optional `uuid`). */
export const userMessage = (content: string, uuid?: Uuid) => ({ type: 'user' as const, message: { role: 'user' as const, content }, parent_tool_use_id: null, session_id: '', ...(uuid === undefined ? {} : { uuid }) });

/**
 * A conversation as a program streams it: each prompt once the previous turn's result was read, one turn each (with
 * the id `uuids` gives it, when given); every message the query gave, up to the last turn's result.
 */
export async function turnByTurn<Options>(query: (args: { prompt: AsyncIterable<ReturnType<typeof userMessage>>; options: Options }) => AsyncIterable<any>, prompts: readonly string[], options: Options, uuids?: readonly Uuid[]): Promise<any[]> {
  let answered = 0;
  let release: () => void = () => {};
  async function* conversation() {
    for (const [index, content] of prompts.entries()) {
      if (index > answered) await new Promise<void>((resolve) => (release = resolve));
      yield userMessage(content, uuids?.[index]);
    }
  }
  const messages: any[] = [];
  for await (const message of query({ prompt: conversation(), options })) {
    messages.push(message);
    if (message.type !== 'result') continue;
    answered++;
    if (answered === prompts.length) break;
    release();
  }
  return messages;
}
