// One seed of LangChain against random provider replies
// (test/support/random-wire.ts): an agent made with `createAgent` as
// LangChain's docs make it, on the real ChatOpenAI (Chat Completions, with
// and without `streamUsage`, or the Responses API) or ChatAnthropic, invoked
// or streamed through LangGraph (`streamMode: ['values', 'messages']`, which
// makes the model stream on the wire), with NemoRelayCallbackHandler; the
// trajectory is checked against the messages the agent returned (each AI
// message's text, tool calls, usage_metadata and finish reason, each tool
// message's content) by random-wire-checks.ts.
// A plan drawn apart (so a seed without one is what it was) adds to some
// tool-calling turns, each turn at most one of:
// - calls of tools that need approval (`humanInTheLoopMiddleware`, a
//   checkpointer thread): the run pauses with one or two calls pending,
//   each approved, edited or rejected (with or without a message), and a
//   `Command` resumes it with the decisions (as the value, or by interrupt
//   id); each pending call asked once and answered once, a rejected one
//   `denied` with what the model was told, one the middleware drops (approved
//   beside a rejected one) never run;
// - a tool that throws, which `toolErrorMiddleware` reports to the model;
// - a tool that aborts the run's `signal`: the run ends interrupted, the
//   tools it left running end with the abort;
// - a tool that runs another agent with the tool's config: that agent's 1-4
//   turns (a scenario of their own) are served while the tool runs, and must
//   be in its own trajectory, linked from the call, its task its user step;
//   with `expertTwice` (the slow suite's), the turn may call it twice at once:
//   two experts side by side, served turns by turns, each its own sub-agent
//   (with approvals, each expert's first turn asks, so both pause together
//   and one `Command` resumes them by interrupt id);
// - a handoff (the docs' supervisor graph: the agent a node, a handoff tool's
//   `Command` to a researcher agent node, which answers back by its edge):
//   the researcher's turns in its own trajectory, linked from the handoff
//   call; half the time its node has a `retryPolicy` and its first request
//   is refused once, so LangGraph runs the node again (the same sub-agent,
//   its failed attempt and the retry one API call). Half the handoffs send
//   the researcher a task instead (`Send`, the docs' task-description
//   handoff, one or two calls at once): each worker that ran a sub-agent
//   linked from the call whose `Send` carried its task, the task its user
//   step, the call observed as the `Command` it returned. The parent's state
//   keeps none of the sending agent's messages then: they are LangChain's
//   own callbacks' (every AI message and ToolMessage it reported).
// Drawn apart again: calls that need approval inside the researcher (its
// agent has humanInTheLoopMiddleware: the graph pauses inside the worker,
// several workers at once when two tasks were sent, resumed by interrupt id)
// and inside the expert a tool runs (the tool pauses with it and runs again
// on resuming). Each request and decision is in the trajectory whose step
// made the call, the resumed agent goes on in the same sub-agent, and each
// trajectory's tokens are its own calls' usage_metadata. A worker whose node
// its retryPolicy ran again is started afresh by LangGraph when resumed:
// what it paused on is in no state (LangChain's callbacks reported it), its
// decisions never reach the middleware (asked, never answered).
// Drawn apart again (`attachOf`): how the runs get the handler, in
// `callbacks`, from `instrumentLangChain(hooks)` alone (LangChain's configure
// hook adds it to every run), or both; the same checks hold either way, and
// langchain-random-wire.test.ts runs seeds all three ways for the same hooks
// and trajectory.
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { Command, END, getCurrentTaskInput, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from '@langchain/langgraph';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createHandoffTool } from './langgraph-handoff.ts';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { createAgent, humanInTheLoopMiddleware, modelRetryMiddleware, toolErrorMiddleware } from 'langchain';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentLangChain, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { Draw } from '../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomScenario, type RandomTool, type RandomWireKind } from '../support/random-wire.ts';
import { checkRandomRun, type FrameworkApproval, type FrameworkStep, type SeedChecks } from './random-wire-checks.ts';

type LangChainWire = Exclude<RandomWireKind, 'gemini'>;

export const LANGCHAIN_WIRES: readonly LangChainWire[] = ['chat', 'responses', 'anthropic'];

const DATED: Record<LangChainWire, string> = { chat: 'gpt-4.1-2025-04-14', responses: 'gpt-4.1-2025-04-14', anthropic: 'claude-sonnet-4-5-20250929' };

function chatModel(wire: LangChainWire, fetch: typeof globalThis.fetch, streamUsage: boolean): BaseChatModel {
  if (wire === 'anthropic') return new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
  return new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, streamUsage, ...(wire === 'responses' ? { useResponsesApi: true } : {}) });
}

const TOOLS: RandomTool[] = [
  { name: 'get_weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'get_time', args: () => ({}) },
  { name: 'search', args: (draw) => ({ query: randomText(draw, 4), limit: draw.int(1, 5) }) },
];

const tools = [
  tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }) }),
  tool(async () => '12:00 🕛', { name: 'get_time', description: 'The current time', schema: z.object({}) }),
  tool(async ({ query, limit }) => JSON.stringify({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }), {
    name: 'search',
    description: 'Search the web',
    schema: z.object({ query: z.string(), limit: z.number() }),
  }),
];

type Loose = Record<string, any>;

function reasoningOf(message: BaseMessage): string | null {
  const texts = (message.contentBlocks as Loose[]).filter((block) => block.type === 'reasoning').map((block) => String(block.reasoning ?? ''));
  return texts.length === 0 ? null : texts.join('');
}


