/**
 * ATOF files of one story recorded in several processes, each writing its own
 * file: an MCP server's session names the caller's tool call scope as its
 * parent (`continuesCall`), and that scope is in the caller's file. Given
 * together, the server's session is built into the caller's session as one
 * file holding both lines would be (`cat` of the files), so it shows under the
 * tool call as a remote session, and not again on its own: the same tree the
 * two trajectories give (`linkRemoteTrajectories`).
 *
 * A server whose caller came only as a W3C `traceparent` knows the caller's
 * span id, the low 64 bits of its scope's uuid, and names its parent
 * `00000000-0000-0000-<span id>`. That parent is the one scope of the same
 * trace (OTLP's trace id: a scope's `propagation_root_uuid`, else its
 * session's) whose uuid ends in those 64 bits, in any of the files, as OTLP
 * lines the two spans up; none when the trace differs, and none, said, when
 * two scopes of the trace have them.
 *
 * @module
 */

import { spanIdOf, traceIdOf } from '../../export/otlp/ids.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import type { AtofIndex, IndexedSession } from './atof-index.ts';
import type { MovedRoot } from './linked.ts';
import type { RootList } from './model.ts';

/** A streamed ATOF input, whose sessions this rewrites (`OpenedSessions`). */
export interface AtofInput {
  readonly name: string;
  readonly index?: AtofIndex;
  roots: RootList;
  ids: string[];
}

/** A session that names its parent by span id only, left on its own: several scopes of its trace have that span id. */
export interface UnlinkedSession {
  readonly file: string;
  readonly session: string;
  readonly spanId: string;
  readonly trace: string;
  /** How many scopes of the trace have that span id. */
  readonly scopes: number;
}

/** What `linkAtofFiles` did: the sessions it moved, and those it could not tell the parent of. */
export interface AtofLinks {
  readonly moved: MovedRoot[];
  readonly unlinked: UnlinkedSession[];
}

type Streamed = AtofInput & { index: AtofIndex };

interface Held {
  input: Streamed;
  session: IndexedSession;
}

/** Where a waiting session goes: the session holding its parent scope, in `input`; `parent`, when named by span id. */
interface Holder extends Held {
  from: Streamed;
  parent?: { uuid: string; start: AtofEvent | undefined };
}

/** The high 64 bits a parent named by a `traceparent` has: none (the traceparent carries the span id only). */
const SPAN_ID_ONLY = '00000000-0000-0000-';

/**
 * Joins each session of one input that continues a tool call of another's to the session holding that call (through
 * a chain of such sessions, to the top one), rewriting each input's `roots` and `ids`. Returns what moved, for the
 * caller to say so, as `linkRemoteTrajectories` does, and what could not be placed.
 */
