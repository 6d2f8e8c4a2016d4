/**
 * Rust `regex` syntax, parsed: what a pattern written for NeMo Relay's
 * configuration (a `pii_redaction` matcher) means, and the error native's
 * engine reports for one it refuses, worded and placed as Rust words it
 * (`regex parse error:` + the pattern + carets + `error: ...`).
 *
 * Rust's syntax differs from JavaScript's in what matters here: no
 * look-around and no backreferences (refused), `\d`, `\w`, `\s` and `\b`
 * are Unicode-aware by default, `$` is the end of the text (not before a
 * final newline), flags are `imsUuxR`, classes nest and take `&&`, `--`
 * and `~~`, and `\p{Greek}` names a script. The tree built here is run by
 * `search.ts` (a Pike VM: time linear in the input, whatever the pattern).
 *
 * @module
 */

import { pinned } from './unicode-version.ts';
import { isNativeWhitespace } from '../whitespace.ts';

/** Rust's words for a `(?-u)` pattern that could match bytes that are not UTF-8. */
const INVALID_UTF8 = 'pattern can match invalid UTF-8';

/** A character-class item, kept as the JavaScript `v`-mode class text that tests one code point. */
export interface ClassNode {
  t: 'class';
  /** JS `v`-flag class body (without the outer brackets' negation, which is in `source`). */
  source: string;
  /** Case-insensitive membership (the `i` flag was on). */
  ci: boolean;
  /** Case-insensitive within ASCII only (`(?i-u)`): `k` takes `K`, not U+212A. */
  asciiFold?: boolean;
}

export type Look =
  | 'start'
  | 'end'
  | 'startLine'
  | 'endLine'
  | 'startLineCRLF'
  | 'endLineCRLF'
  | 'word'
  | 'notWord'
  | 'wordAscii'
  | 'notWordAscii'
  | 'wordStart'
  | 'wordEnd'
  | 'wordStartAscii'
  | 'wordEndAscii'
  | 'wordStartHalf'
  | 'wordEndHalf'
  | 'wordStartHalfAscii'
  | 'wordEndHalfAscii';

export type Node =
  | { t: 'empty' }
  | { t: 'lit'; cp: number; ci: boolean }
  | ClassNode
  | { t: 'look'; look: Look }
  | { t: 'rep'; min: number; max: number; greedy: boolean; sub: Node }
  | { t: 'group'; index: number | null; sub: Node }
  | { t: 'concat'; subs: Node[] }
  | { t: 'alt'; subs: Node[] };

export interface Parsed {
  node: Node;
  /** Capture groups, group 0 (the whole match) included. */
  groups: number;
  /** Named groups → index. */
  names: Map<string, number>;
}

/** A pattern Rust's engine refuses; `message` is its text. */
export class RustRegexSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RustRegexSyntaxError';
  }
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
  u: boolean;
  x: boolean;
  R: boolean;
}

const DEFAULT_FLAGS: Flags = { i: false, m: false, s: false, U: false, u: true, x: false, R: false };

/** Rust's nesting limit (regex-syntax's default). */
const NEST_LIMIT = 250;

/** Parses `pattern`; throws `RustRegexSyntaxError` with Rust's message. */
export function parseRustRegex(pattern: string): Parsed {
  return new Parser(pattern).parse();
}

class Parser {
  /** The pattern as code points, so positions count characters as Rust's carets do. */
  private readonly cps: number[];
  private pos = 0;
  private groups = 1;
  private readonly names = new Map<string, number>();
  private readonly nameSpans = new Map<string, [number, number]>();
  private depth = 0;

