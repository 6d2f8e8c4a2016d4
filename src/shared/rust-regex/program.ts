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
  | { op: 'char'; test: (cp: number) => boolean }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; to: number }
  | { op: 'save'; slot: number }
  | { op: 'look'; look: Look }
  | { op: 'match' };

export interface Program {
  insts: Inst[];
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
  return { insts: c.insts, slots: parsed.groups * 2, groups: parsed.groups, names: parsed.names };
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
      case 'lit':
        this.emit({ op: 'char', test: n.ci ? this.classTest(`[${classChar(n.cp)}]`, true) : literalTest(n.cp) });
        return;
      case 'class':
        this.emit({ op: 'char', test: this.classTest(n.source, n.ci) });
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

  private repeat(sub: Node, min: number, max: number, greedy: boolean): void {
    for (let i = 0; i < min; i++) this.node(sub);
    if (max === Infinity) {
      // L: split(body, out) body jmp L
      const split = this.emit({ op: 'split', x: 0, y: 0 });
      const body = this.insts.length;
      this.node(sub);
      this.emit({ op: 'jmp', to: split });
      const out = this.insts.length;
      this.setSplit(split, greedy ? body : out, greedy ? out : body);
      return;
    }
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
