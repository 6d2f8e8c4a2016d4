// `view` on what the adapters record for runs that hand work to sub-agents:
// an OpenAI Agents SDK handoff chain (triage -> billing -> refunds) and a
// chain paused for an approval deep inside it and resumed, written as the
// SDK's docs write them, on the real OpenAIChatCompletionsModel over a fake
// fetch, recorded by the plugin into its ATIF and ATOF files. Both files of
// one run must read the same: each sub-agent under the transfer call that
// started it (the call has ended before the agent it hands to starts), named
// as the run named it, with its own tokens, and the session's totals the sum
// of every model call once.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIChatCompletionsModel, run, tool } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';
import { cliInProcess } from './support.ts';
import { all, filesOf, viewed, type JsonNode } from './view-json.ts';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { HumanMessage } from '@langchain/core/messages';
import { Annotation, END, MessagesAnnotation, Send, START, StateGraph } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, wireResponse } from '../support/provider-wire.ts';


const api = new FakeOpenAI();
const chat = (name: string) => new OpenAIChatCompletionsModel(api.client(), name);
let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
  useTracing('tracing on');
});

const lookupInvoice = tool({ name: 'lookup_invoice', description: 'Look an invoice up', parameters: z.object({ invoice: z.string() }), execute: async ({ invoice }) => `${invoice}: $40, paid twice` });
const issueRefund = (needsApproval: boolean) =>
  tool({ name: 'issue_refund', description: 'Refund an invoice', parameters: z.object({ invoice: z.string() }), needsApproval, execute: async ({ invoice }) => `Refunded $40 on ${invoice}` });



