/**
 * The 14 detector presets of NeMo Relay's `pii_redaction` component: what
 * each matches (the same text native 0.9.2 matches, over-matching
 * included: `phone` also takes card numbers and digit runs, `credit_card`
 * has no Luhn check, `ip_address` no octet range, `ipv6` stops at a `::`)
 * and the default shape `mask` gives a match.
 *
 * Each matcher is written in Rust's regex syntax and run by
 * `shared/rust-regex`, so `\d`, `\s` and `\b` keep their Unicode meaning as
 * in native and no input can make a search backtrack.
 *
 * @module
 */

import type { DetectorName } from '../../formats/plugins-toml/pii-redaction.ts';
import { RustRegex } from '../../shared/rust-regex/index.ts';
import { nativeTrimStart, nativeWhitespaceIndex } from '../../shared/whitespace.ts';

const ALNUM = 'A-Za-z0-9';
const HEX = '0-9a-fA-F';
const BASE64 = `${ALNUM}+/`;

/** Each detector's pattern, in Rust syntax. */
const PATTERNS: Record<DetectorName, string> = {
  email: `[${ALNUM}._%+-]+@[${ALNUM}.-]+\\.[A-Za-z]{2,}`,
  phone: `\\+?[0-9][0-9()\\-\\s]{6,}[0-9]`,
  ip_address: `\\b(?:\\d{1,3}\\.){3}\\d{1,3}\\b`,
  ipv6: ipv6Pattern(),
  url: `https?://[^\\s]+`,
  api_key: `\\b(?:sk|rk|pk|ak)-[${ALNUM}_-]{8,}`,
  uuid: `\\b[${HEX}]{8}-[${HEX}]{4}-[1-8][${HEX}]{3}-[89abAB][${HEX}]{3}-[${HEX}]{12}\\b`,
  bearer_token: `(?i)\\bBearer\\s+[${ALNUM}._~+/\\-]{12,}={0,2}\\b`,
  jwt: `\\beyJ[${ALNUM}_-]+\\.[${ALNUM}_-]+\\.[${ALNUM}_-]+\\b`,
  credit_card: `\\b(?:\\d[ -]?){13,19}\\b`,
  aws_access_key_id: `\\b(?:A3T[A-Z0-9]|${['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'AUSA'].join('|')})[A-Z0-9]{16}\\b`,
  aws_secret_access_key: `\\b[${BASE64}=]{40}\\b`,
  gcp_api_key: `\\bAIza[0-9A-Za-z\\-_]{35}\\b`,
  azure_storage_account_key: `\\b[${BASE64}]{86}==`,
};

/** IPv6 forms, tried in this order (the first that matches at a position wins, as in Rust). */
function ipv6Pattern(): string {
  const h = `[A-Fa-f0-9]{1,4}`;
  return `(?:${[
    `(${h}:){7}${h}`,
    `(${h}:){1,7}:`,
    `(${h}:){1,6}:${h}`,
    `(${h}:){1,5}(?::${h}){1,2}`,
    `(${h}:){1,4}(?::${h}){1,3}`,
    `(${h}:){1,3}(?::${h}){1,4}`,
    `(${h}:){1,2}(?::${h}){1,5}`,
    `${h}:(?:(?::${h}){1,6})`,
    `:(?:(?::${h}){1,7}|:)`,
  ].join('|')})`;
}

/**
 * A cheap test a text must pass to hold a match (a character every match
 * contains); texts without it are not searched at all.
 */
const NEEDS: Record<DetectorName, (text: string) => boolean> = {
  email: (t) => t.includes('@'),
  phone: hasDigit,
  ip_address: (t) => t.includes('.'),
  ipv6: (t) => t.includes(':'),
  url: (t) => t.includes('://'),
  api_key: (t) => t.includes('-'),
  uuid: (t) => t.includes('-'),
  bearer_token: (t) => /bearer/i.test(t),
  jwt: (t) => t.includes('eyJ'),
  credit_card: hasDigit,
  aws_access_key_id: (t) => /A[3BCGIKNPRSU]/.test(t),
  aws_secret_access_key: (t) => t.length >= 40,
  gcp_api_key: (t) => t.includes('AIza'),
  azure_storage_account_key: (t) => t.includes('=='),
};

function hasDigit(text: string): boolean {
  // Unicode digits count for `\d`; any non-ASCII text is searched.
  return /[0-9]|[^\x00-\x7f]/.test(text);
}

const compiled = new Map<DetectorName, RustRegex>();

/** The compiled matcher of a detector (shared: a matcher keeps no state between searches). */
export function detectorRegex(name: DetectorName): RustRegex {
  let regex = compiled.get(name);
  if (regex === undefined) {
    regex = new RustRegex(PATTERNS[name]);
    compiled.set(name, regex);
  }
  return regex;
}

