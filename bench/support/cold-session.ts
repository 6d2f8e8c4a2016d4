/**
 * The `cold` case's child: a fresh process that creates the plugin and
 * emits right away, as a CLI agent or a serverless handler does.
 *
 *   <runtime> cold-session.(js|ts) <memory|native> <sessions> <steady-rounds> <dir> [atof-only]
 *
 * Prints one JSON line: the process CPU time (all threads: native's own and
 * any worker's included) per hook from just before `createNemoRelayPlugin`
 * to the end of `shutdown()`, and, when `steady-rounds` > 0, the same
 * figure for that many more rounds of the same sessions through a plugin
 * created once the code is warm (the steady state, in the same process).
 *
 * @module
 */

import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import type { HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { writeFileAtomic } from '../../src/shared/atomic-file.ts';
import * as fixtures from './payloads.ts';

const [backend = 'memory', sessionsRaw = '300', steadyRaw = '0', dir = '.', outputs = 'atof+atif'] = process.argv.slice(2);
const atif = outputs !== 'atof-only';
const sessions = Number(sessionsRaw);
const steadyRounds = Number(steadyRaw);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The tool-loop shape, 13 hooks: a session, one LLM call that asks for two
 * tools, the two tool calls, the LLM call that answers, and the session's end.
 */
function emitSession(hooks: HookRegistry, sessionId: string): number {
  const ids = fixtures.idsOf(sessionId, 0);
  const emit = (name: HookName, payload: fixtures.Payload) => hooks.emit(name, payload as never);
  emit('on_session_start', fixtures.sessionStart(sessionId));
  emit('pre_llm_call', fixtures.preLlmCall(ids));
  emit('pre_api_request', fixtures.preApiRequest(ids, 1, fixtures.SMALL_BODY));
  emit('post_api_request', fixtures.postApiRequest(ids, 1));
  emit('pre_tool_call', fixtures.preToolCall(ids, 1));
  emit('post_tool_call', fixtures.postToolCall(ids, 1));
  emit('pre_tool_call', fixtures.preToolCall(ids, 2));
  emit('post_tool_call', fixtures.postToolCall(ids, 2));
  emit('pre_api_request', fixtures.preApiRequest(ids, 2, fixtures.SMALL_BODY));
  emit('post_api_request', fixtures.postApiRequest(ids, 2));
  emit('post_llm_call', fixtures.postLlmCall(ids));
  emit('on_session_end', fixtures.sessionEnd(ids));
  emit('on_session_finalize', fixtures.sessionFinalize(sessionId));
  return 13;
}

async function round(tag: string): Promise<{ cpuUs: number; hooks: number; atifFiles: number; atofEvents: number; errors: number; texts: string[] }> {
  const out = path.join(dir, tag);
  mkdirSync(out, { recursive: true });
  const start = process.cpuUsage();
  const hooks = new HookRegistry({ logger: quiet });
  const plugin = createNemoRelayPlugin({
    backend: backend as 'memory' | 'native',
    env: {},
    logger: quiet,
    settings: {
      atofEnabled: true,
      atofOutputDirectory: out,
      atofFilename: 'events.jsonl',
      atofMode: 'overwrite',
      atifEnabled: atif,
      atifOutputDirectory: atif ? path.join(out, 'atif') : '',
    },
  });
  plugin.register(hooks);
  let emitted = 0;
  for (let i = 0; i < sessions; i++) emitted += emitSession(hooks, `cold-${tag}-${i}`);
  await plugin.shutdown({ timeoutMs: 120_000 });
  const used = process.cpuUsage(start);
  const status = plugin.status();
  if (status.backend.kind !== backend) throw new Error(`asked for the ${backend} backend, got ${status.backend.kind}: ${status.backend.reason}`);
  const atifDir = path.join(out, 'atif');
  const texts = atif ? readdirSync(atifDir).map((name) => readFileSync(path.join(atifDir, name), 'utf8')) : [];
  const result = {
    cpuUs: used.user + used.system,
    hooks: emitted,
    texts,
    atifFiles: texts.length,
    atofEvents: status.counters.events,
    errors: status.counters.errors,
  };
  rmSync(out, { recursive: true, force: true });
  return result;
}

const cold = await round('cold');

/**
 * What the cold round's trajectory files alone cost, per hook: as many atomic writes of the same texts,
 * nothing else (after the cold round, so the write path is compiled: a floor, not the cold figure).
 * Both backends write these files, so this part of the trajectory side is the same for both.
 */
function filesCpuUs(texts: readonly string[]): number {
  if (texts.length === 0) return 0;
  const floorDir = path.join(dir, 'files-floor');
  mkdirSync(floorDir, { recursive: true });
  const start = process.cpuUsage();
  for (let i = 0; i < texts.length; i++) writeFileAtomic(path.join(floorDir, `s-${i}.json`), texts[i]!);
  const used = process.cpuUsage(start);
  rmSync(floorDir, { recursive: true, force: true });
  return used.user + used.system;
}
const filesUs = filesCpuUs(cold.texts);
let steadyUs = 0;
let steadyHooks = 0;
for (let i = 0; i < steadyRounds; i++) {
  const r = await round(`steady-${i}`);
  // The first warm round still compiles; the later ones are the steady state.
  if (i === 0 && steadyRounds > 1) continue;
  steadyUs += r.cpuUs;
  steadyHooks += r.hooks;
}
console.log(
  JSON.stringify({
    coldUsPerHook: cold.cpuUs / cold.hooks,
    steadyUsPerHook: steadyHooks > 0 ? steadyUs / steadyHooks : null,
    hooks: cold.hooks,
    atifFiles: cold.atifFiles,
    filesUsPerHook: filesUs / cold.hooks,
    errors: cold.errors,
  }),
);