/** Tools a person approves first (humanInTheLoopMiddleware): a cancellation may also be edited, a refund only approved or rejected. */
const APPROVAL_TOOLS: RandomTool[] = [
  { name: 'cancel_order', args: (draw) => ({ orderId: draw.int(1, 999) }) },
  { name: 'refund_order', args: (draw) => ({ orderId: draw.int(1, 999), amount: draw.int(1, 200) }) },
];
const approvalTools = [
  tool(async ({ orderId }) => `Cancelled order ${orderId}`, { name: 'cancel_order', description: 'Cancel an order', schema: z.object({ orderId: z.number() }) }),
  tool(async ({ orderId, amount }) => `Refunded ${amount} on order ${orderId}`, { name: 'refund_order', description: 'Refund an order', schema: z.object({ orderId: z.number(), amount: z.number() }) }),
];
const INTERRUPT_ON = {
  cancel_order: { allowedDecisions: ['approve', 'edit', 'reject'] as ('approve' | 'edit' | 'reject')[] },
  refund_order: { allowedDecisions: ['approve', 'reject'] as ('approve' | 'edit' | 'reject')[] },
};

/** A tool that throws: toolErrorMiddleware tells the model it failed (langchain 1.5 lets a tool's error end the run otherwise). */
const toolFailed = (error: unknown, request: { toolCall: { name: string } }) => `Tool ${request.toolCall.name} failed: ${(error as Error).message}`;

/** What a seed adds to the agent loop (a plan drawn apart from the rest, so a seed without any is what it was). */
interface Plan {
  approvals: boolean;
  /** A call of `book_hotel`, which throws. */
  failing: boolean;
  /** A call of `cancel_trip`, whose tool aborts the run's signal. */
  abort: boolean;
  /** Calls of `ask_expert`, whose tool runs an agent with the tool's config: that agent's turns follow the call's turn. */
  expert: boolean;
  /** The turn calls `ask_expert` twice (`RandomOptions.expertTwice`): two runs of the expert at once, each a sub-agent of its call. */
  expertTwice?: boolean;
  /** A supervisor graph whose turn hands off to a researcher agent (a node): its turns follow the handoff's. */
  handoff: boolean;
  /** How many tasks the handoff's turn sends the researcher (`Send`, side by side); 0: it hands the conversation over. */
  sends?: number;
  /** The researcher's node has a retryPolicy, and its first request (this turn) is refused once. */
  nodeRetry?: number;
  /** Calls of tools that need approval in the researcher's turns (its agent has humanInTheLoopMiddleware): the graph pauses inside the worker, several workers at once when tasks were sent. */
  workerApprovals?: boolean;
  /** Calls of tools that need approval in the expert's turns: the run pauses inside the agent a tool runs. */
  expertApprovals?: boolean;
  /** How each pause is decided. */
  decisions: Draw;
}

/**
 * Adds to the tool-calling turns of `scenario`, each turn at most one of: calls
 * of tools that need approval (one or two), a call of a tool that throws, a
 * call of a tool that aborts the run, a call of a tool that runs another agent
 * (its 1-4 turns, drawn as a scenario of their own, served right after).
 */
