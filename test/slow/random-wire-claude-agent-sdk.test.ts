// The Claude Agent SDK adapter against random Anthropic replies
// (test/support/random-wire.ts), on the real SDK and its bundled CLI, which
// talks to a loopback server answering each /v1/messages request with the
// scenario's next turn. The program is written as the SDK's docs write it
// (an in-process MCP server with tools, query() read to the end); the
// trajectory is checked against what the SDK returned by
// test/adapters/random-wire-checks.ts. Each seed starts the CLI, so only a
// few seeds run, here in test/slow.
import { rmSync } from 'node:fs';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends } from '../adapters/support.ts';
import { checkRandomRun, type FrameworkStep } from '../adapters/random-wire-checks.ts';
import { offlineClaudeEnv } from '../support/anthropic-mock.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { randomScenario, randomText, RandomWire, type RandomTool } from '../support/random-wire.ts';
import { Draw } from '../support/seeded-random.ts';

const onNative = backends().includes('native');
const MODEL = 'claude-sonnet-4-5-20250929';

const TOOLS: RandomTool[] = [
  { name: 'mcp__travel__get_weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'mcp__travel__get_time', args: () => ({}) },
];

type Loose = Record<string, any>;

async function runClaudeSeed(seed: number): Promise<void> {
  // The CLI answers a refusal, a max_tokens stop or an empty answer with another request: the last turn ends the turn.
  const scenario = randomScenario(seed, 'anthropic', MODEL, TOOLS, { finals: ['stop', 'stop_sequence'], emptyAnswer: false });
  // Sometimes one call's first attempt is refused as overloaded (529): the CLI retries it.
  const choice = new Draw(seed ^ 0xc1a);
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const others: string[] = [];
  const server = await loopbackApi(async (url, init) => {
    if (!new URL(url).pathname.endsWith('/v1/messages')) {
      others.push(url);
      return new Response(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not here' } }), { status: 404, headers: { 'content-type': 'application/json' } });
    }
    // A request past the scenario fails at once (a 500 would be retried for minutes).
    if (fake.turnsServed >= scenario.turns.length) {
      others.push(`request ${fake.requests.length + 1} past the scenario`);
      return new Response(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'past the scenario' } }), { status: 400, headers: { 'content-type': 'application/json' } });
    }
    return fake.fetch(url, init);
  });
  const offline = offlineClaudeEnv(server.url);
  const label = `seed ${seed} (claude agent sdk${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${scenario.outline.join('\n  ')}`;
  try {
    await checkRandomRun({
      label,
      onNative,
      requests: () => fake.requests.length,
      async run(hooks) {
        const claude = wrapClaudeAgentSdk(sdk, hooks);
        const travel = sdk.createSdkMcpServer({
          name: 'travel',
          version: '1.0.0',
          tools: [
            sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => ({ content: [{ type: 'text', text: `Sunny in ${city}` }] })),
            sdk.tool('get_time', 'The current time', {}, async () => ({ content: [{ type: 'text', text: '12:00 🕛' }] })),
          ],
        });
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        const messages: Loose[] = [];
        const reading = async () => {
        for await (const message of claude.query({
          prompt,
          options: { model: 'claude-sonnet-4-5', cwd: offline.home, env: offline.env, settingSources: [], mcpServers: { travel }, allowedTools: TOOLS.map((tool) => tool.name), maxTurns: 6 },
        })) {
          messages.push(message as Loose);
        }
        };
        await reading().catch((error: unknown) => {
          throw new Error(`${label}\n${String(error)}; requests past the scenario: ${others.join(', ')}`);
        });
        expect(others, label).toEqual([]);
        const results = new Map<string, unknown>();
        for (const message of messages) {
          if (message.type !== 'user') continue;
          // What the tool returned, as the model reads it: its text blocks.
          for (const block of message.message?.content ?? []) {
            if (block.type !== 'tool_result') continue;
            results.set(block.tool_use_id, typeof block.content === 'string' ? block.content : (block.content as Loose[]).filter((part) => part.type === 'text').map((part) => part.text as string).join(''));
          }
        }
        // One step per model reply: the CLI sends a reply's blocks as assistant messages under one message id.
        const replies = new Map<string, Loose[]>();
        for (const message of messages) if (message.type === 'assistant') replies.set(message.message.id, [...(replies.get(message.message.id) ?? []), message]);
        const steps: FrameworkStep[] = [...replies.values()].map((parts) => {
          const blocks = parts.flatMap((part) => part.message.content as Loose[]);
          const usage = parts.at(-1)!.message.usage as Loose;
          const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id as string, name: b.name as string, args: b.input as unknown }));
          return {
            text: blocks.filter((b) => b.type === 'text').map((b) => b.text as string).join(''),
            model: parts[0]!.message.model,
            calls,
            results: calls.map((call) => ({ id: call.id, output: results.get(call.id) })),
            prompt: usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
            // The assistant messages carry the usage of the reply's start (message_start): its input side only.
            completion: null,
            // Cache reads and writes where the reply says either (null in both: it says none).
            cached: usage.cache_read_input_tokens == null && usage.cache_creation_input_tokens == null ? undefined : (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
            finish: parts.at(-1)!.message.stop_reason ?? undefined,
            reasoning: blocks.filter((b) => b.type === 'thinking').map((b) => b.thinking as string).join('') || null,
          };
        });
        const result = messages.find((m) => m.type === 'result')!;
        const total = result.usage as Loose;
        const cached = (total.cache_read_input_tokens ?? 0) + (total.cache_creation_input_tokens ?? 0);
        // The result's total counts a reply without cache fields as 0; with no reply saying any, there is no cache count to state.
        const saidCache = steps.some((step) => step.cached !== undefined);
        return { prompt, model: 'claude-sonnet-4-5', steps, retried: fake.failedRequests, totals: { prompt: total.input_tokens + cached, completion: total.output_tokens, cached: saidCache || cached !== 0 ? cached : undefined } };
      },
    });
  } finally {
    await server.close();
    rmSync(offline.home, { recursive: true, force: true });
  }
}

const FROM = Number(process.env.RANDOM_WIRE_FROM ?? 1);
const SEEDS = Number(process.env.RANDOM_WIRE_CLAUDE_SEEDS ?? 12);

describe('the Claude Agent SDK on random Anthropic replies', () => {
  it(`seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
    for (let seed = FROM; seed < FROM + SEEDS; seed++) await runClaudeSeed(seed);
  }, 300_000);
});
