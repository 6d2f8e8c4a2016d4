/**
 * One built-in redaction policy compiled: its action over string leaves
 * (`redact`, `regex_replace`, `hash`, `mask`, `remove`), its matcher (a
 * detector preset or a configured Rust pattern) and its selectors
 * (`target_paths`, RFC 6901 pointers; `target_path_globs`, whose `*`
 * segment matches any one key or index), applied to one JSON payload as
 * native applies them:
 *
 * - the walk is pre-order; with selectors, only a string leaf at a selected
 *   path is changed (what sits below a selected object is not), and
 *   `remove` deletes the selected key (an array element becomes `null`, a
 *   selected root becomes `null`) whatever it holds;
 * - without selectors every string leaf is a candidate;
 * - numbers, booleans and nulls are never changed;
 * - `redact` puts its replacement as literal text, `regex_replace` expands
 *   Rust's group references in it (`$1`, `${name}`, `$$`);
 * - `hash` is the lower-case hex SHA-256 of the match (of the whole leaf
 *   without a matcher), `mask` keeps `unmasked_prefix`/`unmasked_suffix`
 *   characters, or a detector's own shape when neither is set.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../../shared/json.ts';
import type { BuiltinRedaction, DetectorName } from '../../formats/plugins-toml/pii-redaction.ts';
import { RustRegex } from '../../shared/rust-regex/index.ts';
import { detectorMask, detectorRegex, mayMatch, maskText } from './detectors.ts';

/** Thrown by `compileBuiltin` for a policy native would refuse at registration. */
export class RedactionPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedactionPolicyError';
  }
}

/** A value that a `remove` selector deleted (distinct from JSON `null`). */
export const REMOVED = Symbol('removed');
type Removed = typeof REMOVED;

interface Matcher {
  regex: RustRegex;
  detector: DetectorName | null;
}

export class CompiledBuiltin {
  private readonly matcher: Matcher | null;
  private readonly paths: string[][];
  private readonly globs: string[][];
  private readonly replacement: string;
  private readonly maskChar: string;

  /** `stepBudget`: how much work one search of a configured pattern may take (see `shared/rust-regex`). */
  constructor(
    readonly config: BuiltinRedaction,
    stepBudget?: number,
  ) {
    this.paths = config.targetPaths.map(pointerSegments);
    this.globs = config.targetPathGlobs.map(pointerSegments);
    this.replacement = config.replacement ?? '[REDACTED]';
    this.maskChar = config.maskChar ?? '*';
    if (config.pattern !== null) this.matcher = { regex: new RustRegex(config.pattern, stepBudget), detector: null };
    else if (config.detector !== null) this.matcher = { regex: detectorRegex(config.detector), detector: config.detector };
    else this.matcher = null;
    if ((config.action === 'redact' || config.action === 'regex_replace') && this.matcher === null) {
      throw new RedactionPolicyError("builtin.pattern or builtin.detector is required when builtin.action = 'regex_replace' or 'redact'");
    }
  }

  /** Whether the policy selects paths (then LLM payloads are selected JSON-natively too). */
  get hasSelectors(): boolean {
    return this.paths.length > 0 || this.globs.length > 0;
  }

  /** The payload with the policy applied; `null` when a `remove` selector took the root itself. */
  sanitize(value: Json): Json {
    const out = this.walk(value, []);
    return out === REMOVED ? null : out;
  }

  private selected(path: readonly string[]): boolean {
    if (!this.hasSelectors) return true;
    for (const p of this.paths) if (samePath(p, path, false)) return true;
    for (const g of this.globs) if (samePath(g, path, true)) return true;
    return false;
  }

  private walk(value: Json, path: string[]): Json | Removed {
    if (this.hasSelectors && this.config.action === 'remove' && this.selected(path)) return REMOVED;
    if (typeof value === 'string') {
      if (!this.selected(path)) return value;
      return this.sanitizeString(value);
    }
    if (Array.isArray(value)) {
      const out: Json[] = new Array(value.length);
      for (let i = 0; i < value.length; i++) {
        path.push(String(i));
        const item = this.walk(value[i]!, path);
        path.pop();
        out[i] = item === REMOVED ? null : item;
      }
      return out;
    }
    if (value !== null && typeof value === 'object') {
      const out: JsonObject = {};
      for (const key of Object.keys(value)) {
        path.push(key);
        const item = this.walk(value[key]!, path);
        path.pop();
        if (item !== REMOVED) defineKey(out, key, item);
      }
      return out;
    }
    return value;
  }

  /** One string leaf through the action; `REMOVED` for `remove`. */
  sanitizeString(text: string): Json | Removed {
    const m = this.matcher;
    switch (this.config.action) {
      case 'remove':
        return REMOVED;
      case 'hash':
        if (m === null) return sha256Hex(text);
        return this.replaceMatches(m, text, (match) => sha256Hex(match));
      case 'mask':
        if (m === null) return maskText(text, this.maskChar, this.config.unmaskedPrefix ?? 0, this.config.unmaskedSuffix ?? 0);
        return this.replaceMatches(m, text, (match) => this.mask(match, m.detector));
      case 'redact':
        // The replacement is literal text (`$1` stays `$1`); only `regex_replace` expands group references.
        return this.replaceMatches(m!, text, () => this.replacement);
      case 'regex_replace':
        if (m!.detector !== null && !mayMatch(m!.detector, text)) return text;
        return m!.regex.replaceAll(text, this.replacement);
    }
  }

  private replaceMatches(m: Matcher, text: string, replace: (match: string) => string): string {
    if (m.detector !== null && !mayMatch(m.detector, text)) return text;
    return m.regex.replaceAllWith(text, replace);
  }

  private mask(match: string, detector: DetectorName | null): string {
    const c = this.config;
    if (detector !== null && c.unmaskedPrefix === null && c.unmaskedSuffix === null) return detectorMask(detector, match, this.maskChar);
    return maskText(match, this.maskChar, c.unmaskedPrefix ?? 0, c.unmaskedSuffix ?? 0);
  }
}

/** `/a/b~1c` → `['a', 'b/c']`; `''` (the root) → `[]`. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function samePath(selector: readonly string[], path: readonly string[], glob: boolean): boolean {
  if (selector.length !== path.length) return false;
  for (let i = 0; i < path.length; i++) {
    const s = selector[i]!;
    if (s !== path[i] && !(glob && s === '*')) return false;
  }
  return true;
}

/** A key set as data, even `__proto__`. */
function defineKey(object: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
