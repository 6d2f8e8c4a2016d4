/**
 * The memory relay's trajectory worker: a `node:worker_threads` entry
 * (Node, Bun and Deno all have it), started by `atif-offload.ts` on the
 * first `exportJson()` of the process.
 *
 * It owns one `AtifBuilder` per session: each export request brings what
 * the session recorded since its previous export (runs of ATOF lines, or
 * event objects), which are parsed once and kept, so a partial write and
 * then the final one convert the whole session but never parse a line
 * twice; the reply is the trajectory's text. A session is forgotten when
 * its exporter is deregistered. What the main thread gets back is what
 * `AtifBuilder.toJson()` writes there, since it is the same builder fed the
 * same events.
 *
 * @module
 */

import { parentPort } from 'node:worker_threads';
import { AtifBuilder, type AtifBuilderOptions } from '../../formats/atif/builder.ts';
import { parseLineRun, type TrajectoryEntry } from '../session-trajectories.ts';

/** What the main thread asks. */
export type TrajectoryRequest =
  | {
      kind: 'export';
      id: number;
      session: number;
      /** The session's builder options, with its first request only. */
      options?: AtifBuilderOptions;
      /** What the session recorded since its previous request. */
      entries: TrajectoryEntry[];
    }
  | { kind: 'forget'; session: number };

/** The answer to an export request: the trajectory's text, or why the builder failed (the session is forgotten then). */
export type TrajectoryReply = { id: number; json: string } | { id: number; error: string };

const builders = new Map<number, AtifBuilder>();

function answer(request: TrajectoryRequest): TrajectoryReply | null {
  if (request.kind === 'forget') {
    builders.delete(request.session);
    return null;
  }
  try {
    let builder = builders.get(request.session);
    if (builder === undefined) {
      if (request.options === undefined) throw new Error(`the worker does not know session ${request.session}`);
      builders.set(request.session, (builder = new AtifBuilder(request.options)));
    }
    for (const entry of request.entries) {
      if (typeof entry !== 'string') {
        builder.add(entry);
        continue;
      }
      const events = parseLineRun(entry);
      for (let i = 0; i < events.length; i++) builder.add(events[i]!);
    }
    return { id: request.id, json: builder.toJson() };
  } catch (error) {
    // Half-fed, the builder is no use: the main thread builds this session itself from now on.
    builders.delete(request.session);
    return { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
}

const port = parentPort;
port?.on('message', (request: TrajectoryRequest) => {
  const reply = answer(request);
  if (reply !== null) port.postMessage(reply);
});
