/**
 * Running a compiled Rust pattern: a Pike VM (every thread advances one
 * character at a time, so a search takes time linear in the text whatever
 * the pattern: no catastrophic backtracking), Rust's match iteration (an
 * empty match right after a match is skipped) and `replace_all` with
 * Rust's `$name` / `${name}` / `$$` replacement syntax.
 *
 * Threads live in typed arrays (program counter and match start); the
 * capture slots of every group are tracked only when a replacement needs
 * them. Positions where no thread is alive and the character cannot start
 * a match are skipped with one test.
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

/**
 * Steps (thread × character) one text may take beyond a fixed allowance
 * per character before the search gives up: linear time is bounded time
 * only if the constant is too.
 */
export const DEFAULT_STEP_BUDGET = 20_000_000;
/** Steps allowed per character of the text on top of the budget. */
const STEPS_PER_CHAR = 64;

// Opcodes, flattened for the hot loop.
const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const SAVE = 3;
const LOOK = 4;
const MATCH = 5;

export class Matcher {
  private readonly ops: Int8Array;
  private readonly a: Int32Array;
  private readonly b: Int32Array;
  private readonly tests: ((cp: number) => boolean)[];
  private readonly looks: Look[];
  private readonly slots: number;
  private readonly size: number;
  /** Whether a character may start a match (null: anything may, or an empty match). */
  private readonly first: ((cp: number) => boolean) | null;
  // Thread lists: program counters, match starts, and (capture mode) slot arrays.
  private cpc: Int32Array;
  private cst: Int32Array;
  private npc: Int32Array;
  private nst: Int32Array;
  private ccaps: Int32Array[] = [];
  private ncaps: Int32Array[] = [];
  private readonly marks: Int32Array;
  private generation = 0;
  private readonly stack: Int32Array;
  private steps = 0;
  private limit = 0;

  constructor(
    private readonly program: Program,
    /** A fixed budget per text; by default `DEFAULT_STEP_BUDGET` plus an allowance per character. */
    private readonly budget?: number,
  ) {
    const insts = program.insts;
    const n = insts.length;
    this.size = n;
    this.ops = new Int8Array(n);
    this.a = new Int32Array(n);
    this.b = new Int32Array(n);
    this.tests = new Array(n);
    this.looks = new Array(n);
    for (let i = 0; i < n; i++) {
      const inst = insts[i]!;
      switch (inst.op) {
        case 'char':
          this.ops[i] = CHAR;
          this.tests[i] = inst.test;
          break;
        case 'split':
          this.ops[i] = SPLIT;
          this.a[i] = inst.x;
          this.b[i] = inst.y;
          break;
        case 'jmp':
          this.ops[i] = JMP;
          this.a[i] = inst.to;
          break;
        case 'save':
          this.ops[i] = SAVE;
          this.a[i] = inst.slot;
          break;
        case 'look':
          this.ops[i] = LOOK;
          this.looks[i] = inst.look;
          break;
        case 'match':
          this.ops[i] = MATCH;
          break;
      }
    }
    this.slots = program.slots;
    this.cpc = new Int32Array(n);
    this.cst = new Int32Array(n);
    this.npc = new Int32Array(n);
    this.nst = new Int32Array(n);
    this.marks = new Int32Array(n);
    this.stack = new Int32Array(n * 2 + 2);
    this.first = firstChars(insts);
    const alphabet = program.alphabet;
    this.runs = new RegExp(`${alphabet.source}+`, alphabet.ci ? 'giv' : 'gv');
  }

  /** Finds the maximal runs of characters a match may consume (JS engine: one class, no backtracking). */
  private readonly runs: RegExp;

  /** Every match of Rust's `find_iter`, in order (group spans only when `captures`). */
  matches(text: string, captures = false): RustMatch[] {
    const out: RustMatch[] = [];
    this.steps = 0;
    this.limit = this.budget ?? DEFAULT_STEP_BUDGET + STEPS_PER_CHAR * text.length;
    const min = this.program.minLength;
    if (min > 0) {
      // A match consumes at least one character, all from the alphabet: it lies inside one maximal
      // run of alphabet characters, and only runs long enough are searched (no empty match exists).
      if (text.length < min) return out;
      const required = this.program.required;
      for (let i = 0; i < required.length; i++) if (!text.includes(required[i]!)) return out;
      const runs = this.runs;
      runs.lastIndex = 0;
      next: for (let run = runs.exec(text); run !== null; run = runs.exec(text)) {
        const runText = run[0];
        const end = run.index + runText.length;
        if (runText.length < min) continue;
        for (let i = 0; i < required.length; i++) if (!runText.includes(required[i]!)) continue next;
        let at = run.index;
        while (at < end) {
          const m = captures ? this.findCaptures(text, at, end) : this.find(text, at, end);
          if (m === null) break;
          out.push(m);
          at = m.end;
        }
        runs.lastIndex = end;
      }
      return out;
    }
    let at = 0;
    let lastEnd = -1;
    while (at <= text.length) {
      const m = captures ? this.findCaptures(text, at) : this.find(text, at);
      if (m === null) break;
      if (m.start === m.end && m.end === lastEnd) {
        // Rust never reports an empty match right where the last one ended: step over one character.
        if (at >= text.length) break;
        at = nextIndex(text, m.end);
        continue;
      }
      out.push(m);
      lastEnd = m.end;
      at = m.end;
    }
    return out;
  }

