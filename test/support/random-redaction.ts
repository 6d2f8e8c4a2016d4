/**
 * Random `pii_redaction` cases from a seed, and their comparison with
 * native (the oracle), value by value through native's own API
 * (native-sanitize.ts): the same seed gives the same case, so a difference
 * names its seed and replays (`compareDetectorSeed(seed)`,
 * `comparePatternSeed(seed)`).
 *
 * Two kinds of case:
 * - detector cases: one of the 14 detectors (or no matcher, or a pattern)
 *   with a random action and its knobs (replacement with `$` references,
 *   `mask_char`, `unmasked_prefix`/`suffix`), now and then selectors
 *   (`target_paths`, `target_path_globs`) drawn from the payloads' own
 *   paths, `remove`, or two or three profiles; run over texts made of
 *   PII-like tokens, near-misses of each, separators, punctuation and
 *   awkward Unicode, alone or inside nested payloads whose keys hold PII too;
 * - pattern cases: a random Rust pattern from a grammar (escapes, nested
 *   classes with `&&`/`--`/`~~`, Perl and Unicode classes, anchors, word
 *   boundaries, flags, named groups, alternation, lazy and counted
 *   repetition), now and then a broken one, with `regex_replace` or
 *   `redact`; both sides must accept or both refuse it, and when accepted
 *   replace the same text.
 *
 * What the generator deliberately does not draw, each with the reason:
 * - no `__proto__` key: native's subscriber delivery drops it
 *   (docs/known-limits.md, "A payload key named `__proto__`");
 * - no NUL in a key: native's binding drops the whole event, and the relay
 *   replaces it before any relay sees it (src/shared/json.ts);
 * - no lone surrogate in a key: the events native hands its subscribers
 *   (this comparison's only window into native) lack such a key
 *   (docs/known-limits.md, "A payload key holding a lone surrogate");
 * - none of the characters whose properties Unicode 17 changed (U+0295,
 *   U+0320, U+A7D3, U+A7D5, some diacritics and pictographs) in texts, and
 *   no `\p{Diacritic}`, `\p{Extended_Pictographic}` or `\p{Pattern_Syntax}`
 *   in patterns: the JavaScript engine's Unicode data differs from native's
 *   there (docs/known-limits.md, "Unicode tables");
 * - no `\p{Age=..}` or `\p{gcb=..}` (JavaScript has no such property:
 *   refused here, accepted by Rust) (docs/known-limits.md, "Unicode tables");
 * - no long texts for random patterns: a search past its budget clears the
 *   value on purpose (docs/operators/redaction.md, "Fail closed").
 */

import type { Json, JsonObject } from '../../src/shared/json.ts';
import { toJson } from '../../src/shared/json.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { DETECTORS, validatePiiRedaction } from '../../src/formats/plugins-toml/pii-redaction.ts';
import { createRedactor } from '../../src/components/redaction/engine.ts';
import { markEvent } from '../../src/formats/atof/build.ts';
import { nativeSanitizeMarks } from './native-sanitize.ts';
import { Draw as SeededDraw } from './seeded-random.ts';

export class Draw extends SeededDraw {
  string(alphabet: string, lo: number, hi: number): string {
    const chars = Array.from(alphabet);
    let out = '';
    const n = this.int(lo, hi);
    for (let i = 0; i < n; i++) out += this.pick(chars);
    return out;
  }
}

// ------------------------------------------------------------------ texts

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const ALNUM = LOWER + UPPER + DIGITS;
const HEX = '0123456789abcdefABCDEF';
const BASE64 = `${ALNUM}+/`;
const B64URL = `${ALNUM}_-`;

/** Decimal digits outside ASCII (`\d` takes them, `[0-9]` does not): full-width, Arabic-Indic, Devanagari, mathematical bold (astral). */
const DIGIT_BASES = [0xff10, 0x0660, 0x06f0, 0x0966, 0x1d7ce, 0x0e50];

function digitLike(d: Draw, digit: number): string {
  return String.fromCodePoint(d.pick(DIGIT_BASES) + digit);
}

