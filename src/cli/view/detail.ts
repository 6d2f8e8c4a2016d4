/**
 * The detail pane of one view node, as data: what a reader of a trace looks
 * for first (the messages by role, the answer, tool calls with their
 * arguments, the tool result, usage and cost, timings, metadata), taken
 * from the ATIF step or the ATOF start and end events the node was built
 * from (`ViewNode.source`). The HTML page renders these sections on demand.
 *
 * @module
 */

import { underOneMillisecond, type ViewNode } from './model.ts';
import { formatCost, isRollupRow, rollupOf, type Rollup } from './rollup.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';
import { parseJson } from '../../shared/json.ts';
import { atifToolResult } from './atif-tool-result.ts';
import { resumedRunsOf } from './atof-turns.ts';

/** One message of a conversation, its content reduced to text where it is text. */
interface DetailMessage {
  role: string;
  text: string;
  /** Tool calls the message carries (OpenAI `tool_calls`, Anthropic `tool_use` parts). */
  toolCalls?: { name: string; id?: string; arguments: unknown }[];
  /** Parts that are not text (images, audio, tool results), as they are. */
  parts?: unknown[];
}

type DetailSection =
  | { title: string; type: 'messages'; messages: DetailMessage[] }
  | { title: string; type: 'text'; text: string }
  | { title: string; type: 'json'; value: unknown }
  | { title: string; type: 'facts'; facts: [string, string][] };

export interface NodeDetail {
  title: string;
  kind: string;
  error?: string;
  sections: DetailSection[];
}

type Obj = Record<string, unknown>;

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** A single value larger than this is cut in the page (with a note of how much), so one huge payload cannot make the page unopenable. */
const MAX_TEXT = 200_000;

/** The detail sections of `target`. */
export function detailOf(target: ViewNode): NodeDetail {
  const sections: DetailSection[] = [];
  const source = target.source ?? {};
  if (isRecord(source.step)) atifStep(source.step, target, sections);
  else if (isRecord(source.call) || isRecord(source.result)) atifTool(source, sections);
  else if (isRecord(source.start) || isRecord(source.end)) atofScope(source, target, sections);
  else if (isRecord(source.event)) atofMark(source.event, sections);
  else if (isRecord(source.agent) || source.session_id !== undefined) atifSession(source, sections);
  sections.unshift({ title: 'Timing', type: 'facts', facts: timing(target) });
  // The id its title leaves out (an ATOF turn's `turn_id`: the title numbers the turn), first; a turn resumed after a
  // pause, each resumed run's too.
  if (target.id !== undefined) {
    const resumed = resumedRunsOf(target).flatMap((run): [string, string][] => (run.turn_id !== undefined ? [['resumed as turn id', run.turn_id]] : []));
    sections.unshift({ title: 'Id', type: 'facts', facts: [[`${target.kind} id`, target.id], ...resumed] });
  }
  if (target.tokens) {
    const usage: [string, string][] = [
      ['prompt tokens', String(target.tokens.prompt)],
      ['completion tokens', String(target.tokens.completion)],
      ['cached tokens', String(target.tokens.cached)],
    ];
    const cost = target.costUsd;
    if (cost !== undefined) usage.push(['cost', formatCost(cost)]);
    sections.splice(1, 0, { title: 'Usage', type: 'facts', facts: usage });
  }
  if (isRollupRow(target)) sections.splice(1, 0, { title: 'Rollup', type: 'facts', facts: rollupFacts(rollupOf(target)) });
  return { title: target.title, kind: target.kind, ...(target.error !== undefined ? { error: target.error } : {}), sections: sections.map(bounded) };
}

