// OpenAI hosted MCP under `require_approval`, in the three framework adapters.
// OpenAI answers the first request with an `mcp_approval_request` item instead
// of calling the server's tool; the program (or the Agents SDK's `onApproval`)
// answers with an `mcp_approval_response` in the next request; approved, OpenAI
// runs the call (`mcp_call`, naming the request in `approval_request_id`) in
// the response to that request; denied, it runs nothing and the model answers
// without it. Programs as each framework's docs write them, the real provider
// clients against a fake fetch speaking OpenAI's Responses JSON and SSE.
//
// What must be recorded (docs/adapters/README.md, "Tools the provider runs"):
// the asking step's tool call under the request's id and the server's tool's
// name, with its arguments and `provider_approval_request: true` (not
// `provider_executed`: nothing ran); the request and the decision as an
// approval of that id (`pre_approval_request`, `post_approval_response` with
// `once` or `deny`, the reason given, `decided_by: "onApproval"` when the
// Agents SDK's `onApproval` decided); approved, the call OpenAI ran as a
// hosted call of the next step whose `approval_request_id` names the request;
// no tool hook, no tool span; `view` says the truth of both calls; native
// writes the same files.
import { describe, expect, it } from 'vitest';
import { generateText, streamText, wrapLanguageModel, type ModelMessage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, hostedMcpTool, OpenAIProvider, Runner, type RunToolApprovalItem } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { aiSdkMiddleware, instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { mcpApprovalRequestItem, mcpCallItem, openAiResponse, openAiResponseStream, scriptedFetch } from '../support/provider-wire.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { instrumentEachTest, useTracing } from './openai-agents/support.ts';
import { FakeOpenAI } from './openai-agents/wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { all, filesOf, viewed } from '../cli/view-json.ts';
import { expectNothingLost, finishedRun, recordedPlugin, type Recorded } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

type Step = Record<string, any>;

const SERVER = { label: 'dice', url: 'https://dice.example/mcp' };
const REQUEST_ID = 'mcpr_68a1';
const CALL_ID = 'mcp_68a1';
const ARGS = { sides: 6 };
const ASKED = [mcpApprovalRequestItem(REQUEST_ID, SERVER.label, 'roll', ARGS)];
const RAN = [mcpCallItem(CALL_ID, SERVER.label, 'roll', ARGS, { output: '4' }, REQUEST_ID)];
const ROLLED = 'You rolled a 4.';
const REFUSED = 'I was not allowed to roll the die.';
const REASON = 'no dice today';

interface Case {
  approved: boolean;
  /** The reason the program gave and the provider was sent, when it was. */
  reason?: string;
  /** Who decided, when not a person. */
  decidedBy?: string;
}

/** The approval flow's trajectory: one session, the asking step, the decision, and (approved) the call OpenAI ran. */
async function checkApproval(recorded: Recorded, want: Case): Promise<void> {
  const { doc, agent } = await finishedRun(recorded);
  expect(agent).toHaveLength(2);
  // The model asked for the server's tool: a call of its step, under the request's id, that ran nothing.
  const asked = agent[0]!.tool_calls as Step[];
  expect(asked).toHaveLength(1);
  expect(asked[0]).toMatchObject({ tool_call_id: REQUEST_ID, function_name: 'roll', arguments: ARGS });
  expect(asked[0]!.extra?.provider_approval_request).toBe(true);
  expect(asked[0]!.extra?.provider_executed).toBeUndefined();
  expect(asked[0]!.extra?.provider_result).toBeUndefined();
  // Approved: OpenAI ran it in the next response, one hosted call linked to the request. Denied: nothing ran.
  const ran = (agent[1]!.tool_calls ?? []) as Step[];
  expect(agent[1]!.message).toBe(want.approved ? ROLLED : REFUSED);
  if (want.approved) {
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatchObject({ tool_call_id: CALL_ID, function_name: 'roll', arguments: ARGS });
    expect(ran[0]!.extra).toMatchObject({ provider_executed: true, approval_request_id: REQUEST_ID });
    expect(JSON.stringify(ran[0]!.extra.provider_result)).toContain('"output":"4"');
  } else expect(ran).toEqual([]);
  // The request and the decision, once each, as an approval of the request's id.
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_approval_request').map((entry) => entry.payload as Step);
  const answers = recorded.log.filter((entry) => entry.hook === 'post_approval_response').map((entry) => entry.payload as Step);
  expect(requests.map((payload) => payload.tool_call_id)).toEqual([REQUEST_ID]);
  expect(requests[0]!.command).toBe(JSON.stringify(ARGS));
  expect(answers).toHaveLength(1);
  expect(answers[0]).toMatchObject({ tool_call_id: REQUEST_ID, choice: want.approved ? 'once' : 'deny' });
  expect(answers[0]!.description).toBe(want.reason);
  expect(answers[0]!.decided_by).toBe(want.decidedBy);
  // The request comes with the response that asked, the decision before the request that carries it.
  const order = recorded.log.map((entry) => entry.hook).filter((hook) => ['post_api_request', 'pre_approval_request', 'post_approval_response', 'pre_api_request'].includes(hook));
  expect(order).toEqual(['pre_api_request', 'post_api_request', 'pre_approval_request', 'post_approval_response', 'pre_api_request', 'post_api_request']);
  // Nothing ran in the program.
  expect(recorded.log.filter((entry) => entry.hook === 'pre_tool_call' || entry.hook === 'post_tool_call')).toEqual([]);
  expect((doc.steps as Step[]).some((step) => step.observation !== undefined)).toBe(false);
  await expectView(recorded, want);
  await sameOnNative(recorded);
}

/** `view` of either file: the asked call is not "run by the provider"; the call OpenAI ran is. */
async function expectView(recorded: Recorded, want: Case): Promise<void> {
  const files = filesOf(recorded.dir);
  const expected: Array<[string, RegExp]> = [
    ['tool roll', want.approved ? /^approved: run by the provider in the next model call$/ : /^not run: approval denied$/],
    ...(want.approved ? ([['tool roll', /^run by the provider$/]] as Array<[string, RegExp]>) : []),
  ];
  // The ATIF file keeps no approvals: what it says of the asked call is what its steps say.
  const atifExpected: Array<[string, RegExp]> = [['tool roll', want.approved ? /^approved: run by the provider in the next model call$/ : /^not run: the provider asked for approval$/], ...expected.slice(1)];
  for (const [file, wanted] of [
    [files.atif, atifExpected],
    [files.atof, expected],
  ] as const) {
    const tools = all(await viewed(file)).filter((node) => node.kind === 'tool');
    expect(tools.map((node) => node.title.split(':')[0]), file).toEqual(wanted.map(([title]) => title));
    tools.forEach((node, i) => expect(node.note?.split(' · ').at(-1), `${file} ${i}`).toMatch(wanted[i]![1]));
  }
}

const CASES: Array<{ label: string; approved: boolean }> = [
  { label: 'approved', approved: true },
  { label: 'denied', approved: false },
];

describe('hosted MCP approval: the AI SDK', () => {
  for (const { label, approved } of CASES) {
    for (const stream of [false, true]) {
      it(`openai.tools.mcp({ requireApproval: 'always' }), ${label}, ${stream ? 'streamText' : 'generateText'}`, async () => {
        const fake = new FakeProvider()
          .reply('responses', { id: 'resp_1', model: 'gpt-4.1-2025-04-14', hostedItems: ASKED, usage: { input: 900, output: 30 } }, { stream })
          .reply('responses', { id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: approved ? ROLLED : REFUSED, hostedItems: approved ? RAN : [], usage: { input: 950, output: 20 } }, { stream });
        const recorded = recordedPlugin('hosted-mcp-approval-ai-sdk');
        const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `mcp-approval-${label}-${stream}` });
        try {
          const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
          const tools = { dice: openai.tools.mcp({ serverLabel: SERVER.label, serverUrl: SERVER.url, requireApproval: 'always' }) };
          const messages: ModelMessage[] = [{ role: 'user', content: 'Roll a die.' }];
          // The SDK's approval flow: the step stops with `tool-approval-request` parts; the program answers them in the next call.
          const ask = async () => {
            if (!stream) return await generateText({ model: openai('gpt-4.1'), messages, tools });
            const result = streamText({ model: openai('gpt-4.1'), messages, tools });
            await result.consumeStream();
            return { content: await result.content, response: await result.response, text: await result.text };
          };
          const first = await ask();
          const requests = first.content.filter((part) => part.type === 'tool-approval-request');
          expect(requests).toHaveLength(1);
          // A provider-executed call's answer says so: the SDK sends only those to the provider.
          const answer = (approvalId: string) => ({ type: 'tool-approval-response' as const, approvalId, approved, providerExecuted: true, ...(approved ? {} : { reason: REASON }) });
          messages.push(...first.response.messages, { role: 'tool', content: requests.map((request) => answer(request.approvalId)) });
          const second = await ask();
          expect(second.text).toBe(approved ? ROLLED : REFUSED);
          expect(fake.requests).toHaveLength(2);
            expect(fake.requests[1]!.body.input).toContainEqual({ type: 'mcp_approval_response', approval_request_id: REQUEST_ID, approve: approved });
        } finally {
          uninstall();
        }
        // The program's reason is its answer's; the OpenAI package does not send it on.
        await checkApproval(recorded, { approved, ...(approved ? {} : { reason: REASON }) });
      });
    }
  }
});

