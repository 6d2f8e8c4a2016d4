/**
 * The tool call a piece of code runs inside, carried across `await` with
 * `AsyncLocalStorage` (Node, Bun and Deno all provide it). An agent run that
 * starts while a frame is current is that tool call's sub-agent. One store
 * for every adapter, so a run of one framework started inside another
 * framework's tool is linked too.
 *
 * A framework that keeps its own notion of the current call (the Agents SDK
 * makes each function tool call's span current) adds a finder instead of
 * wrapping the tool: asked only where no frame is set, so a frame set inside
 * that call (another framework's tool) stays the innermost.
 *
 * The same for a model call: the adapter that records a provider attempt
 * runs the model's own code inside it, so a recorder nested in that model
 * (`aiSdkMiddleware` on the model an Agents SDK `aisdk()` wraps, or under the
 * AI SDK's own `generateText`) knows the attempt is recorded already.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentRun, ApiCall } from './run.ts';

export interface ToolFrame {
  readonly run: AgentRun;
  readonly toolCallId: string;
}

const frames = new AsyncLocalStorage<ToolFrame | undefined>();
const finders: Array<() => ToolFrame | undefined> = [];

/** The tool call the caller runs inside, if any. */
export function currentToolFrame(): ToolFrame | undefined {
  const frame = frames.getStore();
  if (frame !== undefined) return frame;
  for (const find of finders) {
    const found = find();
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Adds a finder of the current tool call, asked where no frame is set; returns its removal. */
export function addToolFrameFinder(find: () => ToolFrame | undefined): () => void {
  finders.push(find);
  return () => {
    const index = finders.indexOf(find);
    if (index >= 0) finders.splice(index, 1);
  };
}

/**
 * Runs `fn` outside any frame set so far: code of a framework that finds its calls itself (an agent run started inside
 * another framework's tool), whose own calls are then found by its finder, not taken for the outer call.
 */
export function runOutsideToolFrames<T>(fn: () => T): T {
  return frames.getStore() === undefined ? fn() : frames.run(undefined, fn);
}

/** Runs `fn` as code of `frame`'s tool call. */
export function runInToolFrame<T>(frame: ToolFrame, fn: () => T): T {
  return frames.run(frame, fn);
}

const apiCalls = new AsyncLocalStorage<ApiCall>();

/** The model call an adapter is recording around the caller (the model's own code runs inside it), if any. */
export function recordedApiCall(): ApiCall | undefined {
  return apiCalls.getStore();
}

/** Runs `fn`, the model's own code for an attempt of `call`, inside that call. */
export function runInApiCall<T>(call: ApiCall, fn: () => T): T {
  return apiCalls.run(call, fn);
}
