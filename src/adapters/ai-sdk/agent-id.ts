/**
 * The `id` of the `ToolLoopAgent` whose `generate`/`stream` started a run.
 *
 * The SDK's telemetry events carry `functionId` but not the agent's `id`,
 * so while the adapter is installed `ToolLoopAgent.prototype.generate` and
 * `stream` run inside a frame that names the agent. The first run that
 * starts in the frame is the agent's own and claims the name; runs its tools
 * start later (sub-agents without an id of their own) find it claimed.
 * Restored when the last adapter is uninstalled.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { ToolLoopAgent } from 'ai';

interface AgentFrame {
  readonly id: string;
  claimed: boolean;
}

const frames = new AsyncLocalStorage<AgentFrame>();
type Method = (this: { id?: unknown }, ...args: unknown[]) => unknown;
let installs = 0;
let originals: { generate: Method; stream: Method } | undefined;

/** The agent id of the run starting now, once: later runs in the same agent call get `undefined`. */
export function claimAgentId(): string | undefined {
  const frame = frames.getStore();
  if (frame === undefined || frame.claimed) return undefined;
  frame.claimed = true;
  return frame.id;
}

function framed(original: Method): Method {
  return function (this: { id?: unknown }, ...args: unknown[]): unknown {
    const id = this?.id;
    if (typeof id !== 'string' || id === '') return original.apply(this, args);
    return frames.run({ id, claimed: false }, () => original.apply(this, args));
  };
}

/** Starts naming agent runs; the returned function stops (the last one restores the methods). */
export function trackAgentIds(): () => void {
  const prototype = (ToolLoopAgent as unknown as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  if (prototype === undefined || typeof prototype.generate !== 'function' || typeof prototype.stream !== 'function') return () => {};
  if (installs === 0) {
    originals = { generate: prototype.generate as Method, stream: prototype.stream as Method };
    prototype.generate = framed(originals.generate);
    prototype.stream = framed(originals.stream);
  }
  installs += 1;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    installs -= 1;
    if (installs === 0 && originals !== undefined) {
      prototype.generate = originals.generate;
      prototype.stream = originals.stream;
      originals = undefined;
    }
  };
}
