/**
 * One `instrumentOpenAIAgents` instance: decides which runs to observe,
 * links nested runs to their parents, and keeps only what a live run needs.
 *
 * Memory: a settled run leaves nothing behind but the id of its last response, with its session, for a run chained
 * to it by `previousResponseId` (the newest {@link CHAINED_RESPONSES}). A run that is never settled
 * (its promise abandoned, e.g. a model that never answers) is ended as
 * abandoned when the garbage collector takes it; a run paused for approvals
 * keeps its session open only as long as its `RunState` is reachable.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';
import { newSessionId } from '../../hooks/index.ts';
import { currentToolFrame } from '../core/context.ts';
import { sessionIdFor, type AdapterOptions } from '../core/options.ts';
import { AdapterCore } from '../core/run.ts';
import { prepareAgent, type RunObserver, type RunSource } from './patch.ts';
import { RunRecord, closeHeldLinks, endHandedTo, isRunState, runNames, type HandedTo, type HeldPause, type ParentLink, type RunHost, type TurnBox } from './run.ts';

type Loose = Record<string, unknown>;

interface HeldSession {
  readonly sessionId: string;
  /** The handoff chain the run paused in, outermost first: each agent's link kept open for the run that resumes it. */
  readonly chain: readonly HandedTo[];
  /** Unregisters the paused state's finalizer, whichever object resumes the session. */
  readonly token: object;
  /** A resumed run took the session over (by the state or a copy): the hold is spent. */
  taken: boolean;
}

/** What the adapter holds right now (for tests and `doctor`-style checks). */
export interface AdapterState {
  /** Runs begun and not yet settled. */
  readonly liveRuns: number;
  /** Sessions left open by runs paused for approvals, whose `RunState` is still reachable. */
  readonly heldSessions: number;
  /** Sessions the adapter has open (the core's count). */
  readonly openSessions: number;
}

/**
 * How many conversations chained by `previousResponseId` the adapter can continue: it remembers the session of the
 * last response of this many top-level runs, the newest. A run chained to an older one starts a session of its own.
 */
const CHAINED_RESPONSES = 1000;

export class Adapter implements RunSource, RunHost {
  readonly core: AdapterCore;
  /** The session of the last response of recent top-level runs, by response id, oldest first: see {@link CHAINED_RESPONSES}. */
  readonly #sessionByResponse = new Map<string, string>();
  #disposed = false;
  #liveRuns = 0;
  #heldSessions = 0;
  readonly #held = new WeakMap<object, HeldSession>();
  /**
   * The same holds by session id, for a copy of the paused state
   * (`RunState.fromString` of its `toString()`) resumed while the original
   * is still reachable. An entry lives as long as its state does.
   */
  readonly #heldBySession = new Map<string, HeldSession>();
  /** A paused run's `RunState` collected without a resume: its session closes. */
  readonly #heldRegistry = new FinalizationRegistry<HeldSession>((held) => {
    this.#heldSessions -= 1;
    if (this.#heldBySession.get(held.sessionId) === held) this.#heldBySession.delete(held.sessionId);
    this.core.guard.run('closing an abandoned session', () => {
      closeHeldLinks(held.chain);
      this.core.releaseSession(held.sessionId, 'run_abandoned');
    });
  });
  /** A run collected before it settled: its turn ends as abandoned. */
  readonly #abandoned = new FinalizationRegistry<TurnBox>((box) => {
    this.#liveRuns -= 1;
    const run = box.run;
    if (run !== undefined && !run.ended) {
      this.core.guard.run('ending an abandoned run', () => {
        endHandedTo(box.handedTo, 0, 'interrupted', undefined, undefined, { turn_exit_reason: 'abandoned' });
        run.end('interrupted', undefined, undefined, { turnEnd: { turn_exit_reason: 'abandoned' } });
      });
    }
  });

  constructor(hooks: HookRegistry, options: AdapterOptions) {
    this.core = new AdapterCore(hooks, options, options.platform ?? 'openai-agents');
  }

  dispose(): void {
    this.#disposed = true;
  }

  state(): AdapterState {
    return { liveRuns: this.#liveRuns, heldSessions: this.#heldSessions, openSessions: this.core.openSessionCount };
  }

  newRunId(): string {
    return newSessionId();
  }

  startRun(runner: unknown, agent: unknown, input: unknown, options: Loose | undefined, parent: RunObserver | undefined): RunObserver | undefined {
    if (this.#disposed || !this.core.listening()) return undefined;
    return this.core.guard.run('starting a run', () => {
      prepareAgent(agent);
      let link: ParentLink | undefined = parent instanceof RunRecord ? parent.linkNested() : undefined;
      // A run started inside another framework's tool call (or another adapter's) is that call's sub-agent.
      if (link === undefined) {
        const frame = currentToolFrame();
        if (frame !== undefined && frame.run.core.hooks === this.core.hooks) link = frame;
      }
      let held: HeldPause | undefined;
      if (isRunState(input)) {
        prepareAgent(input._currentAgent);
        held = link === undefined ? this.#resume(input, runner as Loose, options) : undefined;
      }
      const record = new RunRecord(this, runner as Loose, agent, input, options, link, held);
      this.#liveRuns += 1;
      this.#abandoned.register(record, record.box, record);
      return record;
    });
  }

  /** A run settled: nothing of it is kept. */
  settled(record: RunRecord): void {
    if (this.#abandoned.unregister(record)) this.#liveRuns -= 1;
  }

  answeredIn(responseId: string, sessionId: string): void {
    const sessions = this.#sessionByResponse;
    sessions.delete(responseId);
    sessions.set(responseId, sessionId);
    if (sessions.size > CHAINED_RESPONSES) sessions.delete(sessions.keys().next().value!);
  }

  sessionAfter(responseId: string): string | undefined {
    return this.#sessionByResponse.get(responseId);
  }

  /** A paused run's session, and the links of the chain it paused in, stay open for the run that resumes `state`. */
  hold(state: object, sessionId: string, chain: readonly HandedTo[]): void {
    const held: HeldSession = { sessionId, chain, token: {}, taken: false };
    this.#held.set(state, held);
    this.#heldBySession.set(sessionId, held);
    this.#heldRegistry.register(state, held, held.token);
    this.#heldSessions += 1;
  }

  /** The session (and chain) a resumed state continues, taken over from its paused run: the state itself, or a copy of it. */
  #resume(state: Loose, runner: Loose, options: Loose | undefined): HeldPause | undefined {
    let held = this.#held.get(state);
    if (held === undefined) {
      const names = runNames(runner, state, options);
      const sessionId = names.runId === undefined && names.conversationId === undefined ? undefined : sessionIdFor(this.core.options, { runId: names.runId ?? '', conversationId: names.conversationId }, this.core.guard);
      held = sessionId === undefined ? undefined : this.#heldBySession.get(sessionId);
    }
    if (held === undefined || held.taken) return undefined;
    held.taken = true;
    this.#held.delete(state);
    if (this.#heldBySession.get(held.sessionId) === held) this.#heldBySession.delete(held.sessionId);
    if (this.#heldRegistry.unregister(held.token)) this.#heldSessions -= 1;
    return { sessionId: held.sessionId, chain: held.chain };
  }
}
