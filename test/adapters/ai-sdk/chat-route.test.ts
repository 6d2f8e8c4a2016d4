// The AI SDK program most users write: a chat route (POST /api/chat:
// `streamText` over the UI messages, `toUIMessageStreamResponse()` or ai 7's
// `createUIMessageStreamResponse` + `toUIMessageStream`) served on
// loopback, driven by the SDK's own chat client (`AbstractChat`, what
// `useChat` wraps, with `DefaultChatTransport`), which POSTs the whole
// conversation every turn, runs a client-side tool (no `execute`) answered
// with `addToolOutput` and sent again by `sendAutomaticallyWhen`, and lets
// the user press stop mid-answer. The model is @ai-sdk/openai's Responses
// API on a fake fetch speaking its SSE (wire.ts); sessions come from the
// chat id of the request being served (docs/adapters/ai-sdk.md, "Sessions").
// Two chats run at once. What a user reading the files takes as true is
// checked: one session per chat, one turn per POST, the resent history not
// repeated as new user steps, the client tool's output as its call's
// observation, the stopped turn as the server's run ended (or did not), every
// span closed, each call's tokens the SDK's own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DefaultChatTransport,
  convertToModelMessages,
  createUIMessageStreamResponse,
  lastAssistantMessageIsCompleteWithToolCalls,
  stepCountIs,
  streamText,
  toUIMessageStream,
  tool,
  type LanguageModelUsage,
  type UIMessage,
} from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { treeFromAtif } from '../../../src/cli/view/from-atif.ts';
import { treesFromAtof } from '../../../src/cli/view/from-atof.ts';
import type { ViewNode } from '../../../src/cli/view/model.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { Chat, until } from './chat-client.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/**
 * How the route treats a user's stop: `consume`: `result.consumeStream()` first; `forward`: `abortSignal: req.signal`.
 * `helpers`: the answer as ai 7's docs write it, `createUIMessageStreamResponse({ stream: toUIMessageStream(...) })`,
 * rather than the `toUIMessageStreamResponse()` method (deprecated in ai 7, in most routes written before it).
 */
interface RouteShape {
  consume: boolean;
  forward: boolean;
  helpers?: boolean;
}

/** What the server saw: each POST's chat id, the SDK's usage of each model call and of each run that finished, and the clients that left. */
interface ServerLog {
  posts: string[];
  calls: Array<{ chatId: string; usage: LanguageModelUsage }>;
  finished: Array<{ chatId: string; totalUsage: LanguageModelUsage; steps: Array<{ usage: LanguageModelUsage }> }>;
  aborted: string[];
  left: string[];
}

const model = 'gpt-4o-2024-08-06';
const usage = (input: number, output: number) => ({ input, output });

/**
 * The route as the AI SDK docs write it, behind node:http the way Node
 * frameworks serve a Web handler: the request's `signal` aborts when the
 * client goes away before the answer ended, and the answer's body is
 * cancelled then.
 */
