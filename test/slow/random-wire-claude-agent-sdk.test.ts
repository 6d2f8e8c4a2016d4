// The Claude Agent SDK adapter against random Anthropic replies
// (test/support/random-wire.ts), on the real SDK and its bundled CLI, which
// talks to a loopback server answering each /v1/messages request with the
// scenario's next turn. The program is written as the SDK's docs write it
// (an in-process MCP server with tools, query() read to the end); the
// trajectory is checked against what the SDK returned by
// test/adapters/random-wire-checks.ts. Besides the replies, each seed draws
// its plan (a Draw of its own, so the replies stay the seed's):
// - a `canUseTool` that decides per call: allow (as is, with changed input,
//   with a rule kept for the session or in a settings file), deny (with a
//   message, now and then interrupting the turn);
// - a sub-agent (the `agents` option; the model calls the Agent tool) with
//   replies of its own, told apart from the main agent's by its system
//   prompt; now and then two at once (two Agent calls in one reply, which the
//   CLI runs in parallel, told apart by the prompt each was given), run in the
//   background (`run_in_background: true`: the CLI answers the call at once,
//   and a notification tells the main agent when it is done, in a turn the
//   CLI starts by itself when the main turn had ended), or with one of its
//   requests refused as overloaded (529) once;
// - a request of the main agent or of a sub-agent refused until the CLI's
//   retries run out (CLAUDE_CODE_MAX_RETRIES kept small);
// - a tool that throws or answers `isError`, as its arguments say;
// - the caller interrupting the query (`interrupt()` or its
//   AbortController) while a tool runs, the sub-agent's tools included
//   (`interrupt()` only: an abort is drawn without a foreground sub-agent),
//   now and then with a background agent running (one the query may end
//   before its requests are written: docs/adapters/claude-agent-sdk.md,
//   "Limits").
// Each seed starts the CLI, so only a few seeds run here in test/slow
// (RANDOM_WIRE_FROM and RANDOM_WIRE_CLAUDE_SEEDS run more).
import { rmSync } from 'node:fs';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends } from '../adapters/support.ts';
import { checkRandomRun, type FrameworkApproval, type FrameworkStep } from '../adapters/random-wire-checks.ts';
import { offlineClaudeEnv } from '../support/anthropic-mock.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomTurn } from '../support/random-wire.ts';
import { Draw } from '../support/seeded-random.ts';

const onNative = backends().includes('native');
const MODEL = 'claude-sonnet-4-5-20250929';
const ASKED = 'claude-sonnet-4-5';
/** The sub-agent's model: asked by its definition, answered by the API. */
const SUB_MODEL = 'claude-sub-2026-01-01';
const SUB_ASKED = 'claude-sub';
/** What a sub-agent's call cut by the interruption ends with (docs/adapters/claude-agent-sdk.md). */
const SUB_CUT = 'the sub-agent was stopped before the tool returned';
const SUB_PROMPT = 'You are the researcher.';
const AGENT_NAME = 'claude-agent-sdk';

/** The check tool's behaviour is its argument: it answers, throws, or answers with isError. */
const MODES = ['ok', 'throw', 'error'] as const;