/** PII-like tokens, one generator per kind (the detectors' targets, and SSNs). */
const TOKENS: Record<string, (d: Draw) => string> = {
  email: (d) => `${d.string(`${LOWER}${DIGITS}._%+-`, 1, 12)}@${d.string(`${LOWER}${DIGITS}-`, 1, 8)}${d.chance(0.3) ? `.${d.string(LOWER, 1, 5)}` : ''}.${d.string(d.chance(0.8) ? LOWER : UPPER, d.chance(0.1) ? 1 : 2, 6)}`,
  phone: (d) =>
    d.pick([
      () => `+${d.int(1, 99)} (${d.string(DIGITS, 3, 3)}) ${d.string(DIGITS, 3, 3)}-${d.string(DIGITS, 4, 4)}`,
      () => `${d.string(DIGITS, 3, 3)}-${d.string(DIGITS, 3, 3)}-${d.string(DIGITS, 4, 4)}`,
      () => d.string(DIGITS, 7, 12),
      () => `+${d.string(DIGITS, 2, 2)} ${d.string(DIGITS, 2, 2)} ${d.string(DIGITS, 4, 4)} ${d.string(DIGITS, 4, 4)}`,
    ])(),
  ipv4: (d) => Array.from({ length: 4 }, () => String(d.chance(0.9) ? d.int(0, 255) : d.int(256, 999))).join('.'),
  ipv6: (d) => {
    const groups = Array.from({ length: d.int(2, 8) }, () => d.string(HEX, 1, 4));
    if (groups.length < 8 || d.chance(0.3)) {
      const at = d.int(0, groups.length);
      return `${groups.slice(0, at).join(':')}::${groups.slice(at).join(':')}`;
    }
    return groups.join(':');
  },
  url: (d) => `${d.pick(['http', 'https', 'HTTP', 'ftp', 'https'])}://${d.string(`${LOWER}.-`, 1, 12)}${d.chance(0.5) ? `:${d.int(1, 65535)}` : ''}${d.chance(0.7) ? `/${d.string(`${ALNUM}/._-`, 0, 15)}` : ''}${d.chance(0.3) ? `?${d.string(`${ALNUM}=&%`, 1, 12)}` : ''}`,
  card: (d) => {
    const n = d.int(13, 19);
    const sep = d.pick(['', ' ', '-', ' ', '']);
    let out = '';
    for (let i = 0; i < n; i++) out += (i > 0 && i % 4 === 0 ? sep : '') + d.string(DIGITS, 1, 1);
    return out;
  },
  ssn: (d) => `${d.string(DIGITS, 3, 3)}-${d.string(DIGITS, 2, 2)}-${d.string(DIGITS, 4, 4)}`,
  api_key: (d) => `${d.pick(['sk', 'rk', 'pk', 'ak', 'sk-proj', 'sk-ant-api03', 'SK'])}-${d.string(`${ALNUM}_-`, 6, 30)}`,
  uuid: (d) => `${d.string(HEX, 8, 8)}-${d.string(HEX, 4, 4)}-${d.pick([...'12345678', '0', '9'])}${d.string(HEX, 3, 3)}-${d.pick([...'89abAB', 'c', '7'])}${d.string(HEX, 3, 3)}-${d.string(HEX, 12, 12)}`,
  bearer: (d) => `${d.pick(['Bearer', 'bearer', 'BEARER', 'BeArEr', 'Bearer:'])}${d.pick([' ', '  ', '\t', '\n', '\u00a0', '\u3000', ''])}${d.string(`${ALNUM}._~+/-`, 8, 40)}${d.pick(['', '=', '==', '==='])}`,
  jwt: (d) => `eyJ${d.string(B64URL, 3, 30)}.${d.string(B64URL, d.chance(0.1) ? 0 : 3, 40)}.${d.string(B64URL, 3, 43)}`,
  aws_key_id: (d) => `${d.pick(['AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T', 'AGPA', 'AIDA', 'AROA', 'AKIA'])}${d.string(`${UPPER}${DIGITS}`, d.chance(0.8) ? 16 : d.int(14, 18), 16)}`,
  aws_secret: (d) => `${d.chance(0.3) ? 'aws_secret_access_key = ' : ''}${d.string(`${BASE64}=`, d.chance(0.8) ? 40 : 38, d.chance(0.8) ? 40 : 44)}`,
  gcp: (d) => `AIza${d.string(`${ALNUM}_-`, d.chance(0.8) ? 35 : 33, d.chance(0.8) ? 35 : 37)}`,
  azure: (d) => `${d.chance(0.5) ? 'AccountKey=' : ''}${d.string(BASE64, d.chance(0.8) ? 86 : 84, d.chance(0.8) ? 86 : 88)}${d.pick(['==', '==', '=', '==;'])}`,
};

