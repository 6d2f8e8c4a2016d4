// Detector cases where the redaction engine once differed from native's
// pii_redaction (found by the random redaction differential,
// test/components/redaction-random.test.ts): what native 0.9.2 writes for
// each, written down so the cases hold without native too.
import { describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../../src/shared/json.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validatePiiRedaction } from '../../src/formats/plugins-toml/pii-redaction.ts';
import { createRedactor } from '../../src/components/redaction/engine.ts';
import { markEvent } from '../../src/formats/atof/build.ts';

function sanitize(builtin: Record<string, unknown>, text: string): Json {
  const { settings } = validatePiiRedaction({ builtin } as JsonObject, {});
  const event = createRedactor(settings!)(markEvent('u', 'p', 'r', 'm', { v: text }, null, 't') as AtofEvent);
  return (event.data as JsonObject).v!;
}

describe('detectors: cases the random differential found', () => {
  it('api_key starts at a word boundary, as native (1sk-... is not a key)', () => {
    expect(sanitize({ action: 'redact', detector: 'api_key' }, '1sk-abcdefghij and sk-abcdefghij')).toBe('1sk-abcdefghij and [REDACTED]');
  });

  it("url's mask drops the user info (a password in the URL), keeps scheme and host, and masks what follows", () => {
    const mask = (text: string, maskChar?: string) => sanitize({ action: 'mask', detector: 'url', ...(maskChar ? { mask_char: maskChar } : {}) }, text);
    expect(mask('http://user:secret@host.com')).toBe('http://host.com');
    expect(mask('see http://user:secret@host.com/x/y now')).toBe('see http://host.com/* now');
    expect(mask('http://u:p@h?q=1')).toBe('http://h/*');
    expect(mask('http://h#f/g', '##')).toBe('http://h/##');
    expect(mask('http://a@b@c.d')).toBe('http://c.d');
    expect(mask('http://host.com')).toBe('http://host.com');
    expect(mask('http://a:80/x')).toBe('http://a:80/*');
    // No host: everything is masked.
    expect(mask('http://x@')).toBe('*********');
    expect(mask('http:///x', '##')).toBe('##################');
  });

  it('a letter assigned after native\'s Unicode tables is no word character: \\b before the card holds, as in native', () => {
    expect(sanitize({ action: 'redact', detector: 'credit_card' }, '\u0c5c4111 1111 1111 1111')).toBe('\u0c5c[REDACTED]');
    expect(sanitize({ action: 'redact', detector: 'ip_address' }, '\u088f192.168.0.1')).toBe('\u088f[REDACTED]');
  });
});
