// The redaction engine (src/components/redaction) against native's own
// pii_redaction component, value by value: the 14 detectors with each
// action, configured Rust patterns with regex_replace (Rust's group
// references) and redact (literal), and the selectors. Native is driven
// through its own API (test/support/native-sanitize.ts).
import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../src/shared/json.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validatePiiRedaction, DETECTORS } from '../../src/formats/plugins-toml/pii-redaction.ts';
import { createRedactor } from '../../src/components/redaction/engine.ts';
import { markEvent } from '../../src/formats/atof/build.ts';
import { nativeSanitizeAvailable, nativeSanitizeMarks } from '../support/native-sanitize.ts';

/** Our engine on the same mark payloads. */
function oursSanitizeMarks(config: Record<string, unknown>, values: readonly Json[]): Json[] {
  const json = config as JsonObject;
  const { settings, diagnostics } = validatePiiRedaction(json, {});
  expect(diagnostics.filter((d) => d.level === 'error')).toEqual([]);
  const redact = createRedactor(settings!);
  return values.map((v) => {
    const event = redact(markEvent('u', 'p', 'r', 'sanitize.probe', { v } as Json, null, 't') as AtofEvent);
    return ((event.data ?? {}) as JsonObject).v ?? null;
  });
}

const SAMPLES = [
  'mail alice.smith+tag@example.com or BOB@EXAMPLE.ORG, not a@b',
  'x@y.z a..b@c.de ténor@exâmple.com',
  'call +1 (415) 555-0142 or 415-555-0142, +44 20 7946 0958, 4155550142',
  'card 4111 1111 1111 1111 exp; 4111-1111-1111-1112; 4111111111111112',
  'ssn 123-45-6789',
  'ip 192.168.10.42 http://10.0.0.1:8080/admin 999.1.1.1 1.2.3.4.5 x_1.2.3.4_y',
  'v6 2001:db8:85a3::8a2e:370:7334 and fe80::1 and ::1 and 2001:0db8:0000:0000:0000:ff00:0042:8329',
  'url https://internal.example.com/path/to?token=abc123&x=1 http://x.y',
  'keys sk-proj-abcdefghijklmnop123456789 sk-ant-api03-abcdefgh_ijkl api_key=ZXhhbXBsZQ pk-12345678',
  'uuid 123e4567-e89b-12d3-a456-426614174000 and sess-123e4567-e89b-42d3-a456-426614174000',
  'auth Bearer abcdef0123456789abcdef0123456789 and bearer   xyz.abc_def-ghi== end',
  'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
  'aws AKIAIOSFODNN7EXAMPLE ASIA1234567890ABCDEF',
  'secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'gcp AIzaSyA1234567890abcdefghijklmnopqrstuv',
  `azure AccountKey=${'a'.repeat(43)}${'B'.repeat(43)}==;`,
  'unicode ١٢٣.٤٥٦.٧٨٩.١ and ١٢٣٤٥٦٧٨٩٠١٢٣٤ é192.168.1.1',
  '',
  'no secrets here at all',
];

const ALL_DETECTORS = Object.values(DETECTORS).flat();

