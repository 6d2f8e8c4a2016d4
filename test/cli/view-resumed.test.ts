// `view` of a run paused for a tool approval and resumed, read from its ATOF
// file and from its trajectory: the real OpenAI Agents SDK (`needsApproval`,
// `state.approve` / `state.reject`, `run(agent, result.state)`) on the
// Responses API, served on loopback. The user asked once: the resumed run is
// the turn it resumed, as the trajectory's one user step says (the hooks give
// it a turn of its own, a new turn id without a user message), and the next
// message the user sends is turn 2, from either file. Row by row the two
// readings are the same but for durations, and the approval marks, which only
// the ATOF file records.
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, OpenAIResponsesModel, run, tool, type AgentInputItem } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { AtofIndex } from '../../src/cli/view/atof-index.ts';
import { detailOf } from '../../src/cli/view/detail.ts';
import { expectNothingLost, recordedPlugin, rowWithoutDuration } from '../adapters/support.ts';
import { useTracing } from '../adapters/openai-agents/support.ts';
import { FakeOpenAI } from '../adapters/openai-agents/wire.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { compared, differencesOf } from './compare-json.ts';
import { cliInProcess, tempDir } from './support.ts';
import { all, filesOf, viewed } from './view-json.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const api = new FakeOpenAI();
let server: { url: string; close(): Promise<void> };
let uninstall: (() => void) | undefined;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
  useTracing('tracing on');
});

const refund = tool({ name: 'issue_refund', description: 'Refund an invoice', parameters: z.object({ invoice: z.string() }), needsApproval: true, execute: async ({ invoice }) => `Refunded ${invoice}` });
const cancel = tool({ name: 'cancel_order', description: 'Cancel an order', parameters: z.object({ order: z.number() }), needsApproval: true, execute: async ({ order }) => `Cancelled ${order}` });

/** The refunds agent on the Responses API at the loopback server. */
function refundsAgent(): Agent {
  const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
  return new Agent({ name: 'refunds', instructions: 'You issue refunds and cancel orders.', model: new OpenAIResponsesModel(client, 'gpt-4.1'), tools: [refund, cancel] });
}

/**
 * `view`'s rows of a file, each without its time, duration and tree branch, in order; what only the ATOF file records
 * left out: the approval marks, and why a call did not run (it waits for approval).
 */
