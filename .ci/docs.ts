/**
 * The docs' reference, generated from the code so it cannot drift:
 *
 * - `<!-- generated: env-vars -->`: the environment variables, from the
 *   settings table (`environmentVariables()`, src/plugin/config/settings.ts);
 * - `<!-- generated: plugins-toml-keys -->`: every `plugins.toml` key, from
 *   the schema native's structs are mirrored in (src/formats/plugins-toml/
 *   schema.ts), with the meanings in `.ci/plugins-toml-keys.ts`;
 * - `<!-- generated: cli-flags <command> -->` and `cli-help <command>`: each
 *   command's flags and `--help`, from its spec (src/cli/commands/*.ts);
 * - `<!-- generated: api <subpath> -->`: a public entry's names with the first
 *   sentence of their JSDoc, from `deno doc --json`;
 * - a ```text block right after `<!-- transcript -->`: each `$ ` line is run
 *   (Node on dist/, from a scratch folder holding `examples/` and `docs/`) and the output
 *   under it replaced by what the command printed.
 *
 * A region ends with `<!-- /generated -->`. `npm run docs` rewrites the
 * pages; test/docs/reference.test.ts regenerates them and fails on any
 * difference (timings and temporary paths masked).
 *
 *   bun .ci/docs.ts          # rewrite README.md and docs/**
 *   bun .ci/docs.ts --check  # exit 1 and list the pages that drifted
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentVariables } from '../src/plugin/config/settings.ts';
import { DOCUMENT_SCHEMA, OBSERVABILITY_SCHEMA } from '../src/formats/plugins-toml/schema.ts';
import type { Schema } from '../src/formats/plugins-toml/shape.ts';
import { COMMAND_SPECS } from '../src/cli/dispatch.ts';
import { commandHelp, programHelp } from '../src/cli/help.ts';
import { packageVersion } from '../src/cli/package-info.ts';
import { KEY_MEANINGS } from './plugins-toml-keys.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown pages the generator and the checks cover: README.md and docs/**\/*.md. */
export function docPages(root = ROOT): string[] {
  const pages = [path.join(root, 'README.md')];
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder).sort()) {
      const file = path.join(folder, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.md')) pages.push(file);
    }
  };
  walk(path.join(root, 'docs'));
  return pages;
}

// ------------------------------------------------------------------ tables

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function code(text: string): string {
  return text.startsWith('(') ? text : `\`${text}\``;
}

