/**
 * LangChain.js / LangGraph.js adapter: `new NemoRelayCallbackHandler(hooks)`,
 * passed in `callbacks`, maps chain, chat-model, LLM and tool runs to the
 * observer hooks. Works with `langchain`'s `createAgent`, LangGraph graphs
 * and plain runnables. `instrumentLangChain(hooks)` puts one such handler in
 * every run started from the async context it is called in (`./global.ts`).
 *
 * - The root chain run is the turn; its session is `options.sessionId`, else
 *   the `thread_id` LangGraph puts in the run metadata, else the root run id.
 *   A named session (a thread, a `sessionId`) stays open between its runs
 *   (`SessionHolds`), so a thread's turns, and a run and the `Command` that
 *   resumes it, are one trajectory; it closes on `close()` or the plugin's
 *   shutdown.
 * - Every chat-model or LLM run is one provider attempt. Attempts under the
 *   same parent chain run after a failure are retries of one API call (what
 *   `modelRetryMiddleware` does), so they share its `api_request_id`.
 * - A chain run whose parent is a tool run is a sub-agent of that tool call; so is a run with no parent started as
 *   code of a tool call another adapter records, or an MCP server's request for one (the shared tool frame).
 * - The tool-calling loop of LangChain's model docs run bare (model calls and `tool.invoke(toolCall)` outside any
 *   run) is one turn, told apart by its conversation (`./bare.ts`).
 * - A compiled graph run as a node (a subgraph, a `createReactAgent` or
 *   `createAgent` worker) is an agent: the first to start before the run
 *   called a model or started another agent, unless a `Send` started it, is
 *   the run's own (its steps are the run's), any other is
 *   a sub-agent of the run, linked to the handoff call whose `Command` went
 *   to its node, else to the run (`#agentNode`). A thread remembers its own
 *   agent, so a run resumed inside a worker keeps the worker a sub-agent.
 * - Bounded: every node of a top-level run is forgotten when that run ends
 *   (what it left open ends with it), and beyond `MAX_OPEN_RUNS` top-level
 *   runs that never end (an abandoned stream) the oldest is ended as
 *   interrupted.
 * - `humanInTheLoopMiddleware` interrupts (a node failing with `GraphInterrupt`)
 *   become `pre_approval_request` and end the turn as interrupted; the
 *   decisions of the resuming `Command` become `post_approval_response`.
 *
 * @module
 */

import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { consumeCallback } from '@langchain/core/callbacks/promises';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import type { HookRegistry } from '../../hooks/registry.ts';
import { checkAdapterArguments } from '../core/arguments.ts';
import { AdapterCore, OpenSessions, ToolCallRefused, type AgentRun, type ApiCall, type ResponseParts, type RunStatus } from '../core/run.ts';
import { currentToolFrame } from '../core/context.ts';
import { deliveredAnswer } from '../core/delivered.ts';
import { approvalPause } from '../core/pause.ts';
import { guardrailTurnEnd, type GuardrailRecord } from '../core/guardrails.ts';
import { moderationHook, moderationVerdictOfEnd, moderationVerdictOfError, type ModerationHook, type ModerationVerdict } from './moderation.ts';
import { MAX_HELD_SESSIONS, MAX_PENDING_APPROVALS, PausedSubagents, SessionHolds } from '../core/holds.ts';
import type { AdapterOptions } from '../core/options.ts';
import { chatMessages, chunkServedBy, contentText, finalTextOfOutputs, offeredTools, parsedResultOf, providerApprovalAnswersOf, responseOfResult, toolMessageOf, userMessageOfInputs, userTextOfInputs } from './messages.ts';
import { abortErrorOf, argumentsObject, isAbortSignal, changedArgs, localCalls, reportedToolError, textOrJson, type CallOfTool } from '../core/shapes.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { BareTurns } from './bare.ts';
import { HeldToolFailures } from './tool-failures.ts';
import { jsonEqual } from '../../shared/json.ts';
import { consoleLogger } from '../../shared/logger.ts';
import { addToEveryRun } from './global.ts';
import { isRecord } from '../../shared/record.ts';

export type { AdapterOptions, RunInfo, SessionScope } from '../core/options.ts';
/** Options of `NemoRelayCallbackHandler`: the session id and scope, the platform name and the logger shared by every adapter. */
export type LangChainAdapterOptions = AdapterOptions;

type Loose = Record<string, unknown>;

interface Node {
  readonly kind: 'chain' | 'tool' | 'llm';
  readonly parent: string | undefined;
  /** The top-level run this node belongs to. */
  readonly root: string;
  /** The agent run this node records into. */
  readonly run: AgentRun | undefined;
  /** True for the node whose end closes `run`. */
  readonly ownsRun: boolean;
  readonly toolCallId?: string;
  /** A tool run no model's call named (one the program ran on its own): its `toolCallId` is its run id, new each time it runs. */
  readonly unnamedCall?: boolean;
  /**
   * A tool the program ran itself, outside any run (`await tool.invoke(args)`): nothing of it is recorded (no model
   * asked for it), but an agent or a model the tool runs is a turn of its own, as it would be called from anywhere.
   */
  readonly outsideRun?: boolean;
  /** A graph node's task (its parent and checkpoint namespace): a RetryPolicy re-runs it as a new chain run with the same task. */
  readonly task?: string;
  /** A chain run's name (a graph node's): the node that paused for approval answers the decisions when it runs again. */
  readonly name?: string;
  /** A graph node's own run (its name is its `langgraph_node`): the tool messages it adds to the state are what the model reads. */
  readonly graphNode?: boolean;
  /** A run of a plain runnable (a chain, `withStructuredOutput`), not a graph: its result, whatever its shape, is its answer. */
  readonly runnable?: boolean;
  /** A model call outside any run (LangChain's bare tool loop, `./bare.ts`): the messages it was sent. */
  readonly bareRequest?: unknown;
  /** A model run's provider (`askedProvider`): how its package counts tokens. */
  readonly provider?: string;
  /** The chunks a model run streamed, as LangChain told them (`handleLLMNewToken`). */
  chunks?: number;
  /** The text those chunks carried: a stream stopped before its end keeps it as the failed call's answer. */
  delivered?: string;
  /** Stops listening to the signal of a model called on its own (`#endOnAbort`), once its run ended. */
  unlisten?: () => void;
  /** A model run's AbortSignal: a call its run left open ends with the abort when the program aborted (`abandonedCallError`). */
  readonly signal?: AbortSignal;
  /** The upstream a router named in a streamed chunk's raw response (`chunkServedBy`): the merged message repeats it. */
  servedBy?: string;
  call?: ApiCall;
  /** A `RunnableRetry` or `RunnableWithFallbacks` run: its attempts' model calls (`WrapperAttempt`). */
  readonly wrapped?: Wrapped;
  /** A chain run inside one attempt of such a wrapper: which of the attempt's model calls is which. */
  readonly attempt?: WrapperAttempt;
  /** A model run: the key its attempts are kept under in `#attempts` (its retry, if it failed, comes under the same). */
  readonly attemptKey?: string;
  /** A node of `openAIModerationMiddleware` (`./moderation.ts`): its hook and the state it started with. */
  readonly moderation?: { readonly hook: ModerationHook; readonly inputs: unknown };
}

/**
 * What a retry or fallback wrapper's attempts share: the wrapper runs a chain (`prompt.pipe(model).withRetry()`,
 * `chain.withFallbacks([backup])`) as a new chain run each attempt, so the nth model call of an attempt is a retry
 * of the nth of the attempt before when that one failed, as a model the wrapper runs directly is (same parent).
 */
interface Wrapped {
  /** The most model calls an attempt made: the keys the wrapper's end forgets. */
  slots: number;
  /**
   * A wrapper run inside an attempt of another (`model.withRetry()` in a chain that `withFallbacks` runs): its model
   * calls are also that attempt's, from the place `base` (the attempt's calls before it), so a backup chain's call
   * continues the call the inner wrapper gave up on.
   */
  readonly outer?: { readonly attempt: WrapperAttempt; readonly base: number };
}

/** One attempt of a wrapper: its model calls so far. */
interface WrapperAttempt {
  readonly wrapper: string;
  readonly wrapped: Wrapped;
  models: number;
}

interface Attempts {
  call: ApiCall;
  lastFailed: boolean;
}

/**
 * What every handler on one hook registry shares: a handler is often made per
 * request (`callbacks: [new NemoRelayCallbackHandler(hooks)]`), and the next
 * run of a thread, made with another handler, must find the session the last
 * one left open (a hold no later handler could release would keep it open
 * until the plugin's shutdown). The holds release through the first
 * handler's core (its platform names their `on_session_finalize`).
 */
interface Shared {
  /** The runs and sub-agent links keeping each session open: a link one handler opened may close under another. */
  readonly sessions: OpenSessions;
  holds?: SessionHolds<true>;
  /** Approval requests waiting for the resuming run, by session. */
  readonly pendingApprovals: Map<string, Asked[]>;
  /** The own agent of each session's last run (a thread's next run, or the `Command` resuming it, starts with it). */
  readonly ownAgents: Map<string, string>;
  /** Sub-agents paused for approval, their sessions kept open for the run that resumes them (`#pausedKey`). */
  readonly pausedAgents: PausedSubagents;
  /** Turns of bare model calls waiting for the program's tool loop to go on. */
  readonly bareTurns: BareTurns;
  /** The calls an interrupted run's models asked for that no tool ran, by session, for the `Command` resuming it. */
  readonly interruptedCalls: Map<string, CallOfTool[]>;
  /** The handler `instrumentLangChain` put in every run, while it is installed: it records what no other knows of. */
  instrumented?: NemoRelayCallbackHandler;
}
const sharedByHooks = new WeakMap<HookRegistry, Shared>();
/**
 * Handlers `instrumentLangChain` installed and then removed: they start no new run (a context that kept the handler,
 * one started before the removal, still adds it to its runs), and finish recording the runs under way.
 */
const retired = new WeakSet<NemoRelayCallbackHandler>();

/** Tool calls a run's models asked for, kept for the tool runs that carry them out without naming them; beyond it the oldest are forgotten. */
const MAX_UNCLAIMED_CALLS = 256;
/** Top-level runs kept open at once; beyond it the oldest (a run that never ended) is ended as interrupted. */
export const MAX_OPEN_RUNS = 1_000;

/**
 * A run stopped from outside (the consumer left a stream, an AbortSignal fired): interrupted, not failed. Told as
 * LangChain's packages throw it: a DOMException `AbortError`, LangChain's `ModelAbortError`, LangGraph's
 * `Error('Abort')` and ChatOpenAI's `Error('AbortError')`.
 */
const isAbort = (error: unknown): boolean =>
  isRecord(error) && (error.name === 'AbortError' || error.name === 'ModelAbortError' || (error.name === 'Error' && (error.message === 'Abort' || error.message === 'AbortError')));