/** Own figures beside the totals, one line per figure: `prompt tokens  1,240 own · 3,100 total`. */
function rollupFacts({ own, totals }: Rollup): [string, string][] {
  const pair = (a: string, b: string) => (a === b ? a : `${a} own · ${b} total`);
  const count = (value: number) => value.toLocaleString('en-US');
  const cost = (value: number | null) => (value === null ? 'not recorded' : formatCost(value));
  const duration = (value: number | null) => (value === null ? 'not recorded' : preciseDuration(value));
  return [
    ['LLM calls', pair(count(own.llmCalls), count(totals.llmCalls))],
    ['tool calls', pair(count(own.toolCalls), count(totals.toolCalls))],
    ['errors', pair(count(own.errors), count(totals.errors))],
    ['prompt tokens', pair(count(own.promptTokens), count(totals.promptTokens))],
    ['completion tokens', pair(count(own.completionTokens), count(totals.completionTokens))],
    ['cached tokens', pair(count(own.cachedTokens), count(totals.cachedTokens))],
    ['cost', pair(cost(own.costUsd), cost(totals.costUsd))],
    ['duration', pair(duration(own.durationUs), duration(totals.durationUs))],
  ];
}

function timing(target: ViewNode): [string, string][] {
  const facts: [string, string][] = [];
  if (target.startUs !== undefined) facts.push(['start', isoMicros(target.startUs)]);
  if (target.endUs !== undefined) facts.push(['end', isoMicros(target.endUs)]);
  if (target.startUs !== undefined && target.endUs !== undefined) {
    const us = target.endUs - target.startUs;
    facts.push(['duration', underOneMillisecond(target) ? 'under 1ms (the stamps are rounded to milliseconds)' : preciseDuration(us)]);
  }
  if (facts.length === 0) facts.push(['time', 'not recorded']);
  return facts;
}

/** `2026-01-01T10:00:00.123456Z`: microseconds kept (Date keeps only milliseconds). */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString();
  const micros = String(Math.round(us - ms * 1000)).padStart(3, '0');
  return `${iso.slice(0, -1)}${micros}Z`;
}

/** A duration that stays readable below a millisecond: `0.42µs`, `350µs`, `1.250ms`, `2.31s`. */
export function preciseDuration(us: number): string {
  if (!Number.isFinite(us) || us < 0) return '?';
  if (us === 0) return '0µs (start and end share a timestamp)';
  if (us < 10) return `${us.toFixed(2)}µs`;
  if (us < 1000) return `${Math.round(us)}µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(3)}ms`;
  return `${(us / 1_000_000).toFixed(3)}s`;
}

function atifSession(source: Obj, sections: DetailSection[]): void {
  const agent = isRecord(source.agent) ? source.agent : {};
  const facts: [string, string][] = [];
  if (nonEmptyString(source.session_id)) facts.push(['session id', String(source.session_id)]);
  for (const key of ['name', 'version', 'model_name']) if (nonEmptyString(agent[key])) facts.push([`agent ${key.replace('_', ' ')}`, String(agent[key])]);
  if (facts.length > 0) sections.push({ title: 'Agent', type: 'facts', facts });
  if (source.final_metrics !== undefined) sections.push({ title: 'Final metrics', type: 'json', value: source.final_metrics });
  if (source.notes !== undefined) sections.push({ title: 'Notes', type: 'text', text: textOf(source.notes) });
  if (source.extra !== undefined) sections.push({ title: 'Metadata', type: 'json', value: source.extra });
}

