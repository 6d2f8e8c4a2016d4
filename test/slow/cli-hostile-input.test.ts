// The CLI's readers against hostile files: real hook logs, ATOF, ATIF and
// plugins.toml files (recorded by `replay` from the repository's own streams)
// corrupted at random, then fed to every command that reads them, the way a
// user runs it (a child process). Whatever the input, each run must end in
// time with a documented exit code, say what is wrong in words (no stack
// trace, no "TypeError:"), print a bounded amount, write only into the
// folder or page it was given, keep the plugins.toml secrets out of its
// output, and `validate` must call a file it cannot parse invalid.
//
// Seeds: CLI_FUZZ_SEEDS (how many, default 8) from CLI_FUZZ_FROM (default 1).
// A failure names the seed, the mutations, the command and the corrupted
// file; `CLI_FUZZ_FROM=<seed> CLI_FUZZ_SEEDS=1` replays it, and with
// CLI_FUZZ_KEEP=<folder> the cases are written there and kept (the run's
// temp folder is removed at its end).
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Draw } from '../support/seeded-random.ts';
import { cli, cliInProcess, ROOT, tempDir, type CliResult } from '../cli/support.ts';

const SEEDS = Array.from({ length: Number(process.env.CLI_FUZZ_SEEDS ?? 8) }, (_, i) => Number(process.env.CLI_FUZZ_FROM ?? 1) + i);
const RUN_TIMEOUT_MS = 30_000;
/** More than any honest report of these inputs prints; a reader echoing megabytes of bad input back is a defect. */
const MAX_STDERR = 256 * 1024;
const MAX_STDOUT = 16 * 1024 * 1024;

// Secrets the plugins.toml source carries: doctor may name where they are, never print them.
const HEADER_SECRET = 'Bearer sk-fuzz-header-0123456789abcdef';
const URL_SECRET = 'pw-fuzz-in-url-9876';
const ENV_SECRET = 'env-fuzz-token-55aa55aa';

type Kind = 'hooks' | 'atof' | 'atif' | 'toml';

interface Source {
  kind: Kind;
  name: string;
  bytes: Buffer;
}

let sources: Source[] = [];
/** A good file of each kind that compare reads, to compare a corrupted run against. */
const good: Partial<Record<Kind, string>> = {};
let root = '';

const STREAMS = ['subagent', 'tool-loop', 'parallel-subagents', 'approvals-unmatched', 'interleaved-sessions'];

function tomlSource(dir: string): string {
  return `version = 1

[[components]]
kind = "observability"
enabled = true

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"
output_directory = ${JSON.stringify(path.join(dir, 'atof'))}
filename = "events.jsonl"
mode = "overwrite"

[[components.config.atof.sinks]]
type = "stream"
url = "https://fuzz:${URL_SECRET}@logs.example.com/atof"
transport = "http_post"
headers = { "authorization" = "${HEADER_SECRET}", "x-team" = "agents" }
header_env = { "x-token" = "FUZZ_ATOF_TOKEN" }
timeout_millis = 2000

[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(path.join(dir, 'atif'))}
filename_template = "trajectory-{session_id}.json"
`;
}

