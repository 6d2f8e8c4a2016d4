/**
 * Scope handles and the native scope stacks they live on.
 *
 * Native keeps one implicit, mutable scope stack per thread, shared by every
 * async context, and `popScope` only succeeds for the handle on top of the
 * *current* stack. The adapter never uses that shared stack. It keeps its own
 * stacks ("frames"), enters one with `withScopeStack` for every call, always
 * passes explicit parent handles, and mirrors each frame's open scopes in JS.
 * The switch is needed even for marks and spans with an explicit parent:
 * native writes the *current* stack's propagation root on every event, not
 * the parent's (a test pins this).
 *
 * How a frame is entered: native keeps the current stack in an
 * `AsyncLocalStorage` of its own, and `withScopeStack` is a native call that
 * calls back into JS to run that storage, allocating a store each time: it
 * was the adapter's main cost per event (bench/RESULTS.md, "Native's stack
 * switch: entered once per frame"). So a frame is entered with
 * `withScopeStack` once, when it opens: inside that call it captures an
 * `AsyncResource` (which carries native's store for the stack) and returns a
 * Promise that stays pending while the frame has open scopes, which keeps
 * native's store alive. Every later call on the frame runs in
 * `resource.runInAsyncScope`, plain JS that makes the store current again:
 * native sees exactly the stack `withScopeStack` would give it. When the
 * frame's last scope is popped the Promise is settled (native then expires
 * the store) and later calls on the frame (an end of a span whose scope was
 * popped first) go back to `withScopeStack`. A runtime where the resource
 * does not carry the store (checked once, with a probe) uses
 * `withScopeStack` for every call. Managed execution always uses
 * `withScopeStack`: it returns a Promise, for which native keeps the stack
 * active until it settles. A callback the host registered with native that
 * native runs synchronously inside a call sees the async context of the
 * frame's opening, not of the current hook.
 *
 * So a new frame is entered once per push, never just to read its root.
 *
 * How scopes map onto frames:
 *
 * - a top-level scope opens a new frame, so sessions never share a stack and
 *   can interleave freely;
 * - a child goes on its parent's frame while the parent is that frame's top
 *   (the usual, sequential case), so the events are exactly those one native
 *   stack produces, `propagation_root_uuid` and plugin-managed ATIF grouping
 *   included;
 * - a child whose parent is not on top (a concurrent sibling is open above
 *   it, or the parent was already popped) opens a new frame. Its events then
 *   carry that frame's propagation root (the child itself for an Agent scope),
 *   as native gives any scope pushed on a fresh stack;
 * - a pop of a scope that is not on top of its frame (a parent closed before
 *   its child) is deferred, with its timestamp, output and metadata, and
 *   emitted as soon as the scopes above it are popped. Its end event keeps the
 *   requested timestamp; only its delivery is later.
 *
 * Stacks seeded from a propagation context (`createScopeStackFromPropagation`)
 * are used only for a top-level scope that continues a context received from
 * another process (`PushScopeOptions.propagation`): native's plugin host
 * treats an Agent or turn scope at the bottom of such a stack as the root of
 * a separate (remote) trajectory and writes it to its own file, which is
 * exactly that case, and would split one session's ATIF anywhere else.
 *
 * @module
 */

import { createRequire } from 'node:module';
import type { Json } from '../src/backends/native-surface.ts';
import type { NativeBinding, NativePropagationContext, NativeScopeHandle, NativeScopeStack, NativeSpanHandle } from './binding.ts';

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

/** Arguments of a pop waiting for the scopes above it. */
export interface PendingPop {
  output: Json;
  metadata: Json;
  timestampUs: number;
}

/** One native scope stack and, in push order, the scopes open on it. */
export class Frame {
  readonly stack: NativeScopeStack;
  /**
   * uuid of the stack's implicit root, the propagation root of scopes with no
   * Agent below them. Only read when the frame's first scope is not an Agent
   * (an Agent at the bottom stays there until the frame is empty, and is the
   * root of everything above it), so it is only looked up for such frames.
   */
  rootUuid: string | null;
  readonly open: ScopeState[] = [];

