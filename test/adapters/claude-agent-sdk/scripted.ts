// The Claude Agent SDK scripted: the messages its CLI sends in
// partial-message mode, in order, for tests that replay a stream the random
// wire found (test/slow/random-wire-claude-agent-sdk.test.ts) without
// starting the CLI.

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