function planFeatures(seed: number, wire: LangChainWire, scenario: RandomScenario, options: RandomOptions = {}): Plan {
  const draw = new Draw(seed ^ 0x1a9e);
  const free = scenario.turns.flatMap((turn, index) => (turn.calls.length > 0 ? [index] : []));
  const take = (): number | undefined => (free.length === 0 ? undefined : free.splice(draw.int(0, free.length - 1), 1)[0]);
  const add = (index: number, call: { id: string; name: string; args: Record<string, unknown> }, note: string) => {
    const turn = scenario.turns[index]!;
    turn.calls.splice(draw.int(0, turn.calls.length), 0, call);
    scenario.outline[index] += ` (${note})`;
  };
  const plan: Plan = { approvals: false, failing: false, abort: false, expert: false, handoff: false, decisions: new Draw(seed ^ 0xdec1de) };
  // A supervisor graph: the turn hands off to the researcher (that call alone, as a handoff's Command leaves the
  // step), whose turns come next; it hands back by its edge to the supervisor.
  const handoff = draw.chance(0.35) ? take() : undefined;
  if (draw.chance(0.4)) {
    const first = take();
    for (const index of first === undefined ? [] : [first, ...free.filter(() => draw.chance(0.4))]) {
      if (index !== first) free.splice(free.indexOf(index), 1);
      const n = draw.int(1, 2);
      const names: string[] = [];
      for (let k = 0; k < n; k++) {
        const picked = draw.pick(APPROVAL_TOOLS);
        names.push(picked.name);
        add(index, { id: `call_${seed}_approval_${index + 1}_${k + 1}`, name: picked.name, args: picked.args(draw) }, `asks approval: ${picked.name}`);
      }
      plan.approvals = true;
    }
  }
  if (draw.chance(0.3)) {
    const index = take();
    if (index !== undefined) add(index, { id: `call_${seed}_fails_${index + 1}`, name: 'book_hotel', args: { city: randomText(draw, 3) } }, 'book_hotel throws');
    plan.failing = index !== undefined;
  }
  if (draw.chance(0.3)) {
    const index = take();
    if (index !== undefined) add(index, { id: `call_${seed}_abort_${index + 1}`, name: 'cancel_trip', args: {} }, 'cancel_trip aborts the run');
    plan.abort = index !== undefined;
  }
  const expert = draw.chance(0.35) ? take() : undefined;
  if (expert !== undefined) add(expert, { id: `call_${seed}_expert_${expert + 1}`, name: 'ask_expert', args: { question: randomText(draw, 4) } }, 'ask_expert runs the expert agent');
  // Drawn apart (a seed without it is what it was): the same turn calls `ask_expert` again, its expert run beside the first.
  const twice = new Draw(seed ^ 0x2e7e);
  const expertTwice = expert !== undefined && options.expertTwice === true && twice.chance(0.5);
  if (expertTwice) {
    const turn = scenario.turns[expert]!;
    turn.calls.splice(twice.int(0, turn.calls.length), 0, { id: `call_${seed}_expert_${expert + 1}_2`, name: 'ask_expert', args: { question: randomText(twice, 4) } });
    scenario.outline[expert] += ' (ask_expert again, at once)';
  }
  const nodeRetry = handoff !== undefined && draw.chance(0.5);
  // Half the handoffs send the researcher a task instead (`Send`, the docs' task-description handoff), once or twice
  // at once: the workers run side by side, their requests in whatever order they come.
  const sends = handoff !== undefined && draw.chance(0.5) ? draw.int(1, 2) : 0;
  if (handoff !== undefined) {
    scenario.turns[handoff]!.calls =
      sends === 0
        ? [{ id: `call_${seed}_handoff_${handoff + 1}`, name: 'transfer_to_researcher', args: {} }]
        : Array.from({ length: sends }, (_, k) => ({ id: `call_${seed}_send_${handoff + 1}_${k + 1}`, name: 'assign_researcher', args: { task_description: `Task ${k + 1}: ${randomText(draw, 4)}` } }));
    const names = scenario.turns[handoff]!.calls.map((call) => call.name);
    scenario.outline[handoff] = scenario.outline[handoff]!.replace(/\d+ call\(s\) \[[^\]]*\]/, `${names.length} call(s) [${names.join(', ')}]`) + (sends === 0 ? ' (hands off to the researcher)' : ' (sends the researcher tasks)');
  }
  // The other agents' turns, served after the call that starts them (the later turn first, so the earlier index holds).
  const inserts = [
    // Two experts at once are served whichever asks next (each run's messages say which turns it had), their turns
    // taken in turn: the first two requests, which come at once, get each expert's first turn.
    ...(expert === undefined ? [] : [{ after: expert, interleaved: expertTwice, workers: [{ name: 'expert', seed: seed ^ 0xe3e7 }, ...(expertTwice ? [{ name: 'expert_2', seed: seed ^ 0xe3e7 ^ 0x101 }] : [])] }]),
    ...(handoff === undefined ? [] : [{ after: handoff, interleaved: false, workers: Array.from({ length: Math.max(sends, 1) }, (_, k) => ({ name: `researcher_${k + 1}`, seed: seed ^ 0x7e5e ^ (k * 0x101) })) }]),
  ].sort((a, b) => b.after - a.after);
  for (const insert of inserts) {
    const drawn = insert.workers.map((worker) => {
      const own = randomScenario(worker.seed, wire, DATED[wire], TOOLS);
      return own.turns.map((turn, k) => ({
        turn: { ...turn, id: `${turn.id}_${worker.name}_${k + 1}`, calls: turn.calls.map((call) => ({ ...call, id: `${call.id}_${worker.name}` })) },
        line: `  ${worker.name} ${own.outline[k]}`,
        k,
      }));
    });
    const served = insert.interleaved ? drawn.flat().sort((a, b) => a.k - b.k) : drawn.flat();
    scenario.turns.splice(insert.after + 1, 0, ...served.map(({ turn }) => turn));
    scenario.outline.splice(insert.after + 1, 0, ...served.map(({ line }) => line));
  }
  plan.expert = expert !== undefined;
  plan.expertTwice = expertTwice;
  plan.handoff = handoff !== undefined;
  // With a node retryPolicy, the researcher's first request is refused once: LangGraph runs its node again.
  if (nodeRetry) plan.nodeRetry = scenario.turns.findIndex((turn) => turn.id.includes('_researcher_'));
  plan.sends = sends;
  // Drawn apart again (a seed without them is what it was): approvals inside the agents the run hands to or runs from
  // a tool, in 1-2 of their tool-calling turns (served to whichever worker asks next, when two run at once).
  const nested = new Draw(seed ^ 0x417a);
  for (const [agent, key] of [['_researcher_', 'workerApprovals'], ['_expert', 'expertApprovals']] as const) {
    const own = scenario.turns.flatMap((turn, index) => (turn.id.includes(agent) && turn.calls.length > 0 ? [index] : []));
    if (own.length === 0 || !nested.chance(0.5)) continue;
    // Two experts: each one's first turn (served at once) asks, so both pause together where both call tools in it.
    const firstOfEach = ['_expert_1', '_expert_2_1'].flatMap((suffix) => own.filter((index) => scenario.turns[index]!.id.endsWith(suffix)));
    for (const index of plan.expertTwice && agent === '_expert' && firstOfEach.length > 0 ? firstOfEach : nested.shuffle(own).slice(0, nested.int(1, 2))) {
      for (let k = 0, n = nested.int(1, 2); k < n; k++) {
        const picked = nested.pick(APPROVAL_TOOLS);
        const turn = scenario.turns[index]!;
        turn.calls.splice(nested.int(0, turn.calls.length), 0, { id: `call_${seed}_approval_${index + 1}_${k + 1}${agent.replace(/_$/, '')}`, name: picked.name, args: picked.args(nested) });
        scenario.outline[index] += ` (asks approval: ${picked.name})`;
      }
    }
    plan[key] = true;
  }
  return plan;
}