export function linkAtofFiles(inputs: AtofInput[]): AtofLinks {
  const streamed = inputs.filter((input): input is Streamed => input.index !== undefined);
  const unlinked: UnlinkedSession[] = [];
  // The session of another file holding the scope each waiting session names as its parent.
  const holderOf = new Map<IndexedSession, Holder>();
  const bySpanId: Held[] = [];
  for (const input of streamed) {
    for (const session of input.index.sessions) {
      if (session.callerScope === undefined) continue;
      for (const other of streamed) {
        const holder = other === input ? undefined : other.index.sessionOfScope(session.callerScope);
        if (holder === undefined) continue;
        holderOf.set(session, { input: other, session: holder, from: input });
        break;
      }
      if (!holderOf.has(session) && session.callerScope.toLowerCase().startsWith(SPAN_ID_ONLY)) bySpanId.push({ input, session });
    }
  }
  const candidates = bySpanId.length === 0 ? new Map<string, SpanScope[]>() : scopesOfSpanId(streamed, bySpanId);
  for (const { input, session } of bySpanId) {
    const found = candidates.get(spanIdOf(session.callerScope!))!.filter((scope) => scope.session !== session && traceOf(scope) === session.trace);
    if (found.length === 1) holderOf.set(session, { input: found[0]!.input, session: found[0]!.session, from: input, parent: { uuid: found[0]!.uuid, start: found[0]!.start } });
    else if (found.length > 1) unlinked.push({ file: input.name, session: session.session, spanId: spanIdOf(session.callerScope!), trace: session.trace, scopes: found.length });
  }
  if (holderOf.size === 0) return { moved: [], unlinked };
  // Each moved session under the top session of its chain (none of a chain that comes back to itself).
  const joined = new Map<IndexedSession, (Held & { parent?: string })[]>();
  const moved: MovedRoot[] = [];
  for (const [session, direct] of holderOf) {
    const seen = new Set([session]);
    let top: Held = direct;
    while (holderOf.has(top.session) && !seen.has(top.session)) {
      seen.add(top.session);
      top = holderOf.get(top.session)!;
    }
    if (seen.has(top.session)) continue;
    joined.set(top.session, [...(joined.get(top.session) ?? []), { input: direct.from, session, ...(direct.parent !== undefined ? { parent: direct.parent.uuid } : {}) }]);
    const start = direct.from.index.eventsOf(session)[0];
    const metadata = isRecord(start?.metadata) ? start.metadata : {};
    const toolCall = nonEmptyString(metadata.parent_tool_call_id) ?? toolCallIdOf(direct.parent?.start) ?? direct.parent?.uuid ?? session.callerScope!;
    moved.push({ from: direct.from.name, session: session.session, into: direct.input.name, shownIn: { file: top.input.name, session: top.session.session }, toolCall });
  }
  const movedSessions = new Set([...joined.values()].flat().map((held) => held.session));
  for (const input of streamed) {
    const kept = input.index.sessions.filter((session) => !movedSessions.has(session));
    input.ids = kept.map((session) => session.session);
    input.roots = {
      length: kept.length,
      at: (position) => {
        const session = kept[position];
        if (session === undefined) return undefined;
        const held = joined.get(session) ?? [];
        const more = held.flatMap((one) => one.input.index.eventsOf(one.session));
        const parents = new Map(held.flatMap((one) => (one.parent === undefined ? [] : [[one.session.rootUuid, one.parent] as const])));
        return input.index.tree(session, more, parents);
      },
    };
  }
  return { moved, unlinked };
}

/** What `view` says of a session it left on its own (`UnlinkedSession`), ids as OTLP and the traceparent write them. */
export function unlinkedText(entry: UnlinkedSession): string {
  return `session ${entry.session} continues span ${entry.spanId} of trace ${traceIdOf(entry.trace)}, and ${entry.scopes} scopes of the trace have that span id: shown on its own, under none of them`;
}

interface SpanScope extends Held {
  uuid: string;
  /** Its start event, read back from its session's lines. */
  start: AtofEvent | undefined;
}

/** The scopes of every input whose span id a waiting session names, by span id (each waiting one has an entry). */
function scopesOfSpanId(streamed: readonly Streamed[], waiting: readonly Held[]): Map<string, SpanScope[]> {
  const wanted = new Set(waiting.map(({ session }) => spanIdOf(session.callerScope!)));
  const found = new Map<string, SpanScope[]>([...wanted].map((spanId) => [spanId, []]));
  for (const input of streamed) {
    for (const { uuid, session } of input.index.scopesWithSpanId(wanted)) {
      const start = input.index.eventsOf(session).find((event) => event.uuid === uuid && event.kind !== 'mark' && event.scope_category === 'start');
      found.get(spanIdOf(uuid))!.push({ input, session, uuid, start });
    }
  }
  return found;
}

/** A scope's trace, by the OTLP rule: its start's `propagation_root_uuid`, else its session's trace. */
function traceOf(scope: SpanScope): string {
  const root = scope.start?.propagation_root_uuid;
  return typeof root === 'string' ? root.toLowerCase() : scope.session.trace;
}

/** The tool call id a tool scope's start names (`category_profile`, else `metadata`). */
function toolCallIdOf(start: AtofEvent | undefined): string | undefined {
  if (start === undefined) return undefined;
  const profile = isRecord(start.category_profile) ? start.category_profile : {};
  const metadata = isRecord(start.metadata) ? start.metadata : {};
  return nonEmptyString(profile.tool_call_id) ?? nonEmptyString(metadata.tool_call_id);
}
