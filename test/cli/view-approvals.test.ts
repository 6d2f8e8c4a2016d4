// `view` on runs that stopped while an approval was pending and were never
// resumed, recorded by the plugin from programs written as each framework's
// docs write them (the OpenAI Agents SDK's needsApproval on the real
// OpenAIChatCompletionsModel over a fake fetch; LangChain's
// humanInTheLoopMiddleware on ChatOpenAI over a fake fetch). The calls the
// model asked for never ran: both files of one run must show them, as calls
// that did not run, and count them the same; the ATOF file, which holds the
// approval requests and the turn's interrupted end, says why.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIChatCompletionsModel, run, tool } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';
import { chatCompletion, scriptedFetch, wireResponse } from '../support/provider-wire.ts';
import { generateText, stepCountIs, tool as aiTool, type ModelMessage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { cliInProcess, tempDir } from './support.ts';
import { all, filesOf, viewed, type JsonNode } from './view-json.ts';
import { compared, differencesOf } from './compare-json.ts';

/** Each tool call as `title: note`, and the approval marks under it. */
const calls = (session: JsonNode) =>
  all(session)
    .filter((candidate) => candidate.kind === 'tool')
    .map((call) => ({ call: `${call.title}: ${call.note ?? ''}`, marks: call.children.filter((child) => child.kind === 'mark').map((mark) => mark.title) }));

/**
 * One run paused for an approval and resumed, compared as its ATIF file and its ATOF file: the same steps (the
 * ATOF file's resumed run is a turn of its own, the trajectory's one user step goes on), and what only the ATOF
 * file records, the decision and the pause, said as such.
 */
async function expectOneRunTwoWays(files: { atif: string; atof: string }, decision: string, turn: string): Promise<void> {
  const report = await compared(files.atif, files.atof);
  expect(differencesOf(report)).toEqual([]);
  expect(report.code).toBe(0);
  expect(report.onlyRecorded).toEqual([
    { fact: 'approval', run: 'b', values: [decision] },
    { fact: 'turn', run: 'b', values: [turn] },
  ]);
  const text = (await cliInProcess(['compare', files.atof, files.atif])).stdout.split('\n');
  expect(text).toContain(`only a's file records approval decisions (not compared): ${decision}`);
  expect(text).toContain(`only a's file records how turns ended (not compared): ${turn}`);
  expect(text.at(-2)).toMatch(/^runs are equivalent: 3 steps/);
}

/** The same run as a plugin-host ATIF file (its observed_events keep the approval marks). */
async function pluginHostCopy(atof: string): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['convert', atof, '--out', out, '--style', 'plugin-host'])).code).toBe(0);
  const [name] = readdirSync(out);
  return path.join(out, name!);
}

/**
 * The LangChain docs' human-in-the-loop agent on the fake Chat Completions `fetch`: a `remove` tool a person approves
 * first (`removeNeeds`: what it may be answered with), and a `list` tool that needs nobody (`withList`).
 */
function removeFileAgent(
  fetch: typeof globalThis.fetch,
  options: { withList?: boolean; remove?: (file: string) => Promise<string>; removeNeeds?: true | { allowedDecisions: Array<'approve' | 'edit' | 'reject'> } } = {},
) {
  const run = options.remove ?? (async () => 'removed');
  const remove = lcTool(async ({ path: file }) => run(file), { name: 'remove', description: 'Remove a file', schema: z.object({ path: z.string() }) });
  const list = lcTool(async () => 'a b', { name: 'list', description: 'List a folder', schema: z.object({ path: z.string() }) });
  return createAgent({
    model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }),
    tools: options.withList === true ? [list, remove] : [remove],
    checkpointer: new MemorySaver(),
    middleware: [humanInTheLoopMiddleware({ interruptOn: { remove: options.removeNeeds ?? true } })],
  });
}

const api = new FakeOpenAI();
let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
  useTracing('tracing on');
});