beforeAll(async () => {
  const keep = process.env.CLI_FUZZ_KEEP;
  root = keep === undefined ? tempDir('nrh-cli-fuzz-') : mkdtempSync(path.join(path.resolve(keep), 'nrh-cli-fuzz-'));
  const recorded = path.join(root, 'good');
  for (const stream of STREAMS) {
    const input = path.join(ROOT, 'test/fixtures/streams', `${stream}.hooks.jsonl`);
    const result = await cliInProcess(['replay', input, '--out', recorded, '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    sources.push({ kind: 'hooks', name: `${stream}.hooks.jsonl`, bytes: readFileSync(input) });
  }
  for (const name of readdirSync(path.join(recorded, 'atof'))) sources.push({ kind: 'atof', name, bytes: readFileSync(path.join(recorded, 'atof', name)) });
  for (const name of readdirSync(path.join(recorded, 'atif'))) sources.push({ kind: 'atif', name, bytes: readFileSync(path.join(recorded, 'atif', name)) });
  sources.push({ kind: 'toml', name: 'plugins.toml', bytes: Buffer.from(tomlSource(path.join(root, 'never-written'))) });
  sources = sources.sort((a, b) => a.name.localeCompare(b.name));
  good.atof = path.join(recorded, 'atof', 'subagent-atof.jsonl');
  good.atif = path.join(recorded, 'atif', 'subagent-atif-parent-1.json');
  good.hooks = path.join(ROOT, 'test/fixtures/streams/subagent.hooks.jsonl');
  expect(existsSync(good.atif)).toBe(true);
});

// ---------------------------------------------------------------- mutations

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Raw JSON text that JSON.stringify cannot produce (1e400, -0, 10,000 levels), put in through a placeholder. */
class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

const HOSTILE_STRINGS = [
  '../../../../escaped',
  '/tmp/absolute-escape',
  '..',
  '.',
  '',
  'a/b/../../..',
  'nul\u0000byte',
  '\u001b[31mred\u001b[0m\u0007',
  '\u202etxt.exe',
  '\ud800',
  'x'.repeat(300),
  '%2e%2e%2fescape',
  '..\\..\\escape',
  'CON',
];

const TIMESTAMPS: Array<Json | Raw> = [
  'NaN',
  'not a time',
  '9999-12-31T23:59:59.999999+00:00',
  '+275760-09-13T00:00:00.000Z',
  '1970-01-01T00:00:00Z',
  '2026-13-45T99:99:99Z',
  -1,
  1e21,
  new Raw('1e400'),
  new Raw('-0'),
  0,
  '',
];

function wrongType(d: Draw, value: Json): Json | Raw {
  const options: Array<Json | Raw> = [
    null,
    0,
    -1,
    1.5,
    '',
    'a string',
    true,
    [],
    {},
    [value],
    { value },
    new Raw('1e400'),
    new Raw('-0'),
    new Raw('123456789012345678901234567890123456789'),
    new Raw('-1e-400'),
    Number.MAX_SAFE_INTEGER + 2,
    typeof value === 'number' ? String(value) : typeof value === 'string' && value !== '' && !Number.isNaN(Number(value)) ? Number(value) : 42,
  ];
  return d.pick(options);
}

function deepNesting(d: Draw): Raw {
  const levels = d.pick([1000, 10_000]);
  return d.chance(0.5) ? new Raw('['.repeat(levels) + ']'.repeat(levels)) : new Raw('{"a":'.repeat(levels) + '1' + '}'.repeat(levels));
}

interface Slot {
  holder: Json[] | { [key: string]: Json };
  key: string | number;
  value: Json;
}

/** Every place in a JSON value a mutation can change. */
function slots(value: Json, out: Slot[] = [], depth = 0): Slot[] {
  if (depth > 60 || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push({ holder: value, key: index, value: item });
      slots(item, out, depth + 1);
    });
  } else {
    for (const [key, item] of Object.entries(value)) {
      out.push({ holder: value, key, value: item });
      slots(item, out, depth + 1);
    }
  }
  return out;
}

/** Puts `value` at a slot; a Raw goes in as a placeholder string `render` swaps for the raw text. */
function put(raws: Raw[], slot: Slot, value: Json | Raw): void {
  let stored: Json;
  if (value instanceof Raw) {
    raws.push(value);
    stored = `@@raw${raws.length - 1}@@`;
  } else stored = value;
  if (Array.isArray(slot.holder)) slot.holder[slot.key as number] = stored;
  else Object.defineProperty(slot.holder, slot.key, { value: stored, enumerable: true, writable: true, configurable: true });
}

/** The document's text with the raw pieces in; undefined when an earlier mutation nested it past what JSON.stringify takes. */
function render(value: Json, raws: Raw[]): string | undefined {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return undefined;
  }
  raws.forEach((raw, index) => {
    text = text.split(`"@@raw${index}@@"`).join(raw.text);
  });
  return text;
}

const ID_KEYS = /(^|_)(uuid|id|session_id|trajectory_id|step_id|tool_call_id|parent_uuid|propagation_root_uuid|parent_id|function_id|turn_id|session)$/;
const TIME_KEYS = /(^|_)(timestamp|time|at|started_at|ended_at|start_time|end_time|ts)$/;