/** The environment variables, from the settings table. */
export function envVarsTable(): string {
  const rows = environmentVariables().map((variable) => {
    const hermes = variable.hermes !== undefined ? `\`${variable.hermes}\`` : '';
    const setting = variable.setting !== undefined ? `\`${variable.setting}\`` : '';
    const fallback = variable.hermesDefault !== undefined ? `${code(variable.default)} (Hermes: ${code(variable.hermesDefault)})` : code(variable.default);
    return `| \`${variable.name}\` | ${hermes} | ${setting} | ${cell(fallback)} | ${cell(variable.meaning)} |`;
  });
  return ['| Variable | Hermes name | `settings` key | Default | Meaning |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

interface KeyRow {
  path: string;
  type: string;
  required: boolean;
}

function typeOf(schema: Schema): string {
  switch (schema.t) {
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'u32':
    case 'u64':
    case 'i32':
    case 'usize':
      return 'integer';
    case 'f64':
      return 'number';
    case 'mapOf':
      return `table of ${typeOf(schema.of)}s`;
    case 'any':
      return 'any';
    case 'map':
      return 'table';
    case 'stringMap':
      return 'table of strings';
    case 'option':
      return typeOf(schema.of);
    case 'seq':
      return schema.of.t === 'struct' || schema.of.t === 'tagged' ? 'array of tables' : `array of ${typeOf(schema.of)}s`;
    case 'struct':
      return 'table';
    case 'tagged':
      return 'array of tables';
    case 'enum':
      return schema.variants.map((variant) => `"${variant}"`).join(', ');
  }
}

function walkKeys(schema: Schema, prefix: string, out: KeyRow[]): void {
  if (schema.t === 'option') return walkKeys(schema.of, prefix, out);
  if (schema.t === 'seq' && schema.of.t === 'tagged') return walkKeys(schema.of, prefix, out);
  if (schema.t === 'seq' && schema.of.t === 'struct') return walkKeys(schema.of, `${prefix}[]`, out);
  if (schema.t === 'tagged') {
    // One table per variant, told apart by its `type`.
    for (const [variant, struct] of Object.entries(schema.variants)) {
      const table = `${prefix}[type = "${variant}"]`;
      out.push({ path: table, type: 'table', required: false });
      walkKeys(struct, table, out);
    }
    return;
  }
  if (schema.t !== 'struct') return;
  for (const [name, field] of Object.entries(schema.fields)) {
    const key = prefix === '' ? name : `${prefix}.${name}`;
    out.push({ path: key, type: typeOf(field), required: schema.required?.includes(name) ?? false });
    walkKeys(field, key, out);
  }
}

/** Every key of a `plugins.toml` and of its observability component, from the schema. */
export function pluginsTomlKeyRows(): KeyRow[] {
  const rows: KeyRow[] = [];
  walkKeys(DOCUMENT_SCHEMA, '', rows);
  walkKeys(OBSERVABILITY_SCHEMA, 'components[].config', rows);
  // An observability component's `config` table: its keys, under `components[].config`.
  return rows;
}

/** The keys table; throws when a key has no meaning or a meaning names no key (either way the docs would drift). */
export function pluginsTomlKeysTable(): string {
  const rows = pluginsTomlKeyRows();
  const missing = rows.filter((row) => KEY_MEANINGS[row.path] === undefined).map((row) => row.path);
  const stale = Object.keys(KEY_MEANINGS).filter((key) => !rows.some((row) => row.path === key));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(`.ci/plugins-toml-keys.ts is out of step with the schema: no meaning for ${JSON.stringify(missing)}; meanings of no key ${JSON.stringify(stale)}`);
  }
  const lines = rows.map((row) => `| \`${row.path}\` | ${cell(row.type)}${row.required ? ' (required)' : ''} | ${cell(KEY_MEANINGS[row.path]!)} |`);
  return ['| Key | Type | Meaning |', '| --- | --- | --- |', ...lines].join('\n');
}

function specOf(command: string) {
  const spec = COMMAND_SPECS.find((candidate) => candidate.name === command);
  if (!spec) throw new Error(`no CLI command ${JSON.stringify(command)}`);
  return spec;
}

/** A command's flags, from its spec. */
export function cliFlagsTable(command: string): string {
  const spec = specOf(command);
  const rows = Object.entries(spec.flags)
    .filter(([, flag]) => !flag.hidden)
    .map(([name, flag]) => {
      const label = `${flag.short ? `\`-${flag.short}\`, ` : ''}\`--${name}${flag.type === 'string' ? ` ${flag.value ?? '<value>'}` : ''}\``;
      const values = flag.choices ? ` One of ${flag.choices.map((choice) => `\`${choice}\``).join(', ')}.` : '';
      return `| ${cell(label)} | ${cell(flag.description + values)}${flag.multiple ? ' May repeat.' : ''} |`;
    });
  return ['| Flag | Meaning |', '| --- | --- |', ...rows].join('\n');
}

/** A command's `--help` (or the program's, for `program`). */
export function cliHelp(command: string): string {
  const text = command === 'program' ? programHelp(COMMAND_SPECS, packageVersion()) : commandHelp(specOf(command));
  return ['```text', text.trimEnd(), '```'].join('\n');
}

// ------------------------------------------------------------------ API

/** The public entries, as `package.json` names them, and their source. */
export const ENTRY_POINTS: Readonly<Record<string, string>> = {
  'nemo-relay-hooks': 'src/index.ts',
  'nemo-relay-hooks/hooks': 'src/hooks/index.ts',
  'nemo-relay-hooks/formats': 'src/formats/index.ts',
  'nemo-relay-hooks/backend': 'src/relay/index.ts',
  'nemo-relay-hooks/memory': 'src/backends/memory/index.ts',
  'nemo-relay-hooks/native': 'native/index.ts',
  'nemo-relay-hooks/testing': 'src/testing/index.ts',
};

interface DocNode {
  name: string;
  declarations: { kind: string; jsDoc?: { doc?: string } }[];
}

let denoDoc: Map<string, DocNode[]> | undefined;

/** `deno doc --json` of every entry point, read once. */
function docNodes(root: string): Map<string, DocNode[]> {
  if (denoDoc) return denoDoc;
  const files = Object.values(ENTRY_POINTS).map((file) => path.join(root, file));
  const deno = path.join(root, 'node_modules', '.bin', 'deno');
  const result = spawnSync(deno, ['doc', '--json', ...files], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`deno doc failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { nodes: Record<string, { symbols?: DocNode[] }> };
  denoDoc = new Map();
  for (const [url, node] of Object.entries(parsed.nodes)) denoDoc.set(fileURLToPath(url), node.symbols ?? []);
  return denoDoc;
}

function firstSentence(doc: string | undefined): string {
  if (!doc) return '';
  const paragraph = doc.split(/\n\s*\n/)[0]!.replace(/\s+/g, ' ').trim();
  const match = /^(.*?[.!?])(\s|$)/.exec(paragraph);
  return match ? match[1]! : paragraph;
}

