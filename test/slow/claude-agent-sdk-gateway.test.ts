// A sub-agent behind a gateway that renames models (LiteLLM and similar
// proxies at `ANTHROPIC_BASE_URL`), on the real SDK and its bundled CLI
// against the loopback Anthropic API: the CLI asks for `claude-trial-…`, the
// API answers under names none of them begins (`claude-main-gw`,
// `claude-sub-…`), as a user's trial saw. `modelUsage` is keyed by the model
// the CLI asked for, and nothing tells which one a sub-agent asked for: its
// steps must still come off `modelUsage`, so the steps of every trajectory and
// the turn ends' `unattributed_usage` add up to `modelUsage`, never more (the
// sub-agent's tokens were in both its steps and `unattributed_usage`).
// Both when the sub-agent asks for a model of its own and when it asks for
// the main agent's (`inherit`).
//
// Slow (each query spawns the CLI): npx vitest run --config vitest.slow.config.ts.
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { modelUsageTotals, offlineApi, statedByTurn, tokensByModel } from '../support/claude-checks.ts';

const ASKED_MAIN = 'claude-trial-main';
const ASKED_SUB = 'claude-trial-sub';
/** What the gateway answers with: names no model the CLI asked for begins. */
const ANSWERED_MAIN = 'claude-main-gw';
const ANSWERED_SUB = 'claude-sub-2026-01-01';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Every answered step's tokens of a document's trajectories, sub-agents' included: [prompt, completion]. */
function allSteps(doc: AtifDoc): [number, number] {
  const docs = [doc, ...((doc.subagent_trajectories ?? []) as AtifDoc[])];
  return docs
    .flatMap((d) => (d.steps as AtifDoc[]).filter((step) => step.source === 'agent' && step.metrics !== undefined))
    .reduce<[number, number]>((sum, step) => [sum[0] + (step.metrics.prompt_tokens ?? 0), sum[1] + (step.metrics.completion_tokens ?? 0)], [0, 0]);
}

/** Every turn end's `unattributed_usage`, in the same terms. */
function allStated(stated: unknown[]): [number, number] {
  return stated
    .flatMap((byModel) => Object.values((byModel ?? {}) as Record<string, any>))
    .reduce<[number, number]>((sum, u) => [sum[0] + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, sum[1] + u.output_tokens], [0, 0]);
}

describe('wrapClaudeAgentSdk: a sub-agent answered under a name the gateway chose', () => {
  for (const subModel of [ASKED_SUB, 'inherit'] as const) {
    it(`counts the sub-agent's tokens once: its steps and the turn ends add up to modelUsage (sub-agent model: ${subModel})`, async () => {
      let home = '';
      const { mock, env, home: offlineHome } = await offlineApi((request: MockRequest): MockReply => {
        if (request.system.includes('You are the researcher')) {
          if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_read_gw', name: 'Read', input: { file_path: path.join(home, 'notes.txt') } }], usage: { input: 7, output: 3 }, model: ANSWERED_SUB };
          return { blocks: [{ type: 'text', text: 'Founded by the Parisii.' }], usage: { input: 15, output: 8, cacheRead: 4 }, model: ANSWERED_SUB };
        }
        if (request.assistantTurns === 0) {
          return { blocks: [{ type: 'tool_use', id: 'toolu_agent_gw', name: 'Agent', input: { description: 'research Paris', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 6 }, model: ANSWERED_MAIN };
        }
        return { blocks: [{ type: 'text', text: 'Paris was founded by the Parisii.' }], usage: { input: 50, output: 12 }, model: ANSWERED_MAIN };
      }, cleanups);
      home = offlineHome;
      writeFileSync(path.join(home, 'notes.txt'), 'Paris was founded in the 3rd century BC by the Parisii.\n');
      const recorded = recordedPlugin(`claude-gateway-${subModel}`);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
      const messages: any[] = [];
      for await (const message of claude.query({
        prompt: 'How was Paris founded?',
        options: {
          model: ASKED_MAIN,
          cwd: home,
          env,
          settingSources: [],
          allowedTools: ['Read', 'Agent'],
          agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: subModel } },
        },
      })) {
        messages.push(message);
      }
      const subAsked = subModel === 'inherit' ? ASKED_MAIN : ASKED_SUB;
      // What the CLI asked for and what the gateway answered with.
      expect(mock.requests.map((request) => request.model)).toEqual([ASKED_MAIN, subAsked, subAsked, ASKED_MAIN]);
      expect(Object.keys(messages.at(-1).modelUsage).sort()).toEqual([...new Set([ASKED_MAIN, subAsked])].sort());

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const sub = (doc.subagent_trajectories as AtifDoc[])[0]!;
      expect((sub.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual([ANSWERED_SUB, ANSWERED_SUB]);

      // Every request is a step with its usage, so no session end states anything; the totals are modelUsage's.
      const stated = statedByTurn(recorded.log);
      expect(stated.filter((byModel) => byModel !== undefined)).toEqual([]);
      const steps = allSteps(doc);
      const held = allStated(stated);
      expect([steps[0] + held[0], steps[1] + held[1]]).toEqual(modelUsageTotals(messages));
      expect(steps).toEqual([30 + 50 + 7 + 15 + 4, 6 + 12 + 3 + 8]);
      // Per model too: each answered name under the model the CLI asked for it.
      const byModel = tokensByModel([doc], recorded.log, messages, (answered) => (answered === ANSWERED_SUB ? subAsked : ASKED_MAIN));
      expect(byModel.held).toEqual(byModel.reported);
      await sameOnNative(recorded);
    }, 120_000);
  }
});
