// The hosted tools beside web search (test/adapters/hosted-tools.test.ts), in
// the three framework adapters: OpenAI's file search, code interpreter, image
// generation and hosted MCP (the `mcp_list_tools` and `mcp_call` items, a
// call the server failed), Anthropic's code execution and web fetch (and a
// fetch that failed). A program as each framework's docs write it offers the
// hosted tool; the real provider client reads the provider's own JSON and
// stream from a fake fetch. One model call ran the tool and answered; the
// trajectory must say what was asked (the call's name and arguments), that the
// provider ran it (`extra.provider_executed`), what came back
// (`extra.provider_result`) or how it failed (`extra.provider_error`), with a
// generated image's base64 left out and its length kept. No tool span, no
// observation; the tokens are the framework's; `view` says the provider ran
// it; OTLP carries no span for it and no base64; native writes the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateText, streamText, type ToolSet } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, codeInterpreterTool, fileSearchTool, hostedMcpTool, imageGenerationTool, OpenAIProvider, Runner, type Tool } from '@openai/agents';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import {
  anthropicMessage,
  anthropicStream,
  codeInterpreterCallItem,
  fileSearchCallItem,
  imageGenerationCallItem,
  mcpCallItem,
  mcpListToolsItem,
  openAiResponse,
  openAiResponseStream,
  scriptedFetch,
  serverToolBlocks,
  type AnthropicBlock,
} from '../support/provider-wire.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { replayWithOtlp } from '../support/otlp-replay.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { instrumentEachTest, useTracing } from './openai-agents/support.ts';
import { FakeOpenAI } from './openai-agents/wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { all, filesOf, viewed } from '../cli/view-json.ts';
import { finishedRun, recordedPlugin, type Recorded } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

type Step = Record<string, any>;
type Framework = 'ai-sdk' | 'agents' | 'langchain';

/** A generated image as OpenAI returns it: a few hundred kilobytes of base64. */
const IMAGE = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919 + (i >> 8)) % 256)).toString('base64');
const ANSWER = 'Done: here is what I found.';

/** What one hosted call must read as in the trajectory. */
interface Expected {
  id: string;
  name: string;
  /** The call's arguments, exactly. */
  args: Record<string, unknown>;
  /** Text the provider's result must hold (as JSON). */
  result: string[];
  /** The provider's failure, when it failed. */
  error?: string;
  /** The framework handed on no result (ChatAnthropic's stream drops the result blocks of server tools but web search's). */
  noResult?: true;
  /** `view`'s note on the call. */
  note: RegExp;
}

interface Kind {
  label: string;
  items: Array<Record<string, unknown>>;
  expected(framework: Framework): Expected[];
  aiSdk(openai: ReturnType<typeof createOpenAI>): ToolSet;
  agents(): Tool[];
  langchain: Array<Record<string, unknown>>;
}

const FILE_SEARCH: Kind = {
  label: 'file search',
  items: [fileSearchCallItem('fs_68a1', ['Paris heat wave'], [{ file_id: 'file-1', filename: 'forecast.txt', score: 0.91, text: 'A heat wave is expected in Paris.' }])],
  expected: () => [{ id: 'fs_68a1', name: 'file_search', args: { queries: ['Paris heat wave'] }, result: ['forecast.txt', 'A heat wave is expected in Paris.'], note: /^run by the provider: 1 result$/ }],
  aiSdk: (openai) => ({ file_search: openai.tools.fileSearch({ vectorStoreIds: ['vs_1'] }) }),
  agents: () => [fileSearchTool('vs_1', { includeSearchResults: true })],
  langchain: [{ type: 'file_search', vector_store_ids: ['vs_1'] }],
};

