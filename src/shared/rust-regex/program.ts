/**
 * A parsed Rust pattern compiled to a Pike-VM program: character tests,
 * splits (the first branch preferred, which gives Rust's leftmost-first
 * matches), jumps, capture saves and look-arounds of zero width.
 *
 * Character tests are JavaScript `v`-mode classes run on one code point at
 * a time (no backtracking can happen on one character), memoized per code
 * point, so Unicode classes, set operations and case folding come from the
 * engine's own tables.
 *
 * @module
 */

import { classChar, type Look, type Node, type Parsed, WORD_CLASS_UNICODE } from './syntax.ts';

export type Inst =
  | { op: 'char'; test: (cp: number) => boolean; source: string; ci: boolean; literal?: number }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; to: number }
  | { op: 'save'; slot: number }
  | { op: 'look'; look: Look }
  | { op: 'match' };

export interface Program {
  insts: Inst[];
  /**
   * A JS `v`-mode class (with brackets) holding every character a match
   * may consume, and whether it is case-insensitive: a match lies inside
   * one maximal run of such characters.
   */
  alphabet: { source: string; ci: boolean };
  /** The fewest characters a match consumes (0: it may be empty). */
  minLength: number;
  /** Characters every match contains (each as a string). */
  required: string[];
  /** Capture slots: two per group (start, end). */
  slots: number;
  groups: number;
  names: Map<string, number>;
}

/** Thrown when a pattern compiles past the size native's engine allows. */
export class RustRegexSizeError extends Error {
  constructor() {
    // Native's words for a pattern whose compiled form is too big.
    super('Compiled regex exceeds size limit of 10485760 bytes.');
    this.name = 'RustRegexSizeError';
  }
}

/**
 * The most instructions a program may have. Native measures bytes of its
 * automaton; this bound refuses the same kind of pattern (a counted
 * repetition of a counted repetition) and keeps every search linear with a
 * small constant.
 */
const MAX_INSTRUCTIONS = 200_000;

export function compile(parsed: Parsed): Program {
  const c = new Compiler();
  c.emit({ op: 'save', slot: 0 });
  c.node(parsed.node);
  c.emit({ op: 'save', slot: 1 });
  c.emit({ op: 'match' });
  const chars = c.insts.filter((i): i is Extract<Inst, { op: 'char' }> => i.op === 'char');
  // One flag for the whole alphabet: with case-insensitive and case-sensitive tests mixed, the `i`
  // flag would shrink a negated class (`[^Z]` would lose `z`), so the alphabet is then every character.
  const ci = chars.some((i) => i.ci);
  const mixed = ci && chars.some((i) => !i.ci);
  const alphabet = { source: mixed ? '[\\s\\S]' : `[${chars.map((i) => i.source).join('')}]`, ci };
  return { insts: c.insts, alphabet, minLength: minLength(c.insts), required: requiredChars(c.insts), slots: parsed.groups * 2, groups: parsed.groups, names: parsed.names };
}

/**
 * The literal characters every match contains: those whose every
 * occurrence in the program, taken out, leaves no way to the match.
 */
function requiredChars(insts: readonly Inst[]): string[] {
  const literals = new Set<number>();
  for (const inst of insts) if (inst.op === 'char' && inst.literal !== undefined) literals.add(inst.literal);
  const out: string[] = [];
  for (const cp of literals) {
    const seen = new Uint8Array(insts.length);
    const stack = [0];
    let reachable = false;
    while (stack.length > 0 && !reachable) {
      const pc = stack.pop()!;
      if (pc >= insts.length || seen[pc]) continue;
      seen[pc] = 1;
      const inst = insts[pc]!;
      if (inst.op === 'match') reachable = true;
      else if (inst.op === 'char') {
        if (inst.literal !== cp) stack.push(pc + 1);
      } else if (inst.op === 'split') stack.push(inst.x, inst.y);
      else if (inst.op === 'jmp') stack.push(inst.to);
      else stack.push(pc + 1);
    }
    if (!reachable) out.push(String.fromCodePoint(cp));
  }
  return out;
}