/** One entry's names, kinds and summaries (the first sentence of each JSDoc). */
export function apiTable(entry: string, root = ROOT): string {
  const file = ENTRY_POINTS[entry];
  if (!file) throw new Error(`no public entry ${JSON.stringify(entry)}`);
  const nodes = docNodes(root);
  const symbols = nodes.get(path.join(root, file)) ?? [];
  // A name re-exported through another module is a `reference`: its declaration is where it is defined.
  const defined = (name: string): DocNode | undefined => {
    for (const list of nodes.values()) {
      const found = list.find((candidate) => candidate.name === name && candidate.declarations.some((d) => d.kind !== 'reference'));
      if (found) return found;
    }
    return undefined;
  };
  const rows = symbols
    .map((symbol) => {
      const source = symbol.declarations.every((d) => d.kind === 'reference') ? (defined(symbol.name) ?? symbol) : symbol;
      const declaration = source.declarations.find((d) => d.jsDoc?.doc && d.kind !== 'reference') ?? source.declarations.find((d) => d.kind !== 'reference') ?? source.declarations[0];
      const kind = declaration?.kind === 'typeAlias' ? 'type' : (declaration?.kind ?? '');
      return { name: symbol.name, kind, summary: firstSentence(declaration?.jsDoc?.doc) };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return ['| Name | Kind | What it is |', '| --- | --- | --- |', ...rows.map((row) => `| \`${row.name}\` | ${row.kind} | ${cell(row.summary)} |`)].join('\n');
}

// ------------------------------------------------------------------ transcripts

/** A scratch folder holding `examples/` and `docs/` (links to the repository's), where transcript commands run. */
function scratch(root: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nrh-docs-transcript-'));
  for (const folder of ['examples', 'docs']) symlinkSync(path.join(root, folder), path.join(dir, folder), 'dir');
  return dir;
}

/**
 * Runs one `$ ` line (`[VAR=value ...] [npx] nemo-relay-hooks <args>`) as a
 * user does: Node on the built CLI (dist/), whatever runtime generates the
 * docs, so the transcript is Node's everywhere. The scratch folder's path is
 * left out of what it printed.
 */
function runLine(line: string, cwd: string, root: string): string {
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = { NO_COLOR: '1', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: os.tmpdir() };
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words[0] === 'npx') words.shift();
  if (words[0] !== 'nemo-relay-hooks') throw new Error(`a transcript runs nemo-relay-hooks commands only: ${line}`);
  const main = path.join(root, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error('the transcripts run the built CLI: npm run build first');
  const result = spawnSync(nodeBinary(), [main, ...words.slice(1)], { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const printed = `${result.stdout}${result.stderr}`.split(`${cwd}${path.sep}`).join('').trimEnd();
  return `${printed}${result.status === 0 ? '' : `\n(exit ${result.status})`}`;
}

/** Node, even when the generator runs on Bun or Deno. */
function nodeBinary(): string {
  return process.versions.bun || process.versions.deno ? 'node' : process.execPath;
}

async function transcript(block: string, root: string): Promise<string> {
  const dir = scratch(root);
  try {
    const out: string[] = [];
    for (const line of block.split('\n').filter((text) => text.startsWith('$ '))) {
      out.push(line, runLine(line.slice(2), dir, root));
    }
    return out.join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ pages

async function region(spec: string, root: string): Promise<string> {
  const [kind, arg] = spec.trim().split(/\s+/);
  switch (kind) {
    case 'env-vars':
      return envVarsTable();
    case 'plugins-toml-keys':
      return pluginsTomlKeysTable();
    case 'cli-flags':
      return cliFlagsTable(arg!);
    case 'cli-help':
      return cliHelp(arg!);
    case 'api':
      return apiTable(arg!, root);
    default:
      throw new Error(`unknown generated region ${JSON.stringify(spec)}`);
  }
}

/** The page with every generated region and transcript brought up to date. */
export async function generatePage(text: string, root = ROOT): Promise<string> {
  let out = '';
  let rest = text;
  const marker = /<!-- generated: ([^>]*?) -->\n[\s\S]*?<!-- \/generated -->|<!-- transcript -->\n```text\n([\s\S]*?)```/;
  for (let match = marker.exec(rest); match !== null; match = marker.exec(rest)) {
    out += rest.slice(0, match.index);
    if (match[1] !== undefined) out += `<!-- generated: ${match[1]} -->\n${await region(match[1], root)}\n<!-- /generated -->`;
    else out += `<!-- transcript -->\n\`\`\`text\n${await transcript(match[2]!, root)}\n\`\`\``;
    rest = rest.slice(match.index + match[0].length);
  }
  return out + rest;
}

/** What may differ between two runs of a transcript: durations, rates, temporary folders. */
export function masked(text: string): string {
  return text
    // The viewer's `<1ms` (a call between two equal millisecond stamps) is a duration like any other.
    .replace(/<?\d[\d,]*(\.\d+)?(ms|µs|s)\b/g, '<time>')
    .replace(/\d[\d,]*(\.\d+)? (lines|events)\/s/g, '<rate>')
    .replace(/nemo-relay-demo-[A-Za-z0-9]+/g, 'nemo-relay-demo-<id>');
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const drifted: string[] = [];
  for (const page of docPages()) {
    const text = readFileSync(page, 'utf8');
    const fresh = await generatePage(text);
    if (masked(fresh) === masked(text)) continue;
    drifted.push(path.relative(ROOT, page));
    if (!check) writeFileSync(page, fresh);
  }
  if (check && drifted.length > 0) {
    console.error(`the generated reference drifted in: ${drifted.join(', ')} (run npm run docs)`);
    process.exit(1);
  }
  console.log(drifted.length === 0 ? 'docs: up to date' : `docs: ${check ? 'drifted' : 'rewrote'} ${drifted.join(', ')}`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
