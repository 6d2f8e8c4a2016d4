// A large ATOF file as agents write one: many sessions, a few of them open
// at once (their lines interleaved), each a user question, an LLM call with
// usage, a tool call (every 50th fails), and a second LLM call. Written in
// pieces, never held whole. Used by the slow viewer test and the bench.
import { closeSync, openSync, writeSync } from 'node:fs';

export interface BigAtof {
  sessions: number;
  events: number;
  bytes: number;
  /** Sessions whose tool call failed. */
  failed: number;
}

/** Sessions open at once (their lines interleave). */
const CONCURRENT = 4;
const EVENTS_PER_SESSION = 8;

/** Writes sessions to `file` until it holds at least `targetBytes`. Session `i` is `s<i>`; its prompt tokens are 100 + i % 1000. */
export function writeBigAtof(file: string, targetBytes: number): BigAtof {
  const descriptor = openSync(file, 'w');
  const t0 = T0;
  const filler = FILLER;
  let bytes = 0;
  let sessions = 0;
  let failed = 0;
  try {
    while (bytes < targetBytes) {
      const group: string[][] = [];
      for (let k = 0; k < CONCURRENT; k++, sessions++) {
        const i = sessions;
        if (i % 50 === 0) failed += 1;
        group.push(sessionLines(i, t0 + i * 1_000_000, filler));
      }
      let text = '';
      for (let line = 0; line < EVENTS_PER_SESSION; line++) for (const lines of group) text += `${lines[line]}\n`;
      bytes += writeSync(descriptor, text);
    }
  } finally {
    closeSync(descriptor);
  }
  return { sessions, events: sessions * EVENTS_PER_SESSION, bytes, failed };
}

const T0 = Date.parse('2026-01-01T10:00:00Z') * 1000;
const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(12);

/** One session's lines as `writeBigAtof` writes session `i`, under another id (to append to a file being watched). */
export function oneSessionAtof(i: number, id: string): string {
  return `${sessionLines(i, T0 + i * 1_000_000, FILLER, id).join('\n')}\n`;
}

function sessionLines(i: number, at: number, filler: string, id = `s${i}`): string[] {
  const agent = `agent-${id}`;
  const event = (fields: Record<string, unknown>) => JSON.stringify({ atof_version: '0.1', kind: 'scope', attributes: [], data: null, metadata: {}, ...fields });
  const usage = { prompt_tokens: 100 + (i % 1000), completion_tokens: 20 + (i % 7), total_tokens: 120 + (i % 1000) + (i % 7) };
  const time = (offset: number) => new Date((at + offset) / 1000).toISOString();
  return [
    event({ scope_category: 'start', uuid: agent, parent_uuid: null, name: `bulk-session-${id}`, category: 'agent', timestamp: time(0), metadata: { session_id: id, model: 'gpt-4o' } }),
    event({ scope_category: 'start', uuid: `llm-${id}-1`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: time(1_000), data: { messages: [{ role: 'user', content: `question ${i}: ${filler}` }] } }),
    event({ scope_category: 'end', uuid: `llm-${id}-1`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: time(200_000), data: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: `call-${id}`, type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] } }], usage } }),
    event({ scope_category: 'start', uuid: `tool-${id}`, parent_uuid: agent, name: 'search', category: 'tool', timestamp: time(201_000), data: { q: 'x' }, category_profile: { tool_call_id: `call-${id}` } }),
    event({ scope_category: 'end', uuid: `tool-${id}`, parent_uuid: agent, name: 'search', category: 'tool', timestamp: time(300_000), data: i % 50 === 0 ? 'search backend unavailable' : `results for ${i}: ${filler.slice(0, 200)}`, metadata: i % 50 === 0 ? { 'otel.status_code': 'ERROR', 'error.type': 'ToolError' } : {} }),
    event({ scope_category: 'start', uuid: `llm-${id}-2`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: time(301_000), data: { messages: [{ role: 'tool', content: 'results' }] } }),
    event({ scope_category: 'end', uuid: `llm-${id}-2`, parent_uuid: agent, name: 'openai', category: 'llm', timestamp: time(500_000), data: { choices: [{ message: { role: 'assistant', content: `answer ${i}` } }], usage } }),
    event({ scope_category: 'end', uuid: agent, parent_uuid: null, name: `bulk-session-${id}`, category: 'agent', timestamp: time(600_000) }),
  ];
}