/** The fewest `char` instructions on any path from the start to `match` (a shortest path, 0/1 weights). */
function minLength(insts: readonly Inst[]): number {
  const dist = new Array<number>(insts.length).fill(Infinity);
  const deque: number[] = [0];
  dist[0] = 0;
  while (deque.length > 0) {
    const pc = deque.shift()!;
    const d = dist[pc]!;
    const inst = insts[pc]!;
    const relax = (to: number, w: number) => {
      if (to < insts.length && d + w < dist[to]!) {
        dist[to] = d + w;
        if (w === 0) deque.unshift(to);
        else deque.push(to);
      }
    };
    switch (inst.op) {
      case 'match':
        return d;
      case 'char':
        relax(pc + 1, 1);
        break;
      case 'split':
        relax(inst.x, 0);
        relax(inst.y, 0);
        break;
      case 'jmp':
        relax(inst.to, 0);
        break;
      default:
        relax(pc + 1, 0);
    }
  }
  return 0;
}

class Compiler {
  readonly insts: Inst[] = [];
  private readonly tests = new Map<string, (cp: number) => boolean>();

  emit(inst: Inst): number {
    if (this.insts.length >= MAX_INSTRUCTIONS) throw new RustRegexSizeError();
    this.insts.push(inst);
    return this.insts.length - 1;
  }

  node(n: Node): void {
    switch (n.t) {
      case 'empty':
        return;
      case 'lit': {
        const source = `[${classChar(n.cp)}]`;
        if (n.ci) this.emit({ op: 'char', test: this.classTest(source, true), source, ci: true });
        else this.emit({ op: 'char', test: literalTest(n.cp), source, ci: false, literal: n.cp });
        return;
      }
      case 'class':
        if (n.asciiFold) {
          // `(?i-u)`: the class, or the other case of an ASCII letter in it.
          const plain = this.classTest(n.source, false);
          const test = (cp: number): boolean => plain(cp) || (isAsciiLetter(cp) && plain(cp ^ 0x20));
          this.emit({ op: 'char', test, source: `[${n.source}A-Za-z]`, ci: false });
          return;
        }
        this.emit({ op: 'char', test: this.classTest(n.source, n.ci), source: n.source, ci: n.ci });
        return;
      case 'look':
        this.emit({ op: 'look', look: n.look });
        return;
      case 'group':
        if (n.index === null) {
          this.node(n.sub);
          return;
        }
        this.emit({ op: 'save', slot: n.index * 2 });
        this.node(n.sub);
        this.emit({ op: 'save', slot: n.index * 2 + 1 });
        return;
      case 'concat':
        for (const sub of n.subs) this.node(sub);
        return;
      case 'alt': {
        const jumps: number[] = [];
        for (let i = 0; i < n.subs.length; i++) {
          if (i < n.subs.length - 1) {
            const split = this.emit({ op: 'split', x: 0, y: 0 });
            (this.insts[split] as { x: number }).x = this.insts.length;
            this.node(n.subs[i]!);
            jumps.push(this.emit({ op: 'jmp', to: 0 }));
            (this.insts[split] as { y: number }).y = this.insts.length;
          } else {
            this.node(n.subs[i]!);
          }
        }
        for (const j of jumps) (this.insts[j] as { to: number }).to = this.insts.length;
        return;
      }
      case 'rep':
        this.repeat(n.sub, n.min, n.max, n.greedy);
        return;
    }
  }

