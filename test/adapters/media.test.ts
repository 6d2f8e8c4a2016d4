// Media in the user's message (an image, a PDF) and in a tool's answer, in the
// framework adapters: a program as each framework's docs write it sends a
// picture it read from disk (a Buffer), by URL or as a base64 data URL, and the
// real provider client sends it to a fake provider over a three-call run (two
// tool calls, then the answer); the Claude Agent SDK's CLI stands scripted. The
// provider gets the whole image; the trajectory keeps what the program sent as
// what it was (the part's type, its media type and file name, a URL as the URL)
// and says what it left out and how big it was (`[left out: N bytes]`,
// `data:image/png;base64,[left out: N characters of base64]`), instead of the
// bytes: each model call repeats the conversation, so a 100 KB image written
// whole was megabytes in every file and span (a Buffer as a JSON array of byte
// numbers). Memory and native write the same files.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool as aiTool, wrapLanguageModel } from 'ai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { cliInProcess, outputFiles } from '../cli/support.ts';
import { all, filesOf, viewed } from '../cli/view-json.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { reply, type Message } from './claude-agent-sdk/scripted.ts';
import { instrumentEachTest, useTracing, weatherTool } from './openai-agents/support.ts';
import { FakeOpenAI } from './openai-agents/wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { backends, expectNothingLost, recordedPlugin, viewLines, type Recorded } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** A 100 KB PNG, as a program reads one from disk (a real signature: providers' clients sniff the type). */
const IMAGE = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), randomBytes(100 * 1024 - 16)]);
const IMAGE_BASE64 = IMAGE.toString('base64');
const IMAGE_DATA_URL = `data:image/png;base64,${IMAGE_BASE64}`;
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(20 * 1024)]);
const PDF_BASE64 = PDF.toString('base64');
const IMAGE_URL = 'https://images.example/cat.png';
const QUESTION = 'What is in this picture?';

const LEFT_OUT_BYTES = `[left out: ${IMAGE.byteLength} bytes]`;
const LEFT_OUT_BASE64 = `[left out: ${IMAGE_BASE64.length} characters of base64]`;
const LEFT_OUT_DATA_URL = `data:image/png;base64,${LEFT_OUT_BASE64}`;

type Part = Record<string, any>;

/** A slice from the middle of a blob: found in a text, the blob (or most of it) is in there. */
const middle = (base64: string): string => base64.slice(base64.length / 2, base64.length / 2 + 64);

/** No text holds the media: not its base64, not its bytes as a JSON array of numbers; and it is smaller than the image. */
function expectNoMedia(text: string, what: string): void {
  expect(text.includes(middle(IMAGE_BASE64)), `${what} holds the image's base64`).toBe(false);
  expect(text.includes(middle(PDF_BASE64)), `${what} holds the PDF's base64`).toBe(false);
  expect(/(\d{1,3},){256}/.test(text), `${what} holds bytes as numbers`).toBe(false);
  expect(text.length, `${what} is no smaller than the image`).toBeLessThan(IMAGE.byteLength / 2);
}

/**
 * What every adapter must record of a three-call run whose user message carried media: the first user message of
 * every model call's request as `userParts` says (the media left out, what it was kept), in the hooks, the ATOF
 * events and the ATIF step; no file holds the media; the files validate and `view` prints them in lines a person
 * reads (`turnText`: the turn's message as `view` reads it); native writes the same. `sent`: the bodies the provider
 * received, which must hold the image whole.
 */
