// How a resumed session's earlier conversation is read from its transcript
// (priorConversation), on files written in the shape the CLI writes them
// (records seen in the CLI 2.1.333's transcripts: one record per content
// block, attachments in the parent chain, a compaction boundary without a
// parent). The real CLI's files are read in test/slow/claude-agent-sdk.test.ts
// (resume, continue, forkSession with resumeSessionAt, /compact); these are
// the cases the CLI cannot be made to write on demand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { priorConversation, siblingTranscriptPath } from '../../../src/adapters/claude-agent-sdk/transcript.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.parse('2026-12-04T02:00:00.000Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

function transcript(lines: Array<Record<string, unknown> | string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-claude-transcript-'));
  dirs.push(dir);
  const file = path.join(dir, 'session.jsonl');
  writeFileSync(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return file;
}

const user = (uuid: string, parentUuid: string | null, seconds: number, content: unknown, more: Record<string, unknown> = {}) => ({ type: 'user', uuid, parentUuid, timestamp: at(seconds), isSidechain: false, message: { role: 'user', content }, ...more });
const assistant = (uuid: string, parentUuid: string, seconds: number, id: string, block: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'assistant', uuid, parentUuid, timestamp: at(seconds), isSidechain: false, message: { id, role: 'assistant', content: [block] }, ...more });
const attachment = (uuid: string, parentUuid: string, seconds: number) => ({ type: 'attachment', uuid, parentUuid, timestamp: at(seconds), attachment: { type: 'date' } });