  /** The stack continues a received context with a root: every scope on it has that root. */
  readonly receivedRoot: boolean;

  /** Runs a function in native's store for this stack, while the frame is held (see the module comment). */
  resource: StackResource | null = null;
  /** Settles the Promise that keeps native's store for this stack alive. */
  release: (() => void) | null = null;
  /** Its last scope was popped: it is never held again. */
  closed = false;

  constructor(stack: NativeScopeStack, rootUuid: string | null = null, receivedRoot = false) {
    this.stack = stack;
    this.rootUuid = rootUuid;
    this.receivedRoot = receivedRoot;
  }

  get top(): ScopeState | undefined {
    return this.open[this.open.length - 1];
  }

  /**
   * Where the propagation root native gives the next scope pushed here comes
   * from: the outermost open Agent (`self` for an Agent pushed on none), whose
   * uuid is read when first needed (a native getter), else the implicit root.
   */
  rootFor(isAgent: boolean, self: ScopeState): ScopeState | string | null {
    if (this.receivedRoot) return this.rootUuid;
    for (const scope of this.open) if (scope.isAgent) return scope.native !== null ? scope : this.rootUuid;
    return isAgent ? self : this.rootUuid;
  }
}

/** Internal state behind a contract `ScopeHandle`. */
export class ScopeState {
  /** `null` when native refused the push; children then attach to the nearest live ancestor. */
  readonly native: NativeScopeHandle | null;
  readonly parent: ScopeState | null;
  /** The frame the scope was pushed on (and is popped on); `null` when native refused it. */
  readonly frame: Frame | null;
  readonly isAgent: boolean;
  /** The scope whose uuid is the root, or the root itself; see `rootUuid`. */
  #root: ScopeState | string | null = null;
  start: ScopeStart | null = null;
  /** Set when the caller popped the scope while scopes above it were still open. */
  pending: PendingPop | null = null;
  /** The caller popped it (its end may still be pending). */
  ended = false;

  constructor(native: NativeScopeHandle | null, parent: ScopeState | null, frame: Frame | null, isAgent: boolean, rootUuid: string | null) {
    this.native = native;
    this.parent = parent;
    this.frame = frame;
    this.isAgent = isAgent;
    this.#root = rootUuid;
  }

  /** The `propagation_root_uuid` native wrote on the start event (read from the root scope's handle once asked for). */
  get rootUuid(): string | null {
    const root = this.#root;
    if (root === null || typeof root === 'string') return root;
    const uuid = root.native?.uuid ?? null;
    this.#root = uuid;
    return uuid;
  }

  /** Sets where the root comes from (`Frame.rootFor`), right after the push. */
  rootFrom(root: ScopeState | string | null): void {
    this.#root = root;
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
  /** The frame the start was emitted in; the end goes to the same stack. */
  readonly frame: Frame | null;
  /** The start's timestamp (µs): an end is never written at or before it. */
  readonly startUs: number;
  /** The scope the span was started under (its nearest live one), whose root is the span's. */
  readonly scope: ScopeState | null;
  ended = false;

  constructor(kind: 'llm' | 'tool', native: NativeSpanHandle | null, frame: Frame | null, startUs = 0, scope: ScopeState | null = null) {
    this.kind = kind;
    this.native = native;
    this.frame = frame;
    this.startUs = startUs;
    this.scope = scope;
  }
}

/** The native push, given the parent handle to pass. */
export type PushCall = (parent: NativeScopeHandle | null) => NativeScopeHandle;
/** The native pop of one scope. */
export type PopCall = (scope: ScopeState, native: NativeScopeHandle, pop: PendingPop) => void;

/**
 * Creates frames and runs native calls inside the right stack. `push` and
 * `run` may throw what native throws; the adapter catches and counts.
 */
export class ScopeStacks {
  readonly #binding: NativeBinding;
  readonly #agentType: number;
  #detached: Frame | null = null;
  /** `AsyncResource` when it carries native's store on this runtime (probed at the first frame), else null; undefined before. */
  #resources: StackResourceClass | null | undefined = undefined;

