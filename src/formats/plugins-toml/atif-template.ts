/**
 * Plugin-managed ATIF file names: the `filename_template` of the
 * observability component, validated and rendered as native does.
 *
 * A template is literal text with two kinds of placeholder:
 * `{session_id}` (required; the root scope's uuid) and
 * `{metadata.<dotted.path>}` with an optional `:-fallback`, resolved against
 * the root scope's start metadata. Any other `{...}` is literal text.
 *
 * Containment: the template itself must be a relative path with no `.` or
 * `..` segment, a fallback may use only `[A-Za-z0-9-_.~/]` with no empty,
 * `.` or `..` segment, and a metadata value is reduced to a single path
 * segment: every run of characters outside `[A-Za-z0-9-_.~]` and every run
 * of two or more dots becomes one `-` (adjacent runs merge), a lone `.`
 * becomes `-`, and the result is cut to 100 characters. So `../../x` becomes
 * `-x` and `a/b` becomes `a-b`. On top of that, the writer checks that the
 * final path resolves inside the output folder before writing.
 *
 * Where native fails to render (a missing value without fallback, an empty
 * string, an object) and drops the trajectory, this renders `unknown` and
 * reports it, so no trajectory is lost.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';

/** One piece of a parsed template: literal text, the session id, or a metadata lookup with its fallback. */
export type TemplatePart =
  | { kind: 'literal'; text: string }
  | { kind: 'session_id' }
  | { kind: 'metadata'; path: string[]; source: string; fallback: string | undefined };

/** A `filename_template` that passed validation, split into the parts `renderFilename` fills in. */
export interface ParsedTemplate {
  /** The template text as configured. */
  template: string;
  /** Its literal and placeholder parts, in order. */
  parts: TemplatePart[];
}

/** Parses and validates a template; returns native's error message on failure. */
export function parseFilenameTemplate(template: string): ParsedTemplate | { error: string } {
  if (!template.includes('{session_id}')) return { error: "ATIF filename_template must contain '{session_id}'" };
  if (!isSafeRelativePath(template, true)) return { error: 'ATIF filename_template must be a path-safe relative path' };
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < template.length) {
    if (template.startsWith('{session_id}', i)) {
      if (literal !== '') parts.push({ kind: 'literal', text: literal });
      literal = '';
      parts.push({ kind: 'session_id' });
      i += '{session_id}'.length;
      continue;
    }
    if (template.startsWith('{metadata.', i)) {
      const close = template.indexOf('}', i);
      if (close < 0) return { error: 'ATIF filename_template contains an unclosed metadata placeholder' };
      const source = template.slice(i, close + 1);
      const body = template.slice(i + '{metadata.'.length, close);
      const separator = body.indexOf(':-');
      const dotted = separator < 0 ? body : body.slice(0, separator);
      const fallback = separator < 0 ? undefined : body.slice(separator + 2);
      const path = dotted.split('.');
      if (path.some((segment) => !/^[A-Za-z0-9_-]+$/.test(segment))) {
        return {
          error: `ATIF filename_template metadata placeholder '${source}' must contain a dot-separated path of ASCII letters, digits, '-' or '_'`,
        };
      }
      if (fallback !== undefined && !isSafeFragment(fallback)) {
        return { error: `ATIF filename_template fallback '${fallback}' must be a path-safe relative fragment` };
      }
      if (literal !== '') parts.push({ kind: 'literal', text: literal });
      literal = '';
      parts.push({ kind: 'metadata', path, source, fallback });
      i = close + 1;
      continue;
    }
    literal += template[i];
    i++;
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  return { template, parts };
}

/** A template rendered for one trajectory: the relative path and what fell back to `unknown`. */
export interface RenderedFilename {
  /** Relative path under the output folder. */
  path: string;
  /** Placeholders that did not resolve and were rendered as `unknown`. */
  unresolved: string[];
}

const MAX_VALUE_LENGTH = 100;

/** Renders a parsed template for one trajectory root. */
export function renderFilename(parsed: ParsedTemplate, sessionId: string, metadata: Json): RenderedFilename {
  let out = '';
  const unresolved: string[] = [];
  for (const part of parsed.parts) {
    if (part.kind === 'literal') out += part.text;
    else if (part.kind === 'session_id') out += sanitizeValue(sessionId);
    else {
      const value = lookup(metadata, part.path);
      if (value == null && part.fallback !== undefined) {
        out += part.fallback;
        continue;
      }
      const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
      if (text === '') {
        unresolved.push(part.source);
        out += 'unknown';
      } else {
        out += sanitizeValue(text);
      }
    }
  }
  return { path: out, unresolved };
}

/** Reduces a value to one safe path segment (see the module comment). */
export function sanitizeValue(value: string): string {
  let out = '';
  let pendingDash = false;
  let i = 0;
  while (i < value.length) {
    const char = value[i]!;
    if (char === '.') {
      let end = i;
      while (end < value.length && value[end] === '.') end++;
      if (end - i >= 2) pendingDash = true;
      else {
        if (pendingDash) out += '-';
        pendingDash = false;
        out += '.';
      }
      i = end;
      continue;
    }
    if (/[A-Za-z0-9_~-]/.test(char)) {
      if (pendingDash) out += '-';
      pendingDash = false;
      out += char;
    } else {
      pendingDash = true;
    }
    i++;
  }
  if (pendingDash) out += '-';
  if (out === '.') out = '-';
  return out.length > MAX_VALUE_LENGTH ? out.slice(0, MAX_VALUE_LENGTH) : out;
}

function lookup(metadata: Json, path: readonly string[]): Json | undefined {
  let current: Json | undefined = metadata;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** Native's template rule: relative, no `.` or `..` segment (other characters are allowed in literal text). */
function isSafeRelativePath(template: string, allowEmptySegments: boolean): boolean {
  if (template.startsWith('/')) return false;
  for (const segment of template.split('/')) {
    if (segment === '.' || segment === '..') return false;
    if (!allowEmptySegments && segment === '') return false;
  }
  return true;
}

function isSafeFragment(fragment: string): boolean {
  return fragment !== '' && /^[A-Za-z0-9_.~/-]+$/.test(fragment) && isSafeRelativePath(fragment, false);
}
