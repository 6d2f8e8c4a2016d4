// A run that stops for a tool approval (`needsApproval: true`) and the run
// that carries the person's answer are one turn: the answer is no message of
// the user's, so the turn that paused goes on. Both forms the SDK's docs
// write: a chat route driven by the SDK's own chat client (`useChat`'s
// `addToolApprovalResponse`, sent again by `sendAutomaticallyWhen`, POST 2
// carrying the tool part in state `approval-responded`), and plain
// `generateText` (the response messages and a `tool-approval-response` pushed
// onto the messages). Approved and denied. Then the user's next message,
// which is a new turn. The model is the real @ai-sdk/openai (Responses API)
// on a fake fetch speaking its wire (wire.ts). What a reader takes as true is
// checked against what the program did: the user's messages are the user
// steps, the tool's outcome is the observation of the step that asked, and
// the notes say the turn was paused at that step and resumed, not that it
// ended there.
import { afterEach, describe, expect, it } from 'vitest';
import {
  DefaultChatTransport,
  convertToModelMessages,
  generateText,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  stepCountIs,
  streamText,
  tool,
  type ModelMessage,
  type UIMessage,
} from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
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

const model = 'gpt-4o-2024-08-06';
const question = 'Weather in Paris?';
const followUp = 'And in Lyon?';
const reason = 'not now';

/** The model's side: a weather call, the answer once it has the call's outcome, then the answer to the next message. */
function scripted(stream: boolean, approved: boolean): FakeProvider {
  return new FakeProvider()
    .reply('responses', { id: 'resp_1', model, toolCalls: [{ id: 'call_weather', name: 'weather', args: { city: 'Paris' } }], usage: { input: 40, output: 9 } }, { stream })
    .reply('responses', { id: 'resp_2', model, text: approved ? 'It is sunny in Paris.' : 'I was not allowed to check.', usage: { input: 60, output: 7 } }, { stream })
    .reply('responses', { id: 'resp_3', model, text: 'Lyon is cloudy.', usage: { input: 80, output: 5 } }, { stream });
}

function weatherTool(ran: string[]) {
  return tool({
    description: 'Get the weather in a city',
    inputSchema: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => (ran.push(city), `sunny ${city}`),
  });
}

/** The user's three actions: a question, the answer to the approval it led to, a follow-up message. */
async function plainProgram(fake: FakeProvider, approved: boolean, ran: string[]): Promise<string[]> {
  const openai = AI_SDK_PROVIDERS[0]!.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
  const settings = { model: openai('gpt-4o'), tools: { weather: weatherTool(ran) }, stopWhen: stepCountIs(4) };
  const messages: ModelMessage[] = [{ role: 'user', content: question }];
  const first = await generateText({ ...settings, messages });
  const request = first.content.find((part) => part.type === 'tool-approval-request')!;
  messages.push(...first.response.messages, {
    role: 'tool',
    content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved, ...(approved ? {} : { reason }) }],
  });
  const second = await generateText({ ...settings, messages });
  // `responseMessages`: the resumed call's tool result too (the step's `response.messages` has only what the model said).
  messages.push(...second.responseMessages, { role: 'user', content: followUp });
  const third = await generateText({ ...settings, messages });
  return [first.text, second.text, third.text];
}

/** The same actions through the docs' `useChat` route (streamText over the UI messages), as the SDK's chat client sends them. */
async function routeProgram(fake: FakeProvider, approved: boolean, ran: string[]): Promise<string[]> {
  const openai = AI_SDK_PROVIDERS[0]!.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
  const tools = { weather: weatherTool(ran) };
  let finished = 0;
  async function POST(req: Request): Promise<Response> {
    const { messages } = (await req.json()) as { messages: UIMessage[] };
    const result = streamText({ model: openai('gpt-4o'), messages: await convertToModelMessages(messages), tools, stopWhen: stepCountIs(5), abortSignal: req.signal, onFinish: () => void (finished += 1) });
    return result.toUIMessageStreamResponse();
  }
  const chat = new Chat({
    id: 'chat-approval',
    transport: new DefaultChatTransport({ api: 'http://localhost/api/chat', fetch: (async (url: string, init: RequestInit) => await POST(new Request(url, init))) as typeof fetch }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  await chat.sendMessage({ text: question });
  const asked = chat.lastMessage!.parts.find((part) => part.type === 'tool-weather') as { state: string; approval: { id: string } };
  expect(asked.state).toBe('approval-requested');
  await chat.addToolApprovalResponse({ id: asked.approval.id, approved, ...(approved ? {} : { reason }) });
  await until(() => finished === 2 && chat.status === 'ready');
  await chat.sendMessage({ text: followUp });
  return chat.messages.filter((message) => message.role === 'assistant').map((message) => message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''));
}

describe('a run that answers a tool approval goes on with the turn that paused for it', () => {
  for (const form of ['route', 'plain'] as const) {
    for (const approved of [true, false]) {
      it(`${form === 'route' ? 'useChat route' : 'generateText'}, ${approved ? 'approved' : 'denied'}: one turn paused at the step that asked and resumed, then the next message a turn of its own`, async () => {
        const fake = scripted(form === 'route', approved);
        const ran: string[] = [];
        const recorded = recordedPlugin(`ai-approval-resume-${form}`);
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'approval-resume' });
        const said = await (form === 'route' ? routeProgram : plainProgram)(fake, approved, ran);
        const answer = approved ? 'It is sunny in Paris.' : 'I was not allowed to check.';
        // The route's client shows the pause's answer in the same assistant message as the call (it goes on with it).
        expect(said).toEqual(form === 'route' ? [answer, 'Lyon is cloudy.'] : ['', answer, 'Lyon is cloudy.']);
        expect(ran).toEqual(approved ? ['Paris'] : []);
        expect(fake.pending).toBe(0);
        // What the model was told of the call: the tool's result, or the reason it was denied.
        const told = fake.requests[1]!.body.input.find((item: AtifDoc) => item.type === 'function_call_output');
        expect(told).toMatchObject({ call_id: 'call_weather', output: approved ? 'sunny Paris' : reason });
        uninstall();
        uninstall = undefined;

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        const doc = atif[0]!;
        expect(validateAtif(doc)).toEqual([]);
        const steps = doc.steps as AtifDoc[];
        // The user's two messages, each once; the answer to the approval is none.
        expect(steps.map((step) => [step.source, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
          ['user', question, []],
          ['agent', '', ['call_weather']],
          ['agent', answer, []],
          ['user', followUp, []],
          ['agent', 'Lyon is cloudy.', []],
        ]);
        const asked = steps[1]!;
        expect(asked.observation.results.map((result: AtifDoc) => [result.source_call_id, result.content, result.extra.metadata.status])).toEqual([
          ['call_weather', told.output, approved ? 'ok' : 'denied'],
        ]);
        // The pause stays on the step that asked, and the notes say the turn went on from it.
        expect(steps.map((step) => (step.extra?.turn_ends ?? []).map((end: AtifDoc) => end.status))).toEqual([[], ['interrupted'], [], [], []]);
        expect(doc.notes).toBe(`The turn was paused at step ${asked.step_id} and resumed.`);
        await sameOnNative(recorded);
      });
    }
  }
});
