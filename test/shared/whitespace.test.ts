// The one whitespace rule (src/shared/whitespace.ts) is Rust's: the Unicode
// White_Space property, which `char::is_whitespace`, `str::trim` and
// regex-syntax's verbose mode ask. JavaScript's `trim` and `\s` differ on
// U+0085 and U+FEFF; test/components/whitespace-parity.test.ts compares the
// places that use the rule with native itself.
import { describe, expect, it } from 'vitest';
import { isNativeBlank, isNativeBlankName, isNativeWhitespace, nativeTrim, nativeTrimStart, nativeWhitespaceIndex } from '../../src/shared/whitespace.ts';
import { isNonBlank } from '../../src/shared/text.ts';

const WHITE_SPACE = /^\p{White_Space}$/u;

describe('whitespace as native reads it', () => {
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