/** Characters that are awkward for a matcher: Unicode letters, digits, marks, spaces, controls, astral, RTL, full-width. */
const AWKWARD = [
  'é',
  'e\u0301',
  'ß',
  'ẞ',
  'K', // Kelvin sign: folds to k
  'ſ', // long s: folds to s
  'İ',
  'ı',
  'ﬀ',
  'Σσς',
  'α',
  'Ω',
  'Я',
  'ж',
  '中文',
  'ひらがな',
  'عربي',
  'עברית',
  '\u202e',
  '\u200f',
  '\u200b',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\u3000',
  '\u0085',
  '\u000b',
  '\u000c',
  '\r',
  '\r\n',
  '\t',
  '\u0000',
  '\u0007',
  '🙂',
  '👍🏽',
  '👨‍👩‍👧',
  '𝐀',
  '𝟘𝟙𝟚',
  '１２３',
  '٣٤٥',
  '५',
  '²',
  '½',
  'Ⅻ',
  '_',
  '\u0301',
  '\u20dd',
  '\ud83d', // a lone high surrogate
  '\ude00', // a lone low surrogate
  '\ufffd',
  '\uffff',
  '\u{10ffff}',
  '\u{e0001}',
  // Assigned after native's Unicode 16.0 tables (a letter, a digit): unassigned for both engines' classes.
  '\u088f',
  '\u0c5c',
  '\u{11de3}',
  '\ua7ce',
  // Assigned in Unicode 16.0 (Garay digit).
  '\u{10d43}',
];

const SEPARATORS = [' ', ' ', ' ', '\n', ', ', '; ', '.', ':', '/', '-', '_', '=', '"', "'", '(', ')', '<', '>', '[', ']', '@', '#', '|', '\\', '\t', '', '', ' - ', '?', '&', '+', '~', '*', '%', '$'];

const WORDS = ['call', 'mail', 'key', 'token', 'Bearer', 'ip', 'at', 'x', 'a', 'id', 'secret', 'password', 'AKIA', 'eyJ', 'sk', 'http', 'AIza', '==', 'ssn', 'card'];

/** A near-miss of a token: one small change that may or may not keep it a match. */
function nearMiss(d: Draw, token: string): string {
  const chars = Array.from(token);
  const at = d.int(0, Math.max(0, chars.length - 1));
  switch (d.int(0, 10)) {
    case 0:
      chars.splice(at, 1);
      break;
    case 1:
      chars.splice(at, 0, chars[at] ?? 'x');
      break;
    case 2: {
      const digit = DIGITS.indexOf(chars[at] ?? '');
      chars[at] = digitLike(d, digit >= 0 ? digit : d.int(0, 9));
      break;
    }
    case 3:
      chars.splice(at, 0, d.pick(AWKWARD));
      break;
    case 4:
      return token.toUpperCase();
    case 5:
      return token.toLowerCase();
    case 6:
      return token.slice(0, d.int(0, token.length));
    case 7:
      return `${d.pick(['é', 'x', '_', '1', 'A', 'Ω', '٣', '\u0301'])}${token}${d.pick(['', 'é', 'x', '_', '9', '\u0301', '.'])}`;
    case 8:
      chars[at] = d.pick(['.', '-', ' ', '@', ':', '_', '/', '+', '=']);
      break;
    case 9:
      // Every ASCII digit a Unicode one.
      return chars.map((c) => (c >= '0' && c <= '9' ? digitLike(d, Number(c)) : c)).join('');
    default:
      return token + token;
  }
  return chars.join('');
}

/** A random text: tokens, near-misses, words and awkward characters, glued with separators. */
export function randomText(d: Draw, pieces = d.int(0, 8), long = true): string {
  const kinds = Object.keys(TOKENS);
  let out = '';
  for (let i = 0; i < pieces; i++) {
    if (i > 0 || d.chance(0.3)) out += d.pick(SEPARATORS);
    const r = d.next();
    if (r < 0.35) out += TOKENS[d.pick(kinds)]!(d);
    else if (r < 0.6) out += nearMiss(d, TOKENS[d.pick(kinds)]!(d));
    else if (r < 0.75) out += d.pick(WORDS);
    else if (r < 0.9) out += d.pick(AWKWARD);
    else out += d.string(ALNUM, 1, 6);
  }
  if (d.chance(0.02) && long) out = out.repeat(d.int(50, 400));
  return out;
}

