// What a turn's end states beyond its steps (QueryTokens, unattributed_usage)
// in the cases the real CLI cannot be made to produce on demand: a step
// matched to `modelUsage`'s name by its dated answer, two models, a main
// agent or a sub-agent answered under a name `modelUsage` does not use (a
// gateway's), a sub-agent's step
// recorded after the turn that spent it, and a resumed session's earlier
// spend; and which totals the CLI wrote to a transcript are the ones it
// wrote as it ended. test/slow/claude-agent-sdk-hidden.test.ts holds the real
// CLI's WebSearch, WebFetch, /compact, suggestions and resumed sessions to
// the same rule.
import { describe, expect, it } from 'vitest';
import { countsAtLeast, QueryTokens } from '../../../src/adapters/claude-agent-sdk/usage.ts';

const reply = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input_tokens: input, output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite });
const reported = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ inputTokens: input, outputTokens: output, cacheReadInputTokens: cacheRead, cacheCreationInputTokens: cacheWrite, costUSD: 0.01 });

describe('QueryTokens: what modelUsage counts beyond the recorded steps', () => {
  it('states nothing when the steps hold every token, each counted under the longest name its answer begins with', () => {
    const tokens = new QueryTokens();
    tokens.add('claude-sonnet-4-5-20250929', 'claude-sonnet-4-5', reply(10, 2, 100));
    // A sub-agent's: the model it asked for is unknown; its answer is the dated name of the longer of two prefixes.
    tokens.add('claude-haiku-4-5-20251001', undefined, reply(7, 3, 0, 5));
    expect(tokens.unattributed({ 'claude-haiku-4': reported(0, 0), 'claude-haiku-4-5': reported(7, 3, 0, 5), 'claude-sonnet-4-5': reported(10, 2, 100) })).toBeUndefined();
  });

  it('states per model what no step holds, each turn only what is new since the last statement', () => {
    const tokens = new QueryTokens();
    tokens.add('claude-main', 'claude-main', reply(30, 8));
    expect(tokens.unattributed({ 'claude-main': reported(41, 15, 2) })).toEqual({ 'claude-main': reply(11, 7, 2) });
    tokens.add('claude-main', 'claude-main', reply(50, 5));
    // The next turn: its step and a page read on another model.
    expect(tokens.unattributed({ 'claude-main': reported(91, 20, 2), 'claude-small': reported(21, 4) })).toEqual({ 'claude-small': reply(21, 4) });
    expect(tokens.unattributed({ 'claude-main': reported(91, 20, 2), 'claude-small': reported(21, 4) })).toBeUndefined();
  });

  it("counts a main-agent step whose answer names no modelUsage entry under the model the query asked for; a sub-agent's such step under the entry that spent it", () => {
    const tokens = new QueryTokens();
    tokens.add('some-gateway-model', 'claude-main', reply(10, 1));
    tokens.add('other-gateway-model', undefined, reply(4, 1));
    expect(tokens.unattributed({ 'claude-main': reported(10, 1), 'claude-sub': reported(4, 1) })).toBeUndefined();
    // The next turn: the renamed sub-agent again, beside a hidden request of the main model; it keeps its entry.
    tokens.add('some-gateway-model', 'claude-main', reply(20, 2));
    tokens.add('other-gateway-model', undefined, reply(3, 1));
    expect(tokens.unattributed({ 'claude-main': reported(40, 5), 'claude-sub': reported(7, 2) })).toEqual({ 'claude-main': reply(10, 2) });
  });

  it("takes a renamed sub-agent's step off the entry that holds it with the least to spare, and never states more than modelUsage counts", () => {
    const tokens = new QueryTokens();
    // Asked for the main model (a sub-agent inherits it), answered under a gateway's name: both entries could hold
    // it once the larger step is placed, the main one holds just that.
    tokens.add('gateway-a', undefined, reply(5, 1));
    tokens.add('gateway-b', undefined, reply(40, 4, 8));
    expect(tokens.unattributed({ 'claude-main': reported(5, 1), 'claude-big': reported(60, 5, 8) })).toEqual({ 'claude-big': reply(20, 1) });
    // A step recorded before modelUsage counts it: it comes off the widest gap, and is given back when counted.
    tokens.add('gateway-c', undefined, reply(2, 2));
    const early = tokens.unattributed({ 'claude-main': reported(5, 1), 'claude-big': reported(60, 5, 8) })!;
    expect(Object.values(early).reduce((sum, counts) => sum + counts.input_tokens + counts.output_tokens, 0)).toBe(-4);
    const later = tokens.unattributed({ 'claude-main': reported(7, 3), 'claude-big': reported(60, 5, 8) })!;
    expect(Object.values(later).reduce((sum, counts) => sum + counts.input_tokens + counts.output_tokens, 0)).toBe(4);
  });

  it("takes back at the next turn a sub-agent's step recorded after its turn was stated: the figures still add up", () => {
    const tokens = new QueryTokens();
    tokens.add('claude-main', 'claude-main', reply(10, 1));
    // modelUsage counts the background agent's request; its transcript is read only later.
    expect(tokens.unattributed({ 'claude-main': reported(10, 1), 'claude-sub': reported(6, 2) })).toEqual({ 'claude-sub': reply(6, 2) });
    tokens.add('claude-sub-2026', undefined, reply(6, 2));
    tokens.add('claude-main', 'claude-main', reply(10, 1));
    expect(tokens.unattributed({ 'claude-main': reported(20, 2), 'claude-sub': reported(6, 2) })).toEqual({ 'claude-sub': reply(-6, -2) });
  });

  it("does not state a resumed session's earlier spend, which the CLI carries into modelUsage", () => {
    const tokens = new QueryTokens();
    tokens.carried({ 'claude-main': { ...reported(91, 20), thinkingTokens: 0 }, broken: 'not a record' });
    tokens.add('claude-main', 'claude-main', reply(50, 5));
    expect(tokens.unattributed({ 'claude-main': reported(141, 25) })).toBeUndefined();
    tokens.carried(undefined);
    expect(tokens.unattributed(undefined)).toBeUndefined();
  });

  it("takes the CLI's written totals as its own only when they count at least what the last result did, for every model", () => {
    const last = { 'claude-main': reported(100, 10), 'claude-sub': reported(5, 1) };
    // Written as the CLI ended, after a suggestion the last result does not count.
    expect(countsAtLeast({ 'claude-main': reported(144, 12), 'claude-sub': reported(5, 1) }, last)).toBe(true);
    // An earlier process's (a resumed session's), or one missing a model: not this query's.
    expect(countsAtLeast({ 'claude-main': reported(60, 10), 'claude-sub': reported(5, 1) }, last)).toBe(false);
    expect(countsAtLeast({ 'claude-main': reported(144, 12) }, last)).toBe(false);
    expect(countsAtLeast(undefined, last)).toBe(false);
  });
});