describe.skipIf(!nativeSanitizeAvailable)('redaction engine equals native, value by value', () => {
  for (const detector of ALL_DETECTORS) {
    it(`the ${detector} detector matches what native matches (redact, mask, hash)`, async () => {
      for (const builtin of [
        { action: 'redact', detector, replacement: '<$0>' },
        { action: 'mask', detector },
        { action: 'mask', detector, unmasked_prefix: 1, mask_char: '#' },
        { action: 'hash', detector },
        { action: 'regex_replace', detector, replacement: '[$0]' },
      ]) {
        const config = { builtin };
        expect(oursSanitizeMarks(config, SAMPLES), JSON.stringify(builtin)).toEqual(await nativeSanitizeMarks(config, SAMPLES));
      }
    });
  }

  const PATTERNS: [string, string][] = [
    ['a*', 'X'],
    ['(\\w+)@(\\w+)', '$2 at $1 $$ ${2}x $2x $9 $'],
    ['(?P<user>[a-z]+)-(?P<n>\\d+)', '${n}/$user'],
    ['(?i)straße', '[R]'],
    ['\\d+', '#'],
    ['\\bfoo\\b', 'F'],
    ['(?m)^line', 'L'],
    ['end$', 'E'],
    ['(?s)a.b', '_'],
    ['[[:alpha:]]+', 'W'],
    ['[a-z&&[^aeiou]]+', 'C'],
    ['[\\p{Greek}\\d]+', 'G'],
    ['(a|ab)(c|bcd)(d*)', '<$1|$2|$3>'],
    ['x*?y', '!'],
    ['(?x) a b  # spaced', 'AB'],
    ['\\x41\\u{42}', 'hex'],
    ['(?U)a+', 'u'],
    ['\\<word\\>', 'w'],
    ['(a+)+$', 'Z'],
    ['🙂+', 'smile'],
  ];
  const TEXTS = ['baaab', 'bob@example x@y', 'alice-42 bob-7', 'STRASSE strasse STRAßE', 'abc ١٢٣ 123', 'éfoo foo _foo', 'line1\nline2\n end', 'a\nb axb', 'hello World 42', 'αβγ 12 δ', 'abcd abcbcd', 'xxy y', ' a b AB', 'AB', 'aaa', 'word words sword', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaab', '🙂🙂 x 🙂', ''];
  it('configured Rust patterns replace what native replaces (regex_replace expands $ references, redact does not)', async () => {
    for (const [pattern, replacement] of PATTERNS) {
      for (const action of ['regex_replace', 'redact']) {
        const config = { builtin: { action, pattern, replacement } };
        expect(oursSanitizeMarks(config, TEXTS), `${action} ${pattern}`).toEqual(await nativeSanitizeMarks(config, TEXTS));
      }
    }
  });

  it('hash and mask without a matcher cover every string leaf, and numbers stay', async () => {
    const values: Json[] = [{ a: 'x', b: 4111111111111111, c: [true, null, 'y', { d: 'mai@l.com' }] }, 'warn', 'mail x@y.com now'];
    for (const builtin of [{ action: 'hash' }, { action: 'mask' }, { action: 'mask', mask_char: '#', unmasked_prefix: 3, unmasked_suffix: 2 }, { action: 'mask', mask_char: '##' }]) {
      expect(oursSanitizeMarks({ builtin }, values)).toEqual(await nativeSanitizeMarks({ builtin }, values));
    }
  });

  it('selectors: exact pointers (escapes, array indices, the root), globs of whole segments, remove', async () => {
    const value: Json = { secret: 's', 'a/b': 'slash', 't~x': 'tilde', nested: ['x@y.co', 'z'], deep: { inner: 'q@w.co', list: [{ k: 'e@r.co' }] }, phone: 'p', '*': 'star' };
    for (const builtin of [
      { action: 'remove', target_paths: ['/v/secret', '/v/nested/0', '/v/a~1b', '/v/t~0x'] },
      { action: 'remove', target_path_globs: ['/v/*'] },
      { action: 'remove', target_path_globs: ['/v/deep/*', '/v/phone*', '/**'] },
      { action: 'remove', target_paths: ['/v/*'] },
      { action: 'redact', detector: 'email', target_paths: ['/v/nested/0', '/v/deep'] },
      { action: 'redact', detector: 'email', target_path_globs: ['/v/deep/list/*/k'] },
      { action: 'hash', target_paths: ['/v/secret'] },
      { action: 'remove', target_paths: ['/v/nested/0'], detector: 'email' },
    ]) {
      expect(oursSanitizeMarks({ builtin }, [value]), JSON.stringify(builtin)).toEqual(await nativeSanitizeMarks({ builtin }, [value]));
    }
  });

  it('profiles run in priority order, array order breaking ties', async () => {
    const config = {
      profiles: [
        { priority: 90, builtin: { action: 'regex_replace', pattern: 'b', replacement: 'c' } },
        { priority: 80, builtin: { action: 'regex_replace', pattern: 'a', replacement: 'b' } },
        { priority: 90, builtin: { action: 'regex_replace', pattern: 'c', replacement: 'd' } },
        { enabled: false, builtin: { action: 'hash' } },
      ],
    };
    const values = ['abc', 'aaa'];
    expect(oursSanitizeMarks(config, values)).toEqual(await nativeSanitizeMarks(config, values));
    expect(oursSanitizeMarks(config, values)).toEqual(['ddd', 'ddd']);
  });
});

describe('redaction engine, fail closed', () => {
  it('a pattern past its search budget clears the part instead of writing it', () => {
    const failures: string[] = [];
    const { settings } = validatePiiRedaction({ builtin: { action: 'redact', pattern: '[a-z]{1,50}x' } }, {});
    const redact = createRedactor(settings!, { onFailure: (what) => failures.push(what), stepBudget: 1000 });
    const huge = `${'a'.repeat(100_000)}x`;
    const event = redact(markEvent('u', 'p', 'r', 'm', { secret: huge } as Json, { note: 'kept' } as Json, 't') as AtofEvent);
    expect(event.data).toBeNull();
    expect(event.metadata).toEqual({ note: 'kept' });
    expect(failures).toEqual(['mark data']);
  });
});
