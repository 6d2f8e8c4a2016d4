/**
 * Running a compiled Rust pattern: a Pike VM (every thread advances one
 * character at a time, so a search takes time linear in the text whatever
 * the pattern: no catastrophic backtracking), Rust's match iteration (an
 * empty match right after a match is skipped) and `replace_all` with
 * Rust's `$name` / `${name}` / `$$` replacement syntax.
 *
 * @module
 */

import { isWordChar, type Inst, type Program } from './program.ts';
import type { Look } from './syntax.ts';

/** A match: `[start, end)` in UTF-16 units, and each group's span (undefined when it did not take part). */
export interface RustMatch {
  start: number;
  end: number;
  groups: (readonly [number, number] | undefined)[];
}

/** Thrown when one search would exceed its step budget; the caller fails closed. */
export class RustRegexBudgetError extends Error {
  constructor(limit: number) {
    super(`regex search exceeded its budget of ${limit} steps`);
    this.name = 'RustRegexBudgetError';
  }
}

/** Steps (thread × character) one string may take before the search gives up. */
export const DEFAULT_STEP_BUDGET = 50_000_000;

interface Thread {
  pc: number;
  caps: Int32Array;
}

export class Matcher {
  private readonly insts: Inst[];
  private readonly slots: number;
  /** Per-list "already added" marks, by generation. */
  private readonly marks: Int32Array;
  private generation = 0;
  private steps = 0;

  constructor(
    private readonly program: Program,
    private readonly budget = DEFAULT_STEP_BUDGET,
  ) {
    this.insts = program.insts;
    this.slots = program.slots;
    this.marks = new Int32Array(program.insts.length);
  }

  /** Every match of Rust's `find_iter` / `captures_iter` over `text`. */
  *matches(text: string): Generator<RustMatch> {
    this.steps = 0;
    let at = 0;
    let lastEnd = -1;
    while (at <= text.length) {
      const m = this.find(text, at);
      if (m === null) return;
      if (m.start === m.end && m.end === lastEnd) {
        // Rust never reports an empty match right where the last one ended: step over one character.
        if (at >= text.length) return;
        at = nextIndex(text, m.end);
        continue;
      }
      yield m;
      lastEnd = m.end;
      at = m.end;
    }
  }

  /** The leftmost-first match starting at or after `from`, or null. */
  find(text: string, from: number): RustMatch | null {
    const insts = this.insts;
    let clist: Thread[] = [];
    let nlist: Thread[] = [];
    let matched: Int32Array | null = null;
    let pos = from;
    for (;;) {
      const cp = pos < text.length ? text.codePointAt(pos)! : -1;
      const width = cp > 0xffff ? 2 : 1;
      if (matched === null) {
        // A new start at this position, after (below) the threads already running.
        const caps = new Int32Array(this.slots).fill(-1);
        this.generation++;
        for (const t of clist) this.marks[t.pc] = this.generation;
        this.add(clist, 0, caps, text, pos);
      }
      if (clist.length === 0) {
        if (matched !== null || cp < 0) break;
        pos += width;
        continue;
      }
      this.generation++;
      nlist = [];
      this.steps += clist.length;
      if (this.steps > this.budget) throw new RustRegexBudgetError(this.budget);
      for (let i = 0; i < clist.length; i++) {
        const thread = clist[i]!;
        const inst = insts[thread.pc]!;
        if (inst.op === 'match') {
          matched = thread.caps;
          // Leftmost-first: threads after this one have lower priority.
          break;
        }
        if (inst.op === 'char' && cp >= 0 && inst.test(cp)) this.add(nlist, thread.pc + 1, thread.caps, text, pos + width);
      }
      if (cp < 0) break;
      clist = nlist;
      pos += width;
      if (clist.length === 0 && matched !== null) break;
    }
    if (matched === null) return null;
    const groups: (readonly [number, number] | undefined)[] = [];
    for (let g = 0; g < this.program.groups; g++) {
      const s = matched[g * 2]!;
      const e = matched[g * 2 + 1]!;
      groups.push(s >= 0 && e >= 0 ? [s, e] : undefined);
    }
    return { start: matched[0]!, end: matched[1]!, groups };
  }

