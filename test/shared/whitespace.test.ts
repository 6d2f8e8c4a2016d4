// The whitespace rules native reads text by (src/shared/whitespace.ts), as
// plain functions: what they return, against a regular-expression statement
// of the same rule on random short texts, and that a long inner run of
// whitespace or slashes costs one pass (a payload or provider name from the
// outside reaches them). The rule is Rust's: the Unicode White_Space
// property (checked over every code point below); the places that use it are
// compared with native itself in test/components/whitespace-parity.test.ts.
import { describe, expect, it } from 'vitest';
import { isNativeBlank, isNativeBlankName, isNativeWhitespace, nativeTrim, nativeTrimStart, nativeWhitespaceIndex, trimWhere } from '../../src/shared/whitespace.ts';
import { isNonBlank } from '../../src/shared/text.ts';
import { normalizedProvider } from '../../src/formats/plugins-toml/pricing.ts';
import { Draw } from '../support/seeded-random.ts';

const WHITE = '\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000';
const SPACE_CLASS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
/** The rule as a regular expression: fine on short texts, quadratic on long inner runs. */
const reference = (text: string) => text.replace(new RegExp(`^${SPACE_CLASS}+|${SPACE_CLASS}+$`, 'g'), '');

describe('native whitespace', () => {
  it('trims what Rust trims: U+0085 and the other White_Space characters, not U+FEFF or U+200B', () => {
    expect(nativeTrim('\u0085 a b\u3000')).toBe('a b');
    expect(nativeTrim('\ufeffa\u200b')).toBe('\ufeffa\u200b');
    expect(nativeTrim(' \t ')).toBe('');
    expect(nativeTrim('')).toBe('');
    expect(isNativeBlank('\u0085\u2028')).toBe(true);
    expect(isNativeBlank('\ufeff')).toBe(false);
  });

  it('agrees with the rule written as a regular expression on random short texts', () => {
    const d = new Draw(7);
    for (let i = 0; i < 2000; i++) {
      const text = Array.from({ length: d.int(0, 12) }, () => (d.chance(0.6) ? d.pick([...WHITE]) : d.pick(['a', '\ufeff', '\u200b', '😀', '\ud800', '/']))).join('');
      expect(nativeTrim(text), JSON.stringify(text)).toBe(reference(text));
    }
  });

  // Written as `[…]+$`, each of these runs for minutes (quadratic in the run): the file then never finishes.
  it('trims a text with a long inner run in one pass from each end', () => {
    const run = ' '.repeat(200_000);
    expect(nativeTrim(` a${run}b\u0085`)).toBe(`a${run}b`);
    expect(trimWhere(`//a${'/'.repeat(200_000)}b//`, (unit) => unit === 0x2f)).toBe(`a${'/'.repeat(200_000)}b`);
    expect(normalizedProvider(` /OpenAI${'/'.repeat(200_000)}x/ `)).toBe(`openai${'/'.repeat(200_000)}x`);
  });
});

const WHITE_SPACE = /^\p{White_Space}$/u;

describe('whitespace as native reads it: the White_Space property', () => {
  it('is exactly the White_Space property, over every code point', () => {
    const differ: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (isNativeWhitespace(cp) !== WHITE_SPACE.test(String.fromCodePoint(cp))) differ.push(cp.toString(16));
    }
    expect(differ).toEqual([]);
  });

  it('trims and judges blank by it, not by JavaScript’s trim', () => {
    expect(nativeTrim('\u0085a\u3000')).toBe('a');
    expect(nativeTrim('\ufeffa\ufeff')).toBe('\ufeffa\ufeff');
    expect(nativeTrim('\u180ea')).toBe('\u180ea');
    expect(nativeTrimStart(' \u0085a ')).toBe('a ');
    expect(isNativeBlank('\u0085\u2028\v')).toBe(true);
    expect(isNativeBlank('\ufeff')).toBe(false);
    expect(isNonBlank('\u0085')).toBe(false);
    expect(isNonBlank('\ufeff')).toBe(true);
    expect(isNonBlank(5)).toBe(false);
    expect(nativeWhitespaceIndex('Bearer\u0085x')).toBe(6);
    expect(nativeWhitespaceIndex('Bearer\ufeffx')).toBe(-1);
  });

  it('calls a promoted or mapped name blank when it holds only White_Space, control and format characters', () => {
    expect(isNativeBlankName('\ufeff\u200b\u0001 ')).toBe(true);
    expect(isNativeBlankName('\u00ad')).toBe(true);
    expect(isNativeBlankName('a\ufeff')).toBe(false);
  });
});
