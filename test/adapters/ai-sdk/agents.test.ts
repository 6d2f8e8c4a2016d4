// The AI SDK's agent pages (node_modules/ai/docs/03-agents: building agents,
// subagents, tool approvals, loop control, call options) and the route
// helpers `createAgentUIStreamResponse` / `pipeAgentUIStreamToResponse`
// (07-reference/01-ai-sdk-core/18-*.mdx), taken as written: a Next.js-style
// `POST(req: Request)` or a Node `handler(req, res)` serving a
// `ToolLoopAgent`, driven by the SDK's own chat client (`AbstractChat`, what
// `useChat` wraps, with `DefaultChatTransport`), which sends the UI messages
// and reads the UI stream, answers approvals with `addToolApprovalResponse`
// and stops with `stop()`. The model is the real @ai-sdk/openai (Responses
// API) on a fake fetch speaking its SSE (wire.ts). What a reader of the files
// takes as true is checked against what the program got: one session per
// chat, the turn of each request, the sub-agent a tool ran (linked from the
// call, its tokens its own), what the model was told of it (`toModelOutput`),
// approvals granted and denied, why each run's loop stopped (`stoppedBy`),
// the instructions and model `prepareCall` chose.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DefaultChatTransport,
  Output,
  ToolLoopAgent,
  createAgentUIStreamResponse,
  generateText,
  isStepCount,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  pipeAgentUIStreamToResponse,
  readUIMessageStream,
  toUIMessageStream,
  tool,
  type LanguageModelUsage,
  type ModelMessage,
  type UIMessage,
} from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from '../support.ts';
import { Chat, until } from './chat-client.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Steps = AtifDoc[];
const model = 'gpt-4o-2024-08-06';
const tokens = (usages: LanguageModelUsage[]) => [usages.reduce((sum, one) => sum + (one.inputTokens ?? 0), 0), usages.reduce((sum, one) => sum + (one.outputTokens ?? 0), 0)];
const turnEnds = (recorded: Recorded, sessionId: string) =>
  recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === sessionId).map((entry) => [entry.payload.completed ? 'completed' : entry.payload.interrupted ? 'interrupted' : 'failed', entry.payload.turn_exit_reason]);

/**
 * The subagents page's streaming research tool: an agent's `stream()` in an
 * `async function*` execute, each accumulated UIMessage yielded to the UI,
 * and `toModelOutput` giving the parent's model only the last text.
 */
function researchTool(openai: ReturnType<typeof createOpenAI>, spent: LanguageModelUsage[]) {
  const researchSubagent = new ToolLoopAgent({
    model: openai('gpt-4o'),
    instructions: 'You are a research agent.\nSummarize your findings in your final response.',
    tools: {
      read: tool({ description: 'Read a file', inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => `export function loadConfig() {} // ${path}` }),
    },
  });
  return tool({
    description: 'Research a topic or question in depth.',
    inputSchema: z.object({ task: z.string().describe('The research task to complete') }),
    execute: async function* ({ task }, { abortSignal }) {
      const result = await researchSubagent.stream({ prompt: task, abortSignal });
      for await (const message of readUIMessageStream({ stream: toUIMessageStream({ stream: result.stream }) })) yield message;
      spent.push(await result.totalUsage);
    },
    toModelOutput: ({ output: message }) => {
      const lastTextPart = message?.parts.findLast((part) => part.type === 'text');
      return { type: 'text', value: lastTextPart?.text ?? 'Task completed.' };
    },
  });
}