/** The abort of a model run's signal, as the program raised it (its reason), once the signal fired. */
const programAbortOf = (node: Node): Error | undefined => (node.signal?.aborted === true ? abortErrorOf(node.signal.reason, 'This operation was aborted') : undefined);
/**
 * The error a stopped model call is recorded with: a bare `Error('Abort…')` (ChatOpenAI's stand-in for the abort) as
 * the program's abort, as raised (its signal's reason), else as the AbortError it stands for; any other as thrown.
 */
const stoppedCallError = (error: unknown, node: Node): unknown =>
  isRecord(error) && error.name === 'Error' && isAbort(error) ? (programAbortOf(node) ?? abortErrorOf(undefined, 'This operation was aborted')) : error;
/**
 * The error of a model call its run ended without (no LLM end or error will come): the abort, when the program's
 * signal stopped the run. A graph that races its nodes against the signal fails with it at once, before the model's
 * request rejects; LangChain tells the model's error (if at all) only after the graph's, when the run is gone.
 */
const abandonedCallError = (node: Node): Error => programAbortOf(node) ?? new AbandonedRunError();
/** What a model run's stream had handed on when it stopped: its text, the answer the program showed (the one rule for a cut stream). */
const deliveredOf = (node: Node): ResponseParts | undefined => (node.delivered === undefined ? undefined : deliveredAnswer({ text: node.delivered, reasoning: '' }));
/** A chain run of a compiled LangGraph graph (`CompiledStateGraph`, `Pregel`): an agent when it runs as a node. */
const isGraphRun = (chain: unknown): boolean => {
  const id = isRecord(chain) && Array.isArray(chain.id) ? chain.id : [];
  const kind = id.at(-1);
  return id[0] === 'langgraph' && typeof kind === 'string' && (kind.startsWith('Compiled') || kind === 'Pregel');
};
/** The run of the code running now, as LangChain keeps it for that code (its async-local `RunnableConfig`'s callbacks). */
function callerRunId(): string | undefined {
  const callbacks: unknown = AsyncLocalStorageProviderSingleton.getRunnableConfig()?.callbacks;
  const parent = isRecord(callbacks) && typeof callbacks.getParentRunId === 'function' ? (callbacks.getParentRunId as () => unknown).call(callbacks) : undefined;
  return typeof parent === 'string' ? parent : undefined;
}
/** The tool call (of any adapter) the code running now is code of, while its run goes on. */
function callerToolCall(): { run: AgentRun; toolCallId: string } | undefined {
  const frame = currentToolFrame();
  return frame === undefined || frame.run.ended ? undefined : { run: frame.run, toolCallId: frame.toolCallId };
}
/** LangGraph's name for the tasks a `Send` starts (its `PUSH` constant). */
const PUSH = '__pregel_push';
/** A node LangGraph runs for a `Send` (a fan-out's worker): its task was pushed, not pulled by an edge. */
const isSendTask = (metadata: Loose | undefined): boolean => {
  const triggers = metadata?.langgraph_triggers;
  const path = metadata?.langgraph_path;
  return (Array.isArray(triggers) && triggers.includes(PUSH)) || (Array.isArray(path) && path[0] === PUSH);
};
/** The name LangGraph gives a graph compiled without one. */
const DEFAULT_GRAPH_NAME = 'LangGraph';
/**
 * The model a LangChain model run asked for: LangSmith's `ls_model_name`, or, for an Azure OpenAI deployment
 * (AzureChatOpenAI, `ls_provider: 'azure'`), the deployment its serialized fields name. Azure serves the deployment
 * the URL names and ignores the body's `model`, which `ls_model_name` repeats: LangChain's own default
 * (`gpt-3.5-turbo`) unless the program set one.
 */
function askedModel(llm: unknown, metadata: Loose | undefined): string | undefined {
  const deployment = metadata?.ls_provider === 'azure' && isRecord(llm) && isRecord(llm.kwargs) ? nonEmptyString(llm.kwargs.deployment_name) : undefined;
  return deployment ?? nonEmptyString(metadata?.ls_model_name);
}
/**
 * The provider a LangChain model run names: LangSmith's `ls_provider`, but for a model class of another package built
 * on ChatOpenAI that keeps its `'openai'` (ChatDeepSeek): that package, as its serialized id names it
 * (`['langchain', 'chat_models', 'deepseek', 'ChatDeepSeek']`).
 */
function askedProvider(llm: unknown, metadata: Loose | undefined): string | undefined {
  const named = nonEmptyString(metadata?.ls_provider);
  const id = isRecord(llm) && Array.isArray(llm.id) ? llm.id : [];
  const namespace = id.length === 4 && id[0] === 'langchain' && id[1] === 'chat_models' ? nonEmptyString(id[2]) : undefined;
  return named === 'openai' && namespace !== undefined ? namespace : named;
}
/** The `lc_source` `toolEmulatorMiddleware` gives its model's calls. */
const TOOL_EMULATION = 'toolEmulation';
/** LangChain's runnables that run what they wrap again after a failure (`withRetry`) or run the next of it (`withFallbacks`). */
const WRAPPERS = new Set(['RunnableRetry', 'RunnableWithFallbacks']);
const isRetryWrapper = (chain: unknown): boolean => isRecord(chain) && Array.isArray(chain.id) && WRAPPERS.has(String(chain.id.at(-1)));
/** The key of a wrapper's nth model call (`Wrapped`). */
const slotKey = (wrapper: string, slot: number): string => `${wrapper}#model:${slot}`;
/** The key of the `slot`th model call of `wrapper`'s attempts, which is that of the outermost wrapper it runs in (`Wrapped.outer`). */
function slotOf(wrapper: string, wrapped: Wrapped, slot: number): string {
  wrapped.slots = Math.max(wrapped.slots, slot);
  const outer = wrapped.outer;
  if (outer === undefined) return slotKey(wrapper, slot);
  const place = outer.base + slot;
  outer.attempt.models = Math.max(outer.attempt.models, place);
  return slotOf(outer.attempt.wrapper, outer.attempt.wrapped, place);
}
/** A handoff out of a subgraph: a `Command` with `graph: Command.PARENT` ends the subgraph's run with this error. */
const isParentCommand = (error: unknown): boolean => isRecord(error) && error.name === 'ParentCommand';
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isRunId = (value: unknown): value is string => typeof value === 'string' && RUN_ID.test(value);
/** LangGraph's pause for a human: `interrupt()` (or a `NodeInterrupt`) throws it out of the node or tool. */
const isInterrupt = (error: unknown): error is Loose => isRecord(error) && (error.name === 'GraphInterrupt' || error.name === 'NodeInterrupt');
/** A LangGraph `Command` carrying a resume value: the input of a run that continues an interrupted one. */
const isResume = (inputs: unknown): boolean => isRecord(inputs) && inputs.resume !== undefined && (inputs.lg_name === 'Command' || Object.keys(inputs).every((key) => ['resume', 'update', 'goto', 'graph', 'lg_name'].includes(key)));

/**
 * A LangChain callback handler (pass it in `callbacks`) that emits the
 * observer hooks for the chain, model and tool runs it is told about.
 */
export class NemoRelayCallbackHandler extends BaseCallbackHandler {
  /** The handler's name as LangChain lists it among a run's callbacks. */
  name = 'nemo_relay_hooks';
  /** Handlers run in order with the run, so hooks arrive in the order things happened. */
  override awaitHandlers = true;
  readonly #core: AdapterCore;
  readonly #shared: Shared;
  readonly #nodes = new Map<string, Node>();
  /** The open nodes of each top-level run, oldest run first. */
  readonly #roots = new Map<string, Set<string>>();
  /**
   * The signal of each open top-level run's latest model call that streamed to callbacks: the graph's own, as LangGraph
   * gives its nodes. Only a chunk told after the consumer left keeps LangGraph from telling the graph's failure.
   */
  readonly #streamingSignals = new Map<string, AbortSignal>();
  /** Top-level graph runs one of whose nodes failed other than by an abort: LangGraph tells the graph's failure. */
  readonly #failingGraphs = new Set<string>();
  /** Top-level graph runs whose node stopped with the graph's abort, each waiting to end unless something goes on (`#endLeftGraph`). */
  readonly #leftGraphs = new Map<string, ReturnType<typeof setTimeout>>();
  /** Retries of one API call share the parent chain run (the model node). */
  readonly #attempts = new Map<string, Attempts>();
  /** Approval requests waiting for the resuming run, by session (shared by the handlers on the same hooks). */
  readonly #pendingApprovals: Map<string, Asked[]>;
  readonly #ownAgents: Map<string, string>;
  readonly #pausedAgents: PausedSubagents;
  readonly #interruptedCalls: Map<string, CallOfTool[]>;
  /** Decisions of a resuming `Command`, answered when the node that paused ends on resuming (`#resumeApprovals`). */
  readonly #awaitingDecisions = new WeakMap<AgentRun, { node: string; answer: () => void }>();
  /** Sub-agents that are agents of a graph (a node), not runs started from a tool. */
  readonly #graphAgents = new WeakSet<AgentRun>();
  /** Sub-agents run from a tool no model's call named: their session is new each time the tool runs (`#approvalKey`). */
  readonly #unnamedLinks = new WeakSet<AgentRun>();
  /** Interrupts already asked about where they were raised (a sub-agent): the runs they bubble through only stop. */
  readonly #askedInterrupts = new WeakSet<object>();
  /** Runs a graph interrupt paused, and each run's latest tool calls (to name what an interrupt asks about). */
  readonly #interrupted = new WeakSet<AgentRun>();
  /**
   * The tool calls whose approval a graph interrupt asked for, by each run it paused: the run that asked and the runs
   * above it (their turns wait for the same decisions). Taken when the run's turn ends.
   */
  readonly #awaitingApproval = new WeakMap<AgentRun, string[]>();
  /**
   * Runs one of whose own tools paused on `interrupt()`, asking about its call: a sub-agent among them waits for the
   * resuming `Command` as one that `humanInTheLoopMiddleware` paused does, though no decision of it is read.
   */
  readonly #askedByTool = new WeakSet<AgentRun>();
  readonly #lastCalls = new WeakMap<AgentRun, CallOfTool[]>();
  /** The tool calls each run's models asked for that no tool run has taken yet, oldest first (`#claimCall`). */
  readonly #unclaimedCalls = new WeakMap<AgentRun, CallOfTool[]>();
  /** The calls of each run `toolEmulatorMiddleware`'s model is answering, open until the tools node's ToolMessage. */
  readonly #emulatedCalls = new WeakMap<AgentRun, Set<string>>();
  /** Named sessions (threads) kept open between their runs, shared by the handlers on the same hooks. */
  readonly #holds: SessionHolds<true>;
  /** The task a `Send` gave each agent it started: of parallel workers of one agent, it tells whose approvals are whose. */
  readonly #sentTasks = new WeakMap<AgentRun, string>();
  /** The agents (compiled graphs run as nodes) each run met, and the handoffs its tools made. */
  readonly #agents = new WeakMap<AgentRun, AgentsOfRun>();
  /**
   * Sub-agents whose node failed on a model call, by the node's task: its RetryPolicy may run it again (the same
   * task), which continues the same sub-agent; kept with the top-level run's open nodes, whose end ends them.
   */
  readonly #failedAgents = new Map<string, { run: AgentRun; error: unknown }>();
  /** The model call each run's last failed attempt belongs to, until an attempt of it succeeds. */
  readonly #failedCalls = new WeakMap<AgentRun, ApiCall>();
  /** A sub-agent run again by its node's RetryPolicy: its next model call is the failed call's retry. */
  readonly #retrying = new WeakMap<AgentRun, ApiCall>();
  /** The guardrail verdicts of each run's turn (`openAIModerationMiddleware`'s), for its end; whether one ended it. */
  readonly #guardrails = new WeakMap<AgentRun, { records: GuardrailRecord[]; endedTurn: boolean }>();
  /** Calls whose tool threw, until the node that ran them says what the model was told (`./tool-failures.ts`). */
  readonly #heldFailures = new HeldToolFailures();