async function serveChatRoute(shape: RouteShape, providers: Map<string, FakeProvider>, log: ServerLog) {
  const requestContext = new AsyncLocalStorage<{ chatId: string }>();
  // Each chat's replies are scripted apart; the model's fetch finds them by the chat of the request it serves.
  const fetch = ((input: unknown, init: never) => providers.get(requestContext.getStore()!.chatId)!.fetch(input, init)) as typeof globalThis.fetch;
  const openai = AI_SDK_PROVIDERS[0]!.openai({ apiKey: 'test-key', fetch });
  const tools = {
    weather: tool({ description: 'Get the weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }),
    // A client-side tool: the browser answers it.
    getLocation: tool({ description: 'Get the user location', inputSchema: z.object({}) }),
  };

  async function POST(req: Request): Promise<Response> {
    const { messages, id } = (await req.json()) as { messages: UIMessage[]; id: string };
    log.posts.push(id);
    return await requestContext.run({ chatId: id }, async () => {
      const result = streamText({
        model: openai('gpt-4o'),
        messages: await convertToModelMessages(messages),
        tools,
        stopWhen: stepCountIs(5),
        ...(shape.forward ? { abortSignal: req.signal } : {}),
        onLanguageModelCallEnd: ({ usage }) => void log.calls.push({ chatId: id, usage }),
        onFinish: ({ totalUsage, steps }) => void log.finished.push({ chatId: id, totalUsage, steps }),
        onAbort: () => void log.aborted.push(id),
      });
      if (shape.consume) void result.consumeStream();
      if (shape.helpers === true) return createUIMessageStreamResponse({ stream: toUIMessageStream({ stream: result.stream }) });
      return result.toUIMessageStreamResponse();
    });
  }

  const server = createServer(async (request, response) => {
    const gone = new AbortController();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const chatId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
    response.on('close', () => {
      if (response.writableFinished) return;
      gone.abort();
      log.left.push(chatId);
    });
    const answer = await POST(new Request(`http://127.0.0.1${request.url}`, { method: request.method, headers: request.headers as Record<string, string>, body: Buffer.concat(chunks), signal: gone.signal }));
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    const reader = answer.body!.getReader();
    gone.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) response.write(next.value);
      response.end();
    } catch {
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`,
    sessionOfRequest: () => requestContext.getStore()?.chatId,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The chat client's idle keep-alive connections would hold the close for the server's keep-alive timeout.
        server.closeAllConnections();
      }),
  };
}

/** One chat's words and ids, so that two chats at once can be told apart. */
function script(tag: string) {
  return {
    hello: `Hello (${tag})`,
    weather: `Weather in Paris? (${tag})`,
    where: `Where am I? (${tag})`,
    story: `Tell me a story (${tag})`,
    thanks: `Thanks (${tag})`,
    city: tag === 'a' ? 'Berlin' : 'Lisbon',
    weatherCall: `call_weather_${tag}`,
    locationCall: `call_location_${tag}`,
  };
}

/**
 * One user's conversation: a question; a server tool then the answer; a
 * client tool answered in the browser and sent back automatically; a story
 * stopped mid-answer; a last question after the stop.
 */
async function converse(url: string, chatId: string, fake: FakeProvider, log: ServerLog, shape: RouteShape) {
  const words = script(chatId.slice(-1));
  let release!: () => void;
  const pause = new Promise<void>((resolve) => (release = resolve));
  fake
    .reply('responses', { id: 'resp_1', model, text: 'Hi! How can I help?', usage: usage(11, 6) }, { stream: true })
    .reply('responses', { id: 'resp_2', model, toolCalls: [{ id: words.weatherCall, name: 'weather', args: { city: 'Paris' } }], usage: usage(31, 9) }, { stream: true })
    .reply('responses', { id: 'resp_3', model, text: 'It is sunny in Paris.', usage: usage(52, 7) }, { stream: true })
    .reply('responses', { id: 'resp_4', model, toolCalls: [{ id: words.locationCall, name: 'getLocation', args: {} }], usage: usage(70, 5) }, { stream: true })
    .reply('responses', { id: 'resp_5', model, text: `You are in ${words.city}.`, usage: usage(88, 6) }, { stream: true })
    .reply('responses', { id: 'resp_6', model, text: 'Once upon a time, a model told a very long story.', usage: usage(101, 12) }, { stream: true, pause })
    .reply('responses', { id: 'resp_7', model, text: 'You are welcome.', usage: usage(130, 4) }, { stream: true });
  let answered = 0;
  const chat: Chat = new Chat({
    id: chatId,
    transport: new DefaultChatTransport({ api: url }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    onToolCall: ({ toolCall }) => {
      // As the SDK docs' client runs an automatic client-side tool: no await.
      if (toolCall.toolName === 'getLocation') void chat.addToolOutput({ tool: 'getLocation', toolCallId: toolCall.toolCallId, output: words.city } as never);
    },
    onFinish: () => void (answered += 1),
  });
  await chat.sendMessage({ text: words.hello });
  await chat.sendMessage({ text: words.weather });
  await chat.sendMessage({ text: words.where });
  // The tool's output went back on its own: a second POST, answered.
  await until(() => answered === 4 && chat.status === 'ready');

  const story = chat.sendMessage({ text: words.story });
  await until(() => JSON.stringify(chat.lastMessage?.parts ?? []).includes('Once upon'));
  await chat.stop();
  await story;
  // The server saw the client leave; only then may the model go on answering.
  await until(() => log.left.includes(chatId));
  release();
  // The server's run: stopped, or the model's answer read to its end (the SDK reads it for the client that left too).
  if (shape.forward) await until(() => log.aborted.includes(chatId));
  else await until(() => log.calls.filter((one) => one.chatId === chatId).length === 6);
  const shown = chat.lastMessage!.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');

  await chat.sendMessage({ text: words.thanks });
  expect(chat.lastMessage!.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['You are welcome.']);
  expect(fake.pending).toBe(0);
  return { words, shown };
}

type Steps = AtifDoc[];

/** A `view` tree's turns as a reader sees them: the user message, each call (`!` failed) with the tools under it, and how the turn ended. */
function viewTurns(root: ViewNode): Array<{ said: string | undefined; calls: string[]; ending: unknown }> {
  return root.children
    .filter((node) => node.kind === 'turn')
    .map((turn) => ({
      said: /^“(.*)”/.exec(turn.note ?? '')?.[1],
      calls: turn.children.map((call) => `${call.kind}${call.error === undefined ? '' : '!'}${call.children.map((child) => ` ${child.kind}:${child.title.replace(/^tool /, '')}`).join('')}`),
      ending: turn.source?.ending,
    }));
}

describe('a chat route served to the SDK\'s own chat client (useChat\'s AbstractChat + DefaultChatTransport)', () => {
  const shapes: RouteShape[] = [
    { consume: false, forward: false },
    { consume: false, forward: true },
    { consume: true, forward: true },
    { consume: true, forward: false },
    { consume: false, forward: true, helpers: true },
    { consume: false, forward: false, helpers: true },
  ];
  for (const shape of shapes) {
    const name = `${shape.consume ? 'consumeStream()' : 'no consumeStream()'}, ${shape.forward ? 'abortSignal: req.signal' : 'no abortSignal'}${shape.helpers === true ? ', createUIMessageStreamResponse' : ''}`;
    it(`two chats at once, four kinds of turn, a stop (${name}): one session per chat, what happened in it`, async () => {
      const providers = new Map([['chat-a', new FakeProvider()], ['chat-b', new FakeProvider()]]);
      const log: ServerLog = { posts: [], calls: [], finished: [], aborted: [], left: [] };
      const recorded = recordedPlugin('ai-chat-route');
      const server = await serveChatRoute(shape, providers, log);
      // docs/adapters/ai-sdk.md, "Sessions": the id of the request being served.
      uninstall = instrumentAiSdk(recorded.hooks, { sessionId: server.sessionOfRequest });
      const [a, b] = await Promise.all(['chat-a', 'chat-b'].map((id) => converse(server.url, id, providers.get(id)!, log, shape)));
      await server.close();
      uninstall();
      uninstall = undefined;
      // The user saw part of the story, then pressed stop.
      for (const chat of [a!, b!]) expect(chat.shown.length).toBeLessThan('Once upon a time, a model told a very long story.'.length);

      // How the stop ends the turn: the route forwards the request's signal, and the SDK stops the run (`onAbort`);
      // consumeStream() alone: the server reads the answer to its end (`onFinish`), which the model did answer;
      // neither: the SDK stops reading for the client that left and reports no end at all (docs/adapters/ai-sdk.md).
      const stop = shape.forward ? 'interrupted' : shape.consume ? 'completed' : 'unreported';
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      // Every span that opened closed.
      const starts = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'start').map((event) => event.uuid).sort();
      const ends = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'end').map((event) => event.uuid).sort();
      expect(ends).toEqual(starts);
      // One session per chat, each POST one turn.
      expect(atif.map((doc) => doc.session_id).sort()).toEqual(['chat-a', 'chat-b']);

      for (const [chatId, { words }] of [['chat-a', a!], ['chat-b', b!]] as const) {
        const hooks = recorded.log.filter((entry) => entry.payload.session_id === chatId);
        const count = (hook: string) => hooks.filter((entry) => entry.hook === hook).length;
        const posts = log.posts.filter((id) => id === chatId).length;
        expect(posts).toBe(6);
        expect(count('pre_llm_call')).toBe(posts);
        expect(count('on_session_start')).toBe(1);
        // Every turn ended, the stopped one as it ended; the session closes on uninstall() unless a run the SDK never
        // ended still holds it (the plugin's shutdown closes it then).
        const turnEnds = hooks.filter((entry) => entry.hook === 'on_session_end').map((entry) => (entry.payload.interrupted ? 'interrupted' : entry.payload.completed ? 'completed' : 'failed'));
        expect(turnEnds).toEqual(['completed', 'completed', 'completed', 'completed', ...(stop === 'unreported' ? [] : [stop]), 'completed']);
        expect(count('on_session_finalize')).toBe(stop === 'unreported' ? 0 : 1);

        const doc = atif.find((one) => one.session_id === chatId)!;
        expect(validateAtif(doc)).toEqual([]);
        const steps = doc.steps as Steps;
        // The history each POST resends is not a new user step, nor is the client tool's output.
        expect(steps.filter((step) => step.source === 'user').map((step) => step.message)).toEqual([words.hello, words.weather, words.where, words.story, words.thanks]);
        expect(steps.filter((step) => step.source === 'system')).toEqual([]);
        // Nothing of the other chat.
        const other = script(chatId === 'chat-a' ? 'b' : 'a');
        expect(JSON.stringify(doc)).not.toContain(`(${chatId === 'chat-a' ? 'b' : 'a'})`);
        expect(JSON.stringify(doc)).not.toContain(other.city);
        // Each tool call once, its outcome the observation of the step that asked for it: the server tool's result,
        // and the client tool's output, which came with the next POST.
        const calls = steps.flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
        expect(calls).toEqual([words.weatherCall, words.locationCall]);
        const observed = (id: string) => {
          const step = steps.find((one) => (one.tool_calls ?? []).some((call: AtifDoc) => call.tool_call_id === id))!;
          return (step.observation?.results ?? []).map((result: AtifDoc) => [result.source_call_id, result.content, result.extra?.metadata?.status]);
        };
        expect(observed(words.weatherCall)).toEqual([[words.weatherCall, 'Paris: sunny', 'ok']]);
        expect(observed(words.locationCall)).toEqual([[words.locationCall, words.city, 'ok']]);
        expect(hooks.filter((entry) => entry.hook.endsWith('_tool_call')).map((entry) => [entry.hook, entry.payload.tool_call_id])).toEqual([
          ['pre_tool_call', words.weatherCall],
          ['post_tool_call', words.weatherCall],
          ['pre_tool_call', words.locationCall],
          ['post_tool_call', words.locationCall],
        ]);

        // The stopped model call: cut short (a failed call with the text the provider had streamed, which begins
        // with what the user was shown; no tokens: the provider never sent its usage), or answered in full on the
        // server, as the provider sent it.
        const storyAt = steps.findIndex((step) => step.message === words.story);
        const answer = steps[storyAt + 1]!;
        expect(steps[storyAt + 2]!.message).toBe(words.thanks);
        if (stop === 'interrupted') {
          const shown = (chatId === 'chat-a' ? a! : b!).shown;
          expect(answer.message.startsWith(shown) && 'Once upon a time, a model told a very long story.'.startsWith(answer.message)).toBe(true);
          expect([answer.extra.invocation.status, answer.extra.llm_response.error.type]).toEqual(['failed', 'AbortError']);
          expect(answer.metrics).toBeUndefined();
        } else expect(answer.message).toBe('Once upon a time, a model told a very long story.');
        const storyCall = hooks.filter((entry) => /api_request/.test(entry.hook)).slice(10, 12).map((entry) => entry.hook);
        expect(storyCall).toEqual(['pre_api_request', stop === 'interrupted' ? 'api_request_error' : 'post_api_request']);
        expect(steps.at(-1)!.message).toBe('You are welcome.');

        // `view`, from the trajectory and from the events: the same turns, each tool under the call that asked for it,
        // the stopped call failed when the run was stopped. The events keep one turn per POST: the one that brought
        // the client tool's output back names the user message it still answers and goes on with its conversation, so
        // it is read as that turn, as the trajectory reads it (each run's end kept: `resumedRuns`).
        const storyCalls = [stop === 'interrupted' ? 'llm!' : 'llm'];
        expect(viewTurns(treeFromAtif(doc)).map(({ said, calls }) => ({ said, calls }))).toEqual([
          { said: words.hello, calls: ['llm'] },
          { said: words.weather, calls: ['llm tool:weather', 'llm'] },
          { said: words.where, calls: ['llm tool:getLocation', 'llm'] },
          { said: words.story, calls: storyCalls },
          { said: words.thanks, calls: ['llm'] },
        ]);
        const fromEvents = treesFromAtof(atof as never).find((root) => root.title.includes(chatId))!;
        expect(viewTurns(fromEvents)).toEqual([
          { said: words.hello, calls: ['llm'], ending: 'completed' },
          { said: words.weather, calls: ['llm tool:weather', 'llm'], ending: 'completed' },
          { said: words.where, calls: ['llm tool:getLocation', 'llm'], ending: 'completed' },
          { said: words.story, calls: storyCalls, ending: stop === 'unreported' ? undefined : stop },
          { said: words.thanks, calls: ['llm'], ending: 'completed' },
        ]);

        // Tokens: each model call's are what the SDK reported for it (onLanguageModelCallEnd), and for its step;
        // each finished turn's sum is its totalUsage. A run the SDK never ended reported no step, no total.
        const counted = steps.filter((step) => step.metrics?.prompt_tokens !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
        const sdkCalls = log.calls.filter((one) => one.chatId === chatId).map((one) => [one.usage.inputTokens, one.usage.outputTokens]);
        expect(counted).toEqual(sdkCalls);
        const finished = log.finished.filter((one) => one.chatId === chatId);
        expect(finished).toHaveLength(stop === 'completed' ? 6 : 5);
        const sdkSteps = finished.flatMap((one) => one.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
        const story = stop === 'interrupted' ? [] : [[101, 12]];
        expect(counted).toEqual(stop === 'unreported' ? [...sdkSteps.slice(0, 5), ...story, ...sdkSteps.slice(5)] : sdkSteps);
        expect(counted).toEqual([[11, 6], [31, 9], [52, 7], [70, 5], [88, 6], ...story, [130, 4]]);
        const totals = finished.map((one) => [one.totalUsage.inputTokens, one.totalUsage.outputTokens]);
        expect(totals).toEqual([[11, 6], [83, 16], [70, 5], [88, 6], ...(stop === 'completed' ? story : []), [130, 4]]);
      }
      await sameOnNative(recorded);
    }, 30_000);
  }
});