/**
 * How the seed's runs get the handler (docs/adapters/langchain.md, "Without callbacks"), drawn apart so a seed's
 * replies and plan stay what they were: in `callbacks` as the docs' examples pass it, from `instrumentLangChain(hooks)`
 * alone (LangChain's configure hook adds it to every run, the expert's and the workers' too), or both (the run keeps
 * the handler it was given, the global one adds nothing). The trajectory is held to the same truth either way.
 */
export type Attach = 'callbacks' | 'instrumentLangChain' | 'both';
export function attachOf(seed: number): Attach {
  return new Draw(seed ^ 0x91ab).pick(['callbacks', 'instrumentLangChain', 'both'] as const);
}

/** What a seed's plan adds on `wire`, for a test's name: approvals, a tool that throws, an abort, a sub-agent. */
export function seedFeatures(seed: number, wire: LangChainWire, options: RandomOptions = {}): string {
  const plan = planFeatures(seed, wire, randomScenario(seed, wire, DATED[wire], TOOLS), options);
  const attach = options.attach ?? attachOf(seed);
  return [
    attach !== 'callbacks' && (attach === 'both' ? 'instrumentLangChain beside callbacks' : 'instrumentLangChain'),
    plan.approvals && 'approvals',
    plan.workerApprovals && 'approvals in the worker',
    plan.expertApprovals && 'approvals in the sub-agent a tool runs',
    plan.failing && 'a tool throws',
    plan.abort && 'aborted',
    plan.expert && (plan.expertTwice ? 'two sub-agents from a tool called twice at once' : 'a sub-agent from a tool'),
    plan.handoff && `a supervisor ${plan.sends === 0 ? 'hands off' : `sends ${plan.sends} task(s)`}${plan.nodeRetry === undefined ? '' : ', the worker node retried'}`,
  ]
    .filter(Boolean)
    .join(', ');
}

const isAbortError = (error: unknown): boolean => error instanceof Error && (error.name === 'AbortError' || error.message === 'Abort' || error.message === 'Aborted');

/** The run's own agent and the agent `ask_expert` runs. */
const ROOT = 'travel_agent';
const EXPERT = 'expert';
const RESEARCHER = 'researcher';
/** The supervisor graph: the run's trajectory is named after it (the top-level run), its agent's steps are the run's. */
const GRAPH = 'trip_planner';

/**
 * The docs' task-description handoff: a `Send` gives the agent its task (no ToolMessage reaches the model, and the
 * parent's messages keep neither the call nor its agent's message). `returned` keeps each call's Command.
 */
function assignTool(agentName: string, returned: Map<string, unknown>) {
  const toolName = `assign_${agentName}`;
  return tool(
    async ({ task_description }, config) => {
      const state = getCurrentTaskInput() as typeof MessagesAnnotation.State;
      const command = new Command({ goto: [new Send(agentName, { ...state, messages: [new HumanMessage(task_description)] })], graph: Command.PARENT });
      // As it was returned (LangGraph gives the task's message an id once it is sent).
      returned.set(config.toolCall!.id!, JSON.parse(JSON.stringify(command)));
      return command;
    },
    { name: toolName, schema: z.object({ task_description: z.string() }), description: `Give agent '${agentName}' a task` },
  );
}


/** What a seed may draw beyond npm test's plans (the slow suite's). */
export interface RandomOptions {
  /** A turn that calls `ask_expert` may call it twice at once: two runs of the expert side by side, both may pause for approval. */
  expertTwice?: boolean;
  /** How the runs get the handler, instead of the seed's draw (`attachOf`). */
  attach?: Attach;
}