describe('view: calls that never ran because the run stopped at a pending approval', () => {
  it('OpenAI Agents SDK, two calls pending, never resumed: each call shown not run from either file; the ATOF file says it waits for approval and the turn was interrupted', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4o': [
        {
          calls: [
            { id: 'call_a', name: 'issue_refund', args: { invoice: 'INV-7' } },
            { id: 'call_b', name: 'issue_refund', args: { invoice: 'INV-8' } },
          ],
          usage: { input: 110, output: 24 },
        },
      ],
    });
    const recorded = recordedPlugin('view-pending-approval');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const issueRefund = tool({ name: 'issue_refund', description: 'Refund an invoice', parameters: z.object({ invoice: z.string() }), needsApproval: true, execute: async ({ invoice }) => `Refunded ${invoice}` });
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'), tools: [issueRefund] });
    const paused = await run(refunds, 'Refund INV-7 and INV-8, please.');
    expect(paused.interruptions.map((item) => item.name)).toEqual(['issue_refund', 'issue_refund']);
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);

    const atof = await viewed(files.atof);
    const atif = await viewed(files.atif);
    const host = await viewed(await pluginHostCopy(files.atof));
    for (const [kind, session] of Object.entries({ atof, atif, host })) {
      // The model's one call asked for two tools; neither ran, and nothing failed.
      expect(session.totals, kind).toMatchObject({ llmCalls: 1, toolCalls: 2, errors: 0 });
      // Under the LLM call that asked for them, as the trajectory lists them.
      const llm = all(session).find((candidate) => candidate.kind === 'llm')!;
      expect(llm.children.map((child) => child.title), kind).toEqual(['tool issue_refund', 'tool issue_refund']);
    }
    // The ATOF file and the plugin-host ATIF file hold the approval requests: the calls wait for them.
    for (const [kind, session] of Object.entries({ atof, host })) {
      expect(calls(session), kind).toEqual([
        { call: 'tool issue_refund: {"invoice":"INV-7"} · not run: waiting for approval', marks: ['approval requested'] },
        { call: 'tool issue_refund: {"invoice":"INV-8"} · not run: waiting for approval', marks: ['approval requested'] },
      ]);
    }
    // The exporter's ATIF file records no approval (docs/cli/view.md): the calls did not run, it cannot say why.
    expect(calls(atif)).toEqual([
      { call: 'tool issue_refund: {"invoice":"INV-7"} · not run', marks: [] },
      { call: 'tool issue_refund: {"invoice":"INV-8"} · not run', marks: [] },
    ]);
    // The turn's end says it was interrupted: the ATOF file's end, and the plugin's trajectory's `extra.turn_ends` (the
    // plugin-host file is native's, which records no turn status).
    for (const [kind, session] of Object.entries({ atof, atif })) expect(all(session).find((candidate) => candidate.kind === 'turn')!.note, kind).toBe('“Refund INV-7 and INV-8, please.” · interrupted');
    expect(all(host).find((candidate) => candidate.kind === 'turn')!.note).toBe('“Refund INV-7 and INV-8, please.”');

    const text = (await cliInProcess(['view', files.atof])).stdout;
    expect(text).toMatch(/→ issue_refund, issue_refund\n {16}├─ tool issue_refund {2}\{"invoice":"INV-7"\} · not run: waiting for approval\n/);
  }, 30_000);

  it('LangChain humanInTheLoopMiddleware, interrupted and never resumed: the call is shown not run from either file, waiting for approval from the ATOF file', async () => {
    const fetch = (async () =>
      wireResponse(chatCompletion({ id: 'chatcmpl-rm', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_rm', name: 'remove', args: { path: '/tmp/report.txt' } }], usage: { prompt_tokens: 40, completion_tokens: 12 } }), 'req_1', false)) as typeof globalThis.fetch;
    const agent = removeFileAgent(fetch);
    const recorded = recordedPlugin('view-hitl-pending');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Remove /tmp/report.txt' }] }, { callbacks: [handler], configurable: { thread_id: 'cleanup-7' } });
    expect(first.__interrupt__).toBeDefined();
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const atof = await viewed(files.atof);
    const atif = await viewed(files.atif);
    for (const [kind, session] of Object.entries({ atof, atif })) expect(session.totals, kind).toMatchObject({ llmCalls: 1, toolCalls: 1, errors: 0 });
    expect(calls(atof)).toEqual([{ call: 'tool remove: {"path":"/tmp/report.txt"} · not run: waiting for approval', marks: ['approval requested'] }]);
    expect(calls(atif)).toEqual([{ call: 'tool remove: {"path":"/tmp/report.txt"} · not run', marks: [] }]);
    for (const [kind, session] of Object.entries({ atof, atif })) expect(all(session).find((candidate) => candidate.kind === 'turn')!.note, kind).toMatch(/ · interrupted$/);
  }, 30_000);
});

describe('view: who decided an approval and what they said', () => {
  it('AI SDK toolApproval policy: each decision shows its choice, who decided and the denial text, as the ATOF file records them; the denied call shows what the model was told', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', {
      id: 'resp_1',
      model: 'gpt-4o-2024-08-06',
      toolCalls: [
        { id: 'call_ok', name: 'deleteFile', args: { path: '/tmp/x' } },
        { id: 'call_no', name: 'deleteFile', args: { path: '/etc/hosts' } },
      ],
      usage: { input: 60, output: 30 },
    });
    fake.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Deleted /tmp/x; /etc/hosts is protected.', usage: { input: 120, output: 14 } });
    const recorded = recordedPlugin('view-approval-policy');
    uninstall = instrumentAiSdk(recorded.hooks);
    const deleteFile = aiTool({ description: 'Delete a file', inputSchema: z.object({ path: z.string() }), execute: async ({ path: file }) => `deleted ${file}` });
    const result = await generateText({
      model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'),
      prompt: 'clean up',
      tools: { deleteFile },
      stopWhen: stepCountIs(3),
      toolApproval: { deleteFile: ({ path: file }: { path: string }) => (file.startsWith('/etc') ? { type: 'denied', reason: 'protected' } : 'approved') },
    } as never);
    expect(result.text).toBe('Deleted /tmp/x; /etc/hosts is protected.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const marks = (session: JsonNode) => all(session).filter((candidate) => candidate.kind === 'mark' && candidate.title.startsWith('approval: ')).map((mark) => `${mark.title}  ${mark.note ?? ''}`);
    for (const [kind, file] of Object.entries({ atof: files.atof, host: await pluginHostCopy(files.atof) })) {
      expect(marks(await viewed(file)), kind).toEqual(['approval: once  by toolApproval', 'approval: deny  by toolApproval · protected']);
    }
    for (const [kind, file] of Object.entries(files)) {
      const session = await viewed(file);
      expect(session.totals, kind).toMatchObject({ toolCalls: 2, errors: 1 });
      expect(all(session).filter((candidate) => candidate.kind === 'tool').map((call) => (call as JsonNode & { error?: string }).error ?? 'ran'), kind).toEqual(['ran', 'denied: protected']);
    }
    // The request names gpt-4o and the response gpt-4o-2024-08-06: the trajectory names the model that answered, so
    // compare reads that model from the ATOF file too, and the run's two files are one run.
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
  }, 30_000);
});