function atifStep(step: Obj, target: ViewNode, sections: DetailSection[]): void {
  const extra = isRecord(step.extra) ? step.extra : {};
  if (step.source === 'user' || step.source === 'system') {
    sections.push({ title: step.source === 'user' ? 'User message' : 'System message', type: 'messages', messages: [message(String(step.source), step.message)] });
  } else {
    const request = isRecord(extra.llm_request) ? extra.llm_request : undefined;
    const input = request ? messagesOf(request) : undefined;
    if (input) sections.push({ title: 'Input', type: 'messages', messages: input });
    else if (request) sections.push({ title: 'Input', type: 'json', value: request });
    const answer = message('assistant', step.message);
    const calls = Array.isArray(step.tool_calls) ? step.tool_calls.filter(isRecord) : [];
    if (calls.length > 0) answer.toolCalls = calls.map((call) => ({ name: nonEmptyString(call.function_name) ?? '?', ...(nonEmptyString(call.tool_call_id) ? { id: String(call.tool_call_id) } : {}), arguments: call.arguments }));
    if (nonEmptyString(step.reasoning_content)) sections.push({ title: 'Reasoning', type: 'text', text: String(step.reasoning_content) });
    if (answer.text !== '' || answer.toolCalls || answer.parts) sections.push({ title: 'Output', type: 'messages', messages: [answer] });
    if (isRecord(extra.llm_response) && extra.llm_response.error !== undefined) sections.push({ title: 'Error', type: 'json', value: extra.llm_response.error });
    const results = isRecord(step.observation) && Array.isArray(step.observation.results) ? step.observation.results : [];
    if (results.length > 0 && target.children.every((child) => child.kind !== 'tool')) sections.push({ title: 'Observation', type: 'json', value: step.observation });
  }
  const facts: [string, string][] = [];
  for (const key of ['step_id', 'source', 'model_name', 'timestamp', 'llm_call_count']) if (step[key] !== undefined) facts.push([key, String(step[key])]);
  const servedBy = isRecord(extra.llm_response) ? nonEmptyString(extra.llm_response.served_by) : undefined;
  if (servedBy !== undefined) facts.push(['served_by', servedBy]);
  const failed = isRecord(extra.llm_response) && Array.isArray(extra.llm_response.failed_upstreams) ? extra.llm_response.failed_upstreams.filter((name) => typeof name === 'string') : [];
  if (failed.length > 0) facts.push(['failed_upstreams', failed.join(', ')]);
  sections.push({ title: 'Step', type: 'facts', facts });
  if (step.metrics !== undefined) sections.push({ title: 'Metrics', type: 'json', value: step.metrics });
  const metadata = without(extra, ['llm_request', 'llm_response']);
  if (Object.keys(metadata).length > 0) sections.push({ title: 'Metadata', type: 'json', value: metadata });
}

function atifTool(source: Obj, sections: DetailSection[]): void {
  const call = isRecord(source.call) ? source.call : {};
  const result = isRecord(source.result) ? source.result : undefined;
  sections.push({ title: 'Arguments', type: 'json', value: call.arguments ?? null });
  if (result) {
    const content = atifToolResult(result);
    sections.push(typeof content === 'string' ? { title: 'Result', type: 'text', text: content } : { title: 'Result', type: 'json', value: content ?? null });
  } else {
    sections.push({ title: 'Result', type: 'text', text: '(no result recorded)' });
  }
  const facts: [string, string][] = [];
  if (nonEmptyString(call.tool_call_id)) facts.push(['tool call id', String(call.tool_call_id)]);
  if (nonEmptyString(call.function_name)) facts.push(['function', String(call.function_name)]);
  if (facts.length > 0) sections.push({ title: 'Call', type: 'facts', facts });
  const metadata: Obj = {};
  if (isRecord(result?.extra)) Object.assign(metadata, result.extra);
  if (isRecord(source.timing) && Object.keys(source.timing).length > 0) metadata.invocation = source.timing;
  if (result?.subagent_trajectory_ref !== undefined) metadata.subagent_trajectory_ref = result.subagent_trajectory_ref;
  if (Object.keys(metadata).length > 0) sections.push({ title: 'Metadata', type: 'json', value: metadata });
}