// ------------------------------------------------------------------ payloads

const KEYS = ['a', 'b', 'text', 'content', 'secret', 'token', 'email', 'a/b', 't~x', '~1', '*', '', ' ', '0', '1', '10', 'é', '🙂', 'x@y.com', '192.168.0.1', 'key with space', 'Bearer abcdefghijklmnopqrstuv', 'sk-abcdefghijkl'];

function randomKey(d: Draw): string {
  if (d.chance(0.8)) return d.pick(KEYS);
  // No NUL and no lone surrogate in a key (see the top of this file).
  return randomText(d, d.int(1, 2))
    .replaceAll('\u0000', '')
    .replace(/[\ud800-\udfff]/g, (c, at: number, text: string) => (isPaired(text, at) ? c : ''));
}

function isPaired(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c <= 0xdbff) return at + 1 < text.length && text.charCodeAt(at + 1) >= 0xdc00 && text.charCodeAt(at + 1) <= 0xdfff;
  return at > 0 && text.charCodeAt(at - 1) >= 0xd800 && text.charCodeAt(at - 1) <= 0xdbff;
}

/** A payload: a text, or a nested object/array of texts, numbers, booleans and nulls. */
export function randomValue(d: Draw, depth: number): Json {
  const r = d.next();
  if (depth <= 0 || r < 0.5) {
    if (r < 0.4 || depth <= 0) {
      const s = d.next();
      if (s < 0.8) return randomText(d);
      if (s < 0.9) return d.pick([0, -1, 4111111111111111, 1.5e300, 3.14, 192168]);
      return d.pick([true, false, null]);
    }
  }
  if (d.chance(0.5)) {
    const out: JsonObject = {};
    const n = d.int(0, 4);
    for (let i = 0; i < n; i++) out[randomKey(d)] = randomValue(d, depth - 1);
    return out;
  }
  return Array.from({ length: d.int(0, 4) }, () => randomValue(d, depth - 1));
}

/** Every JSON pointer into `value` (the root included). */
function pointers(value: Json, prefix = '', out: string[] = []): string[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pointers(v, `${prefix}/${i}`, out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) pointers(v, `${prefix}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`, out);
  return out;
}

// ------------------------------------------------------------------ configurations

const ACTIONS = ['redact', 'regex_replace', 'hash', 'mask', 'remove'] as const;
const ALL_DETECTORS: string[] = Object.values(DETECTORS).flat();
const REPLACEMENTS = ['[REDACTED]', '<$0>', '[$0]', '$1', '${1}x', '$1x', '$$', '$', '${', '${}', '$name', '${name}', '$9', '$a-b', 'é🙂', '', '$$0', '$0$0', '${0}', '\\1', 'x$'];
const MASK_CHARS = ['*', '#', '##', '🙂', 'é', 'x\u0301', ' ', ''];

function builtin(d: Draw, values: readonly Json[], matcher: 'detector' | 'pattern' | 'any'): Record<string, unknown> {
  const action = d.pick(ACTIONS);
  const out: Record<string, unknown> = { action };
  const m = matcher === 'any' ? d.pick(['detector', 'detector', 'pattern', 'none']) : matcher;
  if (m === 'detector') out.detector = d.pick(ALL_DETECTORS);
  else if (m === 'pattern') out.pattern = randomPattern(d).pattern;
  if (d.chance(0.6)) out.replacement = d.pick(REPLACEMENTS);
  if (action === 'mask' || d.chance(0.05)) {
    if (d.chance(0.5)) out.mask_char = d.pick(MASK_CHARS);
    // Now and then a count native refuses (negative, fractional) or one past any match.
    const count = (): number => (d.chance(0.9) ? d.int(0, 5) : d.pick([-1, 1.5, 100]));
    if (d.chance(0.4)) out.unmasked_prefix = count();
    if (d.chance(0.4)) out.unmasked_suffix = count();
  }
  // Selectors: mostly drawn from the payloads' own paths (under the mark's `/v`), so they select something.
  if (action === 'remove' ? d.chance(0.95) : d.chance(0.25)) {
    const paths = values.flatMap((v) => pointers(v, '/v'));
    if (d.chance(0.7)) out.target_paths = Array.from({ length: d.int(1, 3) }, () => (d.chance(0.9) ? d.pick(paths) : d.pick(['', '/', '/v/', '/x', '/v/*', 'v', '/v/~2', '/v/~', '/v//', '/v/~01', '/V'])));
    if (d.chance(0.5)) {
      out.target_path_globs = Array.from({ length: d.int(1, 3) }, () => {
        const segments = d.pick(paths).split('/');
        return segments.map((s, i) => (i > 1 && d.chance(0.4) ? '*' : s)).join('/') + (d.chance(0.1) ? '/*' : '');
      });
    }
  }
  return out;
}