/** One change inside a JSON document; returns a word for the failure message. */
function mutateJson(d: Draw, doc: Json, raws: Raw[], peers: Json[]): string {
  const all = slots(doc);
  if (all.length === 0) return 'nothing to change';
  const objectSlots = all.filter((slot) => !Array.isArray(slot.holder));
  const ofKey = (pattern: RegExp) => objectSlots.filter((slot) => pattern.test(String(slot.key)));
  const choice = d.int(0, 9);
  switch (choice) {
    case 0: {
      const slot = d.pick(all);
      const value = wrongType(d, slot.value);
      put(raws, slot, value);
      return `wrong type at ${String(slot.key)}`;
    }
    case 1: {
      const slot = d.pick(objectSlots.length > 0 ? objectSlots : all);
      if (Array.isArray(slot.holder)) return 'rename skipped';
      const holder = slot.holder;
      const renamed = d.pick(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', `${String(slot.key)}_`, String(slot.key).toUpperCase(), '']);
      delete holder[slot.key as string];
      Object.defineProperty(holder, renamed, { value: slot.value, enumerable: true, writable: true, configurable: true });
      return `renamed ${String(slot.key)} to ${JSON.stringify(renamed)}`;
    }
    case 2: {
      const slot = d.pick(objectSlots.length > 0 ? objectSlots : all);
      if (Array.isArray(slot.holder)) return 'proto skipped';
      Object.defineProperty(slot.holder, d.pick(['__proto__', 'constructor']), {
        value: d.pick<Json>([{ polluted: true, toString: 1 }, null, 'x', [1], { prototype: { polluted: true } }]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return `__proto__/constructor key next to ${String(slot.key)}`;
    }
    case 3: {
      const slot = d.pick(all);
      put(raws, slot, deepNesting(d));
      return `deep nesting at ${String(slot.key)}`;
    }
    case 4: {
      const strings = all.filter((slot) => typeof slot.value === 'string');
      const slot = d.pick(strings.length > 0 ? strings : all);
      put(raws, slot, d.pick(['x', '\u00e9', '\ud83d\ude00', '\n', '\u0000']).repeat(d.pick([70_000, 1_100_000])));
      return `long string at ${String(slot.key)}`;
    }
    case 5: {
      const ids = ofKey(ID_KEYS);
      const slot = d.pick(ids.length > 0 ? ids : all);
      put(raws, slot, d.pick(HOSTILE_STRINGS));
      return `hostile id at ${String(slot.key)}`;
    }
    case 6: {
      const times = ofKey(TIME_KEYS);
      const slot = d.pick(times.length > 0 ? times : all);
      put(raws, slot, d.pick(TIMESTAMPS));
      return `timestamp at ${String(slot.key)}`;
    }
    case 7: {
      // A parent that is the event itself or one of its descendants: a cycle.
      const parents = ofKey(/^(parent_uuid|parent_id|propagation_root_uuid)$/);
      const ids = [...slots(doc), ...peers.flatMap((peer) => slots(peer))].filter((slot) => /^(uuid|function_id|session_id)$/.test(String(slot.key)));
      if (parents.length === 0 || ids.length === 0) return 'no parent to loop';
      put(raws, d.pick(parents), d.pick(ids).value);
      return 'parent cycle';
    }
    case 8: {
      const numbers = all.filter((slot) => typeof slot.value === 'number');
      const slot = d.pick(numbers.length > 0 ? numbers : all);
      put(raws, slot, d.pick<Json | Raw>([new Raw('1e400'), new Raw('-1e400'), new Raw('-0'), new Raw('1e-400'), new Raw('99999999999999999999999'), -1, 0, 2 ** 53 + 1, 1e308]));
      return `number at ${String(slot.key)}`;
    }
    default: {
      const arrays = all.filter((slot) => Array.isArray(slot.value) && slot.value.length > 0);
      if (arrays.length === 0) return 'no array';
      const items = arrays.length > 0 ? (d.pick(arrays).value as Json[]) : [];
      const index = d.int(0, items.length - 1);
      if (d.chance(0.5)) items.splice(index, 0, structuredClone(items[index]!));
      else items.splice(index, 1);
      return 'array item duplicated or removed';
    }
  }
}

function lines(bytes: Buffer): string[] {
  return bytes.toString('utf8').split('\n');
}

/** One mutation of the whole file; returns the new bytes and what was done. */
function mutate(d: Draw, source: Source, bytes: Buffer): { bytes: Buffer; what: string } {
  const structural = source.kind !== 'toml';
  // JSON files: 9 and up change a parsed value; plugins.toml: 9 and up change an assignment.
  const choice = d.int(0, 13);
  switch (choice) {
    case 0: {
      const at = d.int(0, bytes.length);
      return { bytes: bytes.subarray(0, at), what: `truncated at byte ${at}` };
    }
    case 1: {
      const copy = Buffer.from(bytes);
      const flips = d.int(1, 8);
      for (let i = 0; i < flips && copy.length > 0; i++) copy[d.int(0, copy.length - 1)] ^= 1 << d.int(0, 7);
      return { bytes: copy, what: `${flips} bit flips` };
    }
    case 2: {
      const bad = d.pick([[0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x00]]);
      const at = d.int(0, bytes.length);
      return { bytes: Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)]), what: `invalid UTF-8 ${bad.map((b) => b.toString(16)).join(' ')} at ${at}` };
    }
    case 3: {
      const all = lines(bytes);
      const i = d.int(0, all.length - 1);
      all.splice(i, 1);
      return { bytes: Buffer.from(all.join('\n')), what: `line ${i + 1} removed` };
    }
    case 4: {
      const all = lines(bytes);
      const i = d.int(0, all.length - 1);
      const times = d.pick([1, 2, 50]);
      all.splice(i, 0, ...Array<string>(times).fill(all[i]!));
      return { bytes: Buffer.from(all.join('\n')), what: `line ${i + 1} duplicated ${times}x` };
    }
    case 5: {
      const all = lines(bytes);
      const i = d.int(0, all.length - 1);
      const j = d.int(0, all.length - 1);
      [all[i], all[j]] = [all[j]!, all[i]!];
      return { bytes: Buffer.from(all.join('\n')), what: `lines ${i + 1} and ${j + 1} swapped` };
    }
    case 6:
      return { bytes: Buffer.from(bytes.toString('latin1').replace(/\n/g, '\r\n'), 'latin1'), what: 'CRLF line ends' };
    case 7:
      return { bytes: Buffer.from(d.shuffle(lines(bytes)).join('\n')), what: 'lines shuffled' };
    case 8: {
      const all = lines(bytes);
      return { bytes: Buffer.from(all.reverse().join('\n')), what: 'lines reversed' };
    }
    default: {
      if (!structural) return mutateToml(d, bytes);
      const raws: Raw[] = [];
      if (source.kind === 'atif') {
        let doc: Json;
        try {
          doc = JSON.parse(bytes.toString('utf8')) as Json;
        } catch {
          return { bytes, what: 'unparsable, left as is' };
        }
        const what = mutateJson(d, doc, raws, []);
        const text = render(doc, raws);
        return text === undefined ? { bytes, what: 'too deep to change, left as is' } : { bytes: Buffer.from(text), what };
      }
      const all = lines(bytes);
      const parsed = all.map((line) => {
        try {
          return JSON.parse(line) as Json;
        } catch {
          return undefined;
        }
      });
      const usable = parsed.map((value, index) => (value !== undefined ? index : -1)).filter((index) => index >= 0);
      if (usable.length === 0) return { bytes, what: 'no JSON line to change' };
      const index = d.pick(usable);
      const doc = parsed[index]!;
      const what = mutateJson(d, doc, raws, parsed.filter((value): value is Json => value !== undefined));
      const text = render(doc, raws);
      if (text === undefined) return { bytes, what: `line ${index + 1}: too deep to change, left as is` };
      all[index] = text;
      return { bytes: Buffer.from(all.join('\n')), what: `line ${index + 1}: ${what}` };
    }
  }
}

function mutateToml(d: Draw, bytes: Buffer): { bytes: Buffer; what: string } {
  const all = lines(bytes);
  const assignments = all.map((line, index) => (/^\s*[\w."-]+\s*=/.test(line) ? index : -1)).filter((index) => index >= 0);
  // A file cut before its first assignment gets one to change.
  if (assignments.length === 0) assignments.push(all.push('version = 1') - 1);
  const index = d.pick(assignments);
  const key = all[index]!.split('=')[0]!.trim();
  const value = d.pick([
    '{}',
    '[]',
    '1e400',
    '-0',
    'nan',
    'inf',
    '99999999999999999999999',
    '"../../../../escaped"',
    '"/tmp/absolute-escape"',
    `"${'x'.repeat(200_000)}"`,
    '['.repeat(10_000) + ']'.repeat(10_000),
    '{ a = '.repeat(2_000) + '1' + ' }'.repeat(2_000),
    'true',
    '"\\u0000"',
    '1979-05-27T07:32:00Z',
  ]);
  const extra = d.pick(['', '\n__proto__ = 1', '\nconstructor = { prototype = 1 }', '\n[components.config.__proto__]\npolluted = true', '\n[[components]]\nkind = "observability"']);
  all[index] = `${key} = ${value}${extra}`;
  return { bytes: Buffer.from(all.join('\n')), what: `toml ${key} = ${value.slice(0, 40)}${extra.replace(/\n/g, ' ')}` };
}

// ---------------------------------------------------------------- runs

interface Run {
  label: string;
  args: string[];
  /** Exit codes the command documents for this run. */
  codes: readonly number[];
  /** Relative to the case folder: where this run may write (nothing else may change). */
  writes: string[];
  env?: Record<string, string>;
  input?: Buffer;
}

function runsFor(kind: Kind, file: string): Run[] {
  if (kind === 'toml') {
    const env = { FUZZ_ATOF_TOKEN: ENV_SECRET };
    return [
      { label: 'doctor', args: ['doctor', '--plugins-toml', file], codes: [0, 1], writes: [], env },
      { label: 'doctor --json', args: ['doctor', '--plugins-toml', file, '--json'], codes: [0, 1], writes: [], env },
      { label: 'doctor (env)', args: ['doctor'], codes: [0, 1], writes: [], env: { ...env, NEMO_RELAY_HOOKS_PLUGINS_TOML: file } },
    ];
  }
  const other = kind === 'hooks' ? good.atof! : good[kind]!;
  return [
    { label: 'view', args: ['view', file], codes: [0, 1], writes: [] },
    { label: 'view --json', args: ['view', file, '--json'], codes: [0, 1], writes: [] },
    // Two inputs: sessions of one referenced from the other's tool calls are shown under them (linked.ts), ids may repeat.
    { label: 'view with a good run', args: ['view', file, other, file], codes: [0, 1], writes: [] },
    { label: 'view --html', args: ['view', file, '--html', 'out/view/page.html'], codes: [0, 1], writes: ['out/view'] },
    { label: 'convert', args: ['convert', file, '--out', 'out/convert'], codes: [0, 1], writes: ['out/convert'] },
    { label: 'validate', args: ['validate', file], codes: [0, 1], writes: [] },
    { label: 'validate --json', args: ['validate', file, '--json'], codes: [0, 1], writes: [] },
    { label: 'replay', args: ['replay', file, '--out', 'out/replay', '--quiet'], codes: [0, 1], writes: ['out/replay'] },
    { label: 'compare vs good', args: ['compare', file, other, '--json'], codes: [0, 1, 2], writes: [] },
    { label: 'compare vs itself', args: ['compare', file, file, '--html', 'out/compare/page.html'], codes: [0, 1, 2], writes: ['out/compare'] },
  ];
}

/** path → size and mtime of everything under `dir`, links not followed. */
function snapshot(dir: string, prefix = '', out = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    const stat = lstatSync(path.join(dir, entry.name));
    out.set(relative, `${stat.mode}:${stat.size}:${stat.mtimeMs}`);
    if (entry.isDirectory()) snapshot(path.join(dir, entry.name), relative, out);
  }
  return out;
}

/** Can the test itself parse this file as what its name says, from UTF-8? (validate must call anything else invalid) */
function parsable(kind: Kind, bytes: Buffer): boolean {
  if (kind === 'atif' || kind === 'atof') {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return false;
    }
  }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (kind === 'atif') {
    try {
      const value = JSON.parse(text) as unknown;
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    } catch {
      return false;
    }
  }
  if (kind === 'atof') {
    return text.split('\n').every((line) => {
      if (line.trim() === '') return true;
      try {
        const value = JSON.parse(line) as unknown;
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      } catch {
        return false;
      }
    });
  }
  return true;
}

const STACK = /^\s+at |\b(TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError): |internal error|Uncaught|unhandled|node:internal|Maximum call stack/im;

/** What is wrong with one run (empty when it behaved). */
function judge(run: Run, result: CliResult | Error, before: Map<string, string>, after: Map<string, string>, caseDir: string, kind: Kind, bytes: Buffer | undefined, elapsedMs: number): string[] {
  if (result instanceof Error) return [`did not finish: ${result.message} after ${elapsedMs} ms`];
  const problems: string[] = [];
  if (!run.codes.includes(result.code)) problems.push(`exit code ${result.code} (${result.code === -1 ? 'killed by a signal' : `documented: ${run.codes.join(', ')}`})`);
  if (STACK.test(result.stderr)) problems.push(`stderr has a stack trace or an internal error:\n${result.stderr.slice(0, 4000)}`);
  if (result.stderr.length > MAX_STDERR) problems.push(`stderr is ${result.stderr.length} characters (at most ${MAX_STDERR}): ${result.stderr.slice(0, 600)}…`);
  if (result.stdout.length > MAX_STDOUT) problems.push(`stdout is ${result.stdout.length} characters (at most ${MAX_STDOUT})`);
  for (const secret of [HEADER_SECRET, URL_SECRET, ENV_SECRET]) {
    if (result.stdout.includes(secret) || result.stderr.includes(secret)) problems.push(`printed the secret ${secret}`);
  }
  const changed = [...after.entries()].filter(([file, stamp]) => before.get(file) !== stamp).map(([file]) => file);
  const removed = [...before.keys()].filter((file) => !after.has(file));
  const outside = [...changed, ...removed].filter((file) => !run.writes.some((allowed) => file === allowed || file.startsWith(`${allowed}/`)) && !(run.writes.length > 0 && file === 'out'));
  if (outside.length > 0) problems.push(`wrote outside its target (${run.writes.join(', ') || 'nothing'}): ${outside.join(', ')} in ${caseDir}`);
  if (run.label.startsWith('validate') && bytes !== undefined && !parsable(kind, bytes) && result.code !== 1) problems.push(`validate exit ${result.code} for a file it cannot parse`);
  return problems;
}

function runCase(caseDir: string, kind: Kind, file: string, bytes: Buffer | undefined, describeCase: string): string[] {
  const failures: string[] = [];
  for (const run of runsFor(kind, file)) {
    const before = snapshot(caseDir);
    const started = Date.now();
    let result: CliResult | Error;
    try {
      result = cli(run.args, { cwd: caseDir, timeoutMs: RUN_TIMEOUT_MS, env: run.env, input: run.input });
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    const after = snapshot(caseDir);
    const problems = judge(run, result, before, after, caseDir, kind, bytes, Date.now() - started);
    if (problems.length > 0) failures.push(`${describeCase}\n  $ (cd ${caseDir} && nemo-relay-hooks ${run.args.join(' ')})\n  ${problems.join('\n  ')}`);
  }
  return failures;
}

describe('CLI readers against corrupted real files', () => {
  it.each(SEEDS)('seed %i', (seed) => {
    const d = new Draw(seed);
    // The kind first: each reader gets a quarter of the seeds, however many files of a kind there are.
    const kind = d.pick<Kind>(['hooks', 'atof', 'atif', 'toml']);
    const source = d.pick(sources.filter((candidate) => candidate.kind === kind));
    let bytes = source.bytes;
    const steps: string[] = [];
    for (let i = d.int(1, 3); i > 0; i--) {
      const next = mutate(d, source, bytes);
      bytes = next.bytes;
      steps.push(next.what);
    }
    const caseDir = path.join(root, `seed-${seed}`);
    mkdirSync(caseDir, { recursive: true });
    const file = path.join(caseDir, source.name);
    writeFileSync(file, bytes);
    const failures = runCase(caseDir, source.kind, file, bytes, `seed ${seed}: ${source.name} (${source.kind}), ${steps.join('; ')}; corrupted file: ${file}`);
    expect(failures, failures.join('\n\n')).toEqual([]);
  });
});

describe('CLI readers against what is not a file of the kind', () => {
  const fifoSupported = process.platform !== 'win32' && spawnSync('mkfifo', ['--help']).error === undefined;
  if (!fifoSupported) console.info('[cli-hostile-input] FIFO case skipped: no mkfifo here');
  if (!existsSync('/dev/zero')) console.info('[cli-hostile-input] /dev/zero case skipped: no /dev/zero here');

  const specials: Array<{ name: string; make: (dir: string, fileName: string) => string | undefined }> = [
    { name: 'an empty file', make: (dir, fileName) => (writeFileSync(path.join(dir, fileName), ''), path.join(dir, fileName)) },
    { name: 'only blank lines and CRLFs', make: (dir, fileName) => (writeFileSync(path.join(dir, fileName), '\r\n\n  \r\n'), path.join(dir, fileName)) },
    { name: 'a directory', make: (dir, fileName) => (mkdirSync(path.join(dir, fileName)), path.join(dir, fileName)) },
    {
      name: 'a FIFO nobody writes to',
      make: (dir, fileName) => {
        if (!fifoSupported) return undefined;
        const fifo = path.join(dir, fileName);
        const made = spawnSync('mkfifo', [fifo]);
        return made.status === 0 ? fifo : undefined;
      },
    },
    { name: '/dev/zero', make: () => (existsSync('/dev/zero') ? '/dev/zero' : undefined) },
  ];

  for (const special of specials) {
    it(`${special.name} where a file is expected`, () => {
      const failures: string[] = [];
      for (const kind of ['hooks', 'atof', 'atif', 'toml'] as const) {
        const caseDir = path.join(root, `special-${special.name.replace(/\W+/g, '-')}-${kind}`);
        mkdirSync(caseDir, { recursive: true });
        const fileName = kind === 'toml' ? 'plugins.toml' : kind === 'atif' ? 'run.json' : kind === 'atof' ? 'run.jsonl' : 'run.hooks.jsonl';
        const file = special.make(caseDir, fileName);
        if (file === undefined) continue;
        const unreadable = special.name !== 'an empty file' && special.name !== 'only blank lines and CRLFs';
        // validate must fail what it cannot read; judge() checks that through `parsable`.
        const bytes = unreadable ? Buffer.from(kind === 'atif' || kind === 'atof' ? '{' : '') : readFileSync(file);
        failures.push(...runCase(caseDir, kind, file, bytes, `${special.name} as ${kind} (${file})`));
      }
      expect(failures, failures.join('\n\n')).toEqual([]);
    });
  }

  it('the corrupted files on standard input', () => {
    const failures: string[] = [];
    const d = new Draw(SEEDS[0]!);
    for (const source of sources.filter((candidate) => candidate.kind !== 'toml')) {
      const { bytes, what } = mutate(d, source, source.bytes);
      const caseDir = path.join(root, `stdin-${source.name}`);
      mkdirSync(caseDir, { recursive: true });
      const file = path.join(caseDir, source.name);
      writeFileSync(file, bytes);
      for (const args of [['validate', '-'], ['view', '-', '--json'], ['convert', '-', '--out', 'out/convert'], ['replay', '-', '--out', 'out/replay', '--quiet']]) {
        const result = cli(args, { cwd: caseDir, timeoutMs: RUN_TIMEOUT_MS, input: bytes });
        if (![0, 1].includes(result.code) || STACK.test(result.stderr)) failures.push(`${source.name} (${what}, ${file}) | ${args.join(' ')}: exit ${result.code}\n${result.stderr.slice(0, 2000)}`);
        // Blank standard input is an ATOF stream with no events (documented), whatever file it came from.
        if (args[0] === 'validate' && bytes.toString('utf8').trim() !== '' && !parsable(source.kind, bytes) && result.code !== 1) failures.push(`${source.name} (${what}, ${file}) | validate -: exit ${result.code} for a file it cannot parse`);
      }
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  });
});