  /** The leftmost-first match at or after `from` and before `stop` (no group spans), or null. */
  find(text: string, from: number, stop = text.length): RustMatch | null {
    const ops = this.ops;
    const tests = this.tests;
    const first = this.first;
    const marks = this.marks;
    let cpc = this.cpc;
    let cst = this.cst;
    let npc = this.npc;
    let nst = this.nst;
    let clen = 0;
    let matchStart = -1;
    let matchEnd = -1;
    let pos = from;
    let steps = this.steps;
    const limit = this.limit;
    for (;;) {
      const cp = pos < stop ? text.codePointAt(pos)! : -1;
      const width = cp > 0xffff ? 2 : 1;
      if (matchStart < 0) {
        if (clen === 0 && first !== null && (cp < 0 || !first(cp))) {
          // Nothing alive and nothing can start here.
          if (cp < 0) break;
          pos += width;
          continue;
        }
        const generation = ++this.generation;
        for (let i = 0; i < clen; i++) marks[cpc[i]!] = generation;
        clen = this.addFast(cpc, cst, clen, 0, pos, text, pos);
      }
      if (clen === 0) {
        if (matchStart >= 0 || cp < 0) break;
        pos += width;
        continue;
      }
      steps += clen;
      if (steps > limit) throw new RustRegexBudgetError(limit);
      this.generation++;
      let nlen = 0;
      for (let i = 0; i < clen; i++) {
        const pc = cpc[i]!;
        const op = ops[pc];
        if (op === MATCH) {
          matchStart = cst[i]!;
          matchEnd = pos;
          // Leftmost-first: threads after this one have lower priority.
          break;
        }
        if (op === CHAR && cp >= 0 && tests[pc]!(cp)) nlen = this.addFast(npc, nst, nlen, pc + 1, cst[i]!, text, pos + width);
      }
      if (cp < 0) break;
      const tp = cpc;
      cpc = npc;
      npc = tp;
      const ts = cst;
      cst = nst;
      nst = ts;
      clen = nlen;
      pos += width;
      if (clen === 0 && matchStart >= 0) break;
    }
    this.steps = steps;
    if (matchStart < 0) return null;
    return { start: matchStart, end: matchEnd, groups: [[matchStart, matchEnd]] };
  }

  /**
   * Follows the zero-width instructions from `pc0` at `pos`, adding the
   * threads that consume input (or match) to the list, in priority order.
   * A `save` of slot 0 sets the thread's start. Returns the list's length.
   */
  private addFast(pcs: Int32Array, starts: Int32Array, len: number, pc0: number, start0: number, text: string, pos: number): number {
    const ops = this.ops;
    const marks = this.marks;
    const generation = this.generation;
    // The common case: the next instruction consumes a character.
    const op0 = ops[pc0];
    if (op0 === CHAR || op0 === MATCH) {
      if (marks[pc0] === generation) return len;
      marks[pc0] = generation;
      pcs[len] = pc0;
      starts[len] = start0;
      return len + 1;
    }
    const stack = this.stack;
    let sp = 0;
    stack[sp++] = pc0;
    stack[sp++] = start0;
    while (sp > 0) {
      const start = stack[--sp]!;
      const pc = stack[--sp]!;
      if (marks[pc] === generation) continue;
      marks[pc] = generation;
      switch (ops[pc]) {
        case JMP:
          stack[sp++] = this.a[pc]!;
          stack[sp++] = start;
          break;
        case SPLIT:
          // The preferred branch is explored first: push it last.
          stack[sp++] = this.b[pc]!;
          stack[sp++] = start;
          stack[sp++] = this.a[pc]!;
          stack[sp++] = start;
          break;
        case SAVE:
          stack[sp++] = pc + 1;
          stack[sp++] = this.a[pc] === 0 ? pos : start;
          break;
        case LOOK:
          if (lookHolds(this.looks[pc]!, text, pos)) {
            stack[sp++] = pc + 1;
            stack[sp++] = start;
          }
          break;
        default:
          pcs[len] = pc;
          starts[len] = start;
          len++;
      }
    }
    return len;
  }

