/**
 * ATOF files of one story recorded in several processes, each writing its own
 * file: an MCP server's session names the caller's tool call scope as its
 * parent (`continuesCall`), and that scope is in the caller's file. Given
 * together, the server's session is built into the caller's session as one
 * file holding both lines would be (`cat` of the files), so it shows under the
 * tool call as a remote session, and not again on its own: the same tree the
 * two trajectories give (`linkRemoteTrajectories`).
 *
 * @module
 */

import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';
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

interface Held {
  input: AtofInput & { index: AtofIndex };
  session: IndexedSession;
}

/**
 * Joins each session of one input that continues a tool call of another's to the session holding that call (through
 * a chain of such sessions, to the top one), rewriting each input's `roots` and `ids`. Returns what moved, for the
 * caller to say so, as `linkRemoteTrajectories` does.
 */
export function linkAtofFiles(inputs: AtofInput[]): MovedRoot[] {
  const streamed = inputs.filter((input): input is Held['input'] => input.index !== undefined);
  if (streamed.length < 2) return [];
  // The session of another file holding the scope each waiting session names as its parent.
  const holderOf = new Map<IndexedSession, Held & { from: Held['input'] }>();
  for (const input of streamed) {
    for (const session of input.index.sessions) {
      if (session.callerScope === undefined) continue;
      for (const other of streamed) {
        const holder = other === input ? undefined : other.index.sessionOfScope(session.callerScope);
        if (holder === undefined) continue;
        holderOf.set(session, { input: other, session: holder, from: input });
        break;
      }
    }
  }
  if (holderOf.size === 0) return [];
  // Each moved session under the top session of its chain (none of a chain that comes back to itself).
  const joined = new Map<IndexedSession, Held[]>();
  const moved: MovedRoot[] = [];
  for (const [session, direct] of holderOf) {
    const seen = new Set([session]);
    let top: Held = direct;
    while (holderOf.has(top.session) && !seen.has(top.session)) {
      seen.add(top.session);
      top = holderOf.get(top.session)!;
    }
    if (seen.has(top.session)) continue;
    joined.set(top.session, [...(joined.get(top.session) ?? []), { input: direct.from, session }]);
    const start = direct.from.index.eventsOf(session)[0];
    const metadata = isRecord(start?.metadata) ? start.metadata : {};
    moved.push({ from: direct.from.name, session: session.session, into: direct.input.name, shownIn: { file: top.input.name, session: top.session.session }, toolCall: nonEmptyString(metadata.parent_tool_call_id) ?? session.callerScope! });
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
        const more = (joined.get(session) ?? []).flatMap((held) => held.input.index.eventsOf(held.session));
        return input.index.tree(session, more);
      },
    };
  }
  return moved;
}