  /**
   * Repetition shaped as Rust's compiler shapes it, since with a body that
   * can match empty the shape decides which thread has priority: `x*` is a
   * loop when `x` consumes, else `(x+)?`; `x{n,}` is `n - 1` copies and a
   * last one that loops back to itself; `x{n,m}` nests the optional copies.
   */
  private repeat(sub: Node, min: number, max: number, greedy: boolean): void {
    if (max === Infinity) {
      if (min === 0 && minNodeLength(sub) > 0) {
        // L: split(body, out) body jmp L
        const split = this.emit({ op: 'split', x: 0, y: 0 });
        const body = this.insts.length;
        this.node(sub);
        this.emit({ op: 'jmp', to: split });
        const out = this.insts.length;
        this.setSplit(split, greedy ? body : out, greedy ? out : body);
        return;
      }
      // `x{n,}`: n - 1 copies, then B: x split(B, out); `x*` of a body that may be empty: split(B, out) B: x split(B, out).
      for (let i = 1; i < min; i++) this.node(sub);
      const question = min === 0 ? this.emit({ op: 'split', x: 0, y: 0 }) : -1;
      const body = this.insts.length;
      this.node(sub);
      const plus = this.emit({ op: 'split', x: 0, y: 0 });
      const out = this.insts.length;
      this.setSplit(plus, greedy ? body : out, greedy ? out : body);
      if (question >= 0) this.setSplit(question, greedy ? body : out, greedy ? out : body);
      return;
    }
    for (let i = 0; i < min; i++) this.node(sub);
    const splits: number[] = [];
    for (let i = min; i < max; i++) {
      splits.push(this.emit({ op: 'split', x: 0, y: 0 }));
      const body = this.insts.length;
      this.node(sub);
      (this.insts[splits[splits.length - 1]!] as { x: number }).x = body;
    }
    const out = this.insts.length;
    for (const split of splits) {
      const body = (this.insts[split] as { x: number }).x;
      this.setSplit(split, greedy ? body : out, greedy ? out : body);
    }
  }

  private setSplit(at: number, x: number, y: number): void {
    this.insts[at] = { op: 'split', x, y };
  }

  private classTest(source: string, ci: boolean): (cp: number) => boolean {
    const key = `${ci ? 'i' : ''}${source}`;
    let test = this.tests.get(key);
    if (test === undefined) {
      test = memoTest(new RegExp(`^${source}$`, ci ? 'iv' : 'v'));
      this.tests.set(key, test);
    }
    return test;
  }
}

/** The fewest characters `node` consumes (looks and empty groups none). */
function minNodeLength(node: Node): number {
  switch (node.t) {
    case 'empty':
    case 'look':
      return 0;
    case 'lit':
    case 'class':
      return 1;
    case 'group':
      return minNodeLength(node.sub);
    case 'rep':
      return node.min === 0 ? 0 : node.min * minNodeLength(node.sub);
    case 'concat':
      return node.subs.reduce((sum, sub) => sum + minNodeLength(sub), 0);
    case 'alt':
      return Math.min(...node.subs.map(minNodeLength));
  }
}

function isAsciiLetter(cp: number): boolean {
  return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
}

function literalTest(cp: number): (c: number) => boolean {
  return (c) => c === cp;
}

/** One-code-point membership, remembered per code point (ASCII in an array). */
function memoTest(re: RegExp): (cp: number) => boolean {
  const ascii = new Int8Array(128).fill(-1);
  const other = new Map<number, boolean>();
  return (cp) => {
    if (cp < 128) {
      const known = ascii[cp]!;
      if (known !== -1) return known === 1;
      const value = re.test(String.fromCharCode(cp));
      ascii[cp] = value ? 1 : 0;
      return value;
    }
    let value = other.get(cp);
    if (value === undefined) {
      value = re.test(String.fromCodePoint(cp));
      // Bounded: a string of many distinct rare characters must not grow this forever.
      if (other.size < 4096) other.set(cp, value);
    }
    return value;
  };
}

const unicodeWord = memoTest(new RegExp(`^${WORD_CLASS_UNICODE}$`, 'v'));

export function isWordChar(cp: number, unicode: boolean): boolean {
  if (cp < 0) return false;
  if (cp < 128) return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f;
  return unicode && unicodeWord(cp);
}
