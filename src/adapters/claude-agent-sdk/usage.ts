/**
 * The tokens the CLI spent that no step holds.
 *
 * The CLI makes model requests the SDK's stream never shows: the one its
 * `WebSearch` tool sends while it runs, the one `WebFetch` sends to read the
 * page it fetched, the summary a compaction asks for. Their usage is counted
 * in the result's `modelUsage` (and its `total_cost_usd`), and nowhere else:
 * no message, hook or tool result carries it. So each turn's end states, per
 * model, what `modelUsage` counts beyond the steps recorded so far; the steps
 * and these statements add up to `modelUsage`. The last turn's end reads the
 * totals the CLI writes as it ends instead, which also count what it asked
 * after the last result (a suggestion of the next prompt).
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

/** A model's tokens, in the API's terms (`input_tokens` without the cache's). */
export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

const KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
/** `modelUsage`'s spelling of the same counts. */
const MODEL_USAGE_KEYS: Record<(typeof KEYS)[number], string> = {
  input_tokens: 'inputTokens',
  output_tokens: 'outputTokens',
  cache_read_input_tokens: 'cacheReadInputTokens',
  cache_creation_input_tokens: 'cacheCreationInputTokens',
};

const zero = (): TokenCounts => ({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The tokens of one query's recorded steps, and what its turn ends stated beyond them. */
export class QueryTokens {
  /** Recorded steps' tokens by the model that answered and the one asked for (the main agent's; a sub-agent's is unknown). */
  readonly #recorded = new Map<string, { answered: string | undefined; asked: string | undefined; counts: TokenCounts }>();
  /** What turn ends stated so far, by `modelUsage`'s model; with what the CLI carried over from a resumed session's earlier queries. */
  readonly #stated = new Map<string, TokenCounts>();
  /** The `modelUsage` entry each answered name no entry matches was counted under (see `#placeRenamed`). */
  readonly #placed = new Map<string, string>();

  /**
   * A resumed session's earlier spend, which the CLI restores into `modelUsage` (see `carriedUsage`): an earlier
   * query's trajectory holds it, this one does not state it again.
   */
  carried(modelUsage: unknown): void {
    if (!isRecord(modelUsage)) return;
    for (const [model, reported] of Object.entries(modelUsage)) {
      if (!isRecord(reported)) continue;
      const stated = this.#stated.get(model) ?? zero();
      for (const name of KEYS) stated[name] += count(reported[MODEL_USAGE_KEYS[name]]);
      this.#stated.set(model, stated);
    }
  }

  /** An answered request's final usage (the API's `usage`). */
  add(answered: string | undefined, asked: string | undefined, usage: unknown): void {
    if (!isRecord(usage)) return;
    const key = `${answered ?? ''}\u0000${asked ?? ''}`;
    let entry = this.#recorded.get(key);
    if (entry === undefined) {
      entry = { answered, asked, counts: zero() };
      this.#recorded.set(key, entry);
    }
    for (const name of KEYS) entry.counts[name] += count(usage[name]);
  }

  /**
   * What `modelUsage` (the latest result's: it counts everything the CLI
   * spent so far) holds beyond the recorded steps and the earlier statements,
   * per model; undefined when that is nothing. A figure can be negative: a
   * sub-agent's step recorded after the turn that spent it ended (a
   * background agent's transcript read late) was stated then, and is taken
   * back here. Every recorded step's tokens come off some entry, whatever
   * name answered it, so the steps and the statements never count more than
   * `modelUsage` does.
   */
  unattributed(modelUsage: unknown): Record<string, TokenCounts> | undefined {
    if (!isRecord(modelUsage)) return undefined;
    const models = Object.keys(modelUsage).filter((model) => isRecord(modelUsage[model]));
    // What each model's entry counts beyond its steps and the earlier statements.
    const gaps = new Map<string, TokenCounts>();
    for (const model of models) {
      const reported = modelUsage[model] as Record<string, unknown>;
      const stated = this.#stated.get(model) ?? zero();
      const gap = zero();
      for (const name of KEYS) gap[name] = count(reported[MODEL_USAGE_KEYS[name]]) - stated[name];
      gaps.set(model, gap);
    }
    const renamed = new Map<string, TokenCounts>();
    for (const { answered, asked, counts } of this.#recorded.values()) {
      const model = usageModel(models, answered, asked);
      if (model !== undefined) {
        const gap = gaps.get(model)!;
        for (const name of KEYS) gap[name] -= counts[name];
        continue;
      }
      const sum = renamed.get(answered ?? '') ?? zero();
      for (const name of KEYS) sum[name] += counts[name];
      renamed.set(answered ?? '', sum);
    }
    this.#placeRenamed(renamed, gaps);
    let out: Record<string, TokenCounts> | undefined;
    for (const [model, gap] of gaps) {
      if (KEYS.every((name) => gap[name] === 0)) continue;
      const stated = this.#stated.get(model) ?? zero();
      for (const name of KEYS) stated[name] += gap[name];
      this.#stated.set(model, stated);
      (out ??= {})[model] = gap;
    }
    return out;
  }

  /**
   * Counts the steps answered under names no `modelUsage` entry matches (a
   * gateway that renames models answers a sub-agent, whose asked-for model
   * nothing tells) under an entry each: `modelUsage` counts their tokens, so
   * they come off some entry's gap, or the query's totals would hold them twice.
   * A name keeps the entry it was first counted under while that entry's gap
   * still holds it; otherwise it goes to the entry whose gap holds it with
   * the least to spare (the one that spent just that), else to the widest gap,
   * which then may go negative until `modelUsage` counts the step: the totals
   * stay `modelUsage`'s either way.
   */
  #placeRenamed(renamed: ReadonlyMap<string, TokenCounts>, gaps: ReadonlyMap<string, TokenCounts>): void {
    if (gaps.size === 0) return;
    const names = [...renamed.keys()].sort((a, b) => Number(this.#placed.has(b)) - Number(this.#placed.has(a)) || total(renamed.get(b)!) - total(renamed.get(a)!) || (a < b ? -1 : 1));
    for (const answered of names) {
      const counts = renamed.get(answered)!;
      if (KEYS.every((name) => counts[name] === 0)) continue;
      const holds = (model: string): boolean => KEYS.every((name) => gaps.get(model)![name] >= counts[name]);
      const earlier = this.#placed.get(answered);
      const fitting = [...gaps.keys()].filter(holds).sort((a, b) => total(gaps.get(a)!) - total(gaps.get(b)!));
      const model =
        earlier !== undefined && gaps.has(earlier) && holds(earlier) ? earlier : (fitting[0] ?? [...gaps.keys()].sort((a, b) => total(gaps.get(b)!) - total(gaps.get(a)!))[0]!);
      this.#placed.set(answered, model);
      const gap = gaps.get(model)!;
      for (const name of KEYS) gap[name] -= counts[name];
    }
  }
}

const total = (counts: TokenCounts): number => KEYS.reduce((sum, name) => sum + counts[name], 0);

/**
 * Whether `written` (the totals the CLI writes to the session's transcript as it ends, in `modelUsage`'s shape) counts
 * at least what `reported` (the last result's `modelUsage`) does for every model: a record the CLI wrote after that
 * result, not an earlier process's.
 */
export function countsAtLeast(written: unknown, reported: unknown): boolean {
  if (!isRecord(written) || !isRecord(reported)) return false;
  return Object.entries(reported).every(([model, counts]) => {
    if (!isRecord(counts)) return true;
    const later = written[model];
    return isRecord(later) && KEYS.every((name) => count(later[MODEL_USAGE_KEYS[name]]) >= count(counts[MODEL_USAGE_KEYS[name]]));
  });
}

/**
 * The `modelUsage` entry a step counts under. `modelUsage` names the model
 * the CLI asked for, a step the one the API answered with, which may be that
 * name dated (`claude-sonnet-4-5` answered as `claude-sonnet-4-5-20250929`):
 * the same name, else the longest name it starts with, else the model the
 * main agent asked for; undefined for a sub-agent's step answered under a name
 * no entry begins (`#placeRenamed` places it).
 */
function usageModel(models: readonly string[], answered: string | undefined, asked: string | undefined): string | undefined {
  const name = nonEmptyString(answered);
  if (name !== undefined) {
    if (models.includes(name)) return name;
    const prefix = models.filter((model) => name.startsWith(model)).sort((a, b) => b.length - a.length)[0];
    if (prefix !== undefined) return prefix;
  }
  return asked !== undefined && models.includes(asked) ? asked : undefined;
}
