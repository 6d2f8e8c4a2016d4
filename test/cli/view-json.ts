// What `view --json` shows of a recorded run, for the tests that read the
// viewer's tree of one session: the node type, the one session of a file,
// the run's two recorded files, and every node of a tree.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { cliInProcess } from './support.ts';

export interface JsonNode {
  kind: string;
  title: string;
  note?: string;
  tokens?: { prompt: number; completion: number; cached: number };
  totals?: { llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number; cachedTokens: number };
  own?: { promptTokens: number; completionTokens: number };
  error?: string;
  /** The id a row's title leaves out (an ATOF turn's `turn_id`). */
  id?: string;
  children: JsonNode[];
}

/** The one session `view --json` shows for a file. */
export async function viewed(file: string): Promise<JsonNode> {
  const result = await cliInProcess(['view', file, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const sessions = JSON.parse(result.stdout).files[0].sessions as JsonNode[];
  expect(sessions).toHaveLength(1);
  return sessions[0]!;
}

/** The recorded ATIF and ATOF files of a run (one of each in `dir`'s `atif/` and `atof/`). */
export function filesOf(dir: string): { atif: string; atof: string } {
  const one = (sub: string) => {
    const names = readdirSync(path.join(dir, sub));
    expect(names).toHaveLength(1);
    return path.join(dir, sub, names[0]!);
  };
  return { atif: one('atif'), atof: one('atof') };
}

/** A node and every node under it. */
export const all = (root: JsonNode): JsonNode[] => [root, ...root.children.flatMap(all)];