  /** Turns of bare model calls waiting for the program's tool loop (shared by the handlers on the same hooks). */
  readonly #bare: BareTurns;

  /** The run whose code made the model call about to start, read in the caller's context (`ignoreLLM`, below). */
  #callerRun: string | undefined;

  /** Records into `hooks`; `options.platform` defaults to `'langchain'`. */
  constructor(hooks: HookRegistry, options: LangChainAdapterOptions = {}) {
    super();
    checkAdapterArguments('new NemoRelayCallbackHandler', 'the first argument', hooks, options);
    // `llmToolSelectorMiddleware` calls its model with `callbacks: []`: only a handler the model itself carries (its
    // `callbacks` option) hears the call, told no parent, or the parent of a structured-output chain no handler
    // heard. LangChain runs each handler in an empty async-local context, but reads its `ignoreLLM` in the caller's,
    // right before calling it: there the config of the graph node running the middleware names the node's run, so
    // the call joins the run that made it instead of being a turn of its own.
    Object.defineProperty(this, 'ignoreLLM', {
      configurable: true,
      get: () => {
        this.#callerRun = undefined;
        this.#guard('ignoreLLM', () => void (this.#callerRun = callerRunId()));
        return false;
      },
      set: () => undefined,
    });
    let shared = sharedByHooks.get(hooks);
    if (shared === undefined) sharedByHooks.set(hooks, (shared = { sessions: new OpenSessions(), pendingApprovals: new Map(), ownAgents: new Map(), pausedAgents: new PausedSubagents(MAX_PENDING_APPROVALS), bareTurns: new BareTurns(), interruptedCalls: new Map() }));
    this.#core = new AdapterCore(hooks, options, options.platform ?? 'langchain', shared.sessions);
    this.#holds = shared.holds ??= new SessionHolds(this.#core, MAX_HELD_SESSIONS);
    this.#pendingApprovals = shared.pendingApprovals;
    this.#ownAgents = shared.ownAgents;
    this.#pausedAgents = shared.pausedAgents;
    this.#interruptedCalls = shared.interruptedCalls;
    this.#bare = shared.bareTurns;
    this.#shared = shared;
  }

