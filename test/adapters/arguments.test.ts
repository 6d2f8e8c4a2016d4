// Every adapter's entry function checks what it is given as it is called
// (src/adapters/core/arguments.ts): the plugin where the HookRegistry goes,
// no registry, or a shared option's value none of its own throws an
// InvalidArgumentError naming the function, the argument and what it takes,
// instead of wiring fine and throwing a bare TypeError into the framework at
// its first call (or taking `sessionScope: 'bogus'` as 'run').
import * as claudeSdk from '@anthropic-ai/claude-agent-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { aiSdkMiddleware } from '../../src/adapters/ai-sdk/middleware.ts';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { instrumentLangChain, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { instrumentMcpClient, instrumentMcpServer, instrumentMcpTransport, openAIAgentsMcpOptions } from '../../src/adapters/mcp/index.ts';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { InvalidArgumentError } from '../../src/hooks/errors.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';

const plugin = createNemoRelayPlugin({ settings: { atofEnabled: false, atifEnabled: false }, logger: silentLogger });
afterAll(() => plugin.shutdown());

const client = { request: async () => ({}) };
const transport = { send: async () => {}, close: async () => {}, start: async () => {} };

/** Each entry function, called with `hooks` where it takes the registry and `options`. */
const entries: Array<[string, string, (hooks: unknown, options?: unknown) => unknown]> = [
  ['wrapClaudeAgentSdk', 'the second argument', (hooks, options) => wrapClaudeAgentSdk(claudeSdk, hooks as never, options as never)],
  ['instrumentAiSdk', 'the first argument', (hooks, options) => instrumentAiSdk(hooks as never, options as never)],
  ['aiSdkMiddleware', 'the first argument', (hooks, options) => aiSdkMiddleware(hooks as never, options as never)],
  ['instrumentOpenAIAgents', 'the first argument', (hooks, options) => instrumentOpenAIAgents(hooks as never, options as never)],
  ['instrumentLangChain', 'the first argument', (hooks, options) => instrumentLangChain(hooks as never, options as never)],
  ['new NemoRelayCallbackHandler', 'the first argument', (hooks, options) => new NemoRelayCallbackHandler(hooks as never, options as never)],
  ['instrumentMcpClient', 'the second argument', (hooks, options) => instrumentMcpClient({ ...client }, hooks as never, options as never)],
  ['instrumentMcpServer', 'the second argument', (hooks, options) => instrumentMcpServer({}, hooks as never, options as never)],
  ['instrumentMcpTransport', 'the second argument', (hooks, options) => instrumentMcpTransport({ ...transport }, hooks as never, options as never)],
  ['openAIAgentsMcpOptions', 'the first argument', (hooks, options) => openAIAgentsMcpOptions(hooks as never, options as never)],
];

function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('adapter entry functions refuse what they cannot work with, as they are called', () => {
  for (const [name, where, entry] of entries) {
    it(`${name}: the plugin instead of the HookRegistry, no registry, a bad option`, () => {
      const withPlugin = thrown(() => entry(plugin));
      expect(withPlugin).toBeInstanceOf(InvalidArgumentError);
      expect(withPlugin).toBeInstanceOf(TypeError);
      expect(withPlugin).toMatchObject({ name: 'InvalidArgumentError', functionName: name, argument: `${where} (hooks)` });
      expect(String((withPlugin as Error).message)).toBe(`${name}: ${where} (hooks) must be the HookRegistry the plugin listens on (the one given to plugin.register(hooks)), not the plugin; got the NeMo Relay plugin`);

      expect(thrown(() => entry(undefined))).toMatchObject({ name: 'InvalidArgumentError', message: `${name}: ${where} (hooks) must be the HookRegistry to record into (new HookRegistry(), given to plugin.register(hooks)); got undefined` });
      expect(thrown(() => entry(new HookRegistry(), { sessionScope: 'bogus' }))).toMatchObject({ name: 'InvalidArgumentError', argument: 'options.sessionScope', message: `${name}: options.sessionScope must be 'run' or 'host'; got "bogus"` });
      expect(thrown(() => entry(new HookRegistry(), { sessionId: 42 }))).toMatchObject({ argument: 'options.sessionId' });
      expect(thrown(() => entry(new HookRegistry(), null))).toMatchObject({ argument: 'options' });
    });
  }

  it('wrapClaudeAgentSdk: the SDK\'s query, or an object without it, in place of the SDK module', () => {
    const hooks = new HookRegistry();
    expect(thrown(() => wrapClaudeAgentSdk(claudeSdk.query as never, hooks))).toMatchObject({
      name: 'InvalidArgumentError',
      argument: 'the first argument (sdk)',
      message: "wrapClaudeAgentSdk: the first argument (sdk) must be the SDK module (import * as sdk from '@anthropic-ai/claude-agent-sdk'), whose query() it wraps; got a function (the SDK's query itself?)",
    });
    expect(thrown(() => wrapClaudeAgentSdk({} as never, hooks))).toMatchObject({ name: 'InvalidArgumentError', message: expect.stringContaining('got an object') });
  });

  it('takes what it always took: a registry, with or without options, sessionScope run or host', () => {
    for (const [, , entry] of entries) {
      for (const options of [undefined, {}, { sessionScope: 'run' }, { sessionScope: 'host' }]) {
        let made: unknown;
        expect(thrown(() => (made = entry(new HookRegistry(), options)))).toBeUndefined();
        // The instrument functions return their uninstall: the process is left as it was.
        if (typeof made === 'function') (made as () => void)();
      }
    }
  });
});