  /** Follows the zero-width instructions from `pc` at `pos`, adding the threads that consume input (or match). */
  private add(list: Thread[], pc0: number, caps0: Int32Array, text: string, pos: number): void {
    const stack: { pc: number; caps: Int32Array }[] = [{ pc: pc0, caps: caps0 }];
    while (stack.length > 0) {
      const { pc, caps } = stack.pop()!;
      if (this.marks[pc] === this.generation) continue;
      this.marks[pc] = this.generation;
      const inst = this.insts[pc]!;
      switch (inst.op) {
        case 'jmp':
          stack.push({ pc: inst.to, caps });
          break;
        case 'split':
          // The preferred branch is explored first: push it last.
          stack.push({ pc: inst.y, caps });
          stack.push({ pc: inst.x, caps });
          break;
        case 'save': {
          const copy = caps.slice();
          copy[inst.slot] = pos;
          stack.push({ pc: pc + 1, caps: copy });
          break;
        }
        case 'look':
          if (lookHolds(inst.look, text, pos)) stack.push({ pc: pc + 1, caps });
          break;
        default:
          list.push({ pc, caps });
      }
    }
  }
}

function nextIndex(text: string, at: number): number {
  const cp = text.codePointAt(at);
  return at + (cp !== undefined && cp > 0xffff ? 2 : 1);
}

function before(text: string, pos: number): number {
  if (pos <= 0) return -1;
  const low = text.charCodeAt(pos - 1);
  if (low >= 0xdc00 && low <= 0xdfff && pos >= 2) {
    const high = text.charCodeAt(pos - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.codePointAt(pos - 2)!;
  }
  return low;
}

function after(text: string, pos: number): number {
  return pos < text.length ? text.codePointAt(pos)! : -1;
}

function lookHolds(look: Look, text: string, pos: number): boolean {
  switch (look) {
    case 'start':
      return pos === 0;
    case 'end':
      return pos === text.length;
    case 'startLine':
      return pos === 0 || text.charCodeAt(pos - 1) === 0x0a;
    case 'endLine':
      return pos === text.length || text.charCodeAt(pos) === 0x0a;
    case 'startLineCRLF': {
      if (pos === 0) return true;
      const prev = text.charCodeAt(pos - 1);
      if (prev === 0x0a) return true;
      // Not between a \r and its \n.
      return prev === 0x0d && text.charCodeAt(pos) !== 0x0a;
    }
    case 'endLineCRLF': {
      if (pos === text.length) return true;
      const next = text.charCodeAt(pos);
      if (next === 0x0d) return true;
      return next === 0x0a && (pos === 0 || text.charCodeAt(pos - 1) !== 0x0d);
    }
    default:
      return wordLook(look, isWordChar(before(text, pos), !look.endsWith('Ascii')), isWordChar(after(text, pos), !look.endsWith('Ascii')));
  }
}

function wordLook(look: Look, prev: boolean, next: boolean): boolean {
  switch (look) {
    case 'word':
    case 'wordAscii':
      return prev !== next;
    case 'notWord':
    case 'notWordAscii':
      return prev === next;
    case 'wordStart':
    case 'wordStartAscii':
      return !prev && next;
    case 'wordEnd':
    case 'wordEndAscii':
      return prev && !next;
    case 'wordStartHalf':
    case 'wordStartHalfAscii':
      return !prev;
    case 'wordEndHalf':
    case 'wordEndHalfAscii':
      return !next;
    default:
      return false;
  }
}

/**
 * Rust's replacement text for one match: `$$` is a `$`; `$name` takes the
 * longest run of `[0-9A-Za-z_]` (a number is a group index, anything else a
 * group name) and `${name}` any text up to `}`; a group that did not match
 * or does not exist gives nothing, and a `$` that starts no reference stays.
 */
export function expandReplacement(template: string, match: RustMatch, text: string, names: ReadonlyMap<string, number>): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const dollar = template.indexOf('$', i);
    if (dollar === -1) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, dollar);
    const next = template[dollar + 1];
    if (next === '$') {
      out += '$';
      i = dollar + 2;
      continue;
    }
    let name: string | null = null;
    let end = dollar + 1;
    if (next === '{') {
      const close = template.indexOf('}', dollar + 2);
      if (close !== -1) {
        name = template.slice(dollar + 2, close);
        end = close + 1;
      }
    } else {
      const run = /^[0-9A-Za-z_]+/.exec(template.slice(dollar + 1));
      if (run !== null) {
        name = run[0];
        end = dollar + 1 + name.length;
      }
    }
    if (name === null || name === '') {
      out += '$';
      i = dollar + 1;
      continue;
    }
    const index = /^[0-9]+$/.test(name) ? Number(name) : names.get(name);
    const span = index === undefined ? undefined : match.groups[index];
    if (span !== undefined) out += text.slice(span[0], span[1]);
    i = end;
  }
  return out;
}