  constructor(private readonly pattern: string) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!);
  }

  parse(): Parsed {
    const node = this.alternation({ ...DEFAULT_FLAGS }, null);
    if (this.pos < this.cps.length) {
      // Only an unmatched ')' stops the top level early.
      this.fail('unopened group', this.pos, this.pos + 1);
    }
    return { node, groups: this.groups, names: this.names };
  }

  // ---- errors -------------------------------------------------------------

  private fail(message: string, start: number, end: number, second?: [number, number]): never {
    throw new RustRegexSyntaxError(formatError(this.pattern, this.cps, message, start, end, second));
  }

  // ---- scanning -----------------------------------------------------------

  private peek(offset = 0): number | undefined {
    return this.cps[this.pos + offset];
  }

  private done(): boolean {
    return this.pos >= this.cps.length;
  }

  /** In verbose mode, whitespace and `#` comments between tokens are skipped. */
  private skipVerbose(flags: Flags): void {
    if (!flags.x) return;
    for (;;) {
      const c = this.peek();
      if (c === undefined) return;
      if (isWhitespace(c)) {
        this.pos++;
      } else if (c === 0x23 /* # */) {
        while (!this.done() && this.peek() !== 0x0a) this.pos++;
      } else {
        return;
      }
    }
  }

  // ---- grammar --------------------------------------------------------------

  /**
   * `a|b|c` up to a closing `)` (when `open` is the group's start) or the end.
   * `flags` is updated in place by inline `(?flags)` groups, which last to
   * the end of the enclosing group.
   */
  private alternation(flags: Flags, open: number | null): Node {
    const branches: Node[] = [];
    let items: Node[] = [];
    for (;;) {
      this.skipVerbose(flags);
      const c = this.peek();
      if (c === undefined) {
        if (open !== null) this.fail('unclosed group', open, open + 1);
        break;
      }
      if (c === 0x29 /* ) */) {
        if (open === null) this.fail('unopened group', this.pos, this.pos + 1);
        break;
      }
      if (c === 0x7c /* | */) {
        this.pos++;
        branches.push(concat(items));
        items = [];
        continue;
      }
      if (c === 0x2a || c === 0x2b || c === 0x3f /* * + ? */) {
        this.repeat(items, flags, c === 0x2a ? 0 : c === 0x2b ? 1 : 0, c === 0x3f ? 1 : Infinity, this.pos, this.pos + 1);
        continue;
      }
      if (c === 0x7b /* { */) {
        this.counted(items, flags);
        continue;
      }
      const atom = this.atom(flags);
      if (atom !== null) items.push(atom);
    }
    branches.push(concat(items));
    return branches.length === 1 ? branches[0]! : { t: 'alt', subs: branches };
  }

  private repeat(items: Node[], flags: Flags, min: number, max: number, start: number, end: number): void {
    const last = items.pop();
    if (last === undefined || (last.t === 'empty' && (last as { flagOnly?: boolean }).flagOnly)) {
      this.fail('repetition operator missing expression', start, end);
    }
    this.pos = end;
    let greedy = true;
    if (this.peek() === 0x3f /* ? */) {
      greedy = false;
      this.pos++;
    }
    if (flags.U) greedy = !greedy;
    items.push({ t: 'rep', min, max, greedy, sub: last });
  }

  private counted(items: Node[], flags: Flags): void {
    const start = this.pos;
    this.pos++;
    const end = this.cps.length;
    this.skipVerbose(flags);
    if (this.pos >= end) this.fail('unclosed counted repetition', start, this.pos);
    const min = this.decimal(flags, start);
    let max = min;
    this.skipVerbose(flags);
    if (this.peek() === 0x2c /* , */) {
      this.pos++;
      this.skipVerbose(flags);
      if (this.done()) this.fail('unclosed counted repetition', start, this.pos);
      if (this.peek() === 0x7d /* } */) {
        max = Infinity;
      } else {
        max = this.decimal(flags, start);
      }
    }
    this.skipVerbose(flags);
    if (this.peek() !== 0x7d) this.fail('unclosed counted repetition', start, this.pos);
    this.pos++;
    if (max < min) this.fail('invalid repetition count range, the start must be <= the end', start, this.pos);
    const closeEnd = this.pos;
    this.pos = start;
    this.repeatAt(items, flags, min, max, start, closeEnd);
  }

  private repeatAt(items: Node[], flags: Flags, min: number, max: number, start: number, end: number): void {
    this.repeat(items, flags, min, max, start, end);
  }

  /** A count in `{n,m}`: Rust allows whitespace around it in any mode (`x{ 41 }`), and between its digits in verbose mode. */
  private decimal(flags: Flags, openBrace: number): number {
    while (!this.done() && isWhitespace(this.peek()!)) this.pos++;
    const start = this.pos;
    let text = '';
    while (!this.done() && isDigit(this.peek()!)) {
      text += String.fromCodePoint(this.peek()!);
      this.pos++;
      this.skipVerbose(flags);
    }
    if (text === '') {
      if (this.done()) this.fail('unclosed counted repetition', openBrace, this.pos);
      this.fail('repetition quantifier expects a valid decimal', this.pos, this.pos + 1);
    }
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value > 0xffff_ffff) this.fail('decimal literal invalid', start, this.pos);
    while (!this.done() && isWhitespace(this.peek()!)) this.pos++;
    return value;
  }

  private atom(flags: Flags): Node | null {
    const c = this.peek()!;
    const start = this.pos;
    switch (c) {
      case 0x28 /* ( */:
        return this.group(flags);
      case 0x5b /* [ */: {
        const source = this.bracketClass(flags);
        // Without Unicode (`(?-u)`) case folds within ASCII only.
        return flags.u ? { t: 'class', source, ci: flags.i } : { t: 'class', source, ci: false, asciiFold: flags.i };
      }
      case 0x2e /* . */:
        // Without Unicode `.` takes any byte, which Rust refuses for text.
        if (!flags.u) this.fail(INVALID_UTF8, this.pos, this.pos + 1);
        this.pos++;
        return { t: 'class', source: dotClass(flags), ci: false };
      case 0x5e /* ^ */:
        this.pos++;
        return { t: 'look', look: flags.m ? (flags.R ? 'startLineCRLF' : 'startLine') : 'start' };
      case 0x24 /* $ */:
        this.pos++;
        return { t: 'look', look: flags.m ? (flags.R ? 'endLineCRLF' : 'endLine') : 'end' };
      case 0x5c /* \ */:
        return this.escape(flags, false) as Node;
      default:
        this.pos++;
        void start;
        return literal(c, flags);
    }
  }

  private group(flags: Flags): Node | null {
    const open = this.pos;
    this.pos++;
    if (this.depth >= NEST_LIMIT) this.fail('exceed the maximum number of nested parentheses/brackets (250)', open, open + 1);
    let index: number | null = null;
    const inner: Flags = { ...flags };
    if (this.peek() === 0x3f /* ? */) {
      const q = this.pos;
      this.pos++;
      const next = this.peek();
      if (next === undefined) this.fail('unclosed group', open, open + 1);
      if (next === 0x3d || next === 0x21 /* = ! */) this.fail('look-around, including look-ahead and look-behind, is not supported', open, q + 2);
      if (next === 0x3c /* < */ && (this.peek(1) === 0x3d || this.peek(1) === 0x21)) {
        this.fail('look-around, including look-ahead and look-behind, is not supported', open, q + 3);
      }
      if (next === 0x50 /* P */ && this.peek(1) === 0x3c) {
        this.pos += 2;
        index = this.captureName(open);
      } else if (next === 0x3c) {
        this.pos += 1;
        index = this.captureName(open);
      } else {
        // Flags: `(?flags)` applies to the rest of the enclosing group; `(?flags:...)` to its body.
        const colon = this.flagGroup(inner);
        if (!colon) {
          Object.assign(flags, inner);
          return { t: 'empty', flagOnly: true } as Node;
        }
      }
    } else {
      index = this.groups++;
    }
    this.depth++;
    const sub = this.alternation(inner, open);
    this.depth--;
    this.pos++; // ')'
    return { t: 'group', index, sub };
  }

  private captureName(open: number): number {
    const start = this.pos;
    while (!this.done() && this.peek() !== 0x3e /* > */) this.pos++;
    if (this.done()) this.fail('unclosed capture group name', start, this.pos);
    const name = String.fromCodePoint(...this.cps.slice(start, this.pos));
    const nameEnd = this.pos;
    this.pos++;
    if (name === '') this.fail('empty capture group name', start, start);
    const valid = /^[\p{L}\p{N}_\[\].]+$/u.test(name) && !/^\p{N}/u.test(name) && /^[\p{L}_]/u.test(name);
    if (!valid) {
      // Rust points at the first character that cannot start or continue a name.
      const chars = Array.from(name);
      let bad = 0;
      for (let i = 0; i < chars.length; i++) {
        const ch = chars[i]!;
        const ok = i === 0 ? /^[\p{L}_]$/u.test(ch) : /^[\p{L}\p{N}_\[\].]$/u.test(ch);
        if (!ok) {
          bad = i;
          break;
        }
      }
      this.fail('invalid capture group character', start + bad, start + bad + 1);
    }
    const earlier = this.nameSpans.get(name);
    if (earlier !== undefined) this.fail('duplicate capture group name', earlier[0], earlier[1], [start, nameEnd]);
    const index = this.groups++;
    this.names.set(name, index);
    this.nameSpans.set(name, [start, nameEnd]);
    void open;
    return index;
  }

  /** Reads flags after `(?`; returns true for `(?flags:` (a group), false for `(?flags)`. */
  private flagGroup(flags: Flags): boolean {
    let negate = false;
    let negatePos = -1;
    let sawFlagAfterNegation = false;
    const seen = new Map<number, number>();
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail('expected flag but got end of regex', this.pos, this.pos);
      if (c === 0x3a /* : */ || c === 0x29 /* ) */) {
        if (negate && !sawFlagAfterNegation) this.fail('dangling flag negation operator', negatePos, negatePos + 1);
        this.pos++;
        if (c === 0x3a) return true;
        return false;
      }
      if (c === 0x2d /* - */) {
        if (negate) this.fail('flag negation operator repeated', this.pos, this.pos + 1);
        negate = true;
        negatePos = this.pos;
        this.pos++;
        continue;
      }
      const name = String.fromCodePoint(c) as keyof Flags;
      if (!'imsUuxR'.includes(name)) this.fail('unrecognized flag', this.pos, this.pos + 1);
      const earlier = seen.get(c);
      if (earlier !== undefined) this.fail('duplicate flag', earlier, earlier + 1, [this.pos, this.pos + 1]);
      seen.set(c, this.pos);
      flags[name] = !negate;
      if (negate) sawFlagAfterNegation = true;
      this.pos++;
    }
  }

  // ---- escapes ----------------------------------------------------------------

  /**
   * An escape at `\`. Outside a class it is a node; inside one (`inClass`),
   * a class item: a JS class fragment (`{ source }`) or a literal code point.
   */
  private escape(flags: Flags, inClass: boolean): Node | { source: string } | number {
    const start = this.pos;
    this.pos++;
    const c = this.peek();
    if (c === undefined) this.fail('incomplete escape sequence, reached end of pattern prematurely', start, start + 1);
    this.pos++;
    const ch = String.fromCodePoint(c);
    const lit = (cp: number): Node | number => (inClass ? cp : literal(cp, flags));
    // Rust case-folds Perl and Unicode classes too under `i` (`(?i)\p{Lu}` takes `a`), then negates
    // (the ASCII ones of `(?-u)` are closed under ASCII folding already).
    const cls = (source: string): Node | { source: string } => (inClass ? { source } : { t: 'class', source, ci: flags.i && flags.u });
    switch (ch) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        // Without Unicode a negated Perl class takes bytes outside ASCII, which Rust refuses for text.
        if (!flags.u && ch === ch.toUpperCase()) this.fail(INVALID_UTF8, start, this.pos);
        const body = perlClass(ch.toLowerCase(), flags.u);
        return cls(ch === ch.toUpperCase() ? `[^${body}]` : `[${body}]`);
      }
      case 'p':
      case 'P': {
        if (!flags.u) this.fail('Unicode not allowed here', start, this.pos);
        const body = this.unicodeClass(start, flags);
        return cls(ch === 'P' ? `[^${body}]` : `[${body}]`);
      }
      case 'n':
        return lit(0x0a);
      case 't':
        return lit(0x09);
      case 'r':
        return lit(0x0d);
      case 'f':
        return lit(0x0c);
      case 'v':
        return lit(0x0b);
      case 'a':
        return lit(0x07);
      case 'x':
      case 'u':
      case 'U': {
        const braced = this.peek() === 0x7b;
        const value = this.hex(ch, start);
        // Without Unicode `\x80`..`\xFF` (two digits, no braces) is a byte outside ASCII: Rust refuses it for text.
        if (!flags.u && ch === 'x' && !braced && value > 0x7f) this.fail(INVALID_UTF8, start, this.pos);
        return lit(value);
      }
      case 'A':
        if (inClass) this.fail('unrecognized escape sequence', start, this.pos);
        return { t: 'look', look: 'start' };
      case 'z':
        if (inClass) this.fail('unrecognized escape sequence', start, this.pos);
        return { t: 'look', look: 'end' };
      case 'b': {
        if (inClass) this.fail('invalid escape sequence found in character class', start, this.pos);
        // `\b{start}` and the like only when a name letter follows the brace: `\b{4}` repeats `\b`.
        if (this.peek() === 0x7b /* { */ && isBoundaryNameChar(this.peekPastSpace(flags, 1))) return { t: 'look', look: this.wordBoundaryName(flags, start) };
        return { t: 'look', look: flags.u ? 'word' : 'wordAscii' };
      }
      case 'B':
        if (inClass) this.fail('unrecognized escape sequence', start, this.pos);
        return { t: 'look', look: flags.u ? 'notWord' : 'notWordAscii' };
      case '<':
        if (inClass) this.fail('unrecognized escape sequence', start, this.pos);
        return { t: 'look', look: flags.u ? 'wordStart' : 'wordStartAscii' };
      case '>':
        if (inClass) this.fail('unrecognized escape sequence', start, this.pos);
        return { t: 'look', look: flags.u ? 'wordEnd' : 'wordEndAscii' };
      default:
        break;
    }
    if (c >= 0x30 && c <= 0x39) this.fail('backreferences are not supported', start, this.pos);
    // Any ASCII punctuation may be escaped (meta or not); so may a space, a `#` and the like.
    if (isEscapablePunct(c)) return lit(c);
    this.fail('unrecognized escape sequence', start, this.pos);
  }

  /** The character `offset` places on, skipping whitespace in verbose mode as Rust does inside `\b{...}`. */
  private peekPastSpace(flags: Flags, offset: number): number | undefined {
    let at = this.pos + offset;
    while (flags.x && at < this.cps.length && isWhitespace(this.cps[at]!)) at++;
    return this.cps[at];
  }

  private wordBoundaryName(flags: Flags, start: number): Look {
    const open = this.pos;
    this.pos++;
    let name = '';
    for (;;) {
      if (flags.x) while (!this.done() && isWhitespace(this.peek()!)) this.pos++;
      const c = this.peek();
      if (c === undefined || !isBoundaryNameChar(c)) break;
      name += String.fromCodePoint(c);
      this.pos++;
    }
    if (this.peek() !== 0x7d) this.fail('special word boundary assertion is either unclosed or contains an invalid character', open, this.pos);
    this.pos++;
    const u = flags.u;
    switch (name) {
      case 'start':
        return u ? 'wordStart' : 'wordStartAscii';
      case 'end':
        return u ? 'wordEnd' : 'wordEndAscii';
      case 'start-half':
        return u ? 'wordStartHalf' : 'wordStartHalfAscii';
      case 'end-half':
        return u ? 'wordEndHalf' : 'wordEndHalfAscii';
    }
    this.fail('unrecognized word boundary name', start, this.pos);
  }

  private hex(kind: string, start: number): number {
    const digits = kind === 'x' ? 2 : kind === 'u' ? 4 : 8;
    let text = '';
    let spanStart = this.pos;
    if (this.peek() === 0x7b /* { */) {
      this.pos++;
      spanStart = this.pos;
      while (!this.done() && this.peek() !== 0x7d) this.pos++;
      if (this.done()) this.fail('unclosed hexadecimal literal (missing })', start, this.pos);
      text = String.fromCodePoint(...this.cps.slice(spanStart, this.pos));
      this.pos++;
      if (text === '' || !/^[0-9A-Fa-f]+$/.test(text)) this.fail('hexadecimal literal empty or invalid', spanStart, spanStart + Array.from(text).length);
    } else {
      for (let i = 0; i < digits; i++) {
        const c = this.peek();
        if (c === undefined) this.fail('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
        if (!isHex(c)) this.fail('hexadecimal literal is not a Unicode scalar value', this.pos, this.pos + 1);
        text += String.fromCodePoint(c);
        this.pos++;
      }
    }
    const value = parseInt(text, 16);
    if (!(value <= 0x10ffff) || (value >= 0xd800 && value <= 0xdfff)) {
      this.fail('hexadecimal literal is not a Unicode scalar value', spanStart, spanStart + Array.from(text).length);
    }
    return value;
  }

  private unicodeClass(start: number, flags: Flags): string {
    let name: string;
    if (this.peek() === 0x7b /* { */) {
      this.pos++;
      const nameStart = this.pos;
      while (!this.done() && this.peek() !== 0x7d) this.pos++;
      if (this.done()) this.fail('unclosed Unicode class (missing })', start, this.pos);
      name = String.fromCodePoint(...this.cps.slice(nameStart, this.pos));
      // Verbose mode skips whitespace inside the braces too (`\p{Nd\t}`); otherwise only a space is ignored (`loose`).
      if (flags.x) name = Array.from(name).filter((ch) => !isWhitespace(ch.codePointAt(0)!)).join('');
      this.pos++;
    } else {
      const c = this.peek();
      if (c === undefined) this.fail('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
      name = String.fromCodePoint(c);
      this.pos++;
    }
    const source = unicodePropertyClass(name);
    if (source === null) this.fail('Unicode property not found', start, this.pos);
    return source;
  }

  // ---- bracket classes ----------------------------------------------------------

  /** `[...]` as a JS `v`-mode class (with its brackets). */
  private bracketClass(flags: Flags): string {
    const open = this.pos;
    this.pos++;
    this.depth++;
    if (this.depth > NEST_LIMIT) this.fail('exceed the maximum number of nested parentheses/brackets (250)', open, open + 1);
    let negated = false;
    // Verbose mode skips whitespace before and after the `^` too (`[ --a]` starts with dashes).
    if (flags.x) this.skipClassSpace();
    if (this.peek() === 0x5e /* ^ */) {
      negated = true;
      this.pos++;
      if (flags.x) this.skipClassSpace();
    }
    // Any number of `-` first (after `^`) are literals, as Rust reads them (`[--a]` is `-` or `a`).
    let dashes = '';
    while (this.peek() === 0x2d) {
      dashes += '\\-';
      this.pos++;
      if (flags.x) this.skipClassSpace();
    }
    // A `]` first (after `^`, no dash before it) is a literal; Rust's span of the opening includes it.
    const openEnd = this.pos + (dashes === '' && this.peek() === 0x5d ? 1 : 0);
    const body = this.classUnion(flags, open, openEnd, dashes === '', dashes);
    this.depth--;
    const source = `[${negated ? '^' : ''}${body}]`;
    // Without Unicode each class (nested ones too) must stay within ASCII: Rust refuses one that takes
    // other bytes (`[^a]`). Its items are ASCII, so one code point past ASCII answers for all of them.
    if (!flags.u && new RegExp(`^${source}$`, 'v').test('\u0080')) this.fail(INVALID_UTF8, open, this.pos);
    return source;
  }

  /**
   * The items of a class up to its `]`, with `&&`, `--`, `~~` between
   * operands (left-associative, all one precedence), as JS `v`-mode text.
   */
  private classUnion(flags: Flags, open: number, openEnd: number, atStart: boolean, leading = ''): string {
    let operand: string[] = leading === '' ? [] : [leading];
    let result: string | null = null;
    let op: '&&' | '--' | '~~' | null = null;
    let first = atStart;
    const finishOperand = (): string => `[${operand.join('')}]`;
    for (;;) {
      if (flags.x) this.skipClassSpace();
      const c = this.peek();
      if (c === undefined) this.fail('unclosed character class', open, openEnd);
      if (c === 0x5d /* ] */ && !first) {
        this.pos++;
        break;
      }
      const two = this.peek(1);
      // An operator first has an empty left operand, as in Rust: `[&&a]` is empty, `[~~a]` is `a`.
      if (two !== undefined && ((c === 0x26 && two === 0x26) || (c === 0x2d && two === 0x2d) || (c === 0x7e && two === 0x7e))) {
        const current = finishOperand();
        result = result === null ? current : combine(result, op!, current);
        op = c === 0x26 ? '&&' : c === 0x2d ? '--' : '~~';
        operand = [];
        this.pos += 2;
        first = false;
        continue;
      }
      operand.push(this.classItem(flags, open, first));
      first = false;
    }
    const last = finishOperand();
    const whole = result === null ? last : combine(result, op!, last);
    return whole;
  }

  private skipClassSpace(): void {
    for (;;) {
      const c = this.peek();
      if (c === undefined) return;
      if (isWhitespace(c)) this.pos++;
      else if (c === 0x23) {
        while (!this.done() && this.peek() !== 0x0a) this.pos++;
      } else return;
    }
  }

  /** One class item: a nested class, an ASCII class, a range, an escape or a literal. */
  private classItem(flags: Flags, open: number, first: boolean): string {
    const c = this.peek()!;
    if (c === 0x5b /* [ */) {
      const ascii = this.asciiClass(flags);
      if (ascii !== null) return ascii;
      return this.bracketClass(flags);
    }
    const startPos = this.pos;
    const low = this.classAtom(flags, first);
    // A range `a-z` unless the `-` is last or starts an operator.
    if (this.peek() === 0x2d && this.peek(1) !== 0x5d && this.peek(1) !== undefined && this.peek(1) !== 0x2d) {
      if (typeof low !== 'number') this.fail('invalid range boundary, must be a literal', startPos, this.pos);
      this.pos++;
      const highStart = this.pos;
      const high = this.classAtom(flags, false);
      if (typeof high !== 'number') this.fail('invalid range boundary, must be a literal', highStart, this.pos);
      if (high < low) this.fail('invalid character class range, the start must be <= the end', startPos, this.pos);
      return `${classChar(low)}-${classChar(high)}`;
    }
    void open;
    return typeof low === 'number' ? classChar(low) : low.source;
  }

  /** A literal code point, or a class fragment for `\d`, `\p{..}` and the like. */
  private classAtom(flags: Flags, first: boolean): number | { source: string } {
    const c = this.peek()!;
    const at = this.pos;
    let item: number | { source: string };
    if (c === 0x5c) {
      item = this.escape(flags, true) as number | { source: string };
    } else {
      this.pos++;
      item = c;
    }
    void first;
    // Without Unicode a class holds bytes: a character outside ASCII cannot be one.
    if (!flags.u && typeof item === 'number' && item > 0x7f) this.fail('Unicode not allowed here', at, this.pos);
    return item;
  }

  /** `[:alpha:]` and friends inside a class, or null (then `[` opens a nested class). */
  private asciiClass(flags: Flags): string | null {
    const at = this.pos;
    const text = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 12));
    const match = /^\[:(\^?)([a-z]+):\]/.exec(text);
    if (match === null) return null;
    const body = ASCII_CLASSES[match[2]!];
    if (body === undefined) return null;
    this.pos += match[0].length;
    // Without Unicode a negated ASCII class takes other bytes, which Rust refuses for text.
    if (!flags.u && match[1] === '^') this.fail(INVALID_UTF8, at, this.pos);
    return match[1] === '^' ? `[^${body}]` : `[${body}]`;
  }
}

