/**
 * Scope handles and the scope stacks they live on.
 *
 * Native keeps one implicit, mutable scope stack per thread, shared by every
 * async context, and `popScope` only succeeds for the handle on top of the
 * *current* stack. Interleaved sessions, concurrent subagents and a parent
 * closed before its child all break that. So every scope gets a stack of its
 * own: it is pushed inside `withScopeStack(ownStack, ...)` with an explicit
 * parent handle, and popped inside the same stack, where it is always on top.
 * Pops can then happen in any order.
 *
 * Native derives an event's `propagation_root_uuid` from the stack that is
 * current when the event is emitted, not from the parent handle. A fresh
 * stack would make every scope its own tree root, so a child's stack is
 * seeded from a propagation context carrying the tree root
 * (`createScopeStackFromPropagation`). This reproduces what one shared stack
 * would have produced: the root is the first Agent scope of the tree, or the
 * top-level stack's implicit root when there is none. Marks and LLM/tool spans
 * under a scope are emitted inside a stack seeded the same way, so they agree
 * even after their parent was popped.
 *
 * @module
 */

import type { Json } from '../src/relay/contract.ts';
import type { NativeBinding, NativeScopeHandle, NativeScopeStack, NativeSpanHandle } from './binding.ts';

/**
 * What the scope's start event carried, kept so a per-session ATIF exporter
 * registered after the push can replay it (native delivers asynchronously,
 * so a subscriber registered right after the push may or may not see it).
 */
export interface ScopeStart {
  name: string;
  category: string;
  attributes: string[];
  input: Json;
  metadata: Json;
  timestampUs: number;
}

/** Internal state behind a contract `ScopeHandle`. */
export class ScopeState {
  /** `null` when native refused the push; children then attach to the nearest live ancestor. */
  readonly native: NativeScopeHandle | null;
  readonly parent: ScopeState | null;
  /** The stack the scope was pushed on, and must be popped on. */
  readonly ownStack: NativeScopeStack | null;
  /** `propagation_root_uuid` of the scope's events. */
  readonly rootUuid: string | null;
  /** Whether the tree root is an Agent scope (otherwise it is an implicit stack root). */
  readonly agentRooted: boolean;
  /** Whether `ownStack` was seeded with `rootUuid` (and can host child emissions). */
  readonly seeded: boolean;
  emitStack: NativeScopeStack | null = null;
  start: ScopeStart | null = null;
  ended = false;

  constructor(
    native: NativeScopeHandle | null,
    parent: ScopeState | null,
    ownStack: NativeScopeStack | null,
    rootUuid: string | null,
    agentRooted: boolean,
    seeded: boolean,
  ) {
    this.native = native;
    this.parent = parent;
    this.ownStack = ownStack;
    this.rootUuid = rootUuid;
    this.agentRooted = agentRooted;
    this.seeded = seeded;
  }

  /** The uuid of the scope, or `undefined` when native refused it. */
  get uuid(): string | undefined {
    return this.native?.uuid;
  }
}

/** Internal state behind a contract `LlmHandle` or `ToolHandle`. */
export class SpanState {
  readonly kind: 'llm' | 'tool';
  readonly native: NativeSpanHandle | null;
  /** The stack the start was emitted in; the end goes to the same one. */
  readonly stack: NativeScopeStack;
  ended = false;

  constructor(kind: 'llm' | 'tool', native: NativeSpanHandle | null, stack: NativeScopeStack) {
    this.kind = kind;
    this.native = native;
    this.stack = stack;
  }
}

/** Arguments of a native `pushScope` after the parent and the timestamp. */
export type PushCall = (parent: NativeScopeHandle | null) => NativeScopeHandle;

/**
 * Creates stacks and runs native calls inside the right one. Every method may
 * throw what native throws; the adapter catches and counts.
 */
export class ScopeStacks {
  readonly #binding: NativeBinding;
  readonly #agentType: number;
  readonly #propagationVersion: number;
  #detached: NativeScopeStack | null = null;

  constructor(binding: NativeBinding) {
    this.#binding = binding;
    this.#agentType = binding.ScopeType.Agent ?? 0;
    let version = 1;
    try {
      const context = binding.captureRootlessPropagationContext();
      if (typeof context?.version === 'number') version = context.version;
    } catch {
      // Version 1 is what 0.9.x uses.
    }
    this.#propagationVersion = version;
  }

  /** Pushes a scope on a stack of its own under `parent` (the nearest live ancestor is used). */
  push(parent: ScopeState | null, scopeType: number, call: PushCall): ScopeState {
    const live = liveAncestor(parent);
    const isAgent = scopeType === this.#agentType;
    if (live === null || live.native === null) {
      const stack = this.#binding.createScopeStack();
      const native = this.#binding.withScopeStack(stack, () => call(null));
      // A top-level Agent scope is its own tree root; anything else sits under the stack's implicit root.
      const rootUuid = isAgent ? native.uuid : native.parentUuid;
      return new ScopeState(native, parent, stack, rootUuid, isAgent, false);
    }
    if (!live.agentRooted && isAgent) {
      // The first Agent scope of a tree becomes its root, as on one shared stack.
      const stack = this.#binding.createScopeStack();
      const native = this.#binding.withScopeStack(stack, () => call(live.native));
      return new ScopeState(native, parent, stack, native.uuid, true, false);
    }
    const stack = this.#seededStack(live.rootUuid, live.native.uuid);
    const native = this.#binding.withScopeStack(stack, () => call(live.native));
    return new ScopeState(native, parent, stack, live.rootUuid, live.agentRooted, live.rootUuid !== null);
  }

  /** Runs `fn` (a popScope) in the stack `state` was pushed on. */
  inOwnStack<T>(state: ScopeState, fn: () => T): T {
    if (state.ownStack === null) return fn();
    return this.#binding.withScopeStack(state.ownStack, fn);
  }

  /**
   * The stack events under `parent` are emitted in, and the native parent
   * handle to pass. Without a live parent, a per-adapter detached stack keeps
   * the thread's implicit stack untouched.
   */
  emitContext(parent: ScopeState | null): { stack: NativeScopeStack; handle: NativeScopeHandle | null } {
    const live = liveAncestor(parent);
    if (live === null || live.native === null) {
      this.#detached ??= this.#binding.createScopeStack();
      return { stack: this.#detached, handle: null };
    }
    if (live.emitStack === null) {
      live.emitStack = live.seeded && live.ownStack !== null ? live.ownStack : this.#seededStack(live.rootUuid, live.native.uuid);
    }
    return { stack: live.emitStack, handle: live.native };
  }

  /** Runs `fn` inside `stack`. */
  run<T>(stack: NativeScopeStack, fn: () => T): T {
    return this.#binding.withScopeStack(stack, fn);
  }

  #seededStack(rootUuid: string | null, parentUuid: string): NativeScopeStack {
    const context = rootUuid === null
      ? { version: this.#propagationVersion, parentUuid }
      : { version: this.#propagationVersion, rootUuid, parentUuid };
    return this.#binding.createScopeStackFromPropagation(context);
  }
}

/** `state` itself when native accepted it, else its nearest ancestor that native accepted. */
function liveAncestor(state: ScopeState | null): ScopeState | null {
  let current = state;
  while (current !== null && current.native === null) current = current.parent;
  return current;
}
