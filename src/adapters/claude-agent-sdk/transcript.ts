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
import type { Loose } from './messages.ts';
import { isRecord } from '../../shared/record.ts';

/** Lines longer than this are skipped, not buffered without bound. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;

export class TranscriptTail {
  path: string;
  #offset = 0;
  #partial = '';
  #skipping = false;
  readonly #decoder = new TextDecoder();

  constructor(path: string) {
    this.path = path;
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
      const record = parse(line);
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
 * Where the CLI keeps a sub-agent's transcript, next to its session's:
 * `<session>.jsonl` → `<session>/subagents/agent-<id>.jsonl`. A guess until
 * `SubagentStop` names the file; a wrong guess reads nothing.
 */
export function guessedTranscriptPath(sessionTranscript: string, agentId: string): string | undefined {
  if (!sessionTranscript.endsWith('.jsonl') || !/^[A-Za-z0-9_-]+$/.test(agentId)) return undefined;
  const sep = sessionTranscript.includes('\\') && !sessionTranscript.includes('/') ? '\\' : '/';
  return `${sessionTranscript.slice(0, -'.jsonl'.length)}${sep}subagents${sep}agent-${agentId}.jsonl`;
}