/**
 * A literal character under `flags`: case-insensitive with Unicode's
 * folding, or under `(?i-u)` an ASCII letter and its other case only (a
 * character outside ASCII then matches itself).
 */
function literal(cp: number, flags: Flags): Node {
  if (flags.u || !flags.i) return { t: 'lit', cp, ci: flags.i };
  const isLetter = (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  if (!isLetter) return { t: 'lit', cp, ci: false };
  return { t: 'class', source: `[${String.fromCharCode(cp | 0x20)}${String.fromCharCode(cp & ~0x20)}]`, ci: false };
}

function concat(items: Node[]): Node {
  const real = items.filter((n) => !(n.t === 'empty' && (n as { flagOnly?: boolean }).flagOnly));
  if (real.length === 0) return { t: 'empty' };
  if (real.length === 1) return real[0]!;
  return { t: 'concat', subs: real };
}

function combine(left: string, op: '&&' | '--' | '~~', right: string): string {
  if (op === '~~') return `[[${left}--${right}][${right}--${left}]]`;
  return `[${left}${op}${right}]`;
}

// ---- character classes as JavaScript `v`-mode text ----------------------------

/** A code point as a JS `v`-mode class character (escaped where the syntax needs it). */
export function classChar(cp: number): string {
  if (cp < 0x20 || cp === 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) return `\\u{${cp.toString(16)}}`;
  const ch = String.fromCodePoint(cp);
  // Escaped: the characters a `v` class must escape, and those that doubled would be an operator
  // (`&&`, `!!`, ...). Not `'` or `"`: a `v` class refuses those escaped (and needs no escape for them).
  if (/[()[\]{}/\-\\|&!#$%*+,.:;<=>?@^`~]/.test(ch)) return `\\${ch}`;
  if (cp === 0x20) return '\\x20';
  return ch;
}

function dotClass(flags: Flags): string {
  if (flags.s) return '[\\s\\S]';
  return flags.R ? '[^\\n\\r]' : '[^\\n]';
}

const UNICODE_WORD = ['\\p{Alphabetic}', '\\p{M}', '\\p{Nd}', '\\p{Pc}', '\\p{Join_Control}'].map(pinned).join('');

function perlClass(kind: string, unicode: boolean): string {
  switch (kind) {
    case 'd':
      return unicode ? pinned('\\p{Nd}') : '0-9';
    case 's':
      return unicode ? pinned('\\p{White_Space}') : '\\t\\n\\v\\f\\r\\x20';
    default:
      return unicode ? UNICODE_WORD : '0-9A-Za-z_';
  }
}

/** The word characters `\b` tests, as a JS `v` class. */
export const WORD_CLASS_UNICODE = `[${UNICODE_WORD}]`;

const ASCII_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7f',
  blank: '\\t\\x20',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e',
  space: '\\t\\n\\v\\f\\r\\x20',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/**
 * A property name as Rust compares it (UAX44-LM3, as regex-syntax applies
 * it): a leading `is` is dropped, and so are spaces, `_`, `-` and every
 * non-ASCII character; ASCII letters count without case. (`isc` stays
 * `isc`, not `c`.)
 */
function loose(name: string): string {
  const is = /^is/i.test(name);
  let out = '';
  for (const ch of is ? name.slice(2) : name) {
    if (ch === ' ' || ch === '_' || ch === '-' || ch.codePointAt(0)! > 0x7f) continue;
    out += ch.toLowerCase();
  }
  return is && out === 'c' ? 'isc' : out;
}

const GENERAL_CATEGORIES: Record<string, string> = {};
for (const [short, long] of [
  ['C', 'Other'], ['Cc', 'Control'], ['Cf', 'Format'], ['Cn', 'Unassigned'], ['Co', 'Private_Use'],
  ['L', 'Letter'], ['LC', 'Cased_Letter'], ['Ll', 'Lowercase_Letter'], ['Lm', 'Modifier_Letter'], ['Lo', 'Other_Letter'],
  ['Lt', 'Titlecase_Letter'], ['Lu', 'Uppercase_Letter'], ['M', 'Mark'], ['Mc', 'Spacing_Mark'], ['Me', 'Enclosing_Mark'],
  ['Mn', 'Nonspacing_Mark'], ['N', 'Number'], ['Nd', 'Decimal_Number'], ['Nl', 'Letter_Number'], ['No', 'Other_Number'],
  ['P', 'Punctuation'], ['Pc', 'Connector_Punctuation'], ['Pd', 'Dash_Punctuation'], ['Pe', 'Close_Punctuation'],
  ['Pf', 'Final_Punctuation'], ['Pi', 'Initial_Punctuation'], ['Po', 'Other_Punctuation'], ['Ps', 'Open_Punctuation'],
  ['S', 'Symbol'], ['Sc', 'Currency_Symbol'], ['Sk', 'Modifier_Symbol'], ['Sm', 'Math_Symbol'], ['So', 'Other_Symbol'],
  ['Z', 'Separator'], ['Zl', 'Line_Separator'], ['Zp', 'Paragraph_Separator'], ['Zs', 'Space_Separator'],
] as const) {
  GENERAL_CATEGORIES[loose(short)] = short;
  GENERAL_CATEGORIES[loose(long)] = short;
}
// Aliases Unicode lists for the general categories.
GENERAL_CATEGORIES[loose('digit')] = 'Nd';
GENERAL_CATEGORIES[loose('punct')] = 'P';
GENERAL_CATEGORIES[loose('combining_mark')] = 'M';
GENERAL_CATEGORIES[loose('cntrl')] = 'Cc';

/**
 * Binary properties JavaScript knows (by their loose names); not
 * Changes_When_NFKC_Casefolded, which Rust's tables lack (and no Surrogate
 * category above: Rust's text has no surrogates).
 */
const BINARY_PROPERTIES: Record<string, string> = {};
for (const name of [
  'ASCII', 'ASCII_Hex_Digit', 'Alphabetic', 'Any', 'Assigned', 'Bidi_Control', 'Bidi_Mirrored', 'Case_Ignorable', 'Cased',
  'Changes_When_Casefolded', 'Changes_When_Casemapped', 'Changes_When_Lowercased',
  'Changes_When_Titlecased', 'Changes_When_Uppercased', 'Dash', 'Default_Ignorable_Code_Point', 'Deprecated', 'Diacritic',
  'Emoji', 'Emoji_Component', 'Emoji_Modifier', 'Emoji_Modifier_Base', 'Emoji_Presentation', 'Extended_Pictographic',
  'Extender', 'Grapheme_Base', 'Grapheme_Extend', 'Hex_Digit', 'IDS_Binary_Operator', 'IDS_Trinary_Operator',
  'ID_Continue', 'ID_Start', 'Ideographic', 'Join_Control', 'Logical_Order_Exception', 'Lowercase', 'Math',
  'Noncharacter_Code_Point', 'Pattern_Syntax', 'Pattern_White_Space', 'Quotation_Mark', 'Radical', 'Regional_Indicator',
  'Sentence_Terminal', 'Soft_Dotted', 'Terminal_Punctuation', 'Unified_Ideograph', 'Uppercase', 'Variation_Selector',
  'White_Space', 'XID_Continue', 'XID_Start',
]) {
  BINARY_PROPERTIES[loose(name)] = name;
}
BINARY_PROPERTIES[loose('space')] = 'White_Space';
BINARY_PROPERTIES[loose('wspace')] = 'White_Space';
BINARY_PROPERTIES[loose('alpha')] = 'Alphabetic';
BINARY_PROPERTIES[loose('lower')] = 'Lowercase';
BINARY_PROPERTIES[loose('upper')] = 'Uppercase';
// The short names Unicode's PropertyAliases.txt gives them (Rust takes either).
for (const [alias, name] of [
  ['AHex', 'ASCII_Hex_Digit'], ['Bidi_C', 'Bidi_Control'], ['Bidi_M', 'Bidi_Mirrored'], ['CI', 'Case_Ignorable'],
  ['CWCF', 'Changes_When_Casefolded'], ['CWCM', 'Changes_When_Casemapped'], 
  ['CWL', 'Changes_When_Lowercased'], ['CWT', 'Changes_When_Titlecased'], ['CWU', 'Changes_When_Uppercased'],
  ['DI', 'Default_Ignorable_Code_Point'], ['Dep', 'Deprecated'], ['Dia', 'Diacritic'], ['EBase', 'Emoji_Modifier_Base'],
  ['EComp', 'Emoji_Component'], ['EMod', 'Emoji_Modifier'], ['EPres', 'Emoji_Presentation'], ['Ext', 'Extender'],
  ['ExtPict', 'Extended_Pictographic'], ['Gr_Base', 'Grapheme_Base'], ['Gr_Ext', 'Grapheme_Extend'], ['Hex', 'Hex_Digit'],
  ['IDC', 'ID_Continue'], ['IDS', 'ID_Start'], ['IDSB', 'IDS_Binary_Operator'], ['IDST', 'IDS_Trinary_Operator'],
  ['Ideo', 'Ideographic'], ['Join_C', 'Join_Control'], ['LOE', 'Logical_Order_Exception'], ['NChar', 'Noncharacter_Code_Point'],
  ['Pat_Syn', 'Pattern_Syntax'], ['Pat_WS', 'Pattern_White_Space'], ['QMark', 'Quotation_Mark'], ['RI', 'Regional_Indicator'],
  ['SD', 'Soft_Dotted'], ['STerm', 'Sentence_Terminal'], ['Term', 'Terminal_Punctuation'], ['UIdeo', 'Unified_Ideograph'],
  ['VS', 'Variation_Selector'], ['XIDC', 'XID_Continue'], ['XIDS', 'XID_Start'],
]) {
  BINARY_PROPERTIES[loose(alias!)] = name!;
}

/** Script names whose JS spelling is the loose name's canonical form; resolved by trying them. */
const SCRIPTS = [
  'Adlam', 'Ahom', 'Anatolian_Hieroglyphs', 'Arabic', 'Armenian', 'Avestan', 'Balinese', 'Bamum', 'Bassa_Vah', 'Batak',
  'Bengali', 'Bhaiksuki', 'Bopomofo', 'Brahmi', 'Braille', 'Buginese', 'Buhid', 'Canadian_Aboriginal', 'Carian',
  'Caucasian_Albanian', 'Chakma', 'Cham', 'Cherokee', 'Chorasmian', 'Common', 'Coptic', 'Cuneiform', 'Cypriot',
  'Cypro_Minoan', 'Cyrillic', 'Deseret', 'Devanagari', 'Dives_Akuru', 'Dogra', 'Duployan', 'Egyptian_Hieroglyphs',
  'Elbasan', 'Elymaic', 'Ethiopic', 'Georgian', 'Glagolitic', 'Gothic', 'Grantha', 'Greek', 'Gujarati', 'Gunjala_Gondi',
  'Gurmukhi', 'Han', 'Hangul', 'Hanifi_Rohingya', 'Hanunoo', 'Hatran', 'Hebrew', 'Hiragana', 'Imperial_Aramaic',
  'Inherited', 'Inscriptional_Pahlavi', 'Inscriptional_Parthian', 'Javanese', 'Kaithi', 'Kannada', 'Katakana', 'Kawi',
  'Kayah_Li', 'Kharoshthi', 'Khitan_Small_Script', 'Khmer', 'Khojki', 'Khudawadi', 'Lao', 'Latin', 'Lepcha', 'Limbu',
  'Linear_A', 'Linear_B', 'Lisu', 'Lycian', 'Lydian', 'Mahajani', 'Makasar', 'Malayalam', 'Mandaic', 'Manichaean',
  'Marchen', 'Masaram_Gondi', 'Medefaidrin', 'Meetei_Mayek', 'Mende_Kikakui', 'Meroitic_Cursive', 'Meroitic_Hieroglyphs',
  'Miao', 'Modi', 'Mongolian', 'Mro', 'Multani', 'Myanmar', 'Nabataean', 'Nag_Mundari', 'Nandinagari', 'New_Tai_Lue',
  'Newa', 'Nko', 'Nushu', 'Nyiakeng_Puachue_Hmong', 'Ogham', 'Ol_Chiki', 'Old_Hungarian', 'Old_Italic',
  'Old_North_Arabian', 'Old_Permic', 'Old_Persian', 'Old_Sogdian', 'Old_South_Arabian', 'Old_Turkic', 'Old_Uyghur',
  'Oriya', 'Osage', 'Osmanya', 'Pahawh_Hmong', 'Palmyrene', 'Pau_Cin_Hau', 'Phags_Pa', 'Phoenician', 'Psalter_Pahlavi',
  'Rejang', 'Runic', 'Samaritan', 'Saurashtra', 'Sharada', 'Shavian', 'Siddham', 'SignWriting', 'Sinhala', 'Sogdian',
  'Sora_Sompeng', 'Soyombo', 'Sundanese', 'Syloti_Nagri', 'Syriac', 'Tagalog', 'Tagbanwa', 'Tai_Le', 'Tai_Tham',
  'Tai_Viet', 'Takri', 'Tamil', 'Tangsa', 'Tangut', 'Telugu', 'Thaana', 'Thai', 'Tibetan', 'Tifinagh', 'Tirhuta', 'Toto',
  'Ugaritic', 'Vai', 'Vithkuqi', 'Wancho', 'Warang_Citi', 'Yezidi', 'Yi', 'Zanabazar_Square',
];
const SCRIPT_NAMES: Record<string, string> = {};
for (const name of SCRIPTS) SCRIPT_NAMES[loose(name)] = name;

/** A script by its name or its four-letter ISO 15924 code (`latn`: JavaScript spells it `Latn`), as JS spells it. */
function scriptName(key: string): string | undefined {
  const name = SCRIPT_NAMES[key];
  if (name !== undefined) return name;
  // Rust's tables have no `Unknown` script (`Zzzz`): it refuses the name.
  if (!/^[a-z]{4}$/.test(key) || key === 'zzzz') return undefined;
  const code = key[0]!.toUpperCase() + key.slice(1);
  return supported(`[\\p{Script_Extensions=${code}}]`) ? code : undefined;
}

function supported(source: string): boolean {
  try {
    new RegExp(source, 'v');
    return true;
  } catch {
    return false;
  }
}

/** A `\p{...}` name as a JS `v` class body, or null when Rust would not know it either. */
function unicodePropertyClass(name: string): string | null {
  const eq = name.search(/[=:]|!=/);
  if (eq !== -1) {
    const negated = name.slice(eq, eq + 2) === '!=';
    const key = loose(name.slice(0, eq));
    const value = loose(name.slice(eq + (negated ? 2 : 1)));
    let body: string | null = null;
    if (key === 'generalcategory' || key === 'gc') {
      const gc = GENERAL_CATEGORIES[value];
      body = gc === undefined ? null : `\\p{${gc}}`;
    } else if (key === 'script' || key === 'sc') {
      const sc = scriptName(value);
      body = sc === undefined ? null : `\\p{Script=${sc}}`;
    } else if (key === 'scriptextensions' || key === 'scx') {
      const sc = scriptName(value);
      body = sc === undefined ? null : `\\p{Script_Extensions=${sc}}`;
    }
    if (body === null || !supported(`[${body}]`)) return null;
    return negated ? `[^${pinned(body)}]` : pinned(body);
  }
  const key = loose(name);
  const gc = GENERAL_CATEGORIES[key];
  if (gc !== undefined) return pinned(`\\p{${gc}}`);
  const binary = BINARY_PROPERTIES[key];
  if (binary !== undefined && supported(`[\\p{${binary}}]`)) return pinned(`\\p{${binary}}`);
  // A bare script name is the Script property, as in Rust (`\p{Greek}` is `sc=Greek`, not `scx=Greek`).
  const script = scriptName(key);
  if (script !== undefined && supported(`[\\p{Script=${script}}]`)) return pinned(`\\p{Script=${script}}`);
  return null;
}

// ---- small predicates -------------------------------------------------------

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Characters of a `\b{...}` name (Rust reads `[A-Za-z-]` there). */
function isBoundaryNameChar(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d);
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** What the parser skips in verbose mode and around counts: regex-syntax asks `char::is_whitespace` (not JavaScript's `\s`). */
function isWhitespace(c: number): boolean {
  return isNativeWhitespace(c);
}

/** Characters Rust lets a backslash escape as themselves. */
function isEscapablePunct(c: number): boolean {
  if (c > 0x7f) return false;
  const ch = String.fromCodePoint(c);
  // Rust: meta characters and any other ASCII punctuation except those with an escape meaning, plus space, # etc.
  return /[\\.+*?()|[\]{}^$#&\-~ !"%',/:;<=>@`_]/.test(ch);
}

/**
 * Rust's error text: the pattern, carets under the offending span (a
 * second span for duplicates), then the message. Multi-line patterns get
 * line numbers, as Rust prints them.
 */
function formatError(pattern: string, cps: number[], message: string, start: number, end: number, second?: [number, number]): string {
  const lines = pattern.split('\n');
  if (lines.length > 1) {
    // Rust numbers each line of a multi-line pattern; the carets go under the line holding the span.
    const numbered: string[] = [];
    let offset = 0;
    const width = String(lines.length).length;
    for (const [i, line] of lines.entries()) {
      const length = Array.from(line).length;
      numbered.push(`${String(i + 1).padStart(width)}: ${line}`);
      if (start >= offset && start <= offset + length) {
        const col = start - offset;
        numbered.push(`${' '.repeat(width + 2 + col)}${'^'.repeat(Math.max(1, Math.min(end, offset + length) - start))}`);
      }
      offset += length + 1;
    }
    return `regex parse error:\n${numbered.map((l) => `    ${l}`).join('\n')}\nerror: ${message}`;
  }
  void cps;
  let marks = ' '.repeat(start) + '^'.repeat(Math.max(1, end - start));
  if (second !== undefined) {
    marks = marks.padEnd(second[0], ' ') + '^'.repeat(Math.max(1, second[1] - second[0]));
  }
  return `regex parse error:\n    ${pattern}\n    ${marks}\nerror: ${message}`;
}