  /** Closes the sessions kept open between runs (threads, named sessions) on these hooks, whichever handler ran them; runs under way are not affected. */
  close(): void {
    this.#guard('close', () => {
      // Sub-agents still paused end before the sessions they belong to close.
      this.#pausedAgents.closeAll();
      // A bare turn the program's loop never went on with ends before its session closes.
      this.#bare.endAll();
      // The threads close: no `Command` resumes their interrupted runs through these hooks' sessions any more.
      this.#interruptedCalls.clear();
      this.#holds.releaseAll('closed');
    });
  }

  /** Opens a top-level run, continuing its session when an earlier run of it left it open. */
  #startTopRun(start: Parameters<AdapterCore['startRun']>[0]): AgentRun | undefined {
    // A bare turn still waiting for the program's tool loop in this session ends before this run's turn begins.
    const continues = (sessionId: string) => {
      this.#bare.endSession(sessionId);
      return this.#holds.has(sessionId);
    };
    const run = this.#core.startRun({ ...start, continuesSession: start.parent === undefined ? continues : start.continuesSession });
    if (run?.ownsSession === true) this.#holds.take(run.sessionId);
    return run;
  }

  /** Ends a run's turn; a top-level run of a named session (a thread) leaves it open for the thread's next run. */
  #endRun(run: AgentRun | undefined, status: RunStatus, text?: string, error?: unknown, turnEnd?: Record<string, unknown>): void {
    if (run === undefined || run.ended) return;
    this.#awaitingApproval.delete(run);
    const guarded = this.#guardrails.get(run);
    this.#guardrails.delete(run);
    // A turn a guardrail ended completes with the guardrail's message, which no model said: its end says why.
    if (guarded !== undefined) turnEnd = { ...guardrailTurnEnd(guarded.records, status === 'completed' && guarded.endedTurn), ...turnEnd };
    // A removed handler's run ends its thread: no later run of it will be recorded through this handler.
    const keep = run.ownsSession && run.sessionId !== run.runId && !retired.has(this);
    run.end(status, text, error, { keepSessionOpen: keep, ...(turnEnd === undefined ? {} : { turnEnd }) });
    if (keep) this.#holds.hold(run.sessionId, true);
    const unclaimed = this.#unclaimedCalls.get(run);
    if (keep && status === 'interrupted' && unclaimed !== undefined && unclaimed.length > 0) {
      this.#interruptedCalls.delete(run.sessionId);
      this.#interruptedCalls.set(run.sessionId, unclaimed);
      if (this.#interruptedCalls.size > MAX_PENDING_APPROVALS) this.#interruptedCalls.delete(this.#interruptedCalls.keys().next().value!);
    }
  }

  /**
   * A `Command` resuming a thread goes on with the calls its interrupted run's models asked for and no tool ran: the
   * run does not ask the model again (LangGraph's functional API replays the model's task from the checkpoint), and a
   * tool it runs with a call's arguments (`tool.invoke(toolCall.args)`, the docs' `callTool` task) carries out that
   * call. Any other run of the session starts a new turn: the interrupted run's calls are forgotten.
   */
  #resumeCalls(run: AgentRun, inputs: unknown): void {
    const calls = this.#interruptedCalls.get(run.sessionId);
    if (calls === undefined) return;
    this.#interruptedCalls.delete(run.sessionId);
    if (isResume(inputs)) this.#addUnclaimed(run, calls);
  }

  #guard(label: string, fn: () => void): void {
    this.#core.guard.run(label, fn);
  }

  #agentsOf(run: AgentRun): AgentsOfRun {
    let agents = this.#agents.get(run);
    if (agents === undefined) this.#agents.set(run, (agents = { own: undefined, calledModel: false, handoffs: new Map(), started: 0, resume: undefined }));
    return agents;
  }

  /** A named session's own agent, for its next run (a resumed run starts inside the agent that paused, not the first one). */
  #rememberOwnAgent(sessionId: string, name: string): void {
    this.#ownAgents.delete(sessionId);
    this.#ownAgents.set(sessionId, name);
    if (this.#ownAgents.size > MAX_HELD_SESSIONS) this.#ownAgents.delete(this.#ownAgents.keys().next().value!);
  }

  /**
   * A compiled graph starting as a node of `run` (a subgraph, a `createReactAgent`
   * or `createAgent` added as a node or invoked from one) is an agent. The first one
   * to start before the run called a model or started a sub-agent is the run's own
   * agent (the supervisor the graph starts with, or the graph's only agent), and so
   * is any later run of it, except a run a `Send` started (a fan-out's workers run
   * side by side); any other is a sub-agent of the run, linked to the handoff tool call whose
   * `Command` went to its node, else to the run (a supervisor node routed to it).
   * `undefined` when it is the run's own.
   */
  #agentNode(run: AgentRun, runName: string | undefined, metadata: Loose | undefined, inputs: unknown): { name: string; toolCallId: string; task: string | undefined } | undefined {
    const agents = this.#agentsOf(run);
    const node = nonEmptyString(metadata?.langgraph_node);
    // An unnamed graph runs as LangGraph's default name: its node names it.
    const name = (runName !== undefined && runName !== DEFAULT_GRAPH_NAME ? runName : undefined) ?? node ?? runName ?? 'agent';
    // A `Send` fans out to workers that run side by side, often several of the same agent: none of them is the run's own.
    const sent = isSendTask(metadata);
    if (agents.own === undefined && !agents.calledModel && agents.started === 0 && !sent) {
      agents.own = name;
      if (run.parent === undefined && run.sessionId !== run.runId) this.#rememberOwnAgent(run.sessionId, name);
    }
    if (agents.own === name && !sent) return undefined;
    const handoff = node === undefined ? undefined : takeHandoff(agents.handoffs, node, inputs);
    agents.started += 1;
    return { name, toolCallId: handoff ?? `${run.ids.turn_id}:agent:${agents.started}`, task: sent ? userTextOfInputs(inputs) : undefined };
  }

  /** True when `runId` is a tool the program ran on its own, outside any run (`Node.outsideRun`). */
  #outsideAnyRun(runId: string | undefined): boolean {
    return runId !== undefined && this.#nodes.get(runId)?.outsideRun === true;
  }

  /** The agent run of the nearest ancestor that has one. */
  #runOf(parentRunId: string | undefined): AgentRun | undefined {
    return parentRunId === undefined ? undefined : this.#nodes.get(parentRunId)?.run;
  }

  // @langchain/core 1.x declares (chain, inputs, runId, runType, tags, metadata, runName, parentRunId, extra)
  // but calls (chain, inputs, runId, parentRunId, tags, metadata, runType, runName, extra); both are read.
  /** A root chain run (or one under a tool run, as a sub-agent) starts a turn; nested chains join their parent's. */
  override handleChainStart(
    chain: unknown,
    inputs: unknown,
    runId: string,
    arg3?: unknown,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    arg6?: unknown,
    arg7?: unknown,
  ): void {
    this.#guard('handleChainStart', () => {
      const declaredOrder = isRunId(arg7) && !isRunId(arg3);
      const givenParent = declaredOrder ? (arg7 as string) : isRunId(arg3) ? arg3 : undefined;
      const runName = nonEmptyString(declaredOrder ? arg6 : arg7) ?? nonEmptyString(isRecord(chain) && Array.isArray(chain.id) ? chain.id.at(-1) : undefined);
      // A run inside a tool the program ran on its own (an agent the tool invokes) is a top-level run.
      const parentRunId = this.#outsideAnyRun(givenParent) ? undefined : givenParent;
      const parent = parentRunId === undefined ? undefined : this.#nodes.get(parentRunId);
      if (parentRunId !== undefined && parent === undefined) return; // inside a run we are not recording
      if (parent === undefined && retired.has(this)) return;
      // A middleware's own call LangChain runs with `callbacks: []` (`llmToolSelectorMiddleware`'s selection, a
      // structured-output sequence): no parent, so only a handler LangChain adds to every run hears it. Its model
      // call is the helper sub-agent of the run that made it (`#modelStart`), as a handler on that model records it.
      if (givenParent === undefined && nonEmptyString(metadata?.lc_source) !== undefined) return;
      const namespace = nonEmptyString(metadata?.langgraph_checkpoint_ns);
      // A sub-agent's node run again by its RetryPolicy after a failed model call: the same sub-agent, continued. Its
      // task is its checkpoint namespace (the node and its task id) in the top-level run: each attempt has a parent
      // run of its own.
      const agentTask = namespace === undefined || parent === undefined || parent.kind === 'tool' || !isGraphRun(chain) ? undefined : `${parent.root}|${namespace}`;
      const failed = agentTask === undefined ? undefined : this.#failedAgents.get(agentTask);
      if (failed !== undefined && !failed.run.ended) {
        this.#failedAgents.delete(agentTask!);
        this.#roots.get(parent!.root)?.delete(agentTask!);
        this.#remember(runId, { kind: 'chain', parent: parentRunId, root: parent!.root, run: failed.run, ownsRun: true, task: agentTask });
        const call = this.#failedCalls.get(failed.run);
        if (call !== undefined && !call.settled) this.#retrying.set(failed.run, call);
        return;
      }
      const agent = parent?.run !== undefined && parent.kind !== 'tool' && isGraphRun(chain) ? this.#agentNode(parent.run, runName, metadata, inputs) : undefined;
      if (parent !== undefined && parent.kind !== 'tool' && agent === undefined) {
        const task = namespace === undefined ? undefined : `${parentRunId}|${namespace}`;
        const graphNode = runName !== undefined && metadata?.langgraph_node === runName;
        // A chain a wrapper runs starts one of its attempts; a chain inside one is part of that attempt.
        const attempt = parent.wrapped !== undefined ? { wrapper: parentRunId!, wrapped: parent.wrapped, models: 0 } : parent.attempt;
        const wrapped = isRetryWrapper(chain) ? { slots: 0, ...(attempt === undefined ? {} : { outer: { attempt, base: attempt.models } }) } : undefined;
        const hook = moderationHook(runName);
        const moderation = hook === undefined ? undefined : { hook, inputs };
        this.#remember(runId, { kind: 'chain', parent: parentRunId, root: parent.root, run: parent.run, ownsRun: false, task, name: runName, graphNode, attempt, wrapped, moderation });
        // The node's RetryPolicy runs it again after a failed model call: its next attempt is that call's retry.
        const retried = task === undefined ? undefined : this.#attempts.get(task);
        if (task !== undefined && retried !== undefined) {
          this.#attempts.delete(task);
          this.#roots.get(parent.root)?.delete(task);
          this.#attempts.set(runId, retried);
        }
        return;
      }
      if (parent?.run !== undefined && agent !== undefined) {
        // Another agent of the graph (a worker a supervisor routed to, an agent a handoff went to): a sub-agent of the run.
        // One that paused for approval goes on in its own session when the `Command` resuming the thread resumes it.
        const paused = this.#takePaused(`${parent.run.sessionId}>${agent.name}${agent.task === undefined ? '' : `>${agent.task}`}`, parent.run);
        const run = this.#core.startRun({
          runId,
          agentName: agent.name,
          userMessage: () => (paused === undefined ? userMessageOfInputs(inputs) : ''),
          parent: { run: parent.run, toolCallId: paused?.parent?.toolCallId ?? agent.toolCallId },
          continuesSubagent: paused,
          continuesSession: paused !== undefined,
        });
        this.#remember(runId, { kind: 'chain', parent: parentRunId, root: parent.root, run, ownsRun: run !== undefined, task: agentTask });
        if (run === undefined) return;
        this.#graphAgents.add(run);
        if (agent.task !== undefined) this.#sentTasks.set(run, agent.task);
        // A `Command` resuming the thread resumes the agent that asked: its decisions answer that agent's requests.
        const resume = this.#resumeOf(parent.run);
        if (resume !== undefined) this.#resumeApprovals(run, resume);
        return;
      }
      // A sub-agent run from a tool that paused for approval: the tool runs again on resuming, and so does its agent.
      // A top-level run started as code of another tool call (a sampling handler answering an MCP server's request
      // for a tool call, an AI SDK tool's `execute`) is that call's sub-agent, as a run inside a LangChain tool is.
      const link = parent?.run !== undefined && parent.toolCallId !== undefined ? { run: parent.run, toolCallId: parent.toolCallId } : parent === undefined ? callerToolCall() : undefined;
      const paused = link === undefined ? undefined : this.#takePaused(`${link.run.sessionId}:sub:${link.toolCallId}`, link.run);
      const run = this.#startTopRun({
        runId,
        conversationId: nonEmptyString(metadata?.thread_id) ?? nonEmptyString(metadata?.threadId) ?? nonEmptyString(metadata?.conversation_id),
        agentName: runName,
        model: nonEmptyString(metadata?.ls_model_name),
        provider: nonEmptyString(metadata?.ls_provider),
        // A run resumed by a `Command` has no user message of its own (its request repeats the earlier one).
        userMessage: () => (isResume(inputs) || paused !== undefined ? '' : userMessageOfInputs(inputs)),
        parent: link,
        continuesSubagent: paused,
        continuesSession: paused !== undefined,
      });
      this.#remember(runId, { kind: 'chain', parent: parentRunId, root: parent?.root ?? runId, run, ownsRun: run !== undefined, runnable: !isGraphRun(chain), wrapped: isRetryWrapper(chain) ? { slots: 0 } : undefined });
      if (run === undefined) return;
      if (run.parent === undefined) this.#resumeCalls(run, inputs);
      if (link !== undefined && parent?.unnamedCall === true) this.#unnamedLinks.add(run);
      const own = run.parent === undefined ? this.#ownAgents.get(run.sessionId) : undefined;
      if (own !== undefined) this.#agentsOf(run).own = own;
      // A sub-agent's input is its own: the decisions are in the `Command` that resumed the top-level run.
      this.#resumeApprovals(run, (link === undefined ? undefined : this.#resumeOf(link.run)) ?? inputs);
    });
  }

  /** The root chain run's end closes its turn (as interrupted when a graph interrupt paused it). */
  override handleChainEnd(outputs: unknown, runId: string): void {
    this.#guard('handleChainEnd', () => {
      // `chain.batch(inputs, config, { returnExceptions: true })`: a RunnableSequence ends the run of an input that
      // failed with the error as its output, which is what the program gets for that input. The run failed.
      if (outputs instanceof Error) return this.#chainFailed(outputs, runId);
      const node = this.#take(runId);
      // The calls its tools failed: what the model was told of each is in the node's ToolMessages.
      this.#heldFailures.settle(runId, () => toolMessagesOf(outputs).map(({ message }) => message));
      if (node?.moderation !== undefined) this.#noteGuardrail(node.run, moderationVerdictOfEnd(node.moderation.hook, node.moderation.inputs, outputs));
      // The node that paused for approval ran again with the decisions: the middleware applied them.
      const awaiting = node?.run === undefined ? undefined : this.#awaitingDecisions.get(node.run);
      if (awaiting !== undefined && node?.name === awaiting.node) {
        this.#awaitingDecisions.delete(node.run!);
        awaiting.answer();
      }
      if (node?.run !== undefined && node.kind === 'chain' && (node.graphNode === true || node.name === TOOL_NODE)) this.#answerUnrun(node.run, outputs);
      if (node === undefined || !node.ownsRun || node.run === undefined) return;
      const interrupted = this.#interrupted.delete(node.run);
      this.#endRoot(node, runId, 'interrupted');
      // A graph's state without messages is no answer (its last model text is); a runnable's parsed result is.
      const text = finalTextOfOutputs(outputs) ?? (node.runnable === true ? parsedResultOf(outputs) : undefined);
      if (interrupted) this.#endInterrupted(node.run, text);
      else this.#endRun(node.run, 'completed', text);
    });
  }

  /** Keeps a guardrail's verdict for the end of `run`'s turn. */
  #noteGuardrail(run: AgentRun | undefined, verdict: ModerationVerdict | undefined): void {
    if (run === undefined || verdict === undefined) return;
    const kept = this.#guardrails.get(run);
    if (kept === undefined) this.#guardrails.set(run, { records: [verdict.record], endedTurn: verdict.endedTurn });
    else {
      kept.records.push(verdict.record);
      kept.endedTurn ||= verdict.endedTurn;
    }
  }

  /** A failed chain run: a graph interrupt becomes an approval request; a root run's failure ends its turn. */
  override handleChainError(error: unknown, runId: string): void {
    this.#guard('handleChainError', () => this.#chainFailed(error, runId));
  }

  /** A chain run that failed (with `error`), whether LangChain said so or ended it with the error as its output. */
  #chainFailed(error: unknown, runId: string): void {
    const attempts = this.#attempts.get(runId);
    const node = this.#take(runId);
    // The error of a call its tool failed escaped the node (`handleToolErrors: false`): no ToolMessage told the model.
    this.#heldFailures.settle(runId);
    if (node === undefined || node.run === undefined) return;
    if (node.moderation !== undefined) this.#noteGuardrail(node.run, moderationVerdictOfError(node.moderation.hook, error));
    this.#refuseStructured(node.run, error);
    // A node whose model call failed may be run again by its RetryPolicy (as the same task): the call waits for it,
    // kept with the run's open nodes so that the run's end forgets it.
    if (node.task !== undefined && attempts?.lastFailed === true && !attempts.call.settled) {
      this.#attempts.set(node.task, attempts);
      this.#roots.get(node.root)?.add(node.task);
    }
    const interrupt = isInterrupt(error);
    // A graph node that interrupts (humanInTheLoopMiddleware) fails with GraphInterrupt; the graph itself then ends normally.
    if (interrupt && !this.#interrupted.has(node.run)) {
      this.#interrupted.add(node.run);
      if (this.#firstSeen(error as Loose)) this.#askApprovals(node.run, (error as Loose).interrupts, node.name);
    }
    if (!node.ownsRun) {
      if (node.parent === node.root && !interrupt) this.#nodeOfGraphFailed(node.root, error);
      return;
    }
    this.#interrupted.delete(node.run);
    // A sub-agent whose node failed on a model call waits for the node's RetryPolicy (the same task run again).
    const failedCall = this.#failedCalls.get(node.run);
    if (node.run.parent !== undefined && node.task !== undefined && !interrupt && !isAbort(error) && !isParentCommand(error) && failedCall !== undefined && !failedCall.settled) {
      this.#failedAgents.set(node.task, { run: node.run, error });
      this.#roots.get(node.root)?.add(node.task);
      return;
    }
    this.#endRoot(node, runId, 'interrupted');
    // A handoff to the parent graph (a tool's `Command` with `graph: Command.PARENT`) ends the agent's run: it handed over, it did not fail.
    if (isParentCommand(error) && node.run.parent !== undefined) return this.#endRun(node.run, 'completed');
    // A sub-agent that asked for approval: its session stays open for the run that resumes it (one sub-agent, not two).
    const asked = this.#pendingApprovals.has(this.#approvalKey(node.run)) || this.#askedByTool.delete(node.run);
    if (interrupt && node.run.parent !== undefined && asked) return this.#pause(node.run, error);
    if (interrupt) return this.#endInterrupted(node.run, undefined, error);
    this.#endRun(node.run, isAbort(error) ? 'interrupted' : 'failed', undefined, error);
  }

  /**
   * A node of a top-level graph failed. A node stopped by the graph's abort (the program's signal, or the consumer that
   * left the graph's stream) is followed by the graph's failure, except when the consumer left at a chunk LangGraph had
   * in hand: LangGraph then returns the graph's generator at its `yield` and tells callbacks neither an end nor an
   * error of the graph's run (the answer was already received, so the model ran on after the consumer stopped). The
   * turn ends then, as LangGraph's error would have ended it, unless the graph goes on or a node failed otherwise.
   */
  #nodeOfGraphFailed(root: string, error: unknown): void {
    const top = this.#nodes.get(root);
    if (top === undefined || !top.ownsRun || top.runnable === true) return;
    if (!isAbort(error)) this.#failingGraphs.add(root);
    // A node's own AbortError (its model's signal not aborted), or one cut before its model streamed (a node's
    // `timeout` policy waiting for the response), is the node's failure: a RetryPolicy may run it again.
    else if (this.#streamingSignals.get(root)?.aborted === true && !this.#failingGraphs.has(root)) this.#endLeftGraph(root, error);
  }

  /**
   * Ends a top-level graph run stopped by its abort once the callbacks LangChain tells with the abort have arrived (the
   * model's error, with its text, and the graph's own error when it comes): a later macrotask. A run started under it
   * in the meantime means the graph went on, and the end is called off.
   */
  #endLeftGraph(root: string, error: unknown): void {
    if (this.#leftGraphs.has(root)) return;
    this.#leftGraphs.set(root, setTimeout(() => {
      this.#leftGraphs.delete(root);
      if (this.#nodes.has(root)) this.handleChainError(error, root);
    }, 0));
  }

  /** A chat-model run is one provider attempt (a retry of the API call when the previous attempt under the same parent failed). */
  override handleChatModelStart(
    llm: unknown,
    messages: unknown[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#guard('handleChatModelStart', () => this.#modelStart(llm, runId, parentRunId, Array.isArray(messages) ? messages[0] : [], extraParams, metadata, runName));
  }

  /** A text-completion LLM run is one provider attempt, recorded like a chat-model run with its first prompt. */
  override handleLLMStart(
    llm: unknown,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#guard('handleLLMStart', () => this.#modelStart(llm, runId, parentRunId, Array.isArray(prompts) ? prompts.slice(0, 1) : [], extraParams, metadata, runName));
  }

  #modelStart(llm: unknown, runId: string, givenParent: string | undefined, messages: unknown, extra: Loose | undefined, metadata: Loose | undefined, runName: string | undefined): void {
    const asked = askedModel(llm, metadata);
    const provider = askedProvider(llm, metadata);
    // A middleware's own call LangChain told none of our runs about (its parent, if any, a run we never heard of).
    const unheardParent = nonEmptyString(metadata?.lc_source) !== undefined && (givenParent === undefined || !this.#nodes.has(givenParent));
    const caller = this.#callerRun;
    this.#callerRun = undefined;
    const heardParent = unheardParent && caller !== undefined && this.#nodes.has(caller) ? caller : givenParent;
    // A handler on the middleware's model (`llmToolSelectorMiddleware`'s selector) while `instrumentLangChain`'s is
    // installed: LangChain tells both of the call, and the installed one, which records the run that made it, has it.
    const instrumented = this.#shared.instrumented;
    if (unheardParent && caller !== undefined && heardParent !== caller && instrumented !== undefined && instrumented !== this && instrumented.#nodes.has(caller)) return;
    // A model a tool the program ran on its own calls is a model called on its own.
    const parentRunId = this.#outsideAnyRun(heardParent) ? undefined : heardParent;
    const parentNode = parentRunId === undefined ? undefined : this.#nodes.get(parentRunId);
    if (parentNode !== undefined && parentNode.run === undefined) return; // inside a run we are not recording
    if (parentNode === undefined && retired.has(this)) return;
    let run = parentNode?.run;
    let ownsRun = false;
    let bare = false;
    // A middleware's own model call (`summarizationMiddleware`'s summary; LangChain's middleware tag theirs with
    // `lc_source` in the call's metadata): a helper of the run, not the agent's request or answer. Recorded in
    // the run, its prompt would be a user step of the turn and its answer an agent step; it is a sub-agent named by
    // its source, with its own prompt, answer, model and tokens.
    const source = run === undefined ? undefined : nonEmptyString(metadata?.lc_source);
    if (run !== undefined && source !== undefined) {
      const agents = this.#agentsOf(run);
      // `toolEmulatorMiddleware` answers a tool call with its model's instead of running the tool: that call's
      // sub-agent, the call open while it runs (as a tool that runs an agent), answered by the ToolMessage it makes.
      const emulated = source === TOOL_EMULATION ? this.#takeEmulatedCall(run, messages) : undefined;
      if (emulated === undefined) agents.started += 1;
      else run.toolStart(emulated);
      run = this.#core.startRun({
        runId,
        agentName: source,
        model: asked,
        provider,
        parent: { run, toolCallId: emulated?.id ?? `${run.ids.turn_id}:agent:${agents.started}` },
      });
      if (run === undefined) return;
      ownsRun = true;
    } else if (run === undefined && callerToolCall() !== undefined) {
      // A model called on its own as code of a tool call (a sampling handler answering an MCP server's request for
      // that call): the call's sub-agent, with the model's prompt and answer, not a conversation of its own.
      run = this.#core.startRun({ runId, agentName: runName, model: asked, provider, parent: callerToolCall() });
      if (run === undefined) return;
      ownsRun = true;
    } else if (run === undefined) {
      // A model called on its own is a turn of its own, unless it is the next call of a bare tool loop (`./bare.ts`).
      bare = true;
      run = this.#bare.size > 0 ? this.#bare.continued(chatMessages(messages)) : undefined;
      run ??= this.#startTopRun({ runId, agentName: runName, model: asked, provider });
      if (run === undefined) return;
      ownsRun = true;
    }
    this.#agentsOf(run).calledModel = true;
    // A resumed agent that calls its model before the node that paused ran again was started afresh (LangGraph runs a
    // node its RetryPolicy retried again from its beginning): the decisions never reached the middleware.
    this.#awaitingDecisions.delete(run);
    if (run.model === undefined) run.model = asked;
    if (run.provider === undefined) run.provider = provider;
    // The answers to OpenAI's hosted MCP approval requests go to the provider with these messages (a middleware's own
    // call, such as a summary of the conversation, carries the history, not answers).
    if (source === undefined) for (const answer of providerApprovalAnswersOf(messages)) run.providerApprovalAnswer(answer);
    // A `ToolMessage` the program made itself for a call no tool ran (the functional API's human-in-the-loop how-to
    // answers a call with the reviewer's feedback) reaches no graph node's state: the model's request carries it.
    if (source === undefined && !bare) this.#answerUnrun(run, messages);
    const attemptKey = this.#attemptKeyOf(parentNode, parentRunId ?? runId);
    const call = source !== undefined ? run.newApiCall() : this.#attemptOf(run, attemptKey);
    const params = isRecord(extra?.invocation_params) ? extra.invocation_params : {};
    const model = asked ?? nonEmptyString(params.model) ?? nonEmptyString(params.model_name) ?? run.model;
    call.attemptStart(() => ({ messages: chatMessages(messages), tools: offeredTools(params.tools), model, provider }));
    const signal = isRecord(extra?.options) && isAbortSignal(extra.options.signal) ? extra.options.signal : undefined;
    this.#remember(runId, { kind: 'llm', parent: parentRunId, root: parentNode?.root ?? runId, run, ownsRun, call, bareRequest: bare ? messages : undefined, provider, attemptKey, signal });
    // A model in a plain runnable (a chain) has the run's signal in its options, as a model called on its own has its own.
    if (bare || this.#nodes.get(parentNode?.root ?? runId)?.runnable === true) this.#endOnAbort(runId, signal);
  }

  /**
   * A model called on its own or in a chain and streamed (`model.stream(input, { signal })`,
   * `prompt.pipe(model).pipe(parser).stream(input, { signal })`) whose signal stops it: LangChain leaves the stream's
   * generators suspended and tells callbacks no end, so the signal ends the call, failed with the abort and the text
   * it had handed on, and its turn, interrupted, as LangChain would have told it. (A graph tells callbacks itself.)
   */
  #endOnAbort(runId: string, signal: unknown): void {
    const node = this.#nodes.get(runId);
    if (node === undefined || !isAbortSignal(signal) || signal.aborted) return;
    // The program was shown a chunk before LangChain tells callbacks of it: the stream reads ahead, resuming the model's
    // generator, which then queues the chunk's callback. So the end waits a turn of the event loop, then goes behind
    // the callbacks queued by then (LangChain's background queue runs them in order): the chunks shown are heard first.
    // A chain's run ends after its model's, as LangChain ends them when an error goes up through the chain.
    const end = (): void => {
      const error = abortErrorOf(signal.reason, 'This operation was aborted');
      this.handleLLMError(error, runId);
      if (node.root !== runId) this.handleChainError(error, node.root);
    };
    const stop = (): void => void setTimeout(() => void consumeCallback(end, false), 0);
    signal.addEventListener('abort', stop, { once: true });
    node.unlisten = () => signal.removeEventListener('abort', stop);
  }

  /**
   * Where a model run's attempts are kept: under its parent chain run (the one that runs it again, a middleware, a
   * wrapper around the model), or, inside an attempt of a wrapper around a chain, under the wrapper and the call's
   * place in the attempt (`Wrapped`).
   */
  #attemptKeyOf(parent: Node | undefined, parentKey: string): string {
    // A model the wrapper runs itself is an attempt of one model call, the first (a fallback may be a chain).
    if (parent?.wrapped !== undefined) return slotOf(parentKey, parent.wrapped, 1);
    const attempt = parent?.attempt;
    if (attempt === undefined) return parentKey;
    attempt.models += 1;
    return slotOf(attempt.wrapper, attempt.wrapped, attempt.models);
  }

  /** The API call a model run under `key` (its parent chain run) is an attempt of: the retry of a failed one, else a new call. */
  #attemptOf(run: AgentRun, key: string): ApiCall {
    const previous = this.#attempts.get(key);
    const retrying = this.#retrying.get(run);
    this.#retrying.delete(run);
    const call =
      previous !== undefined && previous.lastFailed && !previous.call.settled ? previous.call : retrying !== undefined && !retrying.settled ? retrying : run.newApiCall();
    this.#attempts.set(key, { call, lastFailed: false });
    return call;
  }

  /** A chunk of a model run's answer: counted, since a merged answer may hold a count each chunk repeated (`responseOfResult`). */
  override handleLLMNewToken(token: string, _index: unknown, runId: string, _parentRunId?: string, _tags?: string[], fields?: { chunk?: unknown }): void {
    this.#guard('handleLLMNewToken', () => {
      const node = this.#nodes.get(runId);
      if (node?.kind !== 'llm') return;
      node.chunks = (node.chunks ?? 0) + 1;
      if (node.chunks === 1 && node.signal !== undefined && node.root !== runId) this.#streamingSignals.set(node.root, node.signal);
      if (typeof token === 'string' && token !== '') node.delivered = (node.delivered ?? '') + token;
      node.servedBy ??= chunkServedBy(fields?.chunk);
    });
  }

  /** Ends the attempt with the model's response (text, tool calls and token counts). */
  override handleLLMEnd(output: unknown, runId: string, parentRunId?: string): void {
    this.#guard('handleLLMEnd', () => {
      const node = this.#take(runId);
      node?.unlisten?.();
      if (node?.call === undefined) return;
      const response = responseOfResult(output, { provider: node.provider, chunks: node.chunks, servedBy: node.servedBy });
      node.call.attemptEnd(response);
      if (node.run !== undefined && this.#failedCalls.get(node.run) === node.call) this.#failedCalls.delete(node.run);
      // Calls whose arguments did not parse never reach a tool: failed with the parser's error, apart from the calls a tool runs.
      const refused = new Set(response.refused.map((invalid) => invalid.call.id));
      for (const { call, error } of response.refused) node.run?.toolRefused(call, { error: new ToolCallRefused(error), text: error }, node.call.ids.api_request_id);
      // The calls the program runs: not the provider's own (a hosted web search), not the refused ones.
      const runnable = localCalls(response.toolCalls).filter((call) => !refused.has(call.id));
      if (node.run !== undefined && runnable.length > 0) {
        this.#lastCalls.set(node.run, runnable);
        this.#addUnclaimed(node.run, runnable);
      }
      const key = node.attemptKey ?? parentRunId ?? runId;
      const attempts = this.#attempts.get(key);
      if (attempts?.call === node.call) this.#attempts.delete(key);
      if (node.ownsRun) {
        this.#endRoot(node, runId, 'interrupted');
        // A bare call whose answer asks for tools: the program's loop runs them and asks again, in this turn.
        const run = node.run;
        if (node.bareRequest !== undefined && run !== undefined && !run.ended && runnable.length > 0) {
          return this.#bare.keep(run, chatMessages(node.bareRequest), runnable, () => this.#endRun(run, 'completed'));
        }
        this.#endRun(node.run, 'completed', response.text);
      }
    });
  }

  /** Ends the attempt as failed; a next attempt under the same parent is its retry. */
  override handleLLMError(error: unknown, runId: string, parentRunId?: string): void {
    this.#guard('handleLLMError', () => {
      const node = this.#take(runId);
      node?.unlisten?.();
      if (node?.call === undefined) return;
      node.call.attemptError(stoppedCallError(error, node), false, deliveredOf(node));
      if (node.run !== undefined) this.#failedCalls.set(node.run, node.call);
      const attempts = this.#attempts.get(node.attemptKey ?? parentRunId ?? runId);
      if (attempts?.call === node.call) attempts.lastFailed = true;
      if (node.ownsRun) {
        this.#endRoot(node, runId, 'interrupted');
        this.#endRun(node.run, isAbort(error) ? 'interrupted' : 'failed', undefined, error);
      }
    });
  }

  /** Starts a tool call in the turn of the run that invoked the tool. */
  override handleToolStart(
    tool: unknown,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.#guard('handleToolStart', () => {
      if (parentRunId === undefined && retired.has(this)) return;
      const given = nonEmptyString(toolCallId);
      // Outside any run: a call of a bare model call's answer the program runs in its loop (`./bare.ts`), else nothing.
      const run = parentRunId === undefined ? (given === undefined ? undefined : this.#bare.claim(given)) : this.#runOf(parentRunId);
      if (run === undefined) {
        // A tool the program ran itself: what runs inside it is recorded as if the program had run it.
        if (parentRunId === undefined || this.#outsideAnyRun(parentRunId)) {
          this.#remember(runId, { kind: 'tool', parent: parentRunId, root: parentRunId === undefined ? runId : this.#nodes.get(parentRunId)!.root, run: undefined, ownsRun: false, outsideRun: true });
        }
        return;
      }
      const name = runName ?? nonEmptyString(isRecord(tool) ? tool.name : undefined) ?? 'tool';
      const claimed = this.#claimCall(run, name, input, given);
      const id = claimed ?? runId;
      // A retry of a call whose attempt failed goes on as that call (`./tool-failures.ts`); any other start opens one.
      if (!this.#heldFailures.retry(run, id)) run.toolStart({ id, name, arguments: input });
      const root = parentRunId === undefined ? runId : this.#nodes.get(parentRunId)!.root;
      this.#remember(runId, { kind: 'tool', parent: parentRunId, root, run, ownsRun: false, toolCallId: id, unnamedCall: claimed === undefined });
    });
  }

  /** Ends the tool call with what the model was given (a `ToolMessage` with status `error` counts as failed; a `Command`'s own `ToolMessage`). */
  override handleToolEnd(output: unknown, runId: string): void {
    this.#guard('handleToolEnd', () => {
      const node = this.#take(runId);
      if (node !== undefined) this.#endRoot(node, runId, 'interrupted'); // a bare loop's tool is a root of its own
      if (node?.run === undefined || node.toolCallId === undefined) return;
      const message = toolMessageOf(output, node.toolCallId);
      // A tool run with the call's arguments returns its output bare, and the program wraps it in the ToolMessage the
      // model reads (`new ToolMessage({ content: observation, tool_call_id })`, as LangGraph's docs write a tool node),
      // whose content for nothing is empty: the model was told `''`, not `null`.
      const result = message !== undefined ? contentText(message.content) : (output ?? '');
      const failed = message !== undefined && message.status === 'error';
      for (const target of handoffTargets(output)) addHandoff(this.#agentsOf(node.run).handoffs, target, node.toolCallId);
      node.run.toolEnd(node.toolCallId, failed ? { result, failed: true, error: reportedToolError(String(result)) } : { result });
    });
  }

  /**
   * Ends the tool call as failed with the thrown error; a tool that called
   * LangGraph's `interrupt()` paused instead: an approval request for the
   * call, which runs again when a `Command` resumes the thread.
   */
  override handleToolError(error: unknown, runId: string): void {
    this.#guard('handleToolError', () => {
      const node = this.#take(runId);
      if (node !== undefined) this.#endRoot(node, runId, 'interrupted'); // a bare loop's tool is a root of its own
      if (node?.run === undefined || node.toolCallId === undefined) return;
      if (!isInterrupt(error)) {
        // Failed with the error (or as the MCP result that made the MCP adapters throw said: `ToolError`, its text);
        // observed as what the model is told, which the node that ran the tool says when it ends (`./tool-failures.ts`).
        const parent = node.parent === undefined ? undefined : this.#nodes.get(node.parent);
        return this.#heldFailures.hold(parent?.kind === 'chain' ? node.parent : undefined, node.run, node.toolCallId, error);
      }
      // An interrupt raised inside an agent the tool ran was asked about there: the tool only paused with it.
      const interrupts = this.#firstSeen(error) && Array.isArray(error.interrupts) ? error.interrupts : [];
      for (const interrupt of interrupts) node.run.approvalRequest(node.toolCallId, textOrJson(isRecord(interrupt) ? interrupt.value : interrupt));
      if (interrupts.length > 0) {
        this.#awaitApproval(node.run, [node.toolCallId]);
        this.#askedByTool.add(node.run);
      }
      node.run.toolEnd(node.toolCallId, { paused: true });
    });
  }

  /**
   * A graph node's answers to calls no tool ran, in the `ToolMessage`s it put in the state (or that a model's request
   * carries, `handleChatModelStart`): `ToolNode`'s error for a tool the agent does not have or arguments that fail the
   * tool's schema, `toolCallLimitMiddleware`'s for a call over its limit (each a failed call with what the model was
   * told), and `createAgent`'s for its `responseFormat` tool (the structured response, the call's result). Without it
   * those calls would have no outcome.
   */
  #answerUnrun(run: AgentRun, outputs: unknown): void {
    const emulated = this.#emulatedCalls.get(run);
    if (emulated !== undefined && emulated.size > 0) {
      for (const { message } of toolMessagesOf(outputs)) {
        const id = String(message.tool_call_id);
        if (!emulated.delete(id)) continue;
        const result = contentText(message.content);
        run.toolEnd(id, message.status === 'error' ? { result, failed: true, error: reportedToolError(String(result)) } : { result });
      }
    }
    const unclaimed = this.#unclaimedCalls.get(run);
    if (unclaimed === undefined || unclaimed.length === 0) return;
    for (const { message, askedAgain } of toolMessagesOf(outputs)) {
      const index = unclaimed.findIndex((call) => call.id === message.tool_call_id);
      if (index < 0) continue;
      const [call] = unclaimed.splice(index, 1);
      const result = contentText(message.content);
      if (message.status === 'error' || askedAgain) {
        run.toolRefused(call!, { error: askedAgain && message.status !== 'error' ? new StructuredOutputRejected(String(result)) : reportedToolError(String(result)), text: result });
        continue;
      }
      run.toolStart(call!);
      run.toolEnd(call!.id, { result });
    }
  }

  /**
   * `createAgent` gave up on its `responseFormat` tool's call (`handleError: false`): the node fails with
   * `StructuredOutputParsingError` (or `MultipleStructuredOutputsError`), naming the tool, and no `ToolMessage`
   * answers the call. That call failed with the error the run throws.
   */
  #refuseStructured(run: AgentRun, error: unknown): void {
    if (!isRecord(error)) return;
    const names = typeof error.toolName === 'string' && Array.isArray(error.errors) ? [error.toolName] : Array.isArray(error.toolNames) ? error.toolNames : [];
    const unclaimed = names.length === 0 ? undefined : this.#unclaimedCalls.get(run);
    if (unclaimed === undefined) return;
    for (const call of unclaimed.filter((candidate) => names.includes(candidate.name))) {
      unclaimed.splice(unclaimed.indexOf(call), 1);
      run.toolRefused(call, { error, text: String(error.message) });
    }
  }

  /**
   * The unclaimed call of `run` that `toolEmulatorMiddleware`'s prompt (`messages`, one human message) names: its
   * tool (`Tool: name`) and arguments (`Arguments: json`). LangChain tells the emulator's model call nothing else of
   * the call (its parent is the tools node). Taken from the unclaimed calls and kept as emulated, for the tools node's
   * ToolMessage to end (`#answerUnrun`). The wording is LangChain's: the middleware tests run the installed one, so a
   * release that rewords it fails there; a prompt that names no call leaves the emulation a sub-agent of the turn.
   */
  #takeEmulatedCall(run: AgentRun, messages: unknown): CallOfTool | undefined {
    const first = Array.isArray(messages) ? messages[0] : undefined;
    const prompt = contentText(isRecord(first) ? first.content : undefined);
    const name = /^Tool: (.+)$/m.exec(prompt)?.[1];
    const args = /^Arguments: (.*)$/m.exec(prompt)?.[1];
    const unclaimed = this.#unclaimedCalls.get(run);
    const index = name === undefined || unclaimed === undefined ? -1 : unclaimed.findIndex((call) => call.name === name && (args === undefined || sameArguments(call.arguments, args)));
    if (index < 0) return undefined;
    const [call] = unclaimed!.splice(index, 1);
    let emulated = this.#emulatedCalls.get(run);
    if (emulated === undefined) this.#emulatedCalls.set(run, (emulated = new Set()));
    emulated.add(call!.id);
    return call;
  }

  #addUnclaimed(run: AgentRun, calls: readonly CallOfTool[]): void {
    let unclaimed = this.#unclaimedCalls.get(run);
    if (unclaimed === undefined) this.#unclaimedCalls.set(run, (unclaimed = []));
    for (const call of calls) if (call.id !== '') unclaimed.push(call);
    // Calls no tool ever runs (the model's answer was the end) must not pile up in a long run.
    while (unclaimed.length > MAX_UNCLAIMED_CALLS) unclaimed.shift();
  }

  /**
   * The model's id of the call a tool run carries out. A tool invoked with the
   * model's tool call (`tool.invoke(toolCall)`, a `ToolNode`) names it; one
   * invoked with the call's arguments (`tool.invoke(toolCall.args)`, the
   * ToolMessage made by the program, as LangGraph's hand-written tool nodes do)
   * does not, and is the oldest unclaimed call of its run with its name and
   * arguments: of parallel workers sharing the run, the one that asked.
   * `undefined` when no call matches (a tool the program called on its own).
   */
  #claimCall(run: AgentRun, name: string, input: unknown, given: string | undefined): string | undefined {
    const unclaimed = this.#unclaimedCalls.get(run);
    const index = unclaimed === undefined ? -1 : given !== undefined ? unclaimed.findIndex((call) => call.id === given) : unclaimed.findIndex((call) => call.name === name && sameArguments(call.arguments, input));
    const [taken] = index >= 0 ? unclaimed!.splice(index, 1) : [];
    return given ?? taken?.id;
  }

  /** Keeps a node of an open run; a new top-level run beyond `MAX_OPEN_RUNS` ends the oldest one. */
  #remember(runId: string, node: Node): void {
    this.#nodes.set(runId, node);
    // A graph that starts another run went on: its node stopped by an abort, or one that failed, was run again (`#nodeOfGraphFailed`).
    const left = this.#leftGraphs.get(node.root);
    if (left !== undefined) {
      clearTimeout(left);
      this.#leftGraphs.delete(node.root);
    }
    if (node.parent === node.root) this.#failingGraphs.delete(node.root);
    const open = this.#roots.get(node.root);
    if (open !== undefined) {
      open.add(runId);
      return;
    }
    this.#roots.set(node.root, new Set([runId]));
    if (this.#roots.size > MAX_OPEN_RUNS) {
      const [oldest] = this.#roots.keys();
      const top = oldest === undefined ? undefined : this.#nodes.get(oldest);
      if (oldest !== undefined) this.#forget(oldest, 'interrupted');
      if (top?.ownsRun) this.#endRun(top.run, 'interrupted', undefined, new AbandonedRunError());
    }
  }

  #take(runId: string): Node | undefined {
    const node = this.#nodes.get(runId);
    this.#nodes.delete(runId);
    if (node !== undefined) this.#roots.get(node.root)?.delete(runId);
    // A model node that ends takes its attempt bookkeeping with it (a last failed attempt leaves some).
    if (node?.kind === 'chain') this.#dropAttempts(runId, node);
    return node;
  }

  /** Forgets the attempts kept under a chain run (and, for a wrapper, under each of its attempts' model calls). */
  #dropAttempts(runId: string, node: Node | undefined): void {
    this.#attempts.delete(runId);
    for (let slot = 1; slot <= (node?.wrapped?.slots ?? 0); slot++) this.#attempts.delete(slotKey(runId, slot));
  }

  /** A top-level run ended: what it left open (sub-agent runs, tools, attempts) ends with it and is forgotten. */
  #endRoot(node: Node, runId: string, status: 'interrupted'): void {
    if (node.root === runId) this.#forget(runId, status);
  }

  #forget(root: string, status: 'interrupted'): void {
    const open = this.#roots.get(root);
    this.#roots.delete(root);
    this.#streamingSignals.delete(root);
    this.#failingGraphs.delete(root);
    clearTimeout(this.#leftGraphs.get(root));
    this.#leftGraphs.delete(root);
    if (open === undefined) return;
    const left = [...open].reverse(); // newest first: a sub-agent ends before the run it belongs to
    for (const id of left) {
      const node = this.#nodes.get(id);
      this.#nodes.delete(id);
      node?.unlisten?.();
      this.#dropAttempts(id, node);
      // A node that never ended told the model nothing: its failed calls end with their errors, before their run does.
      this.#heldFailures.settle(id);
      // A sub-agent whose node failed and was not run again: it ends failed, with its error.
      const failed = this.#failedAgents.get(id);
      this.#failedAgents.delete(id);
      if (failed !== undefined) {
        this.#failedCalls.get(failed.run)?.settle();
        failed.run.end('failed', undefined, failed.error);
      }
      // A model call the run left waiting (no LLM end will come) ends as failed before its run does.
      if (node?.kind === 'llm' && node.call?.attemptOpen === true) node.call.attemptError(abandonedCallError(node), true, deliveredOf(node));
      if (node?.ownsRun && id !== root) node.run?.end(status, undefined, new AbandonedRunError());
    }
  }

  /** The resuming `Command` of the top-level run `run` belongs to, when its own requests did not take it (a sub-agent's are answered). */
  #resumeOf(run: AgentRun): unknown {
    let top = run;
    while (top.parent !== undefined) top = top.parent.run;
    return this.#agentsOf(top).resume;
  }

  /** Where a paused sub-agent waits: an agent of a graph where its approvals do, one a tool ran by its session. */
  #pausedKey(run: AgentRun): string {
    return this.#graphAgents.has(run) ? this.#approvalKey(run) : run.sessionId;
  }

  /** Ends a sub-agent's turn as interrupted for approval, keeping its session open for the run that resumes it. */
  #pause(run: AgentRun, error: unknown): void {
    if (run.ended) return;
    const paused = approvalPause(this.#awaitingApproval.get(run) ?? []);
    this.#awaitingApproval.delete(run);
    run.end(paused.status, undefined, error, { keepSessionOpen: true, turnEnd: paused.turnEnd });
    this.#pausedAgents.keep(this.#pausedKey(run), run);
  }

  /**
   * The paused sub-agent waiting at `key`, when a run resuming the thread starts it again under `parent` (it then
   * goes on in its session); one that is not resumed so closes, and a new sub-agent starts.
   */
  #takePaused(key: string, parent: AgentRun): AgentRun | undefined {
    const paused = this.#pausedAgents.take(key);
    if (paused === undefined) return undefined;
    if (paused.parent?.run.sessionId === parent.sessionId && this.#resumeOf(parent) !== undefined) return paused;
    paused.closeLink();
    return undefined;
  }

  /** True the first time an interrupt is seen: it bubbles out of the agent that raised it through every graph above it. */
  #firstSeen(error: Loose): boolean {
    const interrupts = Array.isArray(error.interrupts) ? error.interrupts.filter(isRecord) : [];
    const seen = this.#askedInterrupts.has(error) || (interrupts.length > 0 && interrupts.every((interrupt) => this.#askedInterrupts.has(interrupt)));
    this.#askedInterrupts.add(error);
    for (const interrupt of interrupts) this.#askedInterrupts.add(interrupt);
    return !seen;
  }

  /**
   * Where a run's approval requests wait for the resuming run: its session, or,
   * for an agent of a graph (a sub-agent whose session is new each turn), its
   * name in its parent's session, and the task a `Send` gave it (parallel
   * workers of one agent each wait for their own decisions). An agent a tool
   * ran for a model's call waits under its session, named by that call, which
   * the resumed tool carries out again: two calls of one tool in one message
   * (two runs of one agent, paused at once) each wait for their own
   * decisions. One that a tool the program ran on its own ran (no model's
   * call: a new run id, so a new session, each time) waits under its name,
   * for the agent the resumed tool starts.
   */
  #approvalKey(run: AgentRun): string {
    if (run.parent === undefined || run.agentName === undefined || (!this.#graphAgents.has(run) && !this.#unnamedLinks.has(run))) return run.sessionId;
    const task = this.#sentTasks.get(run);
    return `${run.parent.run.sessionId}>${run.agentName}${task === undefined ? '' : `>${task}`}`;
  }

  /** Notes the calls `run` asked approval for on it and on the runs above it: each of their turns waits for them. */
  #awaitApproval(run: AgentRun, ids: readonly string[]): void {
    for (let at: AgentRun | undefined = run; at !== undefined; at = at.parent?.run) {
      const awaiting = this.#awaitingApproval.get(at);
      if (awaiting === undefined) this.#awaitingApproval.set(at, [...ids]);
      else awaiting.push(...ids);
    }
  }

  /**
   * Ends the turn of a run a graph interrupt paused: paused for approval when the interrupt asked about tool calls
   * (`humanInTheLoopMiddleware`, a tool's `interrupt()`, in this run or one it ran), interrupted otherwise (an
   * `interrupt()` in a node that is not a tool asks about no call: what it waits for is the program's own value).
   */
  #endInterrupted(run: AgentRun, text?: string, error?: unknown): void {
    const awaiting = this.#awaitingApproval.get(run);
    if (awaiting === undefined || awaiting.length === 0) return this.#endRun(run, 'interrupted', text, error);
    const paused = approvalPause(awaiting);
    this.#endRun(run, paused.status, text, error, paused.turnEnd);
  }

  /** `humanInTheLoopMiddleware`'s interrupts: one approval request per action, joined to the model's tool call by name. */
  #askApprovals(run: AgentRun, interrupts: unknown, node: string | undefined): void {
    if (!Array.isArray(interrupts)) return;
    const pending = this.#lastCalls.get(run) ?? [];
    const asked: Asked[] = [];
    for (const interrupt of interrupts) {
      const value = isRecord(interrupt) && isRecord(interrupt.value) ? interrupt.value : {};
      const actions = Array.isArray(value.actionRequests) ? value.actionRequests : [];
      const interruptId = isRecord(interrupt) ? nonEmptyString(interrupt.id) : undefined;
      for (const [position, action] of actions.entries()) {
        if (!isRecord(action)) continue;
        const match = pending.find((call) => call.name === action.name && !asked.some((a) => a.id === call.id));
        const id = match?.id ?? `${String(action.name)}:${asked.length + 1}`;
        asked.push({ id, call: match, interruptId, position, node });
        run.approvalRequest(id, nonEmptyString(action.description), nonEmptyString(action.name));
      }
    }
    if (asked.length === 0) return;
    this.#awaitApproval(run, asked.map((one) => one.id));
    const key = this.#approvalKey(run);
    this.#pendingApprovals.delete(key);
    this.#pendingApprovals.set(key, asked);
    // Interrupts nobody resumes must not pile up: the oldest are dropped.
    if (this.#pendingApprovals.size > MAX_PENDING_APPROVALS) this.#pendingApprovals.delete(this.#pendingApprovals.keys().next().value!);
  }

  /** The decisions of a resuming `Command`, answered against the requests of the interrupted run. */
  #resumeApprovals(run: AgentRun, inputs: unknown): void {
    const key = this.#approvalKey(run);
    const asked = this.#pendingApprovals.get(key);
    // Not this run's: a sub-agent that asked resumes inside it.
    if (asked === undefined && run.parent === undefined && isResume(inputs)) this.#agentsOf(run).resume = inputs;
    if (asked === undefined || !isRecord(inputs)) return;
    const resume = isRecord(inputs.resume) ? inputs.resume : undefined;
    if (resume === undefined) return;
    // One interrupt is resumed with its value (`{ decisions }`); several at once with a value per interrupt id.
    const decisionOf = (asked: Asked, index: number): unknown => {
      if (Array.isArray(resume.decisions)) return resume.decisions[index];
      const byId = asked.interruptId === undefined ? undefined : resume[asked.interruptId];
      return isRecord(byId) && Array.isArray(byId.decisions) ? byId.decisions[asked.position] : undefined;
    };
    if (!asked.some((one, index) => decisionOf(one, index) !== undefined)) return;
    this.#pendingApprovals.delete(key);
    const answer = () => asked.forEach((one, index) => {
      const { id, call } = one;
      const given = decisionOf(one, index);
      const decision = isRecord(given) ? given : {};
      const approved = decision.type === 'approve' || decision.type === 'edit';
      // An edit runs the call with the person's arguments: the approval records them (the call keeps the model's).
      const edited = decision.type === 'edit' && isRecord(decision.editedAction) ? changedArgs(call?.arguments, decision.editedAction.args) : undefined;
      run.approvalResponse(id, approved, undefined, undefined, undefined, edited);
      if (approved || call === undefined) return;
      // Answered here: no tool runs for it.
      const unclaimed = this.#unclaimedCalls.get(run);
      const taken = unclaimed?.findIndex((other) => other.id === id) ?? -1;
      if (taken >= 0) unclaimed!.splice(taken, 1);
      // A rejected call never runs: its outcome is the ToolMessage the middleware gives the model instead.
      run.toolStart(call);
      run.toolEnd(id, { name: call.name, denied: nonEmptyString(decision.message) ?? `User rejected the tool call for \`${call.name}\` with id ${id}` });
    });
    // Answered when the node that paused runs again and ends (the middleware took the decisions), not before: a resumed
    // agent LangGraph starts afresh never applies them.
    const node = asked[0]?.node;
    if (node === undefined) answer();
    else this.#awaitingDecisions.set(run, { node, answer });
  }
}