describe('view: a call run after the run resumed', () => {
  it('OpenAI Agents SDK, approved and resumed: the call sits under the LLM call that asked for it from either file, so compare finds the same steps', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { text: 'Refunded INV-7.', usage: { input: 150, output: 9 } },
      ],
    });
    const recorded = recordedPlugin('view-approved-resumed');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const issueRefund = tool({ name: 'issue_refund', description: 'Refund an invoice', parameters: z.object({ invoice: z.string() }), needsApproval: true, execute: async ({ invoice }) => `Refunded ${invoice}` });
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'), tools: [issueRefund] });
    const paused = await run(refunds, 'Refund INV-7, please.');
    paused.state.approve(paused.state.getInterruptions()[0]!);
    expect((await run(refunds, paused.state)).finalOutput).toBe('Refunded INV-7.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    for (const [kind, file] of Object.entries(files)) {
      const session = await viewed(file);
      const asker = all(session).find((candidate) => candidate.kind === 'llm' && candidate.note === '→ issue_refund')!;
      expect(asker.children.map((child) => `${child.title}: ${child.note ?? ''}`), kind).toEqual(['tool issue_refund: {"invoice":"INV-7"}']);
    }
    await expectOneRunTwoWays(files, 'issue_refund: once', '“Refund INV-7, please.”: interrupted, resumed, completed');
  }, 30_000);

  it('LangGraph: a tool that calls interrupt(), run again when resumed: both runs under the LLM call that asked, the first said interrupted (ATOF)', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-i1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_book', name: 'book_hotel', args: { hotel_name: 'McKittrick Hotel' } }], usage: { prompt_tokens: 64, completion_tokens: 18 } }),
      chatCompletion({ id: 'chatcmpl-i2', model: 'gpt-4.1-2025-04-14', content: 'Your stay at the McKittrick Hotel is booked.', usage: { prompt_tokens: 101, completion_tokens: 11 } }),
    ]);
    const bookHotel = lcTool(
      async ({ hotel_name }) => {
        const response = interrupt({ action: 'book_hotel', args: { hotel_name }, description: 'Please review the tool call' }) as { type: string };
        if (response.type !== 'accept') throw new Error(`Unknown response type: ${response.type}`);
        return `Successfully booked a stay at ${hotel_name}.`;
      },
      { name: 'book_hotel', description: 'Book a hotel', schema: z.object({ hotel_name: z.string() }) },
    );
    const agent = createReactAgent({ llm: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }), tools: [bookHotel], checkpointSaver: new MemorySaver() });
    const recorded = recordedPlugin('view-lg-interrupt');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'booking-1' } };
    await agent.invoke({ messages: [{ role: 'user', content: 'Book a stay at the McKittrick Hotel.' }] }, config);
    await agent.invoke(new Command({ resume: { type: 'accept' } }), config);
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const atof = await viewed(files.atof);
    const asker = all(atof).find((candidate) => candidate.kind === 'llm' && candidate.note === '→ book_hotel')!;
    expect(asker.children.map((child) => `${child.title}: ${child.note ?? ''}`)).toEqual(['tool book_hotel: {"hotel_name":"McKittrick Hotel"} · interrupted', 'tool book_hotel: {"hotel_name":"McKittrick Hotel"}']);
    // The resumed run is the turn it resumed, which went on to complete, as the trajectory's one user step reads.
    expect(all(atof).filter((candidate) => candidate.kind === 'turn').map((turn) => [turn.title, turn.note])).toEqual([['turn 1', '“Book a stay at the McKittrick Hotel.”']]);
    // The trajectory keeps one call with its result (the resumed run's); its two runs are in tool_invocations.
    const atif = await viewed(files.atif);
    const call = all(atif).filter((candidate) => candidate.kind === 'tool');
    expect(call.map((child) => `${child.title}: ${child.note ?? ''}`)).toEqual(['tool book_hotel: {"hotel_name":"McKittrick Hotel"}']);
    // Its time is the run that gave the result (the second; the trajectory's stamps are to the millisecond).
    const [, rerun] = asker.children as (JsonNode & { startUs: number })[];
    expect(Math.abs((call[0] as JsonNode & { startUs: number }).startUs - rerun!.startUs)).toBeLessThanOrEqual(1000);
    // Run twice, one call, as the trajectory counts it: the same totals from either file, and compare finds one run.
    for (const session of [atof, atif]) expect(session.totals).toMatchObject({ llmCalls: 2, toolCalls: 1, errors: 0 });
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
    expect(report.onlyRecorded).toEqual([{ fact: 'turn', run: 'b', values: ['“Book a stay at the McKittrick Hotel.”: interrupted, resumed, completed'] }]);
  }, 30_000);
});