const CODE_INTERPRETER: Kind = {
  label: 'code interpreter',
  items: [codeInterpreterCallItem('ci_68a1', 'print(6 * 7)', '42\n')],
  // The AI SDK names the container as its own input does (`containerId`); the others keep the item's field.
  expected: (framework) => [{ id: 'ci_68a1', name: 'code_interpreter', args: { code: 'print(6 * 7)', [framework === 'ai-sdk' ? 'containerId' : 'container_id']: 'cntr_68a1' }, result: ['42\\n'], note: /^run by the provider$/ }],
  aiSdk: (openai) => ({ code_interpreter: openai.tools.codeInterpreter({}) }),
  agents: () => [codeInterpreterTool()],
  langchain: [{ type: 'code_interpreter', container: { type: 'auto' } }],
};

const IMAGE_GENERATION: Kind = {
  label: 'image generation',
  items: [imageGenerationCallItem('ig_68a1', IMAGE)],
  expected: () => [{ id: 'ig_68a1', name: 'image_generation', args: {}, result: [`[left out: ${IMAGE.length} characters of base64]`], note: /^run by the provider$/ }],
  aiSdk: (openai) => ({ image_generation: openai.tools.imageGeneration({ outputFormat: 'png' }) }),
  agents: () => [imageGenerationTool({ outputFormat: 'png' })],
  langchain: [{ type: 'image_generation', output_format: 'png' }],
};

const MCP: Kind = {
  label: 'hosted MCP',
  items: [mcpListToolsItem('mcpl_68a1', 'dice', [{ name: 'roll', description: 'Roll a die' }]), mcpCallItem('mcp_68a1', 'dice', 'roll', { sides: 6 }, { output: '4' })],
  // The AI SDK's provider package drops `mcp_list_tools` before any program sees it.
  expected: (framework) => [
    ...(framework === 'ai-sdk' ? [] : [{ id: 'mcpl_68a1', name: 'mcp_list_tools', args: { server_label: 'dice' }, result: ['"roll"', 'Roll a die'], note: /^run by the provider$/ }]),
    { id: 'mcp_68a1', name: 'roll', args: { sides: 6 }, result: ['"dice"', '"output":"4"'], note: /^run by the provider$/ },
  ],
  aiSdk: (openai) => ({ dice: openai.tools.mcp({ serverLabel: 'dice', serverUrl: 'https://dice.example/mcp', requireApproval: 'never' }) }),
  agents: () => [hostedMcpTool({ serverLabel: 'dice', serverUrl: 'https://dice.example/mcp' })],
  langchain: [{ type: 'mcp', server_label: 'dice', server_url: 'https://dice.example/mcp', require_approval: 'never' }],
};

const MCP_FAILED: Kind = {
  ...MCP,
  label: 'hosted MCP, a call the server failed',
  items: [mcpCallItem('mcp_68a2', 'dice', 'roll', { sides: 0 }, { error: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: 'sides must be positive' }] } })],
  expected: () => [{ id: 'mcp_68a2', name: 'roll', args: { sides: 0 }, result: ['"dice"'], error: 'sides must be positive', note: /^run by the provider, failed: sides must be positive$/ }],
};

const OPENAI_KINDS = [FILE_SEARCH, CODE_INTERPRETER, IMAGE_GENERATION, MCP, MCP_FAILED];

/** One receiver for each projection (the relay refuses two projections on one destination). */
let receivers: { genAi: Receiver; openinference: Receiver; full: Receiver };
beforeAll(async () => {
  receivers = { genAi: await startHttpReceiver(), openinference: await startHttpReceiver(), full: await startHttpReceiver() };
});
afterAll(async () => {
  for (const receiver of Object.values(receivers)) await receiver.close();
});