/** Whether `text` may hold a match of the detector (false: it cannot). */
export function mayMatch(name: DetectorName, text: string): boolean {
  return NEEDS[name](text);
}

/** The detector pattern text, for messages and docs. */
export function detectorPattern(name: DetectorName): string {
  return PATTERNS[name];
}

// ---- masking -------------------------------------------------------------------

/**
 * Masks all but `prefix` leading and `suffix` trailing characters of
 * `text` with `maskChar` (which may be several characters). A text no
 * longer than what stays visible is left as it is.
 */
export function maskText(text: string, maskChar: string, prefix: number, suffix: number): string {
  const chars = Array.from(text);
  if (chars.length <= prefix + suffix) return text;
  return chars.slice(0, prefix).join('') + maskChar.repeat(chars.length - prefix - suffix) + chars.slice(chars.length - suffix).join('');
}

/** The detector-specific `mask` shape for one match (used when no `unmasked_prefix`/`unmasked_suffix` is set). */
export function detectorMask(name: DetectorName, text: string, maskChar: string): string {
  switch (name) {
    case 'email': {
      const at = text.indexOf('@');
      if (at < 0) return maskText(text, maskChar, 0, 0);
      const local = Array.from(text.slice(0, at));
      if (local.length <= 1) return text;
      return local[0] + maskChar.repeat(local.length - 1) + text.slice(at);
    }
    case 'phone':
    case 'credit_card':
      return maskDigitsKeepLast4(text, maskChar);
    case 'api_key': {
      const dash = text.indexOf('-');
      return maskText(text, maskChar, dash < 0 ? 0 : Array.from(text.slice(0, dash + 1)).length, 4);
    }
    case 'ip_address': {
      const octets = text.split('.');
      if (octets.length !== 4) return maskText(text, maskChar, 0, 0);
      return [maskChar.repeat(3), maskChar.repeat(3), maskChar.repeat(3), octets[3]].join('.');
    }
    case 'ipv6': {
      const segments = text.split(':');
      if (segments.length < 3) return maskText(text, maskChar, 0, 0);
      return segments.map((s, i) => (i < segments.length - 1 && s !== '' ? maskChar.repeat(4) : s)).join(':');
    }
    case 'url': {
      // Scheme and host stay; the user info (`user:password@`) goes, and whatever follows the
      // authority (path, query or fragment) becomes `/` and one mask. No host: all is masked.
      const scheme = text.indexOf('://');
      if (scheme < 0) return maskText(text, maskChar, 0, 0);
      const start = scheme + 3;
      const end = text.slice(start).search(/[/?#]/);
      const authority = end < 0 ? text.slice(start) : text.slice(start, start + end);
      const host = authority.slice(authority.lastIndexOf('@') + 1);
      if (host === '') return maskText(text, maskChar, 0, 0);
      return text.slice(0, start) + host + (end < 0 ? '' : `/${maskChar}`);
    }
    case 'uuid':
    case 'aws_secret_access_key':
    case 'azure_storage_account_key':
      return maskText(text, maskChar, 0, 4);
    case 'bearer_token': {
      // Rust splits at the first whitespace character and trims the rest's start, both by
      // `char::is_whitespace` (U+0085 is one, U+FEFF is not; every such character is one code unit).
      const space = nativeWhitespaceIndex(text);
      if (space < 0) return maskText(text, maskChar, 0, 4);
      const token = nativeTrimStart(text.slice(space + 1));
      if (token === '') return text;
      return `${text.slice(0, space)} ${maskText(token, maskChar, 0, 4)}`;
    }
    case 'jwt': {
      const parts = text.split('.');
      if (parts.length !== 3) return maskText(text, maskChar, 0, 6);
      return `${parts[0]}.${maskText(parts[1]!, maskChar, 0, 0)}.${maskText(parts[2]!, maskChar, 0, 6)}`;
    }
    case 'aws_access_key_id':
      return maskText(text, maskChar, 4, 4);
    case 'gcp_api_key':
      return maskText(text, maskChar, 6, 4);
  }
}

/** Every ASCII digit but the last four becomes `maskChar`; separators stay. */
function maskDigitsKeepLast4(text: string, maskChar: string): string {
  const digits = (text.match(/[0-9]/g) ?? []).length;
  if (digits <= 4) return text;
  let toMask = digits - 4;
  let out = '';
  for (const ch of text) {
    if (ch >= '0' && ch <= '9' && toMask > 0) {
      out += maskChar;
      toMask--;
    } else {
      out += ch;
    }
  }
  return out;
}