describe('compare: one run paused for an approval and resumed, its ATIF file against its ATOF file', () => {
  it('LangChain humanInTheLoopMiddleware, approved and resumed by a Command', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-rm1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_rm', name: 'remove', args: { path: '/tmp/report.txt' } }], usage: { prompt_tokens: 40, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-rm2', model: 'gpt-4.1-2025-04-14', content: 'Removed /tmp/report.txt.', usage: { prompt_tokens: 80, completion_tokens: 7 } }),
    ]);
    const agent = removeFileAgent(fetch);
    const recorded = recordedPlugin('compare-hitl-resumed');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'cleanup-8' } };
    expect((await agent.invoke({ messages: [{ role: 'user', content: 'Remove /tmp/report.txt' }] }, config)).__interrupt__).toBeDefined();
    const second = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
    expect(second.messages.at(-1)!.content).toBe('Removed /tmp/report.txt.');
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    await expectOneRunTwoWays(filesOf(recorded.dir), 'remove: once', '“Remove /tmp/report.txt”: interrupted, resumed, completed');
  }, 30_000);

  it('AI SDK, a tool with needsApproval answered by a tool-approval-response and run again', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_tmp', name: 'deleteFile', args: { path: '/tmp/cache.db' } }], usage: { input: 60, output: 30 } });
    fake.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Deleted /tmp/cache.db.', usage: { input: 120, output: 14 } });
    const recorded = recordedPlugin('compare-ai-sdk-resumed');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'cleanup-9' });
    const deleteFile = aiTool({ description: 'Delete a file', inputSchema: z.object({ path: z.string() }), needsApproval: true, execute: async ({ path: file }) => `deleted ${file}` });
    const model = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o');
    const messages: ModelMessage[] = [{ role: 'user', content: 'Delete /tmp/cache.db' }];
    const first = await generateText({ model, messages, tools: { deleteFile }, stopWhen: stepCountIs(3) });
    const [request] = first.content.filter((part) => part.type === 'tool-approval-request') as unknown as { approvalId: string }[];
    messages.push(...first.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: true }] });
    expect((await generateText({ model, messages, tools: { deleteFile }, stopWhen: stepCountIs(3) })).text).toBe('Deleted /tmp/cache.db.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    // The first call returns with the request pending: its turn paused for the approval, as the other frameworks' do.
    await expectOneRunTwoWays(filesOf(recorded.dir), 'deleteFile: once', '“Delete /tmp/cache.db”: interrupted, resumed, completed');
  }, 30_000);
});