function atofScope(source: Obj, target: ViewNode, sections: DetailSection[]): void {
  const start = isRecord(source.start) ? source.start : {};
  const end = isRecord(source.end) ? source.end : undefined;
  const input = start.data;
  if (target.kind === 'tool') {
    sections.push({ title: 'Arguments', type: 'json', value: input ?? null });
    if (end) sections.push(typeof end.data === 'string' ? { title: 'Result', type: 'text', text: end.data } : { title: 'Result', type: 'json', value: end.data ?? null });
    else sections.push({ title: 'Result', type: 'text', text: '(no end event: the call never finished)' });
  } else if (target.kind === 'llm') {
    const request = isRecord(input) && isRecord(input.content) ? input.content : input;
    const messages = isRecord(request) ? messagesOf(request) : undefined;
    sections.push(messages ? { title: 'Input', type: 'messages', messages } : { title: 'Input', type: 'json', value: input ?? null });
    if (end) {
      const answer = answerMessages(end.data);
      sections.push(answer ? { title: 'Output', type: 'messages', messages: answer } : { title: 'Output', type: 'json', value: end.data ?? null });
    } else {
      sections.push({ title: 'Output', type: 'text', text: '(no end event: the call never finished)' });
    }
  } else {
    if (input !== undefined && input !== null) sections.push({ title: 'Input', type: 'json', value: input });
    if (end?.data !== undefined && end.data !== null) sections.push({ title: 'Output', type: 'json', value: end.data });
  }
  const facts: [string, string][] = [];
  for (const key of ['name', 'category', 'uuid', 'parent_uuid']) if (start[key] !== undefined && start[key] !== null) facts.push([key, String(start[key])]);
  if (facts.length > 0) sections.push({ title: 'Scope', type: 'facts', facts });
  const metadata: Obj = {};
  if (isRecord(start.category_profile) && Object.keys(start.category_profile).length > 0) metadata.category_profile = start.category_profile;
  if (isRecord(start.metadata) && Object.keys(start.metadata).length > 0) metadata.start = start.metadata;
  if (isRecord(end?.metadata) && Object.keys(end.metadata).length > 0) metadata.end = end.metadata;
  if (Array.isArray(start.attributes) && start.attributes.length > 0) metadata.attributes = start.attributes;
  if (Object.keys(metadata).length > 0) sections.push({ title: 'Metadata', type: 'json', value: metadata });
}

function atofMark(event: Obj, sections: DetailSection[]): void {
  if (event.data !== undefined && event.data !== null) sections.push({ title: 'Data', type: 'json', value: event.data });
  const facts: [string, string][] = [];
  for (const key of ['name', 'uuid', 'parent_uuid', 'timestamp']) if (event[key] !== undefined && event[key] !== null) facts.push([key, String(event[key])]);
  sections.push({ title: 'Mark', type: 'facts', facts });
  if (isRecord(event.metadata) && Object.keys(event.metadata).length > 0) sections.push({ title: 'Metadata', type: 'json', value: event.metadata });
}

/** The request's conversation: OpenAI/Anthropic `messages` (plus Anthropic `system`), Gemini `contents`, Responses `input`. */
function messagesOf(request: Obj): DetailMessage[] | undefined {
  const out: DetailMessage[] = [];
  if (request.system !== undefined) out.push(message('system', request.system));
  if (nonEmptyString(request.instructions)) out.push(message('system', request.instructions));
  const list = Array.isArray(request.messages) ? request.messages : Array.isArray(request.contents) ? request.contents : Array.isArray(request.input) ? request.input : undefined;
  if (!list) return out.length > 0 ? out : undefined;
  for (const item of list) {
    if (!isRecord(item)) continue;
    const msg = message(nonEmptyString(item.role) ?? nonEmptyString(item.type) ?? '?', item.content ?? item.parts ?? item.output);
    const calls = Array.isArray(item.tool_calls) ? item.tool_calls.filter(isRecord) : [];
    if (calls.length > 0) msg.toolCalls = [...(msg.toolCalls ?? []), ...calls.map(openAiCall)];
    if (nonEmptyString(item.tool_call_id)) msg.role = `${msg.role} (${String(item.tool_call_id)})`;
    out.push(msg);
  }
  return out;
}

