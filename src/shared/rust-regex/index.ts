/**
 * Patterns in Rust's `regex` syntax, with Rust's meaning and Rust's
 * errors, run in time linear in the text: what a `pii_redaction` matcher
 * from configuration needs, since native compiles the same pattern with
 * Rust's engine and a JavaScript `RegExp` could both mean something else
 * and backtrack for ever.
 *
 * @module
 */

import { compile, RustRegexSizeError, type Program } from './program.ts';
import { expandReplacement, Matcher, type RustMatch } from './search.ts';
import { parseRustRegex, RustRegexSyntaxError } from './syntax.ts';

export { RustRegexBudgetError, DEFAULT_STEP_BUDGET, type RustMatch } from './search.ts';
export { RustRegexSyntaxError } from './syntax.ts';
export { RustRegexSizeError } from './program.ts';

/** A compiled pattern. */
export class RustRegex {
  private readonly program: Program;
  private readonly matcher: Matcher;

  /** Throws `RustRegexSyntaxError` or `RustRegexSizeError` (native's message) for a pattern Rust refuses. */
  constructor(readonly source: string, budget?: number) {
    this.program = compile(parseRustRegex(source));
    this.matcher = new Matcher(this.program, budget);
  }

  /** Rust's `find_iter` (with group spans when `captures`). Throws `RustRegexBudgetError` when one text takes too long. */
  matches(text: string, captures = false): RustMatch[] {
    return this.matcher.matches(text, captures);
  }

  /** Rust's `replace_all` with a function of each match's text. */
  replaceAllWith(text: string, replace: (matched: string) => string): string {
    const found = this.matcher.matches(text);
    if (found.length === 0) return text;
    let out = '';
    let last = 0;
    for (const m of found) {
      out += text.slice(last, m.start) + replace(text.slice(m.start, m.end));
      last = m.end;
    }
    return out + text.slice(last);
  }

  /** Rust's `replace_all` with a replacement template (`$1`, `${name}`, `$$`). */
  replaceAll(text: string, template: string): string {
    const expand = template.includes('$');
    const found = this.matcher.matches(text, expand);
    if (found.length === 0) return text;
    let out = '';
    let last = 0;
    for (const m of found) {
      out += text.slice(last, m.start) + (expand ? expandReplacement(template, m, text, this.program.names) : template);
      last = m.end;
    }
    return out + text.slice(last);
  }
}

/** Rust's error text for a pattern its engine refuses, or null when it compiles. */
export function rustRegexError(pattern: string): string | null {
  try {
    new RustRegex(pattern);
    return null;
  } catch (error) {
    if (error instanceof RustRegexSyntaxError || error instanceof RustRegexSizeError) return error.message;
    throw error;
  }
}
