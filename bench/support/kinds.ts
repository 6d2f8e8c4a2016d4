/**
 * The hook kinds the per-event cases time, each as one iteration of hook
 * calls over a pool of prepared payloads (shared by every setup, so no
 * setup pays for building them).
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { consume, median, nowNs, scale, type Subject } from '../harness.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import * as fixtures from './payloads.ts';
import { capturingMemorySetup, type Setup } from './setups.ts';

const POOL = 256;
const TARGET_MS = 100 * scale;

const pool = <T>(make: (i: number) => T): T[] => Array.from({ length: POOL }, (_, i) => make(i));
const ids = pool((i) => fixtures.idsOf('bench-session', i));
const marks = pool((i) => fixtures.preLlmCall(ids[i]!));
const llmPre = pool((i) => fixtures.preApiRequest(ids[i]!, 1, fixtures.SMALL_BODY));
const llmPost = pool((i) => fixtures.postApiRequest(ids[i]!, 1));
const llmPreLarge = pool((i) => fixtures.preApiRequest(ids[i]!, 1, fixtures.LARGE_BODY));
const toolPre = pool((i) => fixtures.preToolCall(ids[i]!, 1));
const toolPost = pool((i) => fixtures.postToolCall(ids[i]!, 1));
const sessionOpen = pool((i) => fixtures.sessionStart(`bench-child-${i}`));
const sessionClose = pool((i) => fixtures.sessionFinalize(`bench-child-${i}`));

export interface Kind {
  id: string;
  label: string;
  /** Events (hooks, ATOF lines) per iteration. */
  events: number;
  step(setup: Setup, i: number): void;
}

export const KINDS: readonly Kind[] = [
  { id: 'mark', label: 'mark (pre_llm_call)', events: 1, step: (s, i) => s.mark(marks[i & 255]!) },
  {
    id: 'llm',
    label: `LLM span (pre+post_api_request, ${JSON.stringify(fixtures.SMALL_BODY).length} B request)`,
    events: 2,
    step: (s, i) => {
      s.llmStart(llmPre[i & 255]!);
      s.llmEnd(llmPost[i & 255]!);
    },
  },
  {
    id: 'llm_8k',
    label: `LLM span (${JSON.stringify(fixtures.LARGE_BODY).length} B / 20-message request)`,
    events: 2,
    step: (s, i) => {
      s.llmStart(llmPreLarge[i & 255]!);
      s.llmEnd(llmPost[i & 255]!);
    },
  },
  {
    id: 'tool',
    label: 'tool span (pre+post_tool_call)',
    events: 2,
    step: (s, i) => {
      s.toolStart(toolPre[i & 255]!);
      s.toolEnd(toolPost[i & 255]!);
    },
  },
  {
    id: 'session',
    label: 'session (on_session_start+on_session_finalize)',
    events: 2,
    step: (s, i) => {
      s.sessionStart(sessionOpen[i & 255]!);
      s.sessionEnd(sessionClose[i & 255]!);
    },
  },
];

/**
 * Iterations for about `TARGET_MS` of work per batch, measured on a warm
 * setup: one throwaway pass first (a process's first flush or file open can
 * take milliseconds), and at least 256 iterations per measurement, so a
 * one-off stall cannot shrink the batches until the drain dominates them.
 */
export async function calibrate(setup: Setup, kind: Kind): Promise<number> {
  let estimate = 0;
  for (let pass = 0; pass < 2; pass++) {
    await setup.open();
    let n = 16;
    let elapsedMs = 0;
    for (;;) {
      const t0 = nowNs();
      for (let i = 0; i < n; i++) kind.step(setup, i);
      await setup.drain();
      elapsedMs = Number(nowNs() - t0) / 1e6;
      if ((elapsedMs >= Math.min(20, TARGET_MS / 4) && n >= 256) || n >= 1 << 22) break;
      n *= 4;
    }
    await setup.close();
    estimate = Math.round((n * TARGET_MS) / Math.max(elapsedMs, 0.001));
  }
  return Math.max(64, estimate);
}

export function subjectFor(setup: Setup, kind: Kind, iters: number): Subject {
  return {
    name: setup.name,
    iters,
    opsPerIter: kind.events,
    before: () => setup.open(),
    run(n) {
      for (let i = 0; i < n; i++) kind.step(setup, i);
      consume(n);
    },
    drain: () => setup.drain(),
    after: () => setup.close(),
  };
}

/**
 * The serialisation floor of a kind: `JSON.stringify` of exactly the ATOF
 * events plugin+memory produces for one iteration (keys already sorted, the
 * event already built), per event. No JS backend writing the same lines
 * can cost less, whatever else it does.
 */
export async function serialisationFloor(dir: string, kind: Kind): Promise<{ ns: number; lineBytes: number }> {
  const events = await capturedEvents(dir, kind);
  const n = Math.max(1000, Math.round(200_000 * scale));
  let bytes = 0;
  for (let warm = 0; warm < 3; warm++) for (let i = 0; i < n; i++) bytes += JSON.stringify(events[i % events.length]).length;
  const samples: number[] = [];
  for (let rep = 0; rep < 7; rep++) {
    const t0 = nowNs();
    for (let i = 0; i < n; i++) bytes += JSON.stringify(events[i % events.length]).length;
    samples.push(Number(nowNs() - t0) / n);
  }
  consume(bytes);
  const lineBytes = Math.round(events.reduce((sum, e) => sum + JSON.stringify(e).length + 1, 0) / events.length);
  return { ns: median(samples), lineBytes };
}


/** The ATOF events plugin+memory produces for one iteration of `kind`, as built objects. */
export async function capturedEvents(dir: string, kind: Kind): Promise<AtofEvent[]> {
  const captured: AtofEvent[] = [];
  const capture = capturingMemorySetup(dir, captured);
  await capture.open();
  captured.length = 0;
  kind.step(capture, 0);
  const events = captured.slice();
  await capture.close();
  return events;
}

/**
 * The serialisation floor as a subject timed beside the others (the same
 * rounds, so machine load hits both alike): `JSON.stringify` of each event
 * of one iteration, per event.
 */
export function floorSubject(events: readonly AtofEvent[], kind: Kind): Subject {
  const iters = Math.max(1000, Math.round(20_000 * scale));
  return {
    name: 'JSON.stringify of its ATOF lines',
    iters,
    opsPerIter: kind.events,
    run(n) {
      let bytes = 0;
      for (let i = 0; i < n; i++) for (let e = 0; e < events.length; e++) bytes += JSON.stringify(events[e]).length;
      consume(bytes);
    },
  };
}

/**
 * The floor with the bytes written: `JSON.stringify` of each event of one
 * iteration and its UTF-8 encoding into a reused buffer, per event. What
 * any JS backend that writes these lines pays at least (the plain floor
 * stops at the JS string); no uuid, clock or file write is included.
 */
export function encodedFloorSubject(events: readonly AtofEvent[], kind: Kind): Subject {
  const iters = Math.max(1000, Math.round(20_000 * scale));
  const buffer = Buffer.alloc(1 << 20);
  return {
    name: 'JSON.stringify + UTF-8 write of its ATOF lines',
    iters,
    opsPerIter: kind.events,
    run(n) {
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        let at = 0;
        for (let e = 0; e < events.length; e++) at += buffer.write(JSON.stringify(events[e]), at);
        bytes += at;
      }
      consume(bytes);
    },
  };
}