/** A conversation with a tool call, then a second question, then this query's prompt (written at 100 s). */
const conversation = [
  { type: 'queue-operation', operation: 'enqueue', timestamp: at(0) },
  user('u1', null, 1, [{ type: 'text', text: 'first question' }]),
  attachment('a1', 'u1', 1),
  assistant('m1a', 'a1', 2, 'msg_1', { type: 'text', text: 'Reading.' }),
  assistant('m1b', 'm1a', 2, 'msg_1', { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/n.txt' } }),
  user('r1', 'm1b', 3, [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'noted' }]),
  attachment('a2', 'r1', 3),
  assistant('m2', 'a2', 4, 'msg_2', { type: 'text', text: 'It says noted.' }),
  { type: 'last-prompt', lastPrompt: 'first question', leafUuid: 'm2' },
  user('u2', 'm2', 10, 'second question'),
  assistant('m3', 'u2', 11, 'msg_3', { type: 'text', text: 'answer two' }),
  user('u3', 'm3', 100, 'this query', { promptId: 'prompt-3' }),
  assistant('m4', 'u3', 101, 'msg_4', { type: 'text', text: 'not yet sent' }),
];

describe('priorConversation', () => {
  it('follows the chain back from the last message written before the query, one assistant message per API message', () => {
    expect(priorConversation(transcript(conversation), { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: undefined })).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'Reading.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/n.txt"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'noted' },
      { role: 'assistant', content: 'It says noted.' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'answer two' },
    ]);
  });

  it('follows the chain from the parent of this query\'s prompt when it is written, whatever was written when', () => {
    // The CLI linked the prompt to the message it resumed at (resumeSessionAt m2); a record of the previous process written late counts too.
    const lines = conversation.map((line) => ('uuid' in line && line.uuid === 'u3' ? { ...line, parentUuid: 'late' } : line));
    lines.push({ ...attachment('late', 'm2', 120), type: 'user', message: { role: 'user', content: '<local-command-stdout>late</local-command-stdout>' } });
    const file = transcript(lines);
    expect(priorConversation(file, { promptId: 'prompt-3', prompt: 'this query', before: T0 + 50_000, resumeAt: undefined }).map((m) => m.content)).toEqual(['first question', 'Reading.', 'noted', 'It says noted.', '<local-command-stdout>late</local-command-stdout>']);
    // A fork's copy of an earlier message with the new prompt's id is not the prompt.
    const forked = transcript([{ ...conversation[1]!, promptId: 'prompt-3' } as Record<string, unknown>, ...lines.slice(2)]);
    expect(priorConversation(forked, { promptId: 'prompt-3', prompt: 'this query', before: T0 + 50_000, resumeAt: undefined })).toHaveLength(5);
    // No such prompt written yet: the messages written before the query.
    expect(priorConversation(file, { promptId: 'prompt-9', prompt: 'this query', before: T0 + 50_000, resumeAt: undefined })).toHaveLength(6);
  });

  it('stops at resumeSessionAt, and ignores a message to resume at that is not there', () => {
    const file = transcript(conversation);
    expect(priorConversation(file, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: 'm2' }).map((m) => m.content)).toEqual(['first question', 'Reading.', 'noted', 'It says noted.']);
    expect(priorConversation(file, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: 'no-such-uuid' })).toHaveLength(6);
    // A message written after the query started is not one to resume at.
    expect(priorConversation(file, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: 'm4' })).toHaveLength(6);
  });

  it('takes every result of a reply that called tools at once, and its blocks, though only the last result is on the chain', () => {
    // As the CLI 2.1.337 wrote a reply with two calls: each block a record chained to the one before, each result a child of
    // the block that called it (sourceToolAssistantUUID), so the chain back from the prompt runs through the last result only.
    const result = (uuid: string, caller: string, seconds: number, toolUseId: string, text: string) => user(uuid, caller, seconds, [{ type: 'tool_result', tool_use_id: toolUseId, content: text }], { sourceToolAssistantUUID: caller });
    const call = (id: string, city: string) => ({ type: 'tool_use', id, name: 'mcp__weather__get_weather', input: { city } });
    const lines = [
      user('u1', null, 1, 'Paris and Lyon?'),
      assistant('m1a', 'u1', 2, 'msg_1', { type: 'text', text: 'Looking up both.' }),
      assistant('m1b', 'm1a', 2.1, 'msg_1', call('toolu_paris', 'Paris')),
      assistant('m1c', 'm1b', 2.2, 'msg_1', call('toolu_lyon', 'Lyon')),
      result('r1', 'm1b', 3, 'toolu_paris', 'Paris: sunny'),
      result('r2', 'm1c', 3.1, 'toolu_lyon', 'Lyon: rain'),
      assistant('m2', 'r2', 4, 'msg_2', { type: 'text', text: 'Sunny and rain.' }),
      user('u2', 'm2', 100, 'And Oslo?', { promptId: 'prompt-2' }),
    ];
    const expected = [
      { role: 'user', content: 'Paris and Lyon?' },
      { role: 'assistant', content: 'Looking up both.', tool_calls: [{ id: 'toolu_paris', type: 'function', function: { name: 'mcp__weather__get_weather', arguments: '{"city":"Paris"}' } }, { id: 'toolu_lyon', type: 'function', function: { name: 'mcp__weather__get_weather', arguments: '{"city":"Lyon"}' } }] },
      // In the order the CLI sends them, one user message with both results.
      { role: 'tool', tool_call_id: 'toolu_paris', content: 'Paris: sunny' },
      { role: 'tool', tool_call_id: 'toolu_lyon', content: 'Lyon: rain' },
      { role: 'assistant', content: 'Sunny and rain.' },
    ];
    expect(priorConversation(transcript(lines), { promptId: 'prompt-2', prompt: 'And Oslo?', before: T0 + 50_000, resumeAt: undefined })).toEqual(expected);
    // The chain may run through the first result instead: the call block after it and its result come back, after the reply's last block on the chain.
    const first = lines.map((line) => (line.uuid === 'm2' ? { ...line, parentUuid: 'r1' } : line));
    expect(priorConversation(transcript(first), { promptId: 'prompt-2', prompt: 'And Oslo?', before: T0 + 50_000, resumeAt: undefined }).map((m) => m.tool_call_id ?? m.content)).toEqual(['Paris and Lyon?', 'Looking up both.', 'toolu_lyon', 'toolu_paris', 'Sunny and rain.']);
    // A result that hangs off another record comes back when it answers a call nothing else answers, once.
    const elsewhere = [...lines.filter((line) => line.uuid !== 'r1'), attachment('h1', 'm1b', 2.5), { ...result('r1', 'h1', 3, 'toolu_paris', 'Paris: sunny'), sourceToolAssistantUUID: 'm1b' }, { ...result('r9', 'h1', 3.5, 'toolu_paris', 'again'), sourceToolAssistantUUID: 'm1b' }];
    expect(priorConversation(transcript(elsewhere), { promptId: 'prompt-2', prompt: 'And Oslo?', before: T0 + 50_000, resumeAt: undefined })).toEqual(expected);
  });

  it('starts at a compaction: the boundary has no parent, the summary after it is sent, the CLI\'s own notes are not', () => {
    const file = transcript([
      user('u1', null, 1, 'compacted away'),
      assistant('m1', 'u1', 2, 'msg_1', { type: 'text', text: 'also compacted away' }),
      { type: 'system', subtype: 'compact_boundary', uuid: 'b1', parentUuid: null, logicalParentUuid: 'm1', timestamp: at(3) },
      user('s1', 'b1', 3, 'This session is being continued… summary', { isCompactSummary: true }),
      user('c1', 's1', 3, '<local-command-caveat>a note</local-command-caveat>', { isMeta: true }),
      user('k1', 'c1', 3, '<command-name>/compact</command-name>'),
    ]);
    expect(priorConversation(file, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: undefined })).toEqual([
      { role: 'user', content: 'This session is being continued… summary' },
      { role: 'user', content: '<command-name>/compact</command-name>' },
    ]);
  });

  it('takes a local command\'s output the CLI stamped after the next query started, while that query\'s prompt is not written yet', () => {
    // The CLI stamps `/compact`'s output after the query's result reached the caller, who may resume at once.
    const file = transcript([
      user('u1', null, 1, 'compacted away', { promptId: 'prompt-1' }),
      { type: 'system', subtype: 'compact_boundary', uuid: 'b1', parentUuid: null, logicalParentUuid: 'u1', timestamp: at(3) },
      user('s1', 'b1', 3, 'This session is being continued… summary', { isCompactSummary: true, promptId: 'prompt-2' }),
      user('k1', 's1', 3, '<command-name>/compact</command-name>', { promptId: 'prompt-2' }),
      user('o1', 'k1', 10.03, '<local-command-stdout>Compacted </local-command-stdout>', { promptId: 'prompt-2' }),
      attachment('a1', 'o1', 3),
    ]);
    expect(priorConversation(file, { promptId: 'prompt-3', prompt: 'third question', before: T0 + 10_000, resumeAt: undefined })).toEqual([
      { role: 'user', content: 'This session is being continued… summary' },
      { role: 'user', content: '<command-name>/compact</command-name>' },
      { role: 'user', content: '<local-command-stdout>Compacted </local-command-stdout>' },
    ]);
  });

  it('leaves out sub-agent chains, lines that are not records, and survives a parent cycle and a missing file', () => {
    const file = transcript([
      user('u1', null, 1, 'main question'),
      'not json {',
      '{"type":"user","message":{"role":"user","content":"no uuid"}}',
      assistant('m1', 'u1', 2, 'msg_1', { type: 'text', text: 'main answer' }),
      { ...user('x1', 'm1', 3, 'sub-agent prompt'), isSidechain: true },
    ]);
    expect(priorConversation(file, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: undefined }).map((m) => m.content)).toEqual(['main question', 'main answer']);
    const cycle = transcript([user('u1', 'm1', 1, 'one'), assistant('m1', 'u1', 2, 'msg_1', { type: 'text', text: 'two' })]);
    expect(priorConversation(cycle, { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: undefined }).map((m) => m.content)).toEqual(['one', 'two']);
    expect(priorConversation(path.join(tmpdir(), 'nrh-no-such-transcript.jsonl'), { promptId: undefined, prompt: undefined, before: T0 + 50_000, resumeAt: undefined })).toEqual([]);
  });

  it('finds the transcript of the session a fork came from next to the fork\'s, and names nothing outside that folder', () => {
    expect(siblingTranscriptPath('/h/.claude/projects/-w/fork-id.jsonl', '3aa929b6-68e7-4401-a755-4f1190f5c70d')).toBe('/h/.claude/projects/-w/3aa929b6-68e7-4401-a755-4f1190f5c70d.jsonl');
    expect(siblingTranscriptPath('C:\\h\\projects\\fork.jsonl', 'abc')).toBe('C:\\h\\projects\\abc.jsonl');
    for (const id of ['../other', 'a/b', '..', '']) expect(siblingTranscriptPath('/h/p/fork.jsonl', id), id).toBeUndefined();
    expect(siblingTranscriptPath('/h/p/fork.txt', 'abc')).toBeUndefined();
  });
});