describe('createAgentUIStreamResponse: a ToolLoopAgent route with a streaming sub-agent and tool approvals (useChat)', () => {
  it('one session for the chat; the sub-agent linked from its call with its own tokens; the model told the summary; approvals granted and denied; the first run stopped for them', async () => {
    const fake = new FakeProvider();
    fake
      .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_research', name: 'research', args: { task: 'Find the config loader' } }], usage: { input: 40, output: 10 } }, { stream: true })
      .reply('responses', { id: 'resp_s1', model, toolCalls: [{ id: 'call_read', name: 'read', args: { path: 'src/config.ts' } }], usage: { input: 20, output: 5 } }, { stream: true })
      .reply('responses', { id: 'resp_s2', model, text: 'The loader is loadConfig in src/config.ts.', usage: { input: 30, output: 8 } }, { stream: true })
      .reply('responses', {
        id: 'resp_2',
        model,
        toolCalls: [
          { id: 'call_build', name: 'runCommand', args: { command: 'rm -rf build' } },
          { id: 'call_root', name: 'runCommand', args: { command: 'rm -rf /' } },
        ],
        usage: { input: 60, output: 9 },
      }, { stream: true })
      .reply('responses', { id: 'resp_3', model, text: 'Removed build/; the other command was not approved.', usage: { input: 80, output: 4 } }, { stream: true });
    const requestContext = new AsyncLocalStorage<{ chatId: string }>();
    const recorded = recordedPlugin('ai-agent-route');
    // docs/adapters/ai-sdk.md, "Chat routes": the chat id of the request being served.
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: () => requestContext.getStore()?.chatId });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const subSpent: LanguageModelUsage[] = [];
    const mainSteps: LanguageModelUsage[] = [];
    const stopped: unknown[] = [];
    const ran: string[] = [];
    const agent = new ToolLoopAgent({
      model: openai('gpt-4o'),
      instructions: 'You are a helpful assistant that can delegate research tasks.',
      tools: {
        research: researchTool(openai, subSpent),
        runCommand: tool({ inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => (ran.push(command), `ran ${command}`) }),
      },
      toolApproval: { runCommand: 'user-approval' },
      onEnd: ({ stoppedBy }) => void stopped.push(stoppedBy),
    });

    async function POST(request: Request) {
      const { messages, id } = (await request.json()) as { messages: UIMessage[]; id: string };
      return requestContext.run({ chatId: id }, () =>
        createAgentUIStreamResponse({ agent, uiMessages: messages, abortSignal: request.signal, onStepEnd: ({ usage }) => void mainSteps.push(usage) }),
      );
    }
    const chat = new Chat({
      id: 'chat-1',
      // The route called as Next.js calls it, with the Request the client sends.
      transport: new DefaultChatTransport({ api: 'http://localhost/api/chat', fetch: (async (url: string, init: RequestInit) => await POST(new Request(url, init))) as typeof fetch }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'Find the config loader, then clean the build' });
    const asked = chat.lastMessage!.parts.filter((part) => part.type === 'tool-runCommand') as Array<{ toolCallId: string; state: string; approval: { id: string } }>;
    expect(asked.map((part) => [part.toolCallId, part.state])).toEqual([['call_build', 'approval-requested'], ['call_root', 'approval-requested']]);
    await chat.addToolApprovalResponse({ id: asked[0]!.approval.id, approved: true });
    await chat.addToolApprovalResponse({ id: asked[1]!.approval.id, approved: false, reason: 'not the root' });
    await until(() => fake.pending === 0 && chat.status === 'ready' && stopped.length === 2);
    expect(ran).toEqual(['rm -rf build']);
    expect(stopped).toEqual(['approval', 'model']);
    const research = chat.messages.flatMap((message) => message.parts).find((part) => part.type === 'tool-research') as { state: string; output: UIMessage };
    expect(research.state).toBe('output-available');
    // What the model was told of the research: the summary toModelOutput made, not the UI message.
    expect(fake.requests[3]!.body.input.filter((item: any) => item.type === 'function_call_output')).toEqual([
      { type: 'function_call_output', call_id: 'call_research', output: 'The loader is loadConfig in src/config.ts.' },
    ]);
    uninstall();
    uninstall = undefined;

    // Two POSTs, two turns of one session; the first paused for the approvals (no final answer, the calls not run:
    // interrupted, as every adapter's approval pause), naming the calls waiting; the second answered.
    expect(turnEnds(recorded, 'chat-1')).toEqual([['interrupted', 'approval_required'], ['completed', 'final_response']]);
    expect(recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === 'chat-1').map((entry) => entry.payload.pending_approvals)).toEqual([['call_build', 'call_root'], undefined]);
    expect(turnEnds(recorded, 'chat-1:sub:call_research')).toEqual([['completed', 'final_response']]);
    const approvals = recorded.log.filter((entry) => /approval|tool_call/.test(entry.hook) && entry.payload.session_id === 'chat-1').map((entry) => [entry.hook, entry.payload.tool_call_id, entry.payload.choice ?? entry.payload.status ?? null]);
    expect(approvals).toEqual([
      ['pre_tool_call', 'call_research', null],
      ['post_tool_call', 'call_research', 'ok'],
      ['pre_approval_request', 'call_build', null],
      ['pre_approval_request', 'call_root', null],
      ['post_approval_response', 'call_build', 'once'],
      ['post_approval_response', 'call_root', 'deny'],
      ['pre_tool_call', 'call_root', null],
      ['post_tool_call', 'call_root', 'denied'],
      ['pre_tool_call', 'call_build', null],
      ['post_tool_call', 'call_build', 'ok'],
    ]);

    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif.map((doc) => doc.session_id)).toEqual(['chat-1']);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const steps = doc.steps as Steps;
    // The resent conversation is history, the approvals no user step.
    expect(steps.filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['Find the config loader, then clean the build']);
    const agentSteps = steps.filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments]))).toEqual([
      [['call_research', 'research', { task: 'Find the config loader' }]],
      [['call_build', 'runCommand', { command: 'rm -rf build' }], ['call_root', 'runCommand', { command: 'rm -rf /' }]],
      [],
    ]);
    expect(agentSteps.map((step) => step.model_name)).toEqual([model, model, model]);
    expect(agentSteps.at(-1)!.message).toBe('Removed build/; the other command was not approved.');
    // The research call's outcome is what the model was told of it, the summary toModelOutput made of the last
    // UIMessage the tool yielded (the UI shows the message); linked to the sub-agent.
    const [researched] = agentSteps[0]!.observation.results as AtifDoc[];
    expect(researched!.content).toBe(fake.requests[3]!.body.input.find((item: any) => item.type === 'function_call_output' && item.call_id === 'call_research').output);
    expect(researched!.subagent_trajectory_ref).toEqual([expect.objectContaining({ session_id: 'chat-1:sub:call_research' })]);
    // The pause is on the step that asked, in ATIF too (which writes interrupted and failed turn ends only).
    expect(agentSteps.map((step) => (step.extra?.turn_ends ?? []).map((end: AtifDoc) => end.status))).toEqual([[], ['interrupted'], []]);
    const outcomes = (agentSteps[1]!.observation.results as AtifDoc[]).map((result) => [result.source_call_id, result.content, result.extra.metadata.status]);
    expect(outcomes).toEqual(expect.arrayContaining([['call_build', 'ran rm -rf build', 'ok'], ['call_root', 'not the root', 'denied']]));
    expect(outcomes).toHaveLength(2);

    // The sub-agent: its own prompt, steps and tokens, the SDK's totalUsage of its run.
    const sub = (doc.subagent_trajectories as AtifDoc[]).find((one) => one.session_id === 'chat-1:sub:call_research')!;
    expect(sub.trajectory_id).toBe(researched!.subagent_trajectory_ref[0].trajectory_id);
    expect((sub.steps as Steps).map((step) => [step.source, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
      ['user', 'Find the config loader', []],
      ['agent', '', ['call_read']],
      ['agent', 'The loader is loadConfig in src/config.ts.', []],
    ]);
    expect([sub.final_metrics.total_prompt_tokens, sub.final_metrics.total_completion_tokens]).toEqual(tokens(subSpent));
    // The parent's tokens are its own steps' (onStepEnd, both POSTs): the sub-agent's are not counted twice.
    expect(mainSteps).toHaveLength(3);
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual(tokens(mainSteps));
    expect(tokens(mainSteps)).toEqual([180, 23]);
    // The ATOF turn ends say why each run stopped.
    const ends = atof.filter((event) => event.kind === 'mark' && event.name === 'hermes.session.end').map((event) => event.data.turn_exit_reason);
    expect(ends).toEqual(expect.arrayContaining(['approval_required', 'final_response']));
    await sameOnNative(recorded);
  });

  it('the stop button while the sub-agent runs: the signal reaches it, both turns end interrupted, the research call is cut short', async () => {
    const fake = new FakeProvider();
    fake
      .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_research', name: 'research', args: { task: 'Find the config loader' } }], usage: { input: 40, output: 10 } }, { stream: true })
      .reply('responses', { id: 'resp_s1', model, text: 'Reading every file in the repository, one by one.', usage: { input: 20, output: 5 } }, { stream: true, hang: true });
    const requestContext = new AsyncLocalStorage<{ chatId: string }>();
    const recorded = recordedPlugin('ai-agent-route-stop');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: () => requestContext.getStore()?.chatId });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const aborted: string[] = [];
    const agent = new ToolLoopAgent({
      model: openai('gpt-4o'),
      instructions: 'You are a helpful assistant that can delegate research tasks.',
      tools: { research: researchTool(openai, []) },
      onAbort: () => void aborted.push('main'),
    });
    async function POST(request: Request) {
      const { messages, id } = (await request.json()) as { messages: UIMessage[]; id: string };
      return requestContext.run({ chatId: id }, () => createAgentUIStreamResponse({ agent, uiMessages: messages, abortSignal: request.signal }));
    }
    const chat = new Chat({
      id: 'chat-stop',
      transport: new DefaultChatTransport({ api: 'http://localhost/api/chat', fetch: (async (url: string, init: RequestInit) => await POST(new Request(url, init))) as typeof fetch }),
    });
    const sent = chat.sendMessage({ text: 'Find the config loader' });
    await until(() => JSON.stringify(chat.lastMessage?.parts ?? []).includes('Reading every file'));
    await chat.stop();
    await sent;
    await until(() => aborted.length === 1);
    uninstall();
    uninstall = undefined;

    expect(turnEnds(recorded, 'chat-stop:sub:call_research')).toEqual([['interrupted', 'interrupted']]);
    expect(turnEnds(recorded, 'chat-stop')).toEqual([['interrupted', 'interrupted']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif.map((doc) => doc.session_id)).toEqual(['chat-stop']);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const [call] = (doc.steps as Steps).flatMap((step) => step.observation?.results ?? []) as AtifDoc[];
    // The SDK ends the run on the abort, before the tool's own AbortError comes back (docs/adapters/ai-sdk.md, "Failures and aborts").
    expect([call!.source_call_id, call!.content]).toEqual(['call_research', 'RunEnded: the run ended (interrupted) before this finished']);
    const ended = recorded.log.find((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'call_research')!.payload;
    expect([ended.status, ended.error_type]).toEqual(['error', 'RunEnded']);
    expect(call!.subagent_trajectory_ref).toEqual([expect.objectContaining({ session_id: 'chat-stop:sub:call_research' })]);
    const sub = (doc.subagent_trajectories as AtifDoc[])[0]!;
    expect(sub.steps.at(-1).extra.turn_ends).toEqual([{ status: 'interrupted', timestamp: expect.any(String) }]);
    await sameOnNative(recorded);
  });
});

