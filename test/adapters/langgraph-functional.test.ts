// LangGraph's functional API through the LangChain adapter, as LangGraph's JS docs write it: an agent written from
// scratch with `entrypoint` and `task` (a task calling the model with bound tools, a task running each tool with the
// call's arguments and making its ToolMessage), the same agent on a thread (`MemorySaver`, `getPreviousState`,
// `entrypoint.final`), its human-in-the-loop version (an `interrupt()` in the entrypoint reviewing each tool call,
// resumed with `new Command({ resume })`), and a workflow whose task asks a human (`interrupt()` inside the task).
// docs/adapters/langchain.md's snippet of the reviewed agent runs as written on Node, Bun and Deno.
// The real ChatOpenAI client runs over a fake fetch speaking Chat Completions (test/support/provider-wire.ts); each
// trajectory, the ATOF and `view` are held to what the program did and what LangChain reports, and the same hooks on
// native (where it loads) write the same files.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { AIMessage, ToolMessage, type BaseMessage, type BaseMessageLike, type ToolCall } from '@langchain/core/messages';
import { addMessages, Command, entrypoint, getPreviousState, interrupt, MemorySaver, task } from '@langchain/langgraph';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv } from '../support/doc-snippets.ts';
import { providersOnLoopback } from '../support/provider-loopback.ts';
import { chatCompletion, scriptedFetch, type WireReply } from '../support/provider-wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';

const getWeather = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: 'get_weather',
  description: 'Get the weather for a city',
  schema: z.object({ city: z.string() }),
});
const toolsByName: Record<string, typeof getWeather> = { [getWeather.name]: getWeather };

/**
 * The docs' tasks: the model with the tools bound, and a tool run with the call's arguments, its ToolMessage made by
 * hand (`withCall`: the tool run with the call itself, which returns the ToolMessage).
 */
function agentTasks(replies: WireReply[], withCall = false) {
  const { fetch, requests } = scriptedFetch(replies);
  const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
  const callModel = task('callModel', async (messages: BaseMessageLike[]) => model.bindTools([getWeather]).invoke(messages));
  const callTool = task('callTool', async (toolCall: ToolCall) => {
    if (withCall) return (await toolsByName[toolCall.name]!.invoke(toolCall as Parameters<typeof getWeather.invoke>[0])) as unknown as ToolMessage;
    const observation = await toolsByName[toolCall.name]!.invoke(toolCall.args as { city: string });
    return new ToolMessage({ content: observation, tool_call_id: toolCall.id! });
  });
  return { callModel, callTool, requests };
}

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): unknown[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => step.message);
const callsOf = (doc: AtifDoc): Array<[string, unknown]> => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.arguments] as [string, unknown]));
const observed = (doc: AtifDoc): Array<[string, string]> => (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content)] as [string, string]));
/** The AI messages' usage_metadata: [input, output, cache read]. */
const reported = (messages: BaseMessage[]): number[][] =>
  messages.filter((m) => AIMessage.isInstance(m) && m.usage_metadata !== undefined).map((m) => { const u = (m as AIMessage).usage_metadata!; return [u.input_tokens, u.output_tokens, u.input_token_details?.cache_read ?? 0]; });
const recordedCounts = (doc: AtifDoc): number[][] => agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0]);
/** The turns as the hooks say them: [user message, how the turn ended]. */
const turns = (recorded: Recorded): unknown[][] => {
  const started = recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => e.payload.user_message);
  const ended = recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => (e.payload.interrupted ? 'interrupted' : e.payload.completed ? 'completed' : 'failed'));
  return started.map((message, index) => [message, ended[index]]);
};
/** The first turn end's [turn_exit_reason, pending_approvals]. */
const firstTurnEnd = (recorded: Recorded): unknown[] => {
  const end = recorded.log.find((e) => e.hook === 'on_session_end')!.payload;
  return [end.turn_exit_reason, end.pending_approvals];
};
/** What the model read for each call in a request: the tool messages it was sent, [tool_call_id, content]. */
const toolMessagesSent = (body: { messages: Array<{ role: string; tool_call_id?: string; content: unknown }> }): string[][] =>
  body.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id!, String(m.content)]);
/**
 * Streams a functional-API run (streamMode "updates", each task's result as it finishes): the models' answers, in
 * order. `known`: answers already seen, which a resumed run streams again (the results of the tasks it replays from
 * the checkpoint) and which are not new calls.
 */
