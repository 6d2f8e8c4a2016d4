/**
 * A small typed argument parser (no dependency): long flags (`--out dir`,
 * `--out=dir`), short aliases (`-o dir`), boolean flags, `choices`, and `--`
 * to end flags. Every mistake is a `UsageError` naming the command.
 *
 * @module
 */

import { UsageError } from './errors.ts';

export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Allowed values of a string flag. */
  choices?: readonly string[];
  /** Placeholder shown in help, e.g. `<dir>`. */
  value?: string;
  description: string;
  /** Left out of help (internal flags such as `--report-memory`). */
  hidden?: boolean;
  /** A string flag that may repeat; the values are collected. */
  multiple?: boolean;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Usage line after the program and command name, e.g. `<hooks.jsonl> --out <dir>`. */
  usage: string;
  /** Longer text printed under the usage line by `--help`. */
  details?: string;
  flags: Record<string, FlagSpec>;
  positionals: { name: string; min: number; max: number };
}

export interface ParsedArgs {
  positionals: string[];
  strings: Map<string, string[]>;
  booleans: Set<string>;
}

/** Parses `argv` (the words after the command name) against `spec`. */
export function parseArgs(argv: readonly string[], spec: CommandSpec): ParsedArgs {
  const parsed: ParsedArgs = { positionals: [], strings: new Map(), booleans: new Set() };
  const byShort = new Map<string, string>();
  for (const [name, flag] of Object.entries(spec.flags)) if (flag.short) byShort.set(flag.short, name);
  let flagsEnded = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (flagsEnded || word === '-' || !word.startsWith('-')) {
      parsed.positionals.push(word);
      continue;
    }
    if (word === '--') {
      flagsEnded = true;
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      name = eq === -1 ? word.slice(2) : word.slice(2, eq);
      inline = eq === -1 ? undefined : word.slice(eq + 1);
    } else {
      const short = word.slice(1);
      const long = byShort.get(short);
      if (long === undefined) throw new UsageError(`unknown flag ${word} for "${spec.name}"`, spec.name);
      name = long;
    }
    const flag = Object.prototype.hasOwnProperty.call(spec.flags, name) ? spec.flags[name] : undefined;
    if (flag === undefined) throw new UsageError(`unknown flag --${name} for "${spec.name}"`, spec.name);
    if (flag.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`flag --${name} takes no value`, spec.name);
      parsed.booleans.add(name);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        throw new UsageError(`flag --${name} needs a value${flag.value ? ` ${flag.value}` : ''}`, spec.name);
      }
      value = next;
      i += 1;
    }
    if (value === '') throw new UsageError(`flag --${name} needs a non-empty value`, spec.name);
    if (flag.choices && !flag.choices.includes(value)) {
      throw new UsageError(`--${name} must be one of ${flag.choices.join(', ')} (got ${JSON.stringify(value)})`, spec.name);
    }
    const values = parsed.strings.get(name) ?? [];
    if (values.length > 0 && !flag.multiple) throw new UsageError(`flag --${name} given twice`, spec.name);
    values.push(value);
    parsed.strings.set(name, values);
  }
  if (parsed.booleans.has('help')) return parsed;
  const { name, min, max } = spec.positionals;
  if (parsed.positionals.length < min) {
    throw new UsageError(`"${spec.name}" needs ${min === 1 ? 'a' : `at least ${min}`} ${name} argument${min === 1 ? '' : 's'}`, spec.name);
  }
  if (parsed.positionals.length > max) {
    const extra = parsed.positionals[max]!;
    throw new UsageError(
      max === 0 ? `"${spec.name}" takes no arguments (got ${JSON.stringify(extra)})` : `unexpected argument ${JSON.stringify(extra)} for "${spec.name}"`,
      spec.name,
    );
  }
  return parsed;
}

/** The single value of a string flag, or `fallback`. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined;
export function stringFlag(args: ParsedArgs, name: string, fallback: string): string;
export function stringFlag(args: ParsedArgs, name: string, fallback?: string): string | undefined {
  return args.strings.get(name)?.[0] ?? fallback;
}

export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.booleans.has(name);
}

/** The shared `--help`/`-h` flag every command accepts. */
export const HELP_FLAG: FlagSpec = { type: 'boolean', short: 'h', description: 'Show this help.' };

/** The shared `--json` flag of the commands a script drives (shapes in docs/cli/README.md, "Output for scripts"). */
export const JSON_FLAG: FlagSpec = { type: 'boolean', description: 'Print one JSON document on stdout instead of text (shape: docs/cli/README.md).' };
