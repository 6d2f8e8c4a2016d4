// The Rust-pattern engine (src/shared/rust-regex) on cases where it once
// differed from native's Rust engine (found by the random redaction
// differential, test/components/redaction-random.test.ts): what native 0.9.2
// does with each, written down so the cases hold without native too.
import { describe, expect, it } from 'vitest';
import { RustRegex, rustRegexError } from '../../src/shared/rust-regex/index.ts';

const replace = (pattern: string, text: string, template: string): string => new RustRegex(pattern).replaceAll(text, template);

describe('rust-regex: cases the random differential found', () => {
  it('a quote in a pattern compiles (a JS `v` class refuses `\\"` and `\\\'`)', () => {
    expect(replace('password="[^"]+"', 'x password="abc" y', '<R>')).toBe('x <R> y');
    expect(replace("'[^']*'", "say 'hi' now", '<R>')).toBe('say <R> now');
    expect(replace('["\']', `a"b'c`, '_')).toBe('a_b_c');
  });

  it('(?i) folds the case of Perl and Unicode classes too, as Rust does', () => {
    expect(replace('(?i)\\p{Lu}', 'aB1', '<$0>')).toBe('<a><B>1');
    expect(replace('(?i)\\P{Lu}', 'aB1', '<$0>')).toBe('aB<1>');
  });

  it('${} names no group (it gives nothing) and ${+1} is group 1, as Rust parses a usize', () => {
    expect(replace('(a)', 'xay', '[${}]')).toBe('x[]y');
    expect(replace('(a)', 'xay', '[${+1}]')).toBe('x[a]y');
    expect(replace('(a)', 'xay', '[$]')).toBe('x[$]y');
  });

  it('x* of a body that can match empty prefers the empty match, as Rust compiles it (x+)?', () => {
    expect(replace('(a*?)*', 'aab', '-')).toBe('-a-a-b-');
    expect(replace('([\\W]*?)*', 'a*b', '-')).toBe('-a-*-b-');
    expect(replace('(a|)+b', 'aab', '<$0>')).toBe('<aab>');
  });

  it('\\b{ followed by a digit is a counted repetition of \\b, not a boundary name', () => {
    expect(rustRegexError('\\b{2}x')).toBeNull();
    expect(rustRegexError('\\b{4,}?x')).toBeNull();
    expect(replace('\\b{start}a', 'a ba', '_')).toBe('_ ba');
    expect(rustRegexError('\\b{foo}')).not.toBeNull();
  });

  it('any number of leading dashes in a class are literals', () => {
    expect(rustRegexError('[^--\\wA]')).toBeNull();
    expect(replace('[--a]+', 'xa-by', '<$0>')).toBe('x<a->by');
  });

  it('property names as Rust reads them: script codes, an `is` prefix, short names, non-ASCII dropped; no Unknown', () => {
    expect(replace('\\p{Latn}+', 'abc αβ', '<$0>')).toBe('<abc> αβ');
    expect(replace('\\p{Grek}+', 'abc αβ', '<$0>')).toBe('abc <αβ>');
    expect(replace('\\p{isGreek}+', 'abc αβ', '<$0>')).toBe('abc <αβ>');
    expect(replace('\\p{sc=Latn}+', 'abc αβ', '<$0>')).toBe('<abc> αβ');
    expect(replace('\\p{Grèek}+', 'abc αβ', '<$0>')).toBe('abc <αβ>');
    expect(replace('\\p{AHex}+', 'xa3Fz', '<$0>')).toBe('x<a3F>z');
    expect(replace('\\p{cntrl}', 'a\u0007b', '_')).toBe('a_b');
    expect(rustRegexError('\\p{Unknown}')).not.toBeNull();
    expect(rustRegexError('\\p{Zzzz}')).not.toBeNull();
    expect(rustRegexError('\\p{L&}')).not.toBeNull();
    // Rust's tables have neither (its text holds no surrogates).
    expect(rustRegexError('\\p{Cs}')).not.toBeNull();
    expect(rustRegexError('\\p{Changes_When_NFKC_Casefolded}')).not.toBeNull();
  });

  it('verbose mode skips whitespace inside \\p{...}; otherwise a tab is part of the name', () => {
    expect(rustRegexError('(?x)\\p{Nd\t}')).toBeNull();
    expect(rustRegexError('\\p{Nd\t}')).not.toBeNull();
  });

  it('a case-insensitive part does not narrow where the rest may match ([^Z] keeps z beside (?i:a))', () => {
    expect(replace('[^Z]+(?i:a)', 'xzya b-a&', '<$0>')).toBe('<xzya b-a>&');
  });

  it('a class may start with && or ~~ (an empty left operand) and, in verbose mode, with spaces before ^ and dashes', () => {
    expect(replace('[&&a]', 'xa&', '<$0>')).toBe('xa&');
    expect(replace('[~~a]', 'xa~', '<$0>')).toBe('x<a>~');
    expect(replace('[^&&a]', 'xa', '<$0>')).toBe('<x><a>');
    expect(replace('(?x)[ --a]+', 'xa b-a', '<$0>')).toBe('x<a> b<-a>');
    expect(replace('(?x)[ ^ --a]+', 'xa b-a&', '<$0>')).toBe('<x>a< b>-a<&>');
  });

  it('\\b inside a class is refused, as Rust refuses it (no backspace escape)', () => {
    expect(rustRegexError('[\\b]')).not.toBeNull();
    expect(rustRegexError('[\\b{start}]')).not.toBeNull();
  });

  it('a bare script name is the Script property, as in Rust (\\p{Greek} is sc=Greek, not scx=Greek)', () => {
    expect(replace('\\p{Greek}+', '\u03b1\u0301', '<$0>')).toBe('<\u03b1>\u0301');
    expect(replace('\\p{scx=Greek}+', '\u03b1\u0301', '<$0>')).toBe('<\u03b1\u0301>');
  });

  it('classes answer as native\'s Unicode 16 tables: code points assigned later are unassigned', () => {
    expect(replace('\\w+', 'a\u088fb', '<$0>')).toBe('<a>\u088f<b>');
    expect(replace('\\d', '\u{11de3}', '<$0>')).toBe('\u{11de3}');
    expect(replace('\\p{Cn}', '\u088f', '<$0>')).toBe('<\u088f>');
  });

  it('a pinned class after a range in one class compiles on every runtime (Bun refused the bare difference there)', () => {
    expect(replace('[a-f\\p{Lu}]+', 'xaBcQz', '<$0>')).toBe('x<aBcQ>z');
    expect(replace('[^a-f\\w]', 'a-b', '<$0>')).toBe('a<->b');
    expect(replace('[0-9\\s]+', 'x1 2y', '<$0>')).toBe('x<1 2>y');
  });

  it('(?-u) refuses what could match bytes that are not UTF-8, as Rust does, and folds case within ASCII only', () => {
    for (const refused of ['(?-u).', '(?-u)\\W', '(?-u)\\D', '(?-u)\\S', '(?-u)[^a]', '(?-u)[a-z&&[^b]]', '(?-u)[[:^alpha:]]', '(?-u)\\xe9', '(?-u)[\\xe9]', '(?-u)[é]', '(?-u)[\\x{100}]']) {
      expect(rustRegexError(refused), refused).not.toBeNull();
    }
    for (const accepted of ['(?-u)\\w+', '(?-u)\\b', '(?-u)\\B', '(?-u)é', '(?-u)\\x{e9}', '(?i-u)é', '(?-u)[\\x00-\\x7f]']) {
      expect(rustRegexError(accepted), accepted).toBeNull();
    }
    expect(replace('(?i-u)k', 'k K \u212a', '<$0>')).toBe('<k> <K> \u212a');
    expect(replace('(?i-u)[a-z]+', 'sS\u017fkK\u212a', '<$0>')).toBe('<sS>\u017f<kK>\u212a');
    expect(replace('(?i)k', 'k K \u212a', '<$0>')).toBe('<k> <K> <\u212a>');
  });

  it('a counted repetition allows whitespace around its numbers in any mode, as Rust does', () => {
    expect(replace('a{ 1 , 2 }', 'aaa', '<$0>')).toBe('<aa><a>');
    expect(replace('x{ 2 }', 'xxx', '<$0>')).toBe('<xx>x');
    expect(replace('(?x)a{1 0}', 'a'.repeat(10), '<$0>')).toBe(`<${'a'.repeat(10)}>`);
    expect(rustRegexError('a{1 0}')).not.toBeNull();
    expect(rustRegexError('a{ }')).not.toBeNull();
  });
});