/**
 * Records every LangChain and LangGraph run started from here on, without `callbacks`: one handler that LangChain
 * adds to each run (`./global.ts`), as if the program passed it in every call's `callbacks`. A run given a handler
 * in its `callbacks` keeps that one alone. Call it before the runs start, in the async context that starts them (the
 * top level of the program, or of the function that makes them, before its first `await`). Returns the function that
 * removes it: new runs are not recorded, runs under way finish recording, and the sessions kept open between runs
 * (threads) close, as `handler.close()` closes them.
 */
export function instrumentLangChain(hooks: HookRegistry, options: LangChainAdapterOptions = {}): () => void {
  checkAdapterArguments('instrumentLangChain', 'the first argument', hooks, options);
  const logger = options.logger ?? consoleLogger;
  try {
    const handler = new NemoRelayCallbackHandler(hooks, options);
    const remove = addToEveryRun(handler);
    const shared = sharedByHooks.get(hooks)!;
    shared.instrumented = handler;
    let installed = true;
    return () => {
      if (!installed) return;
      installed = false;
      retired.add(handler);
      if (shared.instrumented === handler) shared.instrumented = undefined;
      try {
        remove();
      } catch (error) {
        logger.warn('nemo-relay-hooks: instrumentLangChain could not remove its handler; it records no new run', error);
      }
      handler.close();
    };
  } catch (error) {
    logger.warn('nemo-relay-hooks: instrumentLangChain could not attach to LangChain; nothing is recorded', error);
    return () => undefined;
  }
}