/** What every adapter must record for one run whose one model call ran `expected`'s hosted calls and answered. */
async function checkKind(recorded: Recorded, expected: Expected[], tokens: { prompt: number; completion: number }, blob?: string): Promise<void> {
  const { doc, agent, atof } = await finishedRun(recorded);
  expect(agent).toHaveLength(1);
  expect(agent[0]!.message).toBe(ANSWER);
  const calls = agent[0]!.tool_calls as Step[];
  expect(calls.map((call) => [call.tool_call_id, call.function_name])).toEqual(expected.map((e) => [e.id, e.name]));
  calls.forEach((call, i) => {
    const want = expected[i]!;
    expect(call.arguments, want.name).toEqual(want.args);
    expect(call.extra?.provider_executed, want.name).toBe(true);
    if (want.noResult === true) expect(call.extra?.provider_result, want.name).toBeUndefined();
    const result = JSON.stringify(call.extra?.provider_result);
    for (const text of want.result) expect(result, want.name).toContain(text);
    if (want.error === undefined) expect(call.extra?.provider_error, want.name).toBeUndefined();
    else expect(call.extra?.provider_error, want.name).toContain(want.error);
  });
  // Nothing ran in the program: no observation, no tool hook, no tool span.
  expect((doc.steps as Step[]).some((step) => step.observation !== undefined)).toBe(false);
  expect(recorded.log.filter((entry) => entry.hook === 'pre_tool_call' || entry.hook === 'post_tool_call')).toEqual([]);
  expect(atof.filter((event) => event.category === 'tool')).toEqual([]);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: tokens.prompt, total_completion_tokens: tokens.completion });
  // A generated image's base64 is nowhere in what was written: its length is.
  if (blob !== undefined) {
    const written = JSON.stringify([doc, atof]);
    expect(written.includes(blob.slice(0, 200))).toBe(false);
    expect(written).toContain(`${blob.length} characters of base64`);
  }
  await expectView(recorded, expected);
  await expectOtlp(recorded, expected, blob);
  await sameOnNative(recorded);
}

/** `view` of either file shows each call under the model call, run by the provider (not "not run"). */
async function expectView(recorded: Recorded, expected: Expected[]): Promise<void> {
  const files = filesOf(recorded.dir);
  for (const file of [files.atif, files.atof]) {
    const tools = all(await viewed(file)).filter((node) => node.kind === 'tool');
    expect(tools.map((node) => node.title.split(':')[0]), file).toEqual(expected.map((e) => `tool ${e.name}`));
    // The note's last part (after the arguments' preview) says who ran the call.
    tools.forEach((node, i) => expect(node.note?.split(' · ').at(-1), `${file} ${expected[i]!.name}`).toMatch(expected[i]!.note));
  }
}

/**
 * OTLP from the memory relay: no tool span is made up (gen_ai's `execute_tool`, openinference's `TOOL`); the full
 * projection's LLM span (the relay's event as it is: gen_ai and openinference show the adapters' responses by their
 * text, as native) holds each call, and no span holds the base64 left out of the files.
 */