async function checkMedia(recorded: Recorded, sent: readonly unknown[], userParts: readonly Part[], turnText: string): Promise<void> {
  expect(sent).toHaveLength(3);
  for (const body of sent) expect(JSON.stringify(body)).toContain(middle(IMAGE_BASE64));
  const { atif, atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.request as Part);
  expect(requests).toHaveLength(3);
  for (const request of requests) {
    const user = (request.body.messages as Part[]).find((message) => message.role === 'user')!;
    expect(user.content).toEqual(userParts);
  }
  for (const file of outputFiles(recorded.dir)) expectNoMedia(readFileSync(file, 'utf8'), path.relative(recorded.dir, file));
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  const userStep = (atif[0]!.steps as Part[]).find((step) => step.source === 'user')!;
  // The trajectory's user step: the parts as JSON text (the builder's, and native's, way with parts beyond text).
  expect(JSON.parse(userStep.message as string)).toEqual(userParts);
  const llmStarts = atof.filter((event) => event.category === 'llm' && event.scope_category === 'start');
  expect(llmStarts).toHaveLength(3);
  const validated = await cliInProcess(['validate', ...outputFiles(recorded.dir)]);
  expect(validated.code, validated.stdout + validated.stderr).toBe(0);
  // `view` reads the turn's message as its text and a tag for each medium (where it is, when it is somewhere).
  const note = `“${turnText.length > 72 ? `${turnText.slice(0, 71)}…` : turnText}”`;
  const files = filesOf(recorded.dir);
  for (const file of [files.atif, files.atof]) {
    expect(all(await viewed(file)).filter((node) => node.kind === 'turn').map((node) => node.note), file).toEqual([note]);
  }
  for (const of of ['atif', 'atof'] as const) {
    for (const line of await viewLines(recorded, of)) expect(line.length, `view ${of}: ${line.slice(0, 120)}`).toBeLessThan(200);
  }
  await sameOnNative(recorded);
}

