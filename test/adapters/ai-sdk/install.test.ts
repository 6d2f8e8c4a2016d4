// instrumentAiSdk called again with the same hooks before the first is uninstalled, as a program does when its setup
// runs twice (a test's beforeEach without its teardown, a server that keeps its registry on globalThis across reloads): a user trial saw each model call recorded twice, the
// trajectory's tokens double what the SDK's `usage` said. A second install with the same hooks warns and does nothing;
// one with other hooks (another plugin) records into those, as before; after an uninstall, a new install records.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const uninstalls: Array<() => void> = [];
afterEach(() => {
  for (const uninstall of uninstalls.splice(0)) uninstall();
});

function capturingLogger(): { warnings: string[]; logger: { debug(): void; info(): void; warn(message: string): void; error(): void } } {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, warn: (message: string) => warnings.push(message), error() {} } };
}

const packages = AI_SDK_PROVIDERS[0]!;

async function oneCall(): Promise<{ inputTokens: number | undefined; outputTokens: number | undefined }> {
  const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello!', usage: { input: 120, output: 30, cached: 40 } });
  const model = packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('gpt-4o');
  const { usage } = await generateText({ model, prompt: 'Say hello.' });
  return usage;
}

describe('instrumentAiSdk installed twice', () => {
  it('with the same hooks: the second call warns and does nothing; each model call is recorded once, with the SDK\'s tokens', async () => {
    const recorded = recordedPlugin('ai-install-twice');
    const { warnings, logger } = capturingLogger();
    uninstalls.push(instrumentAiSdk(recorded.hooks, { logger }));
    const second = instrumentAiSdk(recorded.hooks, { logger });
    uninstalls.push(second);
    const usage = await oneCall();
    expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/instrumentAiSdk was called again with the same hooks/);
    // The console logger already names the library: the message does not again.
    expect(warnings[0]).not.toMatch(/nemo-relay-hooks/);
    // The second install's uninstall leaves the first in place.
    second();
    await oneCall();
    expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(2);
    for (const uninstall of uninstalls.splice(0)) uninstall();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(2);
    for (const doc of atif as Array<{ final_metrics: Record<string, number> }>) {
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: usage.inputTokens, total_completion_tokens: usage.outputTokens, total_cached_tokens: 40 });
    }
  });

  it('with other hooks (a second plugin): each records the run; after an uninstall, installing again records', async () => {
    const first = recordedPlugin('ai-install-first');
    const other = recordedPlugin('ai-install-other');
    const { warnings, logger } = capturingLogger();
    const uninstallFirst = instrumentAiSdk(first.hooks, { logger });
    uninstalls.push(uninstallFirst, instrumentAiSdk(other.hooks, { logger }));
    await oneCall();
    expect(warnings).toEqual([]);
    expect(first.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(1);
    expect(other.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(1);
    uninstallFirst();
    uninstalls.push(instrumentAiSdk(first.hooks, { logger }));
    await oneCall();
    expect(warnings).toEqual([]);
    expect(first.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(2);
    for (const uninstall of uninstalls.splice(0)) uninstall();
    expectNothingLost((await first.finish()).counters);
    expectNothingLost((await other.finish()).counters);
  });
});
