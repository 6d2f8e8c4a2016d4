// The Claude Agent SDK scripted: the messages its CLI sends in
// partial-message mode, in order, for tests that replay a stream the random
// wire found (test/slow/random-wire-claude-agent-sdk.test.ts) without
// starting the CLI.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type Message = Record<string, unknown>;

export const MODEL = 'claude-sonnet-4-5-20250929';
export const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** One streamed reply of the main agent in `session`: message_start, the assistant message of each block, message_delta, message_stop. */
export function reply(session: { session_id: string }, id: string, content: Message[], stop: string): Message[] {
  const event = (data: Message) => ({ type: 'stream_event', event: data, parent_tool_use_id: null, ...session });
  return [
    event({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model: MODEL, content: [], usage } }),
    ...content.map((block) => ({ type: 'assistant', message: { id, type: 'message', role: 'assistant', model: MODEL, content: [block], usage }, parent_tool_use_id: null, ...session })),
    event({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 7 } }),
    event({ type: 'message_stop' }),
  ];
}

/** An SDK whose every query yields `script`. */
export function scriptedSdk(script: readonly Message[]) {
  return {
    query: (_params: unknown) =>
      (async function* () {
        yield* script;
      })(),
  };
}

type HookCallback = (input: unknown, id: unknown, options: unknown) => Promise<unknown>;

/**
 * An SDK whose every query first tells the adapter where the session's transcript is, as the CLI's
 * `UserPromptSubmit` hook does (with `prompt`), then yields `script`; `agentTranscript` (JSONL) is the transcript the
 * CLI wrote for the sub-agent `agentId` beside it. `remove()` deletes the folder.
 */
export function scriptedSdkWithTranscript(script: readonly Message[], session: { session_id: string }, agentId: string, agentTranscript: string, prompt: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-claude-scripted-'));
  const sessionTranscript = path.join(dir, `${session.session_id}.jsonl`);
  const agentFile = path.join(dir, session.session_id, 'subagents', `agent-${agentId}.jsonl`);
  mkdirSync(path.dirname(agentFile), { recursive: true });
  writeFileSync(agentFile, `${agentTranscript}\n`);
  const sdk = {
    query: (params: { prompt: unknown; options?: unknown }) =>
      (async function* () {
        const options = params.options as { hooks?: Record<string, Array<{ hooks: HookCallback[] }>> } | undefined;
        for (const matcher of options?.hooks?.UserPromptSubmit ?? []) {
          for (const hook of matcher.hooks) await hook({ hook_event_name: 'UserPromptSubmit', prompt, transcript_path: sessionTranscript, ...session }, undefined, { signal: new AbortController().signal });
        }
        yield* script;
      })(),
  };
  return { sdk, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