  constructor(binding: NativeBinding) {
    this.#binding = binding;
    this.#agentType = binding.ScopeType.Agent ?? 0;
  }

  /**
   * Runs `call` in `frame`'s stack with `withScopeStack` and, where the
   * runtime allows, holds native's store for it (the module comment).
   */
  #hold<T>(frame: Frame, call: () => T): T {
    const Resource = (this.#resources ??= probeResources(this.#binding));
    if (Resource === null) return this.#binding.withScopeStack(frame.stack, call);
    let result: T;
    this.#binding.withScopeStack(frame.stack, () => {
      result = call(); // a throw leaves the frame without a resource: native expires the store
      frame.resource = new Resource('nemo-relay-scope-stack');
      return new Promise<void>((resolve) => {
        frame.release = resolve;
      });
    });
    return result!;
  }

  /**
   * Pushes a top-level scope on a new stack seeded from a received context
   * (native's own `createScopeStackFromPropagation`), or `null` when this
   * binding has no such function (the caller pushes an ordinary top-level scope).
   */
  pushReceived(context: NativePropagationContext, scopeType: number, call: PushCall): ScopeState | null {
    const create = this.#binding.createScopeStackFromPropagation;
    if (typeof create !== 'function') return null;
    const frame = new Frame(create.call(this.#binding, context), context.rootUuid ?? null, context.rootUuid !== undefined);
    const isAgent = scopeType === this.#agentType;
    const native = this.#binding.withScopeStack(frame.stack, () => call(null));
    if (!isAgent && context.rootUuid === undefined) frame.rootUuid = native.parentUuid; // native: no root at all; the nearest is the caller's span
    const state = new ScopeState(native, null, frame, isAgent, null);
    state.rootFrom(frame.rootFor(isAgent, state));
    frame.open.push(state);
    return state;
  }

  /** Pushes a scope under `parent` (the nearest live ancestor), on the parent's frame when it is on top. */
  push(parent: ScopeState | null, scopeType: number, call: PushCall): ScopeState {
    const live = liveAncestor(parent);
    const isAgent = scopeType === this.#agentType;
    const handle = live?.native ?? null;
    const shared = live?.frame !== null && live?.frame !== undefined && live.frame.top === live ? live.frame : null;
    let native: NativeScopeHandle;
    let frame: Frame;
    if (shared !== null) {
      frame = shared;
      native = this.run(frame, () => call(handle));
    } else {
      // A new frame is entered once, with its push: its implicit root is never fetched by itself.
      const created = new Frame(this.#binding.createScopeStack());
      frame = created;
      if (isAgent) {
        native = this.#binding.withScopeStack(created.stack, () => call(handle));
      } else if (handle === null) {
        native = this.#binding.withScopeStack(created.stack, () => call(null));
        created.rootUuid = native.parentUuid; // a scope pushed without a parent hangs off the implicit root
      } else {
        const binding = this.#binding;
        native = this.#binding.withScopeStack(created.stack, () => {
          created.rootUuid = binding.getHandle().uuid;
          return call(handle);
        });
      }
    }
    const state = new ScopeState(native, parent, frame, isAgent, null);
    state.rootFrom(frame.rootFor(isAgent, state));
    frame.open.push(state);
    return state;
  }

  /**
   * Pops `state` now if it is on top of its frame, then every deferred pop it
   * was blocking; otherwise defers it. `pop` must not throw (the adapter
   * counts native failures inside it), so one failure never blocks a frame.
   */
  pop(state: ScopeState, args: PendingPop, pop: PopCall): 'popped' | 'deferred' {
    const frame = state.frame;
    if (frame === null || state.native === null) return 'popped';
    if (frame.top !== state) {
      state.pending = args;
      return 'deferred';
    }
    this.#popTop(frame, state, args, pop);
    for (let next = frame.top; next?.pending; next = frame.top) {
      const pending = next.pending;
      next.pending = null;
      this.#popTop(frame, next, pending, pop);
    }
    return 'popped';
  }

  /**
   * The stack events under `parent` are emitted in, and the native parent
   * handle to pass. Without a live parent, a per-adapter detached stack keeps
   * the thread's implicit stack untouched.
   */
  emitContext(parent: ScopeState | null): { frame: Frame; handle: NativeScopeHandle | null } {
    const live = liveAncestor(parent);
    if (live === null || live.native === null || live.frame === null) return { frame: this.#detachedFrame(), handle: null };
    return { frame: live.frame, handle: live.native };
  }

  /** The per-adapter stack for events without a live parent, held for the adapter's life. */
  #detachedFrame(): Frame {
    let detached = this.#detached;
    if (detached === null) {
      detached = new Frame(this.#binding.createScopeStack());
      const binding = this.#binding;
      this.#hold(detached, () => binding.getHandle());
      this.#detached = detached;
    }
    return detached;
  }

  /**
   * Runs `fn` inside `frame`'s stack: in its held store; else, while scopes
   * are open on it, with `withScopeStack`, holding the store from then on (a
   * frame is held at its second call, not at its opening: a session with
   * nothing between its push and its pop would pay for holding and gain
   * nothing); else with `withScopeStack` alone.
   */
  run<T>(frame: Frame | null, fn: () => T): T {
    if (frame === null) return fn();
    const resource = frame.resource;
    if (resource !== null) return resource.runInAsyncScope(fn);
    return frame.open.length > 0 && !frame.closed ? this.#hold(frame, fn) : this.#binding.withScopeStack(frame.stack, fn);
  }

  /** Runs `fn` inside `frame`'s stack with `withScopeStack` (managed execution: native holds the stack until the Promise settles). */
  runWithScopeStack<T>(frame: Frame, fn: () => T): T {
    return this.#binding.withScopeStack(frame.stack, fn);
  }

  #popTop(frame: Frame, state: ScopeState, args: PendingPop, pop: PopCall): void {
    frame.open.pop();
    const native = state.native;
    if (native !== null) this.run(frame, () => pop(state, native, args));
    if (frame.open.length === 0 && frame !== this.#detached) {
      // Empty: native's store may expire; a late call on the frame (a span's end) uses withScopeStack.
      frame.closed = true;
      const release = frame.release;
      frame.resource = null;
      frame.release = null;
      release?.();
    }
  }
}

