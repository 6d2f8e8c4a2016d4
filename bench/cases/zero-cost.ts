/**
 * Zero cost: what the 15 hooks cost a host when nobody subscribes.
 *
 * Two comparisons, each timed interleaved in this one process:
 * - one unsubscribed `emit(name, thunk)` against one bare `Map.get(name)`
 *   (the floor any name-keyed registry pays), names cycling through all 15;
 * - an agent loop that emits all 15 hooks per step against its hook-free
 *   twin. The step does the CPU work a host does around one LLM call and
 *   one tool call (see `agent-step.ts`), so the ratio says what the hook
 *   sites cost in a real loop; the per-site overhead in ns is reported too,
 *   since it does not depend on how heavy the step is.
 *
 * Every payload thunk counts its calls; with nobody subscribed the count
 * must stay 0.
 *
 * @module
 */

import { HOOK_NAMES, type HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createAgentState, agentStep, stepIds, type AgentState } from '../support/agent-step.ts';
import { CaseReport, consume, figure, interleave, iterations, ratio, rowOf, type Subject } from '../harness.ts';

const report = new CaseReport('zero-cost', 'Zero cost: unsubscribed hooks');
const hooks = new HookRegistry();
const names: readonly HookName[] = HOOK_NAMES;
const table = new Map<string, readonly unknown[] | null>(HOOK_NAMES.map((name) => [name, null]));

let thunkCalls = 0;
const constantThunk = () => {
  thunkCalls += 1;
  return { session_id: 's' };
};

// ------------------------------------------------------------------ micro: one emit vs one Map.get

const MICRO = iterations(3_000_000, 1000);

