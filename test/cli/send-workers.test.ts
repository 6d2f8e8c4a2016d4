// `view` and `compare` on what a LangGraph program that sends work to agents
// wrote: createReactAgent workers fanned out with `Send`, as LangGraph's docs
// write it, the real ChatOpenAI over a fake fetch that answers both workers'
// first requests at once. The trajectory links each worker from a step with
// no LLM call (no tool call started them); the ATOF file has no such step.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tool } from '@langchain/core/tools';
import { HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { Annotation, END, MessagesAnnotation, Send, START, StateGraph } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import { chatCompletion, concurrentFetch } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { cliInProcess } from './support.ts';

const GPT = 'gpt-4.1-2025-04-14';

interface JsonNode { kind: string; title: string; note?: string; startUs?: number; endUs?: number; children: JsonNode[] }

/** Runs two researcher agents, one per city, sent from START; returns the ATIF and ATOF files written. */
async function runSendWorkers(): Promise<{ atif: string; atof: string }> {
  const { fetch, maxInFlight } = concurrentFetch([
    { when: 'Tell me about Oslo', wave: 'first', reply: chatCompletion({ id: 'chatcmpl-oslo-1', model: GPT, content: null, toolCalls: [{ id: 'call_oslo', name: 'weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 51, completion_tokens: 21 } }) },
    { when: 'Tell me about Rome', wave: 'first', reply: chatCompletion({ id: 'chatcmpl-rome-1', model: GPT, content: null, toolCalls: [{ id: 'call_rome', name: 'weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 52, completion_tokens: 11 } }) },
    { when: 'Weather in Oslo', reply: chatCompletion({ id: 'chatcmpl-oslo-2', model: GPT, content: 'Oslo: snow.', usage: { prompt_tokens: 93, completion_tokens: 4 } }) },
    { when: 'Weather in Rome', reply: chatCompletion({ id: 'chatcmpl-rome-2', model: GPT, content: 'Rome: sun.', usage: { prompt_tokens: 77, completion_tokens: 4 } }) },
  ]);
  const weather = tool(async ({ city }) => `Weather in ${city}: ${city === 'Oslo' ? 'snow' : 'sun'}`, { name: 'weather', description: 'The weather of a city', schema: z.object({ city: z.string() }) });
  const researcher = createReactAgent({ llm: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }), tools: [weather], name: 'researcher' });
  const State = Annotation.Root({ ...MessagesAnnotation.spec, cities: Annotation<string[]> });
  const graph = new StateGraph(State)
    .addNode('researcher', researcher)
    .addConditionalEdges(START, (state) => state.cities.map((city) => new Send('researcher', { messages: [new HumanMessage(`Tell me about ${city}`)] })), ['researcher'])
    .addEdge('researcher', END)
    .compile();
  const recorded = recordedPlugin('cli-send-workers');
  const result = await graph.invoke({ cities: ['Oslo', 'Rome'], messages: [] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
  expect(result.messages.map((message) => message.content).filter((text) => typeof text === 'string' && text.endsWith('.'))).toEqual(expect.arrayContaining(['Oslo: snow.', 'Rome: sun.']));
  expect(maxInFlight()).toBe(2);
  const { counters } = await recorded.finish();
  expectNothingLost(counters);
  const [atif] = readdirSync(path.join(recorded.dir, 'atif'));
  const [atof] = readdirSync(path.join(recorded.dir, 'atof'));
  return { atif: path.join(recorded.dir, 'atif', atif!), atof: path.join(recorded.dir, 'atof', atof!) };
}

describe('view and compare on LangGraph Send workers', () => {
  it('compares the run\'s ATIF and ATOF files as equivalent: the trajectory\'s link to each worker is no step of the run', async () => {
    const { atif, atof } = await runSendWorkers();
    const result = await cliInProcess(['compare', atif, atof, '--json']);
    const report = JSON.parse(result.stdout) as { equivalent: boolean; pairs: { status: string; title: string }[] };
    expect(report.pairs.filter((pair) => pair.status !== 'same').map((pair) => `${pair.status} ${pair.title}`)).toEqual([]);
    expect(report.equivalent).toBe(true);
    expect(result.code).toBe(0);
    // Both workers are there, paired, with their model calls and tool calls.
    expect(report.pairs.filter((pair) => pair.title.startsWith('subagent '))).toHaveLength(2);
    expect(report.pairs.filter((pair) => pair.title.includes('→ weather'))).toHaveLength(2);
  });

  it('shows each worker\'s link at the moment the worker started, with no duration of its own', async () => {
    const { atif } = await runSendWorkers();
    const trajectory = JSON.parse(readFileSync(atif, 'utf8')) as { steps: { llm_call_count?: number; timestamp: string }[] };
    const links = trajectory.steps.filter((step) => step.llm_call_count === 0);
    expect(links).toHaveLength(2);
    const result = await cliInProcess(['view', atif, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const [session] = (JSON.parse(result.stdout) as { files: { sessions: JsonNode[] }[] }).files[0]!.sessions;
    const shown = session!.children.filter((child) => child.title === 'agent step (no LLM call)');
    expect(shown.map((node) => [node.note, node.startUs, node.endUs])).toEqual(links.map((step) => ['starts researcher', parseTimestamp(step.timestamp), undefined]));
    // In the text too: the second link starts when its worker did, not at the first link's stamp.
    const text = await cliInProcess(['view', atif]);
    const offsets = text.stdout.split('\n').filter((line) => line.includes('agent step (no LLM call)')).map((line) => /\+(\d+\.\d{3})s/.exec(line)?.[1]);
    expect(offsets).toEqual(links.map((step) => ((parseTimestamp(step.timestamp) - parseTimestamp(links[0]!.timestamp)) / 1e6).toFixed(3)));
    expect(text.stdout).not.toMatch(/agent step \(no LLM call\)\s+\d/);
  });

  it('says the run\'s own part used no tokens, its workers every one', async () => {
    const { atif, atof } = await runSendWorkers();
    for (const file of [atif, atof]) {
      const header = (await cliInProcess(['view', file])).stdout.split('\n')[0]!;
      expect(header, file).toMatch(/4 LLM calls, 2 tool calls {2}273 in \/ 40 out {2}\(own: 0 in \/ 0 out, 0 tool calls\)$/);
    }
  });
});
