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
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentRun } from './run.ts';

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