/** A `pii_redaction` config: one policy or two or three profiles. */
function config(d: Draw, values: readonly Json[], matcher: 'detector' | 'pattern' | 'any'): Record<string, unknown> {
  if (d.chance(0.15)) {
    return {
      profiles: Array.from({ length: d.int(2, 3) }, () => ({ ...(d.chance(0.7) ? { priority: d.int(0, 3) } : {}), builtin: builtin(d, values, matcher) })),
    };
  }
  return { builtin: builtin(d, values, matcher) };
}

// ------------------------------------------------------------------ Rust patterns

const PATTERN_LITERALS = ['a', 'b', 'c', 'x', 'k', 's', 'A', 'K', 'S', '1', '0', '9', '@', '.', '-', ' ', '_', '=', ':', '/', 'é', 'ß', 'K', 'ſ', 'Σ', 'σ', 'α', '中', '🙂', '٣', '１', '#', ',', '"', "'", '<', '>', '%', '~', '&', '!'];
const PATTERN_ESCAPES = ['\\.', '\\*', '\\+', '\\?', '\\(', '\\)', '\\[', '\\]', '\\{', '\\}', '\\|', '\\^', '\\$', '\\\\', '\\-', '\\#', '\\&', '\\~', '\\ ', '\\@', '\\/', '\\:', '\\_', '\\%', "\\'", '\\"', '\\n', '\\t', '\\r', '\\f', '\\v', '\\a', '\\x41', '\\x{e9}', '\\x{1F642}', '\\u00e9', '\\u{3a3}', '\\U0001F642', '\\x7f', '\\x{0}', '\\x{FFFD}'];
const PERL = ['\\d', '\\D', '\\w', '\\W', '\\s', '\\S'];
const LOOKS = ['\\b', '\\B', '^', '$', '\\A', '\\z', '\\<', '\\>', '\\b{start}', '\\b{end}', '\\b{start-half}', '\\b{end-half}'];
const UNICODE_NAMES = ['L', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'M', 'Mn', 'N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'S', 'Sm', 'Z', 'Zs', 'C', 'Cc', 'Cf', 'gc=Lu', 'General_Category=Nd', 'Alphabetic', 'White_Space', 'Emoji', 'Any', 'ASCII', 'Cased', 'Lowercase', 'Uppercase', 'lower case', 'Letter', 'Decimal_Number', 'digit', 'punct', 'cntrl', 'space', 'Hex_Digit', 'XID_Start', 'L&', 'Cs', 'CWKCF', 'gc:L', 'isLu', 'is L', 'AHex', 'WSpace', 'Ext', 'IDS', 'CWCF', 'Nd\t', 'l_u', 'Lé'];
/** Script names and codes (`\p{Greek}` is the Script property, `scx=` Script_Extensions). */
const SCRIPT_NAMES = ['Greek', 'Latin', 'Han', 'Arabic', 'Cyrillic', 'Common', 'Inherited', 'sc=Greek', 'scx=Latin', 'Script=Han', 'greek', 'Latn', 'Grek', 'zyyy', 'isGreek', 'sc!=Latin', 'Gr èek', 'Xxxx', 'Qaai', 'Zzzz', 'sc=Latn', 'scx:Hani', 'Hrkt', 'Katakana_Or_Hiragana', 'Unknown', 'sc=Zzzz'];
const ASCII_CLASSES = ['alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit'];
const FLAGS = ['i', 'm', 's', 'U', 'u', 'x', 'R'];
const GROUP_NAMES = ['name', 'n', 'user', 'a1', '_x', 'é', 'a.b', 'a[0]'];

/** Pieces of patterns Rust refuses (or accepts though they look wrong), spliced in now and then. */
const BROKEN = ['(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '\\1', '(', ')', '[a', '[]', '[^]', 'a{2,1}', '*', '+a', 'a**', 'a{,3}', '{1}', '\\p{Foo}', '\\q', '\\e', '(?P<1a>x)', '(?P<>x)', '(?z)', '(?-)', '(?i-i)', '(?ii)', '\\xZZ', '\\x{110000}', '\\x{D800}', '\\b{foo}', '[z-a]', '[\\d-z]', 'a{99999999999}', '(?-u)\\W', '(?-u).', '(?-u)[^a]', '(?-u)\\xFF', '(?-u)\\x{e9}', '(?-u)[\\xe9]', '(?-u)[é]', '(?-u)\\B', '(?-u)\\D', '(?-u)\\S', '(?-u:é)', '(?i-u)k', '(?i-u)[a-z]', '(?i-u)é', '(?-u)\\w', '(?-u)\\b', '(?-u)[a-z&&[^b]]', '(?-u)[[:^alpha:]&&a]', '(?-u:[[:alpha:]])', '\\', '\\<\\>', '[[:foo:]]', '[[:alpha:]', 'a{3}{2}', 'a??+', '(?:)', '()', '(|)', '|', 'a|', '(?U)a*?', '\\pL', '\\p{L', '\\PN', '(?x: a b )', '[a&&]', '[&&a]', '[a--]', '[--a]', '[a~~b]', '[-a]', '[a-]', '[]a]', '[^]a]', '[a-\\d]', '\\A*', '^*', '$+', '\\b+', '(?s:.)', '(?R)^', '(?Rm)$', '\\x{ 41 }', '\\u{}', '(?P<n>a)(?P<n>b)', '(?<n>a)', '(?P=n)', '\\k<n>', '\\Z', '\\G', '[\\A]', '(?#comment)', 'a{0}', 'a{0,0}', '\\pZ', '(a{10}){10}', '((a{20}){20}){20}', '\\w{100}', '[\\w\\d]{50}'];

interface PatternState {
  depth: number;
  names: Set<string>;
  groups: number;
  /** Whether script classes may be drawn too. */
  scripts: boolean;
}

/** A random Rust pattern; `broken` when a piece Rust may refuse was spliced in. */
export function randomPattern(d: Draw, scripts = false): { pattern: string; broken: boolean } {
  const state: PatternState = { depth: 0, names: new Set(), groups: 0, scripts };
  let pattern = alternation(d, state);
  let broken = false;
  if (d.chance(0.12)) {
    const at = d.int(0, pattern.length);
    pattern = pattern.slice(0, at) + d.pick(BROKEN) + pattern.slice(at);
    broken = true;
  }
  if (d.chance(0.2)) pattern = `(?${flagSet(d)})${pattern}`;
  return { pattern, broken };
}

function flagSet(d: Draw): string {
  const on = new Set<string>();
  const off = new Set<string>();
  for (let i = d.int(1, 3); i > 0; i--) on.add(d.pick(FLAGS));
  if (d.chance(0.3)) off.add(d.pick(FLAGS.filter((f) => !on.has(f))));
  return [...on].join('') + (off.size > 0 ? `-${[...off].join('')}` : '');
}

function alternation(d: Draw, s: PatternState): string {
  const n = d.chance(0.7) ? 1 : d.int(2, 4);
  return Array.from({ length: n }, () => (d.chance(0.06) ? '' : concatenation(d, s))).join('|');
}

function concatenation(d: Draw, s: PatternState): string {
  let out = '';
  for (let i = d.int(1, 4); i > 0; i--) {
    out += quantified(d, s);
    if (d.chance(0.03)) out += d.pick([' ', '  # note\n', '\n']);
  }
  return out;
}

function quantified(d: Draw, s: PatternState): string {
  const atom = patternAtom(d, s);
  if (d.chance(0.6)) return atom;
  const lazy = d.chance(0.3) ? '?' : '';
  const r = d.next();
  const n = d.int(0, 4);
  let q: string;
  if (r < 0.25) q = '*';
  else if (r < 0.5) q = '+';
  else if (r < 0.65) q = '?';
  else if (r < 0.75) q = `{${n}}`;
  else if (r < 0.88) q = `{${n},}`;
  else q = `{${n},${n + d.int(0, 4)}}`;
  return atom + q + lazy;
}

function patternAtom(d: Draw, s: PatternState): string {
  const r = d.next();
  if (r < 0.3) return d.pick(PATTERN_LITERALS);
  if (r < 0.38) return d.pick(PATTERN_ESCAPES);
  if (r < 0.48) return d.pick(PERL);
  if (r < 0.53) return `\\${d.pick(['p', 'P'])}{${unicodeName(d, s)}}`;
  if (r < 0.58) return d.chance(0.3) ? '.' : d.pick(LOOKS);
  if (r < 0.78) return bracketClass(d, 0, s);
  if (s.depth >= 3) return d.pick(PATTERN_LITERALS);
  s.depth++;
  let group: string;
  const g = d.next();
  if (g < 0.4) {
    s.groups++;
    group = `(${alternation(d, s)})`;
  } else if (g < 0.55) {
    group = `(?:${alternation(d, s)})`;
  } else if (g < 0.75) {
    let name = d.pick(GROUP_NAMES);
    if (s.names.has(name)) name = `${name}${s.names.size}`;
    s.names.add(name);
    s.groups++;
    group = `(${d.chance(0.5) ? '?P<' : '?<'}${name}>${alternation(d, s)})`;
  } else if (g < 0.9) {
    group = `(?${flagSet(d)}:${alternation(d, s)})`;
  } else {
    group = `(?${flagSet(d)})${concatenation(d, s)}`;
  }
  s.depth--;
  return group;
}

const CLASS_LITERALS = ['a', 'b', 'z', 'A', 'Z', '0', '9', '_', '.', ' ', '@', 'é', 'ß', 'K', 'σ', '🙂', '٣', '^', '\\-', '\\]', '\\[', '\\\\', '\\^', '\\&', '\\~', '\\n', '\\x{e9}', '\\u{3c3}', '|', '$', '(', '*'];
const CLASS_RANGES = ['a-z', 'A-Z', '0-9', 'a-f', 'α-ω', 'А-я', '\\x00-\\x1f', '\\u{1F600}-\\u{1F64F}', '!-/', 'k-s', 'K-S', 'ß-ÿ', '٠-٩'];

function unicodeName(d: Draw, s: PatternState): string {
  return s.scripts && d.chance(0.5) ? d.pick(SCRIPT_NAMES) : d.pick(UNICODE_NAMES);
}

function bracketClass(d: Draw, depth: number, s: PatternState): string {
  const negated = d.chance(0.25) ? '^' : '';
  const operand = (): string => {
    let out = '';
    for (let i = d.int(1, 3); i > 0; i--) {
      const r = d.next();
      if (r < 0.35) out += d.pick(CLASS_LITERALS);
      else if (r < 0.6) out += d.pick(CLASS_RANGES);
      else if (r < 0.75) out += d.pick(PERL);
      else if (r < 0.82) out += `\\${d.pick(['p', 'P'])}{${unicodeName(d, s)}}`;
      else if (r < 0.9) out += `[:${d.chance(0.2) ? '^' : ''}${d.pick(ASCII_CLASSES)}:]`;
      else if (depth < 2) out += bracketClass(d, depth + 1, s);
      else out += d.pick(CLASS_LITERALS);
    }
    return out;
  };
  let body = operand();
  if (d.chance(0.25)) body += `${d.pick(['&&', '--', '~~'])}${operand()}`;
  // A leading `]` (after `^`) is a literal in Rust.
  if (d.chance(0.03)) body = `]${body}`;
  return `[${negated}${body}]`;
}

/** A text aimed at a pattern: the random text plus characters the pattern grammar uses. */
export function patternText(d: Draw): string {
  let out = '';
  for (let i = d.int(0, 10); i > 0; i--) {
    const r = d.next();
    if (r < 0.3) out += d.pick(PATTERN_LITERALS);
    else if (r < 0.45) out += d.pick(AWKWARD);
    else if (r < 0.55) out += d.pick(SEPARATORS);
    else if (r < 0.65) out += d.string('abcxAB', 1, 5);
    else if (r < 0.75) out += '\n';
    else out += randomText(d, d.int(1, 2), false);
  }
  return out;
}

// ------------------------------------------------------------------ comparison

/** Our engine on `values` as the relay sees them (through `toJson`: lone surrogates become U+FFFD), or the error it refuses the config with. */
export function oursSanitize(config: Record<string, unknown>, values: readonly Json[]): { values: Json[] } | { refused: string } {
  const { settings, diagnostics } = validatePiiRedaction(config as JsonObject, {});
  const errors = diagnostics.filter((x) => x.level === 'error');
  if (errors.length > 0 || settings === null) return { refused: errors.map((e) => e.message).join('; ') };
  let redact: (event: AtofEvent) => AtofEvent;
  try {
    redact = createRedactor(settings);
  } catch (error) {
    return { refused: String(error) };
  }
  return {
    values: values.map((v) => {
      const event = redact(markEvent('u', 'p', 'r', 'sanitize.probe', { v: toJson(v) } as Json, null, 't') as AtofEvent);
      return ((event.data ?? {}) as JsonObject).v ?? null;
    }),
  };
}

/** Native on `values`, or the error its activation refuses the config with. */
export async function nativeSanitize(config: Record<string, unknown>, values: readonly Json[]): Promise<{ values: Json[] } | { refused: string }> {
  try {
    return { values: await nativeSanitizeMarks(config, values) };
  } catch (error) {
    return { refused: error instanceof Error ? error.message : String(error) };
  }
}

/** One difference, with what replays it. */
export interface Difference {
  seed: number;
  config: Record<string, unknown>;
  input?: Json;
  ours: unknown;
  native: unknown;
}

/** Runs one config over the values on both sides; the first difference, or null. */
async function compare(seed: number, cfg: Record<string, unknown>, values: Json[]): Promise<Difference | null> {
  const native = await nativeSanitize(cfg, values);
  const ours = oursSanitize(cfg, values);
  if ('refused' in native || 'refused' in ours) {
    if ('refused' in native && 'refused' in ours) return null;
    return { seed, config: cfg, ours: 'refused' in ours ? `refused: ${ours.refused}` : 'accepted', native: 'refused' in native ? `refused: ${native.refused}` : 'accepted' };
  }
  for (let i = 0; i < values.length; i++) {
    if (!sameJson(ours.values[i]!, native.values[i]!)) return { seed, config: cfg, input: values[i]!, ours: ours.values[i], native: native.values[i] };
  }
  return null;
}

/** Equal as JSON values (key order aside: both files sort keys). */
function sameJson(a: Json, b: Json): boolean {
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function sorted(value: Json): Json {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort()) out[key] = sorted(value[key]!);
    return out;
  }
  return value;
}

/** A detector case: a random config (mostly a detector) over 12 random texts and payloads. */
export function detectorCase(seed: number): { config: Record<string, unknown>; values: Json[] } {
  const d = new Draw(seed);
  const values: Json[] = Array.from({ length: 12 }, () => (d.chance(0.6) ? randomText(d) : randomValue(d, d.int(1, 4))));
  if (d.chance(0.1)) values.push('');
  return { config: config(d, values, d.chance(0.8) ? 'detector' : 'any'), values };
}

/** A pattern case: a random Rust pattern with `regex_replace` or `redact` over 16 texts aimed at it. */
export function patternCase(seed: number): { config: Record<string, unknown>; values: Json[]; broken: boolean } {
  const d = new Draw(seed);
  const { pattern, broken } = randomPattern(d, d.chance(0.3));
  const action = d.chance(0.6) ? 'regex_replace' : 'redact';
  const builtin: Record<string, unknown> = { action, pattern };
  if (d.chance(0.8)) builtin.replacement = d.chance(0.5) ? d.pick(REPLACEMENTS) : `<${d.pick(['$0', '$1', '$2', '${name}', '$n', '${user}', '$$', '$a1', '${é}', '${a.b}', '$_x'])}>`;
  const values: Json[] = Array.from({ length: 16 }, () => patternText(d));
  return { config: { builtin }, values, broken };
}

export async function compareDetectorSeed(seed: number): Promise<Difference | null> {
  const { config: cfg, values } = detectorCase(seed);
  return compare(seed, cfg, values);
}

export async function comparePatternSeed(seed: number): Promise<Difference | null> {
  const { config: cfg, values } = patternCase(seed);
  return compare(seed, cfg, values);
}

/** A difference as lines a failure prints (JSON with every non-ASCII character escaped, so invisible ones show). */
export function describeDifference(diff: Difference | null): string {
  if (diff === null) return 'no difference';
  const show = (value: unknown): string => (JSON.stringify(value) ?? 'undefined').replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `seed ${diff.seed}\nconfig ${show(diff.config)}\ninput  ${show(diff.input)}\nours   ${show(diff.ours)}\nnative ${show(diff.native)}`;
}