describe('compare: one run with calls run out of the order asked, or not at all, its ATIF file against its ATOF file', () => {
  it('OpenAI Agents SDK: a handoff asked before a tool call that runs first; the agent handed to starts with no user message of its own', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }, { id: 'call_clock', name: 'clock', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [{ text: 'Your invoice is settled.', usage: { input: 80, output: 6 } }],
    });
    const recorded = recordedPlugin('compare-handoff-order');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const clock = tool({ name: 'clock', description: 'The time', parameters: z.object({}), execute: async () => '12:00' });
    const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4.1'), handoffDescription: 'Billing' });
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4.1-mini'), tools: [clock], handoffs: [billing] });
    expect((await run(triage, 'Is my invoice settled?')).finalOutput).toBe('Your invoice is settled.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    // The ATOF file has the calls in the order they ran (the clock first); the answer asked for the handoff first.
    const ran = all(await viewed(files.atof)).filter((candidate) => candidate.kind === 'tool').map((candidate) => candidate.title);
    expect(ran).toEqual(['tool clock', 'tool transfer_to_billing']);
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
  }, 30_000);

  it('LangChain humanInTheLoopMiddleware: a rejected call sends the answer back to the model, so the approved call and one that needed no approval never run', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({
        id: 'chatcmpl-m1',
        model: 'gpt-4.1-2025-04-14',
        content: null,
        toolCalls: [
          { id: 'call_ls', name: 'list', args: { path: '/tmp' } },
          { id: 'call_rm_a', name: 'remove', args: { path: '/tmp/a' } },
          { id: 'call_rm_b', name: 'remove', args: { path: '/tmp/b' } },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 20 },
      }),
      chatCompletion({ id: 'chatcmpl-m2', model: 'gpt-4.1-2025-04-14', content: 'I left /tmp/b alone.', usage: { prompt_tokens: 90, completion_tokens: 7 } }),
    ]);
    const agent = removeFileAgent(fetch, { withList: true });
    const recorded = recordedPlugin('compare-hitl-rejected');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'cleanup-10' } };
    expect((await agent.invoke({ messages: [{ role: 'user', content: 'Clean /tmp' }] }, config)).__interrupt__).toBeDefined();
    const second = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }, { type: 'reject', message: 'Keep b.' }] } }), config);
    const answered = (second.messages as { tool_call_id?: string }[]).map((message) => message.tool_call_id).filter(Boolean);
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    // What the framework did: only the rejection reached the model; neither other call ran.
    expect(answered).toEqual(['call_rm_b']);
    for (const [kind, file] of Object.entries(files)) {
      const notes = all(await viewed(file)).filter((candidate) => candidate.kind === 'tool').map((candidate) => `${candidate.title}: ${candidate.note ?? ''}`);
      expect(notes.sort(), kind).toEqual(['tool list: {"path":"/tmp"} · not run', 'tool remove: {"path":"/tmp/a"} · not run', 'tool remove: {"path":"/tmp/b"}']);
    }
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
  }, 30_000);
});