/** What a run knows of the agents that ran in it (`#agentNode`). */
interface AgentsOfRun {
  /** The name of the run's own agent, once a graph node took it. */
  own: string | undefined;
  calledModel: boolean;
  /** Handoff tool calls waiting for their agent to start, by the node their `Command` goes to, oldest first. */
  readonly handoffs: Map<string, Handoff[]>;
  /** Sub-agents started, to name the links of those no handoff started. */
  started: number;
  /** A resuming `Command` whose decisions none of this run's requests took: for the sub-agent that asked. */
  resume: unknown;
}


/** A handoff tool call waiting for the agent its `Command` went to; `goal` is the task a `Send` gave it. */
interface Handoff {
  readonly toolCallId: string;
  readonly goal: string | undefined;
}

/** Handoffs kept per node: calls whose agent never starts (a plain node) must not pile up in a long run. */
const MAX_HANDOFFS_PER_NODE = 256;

/** The nodes a tool's `Command` (a handoff) sends control to: `goto` as a name, names, or `Send`s (with the task each gives). */
function handoffTargets(output: unknown): Array<{ node: string; goal: string | undefined }> {
  if (!isRecord(output) || output.lg_name !== 'Command') return [];
  const goto = Array.isArray(output.goto) ? output.goto : [output.goto];
  const targets: Array<{ node: string; goal: string | undefined }> = [];
  for (const target of goto) {
    const name = typeof target === 'string' ? target : isRecord(target) ? target.node : undefined;
    const goal = isRecord(target) ? userTextOfInputs(target.args) : undefined;
    if (typeof name === 'string' && name !== '' && name !== '__end__') targets.push({ node: name, goal });
  }
  return targets;
}