async function expectOtlp(recorded: Recorded, expected: Expected[], blob?: string): Promise<void> {
  const before = { genAi: receivers.genAi.spans().length, openinference: receivers.openinference.spans().length, full: receivers.full.spans().length };
  const lines = recorded.log.map((entry) => ({ hook: entry.hook, payload: entry.payload }));
  const endpoints = [
    { type: 'gen_ai' as const, endpoint: receivers.genAi.url },
    { type: 'openinference' as const, endpoint: receivers.openinference.url },
    { type: 'full' as const, endpoint: receivers.full.url },
  ];
  const replayed = await replayWithOtlp(createMemoryRelay({ logger: silentLogger }), lines as never, { endpoints, localFiles: false });
  expect(replayed.problems).toEqual([]);
  const genAi = receivers.genAi.spans().slice(before.genAi);
  const openinference = receivers.openinference.spans().slice(before.openinference);
  const full = receivers.full.spans().slice(before.full);
  expect(genAi.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat')).toHaveLength(1);
  expect(genAi.filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool')).toEqual([]);
  expect(openinference.filter((span) => span.attributes['openinference.span.kind'] === 'LLM')).toHaveLength(1);
  expect(openinference.filter((span) => span.attributes['openinference.span.kind'] === 'TOOL')).toEqual([]);
  const llm = full.filter((span) => span.attributes['nemo_relay.scope_type'] === 'llm');
  expect(llm).toHaveLength(1);
  expect(full.filter((span) => span.attributes['nemo_relay.scope_type'] === 'tool')).toEqual([]);
  const output = JSON.stringify(llm[0]!.attributes);
  for (const want of expected) expect(output, want.name).toContain(want.id);
  if (blob !== undefined) {
    expect(JSON.stringify([genAi, openinference, full]).includes(blob.slice(0, 200))).toBe(false);
    expect(output).toContain(`${blob.length} characters of base64`);
  }
}

describe('hosted tools beside web search: the AI SDK', () => {
  for (const kind of OPENAI_KINDS) {
    for (const stream of [false, true]) {
      it(`openai.tools: ${kind.label}, ${stream ? 'streamText' : 'generateText'}`, async () => {
        const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4.1-2025-04-14', text: ANSWER, hostedItems: kind.items, usage: { input: 900, output: 60 } }, { stream });
        const recorded = recordedPlugin('hosted-kinds-ai-sdk');
        const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `hosted-kinds-${kind.label}` });
        let usage: { inputTokens?: number; outputTokens?: number };
        try {
          const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
          const options = { model: openai('gpt-4.1'), prompt: 'Do it.', tools: kind.aiSdk(openai) };
          if (stream) {
            const result = streamText(options);
            await result.consumeStream();
            usage = await result.totalUsage;
          } else usage = (await generateText(options)).totalUsage;
          expect(fake.requests).toHaveLength(1);
        } finally {
          uninstall();
        }
        await checkKind(recorded, kind.expected('ai-sdk'), { prompt: usage.inputTokens!, completion: usage.outputTokens! }, kind === IMAGE_GENERATION ? IMAGE : undefined);
      });
    }
  }
});

describe('hosted tools beside web search: the OpenAI Agents SDK', () => {
  const instrument = instrumentEachTest();
  for (const kind of OPENAI_KINDS) {
    for (const stream of [false, true]) {
      it(`${kind.label}, run(${stream ? '{ stream: true }' : ''})`, async () => {
        useTracing('tracing off');
        const api = new FakeOpenAI({ 'gpt-4.1': [{ text: ANSWER, hostedItems: kind.items, usage: { input: 900, output: 60 } }] });
        const recorded = recordedPlugin('hosted-kinds-agents');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Helper', instructions: 'Use your tools.', model: 'gpt-4.1', tools: kind.agents() });
        const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: api.client() }) });
        let usage;
        if (stream) {
          const result = await runner.run(agent, 'Do it.', { stream: true });
          await result.completed;
          expect(result.finalOutput).toBe(ANSWER);
          usage = result.state.usage;
        } else {
          const result = await runner.run(agent, 'Do it.');
          expect(result.finalOutput).toBe(ANSWER);
          usage = result.state.usage;
        }
        expect(api.requests).toHaveLength(1);
        await checkKind(recorded, kind.expected('agents'), { prompt: usage.inputTokens, completion: usage.outputTokens }, kind === IMAGE_GENERATION ? IMAGE : undefined);
      });
    }
  }
});

describe('hosted tools beside web search: LangChain', () => {
  for (const kind of OPENAI_KINDS) {
    for (const stream of [false, true]) {
      it(`ChatOpenAI with { type: '${String(kind.langchain[0]!.type)}' }: ${kind.label}, ${stream ? 'stream' : 'invoke'}`, async () => {
        const options = { id: 'resp_1', model: 'gpt-4.1-2025-04-14', text: ANSWER, hostedItems: kind.items, usage: { prompt_tokens: 900, completion_tokens: 60 } };
        const { fetch, requests } = scriptedFetch([stream ? openAiResponseStream(options) : openAiResponse(options)]);
        const recorded = recordedPlugin('hosted-kinds-lc-openai');
        const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, useResponsesApi: true, streamUsage: true, configuration: { fetch } }).bindTools(kind.langchain);
        const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
        let usage: { input_tokens: number; output_tokens: number } | undefined;
        if (stream) {
          for await (const chunk of await model.stream('Do it.', config)) if (chunk.usage_metadata !== undefined) usage = chunk.usage_metadata;
        } else usage = (await model.invoke('Do it.', config)).usage_metadata;
        expect(requests).toHaveLength(1);
        expect(requests[0]!.url).toMatch(/\/responses$/);
        await checkKind(recorded, kind.expected('langchain'), { prompt: usage!.input_tokens, completion: usage!.output_tokens }, kind === IMAGE_GENERATION ? IMAGE : undefined);
      });
    }
  }
});

