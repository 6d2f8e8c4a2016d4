/**
 * A sub-agent's transcript, read as it grows.
 *
 * The SDK streams a sub-agent's messages only in part (tool calls, not
 * always its text) and with provisional usage, and streams no partial
 * events for it; the transcript the CLI writes for it (`agent_transcript_path`
 * of `SubagentStop`) holds every assistant message with its final usage.
 * Each read picks up only the bytes appended since the last one, so reading
 * at every sub-agent event costs what the sub-agent wrote, not the square
 * of it.
 *
 * @module
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { ChatMessage } from '../core/shapes.ts';
import { AssistantBlocks, promptText, toolResults, toolUseIds, type Loose } from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

/** Lines longer than this are skipped, not buffered without bound. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;

export class TranscriptTail {
  path: string;
  #offset = 0;
  #partial = '';
  #skipping = false;
  readonly #decoder = new TextDecoder();
  readonly #parse: (line: string) => Loose | undefined;

  /** `pick` parses the records wanted from the lines: by default a sub-agent's assistant and user messages. */
  constructor(path: string, pick: (line: string) => Loose | undefined = parse) {
    this.path = path;
    this.#parse = pick;
  }

  /** Moves to another file (the path `SubagentStop` names), from its start. */
  retarget(path: string): void {
    if (path === this.path) return;
    this.path = path;
    this.#offset = 0;
    this.#partial = '';
    this.#skipping = false;
  }

  /** The records appended since the last read; none when the file does not exist (yet). */
  read(): Loose[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    const records: Loose[] = [];
    try {
      const size = fstatSync(fd).size;
      const buffer = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(0, size - this.#offset)));
      while (this.#offset < size && buffer.length > 0) {
        const n = readSync(fd, buffer, 0, Math.min(buffer.length, size - this.#offset), this.#offset);
        if (n <= 0) break;
        this.#offset += n;
        this.#take(this.#decoder.decode(buffer.subarray(0, n), { stream: true }), records);
      }
    } catch {
      // A file that vanished or cannot be read: what was read stands.
    } finally {
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    return records;
  }

  #take(text: string, records: Loose[]): void {
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      if (end < 0) break;
      const line = this.#partial + text.slice(start, end);
      this.#partial = '';
      start = end + 1;
      if (this.#skipping) {
        this.#skipping = false;
        continue;
      }
      const record = this.#parse(line);
      if (record !== undefined) records.push(record);
    }
    if (this.#skipping) return;
    this.#partial += text.slice(start);
    if (this.#partial.length > MAX_LINE_BYTES) {
      this.#partial = '';
      this.#skipping = true;
    }
  }
}

/** Only the records a trajectory needs are parsed: assistant and user messages. */
function parse(line: string): Loose | undefined {
  if (!line.includes('"type":"assistant"') && !line.includes('"type":"user"')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isRecord(value) && (value.type === 'assistant' || value.type === 'user') ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Another session's transcript in the same project folder as this one:
 * `<folder>/<session>.jsonl`. Only a plain id names one (nothing outside the folder).
 */
export function siblingTranscriptPath(sessionTranscript: string, sessionId: string): string | undefined {
  if (!sessionTranscript.endsWith('.jsonl') || !/^[A-Za-z0-9_-]+$/.test(sessionId)) return undefined;
  const cut = Math.max(sessionTranscript.lastIndexOf('/'), sessionTranscript.lastIndexOf('\\'));
  return cut < 0 ? undefined : `${sessionTranscript.slice(0, cut + 1)}${sessionId}.jsonl`;
}

/**
 * Where the CLI keeps a sub-agent's transcript, next to its session's:
 * `<session>.jsonl` → `<session>/subagents/agent-<id>.jsonl`. A guess until
 * `SubagentStop` names the file; a wrong guess reads nothing.
 */
export function guessedTranscriptPath(sessionTranscript: string, agentId: string): string | undefined {
  if (!sessionTranscript.endsWith('.jsonl') || !/^[A-Za-z0-9_-]+$/.test(agentId)) return undefined;
  const sep = sessionTranscript.includes('\\') && !sessionTranscript.includes('/') ? '\\' : '/';
  return `${sessionTranscript.slice(0, -'.jsonl'.length)}${sep}subagents${sep}agent-${agentId}.jsonl`;
}

/**
 * The conversation a resumed session brings into its first request, read
 * from the session's transcript: followed back through `parentUuid`, which
 * is how the CLI rebuilds it, from the parent of this query's prompt (the
 * user record with the `promptId` `UserPromptSubmit` gave, and the prompt's
 * text: the CLI
 * links it to the message it resumed at, `resumeSessionAt` included). When
 * that record is not written yet, from the message to resume at (`resumeAt`,
 * else the last one) among those written before the query started
 * (`before`, epoch ms; a fork copies them with their own times). A
 * compaction's boundary has no parent: the summary after it is what is
 * sent. A reply's blocks and tool results off that chain are put back
 * (withParallelBranches). Messages the CLI added itself (`isMeta`) and
 * sub-agent chains are left out, as the stream leaves them out of later
 * requests. Empty when the file cannot be read.
 */
export function priorConversation(path: string, from: { promptId: string | undefined; prompt: unknown; before: number; resumeAt: string | undefined }): ChatMessage[] {
  const byUuid = new Map<string, Loose>();
  let prompt: Loose | undefined;
  let last: Loose | undefined;
  for (const record of new TranscriptTail(path, chainRecord).read()) {
    if (record.isSidechain === true) continue;
    byUuid.set(record.uuid as string, record);
    // A fork's copies of earlier messages carry the new prompt's id too: the prompt is the last record with it that says the prompt.
    if (from.promptId !== undefined && record.type === 'user' && record.promptId === from.promptId && record.isMeta !== true && isRecord(record.message) && samePrompt(promptText(record.message), from.prompt)) prompt = record;
    const at = typeof record.timestamp === 'string' ? Date.parse(record.timestamp) : Number.NaN;
    // A user record of another prompt is an earlier query's whatever its time: the CLI stamps a local command's output
    // (`/compact`'s) after that query's result has reached the caller, who may start the next query before it.
    const earlierPrompt = record.type === 'user' && from.promptId !== undefined && typeof record.promptId === 'string' && record.promptId !== from.promptId;
    if ((at < from.before || earlierPrompt) && (record.type === 'user' || record.type === 'assistant')) last = record;
  }
  const parent = prompt === undefined ? undefined : nonEmptyString(prompt.parentUuid);
  const resumed = from.resumeAt === undefined ? undefined : byUuid.get(from.resumeAt);
  const leaf = prompt !== undefined ? (parent === undefined ? undefined : byUuid.get(parent)) : resumed !== undefined && Date.parse(String(resumed.timestamp)) < from.before ? resumed : last;
  const chain: Loose[] = [];
  const seen = new Set<string>();
  for (let record = leaf; record !== undefined; ) {
    const uuid = record.uuid as string;
    if (seen.has(uuid)) break;
    seen.add(uuid);
    chain.push(record);
    const parent = nonEmptyString(record.parentUuid);
    record = parent === undefined ? undefined : byUuid.get(parent);
  }
  chain.reverse();
  const messages: ChatMessage[] = [];
  let assistant: { id: string | undefined; blocks: AssistantBlocks } | undefined;
  const flush = (): void => {
    if (assistant !== undefined) messages.push(assistant.blocks.chatMessage());
    assistant = undefined;
  };
  for (const record of withParallelBranches(byUuid, chain)) {
    if ((record.type !== 'user' && record.type !== 'assistant') || record.isMeta === true || !isRecord(record.message)) continue;
    const message = record.message;
    if (record.type === 'assistant') {
      // The CLI writes one record per content block; the blocks of one API message are one assistant message.
      const id = nonEmptyString(message.id);
      if (assistant === undefined || id === undefined || assistant.id !== id) {
        flush();
        assistant = { id, blocks: new AssistantBlocks() };
      }
      assistant.blocks.add(message.content);
      continue;
    }
    flush();
    const results = toolResults(message.content);
    if (results.length > 0) {
      for (const result of results) messages.push({ role: 'tool', tool_call_id: result.toolUseId, content: result.content });
      continue;
    }
    const text = promptText(message);
    if (text !== undefined) messages.push({ role: 'user', content: text });
  }
  flush();
  return messages;
}

/**
 * The chain with what the CLI puts back into it when it rebuilds a conversation. A reply that called several tools at
 * once is written one record per block, each the child of the one before, and each tool's result as the child of the
 * block that called it (also named by `sourceToolAssistantUUID`, and by the result's `tool_use_id`): the chain runs
 * through the last result only, and the others branch off it. The CLI takes, for each reply on the chain, the reply's
 * records and the results hanging off them that are not on the chain, and puts them after the reply's last record on
 * it: blocks first, then results, each in the order of their timestamps. A result that hangs elsewhere but answers one
 * of the reply's calls no result on the chain answers comes too, once per call.
 */
function withParallelBranches(records: ReadonlyMap<string, Loose>, chain: readonly Loose[]): readonly Loose[] {
  const onChain = new Set(chain.map((record) => record.uuid as string));
  const { blocksOf, callerOf, results } = repliesAndResults(records);
  const resultsOf = resultsByRecord(records, callerOf, results);
  const answered = new Set(chain.flatMap((record) => resultIds(record)));
  const order = new Map([...records.keys()].map((uuid, index) => [uuid, index]));
  const lastOnChain = new Map<string, Loose>();
  for (const record of chain) {
    const id = messageId(record);
    if (id !== undefined) lastOnChain.set(id, record);
  }
  const after = new Map<string, Loose[]>();
  for (const [id, last] of lastOnChain) {
    const blocks = blocksOf.get(id) ?? [last];
    const own = new Set(blocks.map((record) => record.uuid as string));
    const offBlocks = blocks.filter((record) => !onChain.has(record.uuid as string));
    const direct: Loose[] = [];
    const elsewhere: Loose[] = [];
    const taken = new Set<string>();
    for (const block of blocks) {
      for (const result of resultsOf.get(block.uuid as string) ?? []) {
        const uuid = result.uuid as string;
        if (onChain.has(uuid) || taken.has(uuid)) continue;
        taken.add(uuid);
        (own.has(result.parentUuid as string) ? direct : elsewhere).push(result);
      }
    }
    const offResults = [...direct, ...answeringCalls(elsewhere, direct, answered, own, callerOf, order)];
    if (offBlocks.length === 0 && offResults.length === 0) continue;
    const added = [...offBlocks.sort(byTimestamp), ...offResults.sort(byTimestamp)];
    for (const record of added) onChain.add(record.uuid as string);
    after.set(last.uuid as string, added);
  }
  if (after.size === 0) return chain;
  return chain.flatMap((record) => [record, ...(after.get(record.uuid as string) ?? [])]);
}

/** The records of each reply (by its API message id), which record made each tool call, and the records of tool results. */
function repliesAndResults(records: ReadonlyMap<string, Loose>): { blocksOf: Map<string, Loose[]>; callerOf: Map<string, Loose | null>; results: Loose[] } {
  const blocksOf = new Map<string, Loose[]>();
  // A call id two replies claim is nobody's (null).
  const callerOf = new Map<string, Loose | null>();
  const results: Loose[] = [];
  for (const record of records.values()) {
    const id = messageId(record);
    if (id === undefined) {
      if (record.type === 'user' && nonEmptyString(record.parentUuid) !== undefined && resultIds(record).length > 0) results.push(record);
      continue;
    }
    const blocks = blocksOf.get(id);
    if (blocks === undefined) blocksOf.set(id, [record]);
    else blocks.push(record);
    for (const call of callIds(record)) {
      const caller = callerOf.get(call);
      callerOf.set(call, caller === undefined || (caller !== null && messageId(caller) === id) ? record : null);
    }
  }
  return { blocksOf, callerOf, results };
}

/** Each record's tool results: the results that are its children, that name it as the block that called them, or that answer a call it made. */
function resultsByRecord(records: ReadonlyMap<string, Loose>, callerOf: ReadonlyMap<string, Loose | null>, results: readonly Loose[]): Map<string, Loose[]> {
  const resultsOf = new Map<string, Loose[]>();
  const add = (uuid: string, result: Loose): void => {
    const list = resultsOf.get(uuid);
    if (list === undefined) resultsOf.set(uuid, [result]);
    else if (!list.includes(result)) list.push(result);
  };
  for (const result of results) {
    add(result.parentUuid as string, result);
    const source = typeof result.sourceToolAssistantUUID === 'string' && result.sourceToolAssistantUUID !== result.parentUuid ? records.get(result.sourceToolAssistantUUID) : undefined;
    if (source !== undefined) add(source.uuid as string, result);
    for (const call of resultIds(result)) {
      const caller = callerOf.get(call);
      if (caller) add(caller.uuid as string, result);
    }
  }
  return resultsOf;
}

/** Of a reply's results that hang off another record, in the order written: each that answers a call of the reply no result taken yet answers. */
function answeringCalls(elsewhere: readonly Loose[], direct: readonly Loose[], answered: ReadonlySet<string>, own: ReadonlySet<string>, callerOf: ReadonlyMap<string, Loose | null>, order: ReadonlyMap<string, number>): Loose[] {
  if (elsewhere.length === 0) return [];
  const covered = new Set([...answered, ...direct.flatMap((result) => resultIds(result))]);
  const position = (record: Loose): number => order.get(record.uuid as string) ?? Number.MAX_SAFE_INTEGER;
  const ownCall = (call: string): boolean => {
    const caller = callerOf.get(call);
    return caller !== undefined && caller !== null && own.has(caller.uuid as string);
  };
  const taken: Loose[] = [];
  for (const result of [...elsewhere].sort((a, b) => position(a) - position(b))) {
    const calls = resultIds(result);
    if (!calls.some((call) => !covered.has(call) && ownCall(call))) continue;
    for (const call of calls) covered.add(call);
    taken.push(result);
  }
  return taken;
}

/** The API message id of an assistant record (the CLI writes one record per block of a message). */
function messageId(record: Loose): string | undefined {
  return record.type === 'assistant' && isRecord(record.message) && typeof record.message.id === 'string' ? record.message.id : undefined;
}

/** The calls a record's message made (its `tool_use` ids). */
const callIds = (record: Loose): string[] => toolUseIds(isRecord(record.message) ? record.message.content : undefined);

/** The calls a record's tool results answer, read as `toolResults` reads them. */
const resultIds = (record: Loose): string[] => toolResults(isRecord(record.message) ? record.message.content : undefined).map((result) => result.toolUseId);

/** The CLI's order for what it puts back: by timestamp, as text (ISO times sort so). */
function byTimestamp(a: Loose, b: Loose): number {
  const at = (record: Loose): string => (typeof record.timestamp === 'string' ? record.timestamp : '');
  return at(a).localeCompare(at(b));
}

/**
 * The prompts among a session transcript's user records with the given ids, as the CLI wrote them: a compaction
 * names the messages it keeps by their ids, and the stream gives the caller's own messages none.
 */
export function promptsWithIds(path: string, ids: ReadonlySet<string>): Array<string | readonly unknown[]> {
  const prompts: Array<string | readonly unknown[]> = [];
  for (const record of new TranscriptTail(path, chainRecord).read()) {
    if (record.type !== 'user' || record.isMeta === true || !ids.has(record.uuid as string) || !isRecord(record.message)) continue;
    if (toolResults(record.message.content).length > 0) continue;
    const text = promptText(record.message);
    if (text !== undefined) prompts.push(text);
  }
  return prompts;
}

/** A transcript's user message is the prompt sent: the same text (content parts are not compared). */
function samePrompt(written: unknown, sent: unknown): boolean {
  return typeof written !== 'string' || typeof sent !== 'string' || written === sent;
}

/** The fields of a transcript record the conversation's chain needs (every record with a `uuid`: attachments link it too). */
function chainRecord(line: string): Loose | undefined {
  if (!line.includes('"uuid"')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || typeof value.uuid !== 'string') return undefined;
  const kept: Loose = { uuid: value.uuid, parentUuid: value.parentUuid, type: value.type, timestamp: value.timestamp, isSidechain: value.isSidechain, isMeta: value.isMeta, promptId: value.promptId, sourceToolAssistantUUID: value.sourceToolAssistantUUID };
  if (value.type === 'user' || value.type === 'assistant') kept.message = value.message;
  return kept;
}

/**
 * What the CLI spent on a session before this query, as it will count it:
 * a CLI process writes its totals into the transcript (a `cost-state`
 * record) as it ends, and one resuming the session (or forking it) starts
 * its `modelUsage` from the latest. Read before this query's process wrote
 * its own. Undefined when the file holds none.
 */
export function carriedUsage(path: string): Loose | undefined {
  let usage: Loose | undefined;
  for (const record of new TranscriptTail(path, costState).read()) if (isRecord(record.modelUsage)) usage = record.modelUsage;
  return usage;
}

function costState(line: string): Loose | undefined {
  if (!line.includes('"type":"cost-state"')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isRecord(value) && value.type === 'cost-state' ? value : undefined;
  } catch {
    return undefined;
  }
}