function addHandoff(handoffs: Map<string, Handoff[]>, target: { node: string; goal: string | undefined }, toolCallId: string): void {
  let waiting = handoffs.get(target.node);
  if (waiting === undefined) handoffs.set(target.node, (waiting = []));
  waiting.push({ toolCallId, goal: target.goal });
  if (waiting.length > MAX_HANDOFFS_PER_NODE) waiting.shift();
}

/**
 * The handoff call that started an agent at `node`: several calls may send
 * to one node at once (parallel handoffs, each a `Send` with its own task),
 * and LangGraph need not start their agents in the calls' order, so the one
 * whose task is the agent's input is taken, else the oldest.
 */
function takeHandoff(handoffs: Map<string, Handoff[]>, node: string, inputs: unknown): string | undefined {
  const waiting = handoffs.get(node);
  if (waiting === undefined) return undefined;
  const goal = waiting.some((handoff) => handoff.goal !== undefined) ? userTextOfInputs(inputs) : undefined;
  const index = Math.max(0, goal === undefined ? 0 : waiting.findIndex((handoff) => handoff.goal === goal));
  const [taken] = waiting.splice(index, 1);
  if (waiting.length === 0) handoffs.delete(node);
  return taken?.toolCallId;
}

/** The name LangGraph's prebuilt `ToolNode` (and `createAgent`'s) runs under. */
const TOOL_NODE = 'tools';