export async function runLangChainSeed(seed: number, wire: LangChainWire, onNative: boolean, options: RandomOptions = {}, checks: SeedChecks = {}): Promise<void> {
  const scenario = randomScenario(seed, wire, DATED[wire], TOOLS);
  const choice = new Draw(seed ^ 0x1c);
  const mode = choice.pick(['invoke', 'stream'] as const);
  const streamUsage = choice.chance(0.7);
  // Sometimes one call's first attempt is refused as overloaded: modelRetryMiddleware retries it (the client's own retries are off).
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const plan = planFeatures(seed, wire, scenario, options);
  // A node retryPolicy: the researcher's first request is the one refused (its agent has no modelRetryMiddleware).
  const refused = plan.nodeRetry === undefined ? overloaded : [plan.nodeRetry];
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: refused });
  const features = seedFeatures(seed, wire, options);
  const label = `seed ${seed} (langchain ${wire}, ${mode}${streamUsage ? '' : ', streamUsage false'}${refused.length > 0 ? `, turn ${refused[0]! + 1} overloaded once` : ''}${features === '' ? '' : `, ${features}`})\n  ${scenario.outline.join('\n  ')}`;
  const decided: FrameworkApproval[] = [];
  const resumes: string[] = [];
  await checkRandomRun({
    ...checks,
    label: () => `${label}${resumes.length === 0 ? '' : `\n  ${resumes.join('\n  ')}`}`,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      const model = () => chatModel(wire, fake.fetch as typeof globalThis.fetch, streamUsage);
      const controller = new AbortController();
      const asks = plan.approvals || plan.workerApprovals === true || plan.expertApprovals === true;
      const threaded = asks || plan.abort;
      const hitl = humanInTheLoopMiddleware({ interruptOn: INTERRUPT_ON });
      // The expert's runs, by the call that started each: the task it was given and the messages it returned.
      const expertRuns: Array<{ link: string; task: string; messages: BaseMessage[] }> = [];
      let pausedTools = 0;
      // Run from a tool with the tool's config, the expert keeps its pause in the run's checkpointer (a subgraph's).
      const expert = createAgent({
        model: model(),
        tools: plan.expertApprovals ? [...tools, ...approvalTools] : tools,
        name: EXPERT,
        systemPrompt: 'You are an expert on travel.',
        middleware: [modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 1 }), ...(plan.expertApprovals ? [hitl] : [])],
      });
      const askExpert = tool(
        async ({ question }, config) => {
          const out = await expert.invoke({ messages: [{ role: 'user', content: question }] }, config).catch((error: unknown) => {
            // The expert paused for approval: LangGraph runs this tool again when the run is resumed.
            if ((error as Error).name === 'GraphInterrupt') pausedTools += 1;
            throw error;
          });
          expertRuns.push({ link: config.toolCall!.id!, task: question, messages: out.messages });
          return out.messages.at(-1)!.text;
        },
        { name: 'ask_expert', description: 'Ask the travel expert', schema: z.object({ question: z.string() }) },
      );
      // The calls whose `book_hotel` threw, with what toolErrorMiddleware told the model of each (their observation).
      const threw = new Map<string, string>();
      const bookHotel = tool(
        async ({ city }, config): Promise<string> => {
          const error = new Error(`No rooms left in ${city}`);
          threw.set(config.toolCall!.id!, toolFailed(error, { toolCall: { name: 'book_hotel' } }));
          throw error;
        },
        { name: 'book_hotel', description: 'Book a hotel', schema: z.object({ city: z.string() }) },
      );
      const cancelTrip = tool(
        async () => {
          controller.abort();
          return 'Trip cancelled';
        },
        { name: 'cancel_trip', description: 'Cancel the whole trip', schema: z.object({}) },
      );
      // The Commands `assign_researcher` returned, by call (what the call is observed as), and every AI message
      // LangChain reported (a message the parent's state does not keep, the sending agent's, is known from them).
      const commands = new Map<string, unknown>();
      const reported: BaseMessage[] = [];
      const retry = modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 1 });
      const agent = createAgent({
        model: model(),
        tools: [
          ...tools,
          ...(plan.approvals ? approvalTools : []),
          ...(plan.failing ? [bookHotel] : []),
          ...(plan.abort ? [cancelTrip] : []),
          ...(plan.expert ? [askExpert] : []),
          ...(plan.handoff ? [plan.sends === 0 ? createHandoffTool(RESEARCHER) : assignTool(RESEARCHER, commands)] : []),
        ],
        systemPrompt: 'You are a helpful travel assistant.',
        name: ROOT,
        ...(!plan.handoff && threaded ? { checkpointer: new MemorySaver() } : {}),
        middleware: [
          retry,
          ...(plan.failing ? [toolErrorMiddleware({ onError: toolFailed })] : []),
          ...(plan.approvals ? [hitl] : []),
        ],
      });
      // The supervisor graph of LangGraph's multi-agent docs: the agent hands off to the researcher, which answers back.
      const researcher = createAgent({
        model: model(),
        tools: plan.workerApprovals ? [...tools, ...approvalTools] : tools,
        name: RESEARCHER,
        systemPrompt: 'You research facts.',
        middleware: [...(plan.nodeRetry === undefined ? [retry] : []), ...(plan.workerApprovals ? [hitl] : [])],
      });
      const runner = plan.handoff
        ? new StateGraph(MessagesAnnotation)
            .addNode(ROOT, agent.graph, { ends: [RESEARCHER, END] })
            .addNode(RESEARCHER, researcher.graph, plan.nodeRetry === undefined ? {} : { retryPolicy: { maxAttempts: 3, initialInterval: 1, jitter: false } })
            .addEdge(START, ROOT)
            .addEdge(RESEARCHER, ROOT)
            .compile({ name: GRAPH, ...(threaded ? { checkpointer: new MemorySaver() } : {}) })
        : agent;
      const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
      // Each model call as LangChain reported its request: the agent that made it (by its system prompt) and its task
      // (the request's first human message).
      const requested = new Map<string, { agent: string; task: string | undefined }>();
      const requestOf = new Map<BaseMessage, { agent: string; task: string | undefined }>();
      const collect = {
        handleChatModelStart: (_llm: unknown, sent: BaseMessage[][], runId: string) => {
          const system = sent[0]?.find((message) => message.getType() === 'system')?.text;
          const agentName = system === 'You research facts.' ? RESEARCHER : system === 'You are an expert on travel.' ? EXPERT : plan.handoff ? GRAPH : ROOT;
          requested.set(runId, { agent: agentName, task: sent[0]?.find((message) => message.getType() === 'human')?.text });
        },
        handleLLMEnd: (output: Loose, runId: string) => {
          const message = output.generations[0][0].message as BaseMessage;
          reported.push(message);
          if (requested.has(runId)) requestOf.set(message, requested.get(runId)!);
        },
        handleToolEnd: (output: unknown) => void (ToolMessage.isInstance(output) && reported.push(output)),
      };
      const attach = options.attach ?? attachOf(seed);
      const handler = attach === 'instrumentLangChain' ? undefined : new NemoRelayCallbackHandler(hooks);
      const callbacks = [collect, ...(handler === undefined ? [] : [handler])];
      // Installed in this run's async context: every run it starts from here on (the resumes too) gets the handler.
      const uninstall = attach === 'callbacks' ? undefined : instrumentLangChain(hooks);
      // Once the program is done with the thread, as the docs end one: `close()`, or `uninstall()` (which closes too).
      const done = () => {
        handler?.close();
        uninstall?.();
      };
      const thread = threaded ? { configurable: { thread_id: `trip-${seed}` } } : {};
      const config = { callbacks, recursionLimit: 20, signal: controller.signal, ...thread };
      const go = async (input: unknown): Promise<{ messages: BaseMessage[]; __interrupt__?: Loose[] }> => {
        if (mode === 'invoke') return (await runner.invoke(input as never, config)) as never;
        let last: { messages: BaseMessage[] } | undefined;
        for await (const [kind, chunk] of await runner.stream(input as never, { ...config, streamMode: ['values', 'messages'] as const })) {
          if (kind === 'values') last = chunk as { messages: BaseMessage[] };
        }
        return last!;
      };
      // The state the checkpointer kept: the messages of a run that paused or was aborted (of the agent node it
      // stopped in, in a graph), and what it waits for.
      const saved = async () => {
        const snapshot = await ('graph' in runner ? runner.graph : runner).getState(thread as never, { subgraphs: true });
        const inner = snapshot.tasks.map((task) => task.state as Loose | undefined).find((state) => state?.values?.messages !== undefined);
        return { messages: ((inner ?? snapshot).values.messages ?? []) as BaseMessage[], interrupts: snapshot.tasks.flatMap((task) => task.interrupts as Loose[]) };
      };
      // Each paused turn's calls as the model made them (the middleware revises a paused message's calls once decided).
      const madeCalls = new Map<number, Loose[]>();
      // How many turns the provider had served at each pause.
      const pausedAt: number[] = [];
      const turnOf = (message: Loose): number => {
        const ids = [message.id, message.response_metadata?.id].filter((id) => typeof id === 'string');
        const index = scenario.turns.findIndex((turn) => ids.some((id) => id === turn.id || id.startsWith(`${turn.id}`)));
        expect(index, `${label}\nthe turn of AI message ${JSON.stringify(ids)}`).toBeGreaterThanOrEqual(0);
        return index;
      };
      // The agent that made each paused turn's message.
      const pausedBy = new Map<number, string>();
      const rejections = new Map<string, string>();
      const turns: Array<'completed' | 'interrupted'> = [];
      let input: unknown = { messages: [{ role: 'user', content: prompt }] };
      let messages: BaseMessage[];
      let aborted: string | undefined;
      try {
        for (;;) {
          try {
            messages = (await go(input)).messages;
          } catch (thrown) {
            if (!plan.abort || !isAbortError(thrown)) throw thrown;
            turns.push('interrupted');
            aborted = String(thrown);
            messages = (await saved()).messages;
            resumes.push(`aborted: ${String(thrown)}`);
            break;
          }
          const pause = asks ? await saved() : { messages, interrupts: [] };
          if (pause.interrupts.length === 0) {
            turns.push('completed');
            break;
          }
          turns.push('interrupted');
          pausedAt.push(fake.turnsServed);
          // Workers sent tasks at once, or two experts, may each pause: the run waits for all of them.
          if (!plan.sends && !plan.expertTwice) expect(pause.interrupts, label).toHaveLength(1);
          const draw = plan.decisions;
          const said: string[] = [];
          const resume: Record<string, { decisions: Loose[] }> = {};
          for (const interrupt of pause.interrupts) {
            const actions = interrupt.value.actionRequests as Loose[];
            // The message whose calls the middleware asks about (those of the tools it interrupts on, in the message's
            // order): the latest one LangChain reported with those calls not yet decided.
            const asked = reported.findLast((message) => {
              const calls = (((message as Loose).tool_calls ?? []) as Loose[]).filter((call) => call.name in INTERRUPT_ON);
              return message.getType() === 'ai' && !madeCalls.has(turnOf(message)) && calls.length === actions.length && calls.every((call, k) => call.name === actions[k]!.name && JSON.stringify(call.args) === JSON.stringify(actions[k]!.args));
            }) as unknown as Loose | undefined;
            expect(asked, `${label}\nthe message asking about ${JSON.stringify(actions)}`).toBeDefined();
            const turn = turnOf(asked!);
            madeCalls.set(turn, structuredClone(asked!.tool_calls));
            const pending = (asked!.tool_calls as Loose[]).filter((call) => call.name in INTERRUPT_ON);
            const agentName = requestOf.get(asked as unknown as BaseMessage)!.agent;
            pausedBy.set(turn, agentName);
            resume[interrupt.id] = {
              decisions: actions.map((action, k) => {
                const id = pending[k]!.id as string;
                const kind = draw.pick(INTERRUPT_ON[action.name as keyof typeof INTERRUPT_ON].allowedDecisions);
                const edited = kind === 'edit' ? { ...action.args, orderId: action.args.orderId + 1000 } : undefined;
                decided.push({ id, agent: agentName, approved: kind !== 'reject', ...(edited === undefined ? {} : { changedArgs: edited }) });
                said.push(`${id} ${kind}`);
                if (kind === 'approve') return { type: 'approve' };
                if (edited !== undefined) return { type: 'edit', editedAction: { name: action.name, args: edited } };
                // Where the parent's state keeps no ToolMessage for it (tasks sent), the rejection says what the model is told.
                if (!plan.sends && !draw.chance(0.5)) return { type: 'reject' };
                const message = `Not now: ${randomText(draw, 4)}`;
                rejections.set(id, message);
                return { type: 'reject', message };
              }),
            };
          }
          // Several interrupts at once are resumed by id (as LangGraph's interrupt docs write it); one, either way.
          const byId = draw.chance(0.5) || pause.interrupts.length > 1;
          resumes.push(`resumed${byId ? ' by interrupt id' : ''}: ${said.join(', ')}`);
          input = new Command({ resume: byId ? resume : resume[pause.interrupts[0]!.id]! });
        }
      } finally {
        done();
      }
      // A worker that paused after LangGraph ran its node again (its RetryPolicy) is started afresh on resuming: the
      // message it paused on is in no state, its calls never ran, and the decisions never reached the middleware.
      const keptTurns = new Set([...messages, ...expertRuns.flatMap((run) => run.messages)].filter((message) => message.getType() === 'ai').map((message) => turnOf(message)));
      const droppedTurns = [...pausedBy].filter(([turn, by]) => by === RESEARCHER && !keptTurns.has(turn)).map(([turn]) => turn);
      const dropped = new Set(droppedTurns.flatMap((turn) => madeCalls.get(turn)!.filter((call) => call.name in INTERRUPT_ON).map((call) => call.id as string)));
      const askedBy = decided.map(({ id, agent: by }) => ({ id, agent: by }));
      if (dropped.size > 0) {
        decided.splice(0, decided.length, ...decided.filter((decision) => !dropped.has(decision.id)));
        for (const id of dropped) rejections.delete(id);
        resumes.push(`never applied (the worker started afresh): ${[...dropped].join(', ')}`);
      }
      // The messages of the agent that sent tasks, and of a worker started afresh, which its parent's state did not keep.
      if (plan.sends || dropped.size > 0) {
        const kept = new Set([...messages, ...expertRuns.flatMap((run) => run.messages)].map((message) => message.id));
        const answered = new Set(messages.flatMap((message) => (ToolMessage.isInstance(message) ? [message.tool_call_id] : [])));
        messages = [...messages, ...reported.filter((message) => (ToolMessage.isInstance(message) ? !answered.has(message.tool_call_id) : !kept.has(message.id)))];
      }
      const toolMessages = (list: BaseMessage[]) => list.filter((message) => message.getType() === 'tool') as unknown as Loose[];
      const told = new Map<string, Loose>();
      for (const message of [...toolMessages(messages), ...expertRuns.flatMap((run) => toolMessages(run.messages))]) told.set(message.tool_call_id, message);
      for (const [id, command] of commands) told.set(id, { content: command });
      // What the parent's state did not keep of the agent that sent tasks: its calls that threw, and those rejected.
      for (const [id, sentence] of threw) if (!told.has(id)) told.set(id, { content: sentence });
      for (const [id, message] of rejections) if (!told.has(id)) told.set(id, { content: message });
      // The run aborted while its step's tools ran: LangChain ends each of them with the abort (its tools race the signal).
      if (aborted !== undefined) {
        const step = messages.filter((message) => message.getType() === 'ai').at(-1) as unknown as Loose | undefined;
        if ((step?.tool_calls as Loose[] | undefined)?.some((call) => call.name === 'cancel_trip') === true) for (const call of step!.tool_calls as Loose[]) if (!told.has(call.id)) told.set(call.id, { content: aborted });
      }
      // Calls that end after the others of their step, in this order: `ask_expert` waits for a whole agent; a call whose
      // tool threw ends when its tool node ends, with the ToolMessage the node gave the model; then a call of a tool the
      // agent does not have, which that node answers (ToolNode's error: what the model was told). Two `ask_expert`
      // calls stay in the order their experts started (the message's): a sub-agent's link makes its call's result then.
      const endRank = (call: Loose): number =>
        call.name === 'ask_expert' ? 1 : threw.has(call.id) ? 2 : String(told.get(call.id)?.content).includes('is not a valid tool') ? 3 : 0;
      const stepsOf = (list: BaseMessage[], trajectory: string[], agentName: string): Array<FrameworkStep & { turn: number }> =>
        list
          .filter((message) => message.getType() === 'ai')
          .map((message) => {
            const ai = message as unknown as Loose;
            const usage = ai.usage_metadata as Loose | undefined;
            const details = usage?.input_token_details as Loose | undefined;
            const calls = ((madeCalls.get(turnOf(ai)) ?? ai.tool_calls ?? []) as Loose[]).map((call) => ({ id: call.id as string, name: call.name as string, args: call.args as unknown }));
            return {
              turn: turnOf(ai),
              text: message.text,
              // A streamed ChatAnthropic answer says its model and stop reason in additional_kwargs (message_start, message_delta).
              model: ai.response_metadata?.model_name ?? ai.response_metadata?.model ?? ai.additional_kwargs?.model,
              calls,
              // What the model was told of each call (a call the middleware dropped, or an aborted run's, has nothing), in
              // the order the calls ended: ToolNode runs the message's calls as the middleware left them (the calls it did
              // not ask about first), and those that end last (`endRank`) after the others. A call
              // whose tool threw is observed as toolErrorMiddleware's sentence, what the model was told
              // (docs/adapters/langchain.md, "Tools").
              // Of a paused message the parent's state did not keep (tasks sent), the revised calls are not known: the
              // rejected calls (answered on resuming), then the others as LangChain reported them ending.
              results: (plan.sends && madeCalls.has(turnOf(ai))
                ? [...calls.filter((call) => rejections.has(call.id)), ...reported.filter((message) => ToolMessage.isInstance(message) && calls.some((call) => call.id === message.tool_call_id)).map((message) => ({ id: (message as ToolMessage).tool_call_id }))]
                : ((ai.tool_calls ?? []) as Loose[]).map((call, index) => ({ call, index })).sort((a, b) => endRank(a.call) - endRank(b.call) || a.index - b.index).map(({ call }) => call))
                .filter((call) => told.has(call.id))
                .map((call) => ({ id: call.id as string, output: told.get(call.id)!.content })),
              prompt: usage?.input_tokens,
              completion: usage?.output_tokens,
              // Cache reads and writes where the framework reports either (no details: it reports none).
              cached: details?.cache_read === undefined && details?.cache_creation === undefined ? undefined : (details.cache_read ?? 0) + (details.cache_creation ?? 0),
              finish: ai.response_metadata?.finish_reason ?? ai.response_metadata?.stop_reason ?? ai.additional_kwargs?.stop_reason,
              // The reasoning as LangChain's standard content blocks give it, whatever the provider.
              reasoning: reasoningOf(message),
              ...(plan.expert || plan.handoff ? { trajectory, agent: agentName } : {}),
            };
          });
      // In the order the provider answered them (the expert's turns come while its call's tool runs).
      // In a supervisor graph, the researcher's messages (named by their agent) are in its trajectory, linked from the handoff.
      // Sent a task, each worker's messages follow the task in the parent's messages (each worker's output one block).
      const handoffCalls = messages.flatMap((message) => ((message as unknown as Loose).tool_calls ?? []) as Loose[]).filter((call) => call.name === `transfer_to_${RESEARCHER}` || call.name === `assign_${RESEARCHER}`);
      // The tasks a worker ran (their message in the parent's state): of two sent at once, LangGraph may run one.
      const ran = new Set(messages.filter((message) => message.getType() === 'human').map((message) => message.text));
      const sentTasks = new Map(handoffCalls.filter((call) => call.name === `assign_${RESEARCHER}` && ran.has(call.args.task_description)).map((call) => [call.args.task_description as string, call.id as string]));
      const worker = new Map<BaseMessage, string>();
      const isWorker = (message: BaseMessage) => message.name === RESEARCHER || requestOf.get(message)?.agent === RESEARCHER;
      let current = handoffCalls[0]?.id as string | undefined;
      for (const message of messages) {
        if (message.getType() === 'human' && sentTasks.has(message.text)) current = sentTasks.get(message.text);
        // A message no state kept (LangChain reported it) is the worker's whose task its request carried.
        const request = requestOf.get(message);
        if (message.getType() === 'ai' && isWorker(message) && current !== undefined) worker.set(message, (request?.task === undefined ? undefined : sentTasks.get(request.task)) ?? current);
      }
      const byAgent = (link: string | undefined) => messages.filter((message) => message.getType() !== 'ai' || (link === undefined ? !isWorker(message) : worker.get(message) === link));
      const steps: FrameworkStep[] = [
        ...stepsOf(byAgent(undefined), [], plan.handoff ? GRAPH : ROOT),
        ...[...new Set(worker.values())].flatMap((link) => stepsOf(byAgent(link), [link], RESEARCHER)),
        ...expertRuns.flatMap((run) => stepsOf(run.messages, [run.link], EXPERT)),
      ]
        .sort((a, b) => a.turn - b.turn)
        .map(({ turn: _, ...step }) => step);
      const sum = (pick: (step: FrameworkStep) => number | undefined) => {
        const values = steps.map(pick).filter((value): value is number => value !== undefined);
        return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
      };
      const approvalCalls = steps.flatMap((step) => step.calls).filter((call) => call.name in INTERRUPT_ON);
      return {
        prompt,
        model: 'gpt-4.1',
        steps,
        retried: fake.failedRequests,
        ...(pausedTools === 0 ? {} : { pausedTools }),
        // Two experts run at once: native gives the later one's scope a stack of its own.
        ...(plan.expertTwice ? { concurrentSubagents: true } : {}),
        // Each expert run, each worker that ran (a worker resumed after its pause is the same one).
        subagents: expertRuns.length + (plan.sends ? sentTasks.size : handoffCalls.length > 0 ? 1 : 0),
        totals: { prompt: sum((s) => s.prompt), completion: sum((s) => s.completion ?? undefined), cached: sum((s) => s.cached) },
        turns,
        // A researcher handed the conversation has none (it ends with the handoff's ToolMessage); one sent a task has it.
        // A worker started afresh on its task: the request that starts it again ends with the task.
        ...(droppedTurns.length === 0 ? {} : { startedAfresh: droppedTurns.flatMap((turn) => { const task = requestOf.get(reported.find((message) => message.getType() === 'ai' && turnOf(message) === turn)!)?.task; return task !== undefined && sentTasks.has(task) ? [sentTasks.get(task)!] : []; }) }),
        ...(expertRuns.length === 0 && sentTasks.size === 0 ? {} : { subagentPrompts: new Map([...expertRuns.map((run) => [run.link, run.task] as const), ...[...sentTasks].map(([task, link]) => [link, task] as const)]) }),
        ...(asks
          ? {
              approvals: {
                decided,
                // Every call asked about, with the agent that asked (a decision that never reached the middleware has no answer).
                asked: askedBy,
                inCallsTrajectory: true,
                // Two experts paused at once take their decisions in the order they run again.
                ...(plan.expertTwice ? { unordered: true } : {}),
                // Every call of a tool that needs approval: ran, rejected with what the model was told, or (approved
                // beside a rejected call, which the middleware drops; or left by an aborted run) never run.
                outcomes: approvalCalls.map((call) => {
                  const message = told.get(call.id);
                  const rejected = decided.some((decision) => decision.id === call.id && !decision.approved);
                  // A call the agent had no tool for: ToolNode told the model it failed.
                  return message === undefined ? { id: call.id, denied: false, told: undefined, ran: false } : { id: call.id, denied: rejected, told: message.content, ...(message.status === 'error' ? { failed: true } : {}) };
                }),
              },
            }
          : {}),
      };
    },
  });
}