describe('media in the prompt: the AI SDK', () => {
  let collector: Receiver;
  let uninstall: (() => void) | undefined;
  beforeAll(async () => {
    collector = await startHttpReceiver();
  });
  afterAll(async () => {
    await collector.close();
  });
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });

  for (const backend of backends()) {
    it(`an image read from disk, one by URL and a PDF in the user's message, three model calls (${backend}, with OTLP)`, async () => {
      collector.requests.length = 0;
      const fake = new FakeProvider()
        .reply('chat', { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 26_000, output: 12 } })
        .reply('chat', { id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_lyon', name: 'weather', args: { city: 'Lyon' } }], usage: { input: 26_100, output: 12 } })
        .reply('chat', { id: 'chatcmpl-3', model: 'gpt-4o-2024-08-06', text: 'A cat on a roof in Paris; it is sunny there.', usage: { input: 26_200, output: 14 } });
      const recorded = recordedPlugin(`media-ai-sdk-${backend}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
      uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `media-${backend}` });
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const { text } = await generateText({
        model: openai.chat('gpt-4o'),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: QUESTION },
              { type: 'image', image: IMAGE },
              { type: 'image', image: new URL(IMAGE_URL) },
              { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'receipt.pdf' },
            ],
          },
        ],
        tools: {
          weather: aiTool({
            description: 'Get the weather for a city',
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => `${city}: sunny, 24C`,
            // The tool's answer to the model carries a picture too (the SDK's tool-output content parts).
            toModelOutput: ({ output }) => ({ type: 'content', value: [{ type: 'text', text: output }, { type: 'file', mediaType: 'image/png', data: { type: 'data', data: IMAGE_BASE64 } }] }),
          }),
        },
        stopWhen: stepCountIs(3),
      });
      expect(text).toBe('A cat on a roof in Paris; it is sunny there.');
      // The program's URL went to the provider as the URL, the PDF as a file.
      expect(JSON.stringify(fake.requests[0]!.body)).toContain(IMAGE_URL);
      expect(JSON.stringify(fake.requests[0]!.body)).toContain(middle(PDF_BASE64));
      uninstall();
      uninstall = undefined;
      await checkMedia(recorded, fake.requests.map((request) => request.body), [
        { type: 'text', text: QUESTION },
        { type: 'image', image: LEFT_OUT_BYTES },
        { type: 'image', image: IMAGE_URL },
        { type: 'file', data: `[left out: ${PDF.byteLength} bytes]`, mediaType: 'application/pdf', filename: 'receipt.pdf' },
      ], `${QUESTION} [image] [image ${IMAGE_URL}] [file receipt.pdf]`);
      // What the tool gave the model, in the next request: its text and the picture's part, the bytes left out.
      const second = recorded.log.filter((entry) => entry.hook === 'pre_api_request')[1]!.payload.request as Part;
      const toolMessage = (second.body.messages as Part[]).find((message) => message.role === 'tool')!;
      expect(JSON.parse(toolMessage.content as string)).toEqual([
        { type: 'text', text: 'Paris: sunny, 24C' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: LEFT_OUT_BASE64 } },
      ]);
      const spans = collector.spans();
      expect(spans.length).toBeGreaterThanOrEqual(3);
      expectNoMedia(JSON.stringify(spans), 'the OTLP spans');
    }, 60_000);
  }
});

describe('media in the prompt: aiSdkMiddleware alone', () => {
  it('sees the prompt as the provider package does (a file part with tagged bytes) and leaves the bytes out', async () => {
    const fake = new FakeProvider().reply('chat', { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', text: 'A cat.', usage: { input: 26_000, output: 3 } });
    const recorded = recordedPlugin('media-ai-sdk-mw');
    const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const model = wrapLanguageModel({ model: openai.chat('gpt-4o'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'media-mw' }) });
    await generateText({ model, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'image', image: IMAGE }] }] });
    expect(JSON.stringify(fake.requests[0]!.body)).toContain(middle(IMAGE_BASE64));
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const request = recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload.request as Part;
    expect((request.body.messages as Part[]).find((message) => message.role === 'user')!.content).toEqual([
      { type: 'text', text: QUESTION },
      { type: 'file', data: { type: 'data', data: LEFT_OUT_BYTES }, mediaType: 'image/png' },
    ]);
    for (const file of outputFiles(recorded.dir)) expectNoMedia(readFileSync(file, 'utf8'), path.relative(recorded.dir, file));
    await sameOnNative(recorded);
  });
});

describe('media in the prompt: the OpenAI Agents SDK', () => {
  const instrument = instrumentEachTest();
  it("input_image (a data URL and a URL) and input_file in the user's item, three model calls", async () => {
    useTracing('tracing off');
    const api = new FakeOpenAI({
      'gpt-4.1': [
        { calls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 26_000, output: 12 } },
        { calls: [{ id: 'call_lyon', name: 'get_weather', args: { city: 'Lyon' } }], usage: { input: 26_100, output: 12 } },
        { text: 'A cat on a roof in Paris; it is sunny there.', usage: { input: 26_200, output: 14 } },
      ],
    });
    const recorded = recordedPlugin('media-agents');
    instrument(recorded.hooks);
    const agent = new Agent({ name: 'Looker', instructions: 'Describe pictures.', model: 'gpt-4.1', tools: [weatherTool()] });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: api.client() }) });
    const result = await runner.run(agent, [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: QUESTION },
          { type: 'input_image', image: IMAGE_DATA_URL, detail: 'auto' },
          { type: 'input_image', image: IMAGE_URL },
          { type: 'input_file', file: `data:application/pdf;base64,${PDF_BASE64}`, filename: 'receipt.pdf' },
        ],
      },
    ]);
    expect(result.finalOutput).toBe('A cat on a roof in Paris; it is sunny there.');
    await checkMedia(recorded, api.requests.map((request) => request.body), [
      { type: 'input_text', text: QUESTION },
      { type: 'input_image', image: LEFT_OUT_DATA_URL, detail: 'auto' },
      { type: 'input_image', image: IMAGE_URL },
      { type: 'input_file', file: `data:application/pdf;base64,[left out: ${PDF_BASE64.length} characters of base64]`, filename: 'receipt.pdf' },
    ], `${QUESTION} [image] [image ${IMAGE_URL}] [file receipt.pdf]`);
  });
});

describe('media in the prompt: LangChain', () => {
  it("createAgent with ChatOpenAI: a HumanMessage with an image_url data URL and a standard base64 image block, three model calls", async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 26_000, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-2', model: 'gpt-4o-2024-08-06', content: null, toolCalls: [{ id: 'call_lyon', name: 'get_weather', args: { city: 'Lyon' } }], usage: { prompt_tokens: 26_100, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-3', model: 'gpt-4o-2024-08-06', content: 'A cat on a roof in Paris; it is sunny there.', usage: { prompt_tokens: 26_200, completion_tokens: 14 } }),
    ]);
    const recorded = recordedPlugin('media-lc');
    const weather = lcTool(async ({ city }) => `${city}: sunny, 24C`, { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });
    const model = new ChatOpenAI({ model: 'gpt-4o', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
    const agent = createAgent({ model, tools: [weather], systemPrompt: 'Describe pictures.' });
    const message = new HumanMessage({
      content: [
        { type: 'text', text: QUESTION },
        { type: 'image_url', image_url: { url: IMAGE_DATA_URL } },
        { type: 'image', source_type: 'base64', data: IMAGE_BASE64, mime_type: 'image/png' },
        { type: 'image_url', image_url: { url: IMAGE_URL } },
      ],
    });
    const result = await agent.invoke({ messages: [message] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'media-lc' } });
    expect(result.messages.at(-1)!.content).toBe('A cat on a roof in Paris; it is sunny there.');
    await checkMedia(recorded, requests.map((request) => request.body), [
      { type: 'text', text: QUESTION },
      { type: 'image_url', image_url: { url: LEFT_OUT_DATA_URL } },
      // LangChain hands the callbacks the standard block as ChatOpenAI sends it: an image_url data URL.
      { type: 'image_url', image_url: { url: LEFT_OUT_DATA_URL } },
      { type: 'image_url', image_url: { url: IMAGE_URL } },
    ], `${QUESTION} [image] [image] [image ${IMAGE_URL}]`);
  });
});

describe('media in the prompt: the Claude Agent SDK', () => {
  const session = { session_id: 'claude-session-media' };
  const requesting = { type: 'system', subtype: 'status', status: 'requesting', ...session };
  const toolResult = (id: string, text: string, ...more: Message[]) => ({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }, ...more] }] }, parent_tool_use_id: null, ...session });
  const script: Message[] = [
    { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Bash'], ...session },
    requesting,
    ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_exif', name: 'Bash', input: { command: 'exiftool cat.png' } }], 'tool_use'),
    // A tool's result with a picture in it, as the CLI's Read tool returns an image file.
    toolResult('toolu_exif', 'GPS: Paris', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } }),
    requesting,
    ...reply(session, 'msg_2', [{ type: 'tool_use', id: 'toolu_weather', name: 'Bash', input: { command: 'weather Paris' } }], 'tool_use'),
    toolResult('toolu_weather', 'sunny, 24C'),
    requesting,
    ...reply(session, 'msg_3', [{ type: 'text', text: 'A cat on a roof in Paris; it is sunny there.' }], 'end_turn'),
    { type: 'result', subtype: 'success', is_error: false, result: 'A cat on a roof in Paris; it is sunny there.', num_turns: 3, usage: { input_tokens: 30, output_tokens: 21 }, ...session },
  ];

  for (const backend of backends()) {
    it(`a streaming-input user message with Anthropic image blocks (base64 and URL), three model calls (${backend})`, async () => {
      const recorded = recordedPlugin(`media-claude-${backend}`, backend);
      // The CLI stands scripted (it takes the prompt's messages, then streams): what it sends the API is its own.
      const taken: unknown[] = [];
      const sdk = {
        query: (params: { prompt: AsyncIterable<unknown> }) =>
          (async function* () {
            for await (const message of params.prompt) taken.push(message);
            yield* script;
          })(),
      };
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's streaming-input docs write it: an async generator of user messages with image content blocks.
      async function* messages() {
        yield {
          type: 'user' as const,
          message: {
            role: 'user' as const,
            content: [
              { type: 'text', text: QUESTION },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } },
              { type: 'image', source: { type: 'url', url: IMAGE_URL } },
            ],
          },
          parent_tool_use_id: null,
          session_id: '',
        };
      }
      for await (const _ of query({ prompt: messages() }) as AsyncIterable<unknown>) void _;
      expect(JSON.stringify(taken)).toContain(IMAGE_BASE64);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const parts = [
        { type: 'text', text: QUESTION },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: LEFT_OUT_BASE64 } },
        { type: 'image', source: { type: 'url', url: IMAGE_URL } },
      ];
      const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.request as Part);
      expect(requests).toHaveLength(3);
      for (const request of requests) expect((request.body.messages as Part[]).find((message) => message.role === 'user')!.content).toEqual(parts);
      const told = (requests[1]!.body.messages as Part[]).find((message) => message.role === 'tool')!;
      expect(told.content).toBe(`GPS: Paris${JSON.stringify({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: LEFT_OUT_BASE64 } })}`);
      for (const file of outputFiles(recorded.dir)) expectNoMedia(readFileSync(file, 'utf8'), path.relative(recorded.dir, file));
      expect(validateAtif(atif[0]!)).toEqual([]);
      const files = filesOf(recorded.dir);
      for (const file of [files.atif, files.atof]) {
        expect(all(await viewed(file)).filter((node) => node.kind === 'turn').map((node) => node.note), file).toEqual([`“${QUESTION} [image] [image ${IMAGE_URL}]”`]);
      }
      await sameOnNative(recorded);
    });
  }
});

// Media a model answers with (an image Gemini drew, the audio OpenAI spoke), as the programs in the frameworks' docs
// ask for it: the program gets the bytes; the answer's message in the trajectory says it held the medium (its
// kind, media type, id, transcript) beside its text, with the bytes left out by the request side's rule, so a reader
// can tell the model returned an image. Both backends write it; the tokens are the provider's, as for any answer.
const CAT = 'Here is a cat on a roof.';

/** The answer's message in the hooks, the ATIF agent step and `view`; no file holds the medium; native writes the same. */
async function checkAnswerMedia(recorded: Recorded, content: readonly Part[], viewNote: string, tokens: { prompt: number; completion: number }): Promise<void> {
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  const answers = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload);
  expect(answers).toHaveLength(1);
  expect(answers[0]!.assistant_message).toEqual({ role: 'assistant', content });
  expect((answers[0]!.response as Part).assistant_message).toEqual({ role: 'assistant', content });
  for (const file of outputFiles(recorded.dir)) expectNoMedia(readFileSync(file, 'utf8'), path.relative(recorded.dir, file));
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  const agentSteps = (atif[0]!.steps as Part[]).filter((step) => step.source === 'agent');
  expect(agentSteps).toHaveLength(1);
  // The builders' (memory's and native's) way with parts beyond text: the parts as JSON text.
  expect(JSON.parse(agentSteps[0]!.message as string)).toEqual(content);
  expect(atif[0]!.final_metrics).toMatchObject({ total_prompt_tokens: tokens.prompt, total_completion_tokens: tokens.completion });
  const files = filesOf(recorded.dir);
  for (const file of [files.atif, files.atof]) {
    const notes = all(await viewed(file)).map((node) => node.note);
    expect(notes, file).toContain(viewNote);
  }
  await sameOnNative(recorded);
}

describe('media in the answer: the AI SDK', () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });

  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`Gemini draws an image (responseModalities TEXT and IMAGE, ${streamed ? 'streamText' : 'generateText'}, ${backend})`, async () => {
        const fake = new FakeProvider().reply('gemini', { id: 'gem-img-1', model: 'gemini-2.5-flash-image', text: CAT, inlineData: [{ mimeType: 'image/png', data: IMAGE_BASE64 }], usage: { input: 12, output: 1_300 } }, { stream: streamed });
        const recorded = recordedPlugin(`answer-ai-sdk-${backend}`, backend);
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `answer-${backend}` });
        const google = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
        const options = { model: google('gemini-2.5-flash-image'), prompt: 'Draw a cat on a roof.', providerOptions: { google: { responseModalities: ['TEXT', 'IMAGE'] } } };
        const result = streamed ? streamText(options) : await generateText(options);
        // The program gets the image whole.
        const generated = await result.files;
        expect(generated.map((file) => [file.mediaType, file.base64])).toEqual([['image/png', IMAGE_BASE64]]);
        expect(await result.text).toBe(CAT);
        uninstall();
        uninstall = undefined;
        await checkAnswerMedia(recorded, [{ type: 'text', text: CAT }, { type: 'image', media_type: 'image/png', data: LEFT_OUT_BASE64 }], `${CAT} [image]`, { prompt: 12, completion: 1_300 });
      }, 60_000);
    }
  }

  it('aiSdkMiddleware alone: the provider package\'s file part, the bytes left out the same way', async () => {
    const fake = new FakeProvider().reply('gemini', { id: 'gem-img-2', model: 'gemini-2.5-flash-image', text: CAT, inlineData: [{ mimeType: 'image/png', data: IMAGE_BASE64 }], usage: { input: 12, output: 1_300 } });
    const recorded = recordedPlugin('answer-ai-sdk-mw');
    const google = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
    const model = wrapLanguageModel({ model: google('gemini-2.5-flash-image'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'answer-mw' }) });
    const { files } = await generateText({ model, prompt: 'Draw a cat on a roof.', providerOptions: { google: { responseModalities: ['TEXT', 'IMAGE'] } } });
    expect(files.map((file) => file.base64)).toEqual([IMAGE_BASE64]);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const answer = recorded.log.find((entry) => entry.hook === 'post_api_request')!.payload;
    expect(answer.assistant_message).toEqual({ role: 'assistant', content: [{ type: 'text', text: CAT }, { type: 'image', media_type: 'image/png', data: LEFT_OUT_BASE64 }] });
    for (const file of outputFiles(recorded.dir)) expectNoMedia(readFileSync(file, 'utf8'), path.relative(recorded.dir, file));
    await sameOnNative(recorded);
  });
});

describe('media in the answer: LangChain', () => {
  /** A 100 KB WAV answer, as OpenAI sends it: base64. */
  const AUDIO_BASE64 = Buffer.concat([Buffer.from('RIFF'), randomBytes(100 * 1024)]).toString('base64');

  for (const backend of backends()) {
    it(`ChatOpenAI asked for audio (modalities text and audio) answers with speech (${backend})`, async () => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-audio', model: 'gpt-4o-audio-preview-2025-06-03', content: null, audio: { id: 'audio_abc', data: AUDIO_BASE64, transcript: 'Hi there!' }, usage: { prompt_tokens: 18, completion_tokens: 120 } }),
      ]);
      const recorded = recordedPlugin(`answer-lc-${backend}`, backend);
      const model = new ChatOpenAI({ model: 'gpt-4o-audio-preview', apiKey: 'sk-test', maxRetries: 0, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, configuration: { fetch } });
      const answer = await model.invoke('Say hi.', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      expect((requests[0]!.body as Part).modalities).toEqual(['text', 'audio']);
      // The program gets the speech whole.
      expect((answer.additional_kwargs.audio as Part).data).toBe(AUDIO_BASE64);
      await checkAnswerMedia(recorded, [{ type: 'audio', id: 'audio_abc', transcript: 'Hi there!', data: `[left out: ${AUDIO_BASE64.length} characters of base64]` }], '[audio]', { prompt: 18, completion: 120 });
    }, 60_000);
  }
});
