// The LangChain adapter on LangGraph.js fan-out programs written as LangGraph's
// docs write them with the `Send` API: map-reduce (a conditional edge returns
// one `Send` per item, the workers run at once, a reducer joins their results),
// orchestrator-worker (a planner's structured output, one `Send` per section,
// a synthesizer), and compiled agents (`createReactAgent`, `createAgent`) sent
// to as workers, with parallel tool calls in their `ToolNode`. The real
// ChatOpenAI and ChatAnthropic clients run over a fake fetch that answers
// by what each request asks and holds a wave of requests until all of them
// are in flight, then answers them in the reverse order: the workers' model
// calls really overlap and finish out of order. Also: workers that are plain
// nodes running their own model and tool loop, or a subgraph of their own,
// and the next turn of a thread after a fan-out. Each trajectory is checked
// against what the program got back: every model call once, in the
// trajectory of the agent that made it, with its own usage_metadata and its
// own answer; and the same hooks on native must write the same files.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { ChatGeneration, LLMResult } from '@langchain/core/outputs';
import { HumanMessage, SystemMessage, ToolMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import { Annotation, Command, END, getCurrentTaskInput, MemorySaver, MessagesAnnotation, Send, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { createReactAgent, ToolNode } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicMessage, chatCompletion, chatCompletionEither, concurrentFetch, type Route, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type AtofEvent, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const CLAUDE = 'claude-sonnet-4-5-20250929';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const modelSteps = (doc: AtifDoc): Step[] => agentSteps(doc).filter((step) => step.llm_call_count !== 0);
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const subagents = (doc: AtifDoc): AtifDoc[] => (doc.subagent_trajectories ?? []) as AtifDoc[];
/** Every trajectory of the run: the top one and those embedded in it, depth first. */
/** The trajectory id the observation of a call refers to. */
const refOf = (doc: AtifDoc, callId: string): unknown =>
  (doc.steps as Step[]).flatMap((step) => step.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === callId)?.subagent_trajectory_ref?.[0]?.trajectory_id;
const allDocs = (doc: AtifDoc): AtifDoc[] => [doc, ...subagents(doc).flatMap(allDocs)];
type Usage = [number, number, number];
/** LangChain's usage_metadata of an AI message: [input, output, cache read + cache write]. */
const usageOf = (message: BaseMessage): Usage => {
  const usage = (message as AIMessage).usage_metadata!;
  return [usage.input_tokens, usage.output_tokens, (usage.input_token_details?.cache_read ?? 0) + (usage.input_token_details?.cache_creation ?? 0)];
};
const metricsOf = (step: Step): Usage => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0];
/**
 * What tells a model step from the others: its text and its tool call ids.
 * Not `extra.llm_response`: a step's `extra` is written when the next model
 * call of its trajectory starts, so of parallel calls that end one after the
 * other only the last keeps it, on native as on the memory relay.
 */
const stepKey = (step: Step): string => JSON.stringify([String(step.message ?? ''), (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)]);
const messageKey = (message: BaseMessage): string => {
  const text = typeof message.content === 'string' ? message.content : message.content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text).join('');
  return JSON.stringify([text, ((message as AIMessage).tool_calls ?? []).map((call) => call.id)]);
};
/** Every recorded model call as ATOF pairs its start and end: [the messages it sent (JSON), the provider's response id]. */
const atofCalls = (atof: AtofEvent[]): Array<[string, string]> => {
  const sent = new Map<string, string>();
  for (const event of atof.filter((e) => e.category === 'llm' && e.scope_category === 'start')) sent.set(event.metadata.api_request_id, JSON.stringify(event.data.content.messages));
  return atof.filter((e) => e.category === 'llm' && e.scope_category === 'end').map((e) => [sent.get(e.metadata.api_request_id)!, String(e.data.id)]);
};

/**
 * The run against what the program got back: each of its AI messages is one
 * model step, in the trajectory `where` names, with its own usage_metadata;
 * no other model step; each trajectory's final metrics add up its steps, and
 * all of them what the program got.
 */
function expectEveryCallOnce(doc: AtifDoc, got: readonly BaseMessage[], where: (message: BaseMessage) => AtifDoc): void {
  const steps = allDocs(doc).flatMap((d) => modelSteps(d).map((step) => [d, step] as const));
  expect(steps.map(([, step]) => stepKey(step)).sort()).toEqual(got.map(messageKey).sort());
  for (const message of got) {
    const [owner, step] = steps.find(([, s]) => stepKey(s) === messageKey(message))!;
    expect(owner.trajectory_id, `the trajectory of ${message.id}`).toBe(where(message).trajectory_id);
    expect(metricsOf(step), `the tokens of ${message.id}`).toEqual(usageOf(message));
  }
  for (const d of allDocs(doc)) {
    const sum = (i: 0 | 1 | 2) => modelSteps(d).reduce((total, step) => total + metricsOf(step)[i], 0);
    // A trajectory of links only (a fan-out's parent) counts no tokens.
    if (modelSteps(d).length === 0) expect(d.final_metrics.total_prompt_tokens).toBeUndefined();
    else expect(d.final_metrics).toMatchObject({ total_prompt_tokens: sum(0), total_completion_tokens: sum(1), total_cached_tokens: sum(2) });
  }
  const total = (i: 0 | 1 | 2) => got.reduce((sum, message) => sum + usageOf(message)[i], 0);
  const recorded = (i: 0 | 1 | 2) => steps.reduce((sum, [, step]) => sum + metricsOf(step)[i], 0);
  expect([recorded(0), recorded(1), recorded(2)]).toEqual([total(0), total(1), total(2)]);
}

