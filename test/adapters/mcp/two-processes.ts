// docs/adapters/mcp.md's programs as a user runs them: its snippets, each a
// file named by its first line (`// agent.mjs`), written into one folder
// inside the package (so 'nemo-relay-hooks' is the package) and the agent run
// from an empty cwd, where both processes write their trajectories. Used by
// docs.test.ts and frameworks.test.ts; the span helpers read the trace.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, tsSnippets, type SnippetRuntime } from '../../support/doc-snippets.ts';
import type { DecodedSpan } from '../../support/otlp-receiver.ts';

export const MCP_PAGE = 'docs/adapters/mcp.md';

/** The page's snippets that are programs, by the file name their first line gives. */
export function mcpPrograms(): Map<string, string> {
  const programs = new Map<string, string>();
  for (const code of tsSnippets(readFileSync(path.join(repoRoot, MCP_PAGE), 'utf8'))) {
    const name = /^\/\/ (\S+\.mjs)\n/.exec(code)?.[1];
    if (name !== undefined) programs.set(name, code);
  }
  return programs;
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The empty folder it ran in (what it wrote is there); the caller removes it. */
  cwd: string;
}

/** Writes `files` into one folder inside the package and runs `agent` (one of them) from an empty cwd. */
export async function runAgent(files: Record<string, string>, agent: string, runtime: SnippetRuntime, env: NodeJS.ProcessEnv): Promise<Run> {
  const home = path.join(repoRoot, '.tmp', 'docs-snippets');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, `mcp-${runtime}-`));
  for (const [name, code] of Object.entries(files)) writeFileSync(path.join(folder, name), code);
  const cwd = mkdtempSync(path.join(tmpdir(), `nrh-docs-mcp-${runtime}-`));
  const file = path.join(folder, agent);
  const [binary, ...args] =
    runtime === 'node'
      ? [process.execPath.includes('node') ? process.execPath : 'node', file]
      : runtime === 'bun'
        ? [path.join(repoRoot, 'node_modules/.bin/bun'), file]
        : [path.join(repoRoot, 'node_modules/.bin/deno'), 'run', '-A', file];
  try {
    return await new Promise<Run>((resolve, reject) => {
      const child = spawn(binary!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill(), 120_000);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr, cwd });
      });
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export function brief(span: DecodedSpan): string {
  return `${span.name}#${span.spanId}<-${span.parentSpanId}`;
}

/** The span ids from `span`'s parent up to the root. */
export function ancestry(span: DecodedSpan, byId: Map<string, DecodedSpan>): string[] {
  const out: string[] = [];
  let parent = span.parentSpanId;
  while (parent !== '' && byId.has(parent) && !out.includes(parent)) {
    out.push(parent);
    parent = byId.get(parent)!.parentSpanId;
  }
  return out;
}

export function depthSorted(spans: DecodedSpan[], byId: Map<string, DecodedSpan>): DecodedSpan[] {
  return [...spans].sort((a, b) => ancestry(a, byId).length - ancestry(b, byId).length);
}