describe('hosted MCP approval: aiSdkMiddleware alone', () => {
  for (const { label, approved } of CASES) {
    for (const stream of [false, true]) {
      it(`wrapLanguageModel with openai.tools.mcp({ requireApproval: 'always' }), ${label}, ${stream ? 'streamText' : 'generateText'}`, async () => {
        const fake = new FakeProvider()
          .reply('responses', { id: 'resp_1', model: 'gpt-4.1-2025-04-14', hostedItems: ASKED, usage: { input: 900, output: 30 } }, { stream })
          .reply('responses', { id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: approved ? ROLLED : REFUSED, hostedItems: approved ? RAN : [], usage: { input: 950, output: 20 } }, { stream });
        const recorded = recordedPlugin('hosted-mcp-approval-ai-sdk-mw');
        const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
        const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: `mcp-approval-mw-${label}-${stream}` }) });
        const tools = { dice: openai.tools.mcp({ serverLabel: SERVER.label, serverUrl: SERVER.url, requireApproval: 'always' }) };
        const messages: ModelMessage[] = [{ role: 'user', content: 'Roll a die.' }];
        const ask = async () => {
          if (!stream) return await generateText({ model, messages, tools });
          const result = streamText({ model, messages, tools });
          await result.consumeStream();
          return { content: await result.content, response: await result.response, text: await result.text };
        };
        const first = await ask();
        const requests = first.content.filter((part) => part.type === 'tool-approval-request');
        const answer = (approvalId: string) => ({ type: 'tool-approval-response' as const, approvalId, approved, providerExecuted: true, ...(approved ? {} : { reason: REASON }) });
        messages.push(...first.response.messages, { role: 'tool', content: requests.map((request) => answer(request.approvalId)) });
        expect((await ask()).text).toBe(approved ? ROLLED : REFUSED);
        // The model calls are all the middleware sees: the approval is what the prompt carried to the provider.
        await checkApproval(recorded, { approved, ...(approved ? {} : { reason: REASON }) });
      });
    }
  }
});