const toolNamed = (root: JsonNode, name: string): JsonNode => {
  const found = all(root).filter((candidate) => candidate.kind === 'tool' && candidate.title === `tool ${name}`);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
/** The sub-agents directly under a node (not deeper). */
const subagentsUnder = (target: JsonNode): JsonNode[] => target.children.filter((child) => child.kind === 'subagent');
/** Every model call's tokens, each once. */
const llmSum = (root: JsonNode) =>
  all(root)
    .filter((candidate) => candidate.kind === 'llm')
    .reduce((sum, call) => ({ prompt: sum.prompt + (call.tokens?.prompt ?? 0), completion: sum.completion + (call.tokens?.completion ?? 0) }), { prompt: 0, completion: 0 });

describe('view: sub-agents of a handoff chain, from the ATIF and the ATOF file of one run', () => {
  it('triage -> billing -> refunds: each agent under the transfer call that reached it, named, with its own tokens; totals counted once', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [
        { calls: [{ id: 'call_invoice', name: 'lookup_invoice', args: { invoice: 'INV-7' } }], usage: { input: 80, output: 12, cached: 32 } },
        { text: 'Passing you to refunds.', calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 110, output: 9 } },
      ],
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 140, output: 14 } },
        { text: 'Refund of $40 issued for INV-7.', usage: { input: 170, output: 11, cached: 64 } },
      ],
    });
    const recorded = recordedPlugin('view-handoff-chain');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: chat('gpt-4o'), tools: [issueRefund(false)], handoffDescription: 'Refunds' });
    const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: chat('gpt-4.1'), tools: [lookupInvoice], handoffs: [refunds], handoffDescription: 'Billing' });
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: chat('gpt-4.1-mini'), handoffs: [billing] });
    const result = await run(triage, 'I was charged twice for INV-7.');
    expect(result.finalOutput).toBe('Refund of $40 issued for INV-7.');
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);

    // Each agent's row names it and its model, and each LLM row its model, the same from either file (a handed-off
    // agent's trajectory has no user step: its turn is the ATOF file's only, so turns are left out here).
    const agents = async (file: string) =>
      all(await viewed(file))
        .filter((row) => row.kind === 'session' || row.kind === 'subagent' || row.kind === 'llm')
        .map((row) => [row.kind === 'llm' ? row.title : row.kind, row.note]);
    expect(await agents(files.atof)).toEqual(await agents(files.atif));
    expect((await agents(files.atof)).filter(([kind]) => !kind!.startsWith('LLM'))).toEqual([
      ['session', 'triage, gpt-4.1-mini-2025-04-14'],
      ['subagent', 'billing, gpt-4.1-2025-04-14'],
      ['subagent', 'refunds, gpt-4o-2025-04-14'],
    ]);

    for (const [kind, file] of Object.entries(files)) {
      const session = await viewed(file);
      // Tokens: the SDK's usage over the five requests, each model call once, the sub-agents' included.
      expect(session.totals, kind).toMatchObject({ llmCalls: 5, promptTokens: 550, completionTokens: 54, cachedTokens: 96 });
      expect(llmSum(session), kind).toEqual({ prompt: 550, completion: 54 });
      expect(session.own, kind).toMatchObject({ promptTokens: 50, completionTokens: 8 });
      // billing under the call that handed to it, refunds under billing's, each named and with its own figures.
      const [billingNode, ...noMore] = subagentsUnder(toolNamed(session, 'transfer_to_billing'));
      expect(noMore, kind).toEqual([]);
      expect(billingNode!.note, kind).toMatch(/^billing\b/);
      expect(billingNode!.totals, kind).toMatchObject({ promptTokens: 500, completionTokens: 46 });
      expect(billingNode!.own, kind).toMatchObject({ promptTokens: 190, completionTokens: 21 });
      const [refundsNode] = subagentsUnder(toolNamed(billingNode!, 'transfer_to_refunds'));
      expect(refundsNode?.note, kind).toMatch(/^refunds\b/);
      expect(refundsNode!.totals, kind).toMatchObject({ llmCalls: 2, promptTokens: 310, completionTokens: 25, cachedTokens: 64 });
      expect(all(session).filter((candidate) => candidate.kind === 'subagent'), kind).toHaveLength(2);
    }
    const text = await cliInProcess(['view', files.atof]);
    expect(text.stdout).toMatch(/tool transfer_to_billing[^\n]*\n[^\n]*└─ subagent \S+:sub:call_to_billing [^\n]*  billing(, [^\n]*)?\n/);
    // Each model call names the model that answered and what it answered, as the ATIF view does.
    expect(text.stdout).toMatch(/LLM gpt-4\.1-mini-2025-04-14 [^\n]* 50 in \/ 8 out  → transfer_to_billing\n/);
    expect(text.stdout).toMatch(/LLM gpt-4o-2025-04-14 [^\n]* Refund of \$40 issued for INV-7\.\n/);
  }, 30_000);

  it('a rejected call is one error, read from either file: the approval denied and the call it denied are one failure', async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { text: 'I could not refund INV-7.', usage: { input: 150, output: 9 } },
      ],
    });
    const recorded = recordedPlugin('view-rejected-call');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: chat('gpt-4o'), tools: [issueRefund(true)] });
    const paused = await run(refunds, 'Refund INV-7, please.');
    paused.state.reject(paused.state.getInterruptions()[0]!);
    const result = await run(refunds, paused.state);
    expect(result.finalOutput).toBe('I could not refund INV-7.');
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    for (const [kind, file] of Object.entries(filesOf(recorded.dir))) {
      const session = await viewed(file);
      expect(session.totals, kind).toMatchObject({ llmCalls: 2, toolCalls: 1, errors: 1 });
      // The session names its agent, as the trajectory's agent.name does (the ATOF scope is `refunds-session-<id>`).
      expect(session.note?.split(',')[0], kind).toBe('refunds');
      expect(toolNamed(session, 'issue_refund').error, kind).toBeDefined();
    }
  }, 30_000);

  it('compare: the same handoff chain recorded twice reads as equivalent, from its ATOF files as from its ATIF files', async () => {
    useTracing('tracing off');
    const recordOnce = async (label: string) => {
      api.load({
        'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
        'gpt-4.1': [{ text: 'INV-7 was charged twice; refunding.', usage: { input: 90, output: 9 } }],
      });
      const recorded = recordedPlugin(label);
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: chat('gpt-4.1'), handoffDescription: 'Billing' });
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: chat('gpt-4.1-mini'), handoffs: [billing] });
      await run(triage, 'Why was I charged twice?');
      uninstall();
      uninstall = undefined;
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      return filesOf(recorded.dir);
    };
    const first = await recordOnce('view-compare-a');
    const second = await recordOnce('view-compare-b');
    for (const kind of ['atif', 'atof'] as const) {
      const result = await cliInProcess(['compare', first[kind], second[kind], '--json']);
      const report = JSON.parse(result.stdout);
      // The responses' ids differ from run to run; what was answered, by which model, does not.
      expect(report.pairs.filter((pair: { status: string }) => pair.status !== 'same'), kind).toEqual([]);
      expect(report.equivalent, kind).toBe(true);
      expect(result.code, kind).toBe(0);
      expect(report.pairs.map((pair: { title: string }) => pair.title).filter((title: string) => title.startsWith('LLM')), kind).toEqual([
        expect.stringContaining('gpt-4.1-mini-2025-04-14 → transfer_to_billing'),
        expect.stringContaining('gpt-4.1-2025-04-14'),
      ]);
    }
  }, 30_000);

  it('a chain paused for an approval in refunds and resumed: the resumed turns read as the files say (no “undefined” message)', async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [
        { calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 80, output: 9 } },
        { text: 'Refunded; your balance is $0.', usage: { input: 200, output: 10, cached: 64 } },
      ],
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { text: 'Done; back to billing.', calls: [{ id: 'call_back', name: 'transfer_to_billing', args: {} }], usage: { input: 160, output: 11 } },
      ],
    });
    const recorded = recordedPlugin('view-handoff-resumed');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: chat('gpt-4o'), tools: [issueRefund(true)], handoffDescription: 'Refunds' });
    const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: chat('gpt-4.1'), handoffs: [refunds], handoffDescription: 'Billing' });
    refunds.handoffs.push(billing);
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: chat('gpt-4.1-mini'), handoffs: [billing] });
    const paused = await run(triage, 'Refund INV-7, please.');
    expect(paused.interruptions.map((item) => item.name)).toEqual(['issue_refund']);
    paused.state.approve(paused.state.getInterruptions()[0]!);
    const result = await run(triage, paused.state);
    expect(result.finalOutput).toBe('Refunded; your balance is $0.');
    const { counters } = await recorded.finish();
    expectNothingLost(counters);

    for (const [kind, file] of Object.entries(filesOf(recorded.dir))) {
      const session = await viewed(file);
      // Tool calls: the three transfers and the refund; the resumed run's links to billing and refunds are none.
      expect(session.totals, kind).toMatchObject({ llmCalls: 5, toolCalls: 4, promptTokens: 600, completionTokens: 52, cachedTokens: 64 });
      expect(llmSum(session), kind).toEqual({ prompt: 600, completion: 52 });
      const notes = all(session).map((candidate) => candidate.note ?? '');
      expect(notes.filter((note) => note.includes('undefined')), kind).toEqual([]);
      // Before the pause: billing under triage's transfer call, refunds under billing's.
      // (refunds' hand-back after the resume is a transfer_to_billing too: triage's is the first.)
      const [billingNode] = subagentsUnder(all(session).find((candidate) => candidate.title === 'tool transfer_to_billing')!);
      expect(billingNode?.note, kind).toMatch(/^billing\b/);
      expect(subagentsUnder(toolNamed(billingNode!, 'transfer_to_refunds'))[0]?.note, kind).toMatch(/^refunds\b/);
      // Every sub-agent named, each once: the resumed run continues billing and refunds.
      const names = all(session).filter((candidate) => candidate.kind === 'subagent').map((candidate) => candidate.note?.split(/,| · /)[0]);
      expect(names.sort(), kind).toEqual(['billing', 'refunds']);
      // Neither left interrupted by the pause: both ended completed with the resumed run (the view notes no status for
      // that), and the ATIF file records no status for a sub-agent.
      const statuses = all(session).filter((candidate) => candidate.kind === 'subagent').map((candidate) => candidate.note?.split(' · ')[1] ?? 'no status');
      expect(statuses, kind).toEqual(Array(2).fill('no status'));
    }
  }, 30_000);

  it('LangGraph Send fan-out: each worker a sub-agent with its own steps and tokens; the links to them are no tool calls', async () => {
    const GPT = 'gpt-4.1-2025-04-14';
    const replies: Array<[string, ReturnType<typeof chatCompletion>]> = [
      ['Population of Oslo', chatCompletion({ id: 'chatcmpl-oslo-2', model: GPT, content: 'Oslo: 709,000 people.', usage: { prompt_tokens: 93, completion_tokens: 9 } })],
      ['Population of Rome', chatCompletion({ id: 'chatcmpl-rome-2', model: GPT, content: 'Rome: 2.8 million people.', usage: { prompt_tokens: 77, completion_tokens: 4 } })],
      ['Tell me about Oslo', chatCompletion({ id: 'chatcmpl-oslo-1', model: GPT, content: null, toolCalls: [{ id: 'call_oslo', name: 'population', args: { city: 'Oslo' } }], usage: { prompt_tokens: 51, completion_tokens: 21 } })],
      ['Tell me about Rome', chatCompletion({ id: 'chatcmpl-rome-1', model: GPT, content: null, toolCalls: [{ id: 'call_rome', name: 'population', args: { city: 'Rome' } }], usage: { prompt_tokens: 52, completion_tokens: 11 } })],
    ];
    let served = 0;
    const fetch = (async (_input: unknown, init?: { body?: unknown }) => {
      const body = String(init?.body);
      const found = replies.find(([when]) => body.includes(when));
      if (found === undefined) return new Response('{"error":{"message":"no route"}}', { status: 500, headers: { 'content-type': 'application/json' } });
      replies.splice(replies.indexOf(found), 1);
      return wireResponse(found[1], `req_${++served}`, false);
    }) as typeof globalThis.fetch;
    const population = lcTool(async ({ city }) => `Population of ${city}: ${city === 'Oslo' ? '709,000' : '2.8 million'}`, { name: 'population', description: 'The population of a city', schema: z.object({ city: z.string() }) });
    const researcher = createReactAgent({ llm: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }), tools: [population], name: 'researcher' });
    const State = Annotation.Root({ ...MessagesAnnotation.spec, cities: Annotation<string[]> });
    const toWorkers = (state: typeof State.State) => state.cities.map((city) => new Send('researcher', { messages: [new HumanMessage(`Tell me about ${city}`)] }));
    const graph = new StateGraph(State).addNode('researcher', researcher).addConditionalEdges(START, toWorkers, ['researcher']).addEdge('researcher', END).compile();
    const recorded = recordedPlugin('view-lg-send');
    await graph.invoke({ cities: ['Oslo', 'Rome'], messages: [] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(replies).toEqual([]);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);

    for (const [kind, file] of Object.entries(filesOf(recorded.dir))) {
      const session = await viewed(file);
      // Four model calls and two tool calls, all in the workers: the run's links to them are neither.
      expect(session.totals, kind).toMatchObject({ llmCalls: 4, toolCalls: 2, promptTokens: 273, completionTokens: 45 });
      expect(llmSum(session), kind).toEqual({ prompt: 273, completion: 45 });
      expect(all(session).filter((candidate) => candidate.kind === 'tool').map((candidate) => candidate.title), kind).toEqual(['tool population', 'tool population']);
      const workers = all(session).filter((candidate) => candidate.kind === 'subagent');
      expect(workers.map((worker) => worker.note?.split(',')[0]), kind).toEqual(['researcher', 'researcher']);
      const byCity = (city: string) => workers.find((worker) => all(worker).some((candidate) => candidate.note === `“Tell me about ${city}”`))!;
      expect(byCity('Oslo').totals, kind).toMatchObject({ llmCalls: 2, toolCalls: 1, promptTokens: 144, completionTokens: 30 });
      expect(byCity('Rome').totals, kind).toMatchObject({ llmCalls: 2, toolCalls: 1, promptTokens: 129, completionTokens: 15 });
    }
  }, 30_000);
});
