// When things happened in an AI SDK run, checked against what the program
// really did (test/adapters/timing-checks.ts): generateText and streamText
// with a tool and stopWhen, as docs/adapters/ai-sdk.md sets them up, on the
// real OpenAI provider against a loopback Responses API that holds each
// answer (streamed: paced over the hold), and a tool that takes its time
// (test/adapters/timing-programs.ts). On the memory backend, and the native
// one where it loads, with the spans also exported over OTLP to a loopback
// collector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi } from '../../support/doc-snippets.ts';
import { backends, expectNothingLost, recordedPlugin } from '../support.ts';
import { checkTimes } from '../timing-checks.ts';
import { aiSdkProgram } from '../timing-programs.ts';
import { FakeProvider } from './wire.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';

let api = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>>;
let collector: Receiver;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
  collector = await startHttpReceiver();
});
afterAll(async () => {
  await server.close();
  await collector.close();
});

describe('AI SDK: the recorded times are when the program did each thing', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`${streamed ? 'streamText' : 'generateText'} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
        api = new FakeProvider();
        server.exchanges.length = 0;
        collector.requests.length = 0;
        const recorded = recordedPlugin(`ai-timing-${streamed ? 'stream' : 'generate'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const run = await aiSdkProgram({ hooks: recorded.hooks, api, serverUrl: server.url, streamed });

        const { atof, atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        expect(validateAtif(atif[0]!)).toEqual([]);
        checkTimes(atof, atif[0]!, { ...run, exchanges: server.exchanges, otlp: collector.spans() });
      }, 60_000);
    }
  }
});