describe('hosted MCP approval: the OpenAI Agents SDK', () => {
  const instrument = instrumentEachTest();
  for (const { label, approved } of CASES) {
    for (const decider of ['onApproval', 'interruption'] as const) {
      for (const stream of [false, true]) {
        it(`hostedMcpTool({ requireApproval: 'always' }) ${decider === 'onApproval' ? 'with onApproval' : 'without onApproval (state.approve/reject)'}, ${label}, run(${stream ? '{ stream: true }' : ''})`, async () => {
          useTracing('tracing off');
          const api = new FakeOpenAI({
            'gpt-4.1': [
              { hostedItems: ASKED, usage: { input: 900, output: 30 } },
              { text: approved ? ROLLED : REFUSED, hostedItems: approved ? RAN : [], usage: { input: 950, output: 20 } },
            ],
          });
          const recorded = recordedPlugin('hosted-mcp-approval-agents');
          instrument(recorded.hooks);
          const onApproval = async (_context: unknown, item: RunToolApprovalItem) => {
            expect(item.name).toBe('roll');
            return approved ? { approve: true } : { approve: false, reason: REASON };
          };
          const dice = hostedMcpTool({ serverLabel: SERVER.label, serverUrl: SERVER.url, requireApproval: 'always', ...(decider === 'onApproval' ? { onApproval } : {}) });
          const agent = new Agent({ name: 'Helper', instructions: 'Use your tools.', model: 'gpt-4.1', tools: [dice] });
          const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: api.client() }) });
          const go = async (input: Parameters<typeof runner.run>[1]) => {
            if (!stream) return await runner.run(agent, input);
            const result = await runner.run(agent, input, { stream: true });
            await result.completed;
            return result;
          };
          let result = await go('Roll a die.');
          if (decider === 'interruption') {
            // The docs' human in the loop: the run stops with the request; the program decides and runs the state again.
            expect(result.interruptions).toHaveLength(1);
            const [interruption] = result.interruptions;
            if (approved) result.state.approve(interruption!);
            else result.state.reject(interruption!, { message: REASON });
            // The paused turn says what it waits for: the request's id.
            const paused = recorded.log.filter((entry) => JSON.stringify(entry.payload).includes('"pending_approvals"'));
            expect(paused.length).toBeGreaterThan(0);
            for (const entry of paused) expect(JSON.stringify(entry.payload)).toContain(`"pending_approvals":["${REQUEST_ID}"]`);
            result = await go(result.state);
          }
          expect(result.finalOutput).toBe(approved ? ROLLED : REFUSED);
          expect(api.requests).toHaveLength(2);
          expect(api.requests[1]!.body.input).toContainEqual(expect.objectContaining({ type: 'mcp_approval_response', approval_request_id: REQUEST_ID, approve: approved }));
          const sent = (api.requests[1]!.body.input as Step[]).find((item) => item.type === 'mcp_approval_response');
          // What went to OpenAI (and so to the model) is what the approval response must say.
          await checkApproval(recorded, { approved, reason: sent?.reason ?? undefined, decidedBy: decider === 'onApproval' ? 'onApproval' : undefined });
          if (!approved && decider === 'onApproval') expect(sent?.reason).toBe(REASON);
        });
      }
    }
  }
});