/** Anthropic's server tools beside web search: what each framework offers, the blocks Anthropic returns, what must be recorded. */
interface AnthropicKind {
  label: string;
  blocks: AnthropicBlock[];
  expected(framework: Framework, stream: boolean): Expected[];
  /** A blob in the result, left out of what is written. */
  blob?: string;
  aiSdk(anthropic: ReturnType<typeof createAnthropic>): ToolSet;
  langchain: Record<string, unknown>;
}

const PAGE = { type: 'document', title: 'Paris forecast', citations: { enabled: false }, source: { type: 'text', media_type: 'text/plain', data: 'Sunny, 24C all week.' } };

/** Anthropic's `encrypted_content` of a search result: opaque base64, kilobytes of it. */
const ENCRYPTED = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 131 + 7) % 256)).toString('base64');

/** What ChatAnthropic's stream leaves of a server tool's call but web search's: the call, without its result. */
const lcStreamed = (framework: Framework, stream: boolean, expected: Expected): Expected =>
  framework === 'langchain' && stream ? { id: expected.id, name: expected.name, args: expected.args, result: [], noResult: true, note: /^run by the provider$/ } : expected;

const ANTHROPIC_KINDS: AnthropicKind[] = [
  {
    label: 'web search',
    blocks: serverToolBlocks('srvtoolu_01Search', 'web_search', { query: 'Paris weather this week' }, 'web_search_tool_result', [
      { type: 'web_search_result', url: 'https://weather.example/paris', title: 'Paris forecast', encrypted_content: ENCRYPTED, page_age: null },
    ]),
    expected: () => [{ id: 'srvtoolu_01Search', name: 'web_search', args: { query: 'Paris weather this week' }, result: ['https://weather.example/paris', `[left out: ${ENCRYPTED.length} characters of base64]`], note: /^run by the provider: 1 result$/ }],
    blob: ENCRYPTED,
    aiSdk: (anthropic) => ({ web_search: anthropic.tools.webSearch_20250305({ maxUses: 3 }) }),
    langchain: { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
  },
  {
    label: 'code execution',
    blocks: serverToolBlocks('srvtoolu_01Code', 'bash_code_execution', { command: 'python3 -c "print(6 * 7)"' }, 'bash_code_execution_tool_result', { type: 'bash_code_execution_result', stdout: '42\n', stderr: '', return_code: 0, content: [] }),
    // The AI SDK names the call by the tool it offered (`code_execution`) and says which of its commands ran in the input.
    expected: (framework, stream) => [
      framework === 'ai-sdk'
        ? { id: 'srvtoolu_01Code', name: 'code_execution', args: { type: 'bash_code_execution', command: 'python3 -c "print(6 * 7)"' }, result: ['42\\n', '"return_code":0'], note: /^run by the provider$/ }
        : lcStreamed(framework, stream, { id: 'srvtoolu_01Code', name: 'bash_code_execution', args: { command: 'python3 -c "print(6 * 7)"' }, result: ['42\\n', '"return_code":0'], note: /^run by the provider$/ }),
    ],
    aiSdk: (anthropic) => ({ code_execution: anthropic.tools.codeExecution_20250825() }),
    langchain: { type: 'code_execution_20250825', name: 'code_execution' },
  },
  {
    label: 'web fetch',
    blocks: serverToolBlocks('srvtoolu_01Fetch', 'web_fetch', { url: 'https://weather.example/paris' }, 'web_fetch_tool_result', { type: 'web_fetch_result', url: 'https://weather.example/paris', retrieved_at: '2026-12-05T09:00:00Z', content: PAGE }),
    expected: (framework, stream) => [lcStreamed(framework, stream, { id: 'srvtoolu_01Fetch', name: 'web_fetch', args: { url: 'https://weather.example/paris' }, result: ['Sunny, 24C all week.'], note: /^run by the provider$/ })],
    aiSdk: (anthropic) => ({ web_fetch: anthropic.tools.webFetch_20250910({ maxUses: 2 }) }),
    langchain: { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 },
  },
  {
    label: 'web fetch that failed',
    blocks: serverToolBlocks('srvtoolu_01Fetch', 'web_fetch', { url: 'https://weather.example/gone' }, 'web_fetch_tool_result', { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' }),
    expected: (framework, stream) => [
      lcStreamed(framework, stream, { id: 'srvtoolu_01Fetch', name: 'web_fetch', args: { url: 'https://weather.example/gone' }, result: ['url_not_accessible'], error: 'url_not_accessible', note: /^run by the provider, failed: url_not_accessible$/ }),
    ],
    aiSdk: (anthropic) => ({ web_fetch: anthropic.tools.webFetch_20250910({ maxUses: 2 }) }),
    langchain: { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 },
  },
];

describe("Anthropic's server tools beside web search", () => {
  for (const kind of ANTHROPIC_KINDS) {
    for (const stream of [false, true]) {
      it(`AI SDK anthropic.tools: ${kind.label}, ${stream ? 'streamText' : 'generateText'}`, async () => {
        const fake = new FakeProvider().reply('anthropic', { id: 'msg_01', model: 'claude-sonnet-4-5-20250929', serverTools: kind.blocks, text: ANSWER, usage: { input: 900, output: 60 } }, { stream });
        const recorded = recordedPlugin('hosted-kinds-ai-sdk-anthropic');
        const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `hosted-kinds-${kind.label}` });
        let usage: { inputTokens?: number; outputTokens?: number };
        try {
          const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
          const options = { model: anthropic('claude-sonnet-4-5'), prompt: 'Do it.', tools: kind.aiSdk(anthropic) };
          if (stream) {
            const result = streamText(options);
            await result.consumeStream();
            usage = await result.totalUsage;
          } else usage = (await generateText(options)).totalUsage;
          expect(fake.requests).toHaveLength(1);
        } finally {
          uninstall();
        }
        await checkKind(recorded, kind.expected('ai-sdk', stream), { prompt: usage.inputTokens!, completion: usage.outputTokens! }, kind.blob);
      });

      it(`ChatAnthropic with { type: '${String(kind.langchain.type)}' }: ${kind.label}, ${stream ? 'stream' : 'invoke'}`, async () => {
        const message = { id: 'msg_01', model: 'claude-sonnet-4-5-20250929', content: [...kind.blocks, { type: 'text' as const, text: ANSWER }], usage: { input_tokens: 900, output_tokens: 60 } };
        const { fetch } = scriptedFetch([stream ? anthropicStream(message) : anthropicMessage(message)]);
        const recorded = recordedPlugin('hosted-kinds-lc-anthropic');
        const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } }).bindTools([kind.langchain]);
        const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
        let usage: { input_tokens: number; output_tokens: number } | undefined;
        if (stream) {
          let total: { input_tokens: number; output_tokens: number } = { input_tokens: 0, output_tokens: 0 };
          for await (const chunk of await model.stream('Do it.', config)) if (chunk.usage_metadata !== undefined) total = { input_tokens: total.input_tokens + chunk.usage_metadata.input_tokens, output_tokens: total.output_tokens + chunk.usage_metadata.output_tokens };
          usage = total;
        } else usage = (await model.invoke('Do it.', config)).usage_metadata;
        await checkKind(recorded, kind.expected('langchain', stream), { prompt: usage!.input_tokens, completion: usage!.output_tokens }, kind.blob);
      });
    }
  }
});