  /** `find` with every group's span (for replacements that name groups). */
  findCaptures(text: string, from: number, stop = text.length): RustMatch | null {
    const ops = this.ops;
    const tests = this.tests;
    let clen = 0;
    let matched: Int32Array | null = null;
    let pos = from;
    for (;;) {
      const cp = pos < stop ? text.codePointAt(pos)! : -1;
      const width = cp > 0xffff ? 2 : 1;
      if (matched === null) {
        this.generation++;
        for (let i = 0; i < clen; i++) this.marks[this.cpc[i]!] = this.generation;
        clen = this.addCaptures(this.cpc, this.ccaps, clen, 0, new Int32Array(this.slots).fill(-1), text, pos);
      }
      if (clen === 0) {
        if (matched !== null || cp < 0) break;
        pos += width;
        continue;
      }
      this.steps += clen;
      if (this.steps > this.limit) throw new RustRegexBudgetError(this.limit);
      this.generation++;
      let nlen = 0;
      for (let i = 0; i < clen; i++) {
        const pc = this.cpc[i]!;
        const op = ops[pc];
        if (op === MATCH) {
          matched = this.ccaps[i]!;
          break;
        }
        if (op === CHAR && cp >= 0 && tests[pc]!(cp)) nlen = this.addCaptures(this.npc, this.ncaps, nlen, pc + 1, this.ccaps[i]!, text, pos + width);
      }
      if (cp < 0) break;
      [this.cpc, this.npc] = [this.npc, this.cpc];
      [this.ccaps, this.ncaps] = [this.ncaps, this.ccaps];
      clen = nlen;
      pos += width;
      if (clen === 0 && matched !== null) break;
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

  private addCaptures(pcs: Int32Array, caps: Int32Array[], len: number, pc0: number, caps0: Int32Array, text: string, pos: number): number {
    const ops = this.ops;
    const pending: { pc: number; caps: Int32Array }[] = [{ pc: pc0, caps: caps0 }];
    while (pending.length > 0) {
      const { pc, caps: c } = pending.pop()!;
      if (this.marks[pc] === this.generation) continue;
      this.marks[pc] = this.generation;
      switch (ops[pc]) {
        case JMP:
          pending.push({ pc: this.a[pc]!, caps: c });
          break;
        case SPLIT:
          pending.push({ pc: this.b[pc]!, caps: c });
          pending.push({ pc: this.a[pc]!, caps: c });
          break;
        case SAVE: {
          const copy = c.slice();
          copy[this.a[pc]!] = pos;
          pending.push({ pc: pc + 1, caps: copy });
          break;
        }
        case LOOK:
          if (lookHolds(this.looks[pc]!, text, pos)) pending.push({ pc: pc + 1, caps: c });
          break;
        default:
          pcs[len] = pc;
          caps[len] = c;
          len++;
      }
    }
    return len;
  }

  /** The instructions' count (for the size of the work per character). */
  get instructions(): number {
    return this.size;
  }
}

/**
 * The characters a match can start with: the tests of the `char`
 * instructions reachable from the start without consuming input, or null
 * when a match may be empty (then every position is tried).
 */
function firstChars(insts: readonly Inst[]): ((cp: number) => boolean) | null {
  const tests: ((cp: number) => boolean)[] = [];
  const seen = new Set<number>();
  const stack = [0];
  while (stack.length > 0) {
    const pc = stack.pop()!;
    if (seen.has(pc)) continue;
    seen.add(pc);
    const inst = insts[pc]!;
    switch (inst.op) {
      case 'char':
        tests.push(inst.test);
        break;
      case 'match':
        return null;
      case 'split':
        stack.push(inst.x, inst.y);
        break;
      case 'jmp':
        stack.push(inst.to);
        break;
      default:
        // `save` and looks: a look only narrows where a match starts, so skipping it keeps this an over-approximation.
        stack.push(pc + 1);
    }
  }
  if (tests.length === 1) return tests[0]!;
  return (cp) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(cp)) return true;
    return false;
  };
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
    default: {
      const unicode = !look.endsWith('Ascii');
      return wordLook(look, isWordChar(before(text, pos), unicode), isWordChar(after(text, pos), unicode));
    }
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
 * group name) and `${name}` any text up to `}` (even none); a group that did
 * not match or does not exist gives nothing, and a `$` that starts no
 * reference stays.
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
    if (name === null) {
      out += '$';
      i = dollar + 1;
      continue;
    }
    // Rust reads a name as a group number when `usize` parses it (a leading `+` included); `${}` names no group.
    const index = /^\+?[0-9]+$/.test(name) ? Number(name) : names.get(name);
    const span = index === undefined ? undefined : match.groups[index];
    if (span !== undefined) out += text.slice(span[0], span[1]);
    i = end;
  }
  return out;
}