describe('hosted MCP approval: LangChain', () => {
  for (const { label, approved } of CASES) {
    for (const stream of [false, true]) {
      it(`createAgent with ChatOpenAI and { type: 'mcp', require_approval: 'always' }, ${label}, ${stream ? 'streaming' : 'invoke'}`, async () => {
        const usage = (prompt_tokens: number, completion_tokens: number) => ({ prompt_tokens, completion_tokens });
        const replies = [
          { id: 'resp_1', model: 'gpt-4.1-2025-04-14', hostedItems: ASKED, usage: usage(900, 30) },
          { id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: approved ? ROLLED : REFUSED, hostedItems: approved ? RAN : [], usage: usage(950, 20) },
        ];
        const { fetch, requests } = scriptedFetch(replies.map((reply) => (stream ? openAiResponseStream(reply) : openAiResponse(reply))));
        const recorded = recordedPlugin('hosted-mcp-approval-lc');
        const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, useResponsesApi: true, streaming: stream, streamUsage: true, configuration: { fetch } });
        const agent = createAgent({ model, tools: [{ type: 'mcp', server_label: SERVER.label, server_url: SERVER.url, require_approval: 'always' }], checkpointer: new MemorySaver() });
        // One conversation: the thread both runs continue.
        const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: `mcp-approval-${label}-${stream}` } };
        const first = await agent.invoke({ messages: [new HumanMessage('Roll a die.')] }, config);
        // ChatOpenAI's docs: the request is among the AI message's `tool_outputs`; the answer is an `mcp_approval_response` block.
        const asked = first.messages.at(-1) as AIMessage;
        const request = (asked.additional_kwargs.tool_outputs as Step[]).find((item) => item.type === 'mcp_approval_request');
        expect(request?.id).toBe(REQUEST_ID);
        const answer = new HumanMessage({ content: [{ type: 'mcp_approval_response', approval_request_id: request!.id, approve: approved }] });
        const second = await agent.invoke({ messages: [answer] }, config);
        expect((second.messages.at(-1) as AIMessage).text).toBe(approved ? ROLLED : REFUSED);
        expect(requests).toHaveLength(2);
        expect(requests[1]!.body.input).toContainEqual({ type: 'mcp_approval_response', approval_request_id: REQUEST_ID, approve: approved });
        await checkApproval(recorded, { approved });
      });
    }
  }

  // ChatOpenAI's own docs call the bare model twice: two runs, two sessions, the request in the first, the answer and
  // the call OpenAI ran in the second, linked by the request's id.
  it('a bare ChatOpenAI with { type: "mcp", require_approval: "always" }, approved, invoke twice', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiResponse({ id: 'resp_1', model: 'gpt-4.1-2025-04-14', hostedItems: ASKED, usage: { prompt_tokens: 900, completion_tokens: 30 } }),
      openAiResponse({ id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: ROLLED, hostedItems: RAN, usage: { prompt_tokens: 950, completion_tokens: 20 } }),
    ]);
    const recorded = recordedPlugin('hosted-mcp-approval-lc-bare');
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, useResponsesApi: true, configuration: { fetch } }).bindTools([
      { type: 'mcp', server_label: SERVER.label, server_url: SERVER.url, require_approval: 'always' },
    ]);
    const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
    const history: Array<HumanMessage | AIMessage> = [new HumanMessage('Roll a die.')];
    const first = (await model.invoke(history, config)) as AIMessage;
    history.push(first, new HumanMessage({ content: [{ type: 'mcp_approval_response', approval_request_id: REQUEST_ID, approve: true }] }));
    expect(((await model.invoke(history, config)) as AIMessage).text).toBe(ROLLED);
    expect(requests[1]!.body.input).toContainEqual({ type: 'mcp_approval_response', approval_request_id: REQUEST_ID, approve: true });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(2);
    const calls = atif.map((doc) => (doc.steps as Step[]).filter((step) => step.source === 'agent').flatMap((step) => (step.tool_calls ?? []) as Step[]));
    expect(calls[0]).toMatchObject([{ tool_call_id: REQUEST_ID, function_name: 'roll', arguments: ARGS, extra: { provider_approval_request: true } }]);
    expect(calls[1]).toMatchObject([{ tool_call_id: CALL_ID, function_name: 'roll', extra: { provider_executed: true, approval_request_id: REQUEST_ID } }]);
    const approvals = recorded.log.filter((entry) => entry.hook.endsWith('_approval_request') || entry.hook.endsWith('_approval_response')).map((entry) => [entry.hook, (entry.payload as Step).tool_call_id, (entry.payload as Step).choice]);
    expect(approvals).toEqual([
      ['pre_approval_request', REQUEST_ID, undefined],
      ['post_approval_response', REQUEST_ID, 'once'],
    ]);
    await sameOnNative(recorded);
  });
});
