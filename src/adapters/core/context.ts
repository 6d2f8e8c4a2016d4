/**
 * The tool call a piece of code runs inside, carried across `await` with
 * `AsyncLocalStorage` (Node, Bun and Deno all provide it). An agent run that
 * starts while a frame is current is that tool call's sub-agent. One store
 * for every adapter, so a run of one framework started inside another
 * framework's tool is linked too.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentRun } from './run.ts';

export interface ToolFrame {
  readonly run: AgentRun;
  readonly toolCallId: string;
}

const frames = new AsyncLocalStorage<ToolFrame>();

/** The tool call the caller runs inside, if any. */
export function currentToolFrame(): ToolFrame | undefined {
  return frames.getStore();
}

/** Runs `fn` as code of `frame`'s tool call. */
export function runInToolFrame<T>(frame: ToolFrame, fn: () => T): T {
  return frames.run(frame, fn);
}