/** What the frame keeps of `node:async_hooks`' `AsyncResource`. */
interface StackResource {
  runInAsyncScope<T>(fn: () => T): T;
}
type StackResourceClass = new (type: string) => StackResource;

/**
 * `AsyncResource` when a resource created inside `withScopeStack` makes
 * native's stack current again in `runInAsyncScope` on this runtime
 * (observed on Node, Bun and Deno), else null: every call then uses
 * `withScopeStack`. Each fresh stack has its own implicit root, so the
 * probe compares the top's uuid inside the resource with the one inside
 * `withScopeStack` and outside.
 */
function probeResources(binding: NativeBinding): StackResourceClass | null {
  let release: (() => void) | undefined;
  try {
    const Resource = (createRequire(import.meta.url)('node:async_hooks') as { AsyncResource?: StackResourceClass }).AsyncResource;
    if (typeof Resource !== 'function') return null;
    let expected: string | undefined;
    let resource: StackResource | undefined;
    binding.withScopeStack(binding.createScopeStack(), () => {
      expected = binding.getHandle().uuid;
      resource = new Resource('nemo-relay-scope-stack-probe');
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    const seen = resource?.runInAsyncScope(() => binding.getHandle().uuid);
    return typeof expected === 'string' && seen === expected && binding.getHandle().uuid !== expected ? Resource : null;
  } catch {
    return null;
  } finally {
    release?.();
  }
}

/** `state` itself when native accepted it, else its nearest ancestor that native accepted. */
function liveAncestor(state: ScopeState | null): ScopeState | null {
  let current = state;
  while (current !== null && current.native === null) current = current.parent;
  return current;
}
