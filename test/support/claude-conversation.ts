// Requests in comparable terms, for the Claude Agent SDK tests: what the
// adapter recorded (OpenAI-style chat messages) and what the CLI sent the
// loopback Anthropic API, one line per message.

/** A recorded request's messages, one line each: role, text, tool call ids, tool results. */
export function recordedConversation(messages: any[]): string[] {
  return messages.map((m) => (m.role === 'tool' ? `tool:${m.tool_call_id}:${m.content}` : `${m.role}:${m.content ?? ''}${(m.tool_calls ?? []).map((c: any) => `[${c.id}]`).join('')}`));
}

const MID_TURN = 'The user sent a new message while you were working:\n';

/** The messages the CLI sent the API, in the same terms: without its system notes and reminders, which the stream never shows. */
export function sentConversation(messages: any[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    const text = blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
    if (m.role === 'assistant') out.push(`assistant:${text}${blocks.filter((b) => b.type === 'tool_use').map((b) => `[${b.id}]`).join('')}`);
    else {
      for (const b of blocks.filter((b) => b.type === 'tool_result')) out.push(`tool:${b.tool_use_id}:${typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text).join('')}`);
      // A message the user sent while the CLI was busy goes into the running turn wrapped in the CLI's words: the message is the user's.
      const midTurn = blocks.filter((b) => b.type === 'text' && b.text.startsWith(MID_TURN));
      if (midTurn.length > 0) out.push(`user:${midTurn.map((b) => b.text.slice(MID_TURN.length).split('\n\n')[0]).join('\n')}`);
      const rest = blocks.filter((b) => b.type === 'text' && !b.text.startsWith('<system-reminder>') && !midTurn.includes(b)).map((b) => b.text).join('');
      if (rest !== '') out.push(`user:${rest}`);
    }
  }
  return out;
}