describe('pipeAgentUIStreamToResponse: call options, prepareCall and a stop condition', () => {
  it('the instructions and model prepareCall chose are the requests\'; a run isStepCount ended says so', async () => {
    const fake = new FakeProvider();
    const lookup = (id: string, query: string) => ({ id, name: 'lookupAccount', args: { query } });
    fake
      .reply('responses', { id: 'resp_1', model: 'gpt-4o-mini-2024-07-18', toolCalls: [lookup('call_plan', 'plan')], usage: { input: 30, output: 6 } }, { stream: true })
      .reply('responses', { id: 'resp_2', model: 'gpt-4o-mini-2024-07-18', toolCalls: [lookup('call_billing', 'billing')], usage: { input: 45, output: 7 } }, { stream: true });
    const recorded = recordedPlugin('ai-agent-pipe');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'support-user_123' });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const ended: Array<{ stoppedBy: unknown; finishReason: unknown; totalUsage: LanguageModelUsage }> = [];
    // The call options page's support agent, with its dynamic model selection.
    const supportAgent = new ToolLoopAgent({
      model: openai('gpt-4o'),
      callOptionsSchema: z.object({ userId: z.string(), accountType: z.enum(['free', 'pro', 'enterprise']), complexity: z.enum(['simple', 'complex']) }),
      instructions: 'You are a helpful customer support agent.',
      tools: { lookupAccount: tool({ inputSchema: z.object({ query: z.string() }), execute: async ({ query }) => `${query}: free tier` }) },
      stopWhen: isStepCount(2),
      prepareCall: ({ options, ...settings }) => ({
        ...settings,
        model: options.complexity === 'simple' ? openai('gpt-4o-mini') : openai('gpt-4o'),
        instructions: `${settings.instructions}\nUser context:\n- Account type: ${options.accountType}\n- User ID: ${options.userId}\n\nAdjust your response based on the user's account level.`,
      }),
      onEnd: ({ stoppedBy, finishReason, totalUsage }) => void ended.push({ stoppedBy, finishReason, totalUsage }),
    });
    // The reference page's Node handler, behind node:http.
    async function handler(req: IncomingMessage & { body: string }, res: ServerResponse) {
      const { messages, userId, accountType } = JSON.parse(req.body);
      await pipeAgentUIStreamToResponse({ response: res, agent: supportAgent, uiMessages: messages, options: { userId, accountType, complexity: 'simple' } });
    }
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      await handler(Object.assign(req, { body: Buffer.concat(chunks).toString('utf8') }), res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const chat = new Chat({
      id: 'support-chat',
      transport: new DefaultChatTransport({ api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`, body: { userId: 'user_123', accountType: 'free' } }),
    });
    await chat.sendMessage({ text: 'How do I upgrade my account?' });
    await until(() => ended.length === 1);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    uninstall();
    uninstall = undefined;
    expect(ended[0]!.stoppedBy).toBe('stop-condition');
    expect(ended[0]!.finishReason).toBe('tool-calls');
    const instructions = fake.requests.map((request) => request.body.input.find((item: any) => item.role === 'system' || item.role === 'developer')?.content);
    expect(fake.requests.map((request) => request.body.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini']);
    expect(instructions[0]).toContain('- User ID: user_123');

    // The loop ended at the stop condition with tool calls, not a final answer: the turn's end says so.
    expect(turnEnds(recorded, 'support-user_123')).toEqual([['completed', 'stop_condition']]);
    const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload);
    expect(requests.map((payload) => payload.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.agent.model_name).toBe('gpt-4o-mini');
    const steps = doc.steps as Steps;
    const agentSteps = steps.filter((step) => step.source === 'agent');
    expect(agentSteps.map((step) => [step.model_name, step.tool_calls.map((call: AtifDoc) => call.tool_call_id), step.observation.results.map((result: AtifDoc) => result.content)])).toEqual([
      ['gpt-4o-mini-2024-07-18', ['call_plan'], ['plan: free tier']],
      ['gpt-4o-mini-2024-07-18', ['call_billing'], ['billing: free tier']],
    ]);
    expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'tool_calls']);
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual(tokens([ended[0]!.totalUsage]));
    // The system prompt the requests carried is the one prepareCall wrote.
    expect(JSON.stringify(doc)).toContain('- Account type: free');
    await sameOnNative(recorded);
  });
});

describe('memory: the Anthropic memory tool (a provider-defined tool the program runs)', () => {
  it('two conversations of one user: each memory command a call of the program\'s, under the model call that asked, with what execute returned', async () => {
    const fake = new FakeProvider();
    const claude = 'claude-haiku-4-5-20251001';
    fake
      .reply('anthropic', { id: 'msg_1', model: claude, toolCalls: [{ id: 'toolu_create', name: 'memory', args: { command: 'create', path: '/memories/preferences.md', file_text: 'Favorite editor: Neovim' } }], usage: { input: 500, output: 40 } })
      .reply('anthropic', { id: 'msg_2', model: claude, text: 'Noted: Neovim.', usage: { input: 560, output: 6 } })
      .reply('anthropic', { id: 'msg_3', model: claude, toolCalls: [{ id: 'toolu_view', name: 'memory', args: { command: 'view', path: '/memories/preferences.md' } }], usage: { input: 480, output: 20 } })
      .reply('anthropic', { id: 'msg_4', model: claude, text: 'Neovim, as you told me.', usage: { input: 530, output: 7 } });
    const recorded = recordedPlugin('ai-agent-memory');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const files = new Map<string, string>();
    const actions: unknown[] = [];
    // The memory page's program, with a Map for the storage backend.
    const memory = anthropic.tools.memory_20250818({
      execute: async (action) => {
        actions.push(action);
        if (action.command === 'create') return (files.set(action.path, action.file_text), `File created: ${action.path}`);
        if (action.command === 'view') return files.get(action.path) ?? `No such file: ${action.path}`;
        return 'Unsupported command';
      },
    });
    const agent = new ToolLoopAgent({ model: anthropic(claude), tools: { memory } });
    const first = await agent.generate({ prompt: 'Remember that my favorite editor is Neovim' });
    const second = await agent.generate({ prompt: 'Which editor do I like?' });
    expect([first.text, second.text]).toEqual(['Noted: Neovim.', 'Neovim, as you told me.']);
    expect(fake.requests[0]!.body.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
    uninstall();
    uninstall = undefined;

    const calls = recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.tool_name, entry.payload.args, entry.payload.result, entry.payload.status]);
    expect(calls).toEqual([
      ['toolu_create', 'memory', actions[0], 'File created: /memories/preferences.md', 'ok'],
      ['toolu_view', 'memory', actions[1], 'Favorite editor: Neovim', 'ok'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const steps = doc.steps as Steps;
    expect(steps.map((step) => [step.source, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => [call.function_name, call.arguments]), (step.observation?.results ?? []).map((result: AtifDoc) => result.content)])).toEqual([
      ['user', 'Remember that my favorite editor is Neovim', [], []],
      ['agent', '', [['memory', { command: 'create', path: '/memories/preferences.md', file_text: 'Favorite editor: Neovim' }]], ['File created: /memories/preferences.md']],
      ['agent', 'Noted: Neovim.', [], []],
      ['user', 'Which editor do I like?', [], []],
      ['agent', '', [['memory', { command: 'view', path: '/memories/preferences.md' }]], ['Favorite editor: Neovim']],
      ['agent', 'Neovim, as you told me.', [], []],
    ]);
    // A tool the program ran, not one the provider ran.
    expect(steps.flatMap((step) => step.tool_calls ?? []).some((call: AtifDoc) => call.extra?.provider_executed !== undefined)).toBe(false);
    // The tool offered is named, not typed: the shared request shape writes every offered tool as a function
    // (docs/adapters/ai-sdk.md, "Agents"), where Anthropic was sent `memory_20250818`.
    expect(steps[0]!.extra.llm_request.tools).toEqual([{ type: 'function', function: { name: 'memory' } }]);
    const usages = [first.totalUsage, second.totalUsage];
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual(tokens(usages));
    await sameOnNative(recorded);
  });
});

describe('loop control: forced tool calling and a manual loop', () => {
  const search = tool({ description: 'Search the web', inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `results for ${q}` });

  it('toolChoice required with a done tool without execute: the answer is the done call\'s input, the turn ends tool_without_execute', async () => {
    const fake = new FakeProvider();
    fake
      .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_search', name: 'search', args: { q: 'llamas' } }], usage: { input: 10, output: 3 } })
      .reply('responses', { id: 'resp_2', model, toolCalls: [{ id: 'call_done', name: 'done', args: { answer: 'Llamas hum.' } }], usage: { input: 20, output: 4 } });
    const recorded = recordedPlugin('ai-agent-forced-tools');
    uninstall = instrumentAiSdk(recorded.hooks);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    // The loop control page's forced tool calling.
    const agent = new ToolLoopAgent({
      model: openai('gpt-4o'),
      tools: {
        search,
        done: tool({ description: 'Signal that you have finished your work', inputSchema: z.object({ answer: z.string().describe('The final answer') }) }),
      },
      toolChoice: 'required',
    });
    const result = await agent.generate({ prompt: 'Research and analyze this topic, then provide your answer.' });
    // The page reads `result.staticToolCalls[0]` as the final step's call; in ai 7 it holds every step's (search first).
    expect(result.staticToolCalls.map((call) => call.toolName)).toEqual(['search', 'done']);
    const toolCall = result.staticToolCalls.at(-1);
    expect([toolCall?.toolName, (toolCall?.input as { answer: string }).answer, result.stoppedBy]).toEqual(['done', 'Llamas hum.', 'tool-without-execute']);
    expect(fake.requests.map((request) => request.body.tool_choice)).toEqual(['required', 'required']);
    uninstall();
    uninstall = undefined;

    const [session] = new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined));
    expect(turnEnds(recorded, session as string)).toEqual([['completed', 'tool_without_execute']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const steps = doc.steps as Steps;
    expect(steps.map((step) => [step.source, (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.arguments]), (step.observation?.results ?? []).map((result: AtifDoc) => result.content)])).toEqual([
      ['user', [], []],
      ['agent', [['call_search', { q: 'llamas' }]], ['results for llamas']],
      // Never run: the program reads its input; no outcome.
      ['agent', [['call_done', { answer: 'Llamas hum.' }]], []],
    ]);
    // Each request asked for a tool (the first request is kept on the user step, the second on the step it answered).
    expect(steps.map((step) => step.extra?.llm_request?.tool_choice)).toEqual(['required', undefined, 'required']);
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual(tokens([result.totalUsage]));
    await sameOnNative(recorded);
  });

  it('the page\'s manual loop of generateText calls in a named session: one user step, each call a turn that says why it stopped', async () => {
    const fake = new FakeProvider();
    fake
      .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_search', name: 'search', args: { q: 'llamas' } }], usage: { input: 10, output: 3 } })
      .reply('responses', { id: 'resp_2', model, text: 'Llamas hum.', usage: { input: 20, output: 4 } });
    const recorded = recordedPlugin('ai-agent-manual-loop');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'manual-loop' });
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Tell me about llamas' }];
    const spent: LanguageModelUsage[] = [];
    const stoppedBy: unknown[] = [];
    let step = 0;
    const maxSteps = 10;
    while (step < maxSteps) {
      const result = await generateText({ model: openai('gpt-4o'), messages, tools: { search } });
      spent.push(result.totalUsage);
      stoppedBy.push(result.stoppedBy);
      messages.push(...result.responseMessages);
      if (result.text) break;
      step++;
    }
    // generateText stops after one step unless told otherwise (its stopWhen is isStepCount(1)).
    expect(stoppedBy).toEqual(['stop-condition', 'model']);
    uninstall();
    uninstall = undefined;

    expect(turnEnds(recorded, 'manual-loop')).toEqual([['completed', 'stop_condition'], ['completed', 'final_response']]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The second call's messages end with the tool's result: no new user step, the prompt not repeated.
    expect((doc.steps as Steps).map((step) => [step.source, step.message, (step.observation?.results ?? []).map((result: AtifDoc) => result.content)])).toEqual([
      ['user', 'Tell me about llamas', []],
      ['agent', '', ['results for llamas']],
      ['agent', 'Llamas hum.', []],
    ]);
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual(tokens(spent));
    await sameOnNative(recorded);
  });
});

describe('workflow patterns: parallel processing under one named session', () => {
  it('three reviewers at once and a summary: one trajectory, each answer with its own text and tokens; only the last overlapping answer keeps its extra', async () => {
    const reviewers = {
      security: { instructions: 'You are an expert in code security. Focus on identifying security vulnerabilities, injection risks, and authentication issues.', answer: { vulnerabilities: ['eval of user input'], riskLevel: 'high', suggestions: ['parse, do not eval'] }, usage: { input: 100, output: 20 } },
      performance: { instructions: 'You are an expert in code performance. Focus on identifying performance bottlenecks, memory leaks, and optimization opportunities.', answer: { issues: ['quadratic loop'], impact: 'medium', optimizations: ['use a Map'] }, usage: { input: 110, output: 21 } },
      quality: { instructions: 'You are an expert in code quality. Focus on code structure, readability, and adherence to best practices.', answer: { concerns: ['short names'], qualityScore: 6, recommendations: ['rename'] }, usage: { input: 120, output: 22 } },
    };
    // Each reviewer's request finds its own answer (they ask at once, in no fixed order).
    const fakes = new Map<string, FakeProvider>(Object.entries(reviewers).map(([key, one]) => [key, new FakeProvider().reply('responses', { id: `resp_${key}`, model, text: JSON.stringify(one.answer), usage: one.usage })]));
    fakes.set('lead', new FakeProvider().reply('responses', { id: 'resp_lead', model, text: 'Remove the eval first.', usage: { input: 300, output: 5 } }));
    const fetch = (async (url: string, init: { body: string }) => {
      const key = Object.entries(reviewers).find(([, one]) => init.body.includes(one.instructions))?.[0] ?? 'lead';
      return await fakes.get(key)!.fetch(url, init);
    }) as unknown as typeof globalThis.fetch;
    const recorded = recordedPlugin('ai-agent-parallel-reviews');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'review-1' });
    const openai = createOpenAI({ apiKey: 'test-key', fetch });
    const code = 'for (const a of xs) for (const b of xs) eval(input)';
    const review = (key: keyof typeof reviewers, schema: z.ZodType) => generateText({ model: openai('gpt-4o'), instructions: reviewers[key].instructions, output: Output.object({ schema }), prompt: `Review this code:\n${code}` });
    const results = await Promise.all([
      review('security', z.object({ vulnerabilities: z.array(z.string()), riskLevel: z.enum(['low', 'medium', 'high']), suggestions: z.array(z.string()) })),
      review('performance', z.object({ issues: z.array(z.string()), impact: z.enum(['low', 'medium', 'high']), optimizations: z.array(z.string()) })),
      review('quality', z.object({ concerns: z.array(z.string()), qualityScore: z.number().min(1).max(10), recommendations: z.array(z.string()) })),
    ]);
    const reviews = results.map((result, i) => ({ ...(result.output as object), type: ['security', 'performance', 'maintainability'][i] }));
    const summary = await generateText({ model: openai('gpt-4o'), instructions: 'You are a technical lead summarizing multiple code reviews.', prompt: `Synthesize these code review results into a concise summary with key actions:\n${JSON.stringify(reviews, null, 2)}` });
    uninstall();
    uninstall = undefined;

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif.map((doc) => doc.session_id)).toEqual(['review-1']);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const steps = doc.steps as Steps;
    expect(steps.map((step) => step.source)).toEqual(['user', 'user', 'user', 'agent', 'agent', 'agent', 'user', 'agent']);
    // Each answer is one reviewer's, with that run's tokens.
    const answers = steps.slice(3, 6).map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens]).sort();
    expect(answers).toEqual(results.map((result) => [result.text, result.totalUsage.inputTokens, result.totalUsage.outputTokens]).sort());
    expect([steps[7]!.message, steps[7]!.metrics.prompt_tokens]).toEqual([summary.text, summary.totalUsage.inputTokens]);
    // What the file says today (docs/adapters/ai-sdk.md, "Sessions"): the overlapping answers but the last lose their extra.
    expect(steps.slice(3, 6).map((step) => step.extra === undefined)).toEqual([true, true, false]);
    expect(doc.final_metrics.total_prompt_tokens).toBe([...results, summary].reduce((sum, result) => sum + (result.totalUsage.inputTokens ?? 0), 0));
    await sameOnNative(recorded);
  });
});

describe('subagents: the main conversation handed to the sub-agent (the page\'s caveat)', () => {
  it('the sub-agent\'s turn is the task, the conversation it was given its history, not new user steps', async () => {
    const fake = new FakeProvider();
    fake
      .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_research', name: 'research', args: { task: 'Which file loads the config?' } }], usage: { input: 40, output: 10 } })
      .reply('responses', { id: 'resp_s1', model, text: 'src/config.ts loads it.', usage: { input: 25, output: 6 } })
      .reply('responses', { id: 'resp_2', model, text: 'src/config.ts.', usage: { input: 60, output: 4 } });
    const recorded = recordedPlugin('ai-agent-subagent-history');
    uninstall = instrumentAiSdk(recorded.hooks);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const researchSubagent = new ToolLoopAgent({ model: openai('gpt-4o'), instructions: 'You are a research agent.' });
    let given: ModelMessage[] = [];
    const research = tool({
      description: 'Research a topic or question in depth.',
      inputSchema: z.object({ task: z.string() }),
      execute: async ({ task }, { abortSignal, messages }) => {
        given = messages;
        const result = await researchSubagent.generate({ messages: [...messages, { role: 'user', content: task }], abortSignal });
        return result.text;
      },
    });
    const mainAgent = new ToolLoopAgent({ model: openai('gpt-4o'), instructions: 'You are a helpful assistant that can delegate research tasks.', tools: { research } });
    const result = await mainAgent.generate({ prompt: 'Where is the config loaded? Ask the researcher.' });
    expect(result.text).toBe('src/config.ts.');
    expect(given).toEqual([{ role: 'user', content: 'Where is the config loaded? Ask the researcher.' }]);
    const subTurn = recorded.log.find((entry) => entry.hook === 'pre_llm_call' && String(entry.payload.session_id).endsWith(':sub:call_research'))!.payload;
    // The history is what the sub-agent's model was sent before the task: its instructions, then the conversation.
    expect([subTurn.user_message, subTurn.conversation_history]).toEqual(['Which file loads the config?', [{ role: 'system', content: 'You are a research agent.' }, ...given]]);
    expect(fake.requests[1]!.body.input.map((item: any) => [item.role, typeof item.content === 'string' ? item.content : item.content[0].text])).toEqual([
      ['system', 'You are a research agent.'],
      ['user', 'Where is the config loaded? Ask the researcher.'],
      ['user', 'Which file loads the config?'],
    ]);
    uninstall();
    uninstall = undefined;

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const sub = (doc.subagent_trajectories as AtifDoc[])[0]!;
    expect((sub.steps as Steps).map((step) => [step.source, step.message])).toEqual([
      ['user', 'Which file loads the config?'],
      ['agent', 'src/config.ts loads it.'],
    ]);
    expect((doc.steps as Steps).filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['Where is the config loaded? Ask the researcher.']);
    await sameOnNative(recorded);
  });
});
