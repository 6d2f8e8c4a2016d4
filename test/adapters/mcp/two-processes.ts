// docs/adapters/mcp.md's programs as a user runs them: its snippets, each a
// file named by its first line (`// agent.mjs`), written into one folder
// inside the package (so 'nemo-relay-hooks' is the package) and the agent run
// from an empty cwd, where both processes write their trajectories. Used by
// docs.test.ts and frameworks.test.ts; the span helpers read the trace.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, runFiles, tsSnippets, type SnippetRun, type SnippetRuntime } from '../../support/doc-snippets.ts';
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

export type Run = SnippetRun;

/** Writes `files` into one folder inside the package and runs `agent` (one of them) from an empty cwd. */
export function runAgent(files: Record<string, string>, agent: string, runtime: SnippetRuntime, env: NodeJS.ProcessEnv): Promise<Run> {
  return runFiles(files, agent, runtime, 'mcp', env);
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
