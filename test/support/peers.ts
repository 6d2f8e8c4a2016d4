// The upstream conformance material in ../shared/peers (from the repo root):
// Harbor's goldens and RFC examples, the ATOF spec's example, NAT's
// reference converter examples and their variants. Read where present, never
// copied into the repo; tests skip with a printed reason where it is absent.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PEERS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/peers');

export interface ManifestEntry {
  file: string;
  kind: 'atif' | 'atof';
  expect: 'valid' | 'invalid';
  source: string;
}

/** Why the peers tests cannot run, or undefined when they can. */
export const peersUnavailable: string | undefined = existsSync(path.join(PEERS, 'manifest.json'))
  ? undefined
  : `the upstream conformance material (Harbor's ATIF goldens, the ATOF spec's example, NAT's converter examples) is not at ${PEERS}, beside this checkout; nothing else needs it (docs/contributing/tests.md)`;

if (peersUnavailable !== undefined) console.warn(`skipping upstream conformance tests: ${peersUnavailable}`);

export function manifest(): ManifestEntry[] {
  return peersUnavailable === undefined ? (JSON.parse(readFileSync(path.join(PEERS, 'manifest.json'), 'utf8')) as ManifestEntry[]) : [];
}

export const peerPath = (file: string): string => path.join(PEERS, file);

/** `exmp01`..`exmp06`: the reference converter's examples, each an ATOF input and its ATIF output. */
export function natExamples(): string[] {
  if (peersUnavailable !== undefined) return [];
  return readdirSync(path.join(PEERS, 'nat-reference-converter'))
    .filter((name) => name.endsWith('_atof.jsonl'))
    .map((name) => name.slice(0, -'_atof.jsonl'.length))
    .sort();
}

/** The variants: each is its `exmpNN-uuids.jsonl` original transformed the way a consumer may meet it. */
export function variants(): string[] {
  if (peersUnavailable !== undefined) return [];
  return readdirSync(path.join(PEERS, 'variants')).filter((name) => name.endsWith('.jsonl')).sort();
}

/**
 * A trajectory with what the variants change made comparable: every id
 * (uuid or reference id) by the order of its first appearance, and every
 * step timestamp by the instant it names.
 */
export function normalizeIdsAndClocks(trajectory: unknown): unknown {
  const ids = new Map<string, string>();
  const id = (value: string): string => {
    let mapped = ids.get(value);
    if (mapped === undefined) ids.set(value, (mapped = `id-${ids.size + 1}`));
    return mapped;
  };
  const ID_KEYS = new Set(['session_id', 'function_id', 'parent_id', 'invocation_id', 'trajectory_id']);
  const walk = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    if (typeof value === 'string' && key !== undefined && ID_KEYS.has(key)) return id(value);
    if (typeof value === 'string' && key === 'timestamp') return Date.parse(value);
    return value;
  };
  return walk(trajectory);
}
