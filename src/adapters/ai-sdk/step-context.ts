/**
 * The step of an AI SDK run that code runs in, carried across `await` by the
 * SDK itself.
 *
 * `generateText` and `streamText` run each step (and each of its tools and
 * model calls) inside a span of the `ai:telemetry` tracing channel
 * (`runInTracingChannelSpan` / `startTracingChannelContext` in `ai`'s dist),
 * whose `start` channel enters the stores bound to it for as long as the
 * span's code runs. The SDK's telemetry events say nothing of the code a
 * step runs between its model's answer and its tools, such as an
 * `experimental_repairToolCall` function (`parseToolCall`, called inside the
 * step span with only the tool call), so a run that code starts would look
 * like a run of its own. Bound here, the span says which run and step it
 * belongs to: the SDK's async context, not timing, so two runs repairing at
 * once each find their own.
 *
 * The SDK opens spans only on runtimes that report themselves as Node
 * (`process.release.name === 'node'`: Node, Bun and Deno all do) with
 * `process.getBuiltinModule` (Node 20.16 and later); elsewhere nothing is
 * bound and such a run stays a session of its own. Binding makes the SDK
 * trace every span on Node and Deno, which it skips while the channel has no
 * subscriber; Bun's channel never says it has none, so the SDK traces there
 * anyway (its cost: bench/RESULTS.md, "Two adapter features inside every framework run").
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import * as diagnostics from 'node:diagnostics_channel';

/** The SDK's channel (`AI_SDK_TELEMETRY_TRACING_CHANNEL`). */
const CHANNEL = 'ai:telemetry';

interface Span {
  /** The SDK's span type: `generateText`, `streamText`, `step`, `languageModelCall`, `tool`, ... */
  readonly type: string | undefined;
  /** The run the span belongs to (the SDK's `callId`). */
  readonly callId: string | undefined;
  /** A `step` span's step number, from 0. */
  readonly stepNumber: number | undefined;
  /** The span it was opened in. */
  readonly outer: Span | undefined;
}

/** A step of a run: the run's `callId` and the step's number, from 0. */
export interface RunStep {
  readonly callId: string;
  readonly stepNumber: number;
}

const spans = new AsyncLocalStorage<Span>();

function spanOf(message: unknown): Span {
  const { type, event } = (typeof message === 'object' && message !== null ? message : {}) as { type?: unknown; event?: { callId?: unknown; stepNumber?: unknown } };
  return {
    type: typeof type === 'string' ? type : undefined,
    callId: typeof event?.callId === 'string' ? event.callId : undefined,
    stepNumber: typeof event?.stepNumber === 'number' ? event.stepNumber : undefined,
    outer: spans.getStore(),
  };
}

interface StartChannel {
  bindStore(store: AsyncLocalStorage<Span>, transform: (message: unknown) => Span): void;
  unbindStore?(store: AsyncLocalStorage<Span>): boolean;
}

/** The start channel's name (`tracingChannel(CHANNEL).start`'s): one map lookup, where a tracing channel makes five. */
const START_CHANNEL = `tracing:${CHANNEL}:start`;

let binds = 0;
/**
 * The start channel the store is bound to. Bun's `node:diagnostics_channel` holds channels weakly by name, and when a
 * channel nobody holds is collected its finalizer deletes the name, even after a new channel took it. A channel bound
 * here, let go at an uninstall and collected, could so take the next install's channel out of the registry: the SDK's
 * next lookup made one without the store, and a run started in a step (a model call in `prepareStep`) became a session
 * of its own. So every channel the store is ever bound to stays in `kept` for the life of the process, bound or not:
 * none of them is ever finalized, every install binds the same one, and a rebind (`stayBound`) does not free the
 * channel it leaves, whose finalizer would take the name from the new one.
 */
let held: StartChannel | undefined;
const kept: StartChannel[] = [];
let bound = false;

function startChannel(): StartChannel | undefined {
  return (diagnostics as { tracingChannel?: (name: string) => { start?: StartChannel } }).tracingChannel?.(CHANNEL).start;
}

function bind(): void {
  try {
    const start = startChannel();
    start?.bindStore(spans, spanOf);
    if (start !== undefined && !kept.includes(start)) kept.push(start);
    held = start;
    bound = start !== undefined;
  } catch {
    // A runtime without tracing channels: runs inside another run's step stay sessions of their own.
    bound = false;
  }
}

function unbind(): void {
  try {
    held?.unbindStore?.(spans);
  } catch {
    // Nothing to undo.
  }
  bound = false;
}

/**
 * Binds again when the registry no longer gives the held channel for the name: a channel of that name collected
 * before the first install can still have its finalizer pending then, and take the name from the held one once. The
 * run starting now is read as it was bound; the runs after it are followed again.
 */
function stayBound(): void {
  if (!bound) return;
  let current: unknown;
  try {
    current = (diagnostics as { channel?: (name: string) => unknown }).channel?.(START_CHANNEL);
  } catch {
    return;
  }
  if (current === held) return;
  unbind();
  bind();
}

/** Starts following the SDK's spans; the returned function stops (the last one unbinds). */
export function trackSteps(): () => void {
  if (binds === 0) bind();
  binds += 1;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    binds -= 1;
    if (binds === 0) unbind();
  };
}

/**
 * The step of another run that the run `callId` is starting in, outside that step's tools: code the SDK runs as part
 * of the step (a tool call repair, `generateText`'s `prepareStep`). The run's own spans are passed over
 * (`generateText` reports its start inside its own span, `streamText` before it opens one).
 */
export function enclosingStep(callId: string): RunStep | undefined {
  stayBound();
  let span = spans.getStore();
  while (span !== undefined && span.callId === callId) span = span.outer;
  // streamText's step parses the model's stream (and repairs its tool calls) as the stream is read, in the model
  // call's span: part of the step all the same.
  if (span?.type === 'languageModelCall' && span.outer?.type === 'step' && span.outer.callId === span.callId) span = span.outer;
  if (span?.type !== 'step' || span.callId === undefined || span.stepNumber === undefined) return undefined;
  return { callId: span.callId, stepNumber: span.stepNumber };
}