const TOOLS: RandomTool[] = [
  { name: 'mcp__travel__get_weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'mcp__travel__get_time', args: () => ({}) },
];
const FLAKY: RandomTool = { name: 'mcp__travel__check', args: (draw) => ({ mode: draw.pick(MODES), note: randomText(draw, 2) }) };

type Loose = Record<string, any>;

/** A decision canUseTool draws for one call. */
type Decision = 'allow' | 'changed' | 'session' | 'always' | 'deny' | 'deny-interrupt';
const DECISIONS: readonly Decision[] = ['allow', 'allow', 'changed', 'session', 'always', 'deny', 'deny', 'deny-interrupt'];

interface Plan {
  /** canUseTool decides the travel tools' calls (else they are allowed by allowedTools). */
  ask: boolean;
  /** A sub-agent the main agent calls (see `agents`). */
  sub: boolean;
  /**
   * With `sub`: the Agent calls of one reply (one, or two the CLI runs at once), each in the foreground or the
   * background, and the turn (0-based, taken modulo its turns) whose first request is refused as overloaded once.
   */
  agents: Array<{ background: boolean; overloaded?: number }>;
  /**
   * A background agent's first request is answered only once the program read the main turn's result: the agent ends
   * after the turn, so the CLI starts a turn of its own for its notification (else it may end while the turn runs, and
   * the notification joins the turn's next request).
   */
  holdBackground: boolean;
  /** The check tool (throws / isError) is offered. */
  flaky: boolean;
  /** The caller interrupts while the n-th tool call runs (1-based), by interrupt() or its AbortController. */
  interrupt?: { at: number; by: 'interrupt' | 'abort' };
  /**
   * One turn (0-based, modulo its turns) of the main agent or of a sub-agent (its index) whose every request is refused
   * as overloaded: the CLI's retries (`CLAUDE_CODE_MAX_RETRIES`, `retries`) run out.
   */
  refused?: { who: 'main' | number; turn: number; retries: number };
}

function drawPlan(seed: number): Plan {
  const draw = new Draw(seed ^ 0x9a7e);
  const ask = draw.chance(0.6);
  const flaky = draw.chance(0.5);
  const interrupt = draw.chance(0.2) ? { at: draw.int(1, 4), by: draw.pick(['interrupt', 'abort'] as const) } : undefined;
  // Not with an abort: it stops the CLI before it writes a running sub-agent's transcript, so its last answer is nowhere
  // to be read (docs/adapters/claude-agent-sdk.md, "Limits"). interrupt() while a sub-agent's tool runs is in the plans.
  const sub = draw.chance(0.4) && interrupt?.by !== 'abort';
  // Drawn apart, so the draws above keep what they meant for each seed.
  const more = new Draw(seed ^ 0x5b2a);
  const count = sub ? (more.chance(0.35) ? 2 : 1) : 0;
  // A background agent with an interruption: drawn below, apart.
  const agents = Array.from({ length: count }, () => ({
    background: interrupt === undefined && more.chance(0.35),
    ...(more.chance(0.3) ? { overloaded: more.int(0, 9) } : {}),
  }));
  const holdBackground = more.chance(0.6);
  // Drawn last, from a draw of its own (the draws above keep each seed's plan): a request whose retries run out.
  const late = new Draw(seed ^ 0x7e1a);
  const refused = late.chance(0.2) ? { who: count > 0 && late.chance(0.5) ? late.int(0, count - 1) : ('main' as const), turn: late.int(0, 9), retries: late.int(1, 2) } : undefined;
  // Then, from a draw of its own (the draws above keep each seed's plan): an interruption with a background agent, the
  // first agent put in the background, or one added (an abort has none: a foreground agent is not drawn with it, above).
  const cut = new Draw(seed ^ 0x4bd7);
  if (interrupt !== undefined && cut.chance(0.5)) {
    if (agents.length === 0) agents.push({ background: true });
    else agents[0]!.background = true;
  }
  return { ask, sub: agents.length > 0, agents, holdBackground, flaky, ...(interrupt === undefined ? {} : { interrupt }), ...(refused === undefined ? {} : { refused }) };
}

/**
 * The main scenario with the plan's Agent calls put in one turn before the last (a turn of its own when there is none);
 * per background agent, one more turn at the end: the answer to its notification when the CLI asks for one (two
 * agents that end together may be told in one turn).
 */
function withAgentCalls(seed: number, scenario: RandomScenario, agents: Plan['agents']): RandomScenario {
  const draw = new Draw(seed ^ 0x5ab);
  // The second prompt from a draw of its own (the first call's draws stay the seed's), worded apart: each sub-agent's
  // requests are told apart by the prompt they start with.
  const prompts = [`Find out about ${randomText(draw, 3)}`, `Look into ${randomText(new Draw(seed ^ 0x5ac), 3)}`];
  const calls = agents.map((agent, i) => ({
    id: `call_${seed}_agent${i === 0 ? '' : i + 1}`,
    name: 'Agent',
    args: { description: 'research it', prompt: prompts[i]!, subagent_type: 'researcher', run_in_background: agent.background },
  }));
  const turns = [...scenario.turns];
  const at = draw.int(0, turns.length - 1);
  if (at < turns.length - 1 && draw.chance(0.5)) turns[at] = { ...turns[at]!, calls: [...turns[at]!.calls, ...calls] };
  else turns.splice(at, 0, { id: `anthropic_${seed}_agent`, model: MODEL, calls, finish: 'tool_calls', usage: { input: draw.int(1, 3000), output: draw.int(1, 300), cached: 0, cacheWrite: 0, reasoning: 0 }, details: false, ...(draw.chance(0.5) ? { text: randomText(draw) } : {}) });
  const told = new Draw(seed ^ 0x7a5);
  for (const [i] of agents.filter((agent) => agent.background).entries()) {
    turns.push({ id: `anthropic_${seed}_notified${i === 0 ? '' : i + 1}`, model: MODEL, calls: [], finish: 'stop', text: `Noted: ${randomText(told, 4)}`, usage: { input: told.int(1, 3000), output: told.int(1, 300), cached: 0, cacheWrite: 0, reasoning: 0 }, details: false });
  }
  const outline = turns.map((turn, i) => `turn ${i + 1}: ${turn.calls.length} call(s) [${turn.calls.map((c) => c.name).join(', ')}], finish ${turn.finish}, text ${JSON.stringify(turn.text)}, usage ${JSON.stringify(turn.usage)}`);
  return { ...scenario, turns, outline };
}

/** The last turn's answer with something in it: the CLI answers an answer of white space alone with another request. */
function spokenAnswer(scenario: RandomScenario): RandomScenario {
  const last = scenario.turns.at(-1)!;
  if (last.text === undefined || last.text.trim() !== '') return scenario;
  return { ...scenario, turns: [...scenario.turns.slice(0, -1), { ...last, text: `${last.text}ok` }] };
}

/** Anthropic's stop reason for a drawn finish, as the wire says it. */
function stopReason(turn: RandomTurn): string {
  return turn.finish === 'tool_calls' ? 'tool_use' : turn.finish === 'stop_sequence' ? 'stop_sequence' : turn.finish === 'length' ? 'max_tokens' : turn.finish === 'refusal' ? 'refusal' : 'end_turn';
}

/** The main loop's tokens as the SDK's result messages report them (prompt tokens count cache reads and writes in). */
function ownTotals(messages: Loose[], saidCache: boolean): { prompt: number; completion: number; cached: number | undefined } {
  const results = messages.filter((m) => m.type === 'result');
  const sum = (field: string) => results.reduce((total, m) => total + (m.usage[field] ?? 0), 0);
  const cached = sum('cache_read_input_tokens') + sum('cache_creation_input_tokens');
  return { prompt: sum('input_tokens') + cached, completion: sum('output_tokens'), cached: saidCache || cached !== 0 ? cached : undefined };
}

const errorJson = (status: number, type: string, message: string) => new Response(JSON.stringify({ type: 'error', error: { type, message } }), { status, headers: { 'content-type': 'application/json' } });

async function runClaudeSeed(seed: number): Promise<void> {
  const plan = drawPlan(seed);
  const tools = plan.flaky ? [...TOOLS, FLAKY] : TOOLS;
  // The CLI answers a refusal, a max_tokens stop or an empty answer with another request: the last turn ends the turn.
  const drawn = randomScenario(seed, 'anthropic', MODEL, tools, { finals: ['stop', 'stop_sequence'], emptyAnswer: false });
  // The turn's answer spoken before the notifications' answers go after it (the Agent calls go before it).
  const scenario = plan.sub ? withAgentCalls(seed, spokenAnswer(drawn), plan.agents) : spokenAnswer(drawn);
  const agentCalls = scenario.turns.flatMap((turn) => turn.calls).filter((call) => call.name === 'Agent');
  // Sometimes one call's first attempt is refused as overloaded (529): the CLI retries it.
  const choice = new Draw(seed ^ 0xc1a);
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const refusedIn = (who: 'main' | number, turns: number) => (plan.refused?.who === who ? [plan.refused.turn % turns] : []);
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded, refuseAllOf: refusedIn('main', scenario.turns.length) });
  /** Each sub-agent: its Agent call, its replies (the first one's seed as before), its wire. */
  const subs = agentCalls.map((call, i) => {
    const subSeed = seed + (i + 1) * 1_000_000;
    const subScenario = spokenAnswer(randomScenario(subSeed, 'anthropic', SUB_MODEL, tools, { finals: ['stop', 'stop_sequence'], emptyAnswer: false }));
    const { background, overloaded: at } = plan.agents[i]!;
    const failFirstAttemptOf = at === undefined ? [] : [at % subScenario.turns.length];
    const refuseAllOf = refusedIn(i, subScenario.turns.length);
    return { call, prompt: String(call.args.prompt), background, failFirstAttemptOf, refuseAllOf, scenario: subScenario, fake: new RandomWire(subSeed, subScenario, { failFirstAttemptOf, refuseAllOf }) };
  });
  const others: string[] = [];
  /** Which agent each answered request was (in the order the server saw them: 'main' or the sub-agent's index). */
  const order: Array<'main' | number> = [];
  /** Resolved when the program read the main turn's first result (a held background agent goes on then). */
  let turnRead = () => {};
  const turnEnded = new Promise<void>((resolve) => (turnRead = resolve));
  const server = await loopbackApi(async (url, init) => {
    if (!new URL(url).pathname.endsWith('/v1/messages')) {
      others.push(url);
      return errorJson(404, 'not_found_error', 'not here');
    }
    const body = JSON.parse(init.body);
    const isSub = JSON.stringify(body.system ?? '').includes(SUB_PROMPT);
    // A sub-agent's conversation starts with the prompt its Agent call gave it.
    const firstMessage = JSON.stringify(body.messages?.[0] ?? '');
    const who = isSub ? subs.findIndex((sub) => firstMessage.includes(JSON.stringify(sub.prompt).slice(1, -1))) : ('main' as const);
    if (who === -1) {
      others.push(`a sub-agent request with no known prompt: ${firstMessage.slice(0, 200)}`);
      return errorJson(400, 'invalid_request_error', 'no such sub-agent');
    }
    const { fake: wire, scenario: { turns } } = who === 'main' ? { fake, scenario } : subs[who]!;
    // A request past the scenario fails at once (a 500 would be retried for minutes).
    if (wire.turnsServed >= turns.length) {
      others.push(`${who === 'main' ? '' : `sub-agent ${who + 1} `}request ${wire.requests.length + 1} past the scenario`);
      return errorJson(400, 'invalid_request_error', 'past the scenario');
    }
    if (who !== 'main' && subs[who]!.background && plan.holdBackground && wire.requests.length === 0) {
      // Not for ever: a turn that never ends fails on its own.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([turnEnded, new Promise((resolve) => (timer = setTimeout(resolve, 20_000)))]);
      clearTimeout(timer);
    }
    const failedBefore = wire.failedRequests.length;
    const response = await wire.fetch(url, init);
    if (wire.failedRequests.length === failedBefore) order.push(who);
    return response;
  });
  // Retries that run out run out soon (the CLI's default is ten, with backoff).
  const offline = offlineClaudeEnv(server.url, plan.refused === undefined ? {} : { CLAUDE_CODE_MAX_RETRIES: String(plan.refused.retries) });
  /**
   * The main agent's requests the CLI gave up on (its own message saying so, one per call), and whether the query ended
   * while the CLI waited to retry a refused one (`api_retry` the last word on its requests).
   */
  const mainRetries = { gaveUp: 0, waiting: false };
  /** The background agents whose task notification says they failed: a request whose retries ran out, its last attempt recorded. */
  const failedBackground = new Set<(typeof subs)[number]>();
  const agentsSaid = subs.map((sub, i) => `sub-agent ${i + 1}${sub.background ? ' in the background' : ''}${sub.failFirstAttemptOf.length > 0 ? ` (its turn ${sub.failFirstAttemptOf[0]! + 1} overloaded once)` : ''}${sub.refuseAllOf.length > 0 ? ` (its turn ${sub.refuseAllOf[0]! + 1} refused for good)` : ''}`).join(', ');
  const features = [plan.ask ? 'canUseTool' : '', agentsSaid, subs.some((sub) => sub.background) && plan.holdBackground ? 'held till the turn ended' : '', plan.flaky ? 'failing tool' : '', plan.interrupt ? `${plan.interrupt.by} at tool call ${plan.interrupt.at}` : ''].filter(Boolean).join(', ');
  const label = () =>
    `seed ${seed} (claude agent sdk${features ? `, ${features}` : ''}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''}${plan.refused?.who === 'main' ? `, turn ${(plan.refused.turn % scenario.turns.length) + 1} refused for good` : ''}${plan.refused === undefined ? '' : `, ${plan.refused.retries} retries`})\n  ${scenario.outline.join('\n  ')}${subs.map((sub, i) => `\n  sub-agent ${i + 1}:\n  ${sub.scenario.outline.join('\n  ')}`).join('')}\n  requests: ${order.map((who) => (who === 'main' ? who : `sub ${who + 1}`)).join(', ')}`;
  try {
    await checkRandomRun({
      label,
      onNative,
      // The run's files through `compare` (random-wire-compare.ts): ATIF against ATOF, memory's trajectory against native's.
      compareFiles: true,
      // A background agent's refused attempts are not streamed: they are not recorded (docs/adapters/claude-agent-sdk.md, "Limits").
      // A query ended while the CLI waited to retry the main agent's refused request: that retry is recorded as an attempt
      // the query ended (the CLI announces a request once, not each attempt: one in flight before its first byte and one
      // not sent yet look alike; "Limits" too).
      // Only the last attempt of a background agent's request whose retries ran out is (the CLI's message in its transcript).
      requests: () => fake.requests.length + (mainRetries.waiting ? 1 : 0) + subs.reduce((sum, sub) => sum + sub.fake.requests.length - (sub.background ? sub.fake.failedRequests.length - (failedBackground.has(sub) ? 1 : 0) : 0), 0),
      // The main agent's calls: its answered requests, the calls the CLI gave up on, and the one whose retry the query ended.
      // A sub-agent's refused attempt is one call with the request after it, or the last attempt of a call whose retries ran
      // out (a background agent's are not recorded, above).
      calls: () =>
        fake.requests.length - fake.failedRequests.length + mainRetries.gaveUp + (mainRetries.waiting ? 1 : 0) +
        subs.reduce((sum, sub) => {
          const { fake: wire, background } = sub;
          const refused = background ? wire.failedRequests : wire.failedRequests.filter((request) => request !== wire.requests.length - 1);
          return sum + wire.requests.length - refused.length + (failedBackground.has(sub) ? 1 : 0);
        }, 0),
      async run(hooks) {
        const claude = wrapClaudeAgentSdk(sdk, hooks);
        const decide = new Draw(seed ^ 0xde1);
        const decided: FrameworkApproval[] = [];
        /** What canUseTool answered, by call: denied with this message, or allowed. */
        const decisions = new Map<string, { denied: boolean; message?: string }>();
        let toolRuns = 0;
        const abortController = new AbortController();
        let running: { interrupt(): Promise<unknown> } | undefined;
        const interrupted = { done: false };
        let queryEnded = () => {};
        const ended = new Promise<void>((resolve) => (queryEnded = resolve));
        /** Runs as each tool starts: the plan's interruption, while the n-th call runs. */
        const started = async () => {
          toolRuns += 1;
          if (plan.interrupt === undefined || toolRuns !== plan.interrupt.at) return;
          interrupted.done = true;
          if (plan.interrupt.by === 'abort') abortController.abort();
          else await running!.interrupt();
          // The tool returns only once the query ended: a tool that answered at once could let the turn finish first.
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
          clearTimeout(timer);
        };
        const travel = sdk.createSdkMcpServer({
          name: 'travel',
          version: '1.0.0',
          tools: [
            sdk.tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => (await started(), { content: [{ type: 'text', text: `Sunny in ${city}` }] })),
            sdk.tool('get_time', 'The current time', {}, async () => (await started(), { content: [{ type: 'text', text: '12:00 🕛' }] })),
            sdk.tool('check', 'Checks a note', { mode: z.enum(MODES), note: z.string() }, async ({ mode, note }) => {
              await started();
              if (mode === 'throw') throw new Error(`check failed: ${note}`);
              return { content: [{ type: 'text', text: `${mode === 'error' ? 'not checked' : 'checked'}: ${note}` }], ...(mode === 'error' ? { isError: true } : {}) };
            }),
          ],
        });
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        const messages: Loose[] = [];
        const canUseTool = async (toolName: string, input: Record<string, unknown>, options: { toolUseID: string; agentID?: string }) => {
          const decision = decide.pick(DECISIONS);
          const agent = options.agentID === undefined ? AGENT_NAME : 'researcher';
          const approved = !decision.startsWith('deny');
          // A changed city is a change only where the model asked for another city.
          const changed = decision === 'changed' && 'city' in input && input.city !== 'Lyon' ? { ...input, city: 'Lyon' } : undefined;
          decided.push({ id: options.toolUseID, agent, approved, ...(decision === 'session' || decision === 'always' ? { choice: decision } : {}), ...(changed === undefined ? {} : { changedArgs: changed }) });
          if (!approved) {
            if (decision === 'deny-interrupt') interrupted.done = true;
            const message = `No ${toolName} now: ${randomText(decide, 3)}`;
            decisions.set(options.toolUseID, { denied: true, ...(decision === 'deny' ? { message } : {}) });
            return { behavior: 'deny' as const, message, ...(decision === 'deny-interrupt' ? { interrupt: true } : {}) };
          }
          decisions.set(options.toolUseID, { denied: false });
          if (decision === 'changed') return { behavior: 'allow' as const, updatedInput: { ...input, ...('city' in input ? { city: 'Lyon' } : {}) } };
          if (decision === 'session' || decision === 'always') {
            return { behavior: 'allow' as const, updatedInput: input, updatedPermissions: [{ type: 'addRules' as const, rules: [{ toolName }], behavior: 'allow' as const, destination: decision === 'session' ? ('session' as const) : ('localSettings' as const) }] };
          }
          return { behavior: 'allow' as const, updatedInput: input };
        };
        const travelTools = tools.map((tool) => tool.name);
        let thrown: unknown;
        const reading = async () => {
          const q = claude.query({
            prompt,
            options: {
              model: ASKED,
              cwd: offline.home,
              env: offline.env,
              settingSources: [],
              mcpServers: { travel },
              // With canUseTool, every call is asked (the Agent call too: a denied one starts no sub-agent).
              allowedTools: plan.ask ? [] : [...travelTools, 'Agent'],
              maxTurns: 8,
              ...(plan.ask ? { canUseTool } : {}),
              ...(plan.sub ? { agents: { researcher: { description: 'Researches a place', prompt: SUB_PROMPT, tools: travelTools, model: SUB_ASKED } } } : {}),
              ...(plan.interrupt?.by === 'abort' ? { abortController } : {}),
            },
          });
          running = q;
          for await (const message of q) {
            messages.push(message as Loose);
            if ((message as Loose).type === 'result') turnRead();
          }
        };
        await reading()
          .catch((error: unknown) => {
            thrown = error;
          })
          .finally(() => queryEnded());
        // The SDK throws after an error result, or when the caller aborted: anything else is the program failing.
        const result = messages.findLast((m) => m.type === 'result');
        // The main agent's last word on its requests: a refused one to be retried, one given up on, or an answer.
        for (const m of messages.filter((m) => m.parent_tool_use_id == null)) {
          if (m.type === 'system' && m.subtype === 'api_retry') mainRetries.waiting = true;
          else if (m.type === 'assistant') {
            mainRetries.waiting = false;
            if (m.error !== undefined) mainRetries.gaveUp += 1;
          }
        }
        mainRetries.waiting &&= interrupted.done;
        if (thrown !== undefined && !(interrupted.done || result?.is_error === true)) throw new Error(`${label()}\n${String(thrown)}; requests past the scenario: ${others.join(', ')}`);
        expect(others, label()).toEqual([]);
        // Background agents held until the main turn's result end after it: their notifications start turns of the CLI's own
        // (one result each, one for several told together), each answered by one of the scenario's last replies (unless a
        // denial cut the turn short).
        const backgrounds = subs.filter((sub) => sub.background).length;
        const held = subs.some((sub) => sub.background && plan.holdBackground && sub.fake.requests.length > 0);
        if (held && !interrupted.done && result?.is_error !== true) {
          const own = messages.filter((m) => m.type === 'result').length - 1;
          expect({ own: own >= 1 && own <= backgrounds, served: fake.turnsServed }, `${label()}\nthe turns the CLI started for the notifications`).toEqual({ own: true, served: scenario.turns.length - backgrounds + own });
        }
        // What each tool call's result told the model: the stream's tool results.
        const results = new Map<string, { text: string; error: boolean }>();
        const note = (block: Loose) => {
          if (block.type !== 'tool_result') return;
          const text = typeof block.content === 'string' ? block.content : ((block.content ?? []) as Loose[]).filter((part) => part.type === 'text').map((part) => part.text as string).join('');
          // A failed call's observation is the tool's error text (PostToolUseFailure's, docs/adapters/claude-agent-sdk.md): the
          // hint the CLI appends for the model (the schema of a tool it had not loaded) is not the tool's.
          const error = block.is_error === true;
          results.set(block.tool_use_id, { text: error ? text.replace(/\n\nThis tool's input schema was not in your prompt when you called it\.[\s\S]*$/, '') : text, error });
        };
        // The requests' own (the CLI appends its reminders to a result there) only for a call the stream has no result for.
        for (const request of [...fake.requests, ...subs.flatMap((sub) => sub.fake.requests)]) for (const message of request.body.messages ?? []) if (Array.isArray(message.content)) for (const block of message.content) note(block);
        for (const message of messages) if (message.type === 'user' && Array.isArray(message.message?.content)) for (const block of message.message.content) note(block);
        // A background agent the query's interruption stopped: the CLI's own answer to the calls it left running (that the
        // user rejected them) comes in the stream before or after the notification that it stopped, and is not taken: they
        // end as cut, when the agent does (docs/adapters/claude-agent-sdk.md, "How it works"). A call canUseTool denied keeps
        // the words the model was told.
        const background = new Set(subs.filter((sub) => sub.background).map((sub) => sub.call.id));
        for (const message of messages) {
          if (!interrupted.done || message.type !== 'user' || !background.has(message.parent_tool_use_id) || message.tool_use_result !== 'User rejected tool use') continue;
          for (const block of message.message.content as Loose[]) if (block.type === 'tool_result' && block.is_error === true && decisions.get(block.tool_use_id)?.denied !== true) results.delete(block.tool_use_id);
        }
        // The main agent: one step per model reply (the CLI sends a reply's blocks as assistant messages under one message id).
        const replies = new Map<string, Loose[]>();
        // A request refused for good is the CLI's own message saying so (`error`), no reply of the API's.
        for (const message of messages) if (message.type === 'assistant' && message.parent_tool_use_id == null && message.error === undefined) replies.set(message.message.id, [...(replies.get(message.message.id) ?? []), message]);
        const mainSteps: FrameworkStep[] = [...replies.values()].map((parts) => {
          const blocks = parts.flatMap((part) => part.message.content as Loose[]);
          const usage = parts.at(-1)!.message.usage as Loose;
          const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id as string, name: b.name as string, args: b.input as unknown }));
          return {
            text: blocks.filter((b) => b.type === 'text').map((b) => b.text as string).join(''),
            model: parts[0]!.message.model,
            calls,
            results: calls.filter((call) => results.has(call.id)).map((call) => ({ id: call.id, output: results.get(call.id)!.text })),
            prompt: usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
            // The assistant messages carry the usage of the reply's start (message_start): its input side only.
            completion: null,
            // Cache reads and writes where the reply says either (null in both: it says none).
            cached: usage.cache_read_input_tokens == null && usage.cache_creation_input_tokens == null ? undefined : (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
            finish: parts.at(-1)!.message.stop_reason ?? undefined,
            reasoning: blocks.filter((b) => b.type === 'thinking').map((b) => b.thinking as string).join('') || null,
            ...(plan.sub ? { trajectory: [], agent: AGENT_NAME } : {}),
          };
        });
        // The sub-agents: the stream shows them only in part, so their steps are the replies each was sent (the wire's word).
        const subSteps: FrameworkStep[][] = subs.map(({ scenario: subScenario, fake: subFake, call: agentCall }) => subScenario.turns.slice(0, subFake.turnsServed).map((turn) => ({
          text: turn.text ?? '',
          model: turn.model,
          calls: turn.calls.map((call) => ({ id: call.id, name: call.name, args: call.args })),
          // A call the query's interruption cut shows no result to the program: it ends interrupted, in the adapter's words.
          results: turn.calls.filter((call) => results.has(call.id) || interrupted.done).map((call) => ({ id: call.id, output: results.get(call.id)?.text ?? SUB_CUT })),
          prompt: turn.usage.input + turn.usage.cached + turn.usage.cacheWrite,
          completion: turn.usage.output,
          // The CLI writes the cache fields into the transcript (0 where the reply had none): it says them always.
          cached: turn.usage.cached + turn.usage.cacheWrite,
          finish: stopReason(turn),
          reasoning: turn.reasoning ?? null,
          trajectory: [agentCall.id],
          agent: 'researcher',
        })));
        // In the order the requests were sent.
        const steps: FrameworkStep[] = [];
        for (const who of order) steps.push((who === 'main' ? mainSteps : subSteps[who]!).shift()!);
        steps.push(...mainSteps, ...subSteps.flat());
        const ran = subs.filter((sub) => sub.fake.requests.length > 0);
        // Every call of an asked tool: ran (as the tool said), or denied with what the model was told.
        // A denial's message is what the model was told (an interrupting one, the CLI says in its own words).
        for (const [id, decision] of decisions) if (decision.message !== undefined && results.has(id)) expect(results.get(id)!.text, `${label()}\n${id}: the denial's message`).toBe(decision.message);
        const outcomes = [...decisions].filter(([id]) => results.has(id)).map(([id, decision]) => ({ id, denied: decision.denied, told: results.get(id)!.text, failed: !decision.denied && results.get(id)!.error }));
        // The SDK's totals: every model's (modelUsage of the last result), the main loop's (the results' usage).
        const saidCache = steps.some((step) => step.cached !== undefined);
        const saidMainCache = steps.some((step) => step.cached !== undefined && step.agent !== 'researcher');
        // They are the last result's, so they miss what was answered after it: a query aborted before its turn's result (the
        // SDK closes the CLI on the abort, and throws with no result read), or one whose background agent the query's end cut
        // (its requests, its notification's turn). There the replies the server sent are the totals.
        const afterResult = result !== undefined && messages.slice(messages.lastIndexOf(result) + 1).some((m) => m.type === 'assistant' && m.error === undefined);
        const sdkSaid = result !== undefined && !afterResult && !(interrupted.done && ran.some((sub) => sub.background));
        const served = [{ fake, scenario }, ...subs].flatMap(({ fake: wire, scenario: { turns } }) => turns.slice(0, wire.turnsServed).map((turn) => turn.usage));
        const byModel = sdkSaid
          ? Object.values((result.modelUsage ?? {}) as Record<string, Loose>)
          : served.map((usage) => ({ inputTokens: usage.input, outputTokens: usage.output, cacheReadInputTokens: usage.cached, cacheCreationInputTokens: usage.cacheWrite }));
        const cachedAll = byModel.reduce((sum, usage) => sum + usage.cacheReadInputTokens + usage.cacheCreationInputTokens, 0);
        const shown = new Set(messages.filter((m) => m.type === 'assistant' && m.parent_tool_use_id != null).map((m) => m.message.id as string));
        const notified = new Set(messages.filter((m) => m.type === 'system' && m.subtype === 'task_notification' && m.status !== 'stopped').map((m) => m.tool_use_id as string));
        const failedNotices = new Set(messages.filter((m) => m.type === 'system' && m.subtype === 'task_notification' && m.status === 'failed').map((m) => m.tool_use_id as string));
        for (const sub of ran) if (sub.background && failedNotices.has(sub.call.id) && sub.fake.failedRequests.length > 0) failedBackground.add(sub);
        const cutBackground = new Map(
          interrupted.done
            ? ran.filter((sub) => sub.background && !notified.has(sub.call.id)).map((sub) => [sub.call.id, sub.scenario.turns.slice(0, sub.fake.turnsServed).filter((turn) => !shown.has(turn.id)).length] as const).filter(([, unshown]) => unshown > 0)
            : [],
        );
        const totals = {
          prompt: byModel.reduce((sum, usage) => sum + usage.inputTokens, 0) + cachedAll,
          completion: byModel.reduce((sum, usage) => sum + usage.outputTokens, 0),
          cached: saidCache || cachedAll !== 0 ? cachedAll : undefined,
        };
        return {
          prompt,
          model: ASKED,
          steps,
          // The retry the query ended while the CLI waited: an attempt that failed, the last of the main agent's.
          retriedOwn: [...fake.failedRequests, ...(mainRetries.waiting ? [fake.requests.length] : [])],
          // A foreground agent's refused attempts, among its own requests (a background agent's are not recorded).
          // A background agent's request whose retries ran out: its last attempt, after its answered requests.
          retriedIn: new Map<string, readonly number[]>([
            ...ran.filter((sub) => !sub.background && sub.fake.failedRequests.length > 0).map((sub) => [sub.call.id, sub.fake.failedRequests] as const),
            ...[...failedBackground].map((sub) => [sub.call.id, [sub.fake.turnsServed]] as const),
          ]),
          // A failed attempt names a model: the main agent's the one the query asked for, a sub-agent's the one that answered
          // it (none when it was never answered: docs/adapters/claude-agent-sdk.md).
          failedStepModels: new Map<string, string | undefined>([['', ASKED], ...ran.map((sub) => [sub.call.id, sub.fake.turnsServed > 0 ? SUB_MODEL : undefined] as const)]),
          subagents: ran.length,
          // Two agents at once are sibling scopes open together (native roots the later one in itself).
          concurrentSubagents: ran.length > 1,
          // One whose request was refused for good ends failed, as the CLI's task notification says.
          ...(interrupted.done ? {} : { subagentsEnded: new Map(ran.map((sub) => [sub.call.id, sub.refuseAllOf[0] === sub.fake.turnsServed ? ('failed' as const) : ('completed' as const)])) }),
          lateSubagentSteps: true,
          totals,
          ...(plan.ask ? { approvals: { decided, outcomes } } : {}),
          // A background agent still running when the query ended: its requests the stream did not show may not be recorded
          // (the CLI, closed with the query, never wrote them: docs/adapters/claude-agent-sdk.md, "Limits").
          ...(cutBackground.size === 0 ? {} : { unrecordedAtEnd: cutBackground }),
          // The sub-agents that ran (canUseTool may deny an Agent call).
          ...(ran.length === 0 ? {} : { subagentPrompts: new Map(ran.map((sub) => [sub.call.id, sub.prompt])) }),
          // Interrupted, as the SDK says it: no result for the turn, or one that says the turn was cut (the CLI, cut off from
          // the SDK by an abort, may still end its turn: the SDK then reports it finished, and throws after).
          // The turn it ends, as that result says: failed when it is an error (a request refused for good, the interruption
          // come in a background agent's run).
          ...(interrupted.done ? { turns: [result === undefined || result.subtype === 'error_during_execution' ? ('interrupted' as const) : result.is_error === true ? ('failed' as const) : ('completed' as const)] } : {}),
          // A turn whose request was refused for good ends as its result says (an error result: failed).
          ...(!interrupted.done && plan.refused?.who === 'main' && result !== undefined ? { turns: [result.is_error === true ? ('failed' as const) : ('completed' as const)] } : {}),
          // A main agent with no answered request states no totals (random-wire-checks.ts), where the result says zero.
          ...(result === undefined || replies.size === 0 ? {} : { ownTotals: ownTotals(messages, saidMainCache) }),
        };
      },
    });
  } finally {
    await server.close();
    rmSync(offline.home, { recursive: true, force: true });
  }
}

const FROM = Number(process.env.RANDOM_WIRE_FROM ?? 1);
const SEEDS = Number(process.env.RANDOM_WIRE_CLAUDE_SEEDS ?? 10);

describe('the Claude Agent SDK on random Anthropic replies', () => {
  it(`seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
    // RANDOM_WIRE_KEEP_GOING=1 (for long runs outside the suite): every seed runs, and the failures are reported together.
    const failures: string[] = [];
    for (let seed = FROM; seed < FROM + SEEDS; seed++) {
      if (process.env.RANDOM_WIRE_KEEP_GOING !== '1') await runClaudeSeed(seed);
      else await runClaudeSeed(seed).catch((error: unknown) => failures.push(String(error).split('\n').filter((line) => !line.startsWith('  turn')).slice(0, 12).join('\n')));
    }
    expect(failures, `${failures.length} of ${SEEDS} seeds failed`).toEqual([]);
  }, 300_000 + SEEDS * 20_000);
});