/** The answer of a provider response: OpenAI `choices`, Anthropic `content`, Gemini `candidates`. */
export function answerMessages(data: unknown): DetailMessage[] | undefined {
  if (!isRecord(data)) return typeof data === 'string' ? [message('assistant', data)] : undefined;
  if (Array.isArray(data.choices)) {
    const out = data.choices.filter(isRecord).map((choice) => {
      const body = isRecord(choice.message) ? choice.message : {};
      const msg = message(nonEmptyString(body.role) ?? 'assistant', body.content);
      const calls = Array.isArray(body.tool_calls) ? body.tool_calls.filter(isRecord) : [];
      if (calls.length > 0) msg.toolCalls = calls.map(openAiCall);
      return msg;
    });
    return out.length > 0 ? out : undefined;
  }
  if (Array.isArray(data.content)) return [message(nonEmptyString(data.role) ?? 'assistant', data.content)];
  // An adapter's record of the answer as one chat message (the OpenAI Agents SDK's hooks): its text and calls, not the whole response.
  if (isRecord(data.assistant_message)) {
    const body = data.assistant_message;
    const msg = message(nonEmptyString(body.role) ?? 'assistant', body.content);
    const calls = Array.isArray(body.tool_calls) ? body.tool_calls.filter(isRecord) : [];
    if (calls.length > 0) msg.toolCalls = calls.map(openAiCall);
    return [msg];
  }
  if (Array.isArray(data.candidates)) {
    const out = data.candidates.filter(isRecord).map((candidate) => {
      const content = isRecord(candidate.content) ? candidate.content : {};
      return message(nonEmptyString(content.role) ?? 'model', content.parts);
    });
    return out.length > 0 ? out : undefined;
  }
  return undefined;
}

function openAiCall(call: Obj): { name: string; id?: string; arguments: unknown } {
  const fn = isRecord(call.function) ? call.function : {};
  let args: unknown = fn.arguments;
  if (typeof args === 'string') {
    try {
      args = parseJson(args);
    } catch {
      // Not JSON: shown as the string it is.
    }
  }
  return { name: nonEmptyString(fn.name) ?? '?', ...(nonEmptyString(call.id) ? { id: String(call.id) } : {}), arguments: args };
}

/** A message whose content is a string or a list of parts (text parts joined, tool calls and other parts kept). */
function message(role: string, content: unknown): DetailMessage {
  if (content === undefined || content === null) return { role, text: '' };
  if (typeof content === 'string') return { role, text: content };
  if (!Array.isArray(content)) return isRecord(content) && nonEmptyString(content.text) ? { role, text: String(content.text) } : { role, text: '', parts: [content] };
  const texts: string[] = [];
  const parts: unknown[] = [];
  const toolCalls: { name: string; id?: string; arguments: unknown }[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (isRecord(part) && typeof part.text === 'string' && (part.type === undefined || part.type === 'text' || part.type === 'input_text' || part.type === 'output_text')) texts.push(part.text);
    else if (isRecord(part) && part.type === 'tool_use') toolCalls.push({ name: nonEmptyString(part.name) ?? '?', ...(nonEmptyString(part.id) ? { id: String(part.id) } : {}), arguments: part.input });
    else if (isRecord(part) && isRecord(part.functionCall)) toolCalls.push({ name: nonEmptyString(part.functionCall.name) ?? '?', arguments: part.functionCall.args });
    else parts.push(part);
  }
  const msg: DetailMessage = { role, text: texts.join('\n') };
  if (toolCalls.length > 0) msg.toolCalls = toolCalls;
  if (parts.length > 0) msg.parts = parts;
  return msg;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function without(record: Obj, keys: readonly string[]): Obj {
  const copy: Obj = {};
  for (const [key, value] of Object.entries(record)) if (!keys.includes(key)) copy[key] = value;
  return copy;
}

/** Cuts text over `MAX_TEXT` characters, saying how much was left out. */
function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… (${text.length - MAX_TEXT} more characters not shown)` : text;
}

function bounded(section: DetailSection): DetailSection {
  switch (section.type) {
    case 'text':
      return { ...section, text: cut(section.text) };
    case 'messages':
      return { ...section, messages: section.messages.map((msg) => ({ ...msg, text: cut(msg.text) })) };
    case 'json': {
      let text: string | undefined;
      try {
        text = JSON.stringify(section.value);
      } catch {
        text = undefined;
      }
      return text !== undefined && text.length > MAX_TEXT ? { title: section.title, type: 'text', text: cut(JSON.stringify(section.value, null, 2)) } : section;
    }
    default:
      return section;
  }
}