async function answersOf(stream: AsyncIterable<unknown>, seen: unknown[] = [], known: readonly AIMessage[] = []): Promise<AIMessage[]> {
  const answers: AIMessage[] = [];
  for await (const update of stream) {
    seen.push(update);
    for (const [name, value] of Object.entries(update as Record<string, unknown>)) {
      if (name === 'callModel' && !known.some((answer) => answer.id === (value as AIMessage).id)) answers.push(value as AIMessage);
    }
  }
  return answers;
}
const TWO_CITIES: WireReply[] = [
  chatCompletion({ id: 'chatcmpl-f1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 90, completion_tokens: 30 } }),
  chatCompletion({ id: 'chatcmpl-f2', model: GPT, content: 'It is sunny in Paris and in Rome.', usage: { prompt_tokens: 150, completion_tokens: 12, cached: 64 } }),
];

describe('LangGraph functional API through the LangChain adapter', () => {
  for (const mode of ['stream', 'invoke'] as const) {
    it(`the agent from scratch (entrypoint, a callModel and a callTool task), agent.${mode}(): one turn, a call per request, each tool under the model's call id with its result, no sub-agents`, async () => {
      const { callModel, callTool, requests } = agentTasks(TWO_CITIES);
      const agent = entrypoint('agent', async (messages: BaseMessageLike[]) => {
        let currentMessages = messages;
        let llmResponse = await callModel(currentMessages);
        while (true) {
          if (!llmResponse.tool_calls?.length) break;
          const toolResults = await Promise.all(llmResponse.tool_calls.map((toolCall) => callTool(toolCall)));
          currentMessages = addMessages(currentMessages, [llmResponse, ...toolResults]);
          llmResponse = await callModel(currentMessages);
        }
        return llmResponse;
      });
      const recorded = recordedPlugin(`lg-fn-agent-${mode}`);
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      const input = [{ role: 'user', content: 'What is the weather in Paris and Rome?' }];
      const answers: AIMessage[] = [];
      const tools: ToolMessage[] = [];
      if (mode === 'invoke') answers.push(await agent.invoke(input, config));
      else {
        // streamMode "updates": each task's result as it finishes.
        for await (const update of await agent.stream(input, config)) {
          for (const [name, value] of Object.entries(update as Record<string, unknown>)) {
            if (name === 'callModel') answers.push(value as AIMessage);
            if (name === 'callTool') tools.push(value as ToolMessage);
          }
        }
        expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([['call_paris', 'It is sunny in Paris.'], ['call_rome', 'It is sunny in Rome.']]);
      }
      expect(answers.at(-1)!.content).toBe('It is sunny in Paris and in Rome.');
      expect(requests).toHaveLength(2);

      const { doc, atof } = await finishedRun(recorded);
      expect(turns(recorded)).toEqual([['What is the weather in Paris and Rome?', 'completed']]);
      expect(userSteps(doc)).toEqual(['What is the weather in Paris and Rome?']);
      expect(doc.agent.name).toBe('agent');
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toHaveLength(requests.length);
      // The tasks are steps of the agent's own trajectory, not sub-agents.
      expect(recorded.log.filter((e) => e.hook === 'subagent_start')).toEqual([]);
      expect(doc.subagent_trajectories).toBeUndefined();
      expect(callsOf(doc)).toEqual([['call_paris', { city: 'Paris' }], ['call_rome', { city: 'Rome' }]]);
      expect(observed(doc)).toEqual([['call_paris', 'It is sunny in Paris.'], ['call_rome', 'It is sunny in Rome.']]);
      expect(agentSteps(doc)[0]!.observation.results).toHaveLength(2);
      expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, ''], [GPT, 'It is sunny in Paris and in Rome.']]);
      if (mode === 'stream') expect(recordedCounts(doc)).toEqual(reported(answers));
      expect(recordedCounts(doc)).toEqual([[90, 30, 0], [150, 12, 64]]);
      expect(recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload.finish_reason)).toEqual(['tool_calls', 'stop']);
      // ATOF: one tool span per call, under the model's ids.
      expect(atof.filter((e) => e.kind === 'scope' && e.category === 'tool' && e.scope_category === 'end').map((e) => e.metadata?.tool_call_id ?? e.data?.tool_call_id)).toEqual(['call_paris', 'call_rome']);
      for (const of of ['atof', 'atif'] as const) {
        expect(await viewRows(recorded, of)).toEqual([
          `LLM ${GPT} (asked gpt-4.1)  90 in / 30 out  → get_weather, get_weather`,
          'tool get_weather  {"city":"Paris"}',
          'tool get_weather  {"city":"Rome"}',
          `LLM ${GPT} (asked gpt-4.1)  150 in (64 cached) / 12 out  It is sunny in Paris and in Rome.`,
        ]);
      }
      await sameOnNative(recorded);
    });
  }

  it('the agent on a thread (MemorySaver, getPreviousState, entrypoint.final), invoked twice: one trajectory, two turns, each with its user step', async () => {
    const { callModel, callTool, requests } = agentTasks([
      chatCompletion({ id: 'chatcmpl-t1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
      chatCompletion({ id: 'chatcmpl-t2', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 8 } }),
      chatCompletion({ id: 'chatcmpl-t3', model: GPT, content: 'You asked about Paris.', usage: { prompt_tokens: 160, completion_tokens: 6, cached: 64 } }),
    ]);
    const agent = entrypoint({ name: 'agent', checkpointer: new MemorySaver() }, async (messages: BaseMessageLike[]) => {
      const previous = getPreviousState<BaseMessage[]>() ?? [];
      let currentMessages = addMessages(previous, messages);
      let llmResponse = await callModel(currentMessages);
      while (true) {
        if (!llmResponse.tool_calls?.length) break;
        const toolResults = await Promise.all(llmResponse.tool_calls.map((toolCall) => callTool(toolCall)));
        currentMessages = addMessages(currentMessages, [llmResponse, ...toolResults]);
        llmResponse = await callModel(currentMessages);
      }
      currentMessages = addMessages(currentMessages, llmResponse);
      return entrypoint.final({ value: llmResponse, save: currentMessages });
    });
    const recorded = recordedPlugin('lg-fn-thread');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'weather-thread' } };
    const first = await answersOf(await agent.stream([{ role: 'user', content: 'What is the weather in Paris?' }], config));
    const second = await answersOf(await agent.stream([{ role: 'user', content: 'Which city did I ask about?' }], config));
    expect([first.at(-1)!.content, second.at(-1)!.content]).toEqual(['It is sunny in Paris.', 'You asked about Paris.']);
    // The second request carries the first turn, which the thread's checkpoint kept.
    expect(requests[2]!.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    handler.close();
    const { doc } = await finishedRun(recorded);
    expect(doc.session_id).toBe('weather-thread');
    expect(turns(recorded)).toEqual([
      ['What is the weather in Paris?', 'completed'],
      ['Which city did I ask about?', 'completed'],
    ]);
    expect((doc.steps as Step[]).map((step) => [step.source, step.message])).toEqual([
      ['user', 'What is the weather in Paris?'],
      ['agent', ''],
      ['agent', 'It is sunny in Paris.'],
      ['user', 'Which city did I ask about?'],
      ['agent', 'You asked about Paris.'],
    ]);
    expect(observed(doc)).toEqual([['call_paris', 'It is sunny in Paris.']]);
    expect(recordedCounts(doc)).toEqual(reported([...first, ...second]));
    await sameOnNative(recorded);
  });

  for (const [action, withCall] of [['continue', false], ['feedback', false], ['update', false], ['update', true]] as const) {
    it(`human in the loop, interrupt() in the entrypoint reviewing each tool call, resumed with Command({ resume: { action: "${action}" } }): two turns of one trajectory, the first interrupted, the resumed one adds no user step, ${{ continue: "the call's outcome the result of the tool run after the resume", feedback: "the call's outcome the feedback the model read", update: withCall ? 'the tool run with the edited call is the model\'s call' : 'the run with the reviewer\'s arguments a call of its own' }[action]}`, async () => {
      const { callModel, callTool, requests } = agentTasks([
        chatCompletion({ id: 'chatcmpl-h1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
        chatCompletion({ id: 'chatcmpl-h2', model: GPT, content: action === 'feedback' ? 'I will not check the weather.' : 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 8 } }),
      ], withCall);
      // As the functional API's human-in-the-loop how-to writes it.
      const reviewToolCall = (toolCall: ToolCall): ToolCall | ToolMessage => {
        const humanReview = interrupt({ question: 'Is this correct?', tool_call: toolCall }) as { action: string; data?: string };
        if (humanReview.action === 'continue') return toolCall;
        if (humanReview.action === 'update') return { ...toolCall, args: { city: humanReview.data } };
        if (humanReview.action === 'feedback') return new ToolMessage({ content: humanReview.data!, name: toolCall.name, tool_call_id: toolCall.id! });
        throw new Error(`Unsupported review action: ${humanReview.action}`);
      };
      const agent = entrypoint({ name: 'agent', checkpointer: new MemorySaver() }, async (messages: BaseMessageLike[]) => {
        const previous = getPreviousState<BaseMessage[]>() ?? [];
        let currentMessages = addMessages(previous, messages);
        let llmResponse = await callModel(currentMessages);
        while (true) {
          if (!llmResponse.tool_calls?.length) break;
          const toolResults: ToolMessage[] = [];
          const toolCalls: ToolCall[] = [];
          for (const toolCall of llmResponse.tool_calls) {
            const review = reviewToolCall(toolCall);
            if (review instanceof ToolMessage) toolResults.push(review);
            else toolCalls.push(review);
          }
          const remainingToolResults = await Promise.all(toolCalls.map((toolCall) => callTool(toolCall)));
          currentMessages = addMessages(currentMessages, [llmResponse, ...toolResults, ...remainingToolResults]);
          llmResponse = await callModel(currentMessages);
        }
        currentMessages = addMessages(currentMessages, llmResponse);
        return entrypoint.final({ value: llmResponse, save: currentMessages });
      });
      const recorded = recordedPlugin(`lg-fn-hitl-${action}${withCall ? '-call' : ''}`);
      const handler = new NemoRelayCallbackHandler(recorded.hooks);
      const config = { callbacks: [handler], configurable: { thread_id: `review-${action}${withCall ? '-call' : ''}` } };
      const paused: unknown[] = [];
      const answers = await answersOf(await agent.stream([{ role: 'user', content: 'What is the weather in Paris?' }], config), paused);
      expect(paused.at(-1)).toMatchObject({ __interrupt__: [{ value: { question: 'Is this correct?', tool_call: { id: 'call_paris' } } }] });
      const resume = action === 'continue' ? { action } : action === 'update' ? { action, data: 'Lyon' } : { action, data: 'Do not look it up, just say you will not.' };
      answers.push(...(await answersOf(await agent.stream(new Command({ resume }), config), [], answers)));
      expect(requests).toHaveLength(2);
      handler.close();
      const { doc } = await finishedRun(recorded);
      // Two turns: the one the interrupt paused, and the resumed one, which has no user message of its own.
      expect(turns(recorded)).toEqual([
        ['What is the weather in Paris?', 'interrupted'],
        ['', 'completed'],
      ]);
      expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
      // The trajectory says the turn paused: its last step carries the interrupted end.
      expect(agentSteps(doc)[0]!.extra.turn_ends).toEqual([{ status: 'interrupted', timestamp: expect.any(String) }]);
      // An interrupt() outside a tool asks about no call: an interruption, not a pause for approvals (no pending calls).
      expect(firstTurnEnd(recorded)).toEqual(['interrupted', undefined]);
      // The resumed run went on with that turn, to its answer: the notes say a pause, not the turn's end.
      expect(doc.notes).toBe(`The turn was paused at step ${agentSteps(doc)[0]!.step_id} and resumed.`);
      // The interrupt asks about no tool (it is the program's, in the entrypoint): no approval request.
      expect(recorded.log.filter((e) => e.hook.includes('approval'))).toEqual([]);
      // The model's one call, its outcome what the model read next.
      const toolMessages = toolMessagesSent(requests[1]!.body);
      if (action === 'update' && !withCall) {
        // The reviewer's arguments are no model's: the tool's run is a call of its own under LangChain's run id, and
        // the model's call has as its outcome the ToolMessage the model read (docs/adapters/langchain.md says so).
        expect(toolMessages).toEqual([['call_paris', 'It is sunny in Lyon.']]);
        const runs = recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.result]);
        expect(runs).toEqual([[expect.stringMatching(/^[0-9a-f]{8}-/), 'It is sunny in Lyon.'], ['call_paris', 'It is sunny in Lyon.']]);
        expect(callsOf(doc)).toEqual([['call_paris', { city: 'Paris' }], [runs[0]![0], { city: 'Lyon' }]]);
      } else {
        expect(callsOf(doc)).toEqual([['call_paris', { city: 'Paris' }]]);
        // Run after the resume by the callTool task (with the call's arguments, or the edited call itself), or answered
        // by the program's own ToolMessage (the reviewer's feedback, no tool run): what the model read next is the
        // call's outcome.
        expect(toolMessages).toEqual([['call_paris', { continue: 'It is sunny in Paris.', update: 'It is sunny in Lyon.', feedback: 'Do not look it up, just say you will not.' }[action]]]);
        expect(observed(doc)).toEqual(toolMessages);
        expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.result])).toEqual([[...toolMessages[0]!.slice(0, 1), 'ok', toolMessages[0]![1]]]);
      }
      expect(agentSteps(doc).map((step) => step.message)).toEqual(['', action === 'feedback' ? 'I will not check the weather.' : 'It is sunny in Paris.']);
      expect(recordedCounts(doc)).toEqual(reported(answers));
      await sameOnNative(recorded);
    });
  }

  it('a workflow whose task asks a human (interrupt() inside a task), resumed with a Command: the paused turn and the resumed one, the model call once', async () => {
    const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-e1', model: GPT, content: 'Cats are curious.', usage: { prompt_tokens: 30, completion_tokens: 5 } })]);
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
    const writeEssay = task('writeEssay', async (topic: string) => (await model.invoke(`Write an essay about ${topic}.`)).content as string);
    const review = task('review', async (essay: string) => interrupt({ essay, action: 'Please approve/reject the essay' }) as boolean);
    const workflow = entrypoint({ name: 'workflow', checkpointer: new MemorySaver() }, async (topic: string) => {
      const essay = await writeEssay(topic);
      const isApproved = await review(essay);
      return { essay, isApproved };
    });
    const recorded = recordedPlugin('lg-fn-task-interrupt');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'essay-1' } };
    const first = await workflow.invoke('cats', config);
    expect(first).toMatchObject({ __interrupt__: [{ value: { essay: 'Cats are curious.' } }] });
    const second = await workflow.invoke(new Command({ resume: true }), config);
    expect(second).toEqual({ essay: 'Cats are curious.', isApproved: true });
    // The checkpointer kept the essay: the resumed run does not ask the model again.
    expect(requests).toHaveLength(1);
    handler.close();
    const { doc } = await finishedRun(recorded);
    expect(turns(recorded)).toEqual([
      ['cats', 'interrupted'],
      ['', 'completed'],
    ]);
    expect((doc.steps as Step[]).map((step) => [step.source, step.message])).toEqual([
      ['user', 'Write an essay about cats.'],
      ['agent', 'Cats are curious.'],
    ]);
    expect(agentSteps(doc)[0]!.extra.turn_ends).toEqual([{ status: 'interrupted', timestamp: expect.any(String) }]);
    expect(firstTurnEnd(recorded)).toEqual(['interrupted', undefined]);
    expect(recordedCounts(doc)).toEqual([[30, 5, 0]]);
    expect(recorded.log.filter((e) => e.hook.includes('approval') || e.hook.includes('tool'))).toEqual([]);
    await sameOnNative(recorded);
  });
});

