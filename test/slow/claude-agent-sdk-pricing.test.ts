// Pricing a Claude Agent SDK program with a plugins.toml catalog, as
// docs/operators/pricing.md and docs/adapters/claude-agent-sdk.md (Cost)
// configure it, on the real SDK and its bundled CLI against a loopback
// Anthropic Messages API. The program asks for `claude-sonnet-4-5`; the API
// answers with the dated id, as Anthropic's does. The main agent's requests
// name the model asked for, so an entry of that name prices them; a
// sub-agent's requests name none (nothing the SDK streams says what it asked
// for), so its steps are priced by the dated id alone: the entry must list it
// in its `aliases` (the genai_prices source names Anthropic's models by their
// undated ids), or those steps have no cost and the trajectories add up to
// less than the SDK's `total_cost_usd`. With it, they add up to it exactly:
// the CLI prices at Anthropic's list prices, as the entry does.
//
// Slow (each query spawns the CLI): npx vitest run --config vitest.slow.config.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockReply, type MockRequest, type MockUsage } from '../support/anthropic-mock.ts';

const ASKED = 'claude-sonnet-4-5';
const ANSWERED = 'claude-sonnet-4-5-20250929';
/** Claude Sonnet 4.5's list prices, per million tokens: what the CLI's `total_cost_usd` is computed with. */
const RATES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const listPrice = (u: MockUsage): number => (u.input * RATES.input + u.output * RATES.output + (u.cacheRead ?? 0) * RATES.cacheRead + (u.cacheWrite ?? 0) * RATES.cacheWrite) / 1e6;

const MAIN_USAGE: MockUsage[] = [
  { input: 300, output: 20, cacheRead: 1200, cacheWrite: 200 },
  { input: 400, output: 30, cacheRead: 1400, cacheWrite: 50 },
];
const SUB_USAGE: MockUsage[] = [
  { input: 40, output: 7, cacheRead: 10 },
  { input: 60, output: 9, cacheRead: 10, cacheWrite: 30 },
];

/** A pricing-only document: Claude Sonnet 4.5 at list prices, named `claude-sonnet-4-5` and the given aliases. */
function pricingToml(aliases: string[]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'nrh-claude-pricing-')), 'plugins.toml');
  writeFileSync(
    file,
    [
      'version = 1',
      '[[components]]',
      'kind = "pricing"',
      '[[components.config.sources]]',
      'type = "inline"',
      '[components.config.sources.catalog]',
      'version = 1',
      '[[components.config.sources.catalog.entries]]',
      'provider = "anthropic"',
      `model_id = "${ASKED}"`,
      `aliases = ${JSON.stringify(aliases)}`,
      'pricing_as_of = "2026-06-01"',
      'pricing_source = "https://www.anthropic.com/pricing"',
      `rates = { input_per_million = ${RATES.input.toFixed(1)}, output_per_million = ${RATES.output.toFixed(1)}, cache_read_per_million = ${RATES.cacheRead}, cache_write_per_million = ${RATES.cacheWrite} }`,
      'prompt_cache = { read_accounting = "separate" }',
      '',
    ].join('\n'),
  );
  return file;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function runProgram(backend: 'memory' | 'native', aliases: string[]) {
  let home = '';
  const mock = await startAnthropicMock((request: MockRequest): MockReply => {
    if (request.system.includes('You are the researcher')) {
      if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: SUB_USAGE[0]!, model: ANSWERED };
      return { blocks: [{ type: 'text', text: 'Founded by the Parisii.' }], usage: SUB_USAGE[1]!, model: ANSWERED };
    }
    if (request.assistantTurns === 0) {
      return { blocks: [{ type: 'tool_use', id: 'toolu_task_1', name: 'Agent', input: { description: 'research Paris', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', run_in_background: false } }], usage: MAIN_USAGE[0]!, model: ANSWERED };
    }
    return { blocks: [{ type: 'text', text: 'Paris was founded by the Parisii.' }], usage: MAIN_USAGE[1]!, model: ANSWERED };
  });
  const offline = offlineClaudeEnv(mock.url);
  home = offline.home;
  cleanups.push(() => mock.close(), () => rmSync(home, { recursive: true, force: true }));
  writeFileSync(path.join(home, 'notes.txt'), 'Paris was founded in the 3rd century BC by the Parisii.\n');
  const recorded = recordedPlugin(`claude-pricing-${backend}`, backend, { pluginsTomlPath: pricingToml(aliases) });
  const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const messages: any[] = [];
  for await (const message of claude.query({
    prompt: 'How was Paris founded?',
    options: {
      model: ASKED,
      cwd: home,
      env: offline.env,
      settingSources: [],
      allowedTools: ['Read', 'Agent'],
      // No `model`: the sub-agent inherits the main agent's, and says so nowhere the adapter reads.
      agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'] } },
    },
  })) {
    messages.push(message);
  }
  return { recorded, messages, mock };
}

const agentSteps = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');

describe('wrapClaudeAgentSdk: a program priced by a plugins.toml catalog', () => {
  for (const backend of backends()) {
    for (const aliases of [[], [ANSWERED]]) {
      const listed = aliases.length > 0;
      it(`${backend}: the entry ${listed ? 'listing the dated id the API answers with' : 'of the model asked for alone'}: ${listed ? 'every step at list price, adding up to the SDK\'s total_cost_usd' : 'the sub-agent\'s steps have no cost'}`, async () => {
        const { recorded, messages, mock } = await runProgram(backend, aliases);
        const result = messages.at(-1);
        expect(result).toMatchObject({ type: 'result', subtype: 'success' });
        // The CLI prices every request it made, the sub-agent's included, at list prices.
        expect(mock.replies.map((entry) => entry.model)).toEqual([ANSWERED, ANSWERED, ANSWERED, ANSWERED]);
        expect(result.total_cost_usd).toBeCloseTo([...MAIN_USAGE, ...SUB_USAGE].reduce((sum, u) => sum + listPrice(u), 0), 12);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        const main = atif[0]!;
        const sub = (main.subagent_trajectories as AtifDoc[])[0]!;
        // The main agent's requests name the model asked for: priced either way.
        expect(agentSteps(main).map((step) => step.metrics?.cost_usd)).toEqual(MAIN_USAGE.map((u) => expect.closeTo(listPrice(u), 12)));
        expect(main.final_metrics.total_cost_usd).toBeCloseTo(MAIN_USAGE.reduce((sum, u) => sum + listPrice(u), 0), 12);
        // The sub-agent's name none: only the answered id can price them.
        expect(agentSteps(sub).map((step) => step.model_name)).toEqual([ANSWERED, ANSWERED]);
        if (!listed) {
          expect(agentSteps(sub).map((step) => step.metrics?.cost_usd)).toEqual([undefined, undefined]);
          expect(sub.final_metrics.total_cost_usd).toBeUndefined();
          return;
        }
        expect(agentSteps(sub).map((step) => step.metrics?.cost_usd)).toEqual(SUB_USAGE.map((u) => expect.closeTo(listPrice(u), 12)));
        // Each trajectory's total is its own steps'; the query's cost is theirs together.
        expect(main.final_metrics.total_cost_usd + sub.final_metrics.total_cost_usd).toBeCloseTo(result.total_cost_usd, 12);
      }, 120_000);
    }
  }
});