describe('compare: a call a person edited before it ran', () => {
  /** LangChain's humanInTheLoopMiddleware asking about `remove /tmp/a`: approved as asked, or edited to `/tmp/b`. */
  async function removeRun(label: string, edit: boolean): Promise<{ atif: string; atof: string }> {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-e1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_rm', name: 'remove', args: { path: '/tmp/a' } }], usage: { prompt_tokens: 40, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-e2', model: 'gpt-4.1-2025-04-14', content: 'Done.', usage: { prompt_tokens: 80, completion_tokens: 2 } }),
    ]);
    const ran: string[] = [];
    const agent = removeFileAgent(fetch, { remove: async (file) => (ran.push(file), 'removed'), removeNeeds: { allowedDecisions: ['approve', 'edit'] } });
    const recorded = recordedPlugin(label);
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: label } };
    await agent.invoke({ messages: [{ role: 'user', content: 'Remove /tmp/a' }] }, config);
    const decision = edit ? { type: 'edit', editedAction: { name: 'remove', args: { path: '/tmp/b' } } } : { type: 'approve' };
    await agent.invoke(new Command({ resume: { decisions: [decision] } }), config);
    expect(ran).toEqual([edit ? '/tmp/b' : '/tmp/a']);
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    return filesOf(recorded.dir);
  }

  it('the arguments are what the model asked for from either file; what the call ran with, where a person edited it, is compared where both files record it (ATOF) and said where one does', async () => {
    const edited = await removeRun('compare-edited', true);
    const asked = await removeRun('compare-as-asked', false);
    const report = await compared(edited.atif, edited.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
    expect(report.onlyRecorded.find((note) => note.fact === 'input')).toEqual({ fact: 'input', run: 'b', values: ['remove: {"path":"/tmp/b"}'] });
    expect(differencesOf(await compared(asked.atof, edited.atof))).toEqual(['tool.input remove: null → [object Object]']);
    expect((await cliInProcess(['compare', asked.atof, edited.atof])).stdout).toContain('remove input: (none) → {"path":"/tmp/b"}');
    // A trajectory keeps what the model asked for: two ATIF files of these runs cannot tell them apart.
    expect(differencesOf(await compared(asked.atif, edited.atif))).toEqual([]);
  }, 30_000);
});

