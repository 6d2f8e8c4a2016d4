/**
 * Start/end pairing: each uuid names one mark or one scope; a scope starts
 * once and ends at most once, and its end repeats the start's name,
 * attributes, category and parent, strictly after it.
 *
 * @module
 */

import { compareInstants, type Instant } from '../../instant.ts';
import { childPath } from '../../validation-result.ts';
import type { Findings } from './common.ts';

interface OpenScope {
  index: number;
  name: unknown;
  attributes: string;
  category: unknown;
  parent: unknown;
  instant: Instant | undefined;
  ended: boolean;
}

/** Pairs the events of one stream, in timestamp order (the caller sorts: consumers MUST sort before pairing). */
export class ScopePairs {
  readonly #scopes = new Map<string, OpenScope>();
  readonly #marks = new Set<string>();

  constructor(private readonly findings: Findings) {}

  mark(uuid: unknown, path: string): void {
    if (typeof uuid !== 'string') return;
    if (this.#marks.has(uuid) || this.#scopes.has(uuid)) {
      this.findings.error(childPath(path, 'uuid'), 'atof.duplicate_uuid', `uuid ${uuid} is used by another event`);
    }
    this.#marks.add(uuid);
  }

  scope(event: Record<string, unknown>, index: number, path: string, instant: Instant | undefined): void {
    const uuid = event.uuid;
    const phase = event.scope_category;
    if (typeof uuid !== 'string' || (phase !== 'start' && phase !== 'end')) return;
    const at = (key: string): string => childPath(path, key);
    const report = this.findings.error.bind(this.findings);
    if (this.#marks.has(uuid)) {
      report(at('uuid'), 'atof.duplicate_uuid', `uuid ${uuid} is used by a mark`);
      return;
    }
    // Attributes are a set: order and repeats do not make a pair differ.
    const attributes = Array.isArray(event.attributes) ? JSON.stringify([...new Set(event.attributes.map(String))].sort()) : '';
    const open = this.#scopes.get(uuid);
    if (phase === 'start') {
      if (open !== undefined) {
        report(at('scope_category'), 'atof.duplicate_start', `scope ${uuid} already started at $[${open.index}]`);
        return;
      }
      this.#scopes.set(uuid, { index, name: event.name, attributes, category: event.category, parent: event.parent_uuid, instant, ended: false });
      return;
    }
    if (open === undefined) {
      report(at('scope_category'), 'atof.unpaired_end', `scope ${uuid} ends without a start`);
      return;
    }
    if (open.ended) {
      report(at('scope_category'), 'atof.duplicate_end', `scope ${uuid} already ended`);
      return;
    }
    open.ended = true;
    const startPath = `$[${open.index}]`;
    if (event.name !== open.name) report(at('name'), 'atof.pair_mismatch', `end name differs from the start at ${startPath}`);
    if (Array.isArray(event.attributes) && attributes !== open.attributes) {
      report(at('attributes'), 'atof.pair_mismatch', `end attributes differ from the start at ${startPath}`);
    }
    if (event.category !== open.category) report(at('category'), 'atof.pair_mismatch', `end category differs from the start at ${startPath}`);
    if (event.parent_uuid !== open.parent) {
      report(at('parent_uuid'), 'atof.pair_mismatch', `end parent_uuid differs from the start at ${startPath}`);
    }
    if (instant !== undefined && open.instant !== undefined && compareInstants(instant, open.instant) <= 0) {
      report(at('timestamp'), 'atof.end_not_after_start', `end timestamp must be strictly after the start at ${startPath}`);
    }
  }
}
