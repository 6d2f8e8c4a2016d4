/**
 * The hook handlers: which recorder call each hook makes, and the fail-open
 * guard around them. A handler never throws at the host: a failure is
 * counted and warned about once per hook kind, and a payload whose getter or
 * Proxy trap throws is handled once more from a plain copy rather than lost.
 *
 * @module
 */

import type { HookName } from '../hooks/names.ts';
import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import { copyToRetry, isSnapshot } from '../shared/snapshot.ts';
import type { HookGate, RecordHook } from './gate.ts';
import type { UnmanagedCalls } from './managed.ts';
import type { LiveRecording } from './recording.ts';
import { nowMicros } from '../shared/clock.ts';
import { hookPayloadOf, type LoosePayload } from './payload.ts';
import type { PluginCounters } from './status.ts';
import { errorMessage } from '../shared/error-text.ts';

export type HookHandlers = Record<HookName, (payload: object) => void>;

/** What each hook records. LLM and tool spans come from the hooks unless managed execution records them. */
function recordingTable(unmanaged: UnmanagedCalls): Record<HookName, RecordHook> {
  return {
    on_session_start: (live, p, ts) => void live.recorder.openSession(p, ts),
    on_session_end: (live, p, ts) => live.recorder.endTurn(p, ts),
    on_session_finalize: (live, p, ts) => live.recorder.closeSession(p, ts),
    on_session_reset: (live, p, ts) => live.recorder.closeSession(p, ts),
    pre_llm_call: (live, p, ts) => void live.recorder.mark('hermes.turn.start', p, ts),
    post_llm_call: (live, p, ts) => void live.recorder.mark('hermes.turn.end', p, ts),
    // With managed execution on, a start hook waits until it is known whether managed execution records the call.
    pre_api_request: (live, p, ts) => {
      if (unmanaged.recordsLlm(live.managed, p, false)) live.recorder.llmStart(p, ts);
      else live.recorder.defer('llm', p, ts ?? nowMicros());
    },
    post_api_request: (live, p, ts) => {
      if (recordsEnd(live, unmanaged, 'llm', p)) live.recorder.llmEnd(p, ts);
    },
    api_request_error: (live, p, ts) => {
      if (recordsEnd(live, unmanaged, 'llm', p)) live.recorder.llmError(p, ts);
    },
    pre_tool_call: (live, p, ts) => {
      if (unmanaged.recordsTool(live.managed, p, false)) live.recorder.toolStart(p, ts);
      else live.recorder.defer('tool', p, ts ?? nowMicros());
    },
    post_tool_call: (live, p, ts) => {
      if (recordsEnd(live, unmanaged, 'tool', p)) live.recorder.toolEnd(p, ts);
    },
    pre_approval_request: (live, p, ts) => void live.recorder.mark('hermes.approval.request', p, ts),
    post_approval_response: (live, p, ts) => void live.recorder.mark('hermes.approval.response', p, ts),
    subagent_start: (live, p, ts) => live.recorder.markSubagentStart(p, ts),
    subagent_stop: (live, p, ts) => live.recorder.markSubagentStop(p, ts),
  };
}

/**
 * Whether an end hook records its call: always without managed execution;
 * with it, unless the call ran managed (which recorded it).
 */
function recordsEnd(live: LiveRecording, unmanaged: UnmanagedCalls, kind: 'llm' | 'tool', payload: LoosePayload): boolean {
  const observed = kind === 'llm' ? unmanaged.recordsLlm(live.managed, payload, true) : unmanaged.recordsTool(live.managed, payload, true);
  if (observed) return true;
  return !live.recorder.recordedByManaged(kind, payload, true);
}

export interface HandlerOptions {
  gate: HookGate;
  unmanaged: UnmanagedCalls;
  counters: PluginCounters;
  logger: Logger;
}

/** One guarded handler per hook, each entering through the gate. */
export function buildHandlers(options: HandlerOptions): HookHandlers {
  const table = recordingTable(options.unmanaged);
  const warned = new Set<string>();
  const handlers = {} as HookHandlers;
  for (const name of Object.keys(table) as HookName[]) {
    const guarded = guard(name, table[name], warned, options);
    handlers[name] = (payload: object) => {
      try {
        options.gate.dispatch(guarded, hookPayloadOf(payload));
      } catch (error) {
        options.counters.errors += 1;
        safeLog(options.logger, 'debug', `NeMo Relay ${name} dispatch failed`, error);
      }
    };
  }
  return handlers;
}

function guard(name: HookName, record: RecordHook, warned: Set<string>, options: HandlerOptions): RecordHook {
  return (live, payload, timestampUs) => {
    try {
      record(live, payload, timestampUs);
    } catch (error) {
      // Most often a getter or a Proxy trap of the payload threw: handle the
      // event once more from a plain copy rather than lose it. A hook queued
      // while the backend started comes here the same way: its copy throws
      // where the payload threw (shared/snapshot.ts, copyToQueue).
      if (!isSnapshot(payload) && retryFromCopy(name, () => record(live, copyToRetry(payload), timestampUs), error, warned, options)) return;
      options.counters.errors += 1;
      // One warning per hook kind; the count keeps growing in status().
      const level = warned.has(name) ? 'debug' : 'warn';
      warned.add(name);
      safeLog(options.logger, level, `NeMo Relay ${name} handling failed (further failures of this hook are logged at debug): ${errorMessage(error)}`);
    }
  };
}

function retryFromCopy(name: HookName, retry: () => void, error: unknown, warned: Set<string>, options: HandlerOptions): boolean {
  try {
    retry();
  } catch {
    return false;
  }
  const key = `${name}:copied`;
  if (!warned.has(key)) {
    warned.add(key);
    safeLog(options.logger, 'warn', `NeMo Relay ${name}: reading the payload failed (${errorMessage(error)}); recorded it from a plain copy, with unreadable fields as "[Unserializable: ...]" (reported once per hook)`);
  }
  return true;
}