describe("docs/adapters/langchain.md, \"LangGraph's functional API\"", () => {
  const providers = providersOnLoopback();
  const snippet = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/langchain.md'), 'utf8')).find((code) => code.includes('entrypoint({'));
  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime}: the paused turn and the resumed one in one trajectory, the call run after the resume the model's`, async () => {
      if (snippet === undefined) expect.fail('the page has no functional-API snippet');
      const { requests } = providers.serve([
        chatCompletion({ id: 'chatcmpl-d1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 15 } }),
        chatCompletion({ id: 'chatcmpl-d2', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 7 } }),
      ]);
      const result = await runSnippet(snippet, runtime, 'langgraph-functional', userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${providers.url}/v1`, NO_COLOR: '1' }));
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is sunny in Paris.');
        expect(requests).toHaveLength(2);
        expect(toolMessagesSent(requests[1]!.body)).toEqual([['call_paris', 'It is sunny in Paris.']]);
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8')) as AtifDoc;
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.session_id).toBe('user-42');
        expect(doc.agent.name).toBe('agent');
        expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
        expect(callsOf(doc)).toEqual([['call_paris', { city: 'Paris' }]]);
        expect(observed(doc)).toEqual([['call_paris', 'It is sunny in Paris.']]);
        expect(agentSteps(doc)[0]!.extra.turn_ends).toEqual([{ status: 'interrupted', timestamp: expect.any(String) }]);
        expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, ''], [GPT, 'It is sunny in Paris.']]);
        expect(recordedCounts(doc)).toEqual([[80, 15, 0], [120, 7, 0]]);
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});