async function rowsOf(file: string): Promise<string[]> {
  const result = await cliInProcess(['view', file]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .split('\n')
    .filter((line) => /^ {10}session |[├└]─ /.test(line))
    .map((line) => rowWithoutDuration(line.trim()).replace(' · not run: waiting for approval', ' · not run'))
    .filter((row) => !row.startsWith('approval'));
}

/** The titles `view --html` draws, in order, approval marks left out. */
async function htmlTitlesOf(file: string): Promise<string[]> {
  const page = path.join(tempDir('nrh-view-resumed-'), 'page.html');
  expect((await cliInProcess(['view', file, '--html', page])).code).toBe(0);
  return [...readFileSync(page, 'utf8').matchAll(/<span class="title">([^<]*)<\/span>/g)].map((match) => match[1]!).filter((title) => !title.startsWith('approval'));
}

/** The turn rows of `view --json`: title and note. */
async function turnsOf(file: string): Promise<[string, string | undefined][]> {
  return all(await viewed(file))
    .filter((row) => row.kind === 'turn')
    .map((row) => [row.title, row.note]);
}

/** Both files read the same: `view`'s rows, `--html`'s titles, `--json`'s turns. */
async function expectOneReading(files: { atif: string; atof: string }): Promise<string[]> {
  const rows = await rowsOf(files.atif);
  expect(await rowsOf(files.atof)).toEqual(rows);
  expect(await htmlTitlesOf(files.atof)).toEqual(await htmlTitlesOf(files.atif));
  expect(await turnsOf(files.atof)).toEqual(await turnsOf(files.atif));
  return rows;
}

describe('view: a run paused for an approval and resumed reads as one turn from its ATOF file and its trajectory', () => {
  it('OpenAI Agents SDK: paused twice (an approval, then a rejection), resumed each time, then a second message: turn 1 holds the three runs, the message is turn 2', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { calls: [{ id: 'call_cancel', name: 'cancel_order', args: { order: 42 } }], usage: { input: 150, output: 12 } },
        { text: 'Refunded INV-7; order 42 stays.', usage: { input: 190, output: 11 } },
        { text: 'You are welcome.', usage: { input: 220, output: 5 } },
      ],
    });
    const recorded = recordedPlugin('view-resumed-twice');
    // One conversation, the host's session: the message after the run is a turn of it.
    uninstall = instrumentOpenAIAgents(recorded.hooks, { sessionScope: 'host', sessionId: 'support-7' });
    recorded.hooks.emit('on_session_start', { session_id: 'support-7', platform: 'support-desk' });
    const agent = refundsAgent();
    const first = await run(agent, 'Refund INV-7 and cancel order 42, please.');
    first.state.approve(first.state.getInterruptions()[0]!);
    const second = await run(agent, first.state);
    expect(second.interruptions.map((item) => item.name)).toEqual(['cancel_order']);
    second.state.reject(second.state.getInterruptions()[0]!);
    const third = await run(agent, second.state);
    expect(third.finalOutput).toBe('Refunded INV-7; order 42 stays.');
    const thanks = await run(agent, [...third.history, { role: 'user', content: 'Thanks!' } as AgentInputItem]);
    expect(thanks.finalOutput).toBe('You are welcome.');
    recorded.hooks.emit('on_session_finalize', { session_id: 'support-7', reason: 'user_left' });
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    // The hooks started a turn per run: the first three runs answered one user message.
    const turnStarts = readFileSync(files.atof, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((event) => event.name === 'hermes.turn.start');
    expect(turnStarts.map((event) => event.data.user_message)).toEqual(['Refund INV-7 and cancel order 42, please.', '', '', 'Thanks!']);
    expect(new Set(turnStarts.map((event) => event.metadata.turn_id)).size).toBe(4);

    const rows = await expectOneReading(files);
    expect(rows.filter((row) => row.startsWith('turn '))).toEqual([
      'turn 1  450 in / 37 out  Σ 1 error  “Refund INV-7 and cancel order 42, please.”',
      'turn 2  220 in / 5 out  “Thanks!”',
    ]);
    // Each call under the model call that asked for it, in turn 1; the rejected one failed, as the SDK told the model.
    expect(rows.slice(1, 7).map((row) => row.replace(/ {2}.*/, ''))).toEqual(['turn 1', ...['tool issue_refund', '✗ tool cancel_order', undefined].flatMap((call) => ['LLM gpt-4.1-2025-04-14 (asked gpt-4.1)', ...(call === undefined ? [] : [call])])]);

    // The ATOF turn keeps its id and its resumed runs' (`--json`, the details pane), and how each run ended (compare).
    const ids = turnStarts.map((event) => event.metadata.turn_id as string);
    const atof = all(await viewed(files.atof)).filter((row) => row.kind === 'turn');
    expect(atof.map((row) => row.id)).toEqual([ids[0], ids[3]]);
    const index = new AtofIndex(files.atof);
    index.readOn(Buffer.byteLength(readFileSync(files.atof)));
    const liveTurn = all(index.tree(index.sessions[0]!) as never).find((row) => row.kind === 'turn')!;
    expect(liveTurn.title).toBe('turn 1');
    expect(detailOf(liveTurn as never).sections[0]).toEqual({
      title: 'Id',
      type: 'facts',
      facts: [
        ['turn id', ids[0]],
        ['resumed as turn id', ids[1]],
        ['resumed as turn id', ids[2]],
      ],
    });
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.onlyRecorded.filter((fact) => fact.fact === 'turn')).toEqual([
      { fact: 'turn', run: 'b', values: ['“Refund INV-7 and cancel order 42, pleas…”: interrupted, resumed, interrupted, resumed, completed'] },
    ]);
  }, 30_000);

  it('OpenAI Agents SDK: paused and resumed, streamed, pausing again at the end (never resumed): one turn, interrupted, from either file', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-9' } }], usage: { input: 100, output: 14 } },
        { calls: [{ id: 'call_cancel', name: 'cancel_order', args: { order: 7 } }], usage: { input: 140, output: 12 } },
      ],
    });
    const recorded = recordedPlugin('view-resumed-paused-again');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = refundsAgent();
    const first = await run(agent, 'Refund INV-9 and cancel order 7.', { stream: true });
    await first.completed;
    first.state.approve(first.state.getInterruptions()[0]!);
    const second = await run(agent, first.state, { stream: true });
    await second.completed;
    expect(second.interruptions.map((item) => item.name)).toEqual(['cancel_order']);
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const rows = await expectOneReading(files);
    // The last run paused: the turn says so, from either file; the call it waits for did not run.
    expect(rows.filter((row) => row.startsWith('turn '))).toEqual(['turn 1  240 in / 26 out  “Refund INV-9 and cancel order 7.” · interrupted']);
    expect(rows.filter((row) => row.startsWith('tool '))).toEqual(['tool issue_refund  {"invoice":"INV-9"}', 'tool cancel_order  {"order":7} · not run']);
  }, 30_000);
});