describe('LangGraph Send fan-out through the LangChain adapter', () => {
  it('map-reduce: one Send per subject, the workers answered at once and out of order; each call once, with its own answer and tokens', async () => {
    const subjects = ['lions', 'elephants', 'penguins'];
    const jokeUsage: Record<string, [number, number]> = { lions: [31, 7], elephants: [43, 11], penguins: [57, 13] };
    const { fetch, maxInFlight } = concurrentFetch([
      { when: 'Generate comma separated list', reply: anthropicMessage({ id: 'msg_topics', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_subjects', name: 'subjects', input: { subjects } }], usage: { input_tokens: 90, output_tokens: 21, cache_read_input_tokens: 30 } }) },
      ...subjects.map((subject) => ({
        when: `Generate a joke about ${subject}`,
        wave: 'jokes',
        reply: chatCompletion({ id: `chatcmpl-joke-${subject}`, model: GPT, content: JSON.stringify({ joke: `A joke about ${subject}.` }), usage: { prompt_tokens: jokeUsage[subject]![0], completion_tokens: jokeUsage[subject]![1] } }),
      })),
      { when: 'Select the best one', reply: anthropicMessage({ id: 'msg_best', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_best', name: 'best', input: { id: 1 } }], usage: { input_tokens: 140, output_tokens: 9 } }) },
    ]);
    // As LangGraph's map-reduce how-to writes it; includeRaw keeps each call's AIMessage, to hold its tokens to the trajectory.
    const got: BaseMessage[] = [];
    const asked = new Map<string, string>();
    const OverallState = Annotation.Root({
      topic: Annotation<string>,
      subjects: Annotation<string[]>,
      jokes: Annotation<string[]>({ reducer: (state, update) => state.concat(update), default: () => [] }),
      bestSelectedJoke: Annotation<string>,
    });
    const JokeState = Annotation.Root({ subject: Annotation<string> });
    const generateTopics = async (state: typeof OverallState.State) => {
      const { raw, parsed } = await anthropic(fetch)
        .withStructuredOutput(z.object({ subjects: z.array(z.string()) }), { name: 'subjects', includeRaw: true })
        .invoke(`Generate comma separated list of between 2 and 5 examples related to: ${state.topic}.`);
      got.push(raw);
      return { subjects: parsed.subjects };
    };
    const generateJoke = async (state: typeof JokeState.State) => {
      const { raw, parsed } = await openai(fetch)
        .withStructuredOutput(z.object({ joke: z.string() }), { name: 'joke', includeRaw: true })
        .invoke(`Generate a joke about ${state.subject}`);
      got.push(raw);
      asked.set(String(raw.id), state.subject);
      return { jokes: [parsed.joke] };
    };
    const continueToJokes = (state: typeof OverallState.State) => state.subjects.map((subject) => new Send('generateJoke', { subject }));
    const bestJoke = async (state: typeof OverallState.State) => {
      const { raw, parsed } = await anthropic(fetch)
        .withStructuredOutput(z.object({ id: z.number() }), { name: 'best', includeRaw: true })
        .invoke(`Below are a bunch of jokes about ${state.topic}. Select the best one! Return the ID of the best one.\n\n${state.jokes.join('\n')}`);
      got.push(raw);
      return { bestSelectedJoke: state.jokes[parsed.id] };
    };
    const graph = new StateGraph(OverallState)
      .addNode('generateTopic', generateTopics)
      .addNode('generateJoke', generateJoke as never)
      .addNode('bestJoke', bestJoke)
      .addEdge(START, 'generateTopic')
      .addConditionalEdges('generateTopic', continueToJokes)
      .addEdge('generateJoke', 'bestJoke')
      .addEdge('bestJoke', END)
      .compile();
    const recorded = recordedPlugin('lg-send-map-reduce');
    const result = await graph.invoke({ topic: 'animals' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(maxInFlight()).toBe(3);
    // The reducer joined the jokes in the order of the Sends; the calls ended in the reverse order.
    expect(result.jokes).toEqual(subjects.map((s) => `A joke about ${s}.`));
    expect(result.bestSelectedJoke).toBe('A joke about elephants.');
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // Plain nodes, no agent: every call is a step of the run's own trajectory.
    expect(subagents(doc)).toEqual([]);
    // One trajectory, as native converts overlapping calls: each request a user step when it starts, each answer a step when
    // it ends (here last-started first). A step's `extra` is written when the next call starts, so of the answers that
    // end back to back only the last keeps it (docs/adapters/langchain.md, "Fan-out with Send").
    expect((doc.steps as Step[]).map((step) => [step.source, String(step.message).slice(0, 26), step.extra !== undefined])).toEqual([
      ['user', 'Generate comma separated l', true],
      ['agent', '', true],
      ...subjects.map((subject) => ['user', `Generate a joke about ${subject}`.slice(0, 26), true]),
      ...[...subjects].reverse().map((subject, i) => ['agent', JSON.stringify({ joke: `A joke about ${subject}.` }).slice(0, 26), i === subjects.length - 1]),
      ['user', 'Below are a bunch of jokes', true],
      ['agent', '', true],
    ]);
    expectEveryCallOnce(doc, got, () => doc);
    // Each worker's answer is the answer to its own request.
    const jokes = atofCalls(atof).filter(([, id]) => id.startsWith('chatcmpl-joke-'));
    expect(jokes).toHaveLength(3);
    for (const [sent, id] of jokes) expect(sent).toContain(`Generate a joke about ${asked.get(id)}`);
    expect(modelSteps(doc).filter((step) => String(step.message).startsWith('{')).map((step) => step.message)).toEqual(
      got.filter((m) => String(m.id).startsWith('chatcmpl-joke-')).map((m) => m.content),
    );
    await sameOnNative(recorded);
  }, 30_000);

  it('orchestrator-worker: a planner plans the sections, one Send per section, each worker calls the model at once, a synthesizer joins them', async () => {
    const sections = [
      { name: 'Introduction', description: 'What LLM scaling laws are' },
      { name: 'Compute', description: 'How loss falls with compute' },
      { name: 'Data', description: 'How much data a model needs' },
    ];
    const usage: Record<string, { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number }> = {
      Introduction: { input_tokens: 61, output_tokens: 17, cache_read_input_tokens: 40 },
      Compute: { input_tokens: 73, output_tokens: 19 },
      Data: { input_tokens: 89, output_tokens: 23, cache_read_input_tokens: 48 },
    };
    const { fetch, maxInFlight } = concurrentFetch([
      { when: 'Generate a plan for the report', reply: chatCompletion({ id: 'chatcmpl-plan', model: GPT, content: JSON.stringify({ sections }), usage: { prompt_tokens: 70, completion_tokens: 60, cached: 32 } }) },
      ...sections.map(({ name }) => ({
        when: `Here is the section name: ${name}`,
        wave: 'sections',
        reply: anthropicMessage({ id: `msg_section_${name}`, model: CLAUDE, content: [{ type: 'text', text: `## ${name}\n\nThe ${name.toLowerCase()} section.` }], usage: usage[name]! }),
      })),
    ]);
    const got: BaseMessage[] = [];
    const sectionSchema = z.object({ name: z.string().describe('Name for this section of the report.'), description: z.string().describe('Brief overview of the main topics and concepts to be covered in this section.') });
    // As LangGraph's workflows page writes it (includeRaw: the plan's AIMessage too, for its tokens).
    const planner = openai(fetch).withStructuredOutput(z.object({ sections: z.array(sectionSchema).describe('Sections of the report.') }), { includeRaw: true });
    const worker = anthropic(fetch);
    const State = Annotation.Root({
      topic: Annotation<string>,
      sections: Annotation<Array<z.infer<typeof sectionSchema>>>,
      completedSections: Annotation<string[]>({ default: () => [], reducer: (a, b) => a.concat(b) }),
      finalReport: Annotation<string>,
    });
    const WorkerState = Annotation.Root({
      section: Annotation<z.infer<typeof sectionSchema>>,
      completedSections: Annotation<string[]>({ default: () => [], reducer: (a, b) => a.concat(b) }),
    });
    const orchestrator = async (state: typeof State.State) => {
      const { raw, parsed } = await planner.invoke([new SystemMessage('Generate a plan for the report.'), new HumanMessage(`Here is the report topic: ${state.topic}`)]);
      got.push(raw);
      return { sections: parsed.sections };
    };
    const llmCall = async (state: typeof WorkerState.State) => {
      const section = await worker.invoke([
        new SystemMessage('Write a report section following the provided name and description. Include no preamble for each section. Use markdown formatting.'),
        new HumanMessage(`Here is the section name: ${state.section.name} and description: ${state.section.description}`),
      ]);
      got.push(section);
      return { completedSections: [String(section.content)] };
    };
    const synthesizer = async (state: typeof State.State) => ({ finalReport: state.completedSections.join('\n\n---\n\n') });
    const assignWorkers = (state: typeof State.State) => state.sections.map((section) => new Send('llmCall', { section }));
    const graph = new StateGraph(State)
      .addNode('orchestrator', orchestrator)
      .addNode('llmCall', llmCall as never)
      .addNode('synthesizer', synthesizer)
      .addEdge(START, 'orchestrator')
      .addConditionalEdges('orchestrator', assignWorkers, ['llmCall'])
      .addEdge('llmCall', 'synthesizer')
      .addEdge('synthesizer', END)
      .compile();
    const recorded = recordedPlugin('lg-send-orchestrator');
    const result = await graph.invoke({ topic: 'Create a report on LLM scaling laws' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(maxInFlight()).toBe(3);
    expect(result.finalReport.split('\n\n---\n\n')).toHaveLength(3);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(subagents(doc)).toEqual([]);
    expectEveryCallOnce(doc, got, () => doc);
    // Each section's text came back to the request that asked for that section, and is its step's message.
    const calls = atofCalls(atof).filter(([, id]) => id.startsWith('msg_section_'));
    expect(calls).toHaveLength(3);
    for (const [sent, id] of calls) expect(sent).toContain(`Here is the section name: ${id.slice('msg_section_'.length)}`);
    expect(modelSteps(doc).slice(1).map((step) => step.message)).toEqual(got.slice(1).map((m) => m.content));
    await sameOnNative(recorded);
  }, 30_000);

  const variants = [
    ['from START, before any model call', true, 'invoke'],
    ['after a planner called the model', false, 'invoke'],
    ['from START, streamed with subgraphs', true, 'stream'],
    ['from START, through streamEvents', true, 'streamEvents'],
  ] as const;
  for (const [label, fromStart, mode] of variants) {
    it(`createReactAgent workers sent with Send ${label}: each a sub-agent with its own steps, parallel tool calls and tokens`, async () => {
      const cities = ['Oslo', 'Rome'];
      const { fetch, bodies, maxInFlight } = concurrentFetch([
        ...(fromStart ? [] : [{ when: 'Which cities', reply: chatCompletionEither({ id: 'chatcmpl-plan', model: GPT, content: JSON.stringify({ cities }), usage: { prompt_tokens: 40, completion_tokens: 12 } }) }]),
        // Oslo's worker asks for two tools at once (its ToolNode runs them in parallel); Rome's for one.
        { when: 'Tell me about Oslo', wave: 'first', reply: chatCompletionEither({ id: 'chatcmpl-oslo-1', model: GPT, content: null, toolCalls: [{ id: 'call_oslo_weather', name: 'weather', args: { city: 'Oslo' } }, { id: 'call_oslo_people', name: 'population', args: { city: 'Oslo' } }], usage: { prompt_tokens: 51, completion_tokens: 21 } }) },
        { when: 'Tell me about Rome', wave: 'first', reply: chatCompletionEither({ id: 'chatcmpl-rome-1', model: GPT, content: null, toolCalls: [{ id: 'call_rome_weather', name: 'weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 52, completion_tokens: 11 } }) },
        { when: 'Population of Oslo', wave: 'second', reply: chatCompletionEither({ id: 'chatcmpl-oslo-2', model: GPT, content: 'Oslo: snow, 709,000 people.', usage: { prompt_tokens: 93, completion_tokens: 9, cached: 48 } }) },
        { when: 'Weather in Rome', wave: 'second', reply: chatCompletionEither({ id: 'chatcmpl-rome-2', model: GPT, content: 'Rome: sun.', usage: { prompt_tokens: 77, completion_tokens: 4 } }) },
      ]);
      // Each tool waits a little, the first called the longest: the parallel calls end out of order.
      const weather = tool(async ({ city }) => (await sleep(city === 'Oslo' ? 20 : 5), `Weather in ${city}: ${city === 'Oslo' ? 'snow' : 'sun'}`), { name: 'weather', description: 'The weather of a city', schema: z.object({ city: z.string() }) });
      const population = tool(async ({ city }) => `Population of ${city}: 709,000`, { name: 'population', description: 'The population of a city', schema: z.object({ city: z.string() }) });
      const researcher = createReactAgent({ llm: openai(fetch), tools: [weather, population], name: 'researcher' });
      const State = Annotation.Root({ ...MessagesAnnotation.spec, cities: Annotation<string[]> });
      const plannerModel = openai(fetch);
      const planned: BaseMessage[] = [];
      const plan = async (state: typeof State.State) => {
        const answer = await plannerModel.invoke([new HumanMessage(`Which cities should I research? ${state.cities.join(', ')}`)]);
        planned.push(answer);
        return { cities: (JSON.parse(String(answer.content)) as { cities: string[] }).cities };
      };
      const toWorkers = (state: typeof State.State) => state.cities.map((city) => new Send('researcher', { messages: [new HumanMessage(`Tell me about ${city}`)] }));
      const graph = fromStart
        ? new StateGraph(State).addNode('researcher', researcher).addConditionalEdges(START, toWorkers, ['researcher']).addEdge('researcher', END).compile()
        : new StateGraph(State).addNode('plan', plan).addNode('researcher', researcher).addEdge(START, 'plan').addConditionalEdges('plan', toWorkers, ['researcher']).addEdge('researcher', END).compile();
      const recorded = recordedPlugin(`lg-send-react-${fromStart ? 'start' : 'plan'}-${mode}`);
      const callbacks = [new NemoRelayCallbackHandler(recorded.hooks)];
      const input = { cities, messages: [] };
      let result = { messages: [] as BaseMessage[] };
      if (mode === 'invoke') result = await graph.invoke(input, { callbacks });
      else if (mode === 'stream') {
        // Every namespace's updates, the workers' too; the last root "values" chunk is the final state.
        for await (const [namespace, kind, chunk] of await graph.stream(input, { callbacks, streamMode: ['updates', 'values'], subgraphs: true })) if (namespace.length === 0 && kind === 'values') result = chunk as typeof result;
      } else {
        for await (const event of graph.streamEvents(input, { version: 'v2', callbacks })) {
          if (event.event === 'on_chain_end' && event.metadata?.langgraph_node === undefined && event.data?.output?.messages !== undefined) result = event.data.output;
        }
      }
      expect(result.messages.filter((m) => m.getType() === 'ai')).toHaveLength(4);
      // streamEvents makes the workers' models stream on the wire (with the usage chunk); invoke and stream do not.
      expect(bodies.map((body) => /"stream":\s*true/.test(body))).toEqual(bodies.map(() => mode === 'streamEvents'));
      expect(maxInFlight()).toBe(2);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      // The run's own steps: the plan (when there is one) and one link per worker; each worker's run is its own trajectory.
      const children = subagents(doc);
      expect(children).toHaveLength(2);
      const childOf = (city: string) => children.find((child) => userSteps(child)[0] === `Tell me about ${city}`)!;
      for (const city of cities) expect(userSteps(childOf(city))).toEqual([`Tell me about ${city}`]);
      expect(userSteps(doc)).toEqual(fromStart ? [] : ['Which cities should I research? Oslo, Rome']);
      const links = agentSteps(doc).filter((step) => step.llm_call_count === 0).flatMap((step) => step.observation.results.map((r: AtifDoc) => r.subagent_trajectory_ref?.[0]?.trajectory_id));
      expect(links.sort()).toEqual(children.map((child) => child.trajectory_id).sort());
      const aiMessages = [...planned, ...result.messages.filter((m) => m.getType() === 'ai')];
      expectEveryCallOnce(doc, aiMessages, (message) => (String(message.id).startsWith('chatcmpl-oslo') ? childOf('Oslo') : String(message.id).startsWith('chatcmpl-rome') ? childOf('Rome') : doc));
      // Each worker observed its own tools' results, under their ids: what its ToolNode gave its model.
      const toolResults = (child: AtifDoc) => (child.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, r.content])).sort();
      expect(toolResults(childOf('Oslo'))).toEqual([['call_oslo_people', 'Population of Oslo: 709,000'], ['call_oslo_weather', 'Weather in Oslo: snow']]);
      expect(toolResults(childOf('Rome'))).toEqual([['call_rome_weather', 'Weather in Rome: sun']]);
      expect(agentSteps(childOf('Oslo')).at(-1)!.message).toBe('Oslo: snow, 709,000 people.');
      expect(agentSteps(childOf('Rome')).at(-1)!.message).toBe('Rome: sun.');
      const starts = recorded.log.filter((e) => e.hook === 'subagent_start').map((e) => [e.payload.child_role, e.payload.child_goal]);
      expect(starts.sort()).toEqual([['researcher', 'Tell me about Oslo'], ['researcher', 'Tell me about Rome']]);
      await sameOnNative(recorded, true);
    }, 30_000);
  }

  it('createAgent workers sent with Send, on Anthropic: each a sub-agent, their parallel answers kept apart', async () => {
    const topics = ['tides', 'eclipses', 'seasons'];
    const tokens: Record<string, [number, number]> = { tides: [101, 11], eclipses: [202, 13], seasons: [303, 17] };
    const { fetch, maxInFlight } = concurrentFetch(
      topics.map((topic) => ({
        when: `Explain ${topic}`,
        wave: 'explain',
        reply: anthropicMessage({ id: `msg_${topic}`, model: CLAUDE, content: [{ type: 'text', text: `${topic} explained.` }], usage: { input_tokens: tokens[topic]![0], output_tokens: tokens[topic]![1] } }),
      })),
    );
    const explainer = createAgent({ model: anthropic(fetch), tools: [], name: 'explainer', systemPrompt: 'You explain one thing in one sentence.' });
    const State = Annotation.Root({ ...MessagesAnnotation.spec, topics: Annotation<string[]> });
    const graph = new StateGraph(State)
      // A node that runs the agent with the node's config, as the docs' multi-agent pages call a createAgent agent.
      .addNode('explainer', async (state: { messages: BaseMessage[] }, config: LangGraphRunnableConfig) => ({ messages: (await explainer.invoke(state, config)).messages.slice(-1) }))
      .addConditionalEdges(START, (state) => state.topics.map((topic) => new Send('explainer', { messages: [new HumanMessage(`Explain ${topic}`)] })), ['explainer'])
      .addEdge('explainer', END)
      .compile();
    const recorded = recordedPlugin('lg-send-create-agent');
    const result = await graph.invoke({ topics, messages: [] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(maxInFlight()).toBe(3);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const children = subagents(doc);
    expect(children.map((child) => userSteps(child)[0]).sort()).toEqual(topics.map((topic) => `Explain ${topic}`).sort());
    const childOf = (topic: string) => children.find((child) => userSteps(child)[0] === `Explain ${topic}`)!;
    for (const topic of topics) expect(agentSteps(childOf(topic)).map((step) => step.message)).toEqual([`${topic} explained.`]);
    expectEveryCallOnce(doc, result.messages.filter((m) => m.getType() === 'ai'), (message) => childOf(String(message.id).slice('msg_'.length)));
    await sameOnNative(recorded, true);
  }, 30_000);

  it('a supervisor hands two tasks to one worker at once (handoff tools whose Command sends a task description): each worker run a sub-agent linked to its own handoff call', async () => {
    const { fetch, maxInFlight } = concurrentFetch([
      {
        when: 'You manage a researcher',
        reply: chatCompletion({
          id: 'chatcmpl-sup1',
          model: GPT,
          content: null,
          toolCalls: [
            { id: 'call_task_gdp', name: 'transfer_to_researcher', args: { task_description: 'Find the GDP of Norway' } },
            { id: 'call_task_pop', name: 'transfer_to_researcher', args: { task_description: 'Find the population of Norway' } },
          ],
          usage: { prompt_tokens: 120, completion_tokens: 40 },
        }),
      },
      { when: 'Find the GDP of Norway', wave: 'tasks', reply: chatCompletion({ id: 'chatcmpl-gdp', model: GPT, content: 'GDP: 485 billion USD.', usage: { prompt_tokens: 31, completion_tokens: 7 } }) },
      { when: 'Find the population of Norway', wave: 'tasks', reply: chatCompletion({ id: 'chatcmpl-pop', model: GPT, content: 'Population: 5.5 million.', usage: { prompt_tokens: 37, completion_tokens: 8 } }) },
    ]);
    // The docs' supervisor with task descriptions: the handoff tool's Command sends the worker its task, to the parent graph.
    const createTaskDescriptionHandoffTool = (agentName: string) =>
      tool(
        async ({ task_description }) => {
          const state = getCurrentTaskInput() as typeof MessagesAnnotation.State;
          const agentInput = { ...state, messages: [{ role: 'user', content: task_description }] };
          return new Command({ goto: [new Send(agentName, agentInput)], graph: Command.PARENT });
        },
        { name: `transfer_to_${agentName}`, description: `Ask ${agentName} for help.`, schema: z.object({ task_description: z.string().describe('What the next agent should do, with all the context it needs.') }) },
      );
    const supervisor = createReactAgent({ llm: openai(fetch), tools: [createTaskDescriptionHandoffTool('researcher')], name: 'supervisor', prompt: 'You manage a researcher. Give it one task at a time.' });
    const researcher = createReactAgent({ llm: openai(fetch), tools: [], name: 'researcher', prompt: 'You research facts.' });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor, { ends: ['researcher'] })
      .addNode('researcher', researcher)
      .addEdge(START, 'supervisor')
      .addEdge('researcher', END)
      .compile();
    const recorded = recordedPlugin('lg-send-handoff');
    // The supervisor's handoff message is not in the final state (the Sends replace the messages): LangChain's own callback reports every AI message.
    const got: BaseMessage[] = [];
    const collect = { handleLLMEnd: (output: LLMResult) => void got.push((output.generations[0]![0] as ChatGeneration).message) };
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'What are the GDP and the population of Norway?' }] }, { callbacks: [collect, new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(result.messages.filter((m) => m.getType() === 'ai').map((m) => m.content).sort()).toEqual(['GDP: 485 billion USD.', 'Population: 5.5 million.']);
    expect(maxInFlight()).toBe(2);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);

    const children = subagents(doc);
    expect(children).toHaveLength(2);
    const childOf = (task: string) => children.find((child) => userSteps(child)[0] === task)!;
    expect(refOf(doc, 'call_task_gdp')).toBe(childOf('Find the GDP of Norway').trajectory_id);
    expect(refOf(doc, 'call_task_pop')).toBe(childOf('Find the population of Norway').trajectory_id);
    expect(agentSteps(childOf('Find the GDP of Norway')).map((step) => step.message)).toEqual(['GDP: 485 billion USD.']);
    expect(agentSteps(childOf('Find the population of Norway')).map((step) => step.message)).toEqual(['Population: 5.5 million.']);
    expect(got).toHaveLength(3);
    expectEveryCallOnce(doc, got, (message) => (message.id === 'chatcmpl-gdp' ? childOf('Find the GDP of Norway') : message.id === 'chatcmpl-pop' ? childOf('Find the population of Norway') : doc));
    await sameOnNative(recorded, true);
  }, 30_000);

  it('workers sent with Send that each ask for approval (humanInTheLoopMiddleware), resumed by one Command with a decision per interrupt id: each worker records its own decision', async () => {
    const { fetch } = concurrentFetch([
      // The resumed workers' second requests first: they also hold the first request's text.
      { when: 'deleted /tmp/a.log', reply: anthropicMessage({ id: 'msg_a2', model: CLAUDE, content: [{ type: 'text', text: 'Deleted /tmp/a.log.' }], usage: { input_tokens: 130, output_tokens: 8 } }) },
      { when: 'Keep that one', reply: anthropicMessage({ id: 'msg_b2', model: CLAUDE, content: [{ type: 'text', text: 'I kept /tmp/b.log.' }], usage: { input_tokens: 140, output_tokens: 9, cache_read_input_tokens: 64 } }) },
      { when: 'Delete /tmp/a.log', wave: 'ask', reply: anthropicMessage({ id: 'msg_a1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_a', name: 'delete_file', input: { path: '/tmp/a.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }) },
      { when: 'Delete /tmp/b.log', wave: 'ask', reply: anthropicMessage({ id: 'msg_b1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_b', name: 'delete_file', input: { path: '/tmp/b.log' } }], usage: { input_tokens: 80, output_tokens: 21 } }) },
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const cleaner = createAgent({
      model: anthropic(fetch),
      tools: [deleteFile],
      name: 'cleaner',
      middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })],
    });
    const State = Annotation.Root({ ...MessagesAnnotation.spec, paths: Annotation<string[]> });
    const graph = new StateGraph(State)
      .addNode('cleaner', async (state: { messages: BaseMessage[] }, config: LangGraphRunnableConfig) => ({ messages: (await cleaner.invoke(state, config)).messages.slice(-1) }))
      .addConditionalEdges(START, (state) => state.paths.map((path) => new Send('cleaner', { messages: [new HumanMessage(`Delete ${path}`)] })), ['cleaner'])
      .addEdge('cleaner', END)
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-send-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'cleanup-2' } };
    const first = (await graph.invoke({ paths: ['/tmp/a.log', '/tmp/b.log'], messages: [] }, config)) as unknown as { __interrupt__: Array<{ id: string; value: { actionRequests: Array<{ args: { path: string } }> } }> };
    expect(first.__interrupt__).toHaveLength(2);
    // Several interrupts at once are resumed by id, as LangGraph's interrupt docs write it: approve a, reject b.
    const resume = Object.fromEntries(
      first.__interrupt__.map((pause) => [pause.id, { decisions: [pause.value.actionRequests[0]!.args.path === '/tmp/a.log' ? { type: 'approve' } : { type: 'reject', message: 'Keep that one.' }] }]),
    );
    const second = await graph.invoke(new Command({ resume }), config);
    expect(second.messages.map((m) => m.content).sort()).toEqual(['Deleted /tmp/a.log.', 'I kept /tmp/b.log.']);
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect(validateAtif(atif[0]!)).toEqual([]);
    const marks = (hook: string) => recorded.log.filter((e) => e.hook === hook).map((e) => [e.payload.tool_call_id, e.payload.choice ?? null]).sort();
    expect(marks('pre_approval_request')).toEqual([['toolu_a', null], ['toolu_b', null]]);
    expect(marks('post_approval_response')).toEqual([['toolu_a', 'once'], ['toolu_b', 'deny']]);
    // The rejected call never ran: it is denied with the text the model was given; the approved one ran.
    const toolEnds = recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status]).sort();
    expect(toolEnds).toEqual([['toolu_a', 'ok'], ['toolu_b', 'denied']]);
    // Each decision is recorded in the trajectory of the worker that asked (its resumed run).
    const session = (callId: string, hook: string) => recorded.log.find((e) => e.hook === hook && e.payload.tool_call_id === callId)!.payload.session_id;
    for (const callId of ['toolu_a', 'toolu_b']) expect(session(callId, 'post_approval_response')).toBe(session(callId, 'post_tool_call'));
    expect(session('toolu_a', 'post_approval_response')).not.toBe(session('toolu_b', 'post_approval_response'));
    await sameOnNative(recorded, true);
  }, 30_000);
});

describe('Send workers that run their own model and tool loop, and the thread turn after a fan-out', () => {
  // What each tool returns, by the model's call id: every tool result is checked against the call that asked for it.
  const results: Record<string, string> = {
    call_oslo_weather: 'Weather in Oslo: snow',
    call_oslo_people: 'Population of Oslo: 709,000',
    call_rome_weather: 'Weather in Rome: sun',
  };
  const args: Record<string, { city: string }> = { call_oslo_weather: { city: 'Oslo' }, call_oslo_people: { city: 'Oslo' }, call_rome_weather: { city: 'Rome' } };
  /** Oslo's worker asks for two tools at once, Rome's for one; each then answers from its tools' results. */
  const loopRoutes = (provider: 'openai' | 'anthropic'): Route[] => {
    const reply = (id: string, text: string | null, calls: string[], usage: [number, number, number]): WireReply =>
      provider === 'openai'
        ? chatCompletion({ id: `chatcmpl-${id}`, model: GPT, content: text, toolCalls: calls.map((call) => ({ id: call, name: call.endsWith('people') ? 'population' : 'weather', args: args[call]! })), usage: { prompt_tokens: usage[0], completion_tokens: usage[1], cached: usage[2] } })
        : anthropicMessage({
            id: `msg_${id}`,
            model: CLAUDE,
            content: [...(text === null ? [] : [{ type: 'text' as const, text }]), ...calls.map((call) => ({ type: 'tool_use' as const, id: call, name: call.endsWith('people') ? 'population' : 'weather', input: args[call]! }))],
            usage: { input_tokens: usage[0], output_tokens: usage[1], cache_read_input_tokens: usage[2] },
          });
    return [
      { when: 'Research Oslo', wave: 'first', reply: reply('oslo-1', null, ['call_oslo_weather', 'call_oslo_people'], [51, 21, 0]) },
      { when: 'Research Rome', wave: 'first', reply: reply('rome-1', null, ['call_rome_weather'], [52, 11, 0]) },
      { when: 'Population of Oslo', wave: 'second', reply: reply('oslo-2', 'Oslo: snow, 709,000 people.', [], [93, 9, 48]) },
      { when: 'Weather in Rome', wave: 'second', reply: reply('rome-2', 'Rome: sun.', [], [77, 4, 0]) },
    ];
  };
  const loops = [
    ['a plain node that runs its tools with the model’s tool calls', 'node-call', 'openai'],
    ['a plain node that runs its tools with the calls’ args and makes the ToolMessages itself', 'node-args', 'anthropic'],
    ['a plain node with a ToolNode of its own', 'node-toolnode', 'anthropic'],
    ['a subgraph of its own (a model node and a ToolNode)', 'subgraph', 'openai'],
  ] as const;
  for (const [label, kind, provider] of loops) {
    it(`workers sent with Send, each ${label}, on ${provider}: every tool call and result stays with the call that asked`, async () => {
      const { fetch, maxInFlight } = concurrentFetch(loopRoutes(provider));
      // Each tool waits a little, Oslo's the longest: the workers' tool calls overlap and end out of order.
      const weather = tool(async ({ city }) => (await sleep(city === 'Oslo' ? 20 : 5), results[`call_${city.toLowerCase()}_weather`]!), { name: 'weather', description: 'The weather of a city', schema: z.object({ city: z.string() }) });
      const population = tool(async ({ city }) => `Population of ${city}: 709,000`, { name: 'population', description: 'The population of a city', schema: z.object({ city: z.string() }) });
      const tools = [weather, population];
      const toolsByName = Object.fromEntries(tools.map((t) => [t.name, t])) as Record<string, typeof weather>;
      const model = (provider === 'openai' ? openai(fetch) : anthropic(fetch)).bindTools(tools);
      const State = Annotation.Root({ cities: Annotation<string[]>, reports: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
      // As LangGraph's workflows page writes an agent's loop: call the model with the bound tools, run what it asks, until it answers.
      const plainWorker = async (state: { city: string }) => {
        const messages: BaseMessage[] = [new HumanMessage(`Research ${state.city}`)];
        const toolNode = new ToolNode(tools);
        for (;;) {
          const ai = (await model.invoke(messages)) as AIMessage;
          messages.push(ai);
          if (!ai.tool_calls?.length) return { reports: [String(ai.content)] };
          if (kind === 'node-toolnode') messages.push(...((await toolNode.invoke({ messages: [ai] })) as { messages: BaseMessage[] }).messages);
          else if (kind === 'node-call') for (const call of ai.tool_calls) messages.push(await toolsByName[call.name]!.invoke(call));
          else for (const call of ai.tool_calls) messages.push(new ToolMessage({ content: await toolsByName[call.name]!.invoke(call.args as { city: string }), tool_call_id: call.id! }));
        }
      };
      const shouldContinue = (state: typeof MessagesAnnotation.State) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END);
      const subgraph = new StateGraph(MessagesAnnotation)
        .addNode('llmCall', async (state) => ({ messages: [await model.invoke(state.messages)] }))
        .addNode('tools', new ToolNode(tools))
        .addEdge(START, 'llmCall')
        .addConditionalEdges('llmCall', shouldContinue, ['tools', END])
        .addEdge('tools', 'llmCall')
        .compile();
      const subgraphWorker = async (state: { city: string }, config: LangGraphRunnableConfig) => ({
        reports: [String((await subgraph.invoke({ messages: [new HumanMessage(`Research ${state.city}`)] }, config)).messages.at(-1)!.content)],
      });
      const graph = new StateGraph(State)
        .addNode('worker', (kind === 'subgraph' ? subgraphWorker : plainWorker) as never)
        .addConditionalEdges(START, (state) => state.cities.map((city) => new Send('worker', { city })), ['worker'])
        .addEdge('worker', END)
        .compile();
      const recorded = recordedPlugin(`lg-send-loop-${kind}`);
      const got: BaseMessage[] = [];
      const collect = { handleLLMEnd: (output: LLMResult) => void got.push((output.generations[0]![0] as ChatGeneration).message) };
      const result = await graph.invoke({ cities: ['Oslo', 'Rome'] }, { callbacks: [collect, new NemoRelayCallbackHandler(recorded.hooks)] });
      expect(result.reports).toEqual(['Oslo: snow, 709,000 people.', 'Rome: sun.']);
      expect(maxInFlight()).toBe(2);
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const children = subagents(doc);
      const childOf = (city: string) => children.find((child) => userSteps(child)[0] === `Research ${city}`)!;
      if (kind === 'subgraph') expect(children.map((child) => userSteps(child)[0]).sort()).toEqual(['Research Oslo', 'Research Rome']);
      else expect(children).toEqual([]);
      const cityOf = (message: BaseMessage) => (String(message.id).includes('oslo') ? 'Oslo' : 'Rome');
      expectEveryCallOnce(doc, got, (message) => (kind === 'subgraph' ? childOf(cityOf(message)) : doc));
      // ATOF: each call the model asked for is one tool scope under the model's own call id, its args and its own result.
      const toolEvents = atof.filter((e) => e.category === 'tool');
      const asked = got.flatMap((message) => ((message as AIMessage).tool_calls ?? []).map((call) => call.id!));
      expect(asked.sort()).toEqual(Object.keys(results).sort());
      expect([...new Set(toolEvents.map((e) => e.category_profile.tool_call_id))].sort()).toEqual(asked.sort());
      for (const callId of asked) {
        const [start, end, ...more] = toolEvents.filter((e) => e.category_profile.tool_call_id === callId);
        expect(more, callId).toEqual([]);
        expect([start!.scope_category, end!.scope_category, end!.uuid], callId).toEqual(['start', 'end', start!.uuid]);
        expect([start!.data, end!.data], callId).toEqual([args[callId], results[callId]]);
      }
      // ATIF: every result once, and one that names its call sits on the step that made the call, in the trajectory of the worker that asked.
      const placed = allDocs(doc).flatMap((d) => (d.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).filter((r: AtifDoc) => r.subagent_trajectory_ref === undefined).map((r: AtifDoc) => [d, step, r] as const)));
      expect(placed.map(([, , r]) => r.content).sort()).toEqual(Object.values(results).sort());
      for (const [d, step, r] of placed) {
        if (r.source_call_id === undefined) {
          // The documented limit (docs/adapters/langchain.md): one trajectory shared by workers whose steps interleave.
          expect(kind === 'subgraph' ? 'unpaired' : step.source, r.content).toBe('system');
          continue;
        }
        expect(results[r.source_call_id], r.source_call_id).toBe(r.content);
        expect((step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), r.source_call_id).toContain(r.source_call_id);
        if (kind === 'subgraph') expect(d.trajectory_id).toBe(childOf(args[r.source_call_id]!.city).trajectory_id);
      }
      await sameOnNative(recorded, kind === 'subgraph');
    }, 30_000);
  }

  it('the next turn of a thread after a fan-out (MemorySaver, one thread_id): one session, turn 1’s workers closed with it, turn 2’s workers new sub-agents', async () => {
    const { fetch } = concurrentFetch([
      { when: 'Tell me about Oslo', wave: 'first', reply: chatCompletion({ id: 'chatcmpl-oslo-1', model: GPT, content: null, toolCalls: [{ id: 'call_oslo_weather', name: 'weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 51, completion_tokens: 21 } }) },
      { when: 'Tell me about Rome', wave: 'first', reply: chatCompletion({ id: 'chatcmpl-rome-1', model: GPT, content: null, toolCalls: [{ id: 'call_rome_weather', name: 'weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 52, completion_tokens: 11 } }) },
      { when: 'Weather in Oslo', wave: 'second', reply: chatCompletion({ id: 'chatcmpl-oslo-2', model: GPT, content: 'Oslo: snow.', usage: { prompt_tokens: 93, completion_tokens: 9, cached: 48 } }) },
      { when: 'Weather in Rome', wave: 'second', reply: chatCompletion({ id: 'chatcmpl-rome-2', model: GPT, content: 'Rome: sun.', usage: { prompt_tokens: 77, completion_tokens: 4 } }) },
      // Turn 2 sends to the same agent again: Paris calls a tool, Bonn answers at once.
      { when: 'Tell me about Paris', wave: 'third', reply: chatCompletion({ id: 'chatcmpl-paris-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris_weather', name: 'weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 61, completion_tokens: 12 } }) },
      { when: 'Tell me about Bonn', wave: 'third', reply: chatCompletion({ id: 'chatcmpl-bonn-1', model: GPT, content: 'Bonn: rain.', usage: { prompt_tokens: 62, completion_tokens: 5 } }) },
      { when: 'Weather in Paris', reply: chatCompletion({ id: 'chatcmpl-paris-2', model: GPT, content: 'Paris: fog.', usage: { prompt_tokens: 99, completion_tokens: 6, cached: 32 } }) },
    ]);
    const weather = tool(async ({ city }) => `Weather in ${city}: ${{ Oslo: 'snow', Rome: 'sun', Paris: 'fog' }[city] ?? 'rain'}`, { name: 'weather', description: 'The weather of a city', schema: z.object({ city: z.string() }) });
    const researcher = createReactAgent({ llm: openai(fetch), tools: [weather], name: 'researcher' });
    const State = Annotation.Root({ ...MessagesAnnotation.spec, cities: Annotation<string[]> });
    const toWorkers = (state: typeof State.State) => state.cities.map((city) => new Send('researcher', { messages: [new HumanMessage(`Tell me about ${city}`)] }));
    const graph = new StateGraph(State).addNode('researcher', researcher).addConditionalEdges(START, toWorkers, ['researcher']).addEdge('researcher', END).compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-send-next-turn');
    const got: BaseMessage[] = [];
    const collect = { handleLLMEnd: (output: LLMResult) => void got.push((output.generations[0]![0] as ChatGeneration).message) };
    // A handler per request, as a server makes one: the thread's session outlives the first.
    const first = new NemoRelayCallbackHandler(recorded.hooks);
    await graph.invoke({ cities: ['Oslo', 'Rome'], messages: [new HumanMessage('Oslo and Rome, please')] }, { callbacks: [collect, first], configurable: { thread_id: 'trip' } });
    const second = await graph.invoke({ cities: ['Paris', 'Bonn'], messages: [new HumanMessage('Now Paris and Bonn')] }, { callbacks: [collect, new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'trip' } });
    // The checkpointer kept turn 1's messages in the thread's state; turn 2 added its own.
    expect(second.messages.filter((m) => m.getType() === 'ai' && m.content !== '').map((m) => m.content)).toEqual(['Oslo: snow.', 'Rome: sun.', 'Paris: fog.', 'Bonn: rain.']);
    first.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.session_id).toBe('trip');
    const log = recorded.log;
    const top = (hook: string) => log.filter((e) => e.hook === hook && e.payload.session_id === 'trip');
    expect(top('on_session_start')).toHaveLength(1);
    expect(top('on_session_finalize').map((e) => e.payload.reason)).toEqual(['closed']);
    expect(top('pre_llm_call').map((e) => [e.payload.user_message, e.payload.is_first_turn])).toEqual([['Oslo and Rome, please', true], ['Now Paris and Bonn', false]]);
    const turns = top('pre_llm_call').map((e) => e.payload.turn_id);
    // Each turn's workers start after it and stop before it ends; none of turn 1's outlives it, none of turn 2's is one of them.
    const at = (hook: string, turn: unknown) => log.findIndex((e) => e.hook === hook && e.payload.session_id === 'trip' && e.payload.turn_id === turn);
    const workers = (turn: unknown) => log.flatMap((e, i) => (e.hook === 'subagent_start' && e.payload.parent_turn_id === turn ? [[e.payload.child_session_id, e.payload.child_goal, i] as const] : []));
    for (const [turn, goals] of [[turns[0], ['Tell me about Oslo', 'Tell me about Rome']], [turns[1], ['Tell me about Bonn', 'Tell me about Paris']]] as const) {
      expect(workers(turn).map(([, goal]) => goal).sort()).toEqual(goals);
      for (const [child, , started] of workers(turn)) {
        const stopped = log.findIndex((e) => e.hook === 'subagent_stop' && e.payload.child_session_id === child);
        expect(started).toBeGreaterThan(at('pre_llm_call', turn));
        expect(stopped).toBeGreaterThan(started);
        expect(stopped).toBeLessThan(at('on_session_end', turn));
      }
    }
    expect(new Set([...workers(turns[0]), ...workers(turns[1])].map(([child]) => child)).size).toBe(4);
    // The trajectory: one link per worker, turn 1's first; each worker's own steps, nothing of another's or of turn 1 in turn 2's.
    const children = subagents(doc);
    const childOf = (city: string) => children.find((child) => userSteps(child)[0] === `Tell me about ${city}`)!;
    const links = agentSteps(doc).flatMap((step) => step.observation.results.map((r: AtifDoc) => r.subagent_trajectory_ref?.[0]?.trajectory_id));
    expect(links.slice(0, 2).sort()).toEqual([childOf('Oslo').trajectory_id, childOf('Rome').trajectory_id].sort());
    expect(links.slice(2).sort()).toEqual([childOf('Paris').trajectory_id, childOf('Bonn').trajectory_id].sort());
    for (const city of ['Oslo', 'Rome', 'Paris', 'Bonn']) {
      expect(userSteps(childOf(city))).toEqual([`Tell me about ${city}`]);
      const text = JSON.stringify(childOf(city).steps);
      for (const other of ['Oslo', 'Rome', 'Paris', 'Bonn'].filter((c) => c !== city)) expect(text, `${other} in ${city}'s trajectory`).not.toContain(other);
    }
    expectEveryCallOnce(doc, got, (message) => childOf(String(message.id).split('-')[1]!.replace(/^./, (c) => c.toUpperCase())));
    await sameOnNative(recorded, true);
  }, 30_000);

  it('the next turn of a thread whose supervisor handed tasks out with Send: the supervisor stays the run’s own agent, each turn’s handoffs link their own workers', async () => {
    const sup = (n: number, calls: Array<[string, string]>) => ({
      when: n === 1 ? 'Norway?' : 'Sweden?',
      reply: chatCompletion({ id: `chatcmpl-sup${n}`, model: GPT, content: null, toolCalls: calls.map(([id, task]) => ({ id, name: 'transfer_to_researcher', args: { task_description: task } })), usage: { prompt_tokens: 120, completion_tokens: 40 } }),
    });
    // Turn 2's routes first: its requests hold turn 1's text too (the checkpointer keeps the thread's messages).
    const { fetch } = concurrentFetch([
      { when: 'Find the population of Sweden', wave: 't2', reply: chatCompletion({ id: 'chatcmpl-spop', model: GPT, content: 'Population: 10.5 million.', usage: { prompt_tokens: 47, completion_tokens: 8 } }) },
      { when: 'Find the GDP of Sweden', wave: 't2', reply: chatCompletion({ id: 'chatcmpl-sgdp', model: GPT, content: 'GDP: 600 billion USD.', usage: { prompt_tokens: 41, completion_tokens: 7 } }) },
      sup(2, [['call_s_gdp', 'Find the GDP of Sweden'], ['call_s_pop', 'Find the population of Sweden']]),
      { when: 'Find the GDP of Norway', wave: 'tasks', reply: chatCompletion({ id: 'chatcmpl-gdp', model: GPT, content: 'GDP: 485 billion USD.', usage: { prompt_tokens: 31, completion_tokens: 7 } }) },
      { when: 'Find the population of Norway', wave: 'tasks', reply: chatCompletion({ id: 'chatcmpl-pop', model: GPT, content: 'Population: 5.5 million.', usage: { prompt_tokens: 37, completion_tokens: 8 } }) },
      sup(1, [['call_task_gdp', 'Find the GDP of Norway'], ['call_task_pop', 'Find the population of Norway']]),
    ]);
    const createTaskDescriptionHandoffTool = (agentName: string) =>
      tool(
        async ({ task_description }) => {
          const state = getCurrentTaskInput() as typeof MessagesAnnotation.State;
          const agentInput = { ...state, messages: [{ role: 'user', content: task_description }] };
          return new Command({ goto: [new Send(agentName, agentInput)], graph: Command.PARENT });
        },
        { name: `transfer_to_${agentName}`, description: `Ask ${agentName} for help.`, schema: z.object({ task_description: z.string().describe('What the next agent should do, with all the context it needs.') }) },
      );
    const supervisor = createReactAgent({ llm: openai(fetch), tools: [createTaskDescriptionHandoffTool('researcher')], name: 'supervisor', prompt: 'You manage a researcher.' });
    const researcher = createReactAgent({ llm: openai(fetch), tools: [], name: 'researcher', prompt: 'You research facts.' });
    const graph = new StateGraph(MessagesAnnotation).addNode('supervisor', supervisor, { ends: ['researcher'] }).addNode('researcher', researcher).addEdge(START, 'supervisor').addEdge('researcher', END).compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-send-next-turn-handoff');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const got: BaseMessage[] = [];
    const collect = { handleLLMEnd: (output: LLMResult) => void got.push((output.generations[0]![0] as ChatGeneration).message) };
    const config = { callbacks: [collect, handler], configurable: { thread_id: 'nordics' } };
    await graph.invoke({ messages: [{ role: 'user', content: 'GDP and population of Norway?' }] }, config);
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'And of Sweden?' }] }, config);
    expect(result.messages.filter((m) => m.getType() === 'ai').map((m) => m.content).sort()).toEqual(['GDP: 485 billion USD.', 'GDP: 600 billion USD.', 'Population: 10.5 million.', 'Population: 5.5 million.']);
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The supervisor's steps are the session's, a turn each; each handoff call refers to the worker its Send started.
    expect(userSteps(doc)).toEqual(['GDP and population of Norway?', 'And of Sweden?']);
    expect(agentSteps(doc).map((step) => step.tool_calls.map((call: AtifDoc) => call.tool_call_id))).toEqual([['call_task_gdp', 'call_task_pop'], ['call_s_gdp', 'call_s_pop']]);
    const children = subagents(doc);
    expect(children).toHaveLength(4);
    const childOf = (task: string) => children.find((child) => userSteps(child)[0] === task)!;
    const tasks: Record<string, string> = { call_task_gdp: 'Find the GDP of Norway', call_task_pop: 'Find the population of Norway', call_s_gdp: 'Find the GDP of Sweden', call_s_pop: 'Find the population of Sweden' };
    for (const [callId, task] of Object.entries(tasks)) {
      expect(refOf(doc, callId), callId).toBe(childOf(task).trajectory_id);
      expect(userSteps(childOf(task))).toEqual([task]);
    }
    const top = recorded.log.filter((e) => e.hook === 'pre_llm_call' && e.payload.session_id === 'nordics');
    expect(top.map((e) => e.payload.is_first_turn)).toEqual([true, false]);
    // Turn 1's workers stopped within turn 1.
    const turnEnd = recorded.log.findIndex((e) => e.hook === 'on_session_end' && e.payload.session_id === 'nordics');
    for (const callId of ['call_task_gdp', 'call_task_pop']) expect(recorded.log.findIndex((e) => e.hook === 'subagent_stop' && e.payload.tool_call_id === callId)).toBeLessThan(turnEnd);
    const worker: Record<string, string> = { 'chatcmpl-gdp': tasks.call_task_gdp!, 'chatcmpl-pop': tasks.call_task_pop!, 'chatcmpl-sgdp': tasks.call_s_gdp!, 'chatcmpl-spop': tasks.call_s_pop! };
    expectEveryCallOnce(doc, got, (message) => (worker[String(message.id)] === undefined ? doc : childOf(worker[String(message.id)]!)));
    await sameOnNative(recorded, true);
  }, 30_000);
});