const emptyLoop: Subject = {
  name: 'empty loop',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

const mapGet: Subject = {
  name: 'Map.get(name) !== null',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      if (table.get(names[k]!) !== null) acc += 1;
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

const emitConstant: Subject = {
  name: 'emit(name, thunk), no subscriber',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      hooks.emit(names[k]!, constantThunk);
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

const emitClosure: Subject = {
  name: 'emit(name, () => ({...locals})), no subscriber',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const turn = i;
      hooks.emit(names[k]!, () => {
        thunkCalls += 1;
        return { session_id: 's', turn_id: `t${turn}` };
      });
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

const hasGuard: Subject = {
  name: 'has(name), no subscriber',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      if (hooks.has(names[k]!)) acc += 1;
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

/** `hooks.hook(name)` kept by the host; each site reads `.active` before building anything. */
const bound = HOOK_NAMES.map((name) => hooks.hook(name));

const boundActive: Subject = {
  name: 'bound hook: if (hook.active) hook.emit({...}), no subscriber',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const hook = bound[k]!;
      if (hook.active) hook.emit({ session_id: 's', turn_id: `t${i}` } as never);
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

const boundEmit: Subject = {
  name: 'bound hook: hook.emit(thunk), no subscriber',
  iters: MICRO,
  run(n) {
    let acc = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      bound[k]!.emit(constantThunk as never);
      acc += k;
      k = k === 14 ? 0 : k + 1;
    }
    consume(acc);
  },
};

// ------------------------------------------------------------------ the agent loop, with and without hooks

// Short batches, many rounds: each round's pair runs close together in time, so the per-round ratios see the same load.
const STEPS = iterations(2_000, 100);
const plainState = createAgentState();
const controlState = createAgentState();
const hookedState = createAgentState();

const plainLoop: Subject = {
  name: 'agent loop, no hook code',
  iters: STEPS,
  run(n) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += agentStep(plainState, i, stepIds(plainState, i)).resultChars;
    consume(acc);
  },
};

/** An identical copy of the hook-free loop: its ratio to the original is the measurement's noise floor. */
const controlLoop: Subject = {
  name: 'agent loop, no hook code (identical copy, A/A control)',
  iters: STEPS,
  run(n) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += agentStep(controlState, i, stepIds(controlState, i)).resultChars;
    consume(acc);
  },
};

const hookedLoop: Subject = {
  name: 'agent loop, 15 emits per step, no subscriber',
  iters: STEPS,
  run(n) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += hookedStep(hookedState, i);
    consume(acc);
  },
};

/** The same step with the 15 hook sites a host has, each with a lazy payload over the step's locals. */
function hookedStep(state: AgentState, i: number): number {
  const ids = stepIds(state, i);
  const session_id = state.sessionId;
  const turn_id = ids.turnId;
  const api_request_id = ids.apiRequestId;
  const model = state.model;
  hooks.emit('on_session_start', () => (thunkCalls++, { session_id, model, platform: 'cli' }));
  hooks.emit('pre_llm_call', () => (thunkCalls++, { session_id, turn_id, model, user_message: state.lastUserMessage, conversation_history: state.messages }));
  hooks.emit('pre_api_request', () => (thunkCalls++, { session_id, turn_id, api_request_id, model, provider: 'openai', request: { body: state.lastRequest } }));
  const step = agentStep(state, i, ids);
  hooks.emit('post_api_request', () => (thunkCalls++, { session_id, turn_id, api_request_id, model, response: step.response, usage: step.usage }));
  hooks.emit('api_request_error', () => (thunkCalls++, { session_id, turn_id, api_request_id, error: { type: 'none' } }));
  const tool_call_id = step.toolCallId;
  hooks.emit('pre_tool_call', () => (thunkCalls++, { session_id, turn_id, tool_call_id, tool_name: step.toolName, args: step.toolArgs }));
  hooks.emit('pre_approval_request', () => (thunkCalls++, { turn_id, tool_call_id, command: step.toolName, surface: 'cli' }));
  hooks.emit('post_approval_response', () => (thunkCalls++, { turn_id, tool_call_id, choice: 'once' }));
  hooks.emit('post_tool_call', () => (thunkCalls++, { session_id, turn_id, tool_call_id, tool_name: step.toolName, result: step.toolResult, status: 'ok' }));
  hooks.emit('subagent_start', () => (thunkCalls++, { parent_session_id: session_id, child_session_id: `${session_id}:child` }));
  hooks.emit('subagent_stop', () => (thunkCalls++, { parent_session_id: session_id, child_session_id: `${session_id}:child`, child_status: 'ok' }));
  hooks.emit('post_llm_call', () => (thunkCalls++, { session_id, turn_id, assistant_response: step.assistantText }));
  hooks.emit('on_session_end', () => (thunkCalls++, { session_id, turn_id, completed: true }));
  hooks.emit('on_session_reset', () => (thunkCalls++, { session_id, reason: 'none' }));
  hooks.emit('on_session_finalize', () => (thunkCalls++, { session_id, reason: 'none' }));
  return step.resultChars;
}

const guardedState = createAgentState();

const guardedLoop: Subject = {
  name: 'agent loop, 15 has()-guarded emits per step, no subscriber',
  iters: STEPS,
  run(n) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += guardedStep(guardedState, i);
    consume(acc);
  },
};

/** The other idiom: `if (hooks.has(name)) hooks.emit(name, payload)`, no closure allocated per site. */
function guardedStep(state: AgentState, i: number): number {
  const ids = stepIds(state, i);
  const session_id = state.sessionId;
  const turn_id = ids.turnId;
  const api_request_id = ids.apiRequestId;
  const model = state.model;
  if (hooks.has('on_session_start')) hooks.emit('on_session_start', { session_id, model, platform: 'cli' });
  if (hooks.has('pre_llm_call')) hooks.emit('pre_llm_call', { session_id, turn_id, model, user_message: state.lastUserMessage, conversation_history: state.messages });
  if (hooks.has('pre_api_request')) hooks.emit('pre_api_request', { session_id, turn_id, api_request_id, model, provider: 'openai', request: { body: state.lastRequest } });
  const step = agentStep(state, i, ids);
  if (hooks.has('post_api_request')) hooks.emit('post_api_request', { session_id, turn_id, api_request_id, model, response: step.response, usage: step.usage });
  if (hooks.has('api_request_error')) hooks.emit('api_request_error', { session_id, turn_id, api_request_id, error: { type: 'none' } });
  const tool_call_id = step.toolCallId;
  if (hooks.has('pre_tool_call')) hooks.emit('pre_tool_call', { session_id, turn_id, tool_call_id, tool_name: step.toolName, args: step.toolArgs });
  if (hooks.has('pre_approval_request')) hooks.emit('pre_approval_request', { turn_id, tool_call_id, command: step.toolName, surface: 'cli' });
  if (hooks.has('post_approval_response')) hooks.emit('post_approval_response', { turn_id, tool_call_id, choice: 'once' });
  if (hooks.has('post_tool_call')) hooks.emit('post_tool_call', { session_id, turn_id, tool_call_id, tool_name: step.toolName, result: step.toolResult, status: 'ok' });
  if (hooks.has('subagent_start')) hooks.emit('subagent_start', { parent_session_id: session_id, child_session_id: `${session_id}:child` });
  if (hooks.has('subagent_stop')) hooks.emit('subagent_stop', { parent_session_id: session_id, child_session_id: `${session_id}:child`, child_status: 'ok' });
  if (hooks.has('post_llm_call')) hooks.emit('post_llm_call', { session_id, turn_id, assistant_response: step.assistantText });
  if (hooks.has('on_session_end')) hooks.emit('on_session_end', { session_id, turn_id, completed: true });
  if (hooks.has('on_session_reset')) hooks.emit('on_session_reset', { session_id, reason: 'none' });
  if (hooks.has('on_session_finalize')) hooks.emit('on_session_finalize', { session_id, reason: 'none' });
  return step.resultChars;
}

// ------------------------------------------------------------------ run

const micro = await interleave([emptyLoop, mapGet, emitConstant, emitClosure, hasGuard, boundActive, boundEmit], { reps: 11, warmup: 3 });
const [empty, map, emit, closure, has, active, boundThunk] = micro as [typeof micro[0], typeof micro[0], typeof micro[0], typeof micro[0], typeof micro[0], typeof micro[0], typeof micro[0]];
const loops = await interleave([plainLoop, hookedLoop, guardedLoop, controlLoop], { reps: 41, warmup: 5 });
const [plain, hooked, guarded, control] = loops as [typeof loops[0], typeof loops[0], typeof loops[0], typeof loops[0]];

report.figure(figure('emit_over_map', 'unsubscribed emit / Map.get', ratio(emit, map), 'x', { op: '<=', target: 1.5 }));
report.figure(figure('loop_over_plain', 'agent loop with 15 emits / hook-free twin', ratio(hooked, plain), 'x', { op: '<=', target: 1.05 }));
report.figure(figure('thunk_calls', 'payload thunks evaluated', thunkCalls, 'calls', { op: '<=', target: 0 }));
report.figure(figure('emit_closure_over_map', 'emit with a new closure per call / Map.get', ratio(closure, map), 'x'));
report.figure(figure('has_over_map', 'has(name) / Map.get', ratio(has, map), 'x'));
report.figure(figure('bound_active_over_map', 'bound hook site (if (hook.active) ...) / Map.get', ratio(active, map), 'x', { op: '<=', target: 1.0 }));
report.figure(figure('bound_emit_over_map', 'bound hook.emit(thunk) / Map.get', ratio(boundThunk, map), 'x'));
report.figure(figure('control_over_plain', 'A/A control: identical hook-free loop / hook-free twin (noise floor)', ratio(control, plain), 'x'));
report.figure(figure('guarded_loop_over_plain', 'agent loop with 15 has()-guarded emits / hook-free twin', ratio(guarded, plain), 'x'));
const perSite = (hooked.ns - plain.ns) / 15;
report.figure(figure('ns_per_hook_site', 'cost of one hook site in the loop ((hooked - plain) / 15)', Math.round(perSite * 100) / 100, 'ns'));

report.row(rowOf('empty', empty.name, empty));
report.row(rowOf('map', map.name, map));
report.row(rowOf('emit', emit.name, emit));
report.row(rowOf('emit_closure', closure.name, closure));
report.row(rowOf('has', has.name, has));
report.row(rowOf('bound_active', active.name, active));
report.row(rowOf('bound_emit', boundThunk.name, boundThunk));
report.row(rowOf('loop_plain', plain.name, plain));
report.row(rowOf('loop_hooked', hooked.name, hooked));
report.row(rowOf('loop_guarded', guarded.name, guarded));
report.row(rowOf('loop_control', control.name, control));
report.fact('steps_per_batch', STEPS);
report.fact('request_bytes', plainState.lastRequestBytes);
report.note('Micro rows cycle the hook name through all 15 names; the ratio is the median of per-round ratios over interleaved batches.');
report.note('Agent step: append a user message, build and JSON.stringify an OpenAI-style request (last 12 messages + 2 tools), JSON.parse a canned response with one tool call, JSON.parse its arguments, run a small string-search tool, append both to the history. No I/O.');
report.write();