describe('compare: approval decisions', () => {
  /** One refund run: approved or rejected when asked, or with a tool that needs no approval. */
  async function refundRun(label: string, decision: 'approve' | 'reject' | 'unasked'): Promise<{ atif: string; atof: string }> {
    const needsApproval = decision !== 'unasked';
    useTracing('tracing off');
    api.load({
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { text: 'Refunded INV-7.', usage: { input: 150, output: 9 } },
      ],
    });
    const recorded = recordedPlugin(label);
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const issueRefund = tool({ name: 'issue_refund', description: 'Refund an invoice', parameters: z.object({ invoice: z.string() }), needsApproval, execute: async ({ invoice }) => `Refunded ${invoice}` });
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'), tools: [issueRefund] });
    let result = await run(refunds, 'Refund INV-7, please.');
    if (needsApproval) {
      if (decision === 'approve') result.state.approve(result.state.getInterruptions()[0]!);
      else result.state.reject(result.state.getInterruptions()[0]!);
      result = await run(refunds, result.state);
    }
    expect(result.finalOutput).toBe('Refunded INV-7.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    return filesOf(recorded.dir);
  }

  it('a call approved when asked against the same call asked of nobody: the ATOF files differ in that decision; the ATIF files, which record none, do not', async () => {
    const asked = await refundRun('compare-asked', 'approve');
    const unasked = await refundRun('compare-unasked', 'unasked');
    const differences = async (a: string, b: string) => differencesOf(await compared(a, b));
    // The asked run paused for the decision and resumed: its turn ended so, the other's did not.
    expect(await differences(asked.atof, unasked.atof)).toEqual(['turn: interrupted, resumed, completed → completed', 'tool.approval issue_refund: once → none']);
    expect(await differences(asked.atif, unasked.atif)).toEqual([]);
    const text = (await cliInProcess(['compare', asked.atof, unasked.atof])).stdout;
    expect(text).toContain('issue_refund approval: once → none');
  }, 30_000);

  it('a call approved against the same call rejected: the decision and the outcome of the call differ, the denial printed once', async () => {
    const approved = await refundRun('compare-approved', 'approve');
    const rejected = await refundRun('compare-rejected', 'reject');
    const denial = 'Tool execution was not approved.';
    const outcome = [`tool.result issue_refund: Refunded INV-7 → ${denial}`, `tool.error issue_refund: null → denied: ${denial}`];
    expect(differencesOf(await compared(approved.atof, rejected.atof))).toEqual([...outcome, 'tool.approval issue_refund: once → deny']);
    expect(differencesOf(await compared(approved.atif, rejected.atif))).toEqual(outcome);
    // The result of a denied call is what its error says (what the model was told): one line, each side's outcome.
    for (const [a, b] of [[approved.atof, rejected.atof], [approved.atif, rejected.atif], [rejected.atif, approved.atof]] as const) {
      const page = path.join(tempDir(), 'compare.html');
      const text = (await cliInProcess(['compare', a, b, '--html', page])).stdout;
      expect(text.split(denial)).toHaveLength(2);
      expect(text).toMatch(a === rejected.atif ? /issue_refund outcome: denied: Tool execution was not approved\. → Refunded INV-7\n/ : /issue_refund outcome: Refunded INV-7 → denied: Tool execution was not approved\.\n/);
      const html = readFileSync(page, 'utf8');
      const rows = [...html.matchAll(/<ul class="diffs">(.*?)<\/ul>/g)].map((match) => match[1]).join('');
      expect(rows.split(denial)).toHaveLength(2);
      // The page says what only one file records, as the terminal does.
      if (a === rejected.atif) expect(html).toMatch(/<p class="muted" id="only-recorded">only b(&#39;|&#x27;|')s file records approval decisions \(not compared\): issue_refund: once/);
    }
  }, 30_000);
});

describe('view: a denial that is not carried by a failed call', () => {
  it("a host's command approval denied by a policy: the mark is the error, and says who denied it and what they said", async () => {
    const recorded = recordedPlugin('view-host-command-denied');
    const { hooks } = recorded;
    const base = { session_id: 'sess-deny', turn_id: 't1' };
    hooks.emit('on_session_start', { session_id: 'sess-deny', model: 'gpt-4o-mini', platform: 'cli' } as never);
    hooks.emit('pre_llm_call', { ...base, user_message: 'Clean my home folder' } as never);
    hooks.emit('pre_approval_request', { ...base, command: 'rm -rf /home/alice', reason: 'deletes a home folder' } as never);
    hooks.emit('post_approval_response', { ...base, choice: 'deny', decided_by: 'command policy', description: 'Deleting a home folder is not allowed.' } as never);
    hooks.emit('post_llm_call', { ...base, assistant_response: 'I did not delete it.' } as never);
    hooks.emit('on_session_end', { session_id: 'sess-deny' } as never);
    hooks.emit('on_session_finalize', { session_id: 'sess-deny' } as never);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    // No model call: no trajectory is written, the ATOF file records the decision.
    const atof = path.join(recorded.dir, 'atof', readdirSync(path.join(recorded.dir, 'atof'))[0]!);
    const marks = all(await viewed(atof)).filter((candidate) => candidate.kind === 'mark' && candidate.title.startsWith('approval'));
    expect(marks.map((mark) => [mark.title, mark.error])).toEqual([
      ['approval requested', undefined],
      ['approval: deny', 'denied by command policy · Deleting a home folder is not allowed.'],
    ]);
    const text = (await cliInProcess(['view', atof])).stdout;
    expect(text).toMatch(/✗ approval: deny +ERROR denied by command policy · Deleting a home folder is not allowed\./);
  }, 30_000);
});