/** `createAgent`'s model node, which calls the model and reads its structured output. */
const MODEL_NODE = 'model_request';

/**
 * The `ToolMessage`s in a node's output: its messages, or those of the updates it returned, a `Command`'s among them
 * (`createAgent` answers a structured output that fails its schema with one that goes back to the model).
 * `askedAgain`: the message came in a `Command` that sends the run back to the model node, which is how `createAgent`
 * refuses its `responseFormat` tool's call (an answer that failed the schema, several structured calls at once): the
 * message says why, and LangChain leaves its status `success`.
 */
function toolMessagesOf(outputs: unknown): Array<{ message: Loose; askedAgain: boolean }> {
  const found: Array<{ message: Loose; askedAgain: boolean }> = [];
  const visit = (value: unknown, depth: number, askedAgain: boolean): void => {
    if (depth > 5) return;
    if (Array.isArray(value)) for (const item of value) visit(item, depth + 1, askedAgain);
    else if (isRecord(value) && typeof value.tool_call_id === 'string') found.push({ message: value, askedAgain });
    else if (isRecord(value) && Array.isArray(value.messages)) visit(value.messages, depth + 1, askedAgain);
    else if (isRecord(value) && value.lg_name === 'Command') visit(value.update, depth + 1, value.goto === MODEL_NODE || (Array.isArray(value.goto) && value.goto.includes(MODEL_NODE)));
    // What LangChain reports of a node that returned a list (of `Command`s): `{ output: [...] }`.
    else if (isRecord(value) && Array.isArray(value.output)) visit(value.output, depth + 1, askedAgain);
  };
  visit(outputs, 0, false);
  return found;
}

/** A tool call an interrupt asked about: its id, the model's call when it was found, and which interrupt's action it is. */
interface Asked {
  readonly id: string;
  readonly call: CallOfTool | undefined;
  readonly interruptId: string | undefined;
  /** Its place among its interrupt's actions (the decisions of a resume by interrupt id are in that order). */
  readonly position: number;
  /** The graph node that paused (the middleware's), when known. */
  readonly node: string | undefined;
}

/** A tool run's input (the arguments object, or their JSON text) against the arguments the model gave its call. */
function sameArguments(args: unknown, input: unknown): boolean {
  return jsonEqual(argumentsObject(args), argumentsObject(input));
}

/**
 * A structured answer `createAgent` refused (it failed the `responseFormat` schema): the message is what the model
 * was told before it was asked again.
 */
class StructuredOutputRejected extends Error {
  override name = 'StructuredOutputRejected';
}

/** Why a run the framework never ended (an abandoned stream, a parent that ended first) was ended by the adapter. */
class AbandonedRunError extends Error {
  override name = 'AbandonedRun';
  constructor() {
    super('the framework never ended this run; the adapter ended it');
  }
}
